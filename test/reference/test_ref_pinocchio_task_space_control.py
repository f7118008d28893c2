"""Task-space computed torque against Pinocchio: the closed-loop identity J_b q̈ + J̇_b q̇ = a with q̈
from Pinocchio's ABA, J_b and J̇_b from its frame Jacobian and its time variation (LOCAL), and a
built from Pinocchio's log6, SE3 action and Motion action; the posture changes no task acceleration;
the feed-forward transport against finite differences; a closed loop in simulate()."""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.spatial import adjoint, exp_twist

pin = pytest.importorskip("pinocchio")

ARMS = ["ur5", "panda_locked", "xarm7"]
ANG_FIRST = np.array([3, 4, 5, 0, 1, 2])
KP = np.array([40.0, 50.0, 60.0, 90.0, 100.0, 110.0])
KD = 2.0 * np.sqrt(KP)


def _motion(x):
    """Pinocchio Motion of our angular-first 6-vector."""
    return pin.Motion(np.asarray(x)[ANG_FIRST])


def _ours(v):
    return np.asarray(v)[ANG_FIRST]


def pin_reference(P, q, qd, T_des, V_des, Vdot_des, kp, kd):
    """a = d/dt([Ad_{T_bd}] V_des) + K_p log(T_bd) + K_d ([Ad_{T_bd}] V_des − V_b), and J_b, J̇_b, all by
    Pinocchio, in our joint order and angular first."""
    pq, pv = P.pin_q(q), P.pin_v(qd)
    fid = P.frame_id(P.model.tip_frame)
    pin.computeJointJacobiansTimeVariation(P.pm, P.pd, pq, pv)
    pin.updateFramePlacements(P.pm, P.pd)
    J = P.jac(pin.getFrameJacobian(P.pm, P.pd, fid, pin.LOCAL))
    dJ = P.jac(pin.getFrameJacobianTimeVariation(P.pm, P.pd, fid, pin.LOCAL))
    T_bd = P.pd.oMf[fid].inverse() * pin.SE3(T_des[:3, :3], T_des[:3, 3])
    V_b = J @ qd
    Vd_b = _ours(T_bd.act(_motion(V_des)).vector)
    transport = _ours(T_bd.act(_motion(Vdot_des)).vector) + _ours(_motion(Vd_b).cross(_motion(V_b)).vector)
    a = transport + kp * _ours(pin.log6(T_bd).vector) + kd * (Vd_b - V_b)
    return a, J, dJ


def pin_qdd(P, q, qd, tau):
    return P.vec(pin.aba(P.pm, P.pd, P.pin_q(q), P.pin_v(qd), P.pin_v(tau)).copy())


def _target(P, q, rng):
    """A desired pose near the tip's (a rotation of about 0.3 rad and 0.1 m away) and a moving one."""
    T = rd.frame_pose(P.model, q)
    S = np.r_[rng.normal(size=3), rng.normal(size=3) * 0.3]
    S /= np.linalg.norm(S[:3])
    return T @ exp_twist(S, 0.3), rng.normal(size=6), rng.normal(size=6)


@pytest.mark.parametrize("pair", ARMS, indirect=True)
def test_closed_loop_identity_and_the_posture(pair, check):
    m = pair.model
    rng = np.random.default_rng(11)
    for q, qd, _ in zip(*pair.states(4, seed=17)):
        T_des, V_des, Vdot_des = _target(pair, q, rng)
        posture = dict(nullspace_q=np.zeros(m.nq), nullspace_kp=30.0) if m.nq > 6 else {}
        tau = rd.task_space_control(m, q, qd, T_des, V_des, Vdot_des, kp=KP, kd=KD, **posture)
        a, J, dJ = pin_reference(pair, q, qd, T_des, V_des, Vdot_des, KP, KD)
        check("task-space control: J_b qdd + dJ_b qd = a", pair.name, J @ pin_qdd(pair, q, qd, tau) + dJ @ qd,
              a)
        if posture:
            free = rd.task_space_control(m, q, qd, T_des, V_des, Vdot_des, kp=KP, kd=KD)
            moved = pin_qdd(pair, q, qd, tau) - pin_qdd(pair, q, qd, free)
            check("task-space control: posture leaves J_b qdd", pair.name, J @ moved, np.zeros(6))
            assert np.abs(moved).max() > 1e-3, "the posture must move the null space"


