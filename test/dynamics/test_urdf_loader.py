"""load_urdf: fixed-joint merging, chain selection, locked joints, frames, limits, order, immutability.

Each reduction is compared with the URDF a person would write for the same robot (the hand edits in
_random_trees: merged inertials, fixed joints, a rotated fixed origin). Both sides are exact
computations of the same rigid bodies: relative residual ≤ EXACT."""
import glob
import os
import sysconfig

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.urdf import parse as urdf_parse

from _random_trees import (
    MOVING,
    chain_to,
    combine_inertials,
    fix_joints,
    index_map,
    lock_by_hand,
    merge_fixed_by_hand,
    random_state,
    random_tree,
    rpy_matrix,
    subtree,
)
from _residuals import EXACT, FD, assert_close


def assert_same_dynamics(name, a, b, rng, frames=(), states=3):
    """Model a and b describe the same robot (joints matched by name): M, ID and FD with a tip wrench
    at a's tip frame, and the poses of `frames` agree at random states."""
    idx = index_map(a, b)
    assert sorted(a.joint_names) == sorted(b.joint_names)
    for _ in range(states):
        q, qd, qdd = random_state(a, rng)
        F = rng.normal(size=6)
        kw = dict(f_tip=F, frame=a.tip_frame)
        assert_close(f"{name}: M", rd.mass_matrix(b, q[idx]), rd.mass_matrix(a, q)[np.ix_(idx, idx)], EXACT)
        assert_close(f"{name}: ID", rd.inverse_dynamics(b, q[idx], qd[idx], qdd[idx], **kw),
                     rd.inverse_dynamics(a, q, qd, qdd, **kw)[idx], EXACT)
        assert_close(f"{name}: FD", rd.forward_dynamics(b, q[idx], qd[idx], qdd[idx], **kw),
                     rd.forward_dynamics(a, q, qd, qdd, **kw)[idx], EXACT)
        for f in frames:
            assert_close(f"{name}: frame poses", rd.frame_pose(b, q[idx], f), rd.frame_pose(a, q, f), EXACT,
                         floor=1.0)


def test_fixed_joints_are_merged_as_by_hand(case):
    """Every fixed joint merged by hand (inertials moved with I' = R I Rᵀ and the parallel-axis
    theorem, child joints re-attached with T_fixed T_origin) gives the same dynamics."""
    tree, model, rng = case
    hand = rd.load_urdf(merge_fixed_by_hand(tree).to_urdf())
    assert hand.nq == model.nq
    assert_same_dynamics("fixed-joint merge", model, hand, rng, frames=model.link_names)
    # and the merged parameters of every body agree
    idx = index_map(model, hand)
    assert_close("merged mass", hand.mass, model.mass[idx], EXACT)
    assert_close("merged CoM", hand.com, model.com[idx], EXACT, floor=0.1)
    assert_close("merged inertia about CoM", hand.inertia_com, model.inertia_com[idx], EXACT)


def test_merged_inertia_of_one_fixed_child_by_the_formula():
    """One revolute link carrying a fixed child with rotated inertia axes: the body's mass, centre of
    mass and inertia are m1 + m2, the weighted mean, and Σ(R I Rᵀ + m(|d|²1 − d dᵀ))."""
    tree = random_tree(7, 1, p_fixed=1.0, p_frame=0.0)
    assert [j.type for j in tree.joints] == [tree.joints[0].type, "fixed", "fixed"]
    model = rd.load_urdf(tree.to_urdf())
    link, fixed_joint = tree.link("link1"), tree.joint("joint1_fixed")
    child = tree.link(fixed_joint.child)
    T = fixed_joint.origin()
    m2, c2, I2 = child.inertial.in_link_frame()
    expected = combine_inertials([link.inertial.in_link_frame(),
                                  (m2, T[:3, :3] @ c2 + T[:3, 3], T[:3, :3] @ I2 @ T[:3, :3].T)])
    assert_close("one merge: mass", model.mass[0], expected.mass, EXACT)
    assert_close("one merge: CoM", model.com[0], expected.xyz, EXACT)
    assert_close("one merge: inertia", model.inertia_com[0], expected.inertia, EXACT)
    # the inertial's own rpy matters: I in link axes is R I Rᵀ, not I
    R = rpy_matrix(link.inertial.rpy)
    assert not np.allclose(R @ link.inertial.inertia @ R.T, link.inertial.inertia)


