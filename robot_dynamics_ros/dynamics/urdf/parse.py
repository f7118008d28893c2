"""Reading a URDF document: the XML checked element by element as urdf_parser_py (ROS 2's URDF reader,
used before) checks it -- the same required attributes and elements, value types, joint types,
transmission formats and "ParseError in <path>: <reason>" messages (test_urdf_loader compares the two
on every example-robot-data URDF) -- and returned as plain records (lists of dicts). Reading it here
is several times faster (doc/performance.md, "Design measurements"). What the records mean for the
dynamics model is build.py's job.
"""
from __future__ import annotations

import os
from xml.etree import ElementTree

_JOINT_TYPES = ("unknown", "revolute", "continuous", "prismatic", "floating", "planar", "fixed")
_CHUNK = 1 << 20                 # bytes of XML parsed at a time


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
    _read_attributes(node, spec, base, suffix, notes, values)
    if len(node):
        _read_children(node, spec, _where(node, spec, base, suffix), notes, values)
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


def _read_attributes(node, spec, base, suffix, notes, values):
    """node's attributes converted into `values` (unknown ones noted); _ParseError for a value that does
    not convert or a required attribute that is missing."""
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


def _read_children(node, spec, path, notes, values):
    """node's child elements read into `values` (a list per repeatable tag); unknown tags and repeated
    single elements noted (the first one counts). path: node's own path."""
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
}, check=_supported_version)                    # its children are read one by one (_read_robot)


def links_and_joints(source):
    """(links, joints) of a URDF file path or XML string (parse_document without the materials)."""
    links, joints, _ = parse_document(source)
    return links, joints


def parse_document(source):
    """(links, joints, materials) of a URDF file path or XML string, as lists of dicts (the kept
    elements of _LINK, _JOINT and the top-level _MATERIAL: geometry {"shape": box | cylinder | sphere |
    mesh, its attributes}, materials {"name", "color": rgba or None, "texture": filename or None});
    ValueError "malformed URDF: ..." with the reason and the last notes."""
    text = _document_text(source)
    notes, read = [], {"link": [], "joint": [], "material": []}
    try:
        _read_robot(text.encode("utf-8"), read, notes)
    except (ElementTree.ParseError, _ParseError) as exc:
        detail = "; ".join(notes[-3:])
        raise ValueError(f"malformed URDF: {exc}" + (f" ({detail})" if detail else "")) from None
    if not read["link"]:
        raise ValueError("malformed URDF: no <link> elements")
    return read["link"], read["joint"], read["material"]


def _document_text(source):
    """The XML text of a URDF file path or XML string; ValueError for anything else or a missing file."""
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(f"URDF source must be a file path or an XML string, got {type(source).__name__}")
    text = os.fspath(source)
    if not text.lstrip().startswith("<"):
        if not os.path.isfile(text):
            raise ValueError(f"URDF file not found: {text!r}")
        with open(text, encoding="utf-8") as f:
            text = f.read()
    return text


def _read_robot(data, read, notes):
    """Read the URDF document `data` (bytes) into `read` ({tag: list of records} of the children of
    <robot> kept: link, joint, material); unknown tags and the like go to `notes`. _ParseError or
    ElementTree.ParseError for a malformed document.

    The XML is fed to xml.etree's pull parser in chunks of _CHUNK bytes and each child of <robot> is
    read and dropped once complete, so the document tree never exists whole (xml.etree's elements are
    plain Python objects, faster to walk than lxml's proxies)."""
    count = dict.fromkeys(_ROBOT.children, 0)
    robot, path = None, "/robot"
    parser = ElementTree.XMLPullParser(events=("start",))
    for offset in [*range(0, len(data), _CHUNK), None]:     # None: the end of the document
        if offset is None:
            parser.close()
        else:
            parser.feed(data[offset:offset + _CHUNK])
        for _, node in parser.read_events():
            if robot is None:                   # the root: its attributes are complete at its start
                robot, path = node, _read_root(node, notes)
        if robot is not None:
            # every child of <robot> but the last is complete: read them and drop them
            complete = len(robot) if offset is None else len(robot) - 1
            _read_robot_children(robot[:complete], path, count, read, notes)
            del robot[:complete]


def _read_root(robot, notes):
    """Check the root element's tag and attributes (_ROBOT); its path for the messages."""
    if robot.tag != "robot":
        raise _ParseError(f"the root element is <{robot.tag}>, not <robot>", f"/{robot.tag}")
    _read_element(ElementTree.Element(robot.tag, robot.attrib), _ROBOT, "/robot", "", notes)
    return f"/robot[@name='{robot.attrib['name']}']" if "name" in robot.attrib else "/robot"


def _read_robot_children(nodes, path, count, read, notes):
    """Read complete children of <robot> (count: how many of each tag so far, for their paths)."""
    for node in nodes:
        entry = _ROBOT.children.get(node.tag)
        if entry is None:
            notes.append(f'Unknown tag "{node.tag}" in {path}')
            continue
        count[node.tag] += 1
        value = entry[0].read(node, entry[0], f"{path}/{node.tag}", f"[{count[node.tag]}]", notes)
        if node.tag in read:
            read[node.tag].append(value)


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
