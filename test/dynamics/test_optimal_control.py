"""ReachingProblem and solve_optimal_control (issue 28): the derivatives the solver uses against finite
differences, feasibility at convergence, box limits held exactly, warm starts, bad input."""
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.kernels import entries as _k

REPO = Path(__file__).resolve().parents[2]
Q0 = np.array([0.0, -1.0, 1.5, -0.5, 1.5, 0.0])


@pytest.fixture(scope="module")
def model():
    return rd.load_urdf(str(REPO / "urdf" / "ur5e.urdf"))


def reaching(model, horizon=20, **options):
    T_goal = rd.frame_pose(model, Q0, "tool0")
    T_goal[:3, 3] += (0.1, -0.05, 0.05)
    return rd.ReachingProblem(model, "tool0", T_goal, Q0, horizon=horizon, **options)


def test_the_shooting_gradient_is_the_adjoint_of_the_derivatives(model):
    """dJ/du_t of J(u) = cost of the rollout from x0: the adjoint recursion λ_t = l_x + A^T λ_{t+1},
    g_t = l_u + B^T λ_{t+1} over the solver's A, B, l_x, l_u, against central differences."""
    problem = reaching(model, horizon=12)
    rng = np.random.default_rng(3)
    N, n = problem.horizon, model.nq
    us = problem.quasi_static_controls() + rng.normal(scale=0.5, size=(N, n))
    xs = rollout(problem, us)
    a = problem._workspace()
    names = ("A", "B", "Lx", "Lu", "Lqq", "T", "r", "Jb", "Jlog", "Jr")
    status = _k.ocp_derivatives(model._data.buffer, problem._packed, problem.frame_index, problem.x_ref, xs,
                                us, *(a[k] for k in names), *a["linearize"])
    assert status == 0
    lam = a["Lx"][N].copy()
    gradient = np.empty((N, n))
    for t in range(N - 1, -1, -1):
        gradient[t] = a["Lu"][t] + a["B"][t].T @ lam
        lam = a["Lx"][t] + a["A"][t].T @ lam
    h = 1e-4          # (central differences: truncation O(h²) below the rounding of smaller steps)
    numeric = np.empty((N, n))
    for t in range(N):
        for j in range(n):
            up, down = us.copy(), us.copy()
            up[t, j] += h
            down[t, j] -= h
            numeric[t, j] = (problem.cost(rollout(problem, up), up)
                             - problem.cost(rollout(problem, down), down)) / (2 * h)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-7 * np.abs(numeric).max())
    assert np.abs(gradient).max() > 1.0


def rollout(problem, us):
    """The feasible trajectory of us from x0: symplectic Euler steps."""
    n = problem.model.nq
    xs = [problem.x0]
    for u in us:
        q, qd = rd.semi_implicit_euler_step(problem.model, xs[-1][:n], xs[-1][n:], u, problem.dt)
        xs.append(np.r_[q, qd])
    return np.array(xs)


def test_the_residual_jacobian_against_finite_differences(model):
    """∂r/∂q = J_r^-1(r) J_b(q) (the goal gradient's factor) against central differences of
    r(q) = log(T_goal^-1 T(q)), through l_x = dt w_g (∂r/∂q)^T r at a knot with no other cost."""
    problem = reaching(model, horizon=1, state_weight=0.0, control_weight=0.0)
    a = problem._workspace()
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = Q0 + rng.normal(scale=0.5, size=model.nq)
        xs = np.array([np.r_[q, np.zeros(model.nq)]] * 2)
        us = np.zeros((1, model.nq))
        names = ("A", "B", "Lx", "Lu", "Lqq", "T", "r", "Jb", "Jlog", "Jr")
        _k.ocp_derivatives(model._data.buffer, problem._packed, problem.frame_index, problem.x_ref, xs, us,
                           *(a[k] for k in names), *a["linearize"])

        def residual(q):
            return rd.spatial.log_transform(np.linalg.inv(problem.T_goal) @ rd.frame_pose(model, q, "tool0"))
        h = 1e-6
        numeric = np.column_stack([(residual(q + h * e) - residual(q - h * e)) / (2 * h)
                                   for e in np.eye(model.nq)])
        np.testing.assert_allclose(a["Jr"], numeric, atol=1e-7)
        np.testing.assert_allclose(a["r"], residual(q), atol=1e-12)
        np.testing.assert_allclose(a["Lx"][0, :model.nq], problem.dt * numeric.T @ residual(q), atol=1e-8)