@pytest.mark.parametrize("pair", ["ur5"], indirect=True)
def test_feed_forward_is_the_derivative_of_the_desired_twist_in_the_body_frame(pair):
    """kp = kd = 0: a = d/dt([Ad_{T_bd}] V_des), checked by central differences along q(t) = q + t q̇
    and a desired frame moving with body twist V_des + t V̇_des."""
    m = pair.model
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-1.0, 1.0, (2, m.nq))
    T_des, V_des, Vdot_des = _target(pair, q, rng)
    tau = rd.task_space_control(m, q, qd, T_des, V_des, Vdot_des, kp=0.0, kd=0.0)
    qdd = rd.forward_dynamics(m, q, qd, tau)
    J = rd.jacobian(m, q, reference="body")
    a = J @ qdd + rd.jacobian_derivative(m, q, qd, reference="body") @ qd

    def twist_in_body(t):
        qt = q + t * qd + 0.5 * t * t * qdd
        V = V_des + t * Vdot_des
        Td = T_des @ exp_twist(*_unit(V_des * t + 0.5 * Vdot_des * t * t))
        T_bd = np.linalg.inv(rd.frame_pose(m, qt)) @ Td
        return adjoint(T_bd) @ V
    h = 1e-5
    fd = (twist_in_body(h) - twist_in_body(-h)) / (2 * h)
    assert np.abs(a - fd).max() < 1e-6 * max(1.0, np.abs(fd).max()), (a, fd)


def _unit(x):
    """(S, θ) with x = S θ for exp_twist."""
    w = np.linalg.norm(x[:3])
    if w > 0:
        return x / w, w
    v = np.linalg.norm(x[3:])
    return (x / v, v) if v > 0 else (np.r_[0, 0, 0, 1.0, 0, 0], 0.0)


@pytest.mark.parametrize("pair", ["ur5", "panda_locked"], indirect=True)
def test_a_closed_loop_in_simulate_reaches_the_pose(pair):
    m = pair.model
    # bent, away from singularities: Panda's "ready" pose, a UR5 pose with the elbow and wrist bent
    q0 = (np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]) if m.nq == 7
          else np.array([0.3, -1.2, 1.4, -1.0, -1.4, 0.3]))
    q_goal = q0 + np.linspace(0.3, -0.3, m.nq)
    T_goal = rd.frame_pose(m, q_goal)
    posture = dict(nullspace_q=q0, nullspace_kp=20.0) if m.nq > 6 else {}

    def law(t, q, qd):
        return rd.task_space_control(m, q, qd, T_goal, kp=100.0, kd=20.0, **posture)
    result = rd.simulate(m, q0, np.zeros(m.nq), law, 1e-3, 4000)
    T = rd.frame_pose(m, result.q[-1])
    assert np.abs(T[:3, 3] - T_goal[:3, 3]).max() < 1e-6
    assert np.abs(T[:3, :3] - T_goal[:3, :3]).max() < 1e-6


@pytest.mark.parametrize("pair", ARMS, indirect=True)
def test_pose_error_is_pinocchios_log6_of_the_relative_pose(pair):
    m = pair.model
    rng = np.random.default_rng(23)
    fid = pair.frame_id(m.tip_frame)
    for q, _, _ in zip(*pair.states(4, seed=29)):
        T_des = _target(pair, q, rng)[0]
        pin.framesForwardKinematics(pair.pm, pair.pd, pair.pin_q(q))
        expected = _ours(pin.log6(pair.pd.oMf[fid].actInv(pin.SE3(T_des[:3, :3], T_des[:3, 3]))).vector)
        np.testing.assert_allclose(rd.pose_error(m, q, T_des), expected, rtol=0, atol=1e-12)
