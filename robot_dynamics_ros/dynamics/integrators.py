"""Numerical integration of the forward dynamics q̈ = FD(q, q̇, τ) (eq. 9.2; the textbook's EulerStep
and ForwardDynamicsTrajectory, §9.5). dt in s; q, q̇, τ in the units of forward_dynamics."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Tuple

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .friction import Friction, friction_coefficients
from .kernels import entries as _k
from .model import Data, Model

#: A state update: (q', q̇') after one step.
State = Tuple[np.ndarray, np.ndarray]

METHODS = {"euler": _k.METHOD_EULER, "semi_implicit_euler": _k.METHOD_SEMI_IMPLICIT, "rk4": _k.METHOD_RK4}


def _extras(model, f_tip, frame, friction):
    """Kernel arguments for the tip wrench and friction (zeros when absent)."""
    if f_tip is None:
        fr, tip = -1, np.zeros(6)
    else:
        fr, tip = model.frame_index(frame), _checks.vector(model, f_tip, "f_tip", 6)
    coefficients = friction_coefficients(model, friction)
    if coefficients is None:
        zero = np.zeros(model.nq)
        return fr, tip, zero, zero
    return fr, tip, np.array(coefficients[0], dtype=float), np.array(coefficients[1], dtype=float)


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
    tau (steps, n) applied over each step."""
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
