"""A URDF's whole kinematic tree: every joint's transform parent link -> child link, every link's pose
in the root frame, and the links' geometry, as robot_state_publisher and a viewer need them.

The dynamics model (urdf.load_urdf) merges the links behind fixed joints into their bodies and keeps
only the independent coordinates; a transform tree keeps every link as its own frame. Both read the URDF
with the same parser (urdf.parse_document) and the same origins, axes and mimic rules, so the frames
here are the model's frames: ``link_poses(q)[tip] == frame_pose(model, q, tip)``.

Transforms (4, 4) homogeneous, SI units. A joint's transform (the child link's frame in the parent
link's frame) is

    T_parent,child(q) = T_origin · exp([S] q)

with T_origin the joint's <origin> and S its axis: for a revolute or continuous joint the rotation
about the unit axis by q rad (Rodrigues, R = I + sin q [a] + (1 - cos q) [a]²), for a prismatic joint
the translation q a (m); a fixed joint has T_origin only. A mimic joint's value is
q = multiplier · q_followed + offset (chains resolved to the independent joint, model.resolve_mimic).
Floating and planar joints have no scalar position: they are held at their origin (robot_state_publisher
does not publish them either; ``unsupported_joints`` names them).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import resolve_mimic
from .urdf.parse import parse_document
from .urdf.tree import by_name, joint_motion, origins, unit_axes, urdf_root

__all__ = ["Geometry", "TreeJoint", "TreeLink", "KinematicTree", "MOVING_JOINT_TYPES"]

MOVING_JOINT_TYPES = ("revolute", "continuous", "prismatic")
_X_AXIS = np.array([1.0, 0.0, 0.0])
_X_AXIS.setflags(write=False)


@dataclass(frozen=True)
class Geometry:
    """One <visual> or <collision> of a link. ``shape``: 'box' (``size`` (3,) m), 'cylinder' (``radius``,
    ``length`` m, along the z axis), 'sphere' (``radius``) or 'mesh' (``filename`` as written, e.g.
    package://pkg/meshes/x.stl, and ``scale`` (3,)); ``origin`` (4, 4) its pose in the link frame;
    ``rgba`` its colour (the link's material, or the top-level material of that name) or None."""

    shape: str
    origin: np.ndarray
    size: tuple = None
    radius: float = None
    length: float = None
    filename: str = None
    scale: tuple = (1.0, 1.0, 1.0)
    rgba: tuple = None


@dataclass(frozen=True)
class TreeLink:
    """A link: ``mass`` kg, ``com`` (3,) m and ``inertia`` (3, 3) kg m² about the centre of mass in the
    link frame (zeros without an <inertial>), ``visuals`` and ``collisions`` (tuples of Geometry)."""

    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    visuals: tuple
    collisions: tuple


@dataclass(frozen=True)
class TreeJoint:
    """A joint: ``type`` as in the URDF, ``parent`` and ``child`` link names, ``origin`` (4, 4), unit
    ``axis`` (3,), and ``mimic`` = (independent joint, multiplier, offset) or None."""

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    mimic: tuple = None

    @property
    def moves(self):
        return self.type in MOVING_JOINT_TYPES

    def transform(self, q):
        """T_parent,child(q) = T_origin · exp([S] q) (module docstring; urdf.joint_motion); q ignored
        unless the joint moves."""
        if not self.moves or q == 0.0:
            return self.origin.copy()
        return self.origin @ joint_motion(self.type, self.axis, q)


def _geometry(element, link_name, kind, materials):
    geometry = element["geometry"]
    rgba = None
    material = element.get("material")
    if material is not None:
        rgba = material.get("color") or materials.get(material["name"])
    values = {key: geometry.get(key) for key in ("size", "radius", "length", "filename")}
    origin = origins([element], lambda _: f"link {link_name!r}: {kind}")[0]
    values = {key: tuple(value) if isinstance(value, list) else value for key, value in values.items()}
    return Geometry(shape=geometry["shape"], origin=origin, rgba=None if rgba is None else tuple(rgba),
                    scale=tuple(geometry.get("scale") or (1.0, 1.0, 1.0)), **values)


def _link(element, materials):
    name = element["name"]
    inertial = element["inertial"]
    mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
    if inertial is not None:
        mass = float(inertial["mass"])
        T = origins([inertial], lambda _: f"link {name!r}: inertial")[0]
        com = T[:3, 3].copy()
        values = inertial["inertia"] or dict.fromkeys(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), 0.0)
        I_axes = np.array([[values["ixx"], values["ixy"], values["ixz"]],
                           [values["ixy"], values["iyy"], values["iyz"]],
                           [values["ixz"], values["iyz"], values["izz"]]])
        inertia = T[:3, :3] @ I_axes @ T[:3, :3].T          # I_link = R I_inertial Rᵀ
    visuals = tuple(_geometry(v, name, "visual", materials) for v in element["visual"] or ())
    collisions = tuple(_geometry(c, name, "collision", materials) for c in element["collision"] or ())
    return TreeLink(name, mass, com, inertia, visuals, collisions)


class KinematicTree:
    """Every link and joint of a URDF (module docstring). ``root_link``; ``links`` {name: TreeLink};
    ``joints`` (TreeJoint, parents before children, depth first in file order); ``moving_joints`` the
    names of the revolute, continuous and prismatic joints that mimic none (the positions a
    /joint_states message carries); ``mimic_joints`` those that mimic one; ``unsupported_joints``
    the floating and planar ones (held at their origin).

    ValueError "malformed URDF: ..." as load_urdf gives it, and for mimic joints that form a cycle or
    follow a joint the URDF lacks."""

    def __init__(self, root_link, links, joints):
        self.root_link = root_link
        self.links = links
        self.joints = tuple(joints)
        self.joint = {joint.name: joint for joint in self.joints}
        self.moving_joints = tuple(j.name for j in self.joints if j.moves and j.mimic is None)
        self.mimic_joints = tuple(j.name for j in self.joints if j.moves and j.mimic is not None)
        self.unsupported_joints = tuple(j.name for j in self.joints if j.type in ("floating", "planar"))

    @property
    def nq(self):
        """The number of independent coordinates: len(moving_joints) (Model.nq of the whole tree)."""
        return len(self.moving_joints)

    @classmethod
    def from_urdf(cls, source):
        """The tree of a URDF file path or XML string."""
        link_list, joint_list, material_list = parse_document(source)
        materials = {m["name"]: m["color"] for m in material_list if m.get("color") is not None}
        links = by_name(link_list, "link")
        joints = by_name(joint_list, "joint")
        parent_joint, children = {}, {name: [] for name in links}
        for joint in joint_list:
            for end in ("parent", "child"):
                if joint[end] not in links:
                    raise ValueError(f"malformed URDF: joint {joint['name']!r} names {end} link "
                                     f"{joint[end]!r}, which the URDF does not have")
            if joint["child"] in parent_joint:
                raise ValueError(f"malformed URDF: link {joint['child']!r} is the child of two joints "
                                 f"({parent_joint[joint['child']]['name']!r} and {joint['name']!r})")
            parent_joint[joint["child"]] = joint
            children[joint["parent"]].append(joint)
        root = urdf_root(links, parent_joint, children)
        order, stack = [], list(reversed(children[root]))
        while stack:                                   # depth first, children in file order
            joint = stack.pop()
            order.append(joint)
            stack.extend(reversed(children[joint["child"]]))
        mimic = {j["name"]: (j["mimic"]["joint"], 1.0 if j["mimic"].get("multiplier") is None
                             else float(j["mimic"]["multiplier"]),
                             0.0 if j["mimic"].get("offset") is None else float(j["mimic"]["offset"]))
                 for j in order if j["mimic"] is not None and j["type"] in MOVING_JOINT_TYPES}
        for name, (followed, _, _) in mimic.items():
            if followed not in joints:
                raise ValueError(f"joint {name!r} mimics joint {followed!r}, which the URDF does not have")
        moving = [j["name"] for j in order if j["type"] in MOVING_JOINT_TYPES]
        resolved = resolve_mimic(mimic, moving)
        joint_origins = origins(order, lambda k: f"joint {order[k]['name']!r}") if order else []
        moving_joints = [j for j in order if j["type"] in MOVING_JOINT_TYPES]
        # (only a moving joint's axis is read: a fixed joint may have any, even 0 0 0)
        axes = dict(zip(moving, unit_axes(moving_joints))) if moving_joints else {}
        tree_joints = [TreeJoint(j["name"], j["type"], j["parent"], j["child"], joint_origins[k],
                                 axes.get(j["name"], _X_AXIS), resolved.get(j["name"]))
                       for k, j in enumerate(order)]
        tree_links = {name: _link(element, materials) for name, element in links.items()}
        return cls(root, tree_links, tree_joints)

    def joint_positions(self, positions):
        """{joint name: q} of every moving joint that has a value: those of ``positions`` ({name: q} of
        independent joints; names the tree lacks are ignored) and the mimic joints whose independent
        joint is there (q = multiplier q_followed + offset)."""
        values = {name: float(positions[name]) for name in self.moving_joints if name in positions}
        for name in self.mimic_joints:
            followed, multiplier, offset = self.joint[name].mimic
            if followed in values:
                values[name] = multiplier * values[followed] + offset
        return values

    def joint_transforms(self, positions, joints=None):
        """{joint name: T_parent,child (4, 4)} of ``joints`` (default every joint), moving joints at
        ``positions`` ({independent joint: q}; a moving joint without a value at q = 0)."""
        values = self.joint_positions(positions)
        chosen = self.joints if joints is None else [self.joint[name] for name in joints]
        return {joint.name: joint.transform(values.get(joint.name, 0.0)) for joint in chosen}

    def link_poses(self, positions):
        """{link name: T_root,link (4, 4)} of every link: T_root,child = T_root,parent · T_parent,child,
        parents first (moving joints without a value at q = 0)."""
        poses = {self.root_link: np.eye(4)}
        for name, T in self.joint_transforms(positions).items():
            joint = self.joint[name]
            poses[joint.child] = poses[joint.parent] @ T
        return poses
