"""Contact sensing against Pinocchio: the momentum balance p = M q̇, β = Cᵀq̇ − g from Pinocchio's
crba, computeCoriolisMatrix and computeGeneralizedGravity; the momentum observer fed the sampled
states of a plant integrated with Pinocchio's ABA (classical RK4, τ held over each 1 ms step, the
external wrench applied through Pinocchio's frame Jacobian at every stage); external_wrench against
Pinocchio's Jacobians.
"""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

pin = pytest.importorskip("pinocchio")

DT = 1e-3
ARMS = ["ur5", "panda_locked"]          # n = 6 and n = 7


def pin_jacobian_local(P, q, frame=None):
    """J_b (6, n) of `frame` (default the tip) by Pinocchio, angular rows first, our joint order."""
    pin.computeJointJacobians(P.pm, P.pd, P.pin_q(q))
    pin.updateFramePlacements(P.pm, P.pd)
    return P.jac(pin.getFrameJacobian(P.pm, P.pd, P.frame_id(frame or P.model.tip_frame), pin.LOCAL))


def pin_acceleration(P, q, qd, tau, wrench=None, viscous=0.0, coulomb=0.0):
    """q̈ = ABA(q, q̇, τ + J_bᵀ F − F_v q̇ − F_s sgn(q̇)) by Pinocchio: F the wrench ON the robot at
    the tip, in the tip frame's coordinates (angular first)."""
    net = np.array(tau, dtype=float) - viscous * qd - coulomb * np.sign(qd)
    if wrench is not None:
        net = net + pin_jacobian_local(P, q).T @ wrench
    return P.vec(pin.aba(P.pm, P.pd, P.pin_q(q), P.pin_v(qd), P.pin_v(net)).copy())


def plant_step(P, q, qd, tau, wrench_at, t, **friction):
    """One classical RK4 step of DT with τ held; the wrench wrench_at(t) (None = none) evaluated at
    each stage's time. Returns (q, q̇) at the end of the step."""
    def f(s, q_, v_):
        w = wrench_at(t + s)
        return pin_acceleration(P, q_, v_, tau, w, **friction)
    k1q, k1v = qd, f(0.0, q, qd)
    k2q, k2v = qd + DT / 2 * k1v, f(DT / 2, q + DT / 2 * k1q, qd + DT / 2 * k1v)
    k3q, k3v = qd + DT / 2 * k2v, f(DT / 2, q + DT / 2 * k2q, qd + DT / 2 * k2v)
    k4q, k4v = qd + DT * k3v, f(DT, q + DT * k3q, qd + DT * k3v)
    return q + DT / 6 * (k1q + 2 * k2q + 2 * k3q + k4q), qd + DT / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)


def pose(P):
    """A pose inside the limits and away from singularities: a quarter of the way from the middle of
    each joint's range towards its upper limit."""
    lo, hi = np.maximum(P.model.lower, -np.pi), np.minimum(P.model.upper, np.pi)
    return 0.5 * (lo + hi) + 0.25 * (hi - lo) * 0.5


# ---------------------------------------------------------------------------------------------

def test_momentum_balance(pair, check):
    """p = M(q) q̇ and β = C(q, q̇)ᵀ q̇ − g(q) with Pinocchio's crba, its Christoffel-consistent
    computeCoriolisMatrix and computeGeneralizedGravity."""
    for q, qd, _ in zip(*pair.states(6, seed=31)):
        pq, pv = pair.pin_q(q), pair.pin_v(qd)
        M = pin.crba(pair.pm, pair.pd, pq).copy()
        M = pair.mat(np.triu(M) + np.triu(M, 1).T)
        C = pair.mat(pin.computeCoriolisMatrix(pair.pm, pair.pd, pq, pv).copy())
        g = pair.vec(pin.computeGeneralizedGravity(pair.pm, pair.pd, pq).copy())
        p, beta = rd.momentum_balance(pair.model, q, qd)
        check("momentum p = M qd", pair.name, p, M @ qd)
        check("momentum balance beta = C^T qd - g", pair.name, beta, C.T @ qd - g)


@pytest.mark.parametrize("pair", ARMS, indirect=True)
def test_no_phantom_torque_while_the_arm_swings(pair):
    """No contact, the arm moving at about 1 rad/s in every joint (τ = c + g + τ_f at each sample,
    held): exact samples at 1 ms give |r| < 1e-3 N·m for 2 s, with viscous and Coulomb friction in
    the plant taken out by the observer's `friction`. Without `friction` the observer sees them."""
    m = pair.model
    viscous, coulomb = np.linspace(0.2, 0.5, m.nq), np.linspace(0.3, 0.1, m.nq)
    friction = {"viscous": viscous, "coulomb": coulomb}
    observer = rd.MomentumObserver(m, 50.0, friction=(viscous, coulomb))
    blind = rd.MomentumObserver(m, 50.0)
    q, qd = pose(pair), np.ones(m.nq)
    observer.update(q, qd, np.zeros(m.nq), DT)
    blind.update(q, qd, np.zeros(m.nq), DT)
    worst, speeds = 0.0, []
    for k in range(2000):
        tau = rd.bias_forces(m, q, qd) + viscous * qd + coulomb * np.sign(qd)
        q, qd = plant_step(pair, q, qd, tau, lambda t: None, k * DT, **friction)
        r = observer.update(q, qd, tau, DT)
        r_blind = blind.update(q, qd, tau, DT)
        worst = max(worst, float(np.abs(r).max()))
        speeds.append(float(np.abs(qd).min()))
    assert min(speeds) > 0.5, "the arm must keep moving at about 1 rad/s in every joint"
    print(f"{pair.name}: phantom {worst:.2e} N·m, blind {np.abs(r_blind).max():.2f} N·m")
    assert worst < 1e-3, f"phantom external torque {worst:.2e} N·m while moving without contact"
    # the friction torques the plant felt show up as an external torque of the opposite sign
    np.testing.assert_allclose(r_blind, -(viscous * qd + coulomb * np.sign(qd)), atol=2e-3)


