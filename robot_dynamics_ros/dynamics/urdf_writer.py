"""Model -> URDF: write a model's inertias and joint friction back into the URDF it was loaded from.

The inverse of load_urdf for the numbers identification changes (masses, centres of mass, rotational
inertias, viscous and Coulomb friction); everything else is copied from the source URDF. ROS-free:
the standard library's xml.etree and numpy only.
"""
from __future__ import annotations

import os
from xml.etree import ElementTree

import numpy as np

from .model import Model
from .urdf.parse import links_and_joints

__all__ = ["write_urdf"]

_XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"


def write_urdf(model: Model, source_urdf: str | os.PathLike, path: str | os.PathLike) -> None:
    """Write `source_urdf` to `path` with the inertias and joint friction of `model`.

    source_urdf: the URDF the model was loaded from, a file path or an XML string (told apart as
    load_urdf does: text starting with '<' after leading whitespace is XML). path: the file written
    (UTF-8, with an XML declaration; it may be source_urdf's own file).

    Replaced:
      * the <inertial> of each body's link model.link_names[j] (the child link of the joint moving
        body j) by <origin xyz="model.com[j]" rpy="0 0 0"/>, <mass value="model.mass[j]"/> and
        <inertia .../> = model.inertia_com[j]: the centre of mass in the link frame, the rotational
        inertia about the centre of mass in the link frame's axes; kg, m, kg m^2. The origin and mass
        and inertia elements are edited in place (created where missing). A body with no inertia at
        all whose link has no <inertial> keeps none (reading back gives zeros either way).
      * the <inertial> of every link that load_urdf merged into a body is removed, since the body's
        lumped inertia already contains it. These are the links below model.root_link that hang from
        a body's link through joints that are not bodies of the model: fixed joints, joints locked by
        locked_joints or left off the root_link -> tip_link chain, and their mimic joints.
      * <dynamics damping="..." friction="..."/> of each joint that moves a body (created where
        missing; its other attributes kept): model.damping (viscous, N m s/rad or N s/m) and
        model.friction (Coulomb, N m or N) of the joint's coordinate. A mimicking joint's friction is
        folded into its coordinate's (Model), so the coordinate's value goes on the independent joint
        and 0 on the joints that mimic it.
    Kept as they are: the inertials of links on the fixed base (model.root_link and the links fixed to
    it, which load_urdf ignores) and of links outside the model's tree (above root_link), every other
    element and attribute (joint origins, axes and limits, visuals, collisions, <mimic>, <transmission>,
    <gazebo>, <ros2_control>, ...), comments, processing instructions, namespace declarations and
    element order. The model's own limits, axes and tree transforms are not written: they come from
    source_urdf. Not in URDF at all, so not written: the armature (rotor inertia) and the effort
    offsets; the identify CLI writes those to its YAML file.

    Round trip: load_urdf(path, <the selection arguments the model was loaded with: root_link,
    tip_link, locked_joints, mimic>) returns the same model (inertias, friction, kinematics, limits,
    frames, names) to 1e-12 relative; numbers are written as repr(float), so that they read back
    exactly. The file is specific to that selection: a link merged into a body (behind a locked or
    off-chain joint) has lost its own inertial, so loading it with other arguments moves that link's
    mass with the wrong body.

    ValueError naming `model`, `source_urdf` (unreadable, not XML, not a URDF load_urdf reads, or not
    the model's URDF: a link, joint or parent of the model missing or different there) or `path` (not
    a file path). OSError from writing `path` passes through.
    """
    if not isinstance(model, Model):
        raise ValueError(f"model must be a Model (load_urdf's), got {type(model).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must be a file path (str or os.PathLike), got {type(path).__name__}")
    text = _read_source(source_urdf)
    try:
        links_and_joints(text)                      # the checks load_urdf makes of the XML
    except ValueError as e:
        raise ValueError(f"source_urdf: {e}") from None
    builder = _Builder()
    parser = ElementTree.XMLParser(target=builder)
    try:
        parser.feed(text.encode("utf-8"))           # as load_urdf feeds it
        robot = parser.close()
    except ElementTree.ParseError as e:
        raise ValueError(f"source_urdf: malformed URDF: {e}") from None
    edit = _Editor(robot)
    links, joints = _named(robot, "link"), _named(robot, "joint")
    parent_joint, children = _tree(links, joints)
    body_of = _bodies(model, links, parent_joint, children)

    mass, com, inertia = model.mass, model.com, model.inertia_com
    for name, body in body_of.items():
        if body < 0:
            continue                                 # on the base: load_urdf ignores it, kept as it is
        if name == model.link_names[body]:
            _write_inertial(edit, links[name], mass[body], com[body], inertia[body])
        else:
            for element in links[name].findall("inertial"):
                edit.remove(links[name], element)
    for j, link in enumerate(model.link_names):
        if model.body_joint_names[j] in model.mimic:
            damping = friction = 0.0
        else:
            k = int(model.body_coordinate[j])
            damping, friction = float(model.damping[k]), float(model.friction[k])
        _write_dynamics(edit, parent_joint[link], damping, friction)

    if builder.declarations or "xml:" in text:     # else no name has a namespace
        _restore_prefixes(robot, builder.declarations)
    robot.tail = None
    out = ['<?xml version="1.0" encoding="utf-8"?>\n']
    close = " />" if 2 * text.count(" />") > text.count("/>") else "/>"     # the source's <tag/> style
    for node in [*builder.before, robot, *builder.after]:
        _serialize(node, out, close)
        out.append("\n")
    data = "".join(out).encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)


