"""Integrators: each step is what its docstring says (exact, against forward_dynamics), the methods
converge at their orders, and simulate's torque forms and result shapes agree."""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

from _random_trees import random_state, random_tree
from _residuals import EXACT, assert_close, measure

CONVERGENCE_TREES = [(3, 4), (12, 6)]          # (seed, n): mixed joint types, branching


def _setup(seed, n):
    model = rd.load_urdf(random_tree(seed, n).to_urdf())
    rng = np.random.default_rng(seed)
    q0, qd0, _ = random_state(model, rng)
    return model, q0, qd0, rng.normal(size=n), rng


def test_steps_follow_their_formulas(case, states):
    """Euler: (q + dt q̇, q̇ + dt q̈); semi-implicit: q̇' = q̇ + dt q̈, q' = q + dt q̇';
    RK4: the classical tableau on (q, q̇), τ held; with f_tip and friction passed through."""
    _, model, rng = case
    dt = 0.01
    for q, qd, _ in states:
        tau = rng.normal(size=model.nq)
        kw = dict(f_tip=rng.normal(size=6), frame=model.frame_names[-1],
                  friction=(rng.uniform(0, 1, model.nq), rng.uniform(0, 1, model.nq)))

        def f(q_, qd_):
            return rd.forward_dynamics(model, q_, qd_, tau, **kw)

        a = f(q, qd)
        for name, step, expected in [
            ("euler", rd.euler_step, (q + dt * qd, qd + dt * a)),
            ("semi-implicit euler", rd.semi_implicit_euler_step, (q + dt * (qd + dt * a), qd + dt * a)),
        ]:
            q1, qd1 = step(model, q, qd, tau, dt, **kw)
            assert_close(f"{name} step formula", np.concatenate([q1, qd1]), np.concatenate(expected), EXACT)
        k1q, k1v = qd, a
        k2q, k2v = qd + dt / 2 * k1v, f(q + dt / 2 * k1q, qd + dt / 2 * k1v)
        k3q, k3v = qd + dt / 2 * k2v, f(q + dt / 2 * k2q, qd + dt / 2 * k2v)
        k4q, k4v = qd + dt * k3v, f(q + dt * k3q, qd + dt * k3v)
        expected = np.concatenate([q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q),
                                   qd + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)])
        assert_close("rk4 step formula", np.concatenate(rd.rk4_step(model, q, qd, tau, dt, **kw)), expected,
                     EXACT)


@pytest.mark.parametrize("seed,n", CONVERGENCE_TREES)
@pytest.mark.parametrize("method,order", [("euler", 1), ("semi_implicit_euler", 1), ("rk4", 4)])
def test_convergence_order(seed, n, method, order):
    """Error at T = 0.5 s for dt, dt/2, dt/4 against RK4 at dt = 1e-4 (whose own error is ~1e-16);
    slopes log2(e(dt)/e(dt/2)) must be within ±0.3 of the order. dt = 4 ms for the Euler methods
    (asymptotic regime), 20 ms for RK4 (errors well above the reference's). Measured slopes:
    Euler 1.00–1.01, semi-implicit Euler 1.00, RK4 3.8–4.2."""
    model, q0, qd0, tau, _ = _setup(seed, n)
    T = 0.5
    ref = rd.simulate(model, q0, qd0, tau, 1e-4, 5000, method="rk4")
    x_ref = np.concatenate([ref.q[-1], ref.qd[-1]])
    dt0 = 0.02 if method == "rk4" else 0.004
    errors = []
    for dt in (dt0, dt0 / 2, dt0 / 4):
        tr = rd.simulate(model, q0, qd0, tau, dt, int(round(T / dt)), method=method)
        errors.append(np.abs(np.concatenate([tr.q[-1], tr.qd[-1]]) - x_ref).max())
    slopes = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    for slope in slopes:
        measure(f"convergence slope ({method})", slope)
    assert np.all(np.abs(slopes - order) <= 0.3), f"{method}: errors {errors}, slopes {slopes}"


def test_simulate_with_callable_equals_simulate_with_array():
    """A torque that depends only on time gives the same trajectory as a callable and as an array."""
    model, q0, qd0, _, rng = _setup(7, 5)
    dt, steps = 2e-3, 150
    amp, w = rng.normal(size=model.nq), rng.uniform(1, 5, model.nq)

    def tau_of(t, q=None, qd=None):
        return amp * np.sin(w * t)

    t = dt * np.arange(steps)
    for method in ("euler", "semi_implicit_euler", "rk4"):
        a = rd.simulate(model, q0, qd0, tau_of, dt, steps, method=method)
        b = rd.simulate(model, q0, qd0, np.array([tau_of(tk) for tk in t]), dt, steps, method=method)
        assert_close("simulate(callable) = simulate(array)", np.hstack([a.q, a.qd]), np.hstack([b.q, b.qd]),
                     EXACT)
        assert_close("simulate applied torques", a.tau, b.tau, EXACT)


def test_simulate_result_shapes_and_unpacking(model):
    n, steps, dt = model.nq, 7, 1e-3
    q0 = np.zeros(n)
    result = rd.simulate(model, q0, q0, np.ones(n), dt, steps)
    assert result.q.shape == result.qd.shape == (steps + 1, n)
    assert result.tau.shape == (steps, n) and result.t.shape == (steps + 1,)
    np.testing.assert_allclose(result.t, dt * np.arange(steps + 1))
    q, qd = result
    assert q is result.q and qd is result.qd
    assert np.all(q[0] == q0) and np.all(qd[0] == q0)
    # the compiled loop is the repeated single step
    q1, qd1 = rd.rk4_step(model, q0, q0, np.ones(n), dt)
    assert np.all(q[1] == q1) and np.all(qd[1] == qd1)
    empty = rd.simulate(model, q0, q0, np.ones(n), dt, 0)
    assert empty.q.shape == (1, n) and empty.tau.shape == (0, n)
