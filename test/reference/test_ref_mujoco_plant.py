"""MuJoCo's compilation of urdf/ur5e.urdf against this package's dynamics (and Pinocchio's), and the
firmware of test/plants/mujoco_firmware_plant.py.

The MuJoCo plant is the independent arm of the node tests: before it can judge the package's
controllers, its dynamics must be the package's. MuJoCo compiles the URDF with its own importer;
joints are matched by NAME (MuJoCo's joint names against model.joint_names). With the URDF's damping,
friction and armature zeroed, MuJoCo's gravity torques (qfrc_bias at zero velocity, mj_forward), mass
matrix (mj_fullM), bias forces c + g and forward dynamics (qacc) equal ``robot_dynamics_ros.dynamics``'
at random configurations to TOL (measured: about 1e-14). Then the firmware: MuJoCo's gravity
compensation on every moving body holds the arm under a zero command, is added to the command before
the joint's effort clamp, and the efforts reported follow REPORTED_EFFORTS; a tip wrench given in the
tip frame reaches MuJoCo (xfrc_applied, world coordinates at the centre of mass) as the package's
Jᵀ F at that frame.
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

mujoco = pytest.importorskip('mujoco')
pytest.importorskip('rclpy')        # the plant module holds the node class too

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'plants'))
from mujoco_firmware_plant import UR5E_URDF, MujocoArm, urdf_for_mujoco  # noqa: E402

TOL = 1e-10                 # relative to max(1, |reference|max), as the `check` fixture applies it
ROBOT = 'ur5e (MuJoCo)'
BENT = np.array([0.3, -1.0, 1.2, -0.8, -1.4, 0.5])      # rad, every joint away from a singularity


@pytest.fixture(scope='module')
def model():
    return rd.load_urdf(str(UR5E_URDF))


@pytest.fixture(scope='module')
def plain(model):
    """The arm without firmware, friction or armature: MuJoCo's rigid-body dynamics of the URDF."""
    return MujocoArm(UR5E_URDF, joints=model.joint_names, firmware_gravity=False)


@pytest.fixture(scope='module')
def firmware(model):
    return MujocoArm(UR5E_URDF, joints=model.joint_names, firmware_gravity=True)


def configurations(model, count=20, seed=0):
    """Seeded q uniform within the joint limits (±π where wider), q̇ ~ N(0, 1)."""
    rng = np.random.default_rng(seed)
    lo, hi = np.maximum(model.lower, -np.pi), np.minimum(model.upper, np.pi)
    return rng.uniform(lo, hi, size=(count, model.nq)), rng.normal(size=(count, model.nq))


def at(arm, q, qd=None, u=None):
    """The arm at (q, q̇) under command u, forward dynamics done (mj_forward)."""
    arm.reset(q)
    arm.data.qvel[arm.dof_index] = 0.0 if qd is None else qd
    arm.command(np.zeros(len(q)) if u is None else u)
    arm.forward()
    return arm


def mass_matrix(arm):
    M = np.zeros((arm.model.nv, arm.model.nv))
    mujoco.mj_fullM(arm.model, arm.data, M)
    return M[np.ix_(arm.dof_index, arm.dof_index)]


# ---------------------------------------------------------------------------------------------
# What MuJoCo compiled
# ---------------------------------------------------------------------------------------------

def test_mujoco_compiles_the_urdf_with_its_joints_bodies_and_limits(model, plain):
    m = plain.model
    assert [m.joint(i).name for i in range(m.njnt)] == list(model.joint_names)
    assert all(t == mujoco.mjtJoint.mjJNT_HINGE for t in m.jnt_type)
    # fusestatic="false": tool0 stays a (massless) body, 0.0996 m along wrist_3_link's z.
    assert [m.body(i).name for i in range(m.nbody)] == [
        'world', 'base_link', 'shoulder_link', 'upper_arm_link', 'forearm_link', 'wrist_1_link',
        'wrist_2_link', 'wrist_3_link', 'tool0']
    tool0 = m.body('tool0')
    assert m.body(tool0.parentid[0]).name == 'wrist_3_link' and tool0.mass[0] == 0.0
    np.testing.assert_allclose(tool0.pos, [0.0, 0.0, 0.0996])
    np.testing.assert_allclose(m.body_mass[2:8], [3.761, 8.058, 2.846, 1.37, 1.3, 0.365])
    # <limit lower upper> -> jnt_range, <limit effort> -> the joints' actuator force range
    np.testing.assert_array_equal(m.jnt_range, np.column_stack([model.lower, model.upper]))
    assert m.jnt_limited.all() and m.jnt_actfrclimited.all()
    effort = np.column_stack([-model.effort_limit, model.effort_limit])
    np.testing.assert_array_equal(m.jnt_actfrcrange, effort)
    # one motor per joint, in joint order: gear 1, gain 1, no bias, ctrl limited to ± the effort limit
    assert m.nu == model.nq and list(m.actuator_trnid[:, 0]) == list(range(model.nq))
    np.testing.assert_array_equal(m.actuator_gear[:, 0], 1.0)
    np.testing.assert_array_equal(m.actuator_gainprm[:, 0], 1.0)
    assert (m.actuator_biastype == mujoco.mjtBias.mjBIAS_NONE).all() and m.actuator_ctrllimited.all()
    np.testing.assert_array_equal(m.actuator_ctrlrange, m.jnt_actfrcrange)
    np.testing.assert_array_equal(m.opt.gravity, model.gravity)
    # one geometry, the tool ball on tool0 (the MuJoCo engine's probe): nothing for it to collide with
    assert m.ngeom == 1 and m.body(m.geom_bodyid[0]).name == 'tool0'