# -- reading -----------------------------------------------------------------------------------------
def _read_source(source):
    """The XML text of source_urdf (a path or XML string, load_urdf's rule); ValueError naming it."""
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError("source_urdf must be a URDF file path or an XML string, "
                         f"got {type(source).__name__}")
    text = os.fspath(source)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if text.lstrip().startswith("<"):
        return text
    try:
        with open(text, encoding="utf-8") as f:
            content = f.read()
    except (OSError, UnicodeError) as e:
        raise ValueError(f"source_urdf: cannot read the URDF file {text!r}: {e}") from None
    content = content.removeprefix("\ufeff")
    if not content.lstrip().startswith("<"):
        raise ValueError(f"source_urdf: {text!r} is not a URDF file (no XML in it)")
    return content


class _Builder(ElementTree.TreeBuilder):
    """xml.etree's tree builder keeping comments and processing instructions, also those before and
    after the root element (`before`, `after`), and each element's namespace declarations
    (`declarations`: {element: [(prefix, uri), ...]}), which xml.etree otherwise drops."""

    def __init__(self):
        super().__init__(insert_comments=True, insert_pis=True)
        self.depth, self.started = 0, False
        self.before, self.after = [], []
        self.declarations, self._pending = {}, []

    def start(self, tag, attrs):
        self.depth += 1
        self.started = True
        element = super().start(tag, attrs)
        if self._pending:
            self.declarations[element], self._pending = self._pending, []
        return element

    def end(self, tag):
        self.depth -= 1
        return super().end(tag)

    def start_ns(self, prefix, uri):
        self._pending.append((prefix, uri))

    def comment(self, text):
        if self.depth:
            return super().comment(text)
        (self.after if self.started else self.before).append(ElementTree.Comment(text))
        return None

    def pi(self, target, text=None):
        if self.depth:
            return super().pi(target, text)
        (self.after if self.started else self.before).append(ElementTree.ProcessingInstruction(target, text))
        return None


def _named(robot, tag):
    """{name: element} of <robot>'s <tag> children; ValueError for a name used twice (load_urdf's)."""
    named = {}
    for element in robot.findall(tag):
        name = element.get("name")
        if name in named:
            raise ValueError(f"source_urdf: malformed URDF: duplicate {tag} name {name!r}")
        named[name] = element
    return named


def _tree(links, joints):
    """({child link: its parent joint element}, {link: [child joint elements]})."""
    parent_joint, children = {}, {name: [] for name in links}
    for name, joint in joints.items():
        parent, child = joint.find("parent").get("link"), joint.find("child").get("link")
        for end in (parent, child):
            if end not in links:
                raise ValueError(f"source_urdf: joint {name!r} refers to unknown link {end!r}")
        if child in parent_joint:
            raise ValueError(f"source_urdf: link {child!r} has two parent joints")
        parent_joint[child] = joint
        children[parent].append(joint)
    return parent_joint, children


