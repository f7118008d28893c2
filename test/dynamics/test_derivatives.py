"""inverse_dynamics_derivatives and forward_dynamics_derivatives where Pinocchio is not compared here:
central finite differences on mimic models, with a tip wrench and with friction; the identities that tie
the two together; bad input. (Against Pinocchio: test/reference/test_ref_pinocchio_derivatives.py.)"""
import numpy as np
import pytest
from test_mimic import ROBOTS as MIMIC_ROBOTS, _urdf

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import resources

from _random_trees import random_tree

H = 1e-6


def _central(f, x):
    """∂f/∂x by central differences of step H (columns: the entries of x)."""
    columns = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = H
        columns.append((f(x + e) - f(x - e)) / (2 * H))
    return np.column_stack(columns)


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("name", sorted(MIMIC_ROBOTS))
def test_mimic_models_match_finite_differences(name):
    joints, seed = MIMIC_ROBOTS[name]
    model = rd.load_urdf(_urdf(joints, seed))
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-0.01, 0.03, (3, model.nq))
    dq, dqd = rd.inverse_dynamics_derivatives(model, q, qd, qdd)
    _close(dq, _central(lambda x: rd.inverse_dynamics(model, x, qd, qdd), q))
    _close(dqd, _central(lambda x: rd.inverse_dynamics(model, q, x, qdd), qd))


@pytest.mark.parametrize("seed", range(3))
def test_a_tip_wrench_and_friction_are_differentiated(seed):
    """f_tip (constant in the frame's coordinates) turns with the frame: it shows in ∂τ/∂q; viscous
    friction adds diag(F_v) to ∂τ/∂q̇ (q̇ away from 0, where Coulomb friction is constant)."""
    model = rd.load_urdf(random_tree(40 + seed, 7).to_urdf())
    rng = np.random.default_rng(seed)
    q, qdd = rng.uniform(-1, 1, (2, model.nq))
    qd = rng.uniform(0.2, 1.0, model.nq) * rng.choice([-1, 1], model.nq)
    f_tip = rng.normal(size=6)
    kw = dict(f_tip=f_tip, frame="tool0", friction=True)
    dq, dqd = rd.inverse_dynamics_derivatives(model, q, qd, qdd, **kw)
    _close(dq, _central(lambda x: rd.inverse_dynamics(model, x, qd, qdd, **kw), q))
    _close(dqd, _central(lambda x: rd.inverse_dynamics(model, q, x, qdd, **kw), qd))
    tau = rng.normal(size=model.nq)
    a_q, a_qd, a_tau = rd.forward_dynamics_derivatives(model, q, qd, tau, **kw)
    _close(a_q, _central(lambda x: rd.forward_dynamics(model, x, qd, tau, **kw), q))
    _close(a_qd, _central(lambda x: rd.forward_dynamics(model, q, x, tau, **kw), qd))
    _close(a_tau, _central(lambda x: rd.forward_dynamics(model, q, qd, x, **kw), tau))


def test_the_identities_between_them():
    """∂q̈/∂τ = M⁻¹ (symmetric); ∂q̈/∂x = −M⁻¹ ∂τ/∂x at q̈ = FD; with q̇ = 0, ∂τ/∂q̇ = 0 ... of the
    Coriolis part only: 2 C-symmetric terms vanish, so ∂τ/∂q̇ at q̇ = 0 is 0; at q̈ = q̇ = 0, ∂τ/∂q is
    ∂g/∂q, symmetric (g is a gradient, of the potential energy); ∂τ/∂q̇ = 2 C(q, q̇), C Christoffel-consistent
    (c = C q̇ is quadratic in q̇ and Γ_ijk symmetric in j, k), at any q̈."""
    model = rd.load_urdf(random_tree(5, 8).to_urdf())
    rng = np.random.default_rng(5)
    q, qd, tau = rng.uniform(-1, 1, (3, model.nq))
    a_q, a_qd, Minv = rd.forward_dynamics_derivatives(model, q, qd, tau)
    M = rd.mass_matrix(model, q)
    _close(Minv @ M, np.eye(model.nq), 1e-12)
    np.testing.assert_array_equal(Minv, Minv.T)
    qdd = rd.forward_dynamics(model, q, qd, tau)
    dq, dqd = rd.inverse_dynamics_derivatives(model, q, qd, qdd)
    _close(a_q, -Minv @ dq, 1e-12)
    _close(a_qd, -Minv @ dqd, 1e-12)
    _close(dqd, 2.0 * rd.coriolis_matrix(model, q, qd), 1e-12)
    zero = np.zeros(model.nq)
    dg, dqd0 = rd.inverse_dynamics_derivatives(model, q, zero, zero)
    np.testing.assert_array_equal(dqd0, np.zeros_like(dqd0))
    _close(dg, dg.T, 1e-12)


