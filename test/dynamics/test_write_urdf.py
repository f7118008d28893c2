"""write_urdf: a model's inertias and friction written into its source URDF read back (load_urdf with the
same selection arguments) as the same model, and nothing else of the URDF changes.

Each model is perturbed first (masses, centres of mass, rotated and scaled inertias, damping and
friction per joint), so that a writer that left the source's numbers in place would fail."""
import os
import sysconfig
from xml.etree import ElementTree

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import resources
from robot_dynamics_ros.dynamics.urdf_writer import write_urdf

from _random_trees import chain_to, random_rotation, random_state, random_tree
from _residuals import assert_close

UR5E = str(resources.default_urdf())
ROBOTS_DIR = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                          "robots")
PANDA = os.path.join(ROBOTS_DIR, "panda_description", "urdf", "panda.urdf")
needs_panda = pytest.mark.skipif(not os.path.isfile(PANDA), reason="example-robot-data is not installed")

SAME = 1e-12            # model arrays after the round trip, relative to each array's largest entry
DYNAMICS = 1e-10        # inverse dynamics with friction, relative

NAMES = ("joint_names", "body_joint_names", "joint_types", "body_joint_types", "link_names", "frame_names",
         "root_link", "tip_frame")
INTEGERS = ("parent", "frame_body", "body_coordinate")
ARRAYS = ("mass", "com", "inertia_com", "damping", "friction", "T_tree", "axis", "frame_placement", "lower",
          "upper", "velocity_limit", "effort_limit", "gravity", "body_multiplier", "body_offset")


def perturbed(model, rng):
    """The model with every body's inertia changed consistently (mass x U(0.7, 1.3), centre of mass
    moved by up to 3 cm, inertia rotated and scaled: still positive definite) and new damping and
    friction on every body joint (mimicking ones included)."""
    n = model.n_bodies
    R = np.array([random_rotation(rng) for _ in range(n)]).reshape(n, 3, 3)
    inertia = rng.uniform(0.7, 1.3, n)[:, None, None] * (R @ model.inertia_com @ R.transpose(0, 2, 1))
    return model.replace(mass=model.mass * rng.uniform(0.7, 1.3, n),
                         com=model.com + rng.uniform(-0.03, 0.03, (n, 3)),
                         inertia_com=0.5 * (inertia + inertia.transpose(0, 2, 1)),
                         damping=rng.uniform(0.05, 2.0, n), friction=rng.uniform(0.05, 3.0, n))


def assert_same_model(back, model):
    for name in NAMES:
        assert getattr(back, name) == getattr(model, name), name
    assert dict(back.mimic) == dict(model.mimic)
    for name in INTEGERS:
        np.testing.assert_array_equal(getattr(back, name), getattr(model, name), err_msg=name)
    for name in ARRAYS:
        ours, theirs = getattr(back, name), getattr(model, name)
        finite = np.abs(theirs[np.isfinite(theirs)])
        scale = float(finite.max()) if finite.size else 0.0
        np.testing.assert_allclose(ours, theirs, rtol=SAME, atol=SAME * scale, err_msg=name)


def assert_same_dynamics(back, model, rng, states=3):
    for _ in range(states):
        q, qd, qdd = random_state(model, rng)
        assert_close("write_urdf: inverse dynamics with friction after the round trip",
                     rd.inverse_dynamics(back, q, qd, qdd, friction=True),
                     rd.inverse_dynamics(model, q, qd, qdd, friction=True), DYNAMICS)


def round_trip(source, rng, tmp_path, **selection):
    """(perturbed model, model read back from the written file, written path)."""
    model = perturbed(rd.load_urdf(source, **selection), rng)
    path = tmp_path / "written.urdf"
    write_urdf(model, source, path)
    back = rd.load_urdf(path, **selection)
    assert_same_model(back, model)
    assert_same_dynamics(back, model, rng)
    return model, back, path


# -- comparing documents ------------------------------------------------------------------------------
def parse(source):
    """<robot> of a URDF path or XML string, comments kept."""
    parser = ElementTree.XMLParser(target=ElementTree.TreeBuilder(insert_comments=True))
    if source.lstrip().startswith("<"):
        parser.feed(source)
        return parser.close()
    return ElementTree.parse(source, parser).getroot()


