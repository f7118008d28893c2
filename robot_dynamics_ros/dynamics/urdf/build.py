"""URDF records -> Model: kinematic trees, fixed-joint merging, chain selection with locked joints.

Every link whose parent joint moves becomes a body; links behind fixed (or locked) joints are merged
into the body they hang from: masses add, the centre of mass is the mass-weighted mean and the
rotational inertias move to the common centre of mass (I' = R I R^T, then the parallel-axis theorem).
Every link stays addressable as a frame (its body and its constant placement there). Beyond what the
reader (parse.py) checks, duplicate link or joint names, joints that form a cycle and origins at
model_checks.MAX_LENGTH (1e6 m) or farther are refused. All of load_urdf is O(n) in the number of
links, mostly vectorised.
"""
from __future__ import annotations

import gc

import numpy as np

from .. import _checks
from ..inertia import check_inertia, lump_inertias
from ..model import Model, resolve_mimic
from .parse import links_and_joints
from .tree import EYE, MOVING, by_name, depth_first, locked_joint_motion, origins, unit_axes, urdf_root


def _locked_positions(locked_joints):
    """{joint name: float} of load_urdf's locked_joints; ValueError naming the argument."""
    if locked_joints is None:
        return {}
    if not hasattr(locked_joints, "items"):
        raise ValueError("locked_joints must be a mapping {joint name: position (rad or m)}, "
                         f"got {type(locked_joints).__name__}")
    locked = {}
    for name, value in locked_joints.items():
        try:
            position = None if isinstance(value, (str, bytes)) or np.ndim(value) else float(value)
        except (TypeError, ValueError):
            position = None
        if position is None or not np.isfinite(position):
            raise ValueError(f"locked_joints: position of {name!r} must be a finite number (rad or m), "
                             f"got {value!r}")
        locked[name] = position
    return locked



def _body_inertias(links, names, body_of, placements, placed, n):
    """(mass (n,), com (n, 3), inertia about the com (n, 3, 3)) of the n bodies: the inertials of the
    links `names` merged into their bodies (links on the base, body -1, are checked but not kept).
    Link L's pose in its body's frame is placements[placed[L]]."""
    with_inertial = [name for name in names if links[name]["inertial"] is not None]
    inertials = [links[name]["inertial"] for name in with_inertial]
    for name, inertial in zip(with_inertial, inertials):
        if inertial["inertia"] is None:
            raise ValueError(f"link {name!r}: <inertial> without <inertia>")
    m = np.array([inertial["mass"] for inertial in inertials], dtype=float)
    I = np.array([[i["ixx"], i["ixy"], i["ixz"], i["iyy"], i["iyz"], i["izz"]]
                  for i in (inertial["inertia"] for inertial in inertials)], dtype=float).reshape(-1, 6)
    I = I[:, [0, 1, 2, 1, 3, 4, 2, 4, 5]].reshape(-1, 3, 3)
    check_inertia(lambda k: f"link {with_inertial[k]!r}", m, I)
    T_in = origins(inertials, lambda k: f"link {with_inertial[k]!r}: inertial")   # inertia axes in the link
    body = np.array([body_of[name] for name in with_inertial], dtype=np.int64)
    kept = body >= 0
    m, I, T_in, body = m[kept], I[kept], T_in[kept], body[kept]
    # the inertial frame in the body frame: placement of the link there, then the inertial's origin
    T = placements[[placed[name] for name, k in zip(with_inertial, kept) if k]].reshape(-1, 4, 4) @ T_in
    R, c = T[:, :3, :3], T[:, :3, 3]
    return lump_inertias(body, m, c, R @ I @ R.transpose(0, 2, 1), n)


