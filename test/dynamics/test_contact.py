"""Contact sensing on random trees (revolute, continuous and prismatic joints, tree-shaped): the
momentum balance against the package's own M, C and g (themselves checked against Pinocchio), the
observer's algebra, external_wrench's least squares, and bad input."""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

from _residuals import EXACT, assert_close, torque_scale


def test_momentum_balance_is_M_qd_and_C_transpose_qd_minus_g(case):
    """p = M q̇ and β = Cᵀq̇ − g (C Christoffel-consistent), so that ṗ = τ + τ_ext + β: checked as
    dp/dt along a motion (central differences of p along q(t) = q + t q̇ + t²/2 q̈) against
    τ + β with τ = ID(q, q̇, q̈)."""
    tree, model, rng = case
    for _ in range(3):
        q, qd, qdd = rng.normal(size=(3, model.nq))
        M = rd.mass_matrix(model, q)
        p, beta = rd.momentum_balance(model, q, qd)
        scale = torque_scale(M, qd)
        assert_close("contact: p = M qd", p, M @ qd, EXACT, floor=scale)
        C, g = rd.coriolis_matrix(model, q, qd), rd.gravity_torques(model, q)
        assert_close("contact: beta = C^T qd - g", beta, C.T @ qd - g, EXACT, floor=scale)
        h = 1e-6
        p_of = lambda t: rd.momentum_balance(model, q + t * qd + t * t / 2 * qdd, qd + t * qdd)[0]  # noqa: E731
        pdot = (p_of(h) - p_of(-h)) / (2 * h)
        assert_close("contact: dp/dt = tau + beta", pdot, rd.inverse_dynamics(model, q, qd, qdd) + beta, 1e-6,
                     floor=scale)


def test_kinetic_energy_from_the_momentum(case):
    tree, model, rng = case
    q, qd = rng.normal(size=(2, model.nq))
    assert_close("contact: K = qd^T p / 2", rd.kinetic_energy(model, q, qd),
                 0.5 * qd @ rd.momentum_balance(model, q, qd)[0], EXACT, floor=1.0)


def test_observer_is_tustins_filter_of_the_momentum_residual(case):
    """One update by hand: r_k = K (p_k − z_k) with z_k = z_{k−1} + dt τ + dt/2 (β_{k−1} + β_k) +
    dt/2 (r_{k−1} + r_k), started at z_0 = p_0, and friction taken out of β."""
    tree, model, rng = case
    K = rng.uniform(5.0, 100.0, model.nq)
    viscous, coulomb = rng.uniform(0.0, 1.0, (2, model.nq))
    observer = rd.MomentumObserver(model, K, friction=(viscous, coulomb))
    states = [rng.normal(size=(2, model.nq)) for _ in range(4)]
    taus = rng.normal(size=(4, model.nq))
    dt = 2e-3

    def balance(q, qd):
        p, beta = rd.momentum_balance(model, q, qd)
        return p, beta - (viscous * qd + coulomb * np.sign(qd))
    z, beta_prev = balance(*states[0])
    r = np.zeros(model.nq)
    assert np.array_equal(observer.update(*states[0], taus[0], dt), r)       # the first update starts it
    for (q, qd), tau in zip(states[1:], taus[1:]):
        p, beta = balance(q, qd)
        a = p - (z + dt * tau + dt / 2 * (beta_prev + beta) + dt / 2 * r)
        r_new = K * a / (1 + K * dt / 2)
        z = z + dt * tau + dt / 2 * (beta_prev + beta) + dt / 2 * (r + r_new)
        beta_prev, r = beta, r_new
        returned = observer.update(q, qd, tau, dt)
        assert_close("contact: observer update", returned, r, 1e-12, floor=float(np.abs(p).max() * K.max()))
        assert_close("contact: r = K (p - z)", r, K * (p - z), 1e-9, floor=float(np.abs(p).max() * K.max()))
    assert np.array_equal(observer.tau_ext, returned)
    returned[:] = 1.0                        # a copy: the observer's estimate is its own
    assert not np.array_equal(observer.tau_ext, returned)
    observer.reset(*states[0])
    assert np.array_equal(observer.tau_ext, np.zeros(model.nq)) and observer.started


def test_external_wrench_least_squares_and_minimum_norm(case):
    """Jᵀ F = τ_ext in the least-squares sense; where F is not determined (n < 6, or joints that do not
    move the frame), the minimum-norm F: it lies in the range of J. Damped: (J Jᵀ + λ 1) F = J τ."""
    tree, model, rng = case
    q = rng.normal(size=model.nq)
    for reference in ("body", "world_aligned", "space"):
        J = rd.jacobian(model, q, reference=reference)
        tau = J.T @ rng.normal(size=6) + (rng.normal(size=model.nq) if model.nq > 6 else 0.0)
        F = rd.external_wrench(model, q, tau, reference=reference)
        # normal equations of the least squares: J (Jᵀ F − τ) = 0; minimum norm: F in range(J)
        assert_close(f"contact: J (J^T F - tau) = 0 [{reference}]", J @ (J.T @ F - tau), np.zeros(6), 1e-9,
                     floor=float(np.abs(J).max() ** 2 * np.abs(F).max() + 1.0))
        U, s, _ = np.linalg.svd(J)
        null = U[:, np.sum(s > 1e-10 * s.max()):]
        if null.size:
            assert np.abs(null.T @ F).max() <= 1e-9 * max(1.0, np.abs(F).max())
        damped = rd.external_wrench(model, q, tau, reference=reference, damping=0.1)
        assert_close(f"contact: damped [{reference}]", (J @ J.T + 0.1 * np.eye(6)) @ damped, J @ tau, 1e-9,
                     floor=float(np.abs(J @ tau).max() + 1.0))


