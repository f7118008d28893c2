"""Computed torque, the batched trajectory calls and the integrators against Pinocchio.

The integrators are checked against steps written here around pin.aba (the textbook's EulerStep,
semi-implicit Euler, classical RK4 with τ held over the step), with the same friction and tip wrench.
"""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

pin = pytest.importorskip("pinocchio")

N_STATES = 6


def pin_M(P, q):
    M = pin.crba(P.pm, P.pd, P.pin_q(q)).copy()
    return P.mat(np.triu(M) + np.triu(M, 1).T)


def pin_fd(P, q, qd, tau, f_tip=None, frame=None, friction=False):
    """q̈ = ABA(q, q̇, τ − J_bᵀ F − damping·q̇ − friction·sgn(q̇)) by Pinocchio, our joint order."""
    net = np.array(tau, dtype=float)
    if friction:
        net = net - P.vec(P.pm.damping) * qd - P.vec(P.pm.friction) * np.sign(qd)
    if f_tip is not None:
        pin.computeJointJacobians(P.pm, P.pd, P.pin_q(q))
        pin.updateFramePlacements(P.pm, P.pd)
        J = P.jac(pin.getFrameJacobian(P.pm, P.pd, P.frame_id(frame or P.model.tip_frame), pin.LOCAL))
        net = net - J.T @ f_tip
    return P.vec(pin.aba(P.pm, P.pd, P.pin_q(q), P.pin_v(qd), P.pin_v(net)).copy())


def reference_step(method, P, q, qd, tau, dt, **kw):
    f = lambda q_, v_: pin_fd(P, q_, v_, tau, **kw)  # noqa: E731
    if method == "euler":
        return q + dt * qd, qd + dt * f(q, qd)
    if method == "semi_implicit_euler":
        v = qd + dt * f(q, qd)
        return q + dt * v, v
    k1q, k1v = qd, f(q, qd)
    k2q, k2v = qd + dt / 2 * k1v, f(q + dt / 2 * k1q, qd + dt / 2 * k1v)
    k3q, k3v = qd + dt / 2 * k2v, f(q + dt / 2 * k2q, qd + dt / 2 * k2v)
    k4q, k4v = qd + dt * k3v, f(q + dt * k3q, qd + dt * k3v)
    return (q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q), qd + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v))


STEPS = {"euler": rd.euler_step, "semi_implicit_euler": rd.semi_implicit_euler_step, "rk4": rd.rk4_step}


# ---------------------------------------------------------------------------------------------

def test_computed_torque(pair, check):
    """τ = M(q̈_d + K_d ė + K_p e) + nle (Pinocchio's M and nonLinearEffects), gains as scalars,
    per-joint vectors and full matrices."""
    Q, QD, QDD = pair.states(N_STATES, seed=30)
    rng = np.random.default_rng(30)
    n = pair.n
    A = rng.normal(size=(n, n))
    gains = [(100.0, 20.0), (np.linspace(50, 150, n), np.linspace(10, 30, n)),
             (A @ A.T + n * np.eye(n), 5 * np.eye(n) + 0.1 * A)]
    for q, qd, qdd_d in zip(Q, QD, QDD):
        q_d, qd_d = q + 0.1 * rng.normal(size=n), qd + 0.1 * rng.normal(size=n)
        nle = pair.vec(pin.nonLinearEffects(pair.pm, pair.pd, pair.pin_q(q), pair.pin_v(qd)).copy())
        for kp, kd in gains:
            Kp = np.diag(np.broadcast_to(kp, (n,))) if np.ndim(kp) < 2 else kp
            Kd = np.diag(np.broadcast_to(kd, (n,))) if np.ndim(kd) < 2 else kd
            ref = pin_M(pair, q) @ (qdd_d + Kd @ (qd_d - qd) + Kp @ (q_d - q)) + nle
            check("computed_torque", pair.name,
                  rd.computed_torque(pair.model, q, qd, q_d, qd_d, qdd_d, kp, kd), ref)


def tip_jacobians_T(P, Q):
    """J_bᵀ of the tip frame (Pinocchio LOCAL) at each q, stacked (N, n, 6)."""
    Jt = []
    for q in Q:
        pin.computeJointJacobians(P.pm, P.pd, P.pin_q(q))
        pin.updateFramePlacements(P.pm, P.pd)
        Jt.append(P.jac(pin.getFrameJacobian(P.pm, P.pd, P.frame_id(P.model.tip_frame), pin.LOCAL)).T)
    return np.array(Jt)


def pin_rnea_trajectory(P, Q, QD, QDD):
    return np.array([P.vec(pin.rnea(P.pm, P.pd, P.pin_q(q), P.pin_v(v), P.pin_v(a)).copy())
                     for q, v, a in zip(Q, QD, QDD)])


