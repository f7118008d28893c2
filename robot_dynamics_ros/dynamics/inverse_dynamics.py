"""Inverse dynamics by recursive Newton–Euler (eqs. 9.53–9.57) and the bias terms it yields.

Units: q in rad (revolute) or m (prismatic), q̇ in rad/s or m/s, q̈ in rad/s² or m/s²; τ in N·m or N.
"""
from __future__ import annotations

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks, threads
from .friction import Friction, applied_friction
from .kernels import entries as _k
from .model import Data, Model

#: States per range at least when inverse_dynamics_trajectory splits across threads (≥ 0.15 ms: threads.py)
#: at 0.37 µs per state on a 7-joint arm.
MIN_CHUNK = 400


def inverse_dynamics(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                     f_tip: ArrayLike | None = None, frame: str | None = None, friction: Friction = None,
                     data: Data | None = None) -> np.ndarray:
    """τ = M(q) q̈ + c(q, q̇) + g(q) + Jᵀ F_tip (eq. 9.81), by recursive Newton–Euler (eqs. 9.53–9.57).

    q, qd, qdd: (n,) in model.joint_names order. f_tip: (6,) wrench (m, f) in N·m and N that the robot
    exerts on its environment at `frame` (default model.tip_frame), in that frame's coordinates (the
    RNEA's F_{n+1}). friction: None, True (URDF coefficients) or (viscous, coulomb); the friction
    torques F_v q̇ + F_s sgn(q̇) are added. Returns τ (n,).
    """
    tau = empty(model.nq)
    try:
        buf = _checks.buffer(model, data)
        if f_tip is None:
            _k.rnea(buf, q, qd, qdd, tau)
        else:
            _k.rnea_tip(buf, q, qd, qdd, model.frame_index(frame), f_tip, tau)
    except _checks.KERNEL_ERRORS as error:      # a refused argument: a ValueError naming it, or converted
        q, qd, qdd, f_tip = _checks.retry_args(model, error, (q, "q"), (qd, "qd"), (qdd, "qdd"),
                                               (f_tip, "f_tip", 6))
        return inverse_dynamics(model, q, qd, qdd, f_tip, frame, friction, data)
    if friction is not None:
        tau = _checks.finite(tau + applied_friction(model, qd, friction), "tau plus friction torques",
                             "q, qd, qdd and friction coefficients")
    return tau


def gravity_torques(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """g(q) = ∂P/∂q (n,): the joint torques that hold the robot still against gravity (eq. 9.84),
    by recursive Newton–Euler with q̇ = q̈ = 0 (eqs. 9.53–9.57); gravity: model.gravity (m/s², root
    frame)."""
    tau = empty(model.nq)
    try:
        _k.gravity(_checks.buffer(model, data), q, tau)
    except _checks.KERNEL_ERRORS as error:
        (q,) = _checks.retry_args(model, error, (q, "q"))
        return gravity_torques(model, q, data)
    return tau


def coriolis_forces(model: Model, q: ArrayLike, qd: ArrayLike, data: Data | None = None) -> np.ndarray:
    """c(q, q̇) = C(q, q̇) q̇ (n,): Coriolis and centripetal torques (eqs. 9.83, 9.88), by recursive
    Newton–Euler with q̈ = 0 and no gravity. For the matrix C see coriolis_matrix."""
    tau = empty(model.nq)
    try:
        _k.coriolis(_checks.buffer(model, data), q, qd, tau)
    except _checks.KERNEL_ERRORS as error:
        q, qd = _checks.retry_args(model, error, (q, "q"), (qd, "qd"))
        return coriolis_forces(model, q, qd, data)
    return tau


def bias_forces(model: Model, q: ArrayLike, qd: ArrayLike, data: Data | None = None) -> np.ndarray:
    """b(q, q̇) = c(q, q̇) + g(q) (n,) (eq. 9.1), by recursive Newton–Euler with q̈ = 0 (eq. 9.89)."""
    tau = empty(model.nq)
    try:
        _k.bias(_checks.buffer(model, data), q, qd, tau)
    except _checks.KERNEL_ERRORS as error:
        q, qd = _checks.retry_args(model, error, (q, "q"), (qd, "qd"))
        return bias_forces(model, q, qd, data)
    return tau


def inverse_dynamics_trajectory(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                                f_tip: ArrayLike | None = None, frame: str | None = None,
                                friction: Friction = None, data: Data | None = None) -> np.ndarray:
    """τ_k = M(q_k) q̈_k + c(q_k, q̇_k) + g(q_k) + Jᵀ F_tip,k (eq. 9.81) for N states at once (RNEA,
    eqs. 9.53–9.57).

    q, qd, qdd: (N, n). f_tip: (N, 6) or (6,) at `frame`, in its coordinates. friction as in
    inverse_dynamics. Returns τ of shape (N, n). One compiled loop per range of states (threads.py:
    get_num_threads() ranges at most, none under MIN_CHUNK states), no Python call per state; the
    same τ for any thread count.
    """
    n = model.nq
    q = _checks.array(model, q, "q", (None, n))
    N = q.shape[0]
    qd = _checks.array(model, qd, "qd", (N, n))
    qdd = _checks.array(model, qdd, "qdd", (N, n))
    if f_tip is None:
        fr, tips = -1, np.zeros((1, 6))
    else:
        fr = model.frame_index(frame)
        tips = _checks.real_array(f_tip, "f_tip", "a wrench (6,) or one per state (N, 6)")
        tips = _checks.array(model, np.broadcast_to(tips, (N, 6)) if tips.shape == (6,) else tips, "f_tip",
                             (N, 6))
    tau = empty((N, n))
    buf = _checks.buffer(model, data)

    def rows(start, stop, workspace):   # one range of states, in its own copy of the workspace
        _k.rnea_batch(workspace, q[start:stop], qd[start:stop], qdd[start:stop], fr,
                      tips[start:stop] if fr >= 0 else tips, tau[start:stop])
    threads.run_chunks(N, rows, MIN_CHUNK, buf)
    if friction is not None:
        tau = _checks.finite(tau + applied_friction(model, qd, friction), "tau plus friction torques",
                             "q, qd, qdd and friction coefficients")
    return tau
