"""Task-space (operational-space) dynamics F = Λ V̇ + η (eqs. 9.97–9.99).

Twists V = (ω, v) in rad/s and m/s, wrenches F = (m, f) in N·m and N, in the frame of `reference`.
"""
from __future__ import annotations

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks
from .all_terms import compute_all_terms
from .jacobians import reference_code
from .kernels import entries as _k
from .model import Data, Model

_INF = float("inf")


def task_space_inertia(model: Model, q: ArrayLike, frame: str | None = None, reference: str = "space",
                       damping: float = 0.0, data: Data | None = None) -> np.ndarray:
    """Λ(q) = (J M⁻¹ Jᵀ + damping·1)⁻¹ (6, 6) at a frame, J = jacobian(model, q, frame, reference).

    For a square invertible J this is J⁻ᵀ M J⁻¹ (eq. 9.98); the form used also serves redundant arms
    (n > 6). With fewer than six joints or at a singularity J M⁻¹ Jᵀ is singular: a ValueError asks
    for damping > 0 (damped least squares). Computed with two Cholesky factorisations, no inverse of M.
    """
    Lam = empty((6, 6))
    try:
        damping_value = (damping if damping.__class__ is float and 0.0 <= damping < _INF
                         else _checks.scalar(damping, "damping", minimum=0.0))
        _k.task_space_inertia(_checks.buffer(model, data), q, model.frame_index(frame),
                              reference_code(reference), damping_value, Lam)
    except _checks.KERNEL_ERRORS as error:
        (q,) = _checks.retry_args(model, error, (q, "q"))
        return task_space_inertia(model, q, frame, reference, damping, data)
    return Lam


def task_space_bias(model: Model, q: ArrayLike, qd: ArrayLike, frame: str | None = None,
                    reference: str = "space", damping: float = 0.0, data: Data | None = None) -> np.ndarray:
    """η(q, V) (6,) = Λ (J M⁻¹ b − J̇ q̇), so that F = Λ V̇ + η (eq. 9.97).

    For a square invertible J this is eq. 9.99, J⁻ᵀ b − Λ J̇ J⁻¹ V. The η of compute_all_terms (one
    kinematics pass; M⁻¹ b from the Cholesky factor of M), returned as a new array.
    """
    frame = model.tip_frame if frame is None else frame       # compute_all_terms: None = no frame
    terms = compute_all_terms(model, q, qd, frame, reference, damping, data)
    return terms.eta.copy()