def without_edits(robot):
    """`robot` with what write_urdf may change taken out: every <inertial>, and damping and friction
    of every <dynamics> (an element left without attributes removed)."""
    for link in robot.findall("link"):
        for inertial in link.findall("inertial"):
            link.remove(inertial)
    for joint in robot.findall("joint"):
        for dynamics in joint.findall("dynamics"):
            dynamics.attrib.pop("damping", None)
            dynamics.attrib.pop("friction", None)
            if not dynamics.attrib:
                joint.remove(dynamics)
    return robot


def assert_same_elements(ours, theirs, where="robot"):
    """Same tags, attributes, text (up to surrounding whitespace) and children, recursively; comments too."""
    assert ours.tag == theirs.tag, where
    assert ours.attrib == theirs.attrib, where
    assert (ours.text or "").strip() == (theirs.text or "").strip(), where
    assert len(ours) == len(theirs), f"{where}: {[c.tag for c in ours]} != {[c.tag for c in theirs]}"
    for k, (a, b) in enumerate(zip(ours, theirs)):
        label = a.get("name") if isinstance(a.tag, str) else None
        assert_same_elements(a, b, f"{where}/{a.tag if isinstance(a.tag, str) else 'comment'}"
                                   f"[{label or k}]")


def canonical(element):
    return ElementTree.canonicalize(ElementTree.tostring(element, encoding="unicode"), strip_text=True)


def assert_rest_kept(path, source):
    """Everything but the inertials and friction is the source's; so are the visuals, collisions and
    limits in canonical form."""
    written, original = parse(str(path)), parse(source)
    for tag in ("visual", "collision", "limit", "mimic", "axis", "origin"):
        for owner in ("link", "joint"):
            ours = [canonical(e) for o in written.findall(owner) for e in o.findall(tag)]
            theirs = [canonical(e) for o in original.findall(owner) for e in o.findall(tag)]
            assert ours == theirs, f"<{owner}>/<{tag}>"
    assert_same_elements(without_edits(written), without_edits(original))


def inertial_links(source):
    return {link.get("name") for link in parse(source).findall("link") if link.find("inertial") is not None}


# -- the shipped UR5e ---------------------------------------------------------------------------------
@pytest.mark.parametrize("as_text", [False, True], ids=["path", "xml-string"])
def test_ur5e_round_trip(tmp_path, as_text):
    rng = np.random.default_rng(1)
    with open(UR5E, encoding="utf-8") as f:
        text = f.read()
    model, _, path = round_trip(text if as_text else UR5E, rng, tmp_path)
    original = rd.load_urdf(UR5E)
    assert np.all(np.abs(model.mass - original.mass) > 1e-6)            # the perturbation did change it
    assert_rest_kept(path, UR5E)
    with open(path, encoding="utf-8") as f:
        written = f.read()
    assert written.startswith('<?xml version="1.0" encoding="utf-8"?>\n<!--\n  ur5e: a 6-joint arm')
    # what the file says, read directly: the model's numbers in the link frame, about the centre of mass
    robot = parse(str(path))
    for j, name in enumerate(model.link_names):
        inertial = robot.find(f"link[@name='{name}']/inertial")
        assert inertial.find("origin").get("rpy") == "0 0 0"
        assert [float(v) for v in inertial.find("origin").get("xyz").split()] == model.com[j].tolist()
        assert float(inertial.find("mass").get("value")) == model.mass[j]
        I = {key: float(value) for key, value in inertial.find("inertia").attrib.items()}
        assert [I["ixx"], I["iyy"], I["izz"], I["ixy"], I["ixz"], I["iyz"]] == \
            model.inertia_com[j][[0, 1, 2, 0, 0, 1], [0, 1, 2, 1, 2, 2]].tolist()
        dynamics = robot.find(f"joint[@name='{model.joint_names[j]}']/dynamics")
        assert (float(dynamics.get("damping")), float(dynamics.get("friction"))) == \
            (model.damping[j], model.friction[j])
    assert robot.find("link[@name='base_link']/inertial") is None     # the base: nothing added


def test_writing_over_the_source_file(tmp_path):
    path = tmp_path / "ur5e.urdf"
    path.write_bytes(open(UR5E, "rb").read())
    model = perturbed(rd.load_urdf(path), np.random.default_rng(2))
    write_urdf(model, path, path)
    assert_same_model(rd.load_urdf(path), model)


