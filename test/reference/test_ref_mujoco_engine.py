"""The simulator's MuJoCo engine (logic/mujoco_engine.py) against Pinocchio, the rigid-body engine and
MuJoCo's own constraint forces.

- Free fall and a torque profile, RK4 at 1 ms, friction off, away from the joint limits: the MuJoCo
  engine's states equal Pinocchio's forward dynamics (``pin.aba``) integrated by the same classical
  RK4, and the rigid-body engine's, to integration accuracy (measured: at most 2.5e-14 after 0.3 s), on
  example-robot-data's UR5 and xArm7 (joints matched by name; MuJoCo's contacts off: the meshes of a
  falling arm may touch its base). urdf/ur5e.urdf: test_simulator_node.py.
- Contact ground truth: with the arm pressing on worlds/table.xml, ``contact_torques`` (Σ Jᵀ f over
  the contacts, eq. 2 of the module) equals MuJoCo's own constraint force on the arm's joints
  (``qfrc_constraint``: no joint limit or friction loss is active), and the contact force is what
  the arm pushes with (Jᵀ F = the torque pressing, in a static press).
"""

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli.resources import default_urdf, world_file

mujoco = pytest.importorskip('mujoco')
from robot_dynamics_ros.logic.mujoco_engine import MujocoEngine  # noqa: E402
from robot_dynamics_ros.logic.rigid_body_engine import RigidBodyEngine  # noqa: E402

DT = 1e-3
STEPS = 300
TOL = 1e-10                 # rad, rad/s: after STEPS of RK4 (measured: at most 2.5e-14)


def _pin_rk4(pair, q, qd, tau, dt):
    """One classical RK4 step of Pinocchio's forward dynamics (ABA), in our joint order."""
    import pinocchio as pin

    def f(q, qd):
        qdd = pin.aba(pair.pm, pair.pd, pair.pin_q(q), pair.pin_v(qd), pair.pin_v(tau))
        return qd, qdd[pair.perm]

    k1 = f(q, qd)
    k2 = f(q + 0.5 * dt * k1[0], qd + 0.5 * dt * k1[1])
    k3 = f(q + 0.5 * dt * k2[0], qd + 0.5 * dt * k2[1])
    k4 = f(q + dt * k3[0], qd + dt * k3[1])
    return (q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
            qd + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]))


def _torque(model, k, q):
    """The profile: 80 % of the gravity torques plus M(q) a, a = 3 sin(10 t + j) rad/s² (a few tenths of
    a radian of motion on every joint, whatever its inertia)."""
    acceleration = 3.0 * np.sin(0.01 * k + np.arange(model.nq))
    return 0.8 * rd.gravity_torques(model, q) + rd.mass_matrix(model, q) @ acceleration


@pytest.mark.parametrize('robot', ['ur5', 'xarm7'])
@pytest.mark.parametrize('profile', ['free_fall', 'torques'])
def test_the_mujoco_engine_integrates_pinocchios_dynamics(pairs, check, robot, profile):
    pair = pairs(robot)
    model = pair.model
    with open(pair.path) as f:
        urdf_xml = f.read()
    engine = MujocoEngine(model, urdf_xml, DT, 'rk4', package_paths=[pair.path.split('/robots/')[0]])
    # no contact (the meshes of a falling arm may touch its base): the rigid-body dynamics alone
    engine.mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    rigid = RigidBodyEngine(model, DT)
    q0 = 0.5 * (np.maximum(model.lower, -np.pi) + np.minimum(model.upper, np.pi)) + 0.2
    q_pin, qd_pin = q0.copy(), np.zeros(model.nq)
    for eng in (engine, rigid):
        eng.reset(q0, np.zeros(model.nq))
    for k in range(STEPS):
        tau = np.zeros(model.nq) if profile == 'free_fall' else _torque(model, k, q_pin)
        engine.step(tau)
        rigid.step(tau)
        q_pin, qd_pin = _pin_rk4(pair, q_pin, qd_pin, tau, DT)
    assert np.all((q_pin > model.lower + 0.05) & (q_pin < model.upper - 0.05)), 'a joint reached a limit'
    check(f'MuJoCo engine q ({profile}, {STEPS} RK4 steps)', robot, engine.q, q_pin, tol=TOL)
    check(f'MuJoCo engine qd ({profile}, {STEPS} RK4 steps)', robot, engine.qd, qd_pin, tol=TOL)
    check(f'rigid-body engine q ({profile}, {STEPS} RK4 steps)', robot, rigid.q, q_pin, tol=TOL)