def _deep_tip(tree, model):
    """The moving link with the longest path from the root (ties: the last)."""
    depth = {name: len(chain_to(tree, name)) for name in model.link_names}
    return max(reversed(model.link_names), key=depth.get)


def test_chain_selection_locks_the_other_joints(case):
    """tip_link selects root→tip; the other joints are locked at 0 with their links lumped: the same
    dynamics as the URDF with those joints made fixed."""
    tree, model, rng = case
    tip = _deep_tip(tree, model)
    chain = chain_to(tree, tip)
    reduced = rd.load_urdf(tree.to_urdf(), tip_link=tip)
    assert list(reduced.joint_names) == [j for j in chain if tree.joint(j).type in MOVING]
    assert reduced.is_chain and reduced.tip_frame == tip
    off_chain = [j.name for j in tree.moving_joints() if j.name not in chain]
    hand = rd.load_urdf(fix_joints(tree, off_chain).to_urdf())
    assert_same_dynamics("chain selection", reduced, hand, rng, frames=tuple(l.name for l in tree.links))


def test_root_link_selects_a_subtree(case):
    """root_link r (with tip_link): the same as the URDF of the subtree below r, with the off-chain
    joints fixed; links outside the subtree stay addressable, fixed to the base."""
    tree, model, rng = case
    tip = _deep_tip(tree, model)
    chain = chain_to(tree, tip)
    if len(chain) < 2:
        pytest.skip("the deepest link hangs from the root")
    root = tree.joint(chain[1]).parent          # below the first joint
    reduced = rd.load_urdf(tree.to_urdf(), root_link=root, tip_link=tip)
    assert reduced.root_link == root
    below = subtree(fix_joints(tree, [j.name for j in tree.moving_joints() if j.name not in chain]), root)
    hand = rd.load_urdf(below.to_urdf())
    assert_same_dynamics("root_link subtree", reduced, hand, rng, frames=tuple(l.name for l in below.links))
    # every URDF link is a frame; in the root_link frame, pose = T_0r⁻¹ T_0L of the full model with the
    # joints above r at 0
    assert set(reduced.frame_names) == {l.name for l in tree.links}
    full = rd.load_urdf(tree.to_urdf())
    q = random_state(reduced, rng)[0]
    q_full = np.zeros(full.nq)
    q_full[[full.joint_index(j) for j in reduced.joint_names]] = q
    T_r_inv = np.linalg.inv(rd.frame_pose(full, q_full, root))
    for link in tree.links:
        assert_close("root_link: frame poses of every link", rd.frame_pose(reduced, q, link.name),
                     T_r_inv @ rd.frame_pose(full, q_full, link.name), EXACT, floor=1.0)


def test_locked_joints_at_nonzero_positions(case):
    """locked_joints {name: value}: the same as the URDF with that joint replaced by a fixed joint
    whose origin includes the joint's motion at `value`; and the same poses as the full model there."""
    tree, model, rng = case
    if model.nq < 2:
        pytest.skip("needs a joint left to move")
    names = list(rng.choice(model.joint_names, size=min(3, model.nq - 1), replace=False))
    values = {n: float(rng.uniform(-1.0, 1.0)) * (0.3 if tree.joint(n).type == "prismatic" else 1.0)
              for n in names}
    locked = rd.load_urdf(tree.to_urdf(), locked_joints=values)
    assert not set(names) & set(locked.joint_names) and locked.nq == model.nq - len(names)
    hand = rd.load_urdf(lock_by_hand(tree, values).to_urdf())
    assert_same_dynamics("locked joints", locked, hand, rng, frames=tuple(l.name for l in tree.links))
    q = random_state(locked, rng)[0]
    q_full = np.zeros(model.nq)
    q_full[[model.joint_index(j) for j in locked.joint_names]] = q
    for n, v in values.items():
        q_full[model.joint_index(n)] = v
    for link in tree.links:
        assert_close("locked joints: frame poses = full model", rd.frame_pose(locked, q, link.name),
                     rd.frame_pose(model, q_full, link.name), EXACT, floor=1.0)


