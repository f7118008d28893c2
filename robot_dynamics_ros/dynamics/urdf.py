"""URDF -> Model: kinematic trees, fixed-joint merging, chain selection with locked joints.

Every link whose parent joint moves becomes a body; links behind fixed (or locked) joints are merged
into the body they hang from: masses add, the centre of mass is the mass-weighted mean and the
rotational inertias move to the common centre of mass (I' = R I R^T, then the parallel-axis theorem).
Every link stays addressable as a frame (its body and its constant placement there).
"""
from __future__ import annotations

import os

import numpy as np

from .model import Model
from .spatial import rpy_to_rotation, transform

_MOVING = ("revolute", "continuous", "prismatic")


def _parse(source):
    """urdf_parser_py's URDF from a path or an XML string; ValueError with the parser's complaints."""
    try:
        from urdf_parser_py import urdf as urdf_parser
        from urdf_parser_py.xml_reflection import core as xml_core
    except ImportError as exc:  # pragma: no cover - dependency missing
        raise ImportError("load_urdf needs urdf_parser_py (pip package urdfdom-py)") from exc
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(f"URDF source must be a file path or an XML string, got {type(source).__name__}")
    text = os.fspath(source)
    if not text.lstrip().startswith("<"):
        if not os.path.isfile(text):
            raise ValueError(f"URDF file not found: {text!r}")
        with open(text, encoding="utf-8") as f:
            text = f.read()
    messages = []
    previous = xml_core.on_error
    xml_core.on_error = messages.append     # the parser prints unknown attributes; keep them quiet
    try:
        robot = urdf_parser.URDF.from_xml_string(text.encode("utf-8"))
    except Exception as exc:
        detail = "; ".join(messages[-3:])
        raise ValueError(f"malformed URDF: {exc}" + (f" ({detail})" if detail else "")) from exc
    finally:
        xml_core.on_error = previous
    if not robot.links:
        raise ValueError("malformed URDF: no <link> elements")
    return robot


def _joint_motion(joint, q):
    """Pose of the child frame in the joint frame for joint value q (locked joints)."""
    if joint.type not in _MOVING or q == 0.0:
        return np.eye(4)
    axis = _unit_axis(joint)
    if joint.type == "prismatic":
        return transform(np.eye(3), axis * q)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    R = np.eye(3) + np.sin(q) * k + (1 - np.cos(q)) * (k @ k)
    return transform(R, np.zeros(3))


def _unit_axis(joint):
    axis = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    norm = np.linalg.norm(axis)
    if not np.isfinite(norm) or norm < 1e-12:
        raise ValueError(f"joint {joint.name!r}: axis must be a non-zero vector")
    return axis / norm


def _origin(element):
    o = getattr(element, "origin", None)
    xyz = np.zeros(3) if o is None or o.xyz is None else np.array(o.xyz, dtype=float)
    rpy = np.zeros(3) if o is None or o.rpy is None else np.array(o.rpy, dtype=float)
    if not (np.all(np.isfinite(xyz)) and np.all(np.isfinite(rpy))):
        raise ValueError(f"{getattr(element, 'name', 'element')!r}: origin must be finite")
    return transform(rpy_to_rotation(rpy), xyz)


def _link_inertia(link):
    """(mass, com, inertia about com in the link frame) of a URDF link; zeros when it has none."""
    inertial = link.inertial
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    if inertial.mass is None:
        raise ValueError(f"link {link.name!r}: <inertial> without <mass>")
    if inertial.inertia is None:
        raise ValueError(f"link {link.name!r}: <inertial> without <inertia>")
    mass = float(inertial.mass)
    I = np.array(inertial.inertia.to_matrix(), dtype=float)
    if not np.isfinite(mass) or mass < 0:
        raise ValueError(f"link {link.name!r}: mass must be finite and non-negative, got {mass}")
    if not np.all(np.isfinite(I)):
        raise ValueError(f"link {link.name!r}: inertia must be finite")
    if np.linalg.eigvalsh(I)[0] < -1e-12 * max(1.0, np.abs(I).max()):
        raise ValueError(f"link {link.name!r}: inertia tensor is not positive semi-definite")
    T = _origin(inertial)
    return mass, T[:3, 3], T[:3, :3] @ I @ T[:3, :3].T


