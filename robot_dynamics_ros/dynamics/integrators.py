"""Numerical integration of the forward dynamics q̈ = FD(q, q̇, τ) (eq. 9.2; the textbook's EulerStep
and ForwardDynamicsTrajectory, §9.5): one step, one simulation (simulate), or B independent rollouts
across threads (simulate_batch). dt in s; q, q̇, τ in the units of forward_dynamics."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Tuple

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .friction import Friction, friction_coefficients
from .kernels import entries as _k
from .model import Data, Model
from .threads import run_chunks

#: A state update: (q', q̇') after one step.
State = Tuple[np.ndarray, np.ndarray]

METHODS = {"euler": _k.METHOD_EULER, "semi_implicit_euler": _k.METHOD_SEMI_IMPLICIT, "rk4": _k.METHOD_RK4}


def _extras(model, f_tip, frame, friction):
    """Kernel arguments for the tip wrench and friction (zeros when absent)."""
    if f_tip is None:
        fr, tip = -1, np.zeros(6)
    else:
        fr, tip = model.frame_index(frame), _checks.vector(model, f_tip, "f_tip", 6)
    return (fr, tip, *_friction_vectors(model, friction))


def _friction_vectors(model, friction):
    """The kernels' (viscous, coulomb) coefficient vectors for the `friction` argument (zeros when off)."""
    coefficients = friction_coefficients(model, friction)
    if coefficients is None:
        zero = np.zeros(model.nq)
        return zero, zero
    return np.array(coefficients[0], dtype=float), np.array(coefficients[1], dtype=float)


def _step(model, q, qd, tau, dt, f_tip, frame, friction, data, method):
    """One step of `method` (the entries' METHOD_*): (q', q̇')."""
    q_next, qd_next, scratch = np.empty(model.nq), np.empty(model.nq), np.empty((8, model.nq))
    try:
        dt_value = _checks.scalar(dt, "dt", minimum=0.0)
        fr, tip, fv, fs = _extras(model, f_tip, frame, friction)
        _k.step(_checks.buffer(model, data), q, qd, tau, dt_value, method, fr, tip, fv, fs, q_next, qd_next,
                scratch)
    except _checks.KERNEL_ERRORS as error:
        q, qd, tau = _checks.retry_args(model, error, (q, "q"), (qd, "qd"), (tau, "tau"))
        return _step(model, q, qd, tau, dt, f_tip, frame, friction, data, method)
    return q_next, qd_next


def euler_step(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, dt: float,
               f_tip: ArrayLike | None = None, frame: str | None = None, friction: Friction = None,
               data: Data | None = None) -> State:
    """Explicit Euler (the textbook's EulerStep): q' = q + dt q̇, q̇' = q̇ + dt q̈, q̈ = FD(q, q̇, τ)
    (eq. 9.2). First order. Returns (q', q̇')."""
    return _step(model, q, qd, tau, dt, f_tip, frame, friction, data, _k.METHOD_EULER)


def semi_implicit_euler_step(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, dt: float,
                             f_tip: ArrayLike | None = None, frame: str | None = None,
                             friction: Friction = None, data: Data | None = None) -> State:
    """Semi-implicit (symplectic) Euler: q̇' = q̇ + dt q̈, q' = q + dt q̇'. First order, but with bounded
    energy error for passive systems. Returns (q', q̇')."""
    return _step(model, q, qd, tau, dt, f_tip, frame, friction, data, _k.METHOD_SEMI_IMPLICIT)


def rk4_step(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, dt: float,
             f_tip: ArrayLike | None = None, frame: str | None = None, friction: Friction = None,
             data: Data | None = None) -> State:
    """Classical fourth-order Runge–Kutta on x = (q, q̇), ẋ = (q̇, FD(q, q̇, τ)), τ held over the step.
    Fourth order. Returns (q', q̇')."""
    return _step(model, q, qd, tau, dt, f_tip, frame, friction, data, _k.METHOD_RK4)


