"""URDF -> Model: kinematic trees, fixed-joint merging, chain selection with locked joints.

Every link whose parent joint moves becomes a body; links behind fixed (or locked) joints are merged
into the body they hang from: masses add, the centre of mass is the mass-weighted mean and the
rotational inertias move to the common centre of mass (I' = R I R^T, then the parallel-axis theorem).
Every link stays addressable as a frame (its body and its constant placement there).

The XML is read with xml.etree and checked element by element as urdf_parser_py (ROS 2's URDF reader,
used before) checks it: the same required attributes and elements, value types, joint types,
transmission formats and "ParseError in <path>: <reason>" messages (test_urdf_loader compares the two
on every example-robot-data URDF). Reading it here is several times faster (doc/performance.md,
"Design measurements"). Beyond urdf_parser_py, duplicate link or joint names, joints that form a
cycle and origins at model_checks.MAX_LENGTH (1e6 m) or farther are refused. All of load_urdf is O(n) in the
number of links, mostly vectorised.
"""
from __future__ import annotations

import gc
import os
from xml.etree import ElementTree

import numpy as np

from . import _checks
from .inertia import check_inertia, lump_inertias
from .model import Model, resolve_mimic
from .model_checks import MAX_LENGTH
from .spatial import exp_twist, rpy_to_rotation

_MOVING = ("revolute", "continuous", "prismatic")
_JOINT_TYPES = ("unknown", "revolute", "continuous", "prismatic", "floating", "planar", "fixed")
_EYE = np.eye(4)
_EYE.setflags(write=False)       # shared by every link whose placement in its body is the identity
_CHUNK = 1 << 20                 # bytes of XML parsed at a time


# -- reading the XML ----------------------------------------------------------------------------------
class _ParseError(Exception):
    def __init__(self, reason, path):
        super().__init__(f"ParseError in {path}:\n{reason}")


_REQUIRED, _OPTIONAL, _MANY = "required", "optional", "many"


class _Spec:
    """What urdf_parser_py declares for one element: attributes {name: (convert, required, default)},
    child elements {tag: (spec, _REQUIRED | _OPTIONAL | _MANY)}, and what reading it returns: the
    value of one attribute (`value`), its converted text (`text`), the dict of its attributes and
    children (make=dict) or make(that dict), or True (elements that are only checked).
    check(values, notes) returns a complaint or None. read: the function that reads it (_read_element
    unless given)."""

    __slots__ = ("converters", "required_attributes", "children", "required_children", "defaults",
                 "value", "text", "make", "check", "read")

    def __init__(self, attributes=(), children=(), *, value=None, text=None, make=None, check=None,
                 read=None):
        attributes, children = dict(attributes), dict(children)
        assert not set(attributes) & set(children)
        self.converters = {key: convert for key, (convert, _, _) in attributes.items()}
        self.required_attributes = tuple(key for key, (_, required, _) in attributes.items() if required)
        self.children = {tag: (spec, how is _MANY) for tag, (spec, how) in children.items()}
        self.required_children = tuple(tag for tag, (_, how) in children.items() if how is _REQUIRED)
        # what an element without them holds: optional attributes' defaults, None for absent children
        self.defaults = {key: default for key, (_, required, default) in attributes.items() if not required}
        self.defaults.update(dict.fromkeys(children))
        self.value, self.text, self.make, self.check = value, text, make, check
        self.read = read or (_read_text if text is not None else _read_element)


def _where(node, spec, base, suffix):
    """The element's path as urdf_parser_py writes it: [@name='...'] instead of the index once named."""
    name = node.get("name") if "name" in spec.converters else None
    return base + (suffix if name is None else f"[@name='{name}']")


