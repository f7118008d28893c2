"""Forward dynamics q̈ = M⁻¹(τ − c − g − Jᵀ F_tip): articulated-body algorithm and the textbook's
mass-matrix route (GetJointAccel)."""
import numpy as np

from . import _checks
from . import _kernels as _k
from .friction import applied_friction

_NO_WRENCH = np.zeros(6)


def forward_dynamics(model, q, qd, tau, f_tip=None, frame=None, friction=None, data=None):
    """q̈ = M(q)⁻¹ (τ − c(q, q̇) − g(q) − Jᵀ F_tip) (eq. 9.2) by the articulated-body algorithm, O(n).

    Arguments as inverse_dynamics; friction torques F_v q̇ + F_s sgn(q̇) are subtracted from τ.
    Inverse of inverse_dynamics: inverse_dynamics(q, q̇, forward_dynamics(q, q̇, τ)) = τ.
    """
    if friction is not None:
        tau = _checks.vector(model, tau, "tau") - applied_friction(model, _checks.vector(model, qd, "qd"), friction)
    qdd = np.empty(model.nq)
    try:
        buf = model._data.buffer if data is None else _checks.buffer(model, data)
        if f_tip is None:
            _k.aba(buf, q, qd, tau, qdd)
        else:
            _k.aba_tip(buf, q, qd, tau, model.frame_index(frame), f_tip, qdd)
        return qdd
    except _checks.KERNEL_ERRORS as exc:
        args = _checks.retry_args(model, exc, (q, "q"), (qd, "qd"), (tau, "tau"), (f_tip, "f_tip", 6))
        return forward_dynamics(model, *args, frame, None, data)


def forward_dynamics_via_mass_matrix(model, q, qd, tau, f_tip=None, frame=None, friction=None, data=None):
    """q̈ from M(q) q̈ = τ − b(q, q̇) − Jᵀ F_tip (eqs. 9.89–9.90, the textbook's GetJointAccel):
    M by CRBA, b by RNEA, then a Cholesky solve M = L Lᵀ (no explicit inverse)."""
    if friction is not None:
        tau = _checks.vector(model, tau, "tau") - applied_friction(model, _checks.vector(model, qd, "qd"), friction)
    try:
        fr, tip = (-1, _NO_WRENCH) if f_tip is None else (model.frame_index(frame), f_tip)
        return _k.fd_via_mass_matrix((model._data.buffer if data is None else _checks.buffer(model, data)), q, qd, tau, fr, tip)
    except _checks.KERNEL_ERRORS as exc:
        args = _checks.retry_args(model, exc, (q, "q"), (qd, "qd"), (tau, "tau"), (f_tip, "f_tip", 6))
        return forward_dynamics_via_mass_matrix(model, *args, frame, None, data)


def forward_dynamics_trajectory(model, q, qd, tau, friction=None, data=None):
    """q̈_k for N states at once (ABA in one compiled loop): q, qd, tau of shape (N, n) -> (N, n)."""
    n = model.nq
    q = _checks.array(model, q, "q", (None, n))
    qd = _checks.array(model, qd, "qd", q.shape)
    tau = _checks.array(model, tau, "tau", q.shape)
    if friction is not None:
        tau = tau - applied_friction(model, qd, friction)
    qdd = np.empty(q.shape)
    _k.aba_batch((model._data.buffer if data is None else _checks.buffer(model, data)), q, qd, tau, qdd)
    return qdd
