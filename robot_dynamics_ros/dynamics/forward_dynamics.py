"""Forward dynamics q̈ = M⁻¹(τ − c − g − Jᵀ F_tip): articulated-body algorithm and the textbook's
mass-matrix route (GetJointAccel).

Units: q in rad or m, q̇ in rad/s or m/s, τ in N·m or N, q̈ in rad/s² or m/s².
"""
from __future__ import annotations

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks, threads
from .friction import Friction, applied_friction
from .kernels import entries as _k
from .model import Data, Model

_NO_WRENCH = np.zeros(6)

#: States per range at least when forward_dynamics_trajectory splits across threads (≥ 0.15 ms: threads.py)
#: at 0.68 µs per state on a 7-joint arm.
MIN_CHUNK = 256


def _net_torque(model, qd, tau, friction):
    """τ − F_v q̇ − F_s sgn(q̇): the torque left to accelerate the joints."""
    return _checks.finite(_checks.vector(model, tau, "tau")
                          - applied_friction(model, _checks.vector(model, qd, "qd"), friction),
                          "tau minus friction torques", "tau, qd and friction coefficients")


def forward_dynamics(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
                     f_tip: ArrayLike | None = None, frame: str | None = None, friction: Friction = None,
                     data: Data | None = None) -> np.ndarray:
    """q̈ = M(q)⁻¹ (τ − c(q, q̇) − g(q) − Jᵀ F_tip) (eq. 9.2) by the articulated-body algorithm, O(n).

    Arguments as inverse_dynamics; friction torques F_v q̇ + F_s sgn(q̇) are subtracted from τ.
    Inverse of inverse_dynamics: inverse_dynamics(q, q̇, forward_dynamics(q, q̇, τ)) = τ.
    Returns q̈ (n,).
    """
    qdd = empty(model.nq)
    try:
        net_tau = tau if friction is None else _net_torque(model, qd, tau, friction)
        buf = _checks.buffer(model, data)
        if f_tip is None:
            _k.aba(buf, q, qd, net_tau, qdd)
        else:
            _k.aba_tip(buf, q, qd, net_tau, model.frame_index(frame), f_tip, qdd)
    except _checks.KERNEL_ERRORS as error:      # a refused argument: a ValueError naming it, or converted
        q, qd, tau, f_tip = _checks.retry_args(model, error, (q, "q"), (qd, "qd"), (tau, "tau"),
                                               (f_tip, "f_tip", 6))
        return forward_dynamics(model, q, qd, tau, f_tip, frame, friction, data)
    return qdd


def forward_dynamics_via_mass_matrix(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
                                     f_tip: ArrayLike | None = None, frame: str | None = None,
                                     friction: Friction = None, data: Data | None = None) -> np.ndarray:
    """q̈ (n,) from M(q) q̈ = τ − b(q, q̇) − Jᵀ F_tip (eqs. 9.89–9.90, the textbook's GetJointAccel):
    M by CRBA, b by RNEA, then a Cholesky solve M = L Lᵀ (no explicit inverse). Arguments as
    forward_dynamics."""
    try:
        net_tau = tau if friction is None else _net_torque(model, qd, tau, friction)
        fr, tip = (-1, _NO_WRENCH) if f_tip is None else (model.frame_index(frame), f_tip)
        return _k.fd_via_mass_matrix(_checks.buffer(model, data), q, qd, net_tau, fr, tip)
    except _checks.KERNEL_ERRORS as error:
        q, qd, tau, f_tip = _checks.retry_args(model, error, (q, "q"), (qd, "qd"), (tau, "tau"),
                                               (f_tip, "f_tip", 6))
        return forward_dynamics_via_mass_matrix(model, q, qd, tau, f_tip, frame, friction, data)


def forward_dynamics_trajectory(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
                                friction: Friction = None, data: Data | None = None) -> np.ndarray:
    """q̈_k (eq. 9.2) for N states at once: q, qd, tau of shape (N, n) -> (N, n). The ABA in one
    compiled loop per range of states (threads.py: get_num_threads() ranges at most, none under
    MIN_CHUNK states); the same q̈ for any thread count."""
    n = model.nq
    q = _checks.array(model, q, "q", (None, n))
    qd = _checks.array(model, qd, "qd", q.shape)
    tau = _checks.array(model, tau, "tau", q.shape)
    if friction is not None:
        tau = _checks.finite(tau - applied_friction(model, qd, friction), "tau minus friction torques",
                             "tau, qd and friction coefficients")
    qdd = empty(q.shape)
    buf = _checks.buffer(model, data)

    def rows(start, stop, workspace):   # one range of states, in its own copy of the workspace
        _k.aba_batch(workspace, q[start:stop], qd[start:stop], tau[start:stop], qdd[start:stop])
    threads.run_chunks(q.shape[0], rows, MIN_CHUNK, buf)
    return qdd