def test_trajectories(pair, check):
    """inverse_dynamics_trajectory (also with a constant tip wrench and friction),
    mass_matrix_trajectory and forward_dynamics_trajectory against Pinocchio in a loop."""
    Q, QD, QDD = pair.states(10, seed=31)
    rng = np.random.default_rng(31)
    P, m = pair, pair.model
    F = rng.normal(scale=5.0, size=6)
    tau = rng.normal(scale=5.0, size=Q.shape)
    rnea = pin_rnea_trajectory(P, Q, QD, QDD)
    check("inverse_dynamics_trajectory", P.name, rd.inverse_dynamics_trajectory(m, Q, QD, QDD), rnea)
    ref = rnea + tip_jacobians_T(P, Q) @ F + P.vec(P.pm.damping) * QD + P.vec(P.pm.friction) * np.sign(QD)
    check("inverse_dynamics_trajectory(f_tip, friction)", P.name,
          rd.inverse_dynamics_trajectory(m, Q, QD, QDD, f_tip=F, friction=True), ref)
    check("mass_matrix_trajectory", P.name, rd.mass_matrix_trajectory(m, Q),
          np.array([pin_M(P, q) for q in Q]))
    check("forward_dynamics_trajectory", P.name, rd.forward_dynamics_trajectory(m, Q, QD, tau),
          np.array([pin_fd(P, q, v, t) for q, v, t in zip(Q, QD, tau)]))
    check("forward_dynamics_trajectory(friction)", P.name,
          rd.forward_dynamics_trajectory(m, Q, QD, tau, friction=True),
          np.array([pin_fd(P, q, v, t, friction=True) for q, v, t in zip(Q, QD, tau)]))


@pytest.mark.parametrize("pair", ["ur5", "panda"], indirect=True)
def test_inverse_dynamics_trajectory_per_state_tip_wrench(pair, check):
    """f_tip of shape (N, 6): one wrench per state (the contract's 'f_tip: (N, 6) or (6,)').
    (Failed with a numba TypeError before d31ada9: the (N, 6) array reached the kernel read-only.)"""
    Q, QD, QDD = pair.states(10, seed=34)
    F = np.random.default_rng(34).normal(scale=5.0, size=(len(Q), 6))
    ref = pin_rnea_trajectory(pair, Q, QD, QDD) + np.einsum("kij,kj->ki", tip_jacobians_T(pair, Q), F)
    check("inverse_dynamics_trajectory(f_tip per state)", pair.name,
          rd.inverse_dynamics_trajectory(pair.model, Q, QD, QDD, f_tip=F), ref)


@pytest.mark.parametrize("method", STEPS)
def test_one_step(pair, method, check):
    """One step of each integrator = the same step around pin.aba; with friction and a tip wrench too."""
    Q, QD, _ = pair.states(3, seed=32)
    rng = np.random.default_rng(32)
    for q, qd in zip(Q, QD):
        tau, F = rng.normal(scale=5.0, size=pair.n), rng.normal(size=6)
        for dt in (1e-3, 1e-2):
            ours = STEPS[method](pair.model, q, qd, tau, dt)
            ref = reference_step(method, pair, q, qd, tau, dt)
            check(f"{method}_step", pair.name, np.concatenate(ours), np.concatenate(ref))
        ours = STEPS[method](pair.model, q, qd, tau, 1e-3, f_tip=F, friction=True)
        ref = reference_step(method, pair, q, qd, tau, 1e-3, f_tip=F, friction=True)
        check(f"{method}_step(f_tip, friction)", pair.name, np.concatenate(ours), np.concatenate(ref))


@pytest.mark.parametrize("method", STEPS)
def test_simulate(pair, method, check):
    """simulate(steps=5) with a torque array (compiled loop) and with a callable (a PD law) equals
    five reference steps around pin.aba."""
    q0, qd0, _ = (x[0] for x in pair.states(1, seed=33))
    rng = np.random.default_rng(33)
    steps, dt = 5, 2e-3
    taus = rng.normal(scale=5.0, size=(steps, pair.n))
    traj = rd.simulate(pair.model, q0, qd0, taus, dt, steps, method=method)
    q, qd = q0, qd0
    ref_q, ref_qd = [q], [qd]
    for k in range(steps):
        q, qd = reference_step(method, pair, q, qd, taus[k], dt)
        ref_q.append(q)
        ref_qd.append(qd)
    check(f"simulate[{method}]", pair.name, np.hstack([traj.q, traj.qd]), np.hstack([ref_q, ref_qd]))

    # xArm7's URDF damping (up to 10 N·m·s/rad on light wrist links) makes the explicit methods
    # unstable above dt ~ 1e-4: keep the step small enough that the motion stays physical
    dt = 2e-5
    law = lambda t, q_, qd_: -10.0 * (q_ - q0) - 2.0 * qd_ + np.sin(t)  # noqa: E731
    traj = rd.simulate(pair.model, q0, qd0, law, dt, steps, method=method, friction=True)
    assert np.all(np.abs(traj.qd) < 100.0), "the reference motion should stay bounded"
    q, qd = q0, qd0
    ref_q, ref_qd = [q], [qd]
    for k in range(steps):
        q, qd = reference_step(method, pair, q, qd, law(k * dt, q, qd), dt, friction=True)
        ref_q.append(q)
        ref_qd.append(qd)
    check(f"simulate[{method}](callable, friction)", pair.name, np.hstack([traj.q, traj.qd]),
          np.hstack([ref_q, ref_qd]))