# -- example-robot-data's Panda: fixed links merged, mimic fingers, chain selections ---------------------
FINGERS = ("panda_leftfinger", "panda_rightfinger")
HAND = ("panda_link8", "panda_hand", "panda_hand_tcp")         # behind fixed joints of link 7
PANDA_CASES = {
    # selection: links whose <inertial> goes (merged into a body), links whose XML must not change
    "full-tree-mimic": ({}, HAND, ("panda_link0",)),
    "full-tree-no-mimic": ({"mimic": False}, HAND, ("panda_link0",)),
    "tip-link8": ({"tip_link": "panda_link8"}, HAND + FINGERS, ("panda_link0",)),
    "fingers-locked": ({"locked_joints": {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}},
                       HAND + FINGERS, ("panda_link0",)),
    "joint4-and-fingers-locked-off-zero": (
        {"locked_joints": {"panda_joint4": -1.2, "panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}},
        HAND + FINGERS + ("panda_link4",), ("panda_link0",)),
    "root-link2-tip-hand": ({"root_link": "panda_link2", "tip_link": "panda_hand"}, HAND + FINGERS,
                            ("panda_link0", "panda_link1", "panda_link2")),
}


@needs_panda
@pytest.mark.parametrize("case", list(PANDA_CASES))
def test_panda_round_trip(tmp_path, case):
    selection, merged, untouched = PANDA_CASES[case]
    model, back, path = round_trip(PANDA, np.random.default_rng(3), tmp_path, **selection)
    assert_rest_kept(path, PANDA)
    # merged links lose their inertial (the body's lumped one holds them); the others keep one
    assert inertial_links(PANDA) - inertial_links(str(path)) == set(merged)
    assert not inertial_links(str(path)) - inertial_links(PANDA)
    written, original = parse(str(path)), parse(PANDA)
    for name in untouched:
        ours, theirs = written.find(f"link[@name='{name}']"), original.find(f"link[@name='{name}']")
        assert canonical(ours) == canonical(theirs), name
    # joints the model does not move keep their <dynamics> as they are
    for joint in original.findall("joint"):
        if joint.get("name") not in model.body_joint_names:
            assert [canonical(d) for d in written.find(f"joint[@name='{joint.get('name')}']")
                    .findall("dynamics")] == [canonical(d) for d in joint.findall("dynamics")]
    # the xacro namespace declaration and the comments before <robot> are kept
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert 'xmlns:xacro="http://www.ros.org/wiki/xacro"' in text
    assert text.index("autogenerated by xacro") < text.index("<robot ")


@needs_panda
def test_panda_mimic_friction_goes_on_the_independent_joint(tmp_path):
    """finger_joint2 mimics finger_joint1: the coordinate's friction (its own plus the folded m² F_v and
    |m| F_s of finger_joint2) is written on finger_joint1, 0 on finger_joint2."""
    model, back, path = round_trip(PANDA, np.random.default_rng(4), tmp_path)
    assert dict(model.mimic) == {"panda_finger_joint2": ("panda_finger_joint1", 1.0, 0.0)}
    robot = parse(str(path))
    k = model.joint_names.index("panda_finger_joint1")
    one = robot.find("joint[@name='panda_finger_joint1']/dynamics")
    two = robot.find("joint[@name='panda_finger_joint2']/dynamics")
    assert (float(one.get("damping")), float(one.get("friction"))) == (model.damping[k], model.friction[k])
    assert (float(two.get("damping")), float(two.get("friction"))) == (0.0, 0.0)
    assert robot.find("joint[@name='panda_finger_joint2']/mimic").get("joint") == "panda_finger_joint1"
    # the Panda's other <dynamics> attributes stay
    assert robot.find("joint[@name='panda_joint1']/dynamics").get("mu_viscous") == "16"


# -- random trees: rotated inertial frames, massive fixed links, massless frames, prismatic joints ---------
TREES = [(201, 5), (202, 8), (203, 11)]


@pytest.mark.parametrize("seed,n", TREES, ids=[f"seed{s}-n{n}" for s, n in TREES])
@pytest.mark.parametrize("selection", ["full", "tip", "root-and-tip", "locked"])
def test_random_tree_round_trip(tmp_path, seed, n, selection):
    tree = random_tree(seed, n)
    text = tree.to_urdf()
    full = rd.load_urdf(text)
    rng = np.random.default_rng(seed)
    tip = max(reversed(full.link_names), key=lambda name: len(chain_to(tree, name)))
    chain = chain_to(tree, tip)
    arguments = {
        "full": {},
        "tip": {"tip_link": tip},
        "root-and-tip": {"root_link": tree.joint(chain[1]).parent if len(chain) > 1 else "base_link",
                         "tip_link": tip},
        "locked": {"locked_joints": {name: float(rng.uniform(-0.2, 0.2)) for name in full.joint_names[::3]}},
    }[selection]
    _, _, path = round_trip(text, rng, tmp_path, **arguments)
    assert_rest_kept(path, text)


# -- everything else kept: a URDF with every kind of element ------------------------------------------------
SAMPLE = """<?xml version="1.0"?>
<!-- before the robot -->
<robot name="sample" xmlns:xacro="http://www.ros.org/wiki/xacro" xmlns:sim="urn:example:sim">
  <!-- every kind of element -->
  <material name="grey"><color rgba="0.5 0.5 0.5 1"/></material>
  <link name="world"/>
  <joint name="world_joint" type="fixed">
    <parent link="world"/><child link="base_link"/>
  </joint>
  <link name="base_link">
    <inertial><mass value="5"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
  </link>
  <joint name="j1" type="revolute">
    <parent link="base_link"/><child link="link1"/>
    <origin xyz="0 0 0.1" rpy="0.1 0.2 0.3"/>
    <axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="50" velocity="3"/>
    <safety_controller k_velocity="10" k_position="15" soft_lower_limit="-1.9" soft_upper_limit="1.9"/>
  </joint>
  <link name="link1">
    <!-- no inertial of its own: its mass comes from the fixed link below -->
    <visual><origin xyz="0 0 0.1" rpy="0 0 0"/><geometry><box size="0.1 0.1 0.1"/></geometry>
      <material name="grey"/></visual>
    <collision><geometry><cylinder radius="0.05" length="0.2"/></geometry></collision>
  </link>
  <joint name="j1_fixed" type="fixed">
    <parent link="link1"/><child link="link1_mass"/>
    <origin xyz="0.2 0 0" rpy="0 0.5 0"/>
  </joint>
  <link name="link1_mass">
    <inertial><origin xyz="0.01 0.02 0.03" rpy="0.3 0.2 0.1"/><mass value="2"/>
      <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>
  </link>
  <joint name="j2" type="prismatic">
    <parent link="link1"/><child link="link2"/>
    <axis xyz="1 0 0"/>
    <limit lower="-0.1" upper="0.1" effort="100" velocity="0.5"/>
    <dynamics damping="0.5" friction="1" sim:stiffness="7"/>
  </joint>
  <link name="link2">
    <inertial><origin xyz="0 0 0.05" rpy="0 0 0"/><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <joint name="j3" type="prismatic">
    <parent link="link1"/><child link="link3"/>
    <axis xyz="-1 0 0"/>
    <limit lower="-0.2" upper="0.2" effort="100" velocity="1"/>
    <mimic joint="j2" multiplier="-2" offset="0.01"/>
    <dynamics damping="0.25" friction="0.125"/>
  </joint>
  <link name="link3">
    <inertial><origin xyz="0 0 0.05" rpy="0 0 0"/><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <transmission name="t1">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="j1"><hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>
    <actuator name="m1"><mechanicalReduction>100</mechanicalReduction></actuator>
  </transmission>
  <gazebo reference="link1"><material>Gazebo/Grey</material><sim:extra value="a &amp; b"/></gazebo>
  <ros2_control name="sample_system" type="system">
    <hardware><plugin>mock_components/GenericSystem</plugin></hardware>
    <joint name="j1"><command_interface name="effort"/><state_interface name="position"/></joint>
  </ros2_control>
</robot>
<!-- after the robot -->
"""


def test_every_other_element_is_kept(tmp_path):
    """<ros2_control>, <transmission>, <gazebo>, materials, <safety_controller>, <mimic>, comments,
    namespaced names and declarations come out as they went in; the mimic pair and a body whose mass
    is all on a fixed child link round-trip."""
    model, _, path = round_trip(SAMPLE, np.random.default_rng(5), tmp_path)
    assert dict(model.mimic) == {"j3": ("j2", -2.0, 0.01)}
    assert_rest_kept(path, SAMPLE)
    written, original = parse(str(path)), parse(SAMPLE)
    for tag in ("transmission", "gazebo", "ros2_control", "material"):
        assert [canonical(e) for e in written.findall(tag)] == [canonical(e) for e in original.findall(tag)]
    # link1 (no inertial of its own) holds the body's inertia; link1_mass's went into it
    assert written.find("link[@name='link1']/inertial") is not None
    assert written.find("link[@name='link1_mass']/inertial") is None
    # the fixed base keeps its inertial as it was
    base = "link[@name='base_link']"
    assert canonical(written.find(base)) == canonical(original.find(base))
    dynamics = written.find("joint[@name='j2']/dynamics")
    assert dynamics.get("{urn:example:sim}stiffness") == "7"
    assert float(dynamics.get("damping")) == model.damping[model.joint_names.index("j2")]
    # j1 had no <dynamics>: created
    assert float(written.find("joint[@name='j1']/dynamics").get("friction")) == model.friction[0]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert text.index("<!-- before the robot -->") < text.index("<robot ")
    assert text.rstrip().endswith("</robot>\n<!-- after the robot -->")
    assert 'xmlns:xacro="http://www.ros.org/wiki/xacro"' in text and 'xmlns:sim="urn:example:sim"' in text
    assert '<sim:extra value="a &amp; b"/>' in text and 'sim:stiffness="7"' in text


# -- bad input -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ur5e():
    return rd.load_urdf(UR5E)


def ur5e_text():
    with open(UR5E, encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("source,match", [
    ("<robot name='x'><link name='a'>", "source_urdf: malformed URDF"),
    ("<?xml version='1.0'?><notarobot/>", "source_urdf: malformed URDF"),
    ("no/such/file.urdf", "source_urdf: cannot read"),
    (42, "source_urdf must be"),
], ids=["truncated", "not-robot", "missing-file", "not-a-path"])
def test_source_that_is_not_a_urdf(tmp_path, ur5e, source, match):
    with pytest.raises(ValueError, match=match):
        write_urdf(ur5e, source, tmp_path / "out.urdf")
    assert not (tmp_path / "out.urdf").exists()


def test_source_file_that_is_not_xml(tmp_path, ur5e):
    bad = tmp_path / "bad.urdf"
    bad.write_text("this is not XML\n")
    with pytest.raises(ValueError, match="source_urdf: .* is not a URDF file"):
        write_urdf(ur5e, bad, tmp_path / "out.urdf")


@pytest.mark.parametrize("edit,match", [
    (("wrist_3_link", "wrist_3_renamed"), "source_urdf has no link 'wrist_3_link'"),
    (('name="elbow_joint"', 'name="elbow"'), "source_urdf: link 'forearm_link'.*joint 'elbow'"),
    (('name="ur5e"', 'name="ur5e"'), None),
], ids=["link-missing", "joint-renamed", "unchanged"])
def test_source_that_is_not_the_models_urdf(tmp_path, ur5e, edit, match):
    text = ur5e_text().replace(*edit)
    if match is None:
        write_urdf(ur5e, text, tmp_path / "out.urdf")
        return
    with pytest.raises(ValueError, match=match):
        write_urdf(ur5e, text, tmp_path / "out.urdf")


@needs_panda
def test_another_robots_urdf_is_refused(tmp_path, ur5e):
    with pytest.raises(ValueError, match="source_urdf"):
        write_urdf(ur5e, PANDA, tmp_path / "out.urdf")


def test_bad_model_and_path(tmp_path, ur5e):
    with pytest.raises(ValueError, match="model must be a Model"):
        write_urdf("ur5e", UR5E, tmp_path / "out.urdf")
    with pytest.raises(ValueError, match="path must be a file path"):
        write_urdf(ur5e, UR5E, None)
    with pytest.raises(OSError):
        write_urdf(ur5e, UR5E, tmp_path / "no_such_directory" / "out.urdf")
