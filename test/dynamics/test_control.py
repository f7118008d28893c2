"""Computed torque (eq. 11.35 without the integral term) linearises the plant exactly: with
τ = computed_torque(...) and the plant q̈ = forward_dynamics(τ), q̈ = q̈_d + K_d ė + K_p e.
Exact identity: relative residual ≤ EXACT."""
import numpy as np

from robot_dynamics_ros import dynamics as rd

from _residuals import EXACT, assert_close


def test_computed_torque_imposes_linear_error_dynamics(case, states):
    _, model, rng = case
    n = model.nq
    A = rng.normal(size=(n, n))
    gains = [(25.0, 10.0), (rng.uniform(1, 50, n), rng.uniform(1, 10, n)),
             (A @ A.T + n * np.eye(n), np.eye(n) * 3.0)]
    for q, qd, _ in states:
        q_des, qd_des, qdd_des = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
        e, edot = q_des - q, qd_des - qd
        for kp, kd in gains:
            Kp = np.diag(np.broadcast_to(kp, n)) if np.ndim(kp) < 2 else kp
            Kd = np.diag(np.broadcast_to(kd, n)) if np.ndim(kd) < 2 else kd
            expected = qdd_des + Kd @ edot + Kp @ e
            tau = rd.computed_torque(model, q, qd, q_des, qd_des, qdd_des, kp, kd)
            assert_close("computed torque: qdd = qdd_d + Kd e' + Kp e",
                         rd.forward_dynamics(model, q, qd, tau), expected, EXACT)
            friction = (rng.uniform(0, 1, n), rng.uniform(0, 1, n))
            tau = rd.computed_torque(model, q, qd, q_des, qd_des, qdd_des, kp, kd, friction=friction)
            assert_close("computed torque with friction compensation",
                         rd.forward_dynamics(model, q, qd, tau, friction=friction), expected, EXACT)


def test_computed_torque_at_the_reference_is_inverse_dynamics(model, states):
    for q, qd, qdd in states:
        assert_close("computed torque, zero error = ID",
                     rd.computed_torque(model, q, qd, q, qd, qdd, 100.0, 20.0),
                     rd.inverse_dynamics(model, q, qd, qdd), EXACT)
