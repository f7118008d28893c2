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
    n = model.nq
    if k.__class__ is not float or not np.isfinite(k):
        expected = f"a finite scalar, a vector of {n} gains or a {n}x{n} matrix"
        k = _checks.real_array(k, name, expected)
        if k.shape not in ((), (n,), (n, n)) or not np.isfinite(k).all():
            raise ValueError(f"{name} must be {expected}, got shape {k.shape}"
                             + ("" if np.isfinite(k).all() else " with NaN or inf"))
    if np.ndim(k) == 2:     # C order: K x then rounds as for a float64 matrix (BLAS: another path if strided)
        return np.ascontiguousarray(k) @ x
    return k * x


def _float64(v, name, n):
    """v as float64 values, or a ValueError naming it (a float64 array as is)."""
    return v if v.__class__ is np.ndarray and v.dtype == np.float64 else _checks.real_array(
        v, name, f"a numeric vector of length {n}")


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
    # Fast path: NaN or inf in any input, or an overflow, reaches q̈_ref or τ, which inverse_dynamics
    # refuses; then each argument is checked again below, to say which one is wrong.
    q_, qd_, qs, qds, qdds = (_float64(v, name, n) for v, name in ((q, "q"), (qd, "qd"), (q_des, "q_des"),
                                                                   (qd_des, "qd_des"), (qdd_des, "qdd_des")))
    if q_.shape == qd_.shape == qs.shape == qds.shape == qdds.shape == (n,):
        try:
            qdd_ref = qdds + _apply_gain(model, kd, qds - qd_, "kd") + _apply_gain(model, kp, qs - q_, "kp")
            return inverse_dynamics(model, q_, qd_, qdd_ref, friction=friction, data=data)
        except ValueError:
            pass
    q = _checks.vector(model, q, "q")
    qd = _checks.vector(model, qd, "qd")
    e = _checks.vector(model, q_des, "q_des") - q
    edot = _checks.vector(model, qd_des, "qd_des") - qd
    qdd_ref = _checks.finite(_checks.vector(model, qdd_des, "qdd_des") + _apply_gain(model, kd, edot, "kd")
                             + _apply_gain(model, kp, e, "kp"),
                             "the reference acceleration qdd_des + kd (qd_des - qd) + kp (q_des - q)",
                             "q, qd, q_des, qd_des, qdd_des, kp, kd")
    try:
        return inverse_dynamics(model, q, qd, qdd_ref, friction=friction, data=data)
    except ValueError as error:      # its qdd is q̈_ref: say what that is made of
        raise ValueError(f"{error}; here qdd = qdd_des + kd (qd_des - qd) + kp (q_des - q)") from None