def _read_element(node, spec, base, suffix, notes):
    """The value of XML element `node` read as `spec` says; _ParseError naming its path (base + suffix,
    see _where). Unknown attributes and tags, and repeated single elements (the first one counts), go
    to `notes`, as urdf_parser_py reports them. Absent optional children read as None (lists too)."""
    values = spec.defaults.copy()
    converters = spec.converters
    for key, raw in node.attrib.items():
        convert = converters.get(key)
        if convert is None:
            notes.append(f'Unknown attribute "{key}" in {_where(node, spec, base, suffix)}')
            continue
        try:
            values[key] = convert(raw)
        except (TypeError, ValueError) as e:
            raise _ParseError(e, f"{_where(node, spec, base, suffix)}[@{key}]") from None
    for key in spec.required_attributes:
        if key not in values:
            raise _ParseError(f"Required attribute not set in XML: {key}", _where(node, spec, base, suffix))
    if len(node):
        path = _where(node, spec, base, suffix)
        children = spec.children
        for child in node:
            tag = child.tag
            entry = children.get(tag)
            if entry is None:
                notes.append(f'Unknown tag "{tag}" in {path}')
            elif entry[1]:                          # one of many
                items = values[tag]
                if items is None:
                    items = values[tag] = []
                items.append(entry[0].read(child, entry[0], f"{path}/{tag}", f"[{len(items) + 1}]", notes))
            elif values[tag] is not None:
                notes.append(f"Scalar element defined multiple times: {tag}")
            else:
                values[tag] = entry[0].read(child, entry[0], f"{path}/{tag}", "", notes)
    for tag in spec.required_children:
        if values[tag] is None:
            raise _ParseError(f"Required element not set in XML: {tag}", _where(node, spec, base, suffix))
    if spec.check is not None:
        complaint = spec.check(values, notes)
        if complaint:
            raise _ParseError(complaint, _where(node, spec, base, suffix))
    if spec.value is not None:
        return values[spec.value]
    make = spec.make
    return values if make is dict else True if make is None else make(values)


def _read_text(node, spec, base, suffix, notes):
    try:
        return spec.text(node.text)
    except (TypeError, ValueError) as e:
        raise _ParseError(e, base + suffix) from None


def _skip(node, spec, base, suffix, notes):
    return True


def _read_geometry(node, spec, base, suffix, notes):
    """Exactly one of _SHAPES."""
    path = base + suffix
    if len(node) != 1:
        raise _ParseError("One element only for geometric", path)
    shape = _SHAPES.get(node[0].tag)
    if shape is None:
        raise _ParseError(f"Invalid geometric tag: {node[0].tag}", path)
    return {"shape": node[0].tag, **shape.read(node[0], shape, f"{path}/{node[0].tag}", "", notes)}


def _read_transmission(node, spec, base, suffix, notes):
    """Either format urdf_parser_py knows (it tries both); the first one's complaint if neither fits."""
    try:
        return _NEW_TRANSMISSION.read(node, _NEW_TRANSMISSION, base, suffix, notes)
    except _ParseError as new_format:
        try:
            return _PR2_TRANSMISSION.read(node, _PR2_TRANSMISSION, base, suffix, notes)
        except _ParseError:
            path = _where(node, _NEW_TRANSMISSION, base, suffix)
            raise _ParseError(f"Could not perform duck-typed parsing.\nValue Type: Transmission\n"
                              f"Exception: {new_format}", path) from None


def _vector(count):
    def convert(text):
        values = text.split()
        if len(values) != count:
            raise ValueError("Invalid vector length")
        return list(map(float, values))
    return convert


def _required(convert):
    return convert, True, None


def _optional(convert, default=None):
    return convert, False, default


def _material_has_colour(values, notes):
    if values["color"] is None and values["texture"] is None:
        notes.append("Material has neither a color nor texture.")


def _joint_type_known(values, notes):
    return None if values["type"] in _JOINT_TYPES else f"Invalid joint type: {values['type']}"


def _has_interface(values, notes):
    return None if values["hardwareInterface"] else "no hardwareInterface defined"


def _transmission_complete(values, notes):
    if not values["joint"]:
        return "no joint defined"
    return None if values["actuator"] else "no actuator defined"


def _supported_version(values, notes):
    version = values["version"]
    if version is None:
        return None
    major_minor = version.split(".")
    if len(major_minor) != 2:
        return "The version attribute should be in the form 'x.y'"
    if "" in major_minor:
        return "Empty major or minor number is not allowed"
    try:
        if int(major_minor[0]) < 0 or int(major_minor[1]) < 0:
            return "Version number must be positive"
    except ValueError as e:
        return str(e)
    return None if version == "1.0" else "Invalid version; only 1.0 is supported"