def test_every_link_is_a_frame(case):
    tree, model, rng = case
    assert set(model.frame_names) == {l.name for l in tree.links}
    assert all(model.has_frame(l.name) for l in tree.links) and not model.has_frame("no_such_link")
    assert model.root_link == "base_link" and model.tip_frame == model.link_names[-1]
    q = random_state(model, rng)[0]
    np.testing.assert_array_equal(rd.frame_pose(model, q, "base_link"), np.eye(4))
    for j in tree.joints:
        if j.type == "fixed":       # tool0 and the other fixed links: parent pose · origin
            assert_close("fixed frame pose = parent pose * origin", rd.frame_pose(model, q, j.child),
                         rd.frame_pose(model, q, j.parent) @ j.origin(), EXACT, floor=1.0)
    np.testing.assert_array_equal(rd.frame_pose(model, q), rd.frame_pose(model, q, model.tip_frame))


def test_limits_types_order_and_parents(case):
    tree, model, _ = case
    assert list(model.joint_names) == tree.dfs_joint_order()      # depth first, children in file order
    assert model.link_names == tuple(tree.joint(j).child for j in model.joint_names)
    for i, name in enumerate(model.joint_names):
        j = tree.joint(name)
        assert model.joint_types[i] == j.type
        np.testing.assert_allclose(model.axis[i], j.axis / np.linalg.norm(j.axis), rtol=0, atol=1e-15)
        if j.type == "continuous":
            assert model.lower[i] == -np.inf and model.upper[i] == np.inf
        else:
            assert (model.lower[i], model.upper[i]) == (j.lower, j.upper)
        assert (model.effort_limit[i], model.velocity_limit[i]) == (j.effort, j.velocity)
        assert (model.damping[i], model.friction[i]) == (j.damping, j.friction)
        # parent[i] is the body the joint's parent link is merged into
        link, parent_body = j.parent, -1
        while (pj := tree.parent_joint(link)) is not None:
            if pj.type in MOVING:
                parent_body = model.joint_index(pj.name)
                break
            link = pj.parent
        assert model.parent[i] == parent_body
        assert model.joint_index(name) == i
    assert np.all(model.parent < np.arange(model.nq))


def test_model_is_immutable(model):
    with pytest.raises(AttributeError):
        model.nq = 3
    with pytest.raises(AttributeError):
        model.gravity = np.zeros(3)
    with pytest.raises(AttributeError):
        model.new_attribute = 1
    for name in ("mass", "com", "inertia_com", "T_tree", "axis", "gravity", "lower", "upper", "damping",
                 "friction", "velocity_limit", "effort_limit", "parent"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(model, name)[...] = 0
    q = np.zeros(model.nq)
    g = rd.gravity_torques(model, q)
    moon = model.replace(gravity=(0.0, 0.0, -1.62))
    assert_close("replace(gravity) scales g", rd.gravity_torques(moon, q), g * (1.62 / 9.81), EXACT,
                 floor=1.0)
    np.testing.assert_array_equal(rd.gravity_torques(model, q), g)
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -9.81])


def test_gravity_argument_is_in_the_root_frame(case):
    tree, model, rng = case
    g = rng.normal(size=3)
    turned = rd.load_urdf(tree.to_urdf(), gravity=g)
    np.testing.assert_array_equal(turned.gravity, g)
    q = random_state(model, rng)[0]
    # g(q) is linear in the gravity vector: g = Σ_k g_k · g(q; e_k)
    parts = [rd.gravity_torques(rd.load_urdf(tree.to_urdf(), gravity=e), q) for e in np.eye(3)]
    assert_close("gravity torques linear in gravity", rd.gravity_torques(turned, q),
                 sum(gk * p for gk, p in zip(g, parts)), EXACT, floor=np.abs(parts).max())
    # ... which any fixed rotation or dropped component of the vector would keep: that it is the
    # root frame's vector needs g(q) = ∂P/∂q with P = −Σ m_i gᵀ p_ci, the centres of mass placed in
    # the root frame here from frame_pose (central differences, h = 1e-6)
    def potential(x):
        P = 0.0
        for i, link in enumerate(turned.link_names):
            placement = turned.frame_placement[turned.frame_index(link)]        # link frame in body {i}
            T = rd.frame_pose(turned, x, link) @ np.linalg.inv(placement)
            P -= turned.mass[i] * g @ (T[:3, :3] @ turned.com[i] + T[:3, 3])
        return P
    h = 1e-6
    grad = [(potential(q + h * e) - potential(q - h * e)) / (2 * h) for e in np.eye(model.nq)]
    assert_close("gravity torques = dP/dq, gravity in the root frame (FD)", rd.gravity_torques(turned, q),
                 grad, FD, floor=np.sum(turned.mass) * np.linalg.norm(g) * 0.3)