def _bodies(model, links, parent_joint, children):
    """{link below model.root_link (and the root): the model body it belongs to, -1 = the base}, as
    load_urdf groups them: a body's link starts a body, every other link joins its parent link's.
    ValueError naming source_urdf where the URDF's tree is not the model's."""
    root = model.root_link
    if root not in links:
        raise ValueError(f"source_urdf has no link {root!r}, the model's root_link: not the model's URDF")
    index = {name: j for j, name in enumerate(model.link_names)}
    for j, name in enumerate(model.link_names):
        if name not in links:
            raise ValueError(f"source_urdf has no link {name!r}, which joint {model.body_joint_names[j]!r} "
                             "of the model moves: not the model's URDF")
    body_of, stack = {root: -1}, [root]
    while stack:
        parent = stack.pop()
        for joint in children[parent]:
            child = joint.find("child").get("link")
            if child not in body_of:                  # (a cycle would have given a link two parents)
                body_of[child] = index.get(child, body_of[parent])
                stack.append(child)
    for j, name in enumerate(model.link_names):
        joint = parent_joint.get(name)
        what = f"link {name!r} (body {j} of the model, moved by joint {model.body_joint_names[j]!r})"
        if name not in body_of or joint is None:
            raise ValueError(f"source_urdf: {what} is not below the model's root_link {root!r} there: "
                             "not the model's URDF")
        kind, parent = joint.get("type"), joint.find("parent").get("link")
        if joint.get("name") != model.body_joint_names[j] or kind != model.body_joint_types[j]:
            raise ValueError(f"source_urdf: {what} hangs from {kind} joint {joint.get('name')!r} there: not "
                             "the model's URDF")
        if body_of[parent] != model.parent[j]:
            raise ValueError(f"source_urdf: {what} hangs from link {parent!r} there, which is not in the "
                             "model's parent body: not the model's URDF")
    return body_of


# -- editing -----------------------------------------------------------------------------------------
def _number(x):
    return repr(float(x) + 0.0)                      # shortest text that reads back exactly; no -0.0


class _Editor:
    """Inserts and removes elements keeping the document's indentation."""

    def __init__(self, root):
        self.parent = {child: parent for parent in root.iter() for child in parent}
        # positions among <robot>'s children (none is inserted or removed there): O(1) for long URDFs
        self.position = {child: i for i, child in enumerate(root)}
        self.root = root
        first = root.text or ""                    # the indentation step: that of <robot>'s children
        self.unit = (first.rsplit("\n", 1)[-1] if "\n" in first and not first.strip() else "") or "  "

    def _before(self, element):
        """The whitespace before `element` ("" when it is not whitespace: unformatted XML)."""
        parent = self.parent.get(element)
        if parent is None:
            return ""
        i = self.position[element] if parent is self.root else list(parent).index(element)
        space = (parent.text if i == 0 else parent[i - 1].tail) or ""
        return space if space.strip() == "" else ""

    def insert(self, parent, child, index=None):
        """Put `child` at parent[index] (default: last), indented as its siblings."""
        n = len(parent)
        index = n if index is None else index
        if n == 0:
            own = self._before(parent)
            inner = own + self.unit if "\n" in own else ""
            if inner and (parent.text or "").strip() == "":
                parent.text, child.tail = inner, own
        elif index >= n:
            last = parent[-1]
            separator = parent.text if (parent.text or "").strip() == "" else ""
            child.tail, last.tail = last.tail, separator or last.tail
        else:
            child.tail = parent.text if index == 0 else parent[index - 1].tail
        parent.insert(index, child)
        self.parent[child] = parent

    def remove(self, parent, child):
        """Remove `child`; the whitespace closing the parent stays."""
        i = list(parent).index(child)
        if i == len(parent) - 1:
            if i == 0:
                if (parent.text or "").strip() == "":
                    parent.text = None              # no children left: written as an empty element
            elif (parent[i - 1].tail or "").strip() == "":
                parent[i - 1].tail = child.tail
        parent.remove(child)
        del self.parent[child]


def _set(element, key, values, text=None):
    """element's attribute `key` := the numbers `values` (written as `text` if given), unless its text
    already reads as them."""
    old = element.get(key)
    try:
        same = old is not None and [float(v) for v in old.split()] == [float(v) for v in values]
    except ValueError:
        same = False
    if not same:
        element.set(key, text or " ".join(_number(v) for v in values))


