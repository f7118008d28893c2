"""The frame of a node's task-space quantities, ROS-free: ``tip_link``, or the robot's only tip.

A chain has one tip, the link of its last joint: the natural end effector. A tree with several
leaves (a hand with two fingers, a torso with two arms) has none: the core's default frame
(``model.tip_frame`` without ``tip_link``: the link of the last joint in the URDF's depth-first
order) is then one leaf among several, chosen by the order of the URDF's elements; for the Panda
with its fingers it is a finger. Task-space outputs (the task-space inertia, an external wrench at
the tip) at such a frame would look right and mean little, so ``task_frame`` refuses to guess:

- ``tip_link`` given: the model was built for the chain root -> tip_link; its tip frame;
- else, a model with at most one leaf (a chain, or a tree whose branches all end in fixed links):
  ``model.tip_frame``;
- else None, and the reason, naming the leaves: the node publishes no task-space output.

Leaves are the moving bodies no other moving body hangs from (``model.parent``); fixed links
(tool0, a camera mount) are frames on a body, not tips of the tree.

Example:
    >>> from types import SimpleNamespace
    >>> hand = SimpleNamespace(parent=[-1, 0, 0], link_names=['palm', 'left', 'right'],
    ...                        tip_frame='right')
    >>> leaf_links(hand)
    ['left', 'right']
    >>> task_frame(hand, 'right')       # a model built with tip_link='right'
    ('right', None)
    >>> frame, reason = task_frame(hand)
    >>> frame is None, reason.startswith("the model has 2 tips ['left', 'right']")
    (True, True)
"""

import numpy as np

from robot_dynamics_ros.logic.input_guard import short_list

__all__ = ['leaf_links', 'task_frame']


def leaf_links(model):
    """The links of the moving bodies that no other moving body hangs from, in model order."""
    parent = np.asarray(model.parent, dtype=np.int64).reshape(-1)
    has_child = np.zeros(parent.size, dtype=bool)
    has_child[parent[parent >= 0]] = True
    return [model.link_names[i] for i in np.flatnonzero(~has_child)]


def task_frame(model, tip_link=''):
    """``(frame, None)``: the frame of task-space quantities; or ``(None, reason)`` when the model
    has several tips and no ``tip_link`` says which one is meant (see module docstring)."""
    if tip_link:
        return model.tip_frame, None
    leaves = leaf_links(model)
    if len(leaves) <= 1:
        return model.tip_frame, None
    return None, (f'the model has {len(leaves)} tips {short_list(leaves)} and no tip_link: set '
                  'the tip_link parameter to the link task-space quantities refer to (the chain '
                  'root -> tip_link is then the model, the other branches locked)')
