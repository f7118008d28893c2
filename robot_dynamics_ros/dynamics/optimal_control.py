"""Optimal control: reaching a frame pose over a horizon of torques, by FDDP with box limits.

The problem is that of Crocoddyl's arm-manipulation example and benchmark (``ReachingProblem``): state
x = (q, q̇), control u = τ, the symplectic Euler step of the forward dynamics, a frame-placement cost
with state and control regularisation at every knot, and a terminal frame-placement cost. The solver
(``solve_optimal_control``) is feasibility-driven DDP (Mastalli et al. 2020: a trajectory may start
with gaps between its knots, which close along the iterations), whose control step at each knot is a
box-constrained QP when torque limits are on (box-FDDP, Tassa et al. 2014). Why this solver: DDP's
Riccati recursion costs O(N n³) per iteration and gives the feedback gains K a model-predictive
controller applies between re-plans; the feasibility-driven form accepts any warm start (a shifted
previous solution from a new measured state has a gap at its first knot); the box QP keeps the torques
within the URDF's effort limits exactly, which clamping a solution afterwards would not (its cost and
gains would be those of another problem). The loops over the knots and each whole iteration
(regularisation, line search, stopping criterion) are compiled (kernels/fddp.py) and run without the GIL,
one call per iteration: a solve in a thread holds the interpreter only between iterations (microseconds),
so a control loop beside it (mpc_controller) is not kept waiting; this module checks the arguments and
runs the iterations within the iteration and time limits.

Units: q in rad (m), q̇ in rad/s (m/s), τ in N·m (N), dt in s; T_goal a 4 x 4 rigid transform of the
model's root frame; the residual log(T_goal⁻¹ T_f(q)) is a twist (rad, m), angular first.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numpy import empty

from . import _checks
from .inverse_dynamics import gravity_torques
from .kernels import ddp as _ddp, entries as _k, fddp as _fddp
from .model import Data, Model
from .spatial import rigid_transform


class ReachingProblem:
    """Reach the pose T_goal with `frame` (a link or URDF frame name; None: model.tip_frame) from the
    configuration q0 at rest, over `horizon` knots of `dt` seconds (Crocoddyl's arm-manipulation problem):

        min Σ_{t<N} dt ½ (goal_weight |r(q_t)|² + state_weight |x_t - x_ref|² + control_weight |u_t|²)
            + ½ terminal_goal_weight |r(q_N)|²,     r(q) = log(T_goal⁻¹ T_frame(q)) ∈ ℝ⁶ (angular first)

    subject to x_{t+1} = (q_t + dt q̇_{t+1}, q̇_t + dt q̈(q_t, q̇_t, u_t)) (symplectic Euler, q̈ by the
    articulated-body algorithm with the model's armature) and x_0 = (q0, 0); x_ref defaults to (q0, 0);
    torque_limits=True bounds every u_t by the URDF effort limits (then every joint needs one).

    ``x0``, ``x_ref`` and ``T_goal`` may be set again (a model-predictive controller re-plans from each
    new state and goal); the other settings are fixed. A problem keeps the solver's arrays and a
    workspace of its own (``data``, a Data(model)) between solves: solve it from one thread at a time.
    The solver's compiled loops release the GIL and use only these, so a solve in one thread leaves the
    interpreter to the others (a control loop beside a re-planning thread: logic/model_predictive.py).
    """

    def __init__(self, model: Model, frame: str | None, T_goal, q0, *, horizon: int = 100, dt: float = 0.01,
                 goal_weight: float = 1.0, state_weight: float = 0.1, control_weight: float = 0.1,
                 terminal_goal_weight: float = 1000.0, x_ref=None, torque_limits: bool = False):
        if not isinstance(model, Model):
            raise ValueError(f"model must be a robot_dynamics_ros Model, got {type(model).__name__}")
        self.model = model
        self.frame = model.tip_frame if frame is None else frame
        self.frame_index = model.frame_index(self.frame)
        n = model.nq
        self.horizon = _checks.count(horizon, "horizon")
        if self.horizon < 1:
            raise ValueError(f"horizon must be at least 1 knot, got {horizon!r}")
        self.dt = _checks.scalar(dt, "dt", minimum=0.0)
        if not self.dt > 0.0:
            raise ValueError(f"dt must be > 0 s, got {dt!r}")
        weights = {}
        for name, value in (("goal_weight", goal_weight), ("state_weight", state_weight),
                            ("control_weight", control_weight),
                            ("terminal_goal_weight", terminal_goal_weight)):
            weights[name] = _checks.scalar(value, name, minimum=0.0)
        self.goal_weight, self.state_weight = weights["goal_weight"], weights["state_weight"]
        self.control_weight = weights["control_weight"]
        self.terminal_goal_weight = weights["terminal_goal_weight"]
        self.q0 = _checks.vector(model, q0, "q0").copy()
        self.x_ref = np.concatenate([self.q0, np.zeros(n)]) if x_ref is None else x_ref
        if not isinstance(torque_limits, (bool, np.bool_)):
            raise ValueError(f"torque_limits must be True or False, got {torque_limits!r}")
        self.torque_limits = bool(torque_limits)
        self.u_upper = np.array(model.effort_limit, dtype=float)
        if self.torque_limits and not (np.isfinite(self.u_upper).all() and (self.u_upper > 0.0).all()):
            joints = [j for j, e in zip(model.joint_names, self.u_upper) if not (np.isfinite(e) and e > 0.0)]
            raise ValueError(f"torque_limits needs a positive effort limit for every joint; the URDF has "
                             f"none for {joints}")
        self.u_lower = -self.u_upper
        self._packed = np.zeros(_ddp.P_SIZE)
        self._packed[[_ddp.P_DT, _ddp.P_GOAL, _ddp.P_STATE, _ddp.P_CONTROL, _ddp.P_TERMINAL]] = (
            self.dt, self.goal_weight, self.state_weight, self.control_weight, self.terminal_goal_weight)
        self.x0 = np.concatenate([self.q0, np.zeros(n)])
        self.T_goal = T_goal
        self._arrays = None
        self.data = Data(model)

    @property
    def x0(self) -> np.ndarray:
        """The initial state (q, q̇) (2n,); settable (a copy is kept)."""
        return self._x0.copy()

    @x0.setter
    def x0(self, value):
        self._x0 = _checks.vector(self.model, value, "x0", 2 * self.model.nq).copy()

    @property
    def x_ref(self) -> np.ndarray:
        """The state the state cost pulls towards (2n,); settable (a copy is kept)."""
        return self._x_ref.copy()

    @x_ref.setter
    def x_ref(self, value):
        self._x_ref = _checks.vector(self.model, value, "x_ref", 2 * self.model.nq).copy()

    @property
    def T_goal(self) -> np.ndarray:
        """The goal pose of the frame (4 x 4, root frame); settable."""
        return self._T_goal.copy()

    @T_goal.setter
    def T_goal(self, value):
        T = rigid_transform(value, "T_goal").copy()
        R_inv = T[:3, :3].T
        self._packed[_ddp.P_R:_ddp.P_R + 9] = R_inv.ravel()
        self._packed[_ddp.P_P:_ddp.P_P + 3] = -R_inv @ T[:3, 3]
        self._T_goal = T

    def quasi_static_controls(self) -> np.ndarray:
        """u_t = g(q0) at every knot (N, n): the torques that hold x0 = (q0, 0) still, the solver's default
        start (Crocoddyl's quasi-static initial guess)."""
        return np.tile(gravity_torques(self.model, self._x0[:self.model.nq]), (self.horizon, 1))

    def cost(self, xs, us) -> float:
        """The objective of (xs (N+1, 2n), us (N, n)), gaps or not."""
        xs, us = self._trajectory(xs, us)
        a = self._workspace()
        return self._cost(xs, us, a["fs"])

    def defects(self, xs, us) -> np.ndarray:
        """The gaps f̄ (N+1, 2n): f̄_0 = x0 - xs[0], f̄_{t+1} = f(xs[t], us[t]) - xs[t+1]; zero for a
        dynamically feasible trajectory."""
        xs, us = self._trajectory(xs, us)
        fs = empty((self.horizon + 1, 2 * self.model.nq))
        self._cost(xs, us, fs)
        return fs

    # -- internals --------------------------------------------------------------------------------------
    def _trajectory(self, xs, us):
        n, N = self.model.nq, self.horizon
        xs = _checks.array(self.model, xs, "xs", (N + 1, 2 * n))
        us = _checks.array(self.model, us, "us", (N, n))
        return xs, us

    def _cost(self, xs, us, fs):
        a = self._workspace()
        cost = _k.ocp_cost(self.data.buffer, self._packed, self.frame_index, self._x0, self._x_ref,
                           xs, us, fs, a["T"], a["r"], a["x_next"], a["s"], a["zero"])
        if not np.isfinite(cost):
            raise ValueError("the trajectory diverges: a step of the dynamics is not finite")
        return float(cost)

    def _workspace(self):
        """The solver's arrays for this horizon and model, made once."""
        if self._arrays is None:
            n, N = self.model.nq, self.horizon
            nx = 2 * n
            w1, w2 = -(-n // 8) * 8, -(-nx // 8) * 8        # linearize.py's padded widths
            a = {name: np.zeros(shape) for name, shape in (
                ("xs_try", (N + 1, nx)), ("us_try", (N, n)), ("fs", (N + 1, nx)), ("A", (N, nx, nx)),
                ("B", (N, nx, n)), ("Lx", (N + 1, nx)), ("Lu", (N, n)), ("Lqq", (N + 1, n, n)),
                ("Vx", (N + 1, nx)), ("Vxx", (N + 1, nx, nx)), ("k", (N, n)), ("K", (N, n, nx)),
                ("Qu", (N, n)), ("Quuk", (N, n)), ("T", (4, 4)), ("r", (6,)), ("Jb", (6, n)),
                ("Jlog", (6, 6)), ("Jr", (6, n)),
                ("x_next", (nx,)), ("s", (8, n)), ("zero", (n,)), ("dx", (nx,)), ("Qx", (nx,)),
                ("Qxx", (nx, nx)), ("Quu", (n, n)), ("Qux", (n, nx)), ("VA", (nx, nx)), ("VB", (nx, n)),
                ("L", (n, n)), ("lo", (n,)), ("hi", (n,)), ("grad", (n,)), ("step", (n,)), ("trial", (n,)),
                ("rhs", (n,)))}
            a["free"] = np.zeros((N, n), dtype=bool)
            a["linearize"] = (np.zeros((4, nx)), np.zeros((n, w1)), np.zeros((n, w2)), np.zeros((nx, w1)),
                              np.zeros((nx, w2)), np.zeros((nx, w2)), np.zeros((n, w2)), np.zeros((n, w2)),
                              np.zeros((n, nx)))
            self._arrays = a
        return self._arrays


@dataclass(frozen=True)
class OptimalControlSolution:
    """What solve_optimal_control found.

    xs (N+1, 2n): states (q, q̇); us (N, n): torques; cost: the objective at (xs, us); iterations: the
    FDDP iterations taken; converged: the stopping criterion (Σ_t |Q_u,t|² over the controls not held at a
    limit) fell below the tolerance on a feasible trajectory; K (N, n, 2n): the feedback gains of the last
    backward pass, u = u_t + K_t (x - x_t); solve_time (s); stop: the last stopping criterion; defect: the
    largest gap |f̄| left (0 when the trajectory is dynamically feasible).
    """
    xs: np.ndarray
    us: np.ndarray
    cost: float
    iterations: int
    converged: bool
    K: np.ndarray
    solve_time: float
    stop: float
    defect: float


def solve_optimal_control(problem: ReachingProblem, *, xs_init=None, us_init=None, max_iterations: int = 100,
                          tolerance: float = 1e-9, time_limit: float | None = None) -> OptimalControlSolution:
    """Solve `problem` by box-FDDP (module docstring) from xs_init (N+1, 2n; default x0 at every knot) and
    us_init (N, n; default problem.quasi_static_controls()): a warm start may have gaps (a previous
    solution shifted in time, from a new x0). Stops when converged (tolerance on the stopping criterion),
    after max_iterations, or once time_limit seconds have passed (checked before each iteration).
    A bad argument raises a ValueError naming it."""
    started = time.perf_counter()
    if not isinstance(problem, ReachingProblem):
        raise ValueError(f"problem must be a ReachingProblem, got {type(problem).__name__}")
    max_iterations = _checks.count(max_iterations, "max_iterations")
    tolerance = _checks.scalar(tolerance, "tolerance", minimum=0.0)
    if time_limit is not None:
        time_limit = _checks.scalar(time_limit, "time_limit", minimum=0.0)
    xs, us = _initial_guess(problem, xs_init, us_init)
    a = problem._workspace()
    fs = a["fs"]
    cost = problem._cost(xs, us, fs)
    feasible = not fs.any()
    reg, stop, converged, iterations = _fddp.REGULARIZATION_MIN, np.inf, False, 0
    backward = tuple(a[name] for name in ("Vx", "Vxx", "k", "K", "Qu", "Quuk", "free", "Qx", "Qxx", "Quu",
                                          "Qux", "VA", "VB", "L", "lo", "hi", "grad", "step", "trial", "rhs"))
    derivatives = tuple(a[name] for name in ("A", "B", "Lx", "Lu", "Lqq", "T", "r", "Jb", "Jlog", "Jr"))
    rollout = (a["xs_try"], a["us_try"], a["dx"], a["s"], a["zero"])
    K = backward[3]
    while iterations < max_iterations:
        if time_limit is not None and time.perf_counter() - started > time_limit:
            break
        # one whole iteration in one compiled call without the GIL (kernels/fddp.py's fddp_iteration):
        # the derivatives, the backward pass at the regularisation it needs, the stopping criterion and,
        # unless converged, the line search, its step taken into (xs, us, fs)
        status, reg, cost, feasible, stop, converged = _k.ocp_iteration(
            problem.data.buffer, problem._packed, problem.frame_index, problem._x0, problem._x_ref,
            problem.torque_limits, problem.u_lower, problem.u_upper, xs, us, fs, feasible, reg, cost,
            tolerance, *derivatives, *a["linearize"], *backward, *rollout)
        if status == _ddp.STATUS_DYNAMICS:
            raise ValueError(f"{_k.NOT_POSITIVE_DEFINITE} along the trajectory: the model cannot be "
                             "simulated")
        if status == _ddp.STATUS_NOT_POSITIVE:  # Quu not positive definite even at the largest regularisation
            return _solution(problem, xs, us, cost, iterations, False, K, started, stop, fs)
        iterations += 1
        if converged:
            break
    return _solution(problem, xs, us, cost, iterations, converged, K, started, stop, fs)


def _initial_guess(problem, xs_init, us_init):
    """(xs, us): copies of the warm start, checked, or x0 at every knot and the quasi-static controls;
    us clipped to the torque limits."""
    model, N, n = problem.model, problem.horizon, problem.model.nq
    xs = (np.tile(problem._x0, (N + 1, 1)) if xs_init is None
          else _checks.array(model, xs_init, "xs_init", (N + 1, 2 * n)).copy())
    us = (problem.quasi_static_controls() if us_init is None
          else _checks.array(model, us_init, "us_init", (N, n)).copy())
    if problem.torque_limits:
        np.clip(us, problem.u_lower, problem.u_upper, out=us)
    return xs, us


def _solution(problem, xs, us, cost, iterations, converged, K, started, stop, fs):
    return OptimalControlSolution(xs=xs, us=us, cost=float(cost), iterations=iterations, converged=converged,
                                  K=K.copy(), solve_time=time.perf_counter() - started, stop=stop,
                                  defect=float(np.abs(fs).max()))
