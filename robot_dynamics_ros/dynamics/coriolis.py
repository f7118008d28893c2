"""The Coriolis matrix C(q, q̇) (eq. 9.87), Christoffel symbols (eq. 9.13) and ∂M/∂q."""
from __future__ import annotations

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks
from .kernels import entries as _k
from .model import Data, Model


def coriolis_matrix(model: Model, q: ArrayLike, qd: ArrayLike, data: Data | None = None) -> np.ndarray:
    """C(q, q̇) (n, n) with C_ij = Σ_k Γ_ijk q̇_k (eq. 9.87): the Christoffel-consistent factorisation,
    so c = C q̇ (eq. 9.88) and Ṁ − 2C is skew-symmetric (Proposition 9.1; Ḃ − 2C in the notes).

    O(n²): C = Σ_i J_iᵀ(I_i J̇_i + B_i J_i) in root coordinates, with B_i = ½(−ad_Vᵀ I − I ad_V − ad̄(I V))
    accumulated over subtrees (see kernels/christoffel.py). For the vector c use coriolis_forces.
    q (rad or m), qd (rad/s or m/s): (n,); C q̇ is in N·m or N.
    """
    C = empty(model._square)
    try:
        _k.coriolis_matrix(_checks.buffer(model, data), q, qd, C)
    except _checks.KERNEL_ERRORS as error:
        q, qd = _checks.retry_args(model, error, (q, "q"), (qd, "qd"))
        return coriolis_matrix(model, q, qd, data)
    return C


def mass_matrix_derivatives(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """∂M/∂q_k for every k, shape (n, n, n) with [:, :, k] = ∂M/∂q_k.

    Since Ṁ = Σ_k (∂M/∂q_k) q̇_k = C(q, q̇) + C(q, q̇)ᵀ (Proposition 9.1) holds for every q̇ and both
    sides are linear in q̇, ∂M/∂q_k = C(q, e_k) + C(q, e_k)ᵀ: n Coriolis matrices (eq. 9.87), O(n³).
    """
    try:
        return _k.mass_matrix_derivatives(_checks.buffer(model, data), q)
    except _checks.KERNEL_ERRORS as error:
        (q,) = _checks.retry_args(model, error, (q, "q"))
        return mass_matrix_derivatives(model, q, data)


def christoffel_symbols(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """Γ_ijk(q) of the first kind, shape (n, n, n) (eq. 9.13 / 9.86):
    Γ_ijk = ½ (∂m_ij/∂q_k + ∂m_ik/∂q_j − ∂m_jk/∂q_i), so that c_i = Σ_jk Γ_ijk q̇_j q̇_k (eq. 9.12)."""
    dM = mass_matrix_derivatives(model, q, data)        # dM[i, j, k] = ∂m_ij/∂q_k
    return _checks.finite(0.5 * (dM + np.transpose(dM, (0, 2, 1)) - np.transpose(dM, (2, 0, 1))),
                          "Christoffel symbols", "q")