def _write_inertial(edit, link, mass, com, inertia):
    """Set link's (first) <inertial> to mass, com and inertia (about the com, link axes); drop repeats."""
    inertials = link.findall("inertial")
    if not inertials and mass == 0 and not np.any(com) and not np.any(inertia):
        return                                       # nothing to add: no inertial reads as zero
    if inertials:
        inertial = inertials[0]
        for extra in inertials[1:]:
            edit.remove(link, extra)
    else:
        inertial = ElementTree.Element("inertial")
        edit.insert(link, inertial)
    I = 0.5 * (np.asarray(inertia, dtype=float) + np.asarray(inertia, dtype=float).T)
    values = (
        ("origin", {"xyz": com, "rpy": "0 0 0"}),
        ("mass", {"value": (mass,)}),
        ("inertia", {"ixx": (I[0, 0],), "ixy": (I[0, 1],), "ixz": (I[0, 2],), "iyy": (I[1, 1],),
                     "iyz": (I[1, 2],), "izz": (I[2, 2],)}),
    )
    for position, (tag, attributes) in enumerate(values):
        found = inertial.findall(tag)
        if found:
            element = found[0]
            for extra in found[1:]:
                edit.remove(inertial, extra)
        else:
            element = ElementTree.Element(tag)
            # after the ones before it in (origin, mass, inertia), if present; else first
            before = [inertial.find(t) for t, _ in values[:position]]
            before = [list(inertial).index(e) for e in before if e is not None]
            edit.insert(inertial, element, max(before) + 1 if before else 0)
        for key, numbers in attributes.items():
            if isinstance(numbers, str):
                _set(element, key, [float(v) for v in numbers.split()], numbers)
            else:
                _set(element, key, numbers)


def _write_dynamics(edit, joint, damping, friction):
    """Set damping and friction on joint's <dynamics> (created if absent); an equal value keeps its text."""
    elements = joint.findall("dynamics")
    if not elements:
        elements = [ElementTree.Element("dynamics")]
        edit.insert(joint, elements[0])
    for element in elements:
        _set(element, "damping", (damping,))
        _set(element, "friction", (friction,))


def _restore_prefixes(root, declarations):
    """Write namespaced names back with the document's prefixes and put its namespace declarations
    back where they were (xml.etree would write ns0:-style prefixes and drop unused declarations)."""

    def qualified(name, scope, attribute):
        if not isinstance(name, str) or not name.startswith("{"):
            return name
        uri, local = name[1:].split("}", 1)
        if not attribute and scope.get("") == uri:
            return local
        for prefix, bound in reversed(scope.items()):
            if prefix and bound == uri:
                return f"{prefix}:{local}"
        return f"xml:{local}" if uri == _XML_NAMESPACE else name

    stack = [(root, {})]
    while stack:
        element, scope = stack.pop()
        if not isinstance(element.tag, str):         # comments and processing instructions
            continue
        declared = declarations.get(element, ())
        if declared:
            scope = {**scope, **dict(declared)}
        attributes = {qualified(key, scope, True): value for key, value in element.attrib.items()}
        attributes.update((("xmlns:" + prefix if prefix else "xmlns"), uri) for prefix, uri in declared)
        element.tag = qualified(element.tag, scope, False)
        element.attrib.clear()
        element.attrib.update(attributes)
        stack.extend((child, scope) for child in element)


# -- writing -----------------------------------------------------------------------------------------
_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTRIBUTE_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;",
                                    "\r": "&#13;", "\t": "&#09;"})


def _serialize(element, out, close):
    """Append the XML of `element` and its tail to the list `out`: xml.etree's serialisation, but
    names as they are (prefixes restored) and empty elements closed by `close` ("/>" or " />")."""
    tag = element.tag
    if tag is ElementTree.Comment:
        out.append(f"<!--{element.text}-->")
    elif tag is ElementTree.ProcessingInstruction:
        out.append(f"<?{element.text}?>")
    else:
        attributes = "".join(f' {key}="{str(value).translate(_ATTRIBUTE_ESCAPES)}"'
                             for key, value in element.attrib.items())
        if len(element) or element.text:
            out.append(f"<{tag}{attributes}>")
            if element.text:
                out.append(element.text.translate(_TEXT_ESCAPES))
            for child in element:
                _serialize(child, out, close)
            out.append(f"</{tag}>")
        else:
            out.append(f"<{tag}{attributes}{close}")
    if element.tail:
        out.append(element.tail.translate(_TEXT_ESCAPES))