def load_urdf(source, *, root_link=None, tip_link=None, locked_joints=None, gravity=(0.0, 0.0, -9.81),
              mimic=True, armature=None):
    """Build a Model from a URDF file path or XML string.

    root_link / tip_link (link names) select the chain root -> tip; every joint off that chain is
    locked (at its `locked_joints` position, default 0) and the links behind it lumped onto the body
    they hang from. Without tip_link, every moving joint below root_link (default: the URDF root) is
    kept. locked_joints: {joint name: position (rad or m)} of further joints to lock. gravity (m/s^2):
    in the root frame. Revolute, continuous and prismatic joints move; fixed joints are merged;
    floating and planar joints, bad inertias, duplicate names, cycles, unknown names and arguments of
    the wrong kind raise ValueError naming the element or argument, and so does a kept joint that
    would make the mass matrix singular (it moves no mass: lock it). Model's bounds apply (model_checks.py).

    Mimic joints (mimic=True): a moving joint with <mimic joint="B" multiplier="m" offset="o"/> has no
    coordinate of its own, q = m q_B + o (multiplier default 1, offset 0); q, the limits and every
    result are in the independent coordinates (Model's docstring). A joint that mimics a mimicking
    joint is resolved to the independent one (multipliers and offsets composed). ValueError naming the
    joints: a followed joint that does not exist, mimic joints forming a cycle, a joint that mimics a
    fixed (or floating, planar) joint, a joint locked in locked_joints while the joint it follows
    moves, or locked at another position than m q_B + o. Locking a followed joint (by locked_joints,
    or by leaving it off the root_link -> tip_link chain) locks its mimic joints at m q_B + o; a
    mimic joint off that chain whose followed joint is on it keeps moving with it (a branch). A
    <mimic> on a fixed joint is ignored. mimic=False ignores every <mimic>: each moving joint is an
    independent coordinate (as Pinocchio's buildModel without mimic). The tip frame (default frame
    for tip wrenches and task-space quantities) is tip_link, else the link moved by the last joint in
    the URDF's depth-first order: the end of a chain. On a tree with several leaves (e.g. the Panda
    with its fingers: panda_rightfinger) that is one leaf among several, chosen by the order of the
    URDF's elements, not a meaningful end effector: pass tip_link (the nodes publish no task-space
    output without it on such a tree).

    armature: the joints' rotor inertias reflected through their gearboxes (kg m^2 or kg), which URDF
    has no element for: nq values in model.joint_names order or {joint name: value} (as with_armature);
    None: zero. A joint that moves only massless links is accepted when its armature is positive.
    """
    for name, what in ((root_link, "root_link"), (tip_link, "tip_link")):
        if name is not None and not isinstance(name, str):
            raise ValueError(f"{what} must be a link name (str), got {type(name).__name__} {name!r}")
    locked = _locked_positions(locked_joints)
    # The cyclic garbage collector would walk the growing records again and again (a large part of the
    # time for a long chain: doc/performance.md); nothing here makes reference cycles. The pause is
    # process-wide, for this call only.
    collecting = gc.isenabled()
    gc.disable()
    try:
        arguments = _model_arguments(links_and_joints(source), root_link, tip_link, locked, mimic)
    finally:
        if collecting:
            gc.enable()
    if armature is not None:
        arguments["armature"] = _body_armature(arguments, armature)
    return Model(gravity=gravity, **arguments)     # the URDF's records are gone: their memory is free


def _body_armature(arguments, armature):
    """Per-body armature (the Model constructor's) from load_urdf's `armature`: nq values in the
    coordinates' order (the moving joints that mimic none) or {joint name: value}; 0 on mimicking joints.
    In the constructor, so that a joint whose only inertia is its rotor's is accepted (M's pivot a_i)."""
    names, mimic = arguments["joint_names"], arguments.get("mimic") or {}
    coordinates = [name for name in names if name not in mimic]
    if isinstance(armature, dict):
        unknown = sorted(set(armature) - set(coordinates))
        if unknown:
            raise ValueError(f"armature: unknown joint {unknown[0]!r}; the coordinates are {coordinates}")
        values = {name: _checks.scalar(v, f"armature[{name!r}]", minimum=0.0) for name, v in armature.items()}
    else:
        array = _checks.real_array(armature, "armature", f"{len(coordinates)} numbers, one per joint")
        if array.shape != (len(coordinates),) or not np.all(np.isfinite(array)) or np.any(array < 0):
            raise ValueError(f"armature must be {len(coordinates)} finite non-negative numbers (kg m^2 or "
                             f"kg), one per joint in the order {coordinates}, got "
                             f"{np.asarray(armature).tolist()!r}")
        values = dict(zip(coordinates, array.tolist()))
    return np.array([values.get(name, 0.0) for name in names])


def _mimic_map(joint_list, joints, locked):
    """{mimicking joint: (independent joint, multiplier, offset)} of the moving joints with a <mimic>,
    chains resolved; ValueError naming the joints (load_urdf's list)."""
    raw = {}
    for joint in joint_list:
        element = joint["mimic"]
        if element is None or joint["type"] not in MOVING:
            continue
        multiplier = 1.0 if element["multiplier"] is None else element["multiplier"]
        offset = 0.0 if element["offset"] is None else element["offset"]
        if not (np.isfinite(multiplier) and np.isfinite(offset)):
            raise ValueError(f"joint {joint['name']!r}: mimic multiplier and offset must be finite")
        raw[joint["name"]] = (element["joint"], float(multiplier), float(offset))
    for name, (followed, _, _) in raw.items():
        if followed not in joints:
            raise ValueError(f"joint {name!r} mimics joint {followed!r}, which the URDF does not have")
    resolved = resolve_mimic(raw, joints)
    for name, (independent, m, o) in resolved.items():
        kind = joints[independent]["type"]
        if kind not in MOVING:
            raise ValueError(f"joint {name!r} mimics {kind} joint {independent!r}: only a revolute, "
                             "continuous or prismatic joint can be followed")
        if name in locked:
            if independent not in locked:
                raise ValueError(f"locked_joints: joint {name!r} mimics {independent!r} (q = {m:g} "
                                 f"q_{independent} + {o:g}) and cannot be locked alone: lock {independent!r} "
                                 "(its mimic joints follow)")
            expected = m * locked[independent] + o
            if abs(locked[name] - expected) > 1e-9 * max(1.0, abs(expected)):
                raise ValueError(f"locked_joints: joint {name!r} mimics {independent!r} (q = {m:g} "
                                 f"q_{independent} + {o:g}): locked at {locked[name]!r}, but {independent!r} "
                                 f"locked at {locked[independent]!r} puts it at {expected!r}")
    return resolved