@dataclass(frozen=True)
class SimulationResult:
    """What simulate() returns: times t (steps+1,) in s, states q and qd (steps+1, n), and the torques
    tau (steps, n) applied over each step. From simulate_batch: q, qd (B, steps+1, n) and tau
    (B, steps, n), rollout b in row b; t (steps+1,) is every rollout's."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray

    def __iter__(self):          # q, qd = simulate(...)
        return iter((self.q, self.qd))


def simulate(model: Model, q0: ArrayLike, qd0: ArrayLike,
             tau: ArrayLike | Callable[[float, np.ndarray, np.ndarray], ArrayLike], dt: float, steps: int,
             method: str = "rk4", f_tip: ArrayLike | None = None, frame: str | None = None,
             friction: Friction = None, data: Data | None = None) -> SimulationResult:
    """Integrate the forward dynamics (eq. 9.2) for `steps` steps of dt seconds (the textbook's
    ForwardDynamicsTrajectory).

    tau: (steps, n) torques held over each step, (n,) constant, or a callable (t, q, qd) -> τ (a
    controller in the loop). method: "rk4" (default), "semi_implicit_euler" or "euler".
    Returns a SimulationResult with q, qd of shape (steps + 1, n) (unpacks as q, qd = simulate(...)).
    With a torque array the whole loop runs compiled.
    """
    code = _checks.choice(METHODS, method, "method")
    dt = _checks.scalar(dt, "dt", minimum=0.0)
    steps = _checks.count(steps, "steps")
    q0 = _checks.vector(model, q0, "q0")
    qd0 = _checks.vector(model, qd0, "qd0")
    fr, tip, fv, fs = _extras(model, f_tip, frame, friction)
    buf = _checks.buffer(model, data)
    try:
        t = dt * np.arange(steps + 1)
        q = np.empty((steps + 1, model.nq))
        qd = np.empty((steps + 1, model.nq))
    except (MemoryError, ValueError):   # numpy's ValueError: more than the address space can hold
        raise ValueError(f"steps = {steps} is too many: the trajectory does not fit in memory") from None
    _checks.finite(t[-1], "the time steps * dt", "steps, dt")
    scratch = np.empty((8, model.nq))
    if callable(tau):
        applied = np.empty((steps, model.nq))
        q[0], qd[0] = q0, qd0
        for k in range(steps):
            applied[k] = _checks.vector(model, tau(t[k], q[k].copy(), qd[k].copy()), "tau(t, q, qd)")
            try:
                _k.step(buf, q[k], qd[k], applied[k], dt, code, fr, tip, fv, fs, q[k + 1], qd[k + 1], scratch)
            except ValueError:      # the step's overflow, said in simulate's terms
                raise ValueError(_k.OVERFLOW_SIMULATION) from None
        return SimulationResult(t, q, qd, applied)
    if np.ndim(tau) == 1:
        tau = np.broadcast_to(_checks.vector(model, tau, "tau"), (steps, model.nq))
    applied = _checks.array(model, tau, "tau", (steps, model.nq))
    _k.simulate(buf, q0, qd0, applied, dt, code, fr, tip, fv, fs, q, qd, scratch)
    return SimulationResult(t, q, qd, applied)


#: Steps of work (rollouts × steps) below which a range of rollouts is not worth a thread: 100 RK4 steps
#: of a 7-joint arm take about 0.3 ms, a hand-over to a pool thread some 0.05 ms (doc/performance.md).
MIN_STEPS_PER_RANGE = 100


def simulate_batch(model: Model, q0: ArrayLike, qd0: ArrayLike, tau: ArrayLike, dt: float,
                   method: str = "rk4", f_tip: ArrayLike | None = None, frame: str | None = None,
                   friction: Friction = None) -> SimulationResult:
    """B independent rollouts of the forward dynamics (eq. 9.2), each simulate's
    ForwardDynamicsTrajectory: for rollout b, (q_b,0, q̇_b,0) = (q0[b], qd0[b]) and
    (q_b,k+1, q̇_b,k+1) = step(q_b,k, q̇_b,k, τ_b,k) for k = 0..steps-1, τ_b,k = tau[b, k] held over step k.

    q0, qd0: (B, n), B >= 1. tau: (B, steps, n) (steps is tau's second dimension; 0 gives the initial
    states only). dt > 0 in s. method: "rk4" (default), "semi_implicit_euler" or "euler". f_tip: a wrench
    (6,) for every rollout or one per rollout (B, 6), (m, f) at `frame` in its coordinates, held over
    every step. friction: as in simulate (model-wide). Returns a SimulationResult with q, qd of shape
    (B, steps + 1, n), tau (B, steps, n) and the shared times t (steps + 1,).

    Rollout b equals simulate(model, q0[b], qd0[b], tau[b], dt, steps, method, f_tip[b], frame, friction)
    bit for bit, for any thread count: the rollouts are split into contiguous ranges across
    get_num_threads() threads (threads.run_chunks), each range one call of the compiled loop that
    simulate runs, with the GIL released and a workspace (Data) of its own, so the model's default Data
    is never used and a Data argument is not taken. A rollout whose state stops being finite raises a
    ValueError naming the first such rollout.
    """
    code = _checks.choice(METHODS, method, "method")
    dt = _checks.scalar(dt, "dt")
    if dt <= 0.0:               # (simulate takes dt = 0: a constant state; no use for a batch of rollouts)
        raise ValueError(f"dt must be a finite number > 0, got {dt!r}")
    n = model.nq
    q0 = _checks.array(model, q0, "q0", (None, n))
    count = q0.shape[0]
    if count == 0:
        raise ValueError(f"q0 must hold at least one rollout: shape (B, {n}) with B >= 1, got {q0.shape}")
    qd0 = _checks.array(model, qd0, "qd0", (count, n))
    tau = _checks.array(model, tau, "tau", (count, None, n))
    steps = tau.shape[1]
    frame_index, tips = _rollout_tips(model, f_tip, frame, count)
    viscous, coulomb = _friction_vectors(model, friction)
    t = dt * np.arange(steps + 1)
    _checks.finite(t[-1], "the time steps * dt", "tau's steps, dt")
    try:
        q = np.empty((count, steps + 1, n))
        qd = np.empty((count, steps + 1, n))
    except (MemoryError, ValueError):   # numpy's ValueError: more than the address space can hold
        raise ValueError(f"B = {count} rollouts of {steps} steps do not fit in memory") from None
    diverged = []

    def rollouts(start, stop, workspace):   # one range: its own workspace, one nogil compiled call
        first = _k.simulate_batch(workspace, q0[start:stop], qd0[start:stop], tau[start:stop], dt,
                                  code, frame_index, tips[start:stop], viscous, coulomb, q[start:stop],
                                  qd[start:stop], np.empty((8, n)))
        if first >= 0:
            diverged.append(start + first)
    run_chunks(count, rollouts, -(-MIN_STEPS_PER_RANGE // max(steps, 1)), Data(model).buffer)
    if diverged:
        raise ValueError(f"rollout {min(diverged)}: {_k.OVERFLOW_SIMULATION}")
    return SimulationResult(t, q, qd, tau)


def _rollout_tips(model, f_tip, frame, count):
    """(frame index, wrenches (count, 6)) for simulate_batch's f_tip: (6,) for every rollout or one per
    rollout; (-1, zeros) without a wrench."""
    if f_tip is None:
        return -1, np.zeros((count, 6))
    frame_index = model.frame_index(frame)
    tips = _checks.real_array(f_tip, "f_tip", f"a wrench (6,) or one per rollout ({count}, 6)")
    if tips.shape == (6,):
        tips = np.broadcast_to(tips, (count, 6))
    return frame_index, _checks.array(model, tips, "f_tip", (count, 6))