def test_load_from_file_equals_load_from_string(tmp_path, case):
    tree, model, rng = case
    path = tmp_path / "robot.urdf"
    path.write_text(tree.to_urdf())
    from_file = rd.load_urdf(str(path))
    assert from_file.joint_names == model.joint_names and from_file.frame_names == model.frame_names
    q = random_state(model, rng)[0]
    np.testing.assert_array_equal(rd.mass_matrix(from_file, q), rd.mass_matrix(model, q))


# -- the XML reader: what urdf_parser_py (ROS 2's URDF reader) reads, refused where it refuses ----------
ROBOTS_DIR = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                          "robots")
REAL_URDFS = sorted(glob.glob(os.path.join(ROBOTS_DIR, "**", "*.urdf"), recursive=True))
INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _read_by_urdf_parser_py(text):
    """urdf_parser_py's URDF of `text`, or the exception it raised (its printed warnings silenced)."""
    urdf_parser = pytest.importorskip("urdf_parser_py.urdf")
    from urdf_parser_py.xml_reflection import core

    previous, core.on_error = core.on_error, lambda message: None
    try:
        return urdf_parser.URDF.from_xml_string(text.encode("utf-8"))
    except Exception as e:
        return e
    finally:
        core.on_error = previous


def _same_pose(ours, theirs):
    assert (ours is None) == (theirs is None)
    if ours is not None:
        assert (ours["xyz"], ours["rpy"]) == (list(theirs.xyz), list(theirs.rpy))


def assert_read_as_urdf_parser_py_reads(text):
    """Both refuse `text` (ours: ValueError 'malformed URDF: ...'), or both read the same links, inertials,
    joints, origins, axes, limits and dynamics."""
    theirs = _read_by_urdf_parser_py(text)
    try:
        ours = urdf_parse.links_and_joints(text)
    except ValueError as e:
        assert isinstance(theirs, Exception), f"only we refuse it: {e}"
        assert str(e).startswith("malformed URDF"), e
        return
    assert not isinstance(theirs, Exception), f"only urdf_parser_py refuses it: {theirs}"
    links, joints = ours
    assert [link["name"] for link in links] == [link.name for link in theirs.links]
    for link, their in zip(links, theirs.links):
        assert (link["inertial"] is None) == (their.inertial is None), link["name"]
        if their.inertial is not None:
            assert link["inertial"]["mass"] == their.inertial.mass
            _same_pose(link["inertial"]["origin"], their.inertial.origin)
            inertia = their.inertial.inertia
            assert link["inertial"]["inertia"] == (None if inertia is None else
                                                    {key: getattr(inertia, key) for key in INERTIA_KEYS})
    assert [joint["name"] for joint in joints] == [joint.name for joint in theirs.joints]
    for joint, their in zip(joints, theirs.joints):
        assert (joint["type"], joint["parent"], joint["child"], joint["axis"]) == \
            (their.type, their.parent, their.child, their.axis), joint["name"]
        _same_pose(joint["origin"], their.origin)
        limit, dynamics = their.limit, their.dynamics
        assert joint["limit"] == (None if limit is None else dict(
            effort=limit.effort, velocity=limit.velocity, lower=limit.lower, upper=limit.upper))
        assert joint["dynamics"] == (None if dynamics is None else dict(
            damping=dynamics.damping, friction=dynamics.friction))


@pytest.mark.parametrize("path", REAL_URDFS, ids=[os.path.relpath(p, ROBOTS_DIR) for p in REAL_URDFS])
def test_real_urdfs_are_read_as_urdf_parser_py_reads_them(path):
    with open(path, encoding="utf-8") as f:
        assert_read_as_urdf_parser_py_reads(f.read())


