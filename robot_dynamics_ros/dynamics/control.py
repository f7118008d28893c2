"""Computed-torque control (textbook §11.4.1)."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .friction import Friction
from .inverse_dynamics import inverse_dynamics
from .model import Data, Model


def _apply_gain(model, k, x, name):
    """K x for a gain given as a scalar, a per-joint vector (diagonal K) or an (n, n) matrix."""
    k = np.asarray(k, dtype=float)
    if k.ndim == 2 and k.shape == (model.nq, model.nq) and np.isfinite(k).all():
        return k @ x
    if k.shape in ((), (model.nq,)) and np.isfinite(k).all():
        return k * x
    raise ValueError(f"{name} must be a finite scalar, a vector of {model.nq} gains or a "
                     f"{model.nq}x{model.nq} matrix, got shape {k.shape}")


def computed_torque(model: Model, q: ArrayLike, qd: ArrayLike, q_des: ArrayLike, qd_des: ArrayLike,
                    qdd_des: ArrayLike, kp: ArrayLike, kd: ArrayLike, friction: Friction = None,
                    data: Data | None = None) -> np.ndarray:
    """τ = M(q)(q̈_d + K_d ė + K_p e) + c(q, q̇) + g(q), e = q_d − q, ė = q̇_d − q̇ (eq. 11.35 without
    the integral term): exact feedback linearisation, so the error obeys ë + K_d ė + K_p e = 0.

    q, qd and the desired q_des, qd_des, qdd_des: (n,) in model.joint_names order (rad, rad/s, rad/s²
    or m, m/s, m/s²). kp (1/s²), kd (1/s): scalars, per-joint vectors or (n, n) matrices. One RNEA
    call (eqs. 9.53–9.57) with q̈ = q̈_d + K_d ė + K_p e. Returns τ (n,) in N·m or N.
    """
    n = model.nq
    try:   # fast path: NaN or inf in any input reaches q̈_ref, which inverse_dynamics refuses
        q_, qd_, qs, qds, qdds = (np.asarray(v, dtype=np.float64) for v in (q, qd, q_des, qd_des, qdd_des))
        if q_.shape == qd_.shape == qs.shape == qds.shape == qdds.shape == (n,):
            qdd_ref = qdds + _apply_gain(model, kd, qds - qd_, "kd") + _apply_gain(model, kp, qs - q_, "kp")
            return inverse_dynamics(model, q_, qd_, qdd_ref, friction=friction, data=data)
    except (TypeError, ValueError):
        pass       # checked again below, argument by argument, to say which one is wrong
    q = _checks.vector(model, q, "q")
    qd = _checks.vector(model, qd, "qd")
    e = _checks.vector(model, q_des, "q_des") - q
    edot = _checks.vector(model, qd_des, "qd_des") - qd
    qdd_ref = (_checks.vector(model, qdd_des, "qdd_des") + _apply_gain(model, kd, edot, "kd")
               + _apply_gain(model, kp, e, "kp"))
    return inverse_dynamics(model, q, qd, qdd_ref, friction=friction, data=data)