class _Tree:
    """A parsed URDF's links and joints as a tree, and which of its joints move in the model (load_urdf's
    rules): the links from `root` down in depth-first order (`order`), the chain root -> tip_link
    (`chain`, None without tip_link), the locked joints' positions and the mimic map. ValueError naming
    the link or joint for a broken tree, an unknown name or a joint type that cannot be kept."""

    __slots__ = ("links", "joints", "parent_joint", "children", "urdf_root", "root", "order", "below",
                 "chain", "locked", "mimic_of")

    def __init__(self, parsed, root_link, tip_link, locked, use_mimic):
        link_list, joint_list = parsed
        self.links = by_name(link_list, "link")
        self.joints = by_name(joint_list, "joint")
        self.parent_joint, self.children = _link_tree(self.links, joint_list)
        self.urdf_root = urdf_root(self.links, self.parent_joint, self.children)
        for name in locked:
            if name not in self.joints:
                raise ValueError(f"locked_joints: unknown joint {name!r}")
        self.locked = locked
        self.mimic_of = _mimic_map(joint_list, self.joints, locked) if use_mimic else {}
        for name, what in ((root_link, "root_link"), (tip_link, "tip_link")):
            if name is not None and name not in self.links:
                raise ValueError(f"{what}: unknown link {name!r}")
        self.root = root_link or self.urdf_root
        self.order = depth_first(self.root, self.children)         # links below the root
        self.below = set(self.order)
        self.chain = None if tip_link is None else self._chain_to(tip_link)

    def _chain_to(self, tip_link):
        """The names of the joints from the root to tip_link."""
        if tip_link not in self.below:
            raise ValueError(f"tip_link {tip_link!r} is not below root_link {self.root!r}")
        chain, name = set(), tip_link
        while name != self.root:
            chain.add(self.parent_joint[name]["name"])
            name = self.parent_joint[name]["parent"]
        return chain

    def moves(self, joint):
        """True for a kept moving joint; floating/planar joints may only sit off the selected chain
        (then they are held at the identity like a fixed joint). A mimic joint moves when the
        independent joint it follows does."""
        kind, name, chain = joint["type"], joint["name"], self.chain
        if kind in ("floating", "planar") and (chain is None or name in chain):
            raise ValueError(f"joint {name!r}: {kind} joints are not supported (fixed-base trees only)")
        if kind not in MOVING + ("fixed", "floating", "planar"):
            raise ValueError(f"joint {name!r}: unknown joint type {kind!r}")
        if name in self.mimic_of:
            independent = self.joints[self.mimic_of[name][0]]
            return independent["child"] in self.below and self.moves(independent)
        return kind in MOVING and name not in self.locked and (chain is None or name in chain)

    def locked_position(self, joint):
        """The position of a joint that does not move: its locked_joints value (default 0), or for a
        mimic joint m q + o of the locked joint it follows."""
        if joint["name"] in self.mimic_of:
            independent, m, o = self.mimic_of[joint["name"]]
            return m * self.locked.get(independent, 0.0) + o
        return self.locked.get(joint["name"], 0.0)


def _link_tree(links, joint_list):
    """({child link: its parent joint}, {link: [its child joints, in file order]}); ValueError for a joint
    naming an unknown link and for a link with two parent joints."""
    parent_joint = {}
    children = {name: [] for name in links}
    for joint in joint_list:
        for end in (joint["parent"], joint["child"]):
            if end not in links:
                raise ValueError(f"joint {joint['name']!r} refers to unknown link {end!r}")
        if joint["child"] in parent_joint:
            raise ValueError(f"link {joint['child']!r} has two parent joints")
        parent_joint[joint["child"]] = joint
        children[joint["parent"]].append(joint)
    return parent_joint, children