SAMPLE = """<?xml version="1.0"?>
<robot name="sample">
  <!-- every kind of element urdf_parser_py reads -->
  <material name="grey"><color rgba="0.5 0.5 0.5 1"/></material>
  <link name="base_link"/>
  <link name="link1">
    <visual><origin xyz="0 0 0.1" rpy="0 0 0"/><geometry><box size="0.1 0.1 0.1"/></geometry>
      <material name="grey"/></visual>
    <collision><geometry><cylinder radius="0.05" length="0.2"/></geometry></collision>
    <inertial><origin xyz="0 0 0.05" rpy="0.1 0 0"/><mass value="1.0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial>
  </link>
  <link name="link2">
    <visual><geometry><mesh filename="package://sample/link2.stl" scale="1 1 1"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/><texture filename="red.png"/></material></visual>
    <visual><geometry><sphere radius="0.05"/></geometry></visual>
    <inertial><mass value="0.5"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <link name="tool0"/>
  <joint name="j1" type="revolute">
    <parent link="base_link"/><child link="link1"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit effort="10" velocity="2" lower="-1" upper="1"/>
    <dynamics damping="0.1" friction="0.2"/>
    <safety_controller k_velocity="1" k_position="2" soft_lower_limit="-0.9" soft_upper_limit="0.9"/>
    <calibration rising="0.1"/>
  </joint>
  <joint name="j2" type="prismatic">
    <parent link="link1"/><child link="link2"/>
    <axis xyz="1 0 0"/><limit effort="5" velocity="1"/>
    <mimic joint="j1" multiplier="2" offset="0"/>
  </joint>
  <joint name="tool0_joint" type="fixed"><parent link="link2"/><child link="tool0"/>
    <origin xyz="0 0 0.05"/></joint>
  <transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
    <joint name="j1"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
    <actuator name="m1"><mechanicalReduction>1</mechanicalReduction></actuator></transmission>
  <gazebo reference="link1"><material>Gazebo/Grey</material><anything at="all"/></gazebo>
</robot>
"""
PR2_TRANSMISSION = ('<transmission name="t2" type="SimpleTransmission"><actuator name="m2"/>'
                    '<joint name="j2"/><mechanicalReduction>2</mechanicalReduction></transmission>')
