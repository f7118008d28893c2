"""Numerical integration of the forward dynamics (textbook §9.3: EulerStep, ForwardDynamicsTrajectory)."""
from dataclasses import dataclass

import numpy as np

from . import _checks
from . import _kernels as _k
from .friction import friction_coefficients

METHODS = {"euler": _k.METHOD_EULER, "semi_implicit_euler": _k.METHOD_SEMI_IMPLICIT, "rk4": _k.METHOD_RK4}


def _extras(model, f_tip, frame, friction):
    """Kernel arguments for the tip wrench and friction (zeros when absent)."""
    fr, tip = (-1, np.zeros(6)) if f_tip is None else (model.frame_index(frame), _checks.vector(model, f_tip, "f_tip", 6))
    coefficients = friction_coefficients(model, friction)
    if coefficients is None:
        zero = np.zeros(model.nq)
        return fr, tip, zero, zero
    return fr, tip, np.array(coefficients[0], dtype=float), np.array(coefficients[1], dtype=float)


def _step(method, model, q, qd, tau, dt, f_tip, frame, friction, data):
    dt = _checks.scalar(dt, "dt", minimum=0.0)
    fr, tip, fv, fs = _extras(model, f_tip, frame, friction)
    buf = model._data.buffer if data is None else _checks.buffer(model, data)
    q_next, qd_next, scratch = np.empty(model.nq), np.empty(model.nq), np.empty((8, model.nq))
    try:
        _k.step(buf, q, qd, tau, dt, method, fr, tip, fv, fs, q_next, qd_next, scratch)
    except _checks.KERNEL_ERRORS as exc:
        args = _checks.retry_args(model, exc, (q, "q"), (qd, "qd"), (tau, "tau"))
        _k.step(buf, *args, dt, method, fr, tip, fv, fs, q_next, qd_next, scratch)
    return q_next, qd_next


def euler_step(model, q, qd, tau, dt, f_tip=None, frame=None, friction=None, data=None):
    """Explicit Euler (the textbook's EulerStep): q' = q + dt q̇, q̇' = q̇ + dt q̈, q̈ = FD(q, q̇, τ).
    First order. Returns (q', q̇')."""
    return _step(_k.METHOD_EULER, model, q, qd, tau, dt, f_tip, frame, friction, data)


def semi_implicit_euler_step(model, q, qd, tau, dt, f_tip=None, frame=None, friction=None, data=None):
    """Semi-implicit (symplectic) Euler: q̇' = q̇ + dt q̈, q' = q + dt q̇'. First order, but with bounded
    energy error for passive systems. Returns (q', q̇')."""
    return _step(_k.METHOD_SEMI_IMPLICIT, model, q, qd, tau, dt, f_tip, frame, friction, data)


def rk4_step(model, q, qd, tau, dt, f_tip=None, frame=None, friction=None, data=None):
    """Classical fourth-order Runge–Kutta on x = (q, q̇), ẋ = (q̇, FD(q, q̇, τ)), τ held over the step.
    Fourth order. Returns (q', q̇')."""
    return _step(_k.METHOD_RK4, model, q, qd, tau, dt, f_tip, frame, friction, data)


@dataclass(frozen=True)
class Trajectory:
    """A simulated trajectory: t (steps+1,), q and qd (steps+1, n), tau (steps, n) applied per step."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray

    def __iter__(self):          # q, qd = simulate(...)
        return iter((self.q, self.qd))


def simulate(model, q0, qd0, tau, dt, steps, method="rk4", f_tip=None, frame=None, friction=None, data=None):
    """Integrate the forward dynamics for `steps` steps of dt (the textbook's ForwardDynamicsTrajectory).

    tau: (steps, n) torques held over each step, (n,) constant, or a callable (t, q, qd) -> τ (a
    controller in the loop). method: "rk4" (default), "semi_implicit_euler" or "euler".
    Returns a Trajectory with q, qd of shape (steps + 1, n) (unpacks as q, qd = simulate(...)).
    With a torque array the whole loop runs compiled.
    """
    code = _checks.choice(METHODS, method, "method")
    dt = _checks.scalar(dt, "dt", minimum=0.0)
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    steps = int(steps)
    q0 = _checks.vector(model, q0, "q0")
    qd0 = _checks.vector(model, qd0, "qd0")
    fr, tip, fv, fs = _extras(model, f_tip, frame, friction)
    buf = model._data.buffer if data is None else _checks.buffer(model, data)
    t = dt * np.arange(steps + 1)
    q = np.empty((steps + 1, model.nq))
    qd = np.empty((steps + 1, model.nq))
    scratch = np.empty((8, model.nq))
    if callable(tau):
        applied = np.empty((steps, model.nq))
        q[0], qd[0] = q0, qd0
        for k in range(steps):
            applied[k] = _checks.vector(model, tau(t[k], q[k].copy(), qd[k].copy()), "tau(t, q, qd)")
            _k.step(buf, q[k], qd[k], applied[k], dt, code, fr, tip, fv, fs, q[k + 1], qd[k + 1], scratch)
        return Trajectory(t, q, qd, applied)
    if np.ndim(tau) == 1:
        tau = np.broadcast_to(_checks.vector(model, tau, "tau"), (steps, model.nq))
    applied = _checks.array(model, tau, "tau", (steps, model.nq))
    _k.simulate(buf, q0, qd0, applied, dt, code, fr, tip, fv, fs, q, qd, scratch)
    return Trajectory(t, q, qd, applied)