def load_urdf(source, *, root_link=None, tip_link=None, locked_joints=None, gravity=(0.0, 0.0, -9.81)):
    """Build a Model from a URDF file path or XML string.

    root_link / tip_link select the chain root -> tip; every joint off that chain is locked (at its
    `locked_joints` position, default 0) and the links behind it lumped onto the body they hang
    from. Without tip_link, every moving joint below root_link (default: the URDF root) is kept.
    locked_joints: {joint name: position} of further joints to lock. gravity: in the root frame.
    Revolute, continuous and prismatic joints move; fixed joints are merged; floating and planar
    joints, bad inertias and unknown names raise ValueError naming the element. Mimic tags are
    ignored (each joint is an independent coordinate). The tip frame (default frame for tip wrenches
    and task-space quantities) is tip_link, else the link moved by the last joint.
    """
    robot = _parse(source)
    links = {link.name: link for link in robot.links}
    parent_joint = {}
    children = {name: [] for name in links}
    for joint in robot.joints:
        for end in (joint.parent, joint.child):
            if end not in links:
                raise ValueError(f"joint {joint.name!r} refers to unknown link {end!r}")
        if joint.child in parent_joint:
            raise ValueError(f"link {joint.child!r} has two parent joints")
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        raise ValueError(f"malformed URDF: expected one root link, found {roots}")
    joint_names = {j.name for j in robot.joints}

    locked = dict(locked_joints or {})
    for name, value in locked.items():
        if name not in joint_names:
            raise ValueError(f"locked_joints: unknown joint {name!r}")
        if not np.isfinite(float(value)):
            raise ValueError(f"locked_joints: position of {name!r} must be finite")
    for name, what in ((root_link, "root_link"), (tip_link, "tip_link")):
        if name is not None and name not in links:
            raise ValueError(f"{what}: unknown link {name!r}")
    root = root_link or roots[0]

    # links below the root, depth first in file order (the joint order of the model)
    order, stack = [], [root]
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(j.child for j in reversed(children[name]))
    below = set(order)

    chain = None
    if tip_link is not None:
        if tip_link not in below:
            raise ValueError(f"tip_link {tip_link!r} is not below root_link {root!r}")
        chain, name = set(), tip_link
        while name != root:
            chain.add(parent_joint[name].name)
            name = parent_joint[name].parent

    def moves(joint):
        """True for a kept moving joint; floating/planar joints may only sit off the selected chain
        (then they are held at the identity like a fixed joint)."""
        if joint.type in ("floating", "planar") and (chain is None or joint.name in chain):
            raise ValueError(f"joint {joint.name!r}: {joint.type} joints are not supported "
                             "(fixed-base trees only)")
        if joint.type not in _MOVING + ("fixed", "floating", "planar"):
            raise ValueError(f"joint {joint.name!r}: unknown joint type {joint.type!r}")
        return joint.type in _MOVING and joint.name not in locked and (chain is None or joint.name in chain)

    # body of every link below the root and the link's pose in that body's frame
    body_of, placement, bodies = {root: -1}, {root: np.eye(4)}, []
    for name in order[1:]:
        joint = parent_joint[name]
        if moves(joint):
            body_of[name], placement[name] = len(bodies), np.eye(4)
            bodies.append(joint)
        else:
            q_lock = float(locked.get(joint.name, 0.0))
            body_of[name] = body_of[joint.parent]
            placement[name] = placement[joint.parent] @ _origin(joint) @ _joint_motion(joint, q_lock)

    n = len(bodies)
    mass = np.zeros(n)
    first_moment = np.zeros((n, 3))
    second = np.zeros((n, 3, 3))      # sum of (I_c + m (|c|^2 1 - c c^T)) about the body origin
    for name in order[1:]:
        b = body_of[name]
        m, c, Ic = _link_inertia(links[name])
        if b < 0 or m == 0 and not Ic.any():
            continue
        T = placement[name]
        c_b = T[:3, :3] @ c + T[:3, 3]
        mass[b] += m
        first_moment[b] += m * c_b
        second[b] += T[:3, :3] @ Ic @ T[:3, :3].T + m * (c_b @ c_b * np.eye(3) - np.outer(c_b, c_b))
    com = np.zeros((n, 3))
    inertia_com = np.zeros((n, 3, 3))
    for b in range(n):
        if mass[b] > 0:
            com[b] = first_moment[b] / mass[b]
        inertia_com[b] = second[b] - mass[b] * (com[b] @ com[b] * np.eye(3) - np.outer(com[b], com[b]))
        inertia_com[b] = 0.5 * (inertia_com[b] + inertia_com[b].T)

    parent = np.array([body_of[j.parent] for j in bodies], dtype=np.int64)
    subtree_mass = mass.copy()
    subtree_inertia = np.array([np.trace(I) for I in inertia_com])
    for b in range(n - 1, -1, -1):
        if parent[b] >= 0:
            subtree_mass[parent[b]] += subtree_mass[b]
            subtree_inertia[parent[b]] += subtree_inertia[b]
    for b, joint in enumerate(bodies):
        if subtree_mass[b] <= 0 and (joint.type == "prismatic" or subtree_inertia[b] <= 0):
            raise ValueError(f"joint {joint.name!r} moves no mass (link {joint.child!r} and everything "
                             f"after it are massless): the mass matrix would be singular")

    def limit(joint, attr, default):
        lim = joint.limit
        value = None if lim is None else getattr(lim, attr, None)
        return default if value is None else float(value)

    lower = np.array([-np.inf if j.type == "continuous" else limit(j, "lower", -np.inf) for j in bodies])
    upper = np.array([np.inf if j.type == "continuous" else limit(j, "upper", np.inf) for j in bodies])
    both_zero = (lower == 0) & (upper == 0)       # URDF default when the limits are left out
    lower[both_zero], upper[both_zero] = -np.inf, np.inf
    effort = np.array([limit(j, "effort", np.inf) for j in bodies])
    velocity = np.array([limit(j, "velocity", np.inf) for j in bodies])
    effort[effort <= 0] = np.inf                  # 0 = unspecified in many URDFs
    velocity[velocity <= 0] = np.inf
    damping = np.array([float(getattr(j.dynamics, "damping", None) or 0.0) if j.dynamics else 0.0
                        for j in bodies])
    friction = np.array([float(getattr(j.dynamics, "friction", None) or 0.0) if j.dynamics else 0.0
                         for j in bodies])

    T_tree = np.array([placement[j.parent] @ _origin(j) for j in bodies]).reshape(n, 4, 4)
    tip = tip_link or (bodies[-1].child if bodies else root)
    frame_names = list(order)
    # links outside the selected subtree are fixed to the base: keep them as frames too
    outside = [name for name in links if name not in below]
    frame_body = [body_of[name] for name in order]
    frame_placement = [placement[name] for name in order]
    if outside:
        root_inverse = np.linalg.inv(_pose_from_urdf_root(root, parent_joint, locked))
    for name in outside:
        frame_names.append(name)
        frame_body.append(-1)
        frame_placement.append(root_inverse @ _pose_from_urdf_root(name, parent_joint, locked))
    return Model(joint_names=[j.name for j in bodies],
                 joint_types=[j.type for j in bodies],
                 link_names=[j.child for j in bodies], parent=parent, T_tree=T_tree,
                 axis=np.array([_unit_axis(j) for j in bodies]).reshape(n, 3), mass=mass, com=com,
                 inertia_com=inertia_com, frame_names=frame_names, frame_body=frame_body,
                 frame_placement=np.array(frame_placement).reshape(-1, 4, 4), root_link=root, tip_frame=tip,
                 gravity=gravity, lower=lower, upper=upper, velocity_limit=velocity,
                 effort_limit=effort, damping=damping, friction=friction)


def _pose_from_urdf_root(link, parent_joint, locked):
    """Pose of `link` in the URDF's root link frame with every joint at its locked value (default 0)."""
    T = np.eye(4)
    while link in parent_joint:
        joint = parent_joint[link]
        T = _origin(joint) @ _joint_motion(joint, float(locked.get(joint.name, 0.0))) @ T
        link = joint.parent
    return T