# (text in SAMPLE, its replacement); the first occurrence is replaced
EDITS = {
    "as-is": ("", ""),
    "version-1.0": ('<robot name="sample">', '<robot name="sample" version="1.0">'),
    "version-2.0": ('<robot name="sample">', '<robot name="sample" version="2.0">'),
    "version-not-x.y": ('<robot name="sample">', '<robot name="sample" version="1">'),
    "robot-without-name": ('<robot name="sample">', "<robot>"),
    "link-without-name": ('<link name="tool0"/>', "<link/>"),
    "joint-without-type": ('<joint name="j2" type="prismatic">', '<joint name="j2">'),
    "unknown-joint-type": ('type="prismatic"', 'type="ball"'),
    "joint-without-child": ('<child link="link2"/>', ""),
    "limit-without-effort": ('effort="10" ', ""),
    "limit-without-velocity": (' velocity="1"/>', "/>"),
    "limit-not-a-number": ('lower="-1"', 'lower="low"'),
    "axis-of-two-numbers": ('<axis xyz="0 0 1"/>', '<axis xyz="0 1"/>'),
    "axis-without-xyz": ('<axis xyz="1 0 0"/>', "<axis/>"),
    "origin-not-numbers": ('<origin xyz="0 0 0.1" rpy="0 0 0"/><axis', '<origin xyz="a b c"/><axis'),
    "two-origins": ('<origin xyz="0 0 0.05"/>', '<origin xyz="0 0 0.05"/><origin xyz="1 2 3"/>'),
    "mass-without-value": ('<mass value="1.0"/>', "<mass/>"),
    "inertial-without-mass": ('<mass value="0.5"/>', ""),
    "inertial-without-inertia": ('<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>', ""),
    "inertia-without-izz": ('iyz="0" izz="0.03"', 'iyz="0"'),
    "dynamics-not-a-number": ('damping="0.1"', 'damping="much"'),
    "safety-controller-without-k_velocity": ('k_velocity="1" ', ""),
    "calibration-not-a-number": ('rising="0.1"', 'rising="up"'),
    "mimic-without-joint": ('<mimic joint="j1" ', "<mimic "),
    "visual-without-geometry": ('<geometry><sphere radius="0.05"/></geometry>', ""),
    "geometry-of-two-shapes": ('<sphere radius="0.05"/>', '<sphere radius="0.05"/><box size="1 1 1"/>'),
    "unknown-shape": ('<sphere radius="0.05"/>', '<capsule radius="0.05"/>'),
    "box-of-two-numbers": ('<box size="0.1 0.1 0.1"/>', '<box size="0.1 0.1"/>'),
    "cylinder-without-length": (' length="0.2"', ""),
    "mesh-without-filename": ('filename="package://sample/link2.stl" ', ""),
    "visual-material-without-name": ('<material name="red">', "<material>"),
    "texture-without-filename": ('<texture filename="red.png"/>', "<texture/>"),
    "colour-of-three-numbers": ('rgba="1 0 0 1"', 'rgba="1 0 0"'),
    "material-without-colour": ('<material name="grey"><color rgba="0.5 0.5 0.5 1"/></material>',
                                '<material name="grey"/>'),
    "transmission-without-actuator": ('<actuator name="m1"><mechanicalReduction>1</mechanicalReduction>'
                                      "</actuator>", ""),
    "transmission-without-hardware-interface": ("<hardwareInterface>EffortJointInterface</hardwareInterface>",
                                                ""),
    "transmission-reduction-not-a-number": ("<mechanicalReduction>1<", "<mechanicalReduction>one<"),
    "pr2-transmission": ("</robot>", PR2_TRANSMISSION + "</robot>"),
    "pr2-transmission-without-reduction": ("</robot>", PR2_TRANSMISSION.replace(
        "<mechanicalReduction>2</mechanicalReduction>", "") + "</robot>"),
    "unknown-tags-and-attributes": ('<link name="tool0"/>',
                                    '<link name="tool0" colour="red"><sensor/></link>'),
    "processing-instruction": ("<!-- every", "<?something here?><!-- every"),
    "broken-xml": ("</robot>", ""),
}


@pytest.mark.parametrize("old,new", EDITS.values(), ids=EDITS.keys())
def test_urdf_variants_are_read_or_refused_as_urdf_parser_py_does(old, new):
    assert old in SAMPLE
    assert_read_as_urdf_parser_py_reads(SAMPLE.replace(old, new, 1))


def test_the_sample_loads():
    """j2 mimics j1 (multiplier 2): one coordinate, two bodies; mimic=False: two coordinates."""
    model = rd.load_urdf(SAMPLE)
    assert model.joint_names == ("j1",) and model.body_joint_names == ("j1", "j2")
    assert model.mimic == {"j2": ("j1", 2.0, 0.0)} and model.tip_frame == "link2"
    assert (model.damping[0], model.friction[0], model.effort_limit[0]) == (0.1, 0.2, 10.0)
    free = rd.load_urdf(SAMPLE, mimic=False)
    assert free.joint_names == ("j1", "j2") and free.tip_frame == "link2"
    assert (free.damping[0], free.friction[0], free.effort_limit[1]) == (0.1, 0.2, 5.0)


@pytest.mark.parametrize("chunk", [1, 7, 100])
def test_reading_does_not_depend_on_where_the_xml_is_cut(monkeypatch, chunk):
    """_parse feeds the XML in chunks and reads each child of <robot> once it is complete: a cut
    anywhere (inside a tag, a name, a multi-byte character) reads the same."""
    text = SAMPLE.replace('name="sample"', 'name="sämple ✓"')
    expected = urdf_parse.links_and_joints(text)
    monkeypatch.setattr(urdf_parse, "_CHUNK", chunk)
    assert urdf_parse.links_and_joints(text) == expected
    with pytest.raises(ValueError, match="malformed URDF"):
        urdf_parse.links_and_joints(text.replace("</robot>", ""))
