"""A joint-space reference on its way to the computed-torque controller's schedule (ROS-free): refused by
its size before it is read, then read, checked against the controlled joints and interpolated.

nodes/computed_torque_node.py is the wiring: it sizes the serialized message (``size_refusal``), plans the
reference on arrival (``ReferenceSchedule.plan``: its start state is the desired state in force when it
takes over), makes a ``ReferenceJob`` and runs ``prepare(job)`` at once (at most ``INLINE_POINTS``
points) or in its logic.background_job.BackgroundJob, then commits the result to the schedule on its
executor thread.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from robot_dynamics_ros.logic.cdr import MIN_POINT_BYTES, joint_trajectory_sizes
from robot_dynamics_ros.logic.input_guard import BadInput, short_list

__all__ = ['INLINE_POINTS', 'ReferenceJob', 'checked_names', 'prepare', 'size_refusal']

#: References with more points are read and interpolated in the background job.
INLINE_POINTS = 200


class ReferenceJob(NamedTuple):
    """A reference planned on arrival (node-clock ``now_ns``), to be prepared and committed.

    ``read()``: its waypoint arrays ``(names, times, positions, velocities, accelerations)``
    (``nodes.conversions.joint_trajectory_arrays`` of the message, or ``cdr.read_joint_trajectory`` of
    its bytes), raising BadInput when malformed; ``plan``: the schedule's Plan; ``model``,
    ``joint_order``: the controller's when it arrived; ``goal``: the action goal it comes from (None:
    the topic)."""
    plan: Any
    read: Callable[[], tuple]
    model: Any
    joint_order: tuple
    now_ns: int
    goal: Any = None


def size_refusal(raw: bytes, joints: int, max_points: int):
    """``(refusal, names, points)`` of a serialized JointTrajectory before it is read: ``refusal`` is
    None or ``(key, reason)`` (more joint names than the ``joints`` controlled, more points than
    ``max_points``). An encapsulation the CDR reader does not know: names 0, the points bounded by the
    byte count."""
    try:
        names, points = joint_trajectory_sizes(raw, max_names=joints)
    except ValueError:
        names, points = 0, len(raw) // MIN_POINT_BYTES
    if names > joints:
        return ('reference/too_many_names', f'it names {names} joints, this controller controls '
                                            f'{joints}'), names, points
    if points is not None and points > max_points:
        return ('reference/too_long', f'{points} points, more than max_trajectory_points = '
                                      f'{max_points}'), names, points
    return None, names, points


def checked_names(names, joint_order):
    """``names`` when every one is a controlled joint (of ``joint_order``); BadInput otherwise."""
    unknown = [name for name in names if name not in joint_order]
    if unknown:
        raise BadInput('unknown_joints', f'it names joints {short_list(unknown)} that this '
                                         f'controller does not control (it controls '
                                         f'{short_list(joint_order)})')
    return names


def prepare(job: ReferenceJob):
    """Read, check and interpolate a reference: ``(trajectory, names, times)``; raises the ValueError
    (BadInput: malformed) that refuses it. Touches no node state: the background job may run it."""
    names, times, positions, velocities, accelerations = job.read()
    checked_names(names, job.joint_order)
    columns = np.array([list(job.model.joint_names).index(name) for name in names], dtype=np.intp)
    return job.plan.trajectory(times, positions, velocities, accelerations, columns), names, times