_RAW = _Spec(read=_skip)                        # <gazebo>: anything
_V3, _V4 = _vector(3), _vector(4)
_POSE = _Spec({"xyz": _optional(_V3, [0.0, 0.0, 0.0]), "rpy": _optional(_V3, [0.0, 0.0, 0.0])}, make=dict)
_GEOMETRY = _Spec(read=_read_geometry)
_SHAPES = {                                     # each read as {"shape": tag, its attributes}
    "box": _Spec({"size": _required(_V3)}, make=dict),
    "cylinder": _Spec({"radius": _required(float), "length": _required(float)}, make=dict),
    "sphere": _Spec({"radius": _required(float)}, make=dict),
    "mesh": _Spec({"filename": _required(str), "scale": _optional(_V3)}, make=dict),
}
_COLOUR_AND_TEXTURE = {"color": (_Spec({"rgba": _required(_V4)}, value="rgba"), _OPTIONAL),
                       "texture": (_Spec({"filename": _required(str)}, value="filename"), _OPTIONAL)}
_LINK_MATERIAL = _Spec({"name": _required(str)}, _COLOUR_AND_TEXTURE, make=dict)
_MATERIAL = _Spec({"name": _required(str)}, _COLOUR_AND_TEXTURE, check=_material_has_colour, make=dict)
_INERTIAL = _Spec(children={
    "origin": (_POSE, _OPTIONAL),
    "mass": (_Spec({"value": _required(float)}, value="value"), _REQUIRED),
    "inertia": (_Spec({key: _required(float) for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
                      make=dict), _OPTIONAL),
}, make=dict)
_LINK = _Spec({"name": _required(str)}, {
    "origin": (_POSE, _OPTIONAL),
    "visual": (_Spec(children={"origin": (_POSE, _OPTIONAL), "geometry": (_GEOMETRY, _REQUIRED),
                               "material": (_LINK_MATERIAL, _OPTIONAL)}, make=dict), _MANY),
    "collision": (_Spec(children={"origin": (_POSE, _OPTIONAL), "geometry": (_GEOMETRY, _REQUIRED)},
                        make=dict), _MANY),
    "inertial": (_INERTIAL, _OPTIONAL),
}, make=dict)
_JOINT = _Spec({"name": _required(str), "type": _required(str)}, {
    "origin": (_POSE, _OPTIONAL),
    "axis": (_Spec({"xyz": _required(_V3)}, value="xyz"), _OPTIONAL),
    "parent": (_Spec({"link": _required(str)}, value="link"), _REQUIRED),
    "child": (_Spec({"link": _required(str)}, value="link"), _REQUIRED),
    "limit": (_Spec({"effort": _required(float), "lower": _optional(float, 0.0),
                     "upper": _optional(float, 0.0), "velocity": _required(float)}, make=dict), _OPTIONAL),
    "dynamics": (_Spec({"damping": _optional(float), "friction": _optional(float)}, make=dict), _OPTIONAL),
    "safety_controller": (_Spec({"k_velocity": _required(float), "k_position": _optional(float, 0.0),
                                 "soft_lower_limit": _optional(float, 0.0),
                                 "soft_upper_limit": _optional(float, 0.0)}), _OPTIONAL),
    "calibration": (_Spec({"rising": _optional(float, 0.0), "falling": _optional(float, 0.0)}), _OPTIONAL),
    "mimic": (_Spec({"joint": _required(str), "multiplier": _optional(float), "offset": _optional(float)},
                    make=dict), _OPTIONAL),
}, make=dict, check=_joint_type_known)
_NEW_TRANSMISSION = _Spec({"name": _required(str)}, {
    "type": (_Spec(text=str), _REQUIRED),
    "joint": (_Spec({"name": _required(str)}, {"hardwareInterface": (_Spec(text=str), _MANY)},
                    make=dict, check=_has_interface), _MANY),
    "actuator": (_Spec({"name": _required(str)}, {"mechanicalReduction": (_Spec(text=float), _OPTIONAL)},
                       make=dict), _MANY),
}, check=_transmission_complete)
_PR2_TRANSMISSION = _Spec({"name": _required(str), "type": _required(str)}, {
    "joint": (_Spec({"name": _required(str)}, value="name"), _REQUIRED),
    "actuator": (_Spec({"name": _required(str)}, value="name"), _REQUIRED),
    "mechanicalReduction": (_Spec(text=float), _REQUIRED),
})
_TRANSMISSION = _Spec(read=_read_transmission)
_ROBOT = _Spec({"name": _required(str), "version": _optional(str)}, {
    "link": (_LINK, _MANY), "joint": (_JOINT, _MANY), "gazebo": (_RAW, _MANY),
    "transmission": (_TRANSMISSION, _MANY), "material": (_MATERIAL, _MANY),
}, check=_supported_version)                    # its children are read one by one (_parse)


def _parse(source):
    """(links, joints) of a URDF file path or XML string (parse_document without the materials)."""
    links, joints, _ = parse_document(source)
    return links, joints


def parse_document(source):
    """(links, joints, materials) of a URDF file path or XML string, as lists of dicts (the kept
    elements of _LINK, _JOINT and the top-level _MATERIAL: geometry {"shape": box | cylinder | sphere |
    mesh, its attributes}, materials {"name", "color": rgba or None, "texture": filename or None});
    ValueError "malformed URDF: ..." with the reason and the last notes.

    The XML is fed to xml.etree's pull parser in chunks of _CHUNK bytes and each child of <robot> is
    read and dropped once complete, so the document tree never exists whole (xml.etree's elements are
    plain Python objects, faster to walk than lxml's proxies)."""
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(f"URDF source must be a file path or an XML string, got {type(source).__name__}")
    text = os.fspath(source)
    if not text.lstrip().startswith("<"):
        if not os.path.isfile(text):
            raise ValueError(f"URDF file not found: {text!r}")
        with open(text, encoding="utf-8") as f:
            text = f.read()
    notes, read = [], {"link": [], "joint": [], "material": []}
    count = dict.fromkeys(_ROBOT.children, 0)
    robot, path = None, "/robot"

    def read_children(nodes):
        for node in nodes:
            entry = _ROBOT.children.get(node.tag)
            if entry is None:
                notes.append(f'Unknown tag "{node.tag}" in {path}')
                continue
            count[node.tag] += 1
            value = entry[0].read(node, entry[0], f"{path}/{node.tag}", f"[{count[node.tag]}]", notes)
            if node.tag in read:
                read[node.tag].append(value)

    data = text.encode("utf-8")
    parser = ElementTree.XMLPullParser(events=("start",))
    try:
        for offset in [*range(0, len(data), _CHUNK), None]:     # None: the end of the document
            if offset is None:
                parser.close()
            else:
                parser.feed(data[offset:offset + _CHUNK])
            for _, node in parser.read_events():
                if robot is None:                   # the root: its attributes are complete at its start
                    robot = node
                    if robot.tag != "robot":
                        raise _ParseError(f"the root element is <{robot.tag}>, not <robot>", f"/{robot.tag}")
                    _read_element(ElementTree.Element(robot.tag, robot.attrib), _ROBOT, path, "", notes)
                    if "name" in robot.attrib:
                        path = f"/robot[@name='{robot.attrib['name']}']"
            if robot is not None:
                # every child of <robot> but the last is complete: read them and drop them
                complete = len(robot) if offset is None else len(robot) - 1
                read_children(robot[:complete])
                del robot[:complete]
    except (ElementTree.ParseError, _ParseError) as exc:
        detail = "; ".join(notes[-3:])
        raise ValueError(f"malformed URDF: {exc}" + (f" ({detail})" if detail else "")) from None
    if not read["link"]:
        raise ValueError("malformed URDF: no <link> elements")
    return read["link"], read["joint"], read["material"]


# -- the loader --------------------------------------------------------------------------------------
def _by_name(elements, what):
    """{name: element}; ValueError for a name used twice (a node could never address both)."""
    named = {}
    for element in elements:
        if element["name"] in named:
            raise ValueError(f"malformed URDF: duplicate {what} name {element['name']!r} ({what} names must "
                             "be unique)")
        named[element["name"]] = element
    return named


def _urdf_root(links, parent_joint, children):
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


def _depth_first(root, children):
    """Links from `root` down, depth first, children in file order (the joint order of the model)."""
    order, stack = [], [root]
    while stack:
        name = stack.pop()
        order.append(name)
        stack.extend(j["child"] for j in reversed(children[name]))
    return order


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


def _origins(elements, label):
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


def _unit_axes(joints):
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
    if joint_type not in _MOVING or q == 0.0:
        return _EYE
    zeros = np.zeros(3)
    screw = np.concatenate([zeros, axis] if joint_type == "prismatic" else [axis, zeros])
    return exp_twist(screw, q)


def _joint_motion(joint, q):
    """Pose of the child frame in the joint frame for joint value q (locked joints)."""
    if joint["type"] not in _MOVING or q == 0.0:
        return _EYE
    return joint_motion(joint["type"], _unit_axes([joint])[0], q)


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
    T_in = _origins(inertials, lambda k: f"link {with_inertial[k]!r}: inertial")   # inertia axes in the link
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
        arguments = _model_arguments(_parse(source), root_link, tip_link, locked, mimic)
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
        if element is None or joint["type"] not in _MOVING:
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
        if kind not in _MOVING:
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


def _model_arguments(parsed, root_link, tip_link, locked, use_mimic=True):
    """Model's arguments (all but gravity) from _parse's records: load_urdf's work."""
    link_list, joint_list = parsed
    links = _by_name(link_list, "link")
    joints = _by_name(joint_list, "joint")
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
    urdf_root = _urdf_root(links, parent_joint, children)
    for name in locked:
        if name not in joints:
            raise ValueError(f"locked_joints: unknown joint {name!r}")
    mimic_of = _mimic_map(joint_list, joints, locked) if use_mimic else {}
    for name, what in ((root_link, "root_link"), (tip_link, "tip_link")):
        if name is not None and name not in links:
            raise ValueError(f"{what}: unknown link {name!r}")
    root = root_link or urdf_root

    order = _depth_first(root, children)         # links below the root
    below = set(order)
    chain = None
    if tip_link is not None:
        if tip_link not in below:
            raise ValueError(f"tip_link {tip_link!r} is not below root_link {root!r}")
        chain, name = set(), tip_link
        while name != root:
            chain.add(parent_joint[name]["name"])
            name = parent_joint[name]["parent"]

    def moves(joint):
        """True for a kept moving joint; floating/planar joints may only sit off the selected chain
        (then they are held at the identity like a fixed joint). A mimic joint moves when the
        independent joint it follows does."""
        kind = joint["type"]
        if kind in ("floating", "planar") and (chain is None or joint["name"] in chain):
            raise ValueError(f"joint {joint['name']!r}: {kind} joints are not supported "
                             "(fixed-base trees only)")
        if kind not in _MOVING + ("fixed", "floating", "planar"):
            raise ValueError(f"joint {joint['name']!r}: unknown joint type {kind!r}")
        if joint["name"] in mimic_of:
            independent = joints[mimic_of[joint["name"]][0]]
            return independent["child"] in below and moves(independent)
        return kind in _MOVING and joint["name"] not in locked and (chain is None or joint["name"] in chain)

    def locked_position(joint):
        """The position of a joint that does not move: its locked_joints value (default 0), or for a
        mimic joint m q + o of the locked joint it follows."""
        if joint["name"] in mimic_of:
            independent, m, o = mimic_of[joint["name"]]
            return m * locked.get(independent, 0.0) + o
        return locked.get(joint["name"], 0.0)

    joint_below = [parent_joint[name] for name in order[1:]]
    origin = _origins(joint_below, lambda k: f"joint {joint_below[k]['name']!r}")
    # body of every link below the root, and the link's pose in that body's frame: placements[placed[link]]
    # (the identity, index 0, for every link moved by its own joint)
    body_of, placed, placements, bodies, body_row = {root: -1}, {root: 0}, [_EYE], [], []
    for k, (name, joint) in enumerate(zip(order[1:], joint_below)):
        if moves(joint):
            body_of[name], placed[name] = len(bodies), 0
            bodies.append(joint)
            body_row.append(k)
        else:
            body_of[name], placed[name] = body_of[joint["parent"]], len(placements)
            q = locked_position(joint)
            placements.append(placements[placed[joint["parent"]]] @ origin[k] @ _joint_motion(joint, q))
    placements = np.array(placements)
    n = len(bodies)
    mass, com, inertia_com = _body_inertias(links, order[1:], body_of, placements, placed, n)
    parent = np.array([body_of[j["parent"]] for j in bodies], dtype=np.int64)
    T_tree = placements[[placed[j["parent"]] for j in bodies]].reshape(n, 4, 4) @ origin[body_row]

    def limit(joint, key, default):
        value = None if joint["limit"] is None else joint["limit"][key]
        return default if value is None else value

    def dynamics(joint, key):
        return (joint["dynamics"] or {}).get(key) or 0.0

    lower = np.array([-np.inf if j["type"] == "continuous" else limit(j, "lower", -np.inf) for j in bodies])
    upper = np.array([np.inf if j["type"] == "continuous" else limit(j, "upper", np.inf) for j in bodies])
    both_zero = (lower == 0) & (upper == 0)       # URDF default when the limits are left out
    lower[both_zero], upper[both_zero] = -np.inf, np.inf
    effort = np.array([limit(j, "effort", np.inf) for j in bodies], dtype=float)
    velocity = np.array([limit(j, "velocity", np.inf) for j in bodies], dtype=float)
    effort[effort <= 0] = np.inf                  # 0 = unspecified in many URDFs
    velocity[velocity <= 0] = np.inf

    tip = tip_link or (bodies[-1]["child"] if bodies else root)
    frame_names = list(order)
    frame_body = [body_of[name] for name in order]
    frame_placement = placements[[placed[name] for name in order]]
    # links outside the selected subtree are fixed to the base: keep them as frames too, placed by
    # their poses from the URDF root (every joint at its locked value, default 0) in one pass
    outside = [name for name in links if name not in below]
    if outside:
        pose = {urdf_root: _EYE}
        everything = _depth_first(urdf_root, children)[1:]
        joint_of = [parent_joint[name] for name in everything]
        for name, joint, T in zip(everything, joint_of,
                                  _origins(joint_of, lambda k: f"joint {joint_of[k]['name']!r}")):
            pose[name] = pose[joint["parent"]] @ T @ _joint_motion(joint, locked_position(joint))
        root_inverse = np.linalg.inv(pose[root])
        frame_names += outside
        frame_body += [-1] * len(outside)
        frame_placement = np.concatenate([frame_placement, [root_inverse @ pose[name] for name in outside]])
    return dict(joint_names=[j["name"] for j in bodies], joint_types=[j["type"] for j in bodies],
                link_names=[j["child"] for j in bodies], parent=parent, T_tree=T_tree,
                axis=_unit_axes(bodies), mass=mass, com=com, inertia_com=inertia_com,
                frame_names=frame_names, frame_body=frame_body,
                frame_placement=frame_placement, root_link=root, tip_frame=tip,
                lower=lower, upper=upper, velocity_limit=velocity, effort_limit=effort,
                damping=[dynamics(j, "damping") for j in bodies],
                friction=[dynamics(j, "friction") for j in bodies],
                mimic={j["name"]: mimic_of[j["name"]] for j in bodies if j["name"] in mimic_of})


def robot_name(urdf_xml, limit=65536, max_chars=64):
    """The ``name`` attribute of a URDF's root ``<robot>`` element (at most ``max_chars``
    characters), '' when there is none or the first ``limit`` characters do not hold its start tag.
    Reads only as far as the root's start tag (a pull parser): cheap on any description.

    >>> robot_name('<robot name="ur5e"><link name="base_link"/></robot>')
    'ur5e'
    """
    if not urdf_xml:
        return ''
    parser = ElementTree.XMLPullParser(events=('start',))
    try:
        for at in range(0, min(len(urdf_xml), limit), 4096):
            parser.feed(urdf_xml[at:at + 4096])
            for _, element in parser.read_events():
                return element.get('name', '')[:max_chars]
    except ElementTree.ParseError:
        pass
    return ''