def test_bad_input_is_refused_naming_it():
    model = rd.load_urdf(random_tree(3, 4).to_urdf())
    good = np.zeros(model.nq)
    for name in ("q", "qd", "qdd"):
        args = dict(q=good, qd=good, qdd=good)
        args[name] = np.full(model.nq, np.nan)
        with pytest.raises(ValueError, match=name):
            rd.inverse_dynamics_derivatives(model, **args)
    for name in ("q", "qd", "tau"):
        args = dict(q=good, qd=good, tau=good)
        args[name] = np.zeros(model.nq + 1)
        with pytest.raises(ValueError, match=name):
            rd.forward_dynamics_derivatives(model, **args)
    with pytest.raises(ValueError, match="f_tip"):
        rd.inverse_dynamics_derivatives(model, good, good, good, f_tip=np.zeros(5))
    with pytest.raises(ValueError, match="nowhere"):
        rd.forward_dynamics_derivatives(model, good, good, good, f_tip=np.zeros(6), frame="nowhere")


@pytest.mark.parametrize("method", ["rk4", "semi_implicit_euler", "euler"])
def test_linearize_is_the_step_differentiated(method):
    """A and B against central differences of the step itself (rk4_step, ...), to what differences of
    step 1e-6 allow."""
    model = rd.load_urdf(random_tree(21, 6).to_urdf())
    step = {"rk4": rd.rk4_step, "semi_implicit_euler": rd.semi_implicit_euler_step,
            "euler": rd.euler_step}[method]
    rng = np.random.default_rng(2)
    q, qd, tau = rng.uniform(-1, 1, (3, model.nq))
    dt, n = 0.01, model.nq
    A, B = rd.linearize(model, q, qd, tau, dt, method)
    x = np.concatenate([q, qd])
    _close(A, _central(lambda y: np.concatenate(step(model, y[:n], y[n:], tau, dt)), x))
    _close(B, _central(lambda u: np.concatenate(step(model, q, qd, u, dt)), tau))
    As, Bs = rd.linearize_trajectory(model, np.array([q, qd]), np.array([qd, q]), np.array([tau, tau]), dt,
                                     method)
    np.testing.assert_array_equal(As[0], A)
    np.testing.assert_array_equal(Bs[0], B)
    with pytest.raises(ValueError, match="method"):
        rd.linearize(model, q, qd, tau, dt, "midpoint")


def test_an_lqr_from_linearize_stabilises_the_arm_in_simulate():
    """The README's example: a discrete LQR (numpy Riccati iteration) designed on linearize around a
    pose, with the gravity torque as feed-forward, brings the arm back from a perturbed start in
    simulate() (RK4, the same step it was designed on)."""
    model = rd.load_urdf(resources.default_urdf())
    n, dt = model.nq, 0.002
    q_eq = np.array([0.0, -1.2, 1.5, -1.0, -1.57, 0.0])
    tau_eq = rd.gravity_torques(model, q_eq)
    A, B = rd.linearize(model, q_eq, np.zeros(n), tau_eq, dt)
    Q, R = np.diag([100.0] * n + [1.0] * n), 0.01 * np.eye(n)
    P = Q.copy()
    for _ in range(5000):                   # P = Q + Aᵀ P A − Aᵀ P B (R + Bᵀ P B)⁻¹ Bᵀ P A
        K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P_next = Q + A.T @ P @ (A - B @ K)
        if np.abs(P_next - P).max() < 1e-9 * np.abs(P).max():
            break
        P = P_next
    assert np.abs(np.linalg.eigvals(A - B @ K)).max() < 1.0
    x_eq = np.concatenate([q_eq, np.zeros(n)])
    q0 = q_eq + np.array([0.1, -0.08, 0.1, 0.1, -0.1, 0.15])

    def law(t, q, qd):
        return tau_eq - K @ (np.concatenate([q, qd]) - x_eq)

    result = rd.simulate(model, q0, np.zeros(n), law, dt, 1500)         # 3 s
    error = np.abs(np.concatenate([result.q[-1], result.qd[-1]]) - x_eq).max()
    assert error < 1e-4, error
    assert np.abs(result.q[0] - q_eq).max() > 0.1