def test_urdf_damping_and_friction_map_to_mujoco_damping_and_frictionloss(model, joint_dynamics_from_xml):
    """<dynamics damping> -> dof_damping (viscous, N m s/rad); <dynamics friction> -> dof_frictionloss
    (dry friction, N m, a soft constraint); armature 0. friction=False zeroes them."""
    xml = joint_dynamics_from_xml(str(UR5E_URDF))
    m = MujocoArm(UR5E_URDF, friction=True).model
    np.testing.assert_array_equal(m.dof_damping, [xml[name][0] for name in model.joint_names])
    np.testing.assert_array_equal(m.dof_frictionloss, [xml[name][1] for name in model.joint_names])
    np.testing.assert_array_equal(m.dof_damping, model.damping)
    np.testing.assert_array_equal(m.dof_frictionloss, model.friction)
    assert not m.dof_armature.any()
    off = MujocoArm(UR5E_URDF, friction=False).model
    assert not (off.dof_damping.any() or off.dof_frictionloss.any() or off.dof_armature.any())


def test_the_compiler_element_goes_into_the_urdf_text_only():
    text = UR5E_URDF.read_text()
    root = ET.fromstring(urdf_for_mujoco(text))
    assert root[0].tag == 'mujoco' and root[0][0].get('fusestatic') == 'false'
    assert '<mujoco>' not in text


def test_joints_are_matched_by_name_not_by_position(model):
    """A plant given its joints in another order permutes every vector accordingly."""
    order = tuple(reversed(model.joint_names))
    arm = MujocoArm(UR5E_URDF, joints=order, firmware_gravity=False)
    at(arm, BENT[::-1])
    np.testing.assert_allclose(arm.data.qfrc_bias[arm.dof_index], rd.gravity_torques(model, BENT)[::-1],
                               atol=1e-12)
    with pytest.raises(ValueError, match='movable joints'):
        MujocoArm(UR5E_URDF, joints=('shoulder_pan_joint', 'no_such_joint'))


# ---------------------------------------------------------------------------------------------
# MuJoCo's dynamics = the package's
# ---------------------------------------------------------------------------------------------

def test_gravity_torques_and_mass_matrix_equal_the_packages(model, plain, check):
    for q, _ in zip(*configurations(model)):
        at(plain, q)
        check('gravity torques (qfrc_bias, q̇ = 0)', ROBOT, rd.gravity_torques(model, q),
              plain.data.qfrc_bias[plain.dof_index], TOL)
        check('mass matrix (mj_fullM)', ROBOT, rd.mass_matrix(model, q), mass_matrix(plain), TOL)


def test_bias_forces_and_forward_dynamics_equal_the_packages(model, plain, check):
    rng = np.random.default_rng(1)
    for q, qd in zip(*configurations(model, seed=2)):
        u = rng.uniform(-0.5, 0.5) * model.effort_limit
        at(plain, q, qd, u)
        check('c + g (qfrc_bias)', ROBOT, rd.coriolis_forces(model, q, qd) + rd.gravity_torques(model, q),
              plain.data.qfrc_bias[plain.dof_index], TOL)
        check('forward dynamics (qacc)', ROBOT, rd.forward_dynamics(model, q, qd, u),
              plain.data.qacc[plain.dof_index], TOL)