@pytest.mark.parametrize("pair", ARMS, indirect=True)
def test_constant_wrench_on_a_still_arm_converges(pair):
    """The arm held still against gravity and a constant wrench at the tip (τ = g − J_bᵀ F): after 2 s
    at K = 50 the estimate equals τ_ext = J_bᵀ F to 1e-3 relative, and external_wrench gives F back."""
    m = pair.model
    q, qd = pose(pair), np.zeros(m.nq)
    F = np.array([0.8, -0.5, 0.3, 12.0, -7.0, 20.0])        # on the robot, tip frame, angular first
    tau_ext = pin_jacobian_local(pair, q).T @ F
    tau = rd.gravity_torques(m, q) - tau_ext
    observer = rd.MomentumObserver(m, 50.0)
    observer.reset(q, qd)
    for k in range(2000):
        q, qd = plant_step(pair, q, qd, tau, lambda t: F, k * DT)
        r = observer.update(q, qd, tau, DT)
    assert np.abs(qd).max() < 1e-9, "the arm must stay still"
    relative = np.abs(r - tau_ext).max() / np.abs(tau_ext).max()
    print(f"{pair.name}: still, error after 2 s {relative:.1e} relative")
    assert np.abs(r - tau_ext).max() < 1e-3 * np.abs(tau_ext).max()
    np.testing.assert_allclose(rd.external_wrench(m, q, r), F, rtol=0, atol=2e-3 * np.abs(F).max())


@pytest.mark.parametrize("pair", ARMS, indirect=True)
def test_estimate_follows_the_first_order_response_while_moving(pair):
    """A wrench switched on at t ≈ 0.3 s while the arm moves: the estimate follows the true τ_ext(t) =
    J_b(q(t))ᵀ F through K/(s + K), integrated here alongside the plant (RK4, the same stages), to
    5e-3 of max |τ_ext|; per-joint gains."""
    m = pair.model
    gain = np.linspace(20.0, 80.0, m.nq)
    F = np.array([0.0, 1.0, -0.5, 15.0, 10.0, -5.0])
    # on from t = 0.29975 s: the last stage of the step that ends at 0.3 s sees it, no stage time is
    # ambiguous
    wrench_at = lambda t: F if t > 0.29975 else None  # noqa: E731
    observer = rd.MomentumObserver(m, gain)
    q, qd = pose(pair), 0.5 * np.ones(m.nq)
    observer.reset(q, qd)
    filtered = np.zeros(m.nq)          # the continuous K/(s + K) response of the true τ_ext(t)
    worst, scale, rise = 0.0, 0.0, 0.0
    for k in range(1000):
        t = k * DT
        tau = rd.bias_forces(m, q, qd) + 2.0 * np.sin(3.0 * t) * np.ones(m.nq)

        def f(s, x):
            q_, v_, y = x
            w = wrench_at(t + s)
            ext = np.zeros(m.nq) if w is None else pin_jacobian_local(pair, q_).T @ w
            return v_, pin_acceleration(pair, q_, v_, tau, w), gain * (ext - y)
        x = (q, qd, filtered)
        k1 = f(0.0, x)
        k2 = f(DT / 2, tuple(a + DT / 2 * b for a, b in zip(x, k1)))
        k3 = f(DT / 2, tuple(a + DT / 2 * b for a, b in zip(x, k2)))
        k4 = f(DT, tuple(a + DT * b for a, b in zip(x, k3)))
        q, qd, filtered = (a + DT / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
                           for a, b1, b2, b3, b4 in zip(x, k1, k2, k3, k4))
        r = observer.update(q, qd, tau, DT)
        worst = max(worst, float(np.abs(r - filtered).max()))
        scale = max(scale, float(np.abs(pin_jacobian_local(pair, q).T @ F).max()))
        rise = max(rise, float(np.abs(filtered).max()))
    print(f"{pair.name}: worst {worst:.2e}, scale {scale:.2f}, rise {rise:.2f}")
    assert rise > 0.3 * scale, "the response must have risen to the torque"
    assert worst < 5e-3 * scale, f"estimate vs K/(s+K) of the true torque: {worst:.2e} of {scale:.1f} N·m"


@pytest.mark.parametrize("reference,pin_reference", [
    ("body", "LOCAL"), ("world_aligned", "LOCAL_WORLD_ALIGNED"), ("space", "WORLD")])
@pytest.mark.parametrize("pair", ARMS, indirect=True)
def test_external_wrench_is_exact_for_six_and_seven_joints(pair, reference, pin_reference):
    """τ_ext = Jᵀ F with Pinocchio's frame Jacobian in each reference: external_wrench returns F to 1e-9
    (n = 6: the unique solution; n = 7: the consistent overdetermined system)."""
    m = pair.model
    rng = np.random.default_rng(7)
    for q, _, _ in zip(*pair.states(4, seed=5)):
        pin.computeJointJacobians(pair.pm, pair.pd, pair.pin_q(q))
        pin.updateFramePlacements(pair.pm, pair.pd)
        J = pair.jac(pin.getFrameJacobian(pair.pm, pair.pd, pair.frame_id(m.tip_frame),
                                          getattr(pin, pin_reference)))
        F = rng.normal(size=6) * np.array([1, 1, 1, 10, 10, 10])
        ours = rd.external_wrench(m, q, J.T @ F, reference=reference)
        assert np.abs(ours - F).max() < 1e-9 * max(1.0, np.abs(F).max())