def _model_arguments(parsed, root_link, tip_link, locked, use_mimic=True):
    """Model's arguments (all but gravity) from links_and_joints' records: load_urdf's work."""
    tree = _Tree(parsed, root_link, tip_link, locked, use_mimic)
    bodies, body_of, parent, T_tree, placements, placed = _bodies(tree)
    n = len(bodies)
    mass, com, inertia_com = _body_inertias(tree.links, tree.order[1:], body_of, placements, placed, n)
    mimic_of = tree.mimic_of
    return dict(joint_names=[j["name"] for j in bodies], joint_types=[j["type"] for j in bodies],
                link_names=[j["child"] for j in bodies], parent=parent, T_tree=T_tree,
                axis=unit_axes(bodies), mass=mass, com=com, inertia_com=inertia_com,
                **_frames(tree, body_of, placements, placed), root_link=tree.root,
                tip_frame=tip_link or (bodies[-1]["child"] if bodies else tree.root),
                **_joint_limits(bodies),
                mimic={j["name"]: mimic_of[j["name"]] for j in bodies if j["name"] in mimic_of})


def _bodies(tree):
    """The bodies of the model: (the moving joints in body order, {link: its body, -1 the base},
    parent (n,), T_tree (n, 4, 4), placements (k, 4, 4), {link: its row of placements}): every link
    below the root belongs to a body, placed in that body's frame by placements[placed[link]] (the
    identity, row 0, for a link moved by its own joint; locked joints at their positions)."""
    order = tree.order
    joint_below = [tree.parent_joint[name] for name in order[1:]]
    origin = origins(joint_below, lambda k: f"joint {joint_below[k]['name']!r}")
    body_of, placed, placements, bodies, body_row = {tree.root: -1}, {tree.root: 0}, [EYE], [], []
    for k, (name, joint) in enumerate(zip(order[1:], joint_below)):
        if tree.moves(joint):
            body_of[name], placed[name] = len(bodies), 0
            bodies.append(joint)
            body_row.append(k)
        else:
            body_of[name], placed[name] = body_of[joint["parent"]], len(placements)
            q = tree.locked_position(joint)
            placements.append(placements[placed[joint["parent"]]] @ origin[k] @ locked_joint_motion(joint, q))
    placements = np.array(placements)
    parent = np.array([body_of[j["parent"]] for j in bodies], dtype=np.int64)
    T_tree = placements[[placed[j["parent"]] for j in bodies]].reshape(len(bodies), 4, 4) @ origin[body_row]
    return bodies, body_of, parent, T_tree, placements, placed


def _frames(tree, body_of, placements, placed):
    """Model's frame_names, frame_body and frame_placement: every link below the root in its body, then
    the links outside the selected subtree, fixed to the base: placed by their poses from the URDF root
    (every joint at its locked value, default 0) in one pass."""
    order = tree.order
    frame_names = list(order)
    frame_body = [body_of[name] for name in order]
    frame_placement = placements[[placed[name] for name in order]]
    outside = [name for name in tree.links if name not in tree.below]
    if outside:
        pose = {tree.urdf_root: EYE}
        everything = depth_first(tree.urdf_root, tree.children)[1:]
        joint_of = [tree.parent_joint[name] for name in everything]
        for name, joint, T in zip(everything, joint_of,
                                  origins(joint_of, lambda k: f"joint {joint_of[k]['name']!r}")):
            pose[name] = pose[joint["parent"]] @ T @ locked_joint_motion(joint, tree.locked_position(joint))
        root_inverse = np.linalg.inv(pose[tree.root])
        frame_names += outside
        frame_body += [-1] * len(outside)
        frame_placement = np.concatenate([frame_placement, [root_inverse @ pose[name] for name in outside]])
    return dict(frame_names=frame_names, frame_body=frame_body, frame_placement=frame_placement)


def _limit(joint, key, default):
    value = None if joint["limit"] is None else joint["limit"][key]
    return default if value is None else value


def _dynamics(joint, key):
    return (joint["dynamics"] or {}).get(key) or 0.0


def _joint_limits(bodies):
    """Model's per-body limits and friction from the joints' <limit> and <dynamics>: no position limits
    on a continuous joint or where both are 0 (the URDF default when left out), no velocity or effort
    limit where it is 0 or less (unspecified in many URDFs)."""
    lower = np.array([-np.inf if j["type"] == "continuous" else _limit(j, "lower", -np.inf) for j in bodies])
    upper = np.array([np.inf if j["type"] == "continuous" else _limit(j, "upper", np.inf) for j in bodies])
    both_zero = (lower == 0) & (upper == 0)
    lower[both_zero], upper[both_zero] = -np.inf, np.inf
    effort = np.array([_limit(j, "effort", np.inf) for j in bodies], dtype=float)
    velocity = np.array([_limit(j, "velocity", np.inf) for j in bodies], dtype=float)
    effort[effort <= 0] = np.inf
    velocity[velocity <= 0] = np.inf
    return dict(lower=lower, upper=upper, velocity_limit=velocity, effort_limit=effort,
                damping=[_dynamics(j, "damping") for j in bodies],
                friction=[_dynamics(j, "friction") for j in bodies])