def test_pinocchio_agrees_with_mujoco(model, plain, check):
    pin = pytest.importorskip('pinocchio')
    pm = pin.buildModelFromUrdf(str(UR5E_URDF))
    pd = pm.createData()
    perm = [pm.joints[pm.getJointId(name)].idx_v for name in model.joint_names]
    for q, _ in zip(*configurations(model, seed=3)):
        qp = np.zeros(pm.nq)
        qp[perm] = q
        at(plain, q)
        check('gravity torques, Pinocchio vs MuJoCo', ROBOT, pin.computeGeneralizedGravity(pm, pd, qp)[perm],
              plain.data.qfrc_bias[plain.dof_index], TOL)
        M = pin.crba(pm, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        check('mass matrix, Pinocchio vs MuJoCo', ROBOT, M[np.ix_(perm, perm)], mass_matrix(plain), TOL)


# ---------------------------------------------------------------------------------------------
# The firmware
# ---------------------------------------------------------------------------------------------

def test_the_firmware_compensates_gravity_with_mujocos_gravcomp(model, firmware, check):
    """gravcomp = 1 on every moving body (not on the fixed base_link), through the actuators: the
    firmware's torque (qfrc_gravcomp) is the package's g(q), inside qfrc_actuator, none passive."""
    m = firmware.model
    assert [m.body(i).name for i in range(m.nbody) if m.body_gravcomp[i]] == [
        'shoulder_link', 'upper_arm_link', 'forearm_link', 'wrist_1_link', 'wrist_2_link',
        'wrist_3_link', 'tool0']
    assert m.jnt_actgravcomp.all()
    for q, qd in zip(*configurations(model, count=5, seed=4)):
        at(firmware, q, qd)
        g = rd.gravity_torques(model, q)
        check('firmware gravity compensation (qfrc_gravcomp)', ROBOT, g, firmware.gravity_compensation(), TOL)
        check("efforts 'full' at u = 0", ROBOT, g, firmware.efforts('full'), TOL)
        check("efforts 'gravity_compensated' at u = 0", ROBOT, np.zeros(model.nq),
              firmware.efforts('gravity_compensated'), TOL)
        assert not firmware.data.qfrc_passive.any()
    assert not MujocoArm(UR5E_URDF, firmware_gravity=False).model.body_gravcomp.any()


def test_a_zero_command_holds_the_arm_with_firmware_and_drops_it_without(model, firmware, plain):
    firmware.reset(BENT)
    for _ in range(2000):                   # 2 s
        firmware.step()
    assert firmware.time == pytest.approx(2.0)
    assert np.abs(firmware.q - BENT).max() < 1e-6
    plain.reset(BENT)
    for _ in range(200):
        plain.step()
    assert np.abs(plain.q - BENT).max() > 0.05      # 0.2 s of free fall
    # ... and the package's g(q0) as the command holds the plain arm: the two dynamics agree
    plain.reset(BENT)
    plain.command(rd.gravity_torques(model, BENT))
    for _ in range(2000):
        plain.step()
    assert np.abs(plain.q - BENT).max() < 1e-6


def test_the_effort_limit_clamps_command_plus_gravity(model, firmware):
    """u is clamped to ± effort (ctrlrange), then u + g(q) to ± effort (the joint's actuator force
    range): the firmware's compensation does not lift the joint's torque limit."""
    g = rd.gravity_torques(model, BENT)
    limit = model.effort_limit
    for u in (2 * limit, -2 * limit, 0.5 * limit):
        at(firmware, BENT, u=u)
        full = np.clip(np.clip(u, -limit, limit) + g, -limit, limit)
        np.testing.assert_allclose(firmware.efforts('full'), full, atol=1e-9)
        np.testing.assert_allclose(firmware.efforts('gravity_compensated'), full - g, atol=1e-9)


def test_a_tip_wrench_in_tip_coordinates_acts_as_the_packages_jacobian_transpose(model, firmware, check):
    """A wrench w = (m, f) ON the robot at tool0's origin, in tool0's axes, applied through MuJoCo's
    xfrc_applied (world coordinates, at the body's centre of mass): q̈ equals the package's forward
    dynamics with F_tip = −w at tool0 (F_tip is what the robot exerts), the firmware's g(q) added to u."""
    rng = np.random.default_rng(5)
    for q, qd in zip(*configurations(model, count=5, seed=6)):
        w = rng.normal(size=6) * [2, 2, 2, 20, 20, 20]
        u = rng.uniform(-0.3, 0.3) * model.effort_limit
        firmware.reset(q)
        firmware.data.qvel[firmware.dof_index] = qd
        firmware.command(u)
        firmware.set_tip_wrench(w)
        firmware.forward()
        ours = rd.forward_dynamics(model, q, qd, u + rd.gravity_torques(model, q), f_tip=-w, frame='tool0')
        check('forward dynamics with a tip wrench', ROBOT, ours, firmware.data.qacc[firmware.dof_index], TOL)
    firmware.set_tip_wrench(np.zeros(6))
    assert not firmware.data.xfrc_applied.any()
