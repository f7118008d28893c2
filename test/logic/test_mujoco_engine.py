"""logic/mujoco_engine.py without ROS: the engine protocol on MuJoCo (payload, armature, friction,
brakes, reset of the world, divergence, bad arguments). Its dynamics against Pinocchio and its contact
torques against MuJoCo's constraint forces: test/reference/test_ref_mujoco_engine.py."""

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli.resources import default_urdf, world_file

mujoco = pytest.importorskip('mujoco')
from robot_dynamics_ros.logic.mujoco_engine import MujocoEngine  # noqa: E402

DT = 1e-3
BENT = np.array([0.3, -1.0, 1.2, -0.8, -1.4, 0.5])      # rad
HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])   # the tool 63 mm above the table


@pytest.fixture(scope='module')
def urdf_xml():
    return default_urdf().read_text()


@pytest.fixture(scope='module')
def model(urdf_xml):
    return rd.load_urdf(urdf_xml, tip_link='tool0')


def test_a_payload_and_an_armature_are_the_models(urdf_xml, model):
    """set_payload: MuJoCo's g(q) and M(q) of the arm carrying it equal the package's with_payload model;
    mass 0 removes it; the state carries on. set_model: the armature reaches MuJoCo's M(q)."""
    engine = MujocoEngine(model, urdf_xml, DT)
    engine.reset(BENT, np.full(6, 0.1))
    inertia = np.diag([0.002, 0.003, 0.004])
    engine.set_payload(1.5, [0.01, -0.02, 0.05], inertia, 'tool0')
    carried = rd.with_payload(model, mass=1.5, com=[0.01, -0.02, 0.05], inertia=inertia, frame='tool0')
    np.testing.assert_allclose(engine.q, BENT)
    np.testing.assert_allclose(engine.qd, 0.1)
    np.testing.assert_allclose(engine.holding_torques(), rd.gravity_torques(carried, BENT), atol=1e-12)
    engine.set_payload(0.0, np.zeros(3), np.zeros((3, 3)), 'tool0')
    np.testing.assert_allclose(engine.holding_torques(), rd.gravity_torques(model, BENT), atol=1e-12)
    with pytest.raises(ValueError, match="'hand' is not a body"):
        engine.set_payload(1.0, np.zeros(3), np.zeros((3, 3)), 'hand')

    armature = np.array([0.5, 0.5, 0.4, 0.1, 0.1, 0.1])
    engine.set_model(rd.with_armature(model, armature))
    M = np.zeros((engine.mj.nv, engine.mj.nv))
    mujoco.mj_forward(engine.mj, engine.data)
    mujoco.mj_fullM(engine.mj, engine.data, M)
    np.testing.assert_allclose(M[np.ix_(engine.dof, engine.dof)],
                               rd.mass_matrix(model, BENT) + np.diag(armature), atol=1e-12)


def test_friction_brakes_and_reset(urdf_xml, model):
    """friction: the URDF's damping slows a joint down (off: it does not); hold(): the arm stays, at
    rest, while the world's cube still falls; reset(): the arm and the world's objects start again."""
    engine = MujocoEngine(model, urdf_xml, DT)
    qd0 = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 2.0])          # the last wrist spinning
    for friction in (False, True):
        engine.reset(BENT, qd0)
        g = engine.holding_torques()
        for _ in range(50):
            engine.step(g, friction=friction)
        slowed = engine.qd[5] < 1.9
        assert slowed == friction, (friction, engine.qd[5])
    engine = MujocoEngine(model, urdf_xml, DT, world_path=str(world_file('table.xml')))
    cube = mujoco.mj_name2id(engine.mj, mujoco.mjtObj.mjOBJ_BODY, 'world/cube')
    z_cube = engine.mj.jnt_qposadr[engine.mj.body_jntadr[cube]] + 2
    engine.reset(HOME, np.zeros(6))
    engine.data.qpos[z_cube] += 0.05                         # the cube 5 cm above the table
    for _ in range(100):
        engine.hold()
    np.testing.assert_array_equal(engine.q, HOME)
    np.testing.assert_array_equal(engine.qd, np.zeros(6))
    assert engine.data.qpos[z_cube] < 0.43 + 0.05 - 0.03, 'the world stood still under the brakes'
    engine.reset(HOME, np.zeros(6))
    assert engine.data.qpos[z_cube] == pytest.approx(0.43)


def test_a_divergence_is_a_floating_point_error(urdf_xml, model):
    """MuJoCo resets its data on an unstable state (a NaN torque here): the engine says so rather than
    let MuJoCo's reference pose pass for the next state."""
    engine = MujocoEngine(model, urdf_xml, DT)
    engine.reset(BENT, np.zeros(6))
    with pytest.raises(FloatingPointError, match='unstable'):
        engine.step(np.full(6, np.nan))


def test_bad_arguments(urdf_xml, model):
    with pytest.raises(ValueError, match="integrator must be one of .* with engine mujoco, got 'euler'"):
        MujocoEngine(model, urdf_xml, DT, 'euler')
    engine = MujocoEngine(model, urdf_xml, DT)
    with pytest.raises(ValueError, match='integrator must be one of'):
        engine.set_integrator('verlet')
    engine.set_integrator('implicitfast')
    assert engine.mj.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    with pytest.raises(ValueError, match="world_path '/no/such.xml' is not a file"):
        MujocoEngine(model, urdf_xml, DT, world_path='/no/such.xml')
    assert engine.contacts() == [] and not engine.contact_torques().any()


def test_limits_meshes_and_visuals_from_the_urdf(model, urdf_xml):
    """The URDF's joint limits are MuJoCo's joint ranges (limited); example-robot-data's UR5: its seven
    STL collision meshes go to MuJoCo, its DAE visuals only with keep_visuals (as triangles)."""
    import os
    import sysconfig

    engine = MujocoEngine(model, urdf_xml, DT)
    ranges = engine.mj.jnt_range[[engine.mj.dof_jntid[d] for d in engine.dof]]
    np.testing.assert_array_equal(ranges, np.stack([model.lower, model.upper], axis=1))
    assert all(engine.mj.jnt_limited[engine.mj.dof_jntid[d]] for d in engine.dof)
    share = os.path.join(sysconfig.get_paths()['purelib'], 'cmeel.prefix', 'share', 'example-robot-data')
    path = os.path.join(share, 'robots', 'ur_description', 'urdf', 'ur5_robot.urdf')
    with open(path) as f:
        ur5 = f.read()
    ur5_model = rd.load_urdf(ur5)
    assert MujocoEngine(ur5_model, ur5, DT, package_paths=[share]).mj.nmesh == 7
    assert MujocoEngine(ur5_model, ur5, DT, package_paths=[share], keep_visuals=True).mj.nmesh == 14
