"""task_space_control's arguments, the singular cases, and the matrix logarithm it uses (the law
itself is checked against Pinocchio in test/reference/test_ref_pinocchio_task_space_control.py)."""
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.spatial import exp_twist

UR5E = Path(__file__).resolve().parents[2] / "urdf" / "ur5e.urdf"
PENDULUM = Path(__file__).resolve().parents[1] / "data" / "pendulum.urdf"


@pytest.mark.parametrize("theta", [0.0, 1e-9, 1e-5, 1e-3, 0.5, 2.0, np.pi - 1e-3, np.pi - 1e-7, np.pi])
def test_the_pose_error_is_the_matrix_log_near_zero_and_pi(theta):
    """At rest with kp = 1 and kd = 0 the closed loop's task acceleration is the error twist:
    J_b q̈ = log(T⁻¹ T_des) (J̇_b q̇ = 0). For T_des = T e^{[S] θ}: S θ (at π the axis' sign is a
    choice: e^{[X]} = e^{[S] θ} then)."""
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    q, qd = np.array([0.3, -1.2, 1.4, -1.0, -1.4, 0.3]), np.zeros(6)
    T = rd.frame_pose(model, q)
    J = rd.jacobian(model, q, reference="body")
    rng = np.random.default_rng(int(theta * 1e3))
    for _ in range(10):
        w = rng.normal(size=3)
        S = np.r_[w / np.linalg.norm(w), rng.normal(size=3)]
        tau = rd.task_space_control(model, q, qd, T @ exp_twist(S, theta), kp=1.0, kd=0.0)
        X = J @ rd.forward_dynamics(model, q, qd, tau)
        if theta < np.pi - 1e-6:
            np.testing.assert_allclose(X, S * theta, atol=1e-9)
        angle = np.linalg.norm(X[:3])
        E = exp_twist(X / angle, angle) if angle > 0 else exp_twist(np.r_[0, 0, 0, X[3:]] / max(
            np.linalg.norm(X[3:]), 1e-300), np.linalg.norm(X[3:]))
        np.testing.assert_allclose(E, exp_twist(S, theta), atol=1e-9)


def test_at_the_target_at_rest_the_law_holds_against_gravity():
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    q = np.array([0.3, -1.2, 1.4, -1.0, -1.4, 0.3])
    tau = rd.task_space_control(model, q, np.zeros(6), rd.frame_pose(model, q))
    np.testing.assert_allclose(tau, rd.gravity_torques(model, q), atol=1e-9)


def test_bad_arguments_are_refused_naming_them():
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    q, qd = np.array([0.3, -1.2, 1.4, -1.0, -1.4, 0.3]), np.zeros(6)
    T = rd.frame_pose(model, q)
    scaled = T.copy()
    scaled[:3, :3] *= 1.01
    reflected = T.copy()
    reflected[:3, 0] *= -1.0
    bottom = T.copy()
    bottom[3, 0] = 0.1
    nan = T.copy()
    nan[0, 3] = np.nan
    for bad in (scaled, reflected, bottom, nan, T[:3], "pose", None):
        with pytest.raises(ValueError, match="T_des"):
            rd.task_space_control(model, q, qd, bad)
    for name, value in (("kp", np.ones(5)), ("kd", np.ones((3, 3))), ("V_des", np.ones(5)),
                        ("Vdot_des", [np.nan] * 6), ("nullspace_q", np.zeros(5)), ("frame", "nowhere"),
                        ("damping", -1.0), ("q", np.zeros(5))):
        arguments = dict(q=q, qd=qd, T_des=T, nullspace_q=q)
        arguments[name] = value
        with pytest.raises(ValueError, match=name):
            rd.task_space_control(model, **arguments)
    with pytest.raises(ValueError, match="nullspace_kp"):
        rd.task_space_control(model, q, qd, T, nullspace_q=q, nullspace_kp=-1.0)
    with pytest.raises(ValueError, match="nullspace_kd"):
        rd.task_space_control(model, q, qd, T, nullspace_q=q, nullspace_kp=1.0, nullspace_kd=[-1.0] * 6)
    # a list is a transform too
    np.testing.assert_array_equal(rd.task_space_control(model, q, qd, T.tolist()),
                                  rd.task_space_control(model, q, qd, T))


def test_every_form_of_a_gain_gives_the_same_torque():
    """A number, 6 numbers, a 6x6 matrix (any dtype, list or strided array) are one gain; the null-space
    gains a number or one per joint (damping > 0: the six joints of a UR5e then leave the posture a
    share of the torque)."""
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    q, qd = np.array([0.3, -1.2, 1.4, -1.0, -1.4, 0.3]), np.full(6, 0.2)
    T = rd.frame_pose(model, q + 0.1)
    posture = dict(nullspace_q=np.zeros(6), nullspace_kp=9.0, damping=0.05)
    expected = rd.task_space_control(model, q, qd, T, kp=50.0, kd=10.0, **posture)
    K = np.zeros((12, 12))
    K[::2, ::2] = 50.0 * np.eye(6)
    for kp, kd in ((50, 10), ([50.0] * 6, np.full(6, 10, dtype=np.int32)),
                   (50.0 * np.eye(6), (10.0 * np.eye(6)).tolist()),
                   (K[::2, ::2], np.full(6, 10.0, dtype=np.float32))):
        np.testing.assert_allclose(rd.task_space_control(model, q, qd, T, kp=kp, kd=kd, **posture), expected,
                                   rtol=1e-12, atol=1e-12)
    for kp0, kd0 in ((9, None), (np.full(6, 9.0), 6.0), ([9.0] * 6, [6.0] * 6)):
        tau = rd.task_space_control(model, q, qd, T, kp=50.0, kd=10.0, nullspace_q=np.zeros(6),
                                    nullspace_kp=kp0, nullspace_kd=kd0, damping=0.05)
        np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-12)
    other = rd.task_space_control(model, q, qd, T, kp=50.0, kd=10.0, nullspace_q=np.zeros(6),
                                  nullspace_kp=4.0, damping=0.05)
    assert np.abs(other - expected).max() > 1e-6, "the null-space gains must reach the torque"


def test_fewer_than_six_joints_ask_for_damping():
    model = rd.load_urdf(str(PENDULUM))
    q, qd = np.array([0.3]), np.array([0.1])
    T = rd.frame_pose(model, np.array([0.5]))
    with pytest.raises(ValueError, match="damping > 0"):
        rd.task_space_control(model, q, qd, T)
    tau = rd.task_space_control(model, q, qd, T, damping=1e-3)
    assert np.isfinite(tau).all() and tau.shape == (1,)
