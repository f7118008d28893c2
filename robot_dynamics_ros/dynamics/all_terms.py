"""Every term of the equation of motion at one state, from one forward-kinematics pass."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .jacobians import reference_code
from .kernels import entries as _k, state_terms as _state_terms
from .model import Data, Model


class AllTerms(NamedTuple):
    """The terms of τ = M(q) q̈ + c(q, q̇) + g(q) (eq. 9.81) and, at a frame, of F = Λ V̇ + η (eq. 9.97).

    M (n, n) mass matrix; c (n,) Coriolis and centripetal torques C(q, q̇) q̇; g (n,) gravity torques;
    J (6, n) the frame's Jacobian, Lambda (6, 6) its task-space inertia, eta (6,) its task-space bias,
    all in the requested reference, angular first (None when no frame was asked for).
    """
    M: np.ndarray
    c: np.ndarray
    g: np.ndarray
    J: np.ndarray | None
    Lambda: np.ndarray | None
    eta: np.ndarray | None


def _term_arrays(n: int) -> tuple:
    """Arrays the all-terms kernel writes: M, c, g, J, Λ, η, T_0f and its scratch."""
    return (np.empty((n, n)), np.empty(n), np.empty(n), np.empty((6, n)), np.empty((6, 6)), np.empty(6),
            np.empty((4, 4)), np.empty((_state_terms.scratch_rows(n), max(n, 6))))


def _kept_term_arrays(data: Data) -> tuple:
    """_term_arrays kept in `data` (made on its first use, then refilled by every call with it)."""
    arrays = data.all_terms_arrays
    if arrays is None:
        arrays = _term_arrays(data.model.nq)
        object.__setattr__(data, "all_terms_arrays", arrays)
    return arrays


def compute_all_terms(model: Model, q: ArrayLike, qd: ArrayLike, frame: str | None = None,
                      reference: str = "space", damping: float = 0.0, data: Data | None = None) -> AllTerms:
    """M(q), c(q, q̇) = C(q, q̇) q̇ and g(q), and with `frame` also J, Λ and η at that frame, from one
    forward-kinematics pass (as Pinocchio's computeAllTerms): what a node publishing several terms
    of one state needs, for the price of one call.

    The values equal mass_matrix, coriolis_forces, gravity_torques, jacobian(frame, reference),
    task_space_inertia(frame, reference, damping) and task_space_bias(frame, reference, damping):
    g and c by recursive Newton-Euler (eqs. 9.53-9.57), M by the composite-rigid-body algorithm,
    Λ = (J M⁻¹ Jᵀ + damping·1)⁻¹ (eq. 9.98) and η = Λ (J M⁻¹ (c + g) − J̇ q̇) (eq. 9.99) from the
    Cholesky factor of M. q, qd: (n,) in model.joint_names order (rad, m; rad/s, m/s).

    With `data`, the arrays returned are data's own and the next call with that data overwrites
    them (no allocation per call); without, they are new arrays. ValueError for bad arguments, and,
    with a frame, when J M⁻¹ Jᵀ + damping·1 is singular (pass damping > 0).
    """
    try:
        buf = _checks.buffer(model, data)
        arrays = _term_arrays(model.nq) if data is None else _kept_term_arrays(data)
        frame_index = -1 if frame is None else model.frame_index(frame)
        damping_value = (damping if damping.__class__ is float and 0.0 <= damping < np.inf
                         else _checks.scalar(damping, "damping", minimum=0.0))
        status = _k.all_terms(buf, q, qd, frame_index, reference_code(reference), damping_value, *arrays)
    except _checks.KERNEL_ERRORS as error:
        q, qd = _checks.retry_args(model, error, (q, "q"), (qd, "qd"))
        return compute_all_terms(model, q, qd, frame, reference, damping, data)
    if status == _state_terms.STATUS_M_NOT_POSITIVE_DEFINITE:
        raise ValueError(_k.NOT_POSITIVE_DEFINITE)
    if status == _state_terms.STATUS_TASK_SPACE_SINGULAR:
        raise ValueError(_k.SINGULAR_TASK_SPACE)
    M, c, g, J, Lam, eta = arrays[:6]
    if frame is None:
        return AllTerms(M, c, g, None, None, None)
    return AllTerms(M, c, g, J, Lam, eta)