def test_the_solution_is_feasible_and_stationary(model):
    problem = reaching(model, horizon=30)
    solution = rd.solve_optimal_control(problem)
    assert solution.converged and solution.stop < 1e-9
    assert solution.defect == 0.0 and np.abs(problem.defects(solution.xs, solution.us)).max() <= 1e-9
    assert solution.xs.shape == (31, 12) and solution.us.shape == (30, 6) and solution.K.shape == (30, 6, 12)
    start = problem.cost(np.tile(problem.x0, (31, 1)), problem.quasi_static_controls())
    assert solution.cost < start
    reached = rd.frame_pose(model, solution.xs[-1, :6], "tool0")[:3, 3]
    assert np.linalg.norm(reached - problem.T_goal[:3, 3]) < 0.7 * np.linalg.norm(   # (0.3 s, the torques
        rd.frame_pose(model, Q0, "tool0")[:3, 3] - problem.T_goal[:3, 3])         # weighted against g(q))
    # the gains of the last backward pass are the Riccati gains of the LQ problem the derivatives define:
    # against that problem solved whole (condensed onto the controls) from a perturbed start
    a = problem._workspace()
    A, B, Lqq = a["A"], a["B"], a["Lqq"]
    N, n, dt = 30, 6, problem.dt
    Phi, Gamma = [np.eye(12)], [np.zeros((12, N * n))]                 # δx_t = Phi_t δx_0 + Gamma_t δU
    for t in range(N):
        Phi.append(A[t] @ Phi[t])
        G = A[t] @ Gamma[t]
        G[:, t * n:(t + 1) * n] += B[t]
        Gamma.append(G)
    H = np.eye(N * n) * dt * problem.control_weight
    F = np.zeros((N * n, 12))
    for t in range(N + 1):
        Lxx = np.zeros((12, 12))
        Lxx[:n, :n] = Lqq[t]
        if t < N:
            Lxx += dt * problem.state_weight * np.eye(12)
        H += Gamma[t].T @ Lxx @ Gamma[t]
        F += Gamma[t].T @ Lxx @ Phi[t]
    dx0 = np.array([1.0, -1.0, 0.5, 0.0, 1.0, -0.5, 0.1, 0.0, -0.2, 0.3, 0.0, 0.1])
    expected = -np.linalg.solve(H, F @ dx0)[:n]        # (the backward pass adds μ ≥ 1e-9 to Q_uu)
    np.testing.assert_allclose(solution.K[0] @ dx0, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())


def test_torque_limits_are_held_exactly(model):
    """Effort limits that bind (a tenth of the UR5e's): every torque within them, some at them, the cost
    above the unlimited optimum's, converged and feasible."""
    weak = model.replace(effort_limit=0.1 * np.asarray(model.effort_limit))
    free = rd.solve_optimal_control(reaching(weak, horizon=30))
    problem = reaching(weak, horizon=30, torque_limits=True)
    limited = rd.solve_optimal_control(problem, max_iterations=300)
    assert np.abs(free.us).max(0).max() > problem.u_upper.min()        # the limits bind without the box
    assert (limited.us <= problem.u_upper).all() and (limited.us >= problem.u_lower).all()
    assert np.isclose(np.abs(limited.us), problem.u_upper).any()
    assert limited.converged and limited.defect == 0.0
    assert limited.cost >= free.cost


def test_a_warm_start_converges_at_once_and_a_gap_closes(model):
    problem = reaching(model, horizon=30)
    first = rd.solve_optimal_control(problem)
    again = rd.solve_optimal_control(problem, xs_init=first.xs, us_init=first.us)
    assert again.iterations <= 2 and again.cost == pytest.approx(first.cost, rel=1e-9)
    # a new start state (a gap at knot 0), the previous solution shifted by one knot
    problem.x0 = first.xs[1]
    xs = np.vstack([first.xs[1:], first.xs[-1:]])
    us = np.vstack([first.us[1:], first.us[-1:]])
    shifted = rd.solve_optimal_control(problem, xs_init=xs, us_init=us)
    assert shifted.converged and shifted.defect == 0.0
    assert np.allclose(shifted.xs[0], first.xs[1])


def test_a_time_limit_ends_the_solve(model):
    problem = reaching(model, horizon=30)
    solution = rd.solve_optimal_control(problem, time_limit=0.0)
    assert solution.iterations == 0 and not solution.converged


@pytest.mark.parametrize("change, name", [
    (dict(frame="nope"), "nope"),
    (dict(T_goal=np.diag([1.0, 2.0, 1.0, 1.0])), "T_goal"),
    (dict(T_goal=np.full((4, 4), np.nan)), "T_goal"),
    (dict(horizon=0), "horizon"),
    (dict(horizon=2.5), "horizon"),
    (dict(dt=0.0), "dt"),
    (dict(dt=np.nan), "dt"),
    (dict(goal_weight=-1.0), "goal_weight"),
    (dict(control_weight="a"), "control_weight"),
    (dict(terminal_goal_weight=np.inf), "terminal_goal_weight"),
    (dict(q0=[0.0, 1.0]), "q0"),
    (dict(x_ref=np.zeros(6)), "x_ref"),
    (dict(torque_limits="yes"), "torque_limits"),
])
def test_bad_problem_arguments_are_named(model, change, name):
    arguments = dict(frame="tool0", T_goal=np.eye(4), q0=Q0)
    arguments.update(change)
    with pytest.raises(ValueError, match=name):
        rd.ReachingProblem(model, arguments.pop("frame"), arguments.pop("T_goal"), arguments.pop("q0"),
                           **arguments)


def test_bad_solver_arguments_are_named(model):
    problem = reaching(model, horizon=5)
    for kwargs, name in ((dict(xs_init=np.zeros((5, 12))), "xs_init"),
                         (dict(us_init=np.zeros((5, 5))), "us_init"),
                         (dict(max_iterations=-1), "max_iterations"), (dict(tolerance=-1.0), "tolerance"),
                         (dict(time_limit=np.nan), "time_limit")):
        with pytest.raises(ValueError, match=name):
            rd.solve_optimal_control(problem, **kwargs)
    with pytest.raises(ValueError, match="problem"):
        rd.solve_optimal_control("problem")
    no_limits = model.replace(effort_limit=np.full(model.nq, np.inf))
    with pytest.raises(ValueError, match="torque_limits"):
        reaching(no_limits, torque_limits=True)