def test_external_wrench_references_are_one_wrench():
    """The same contact seen in the frame's axes, in the root's axes at the frame, and at the root:
    f the same vector rotated; the moment at the root adds p × f."""
    model = rd.load_urdf(_ARM)
    q = np.array([0.3, -0.7, 1.1, 0.2, -0.4, 0.9])
    F_body = np.array([0.2, -0.1, 0.4, 5.0, -3.0, 8.0])
    tau = rd.jacobian(model, q, reference="body").T @ F_body
    T = rd.frame_pose(model, q)
    R, p = T[:3, :3], T[:3, 3]
    F_aligned = rd.external_wrench(model, q, tau, reference="world_aligned")
    F_space = rd.external_wrench(model, q, tau, reference="space")
    np.testing.assert_allclose(rd.external_wrench(model, q, tau), F_body, atol=1e-10)
    np.testing.assert_allclose(F_aligned, np.r_[R @ F_body[:3], R @ F_body[3:]], atol=1e-10)
    np.testing.assert_allclose(F_space, np.r_[F_aligned[:3] + np.cross(p, F_aligned[3:]), F_aligned[3:]],
                               atol=1e-10)


_ARM = """<robot name="arm6">
<link name="base"/>""" + "".join(
    f"""<link name="l{i}"><inertial><origin xyz="0.02 0.01 0.1"/><mass value="{2.0 - 0.2 * i}"/>
<inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0.002" izz="0.01"/></inertial></link>
<joint name="j{i}" type="revolute"><parent link="{'base' if i == 0 else f'l{i - 1}'}"/>
<child link="l{i}"/>
<origin xyz="0 0.05 0.2" rpy="{0.3 * i} {0.5 if i % 2 else 0} 0"/>
<axis xyz="{'0 0 1' if i % 2 == 0 else '0 1 0'}"/>
<limit effort="50" velocity="3" lower="-3" upper="3"/></joint>""" for i in range(6)) + "</robot>"


def test_bad_input_is_refused_naming_it_and_changes_nothing():
    model = rd.load_urdf(_ARM)
    n = model.nq
    q, qd, tau = np.full(n, 0.3), np.full(n, 0.5), np.full(n, 1.0)
    observer = rd.MomentumObserver(model, 50.0)
    observer.update(q, qd, tau, 1e-3)
    before = observer.update(q + 0.001, qd, tau, 1e-3)
    state = observer._state[:2].copy()      # z and the previous β (rows 2-4: scratch)
    bad = {"q": (np.r_[np.nan, q[1:]], qd, tau, 1e-3), "qd": (q, qd[:-1], tau, 1e-3),
           "tau": (q, qd, np.r_[tau[:-1], np.inf], 1e-3), "dt": (q, qd, tau, 0.0)}
    for name, args in bad.items():
        with pytest.raises(ValueError, match=rf"\b{name}\b"):
            observer.update(*args)
    for dt in (-1e-3, np.nan, "0.001", None):
        with pytest.raises(ValueError, match=r"\bdt\b"):
            observer.update(q, qd, tau, dt)
    assert np.array_equal(observer.tau_ext, before) and np.array_equal(observer._state[:2], state)
    # forms numpy converts without changing the values are taken, with the same result
    twin = rd.MomentumObserver(model, 50.0)
    twin.update(q, qd, tau, 1e-3)
    twin.update(q + 0.001, qd, tau, 1e-3)
    assert np.array_equal(observer.update(list(q), tuple(qd), tau.astype(np.float32), np.float64(1e-3)),
                          twin.update(q, qd, tau.astype(np.float32).astype(float), 1e-3))
    for gain in (0.0, -1.0, np.nan, [1.0] * (n - 1), "50", True):
        with pytest.raises(ValueError, match="gain"):
            rd.MomentumObserver(model, gain)
    with pytest.raises(ValueError, match="friction"):
        rd.MomentumObserver(model, 50.0, friction=(1.0,))
    with pytest.raises(ValueError, match="tau_ext"):
        rd.external_wrench(model, q, tau[:-1])
    with pytest.raises(ValueError, match="damping"):
        rd.external_wrench(model, q, tau, damping=-1.0)
    with pytest.raises(ValueError, match="reference"):
        rd.external_wrench(model, q, tau, reference="tool")


def test_an_overflow_is_an_error_and_changes_nothing():
    model = rd.load_urdf(_ARM)
    n = model.nq
    observer = rd.MomentumObserver(model, 50.0)
    observer.update(np.zeros(n), np.zeros(n), np.zeros(n), 1e-3)
    state = observer._state[:2].copy()      # z and the previous β (rows 2-4: scratch)
    with pytest.raises(ValueError, match="overflowed"):
        observer.update(np.zeros(n), np.full(n, 1e200), np.zeros(n), 1e-3)
    assert np.array_equal(observer._state[:2], state) and np.array_equal(observer.tau_ext, np.zeros(n))