def test_contact_torques_are_mujocos_constraint_forces(check):
    """The UR5e's tool ball pressed onto the table by a constant 20 N (Jᵀ F on top of g(q)) until it
    rests: the contact torques equal qfrc_constraint on the arm's joints, and the static balance
    τ_applied − g(q) + τ_contact = 0 holds (the contact carries the 20 N)."""
    urdf_xml = default_urdf().read_text()
    model = rd.load_urdf(urdf_xml, tip_link='tool0')
    engine = MujocoEngine(model, urdf_xml, DT, 'implicitfast', world_path=str(world_file('table.xml')))
    q = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
    engine.reset(q, np.zeros(6))
    damping = np.array([5.0, 5.0, 5.0, 0.2, 0.2, 0.02])        # N m s/rad: settles it
    push = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -20.0])          # N, down, at tool0 (world axes)
    for _ in range(2000):
        J = rd.jacobian(model, engine.q, 'tool0', 'world_aligned')
        applied = engine.holding_torques() + J.T @ push - damping * engine.qd
        engine.step(applied)
    contacts = engine.contacts()
    assert [c.body for c in contacts] == ['tool0'] and contacts[0].other == 'world/table_top'
    contact_torques = engine.contact_torques(contacts)
    check('contact torques = qfrc_constraint', 'ur5e (MuJoCo)', contact_torques,
          engine.data.qfrc_constraint[engine.dof], tol=1e-12)
    check('contact force = the push (static)', 'ur5e (MuJoCo)', contacts[0].force,
          -push[3:], tol=1e-3)
    check('J^T f_contact + J^T F_push = 0', 'ur5e (MuJoCo)', contact_torques,
          -J.T @ push, tol=1e-3)


def test_mimic_joints_are_mujoco_joint_equalities(check):
    """example-robot-data's Panda with its mimicking finger (URDF <mimic>): the engine couples the two
    fingers by a MuJoCo joint equality, starts the follower where it follows, and folds the follower's
    forces onto the coordinate (Gᵀ). The holding torques equal the package's G^T g to 1e-14; the motion
    the package's (whose coupling is exact) to 1e-5 after 0.2 s, as far as MuJoCo's equality, a soft
    constraint, holds it (measured: 4e-6)."""
    import os
    import sysconfig

    share = os.path.join(sysconfig.get_paths()['purelib'], 'cmeel.prefix', 'share', 'example-robot-data')
    path = os.path.join(share, 'robots', 'panda_description', 'urdf', 'panda.urdf')
    with open(path) as f:
        urdf_xml = f.read()
    model = rd.load_urdf(urdf_xml)
    assert model.mimic == {'panda_finger_joint2': ('panda_finger_joint1', 1.0, 0.0)}
    engine = MujocoEngine(model, urdf_xml, DT, package_paths=[share])
    engine.mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    q0 = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8, 0.02])
    engine.reset(q0, np.zeros(model.nq))
    follower = engine.mj.jnt_qposadr[mujoco.mj_name2id(engine.mj, mujoco.mjtObj.mjOBJ_JOINT,
                                                       'panda_finger_joint2')]
    assert engine.data.qpos[follower] == 0.02
    check('holding torques (mimic)', 'panda (MuJoCo)', engine.holding_torques(),
          rd.gravity_torques(model, q0), tol=1e-12)
    rigid = RigidBodyEngine(model, DT)
    rigid.reset(q0, np.zeros(model.nq))
    for _ in range(200):
        tau = 0.5 * rd.gravity_torques(model, rigid.q)
        engine.step(tau)
        rigid.step(tau)
    check('q after 0.2 s (mimic: a soft equality)', 'panda (MuJoCo)', engine.q, rigid.q, tol=1e-5)
