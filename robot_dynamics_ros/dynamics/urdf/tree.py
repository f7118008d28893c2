"""The records of a parsed URDF as a tree: elements by name, the root link, depth-first order, origins,
joint axes and joint motion. Shared by the dynamics model's builder (build.py) and the whole-tree
kinematics (kinematic_tree.py), so that both place every frame alike.
"""
from __future__ import annotations

import numpy as np

from ..model_checks import MAX_LENGTH
from ..spatial import exp_twist, rpy_to_rotation

MOVING = ("revolute", "continuous", "prismatic")
EYE = np.eye(4)
EYE.setflags(write=False)        # shared by every link whose placement in its body is the identity


def by_name(elements, what):
    """{name: element}; ValueError for a name used twice (a node could never address both)."""
    named = {}
    for element in elements:
        if element["name"] in named:
            raise ValueError(f"malformed URDF: duplicate {what} name {element['name']!r} ({what} names must "
                             "be unique)")
        named[element["name"]] = element
    return named


def urdf_root(links, parent_joint, children):
    """The one link without a parent joint; ValueError naming the joints of a cycle, or the roots."""
    roots = [name for name in links if name not in parent_joint]
    reached, stack = set(roots), list(roots)
    while stack:
        for joint in children[stack.pop()]:
            reached.add(joint["child"])
            stack.append(joint["child"])
    if len(reached) < len(links):
        # a link no root reaches has an unreached parent: walking up from it must come round a cycle
        link, seen = next(name for name in links if name not in reached), set()
        while link not in seen:
            seen.add(link)
            link = parent_joint[link]["parent"]
        cycle = [link]
        while parent_joint[cycle[-1]]["parent"] != link:
            cycle.append(parent_joint[cycle[-1]]["parent"])
        cycle.reverse()
        joints = [parent_joint[name]["name"] for name in cycle[1:] + cycle[:1]]
        links_round = " -> ".join(cycle + cycle[:1])
        raise ValueError(f"malformed URDF: joints {joints} form a cycle (links {links_round}); the joints "
                         "of a URDF must form a tree")
    if len(roots) != 1:
        raise ValueError(f"malformed URDF: expected one root link, found {roots}")
    return roots[0]


def depth_first(root, children):
    """Links from `root` down, depth first, children in file order (the joint order of the model)."""
    order, stack = [], [root]
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(j["child"] for j in reversed(children[name]))
    return order



def origins(elements, label):
    """(k, 4, 4) poses of the elements' <origin>s (identity where there is none); ValueError naming
    label(i) for a non-finite origin or one MAX_LENGTH (1e6 m) or farther."""
    xyz = np.array([(e["origin"] or {}).get("xyz") or (0.0, 0.0, 0.0) for e in elements], dtype=float)
    rpy = np.array([(e["origin"] or {}).get("rpy") or (0.0, 0.0, 0.0) for e in elements], dtype=float)
    xyz, rpy = xyz.reshape(-1, 3), rpy.reshape(-1, 3)
    bad = ~(np.isfinite(xyz).all(axis=1) & np.isfinite(rpy).all(axis=1))
    if bad.any():
        raise ValueError(f"{label(int(np.argmax(bad)))}: origin must be finite")
    with np.errstate(over="ignore"):            # |1e300| overflows to inf: refused below
        far = np.linalg.norm(xyz, axis=1) >= MAX_LENGTH
    if far.any():
        i = int(np.argmax(far))
        raise ValueError(f"{label(i)}: origin xyz must lie within {MAX_LENGTH:g} m, got {xyz[i].tolist()}")
    T = np.zeros((len(elements), 4, 4))
    T[:, :3, :3] = np.moveaxis(rpy_to_rotation(rpy.T), -1, 0).reshape(-1, 3, 3)
    T[:, :3, 3] = xyz
    T[:, 3, 3] = 1.0
    return T


def unit_axes(joints):
    """(k, 3) unit axes of the joints (default x); ValueError naming a joint whose axis is zero."""
    axes = np.array([(1.0, 0.0, 0.0) if j["axis"] is None else j["axis"] for j in joints], dtype=float)
    axes = axes.reshape(-1, 3)
    with np.errstate(over="ignore"):
        norms = np.linalg.norm(axes, axis=1)
    bad = ~(np.isfinite(norms) & (norms >= 1e-12))
    if bad.any():
        name = joints[int(np.argmax(bad))]["name"]
        raise ValueError(f"joint {name!r}: axis must be a finite non-zero vector")
    return axes / norms[:, None]


def joint_motion(joint_type, axis, q):
    """exp([S] q) (4, 4): the pose of a joint's child frame in its joint frame at the joint value q, for
    the unit ``axis`` (3,) in the joint frame: the screw S = (axis, 0) of a revolute or continuous joint
    (q rad), S = (0, axis) of a prismatic one (q m) (spatial.exp_twist); the identity for any other
    type, or q = 0 (a shared, read-only array then)."""
    if joint_type not in MOVING or q == 0.0:
        return EYE
    zeros = np.zeros(3)
    screw = np.concatenate([zeros, axis] if joint_type == "prismatic" else [axis, zeros])
    return exp_twist(screw, q)


def locked_joint_motion(joint, q):
    """Pose of the child frame in the joint frame for joint value q (locked joints)."""
    if joint["type"] not in MOVING or q == 0.0:
        return EYE
    return joint_motion(joint["type"], unit_axes([joint])[0], q)
