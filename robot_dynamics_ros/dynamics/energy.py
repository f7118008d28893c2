"""Kinetic and potential energy of the tree (eqs. 9.10, 9.59), in J."""
from __future__ import annotations

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks
from .kernels import entries as _k
from .model import Data, Model


def kinetic_energy(model: Model, q: ArrayLike, qd: ArrayLike, data: Data | None = None) -> float:
    """K = ½ q̇ᵀ M(q) q̇ (eq. 9.10) in J, equal to ½ Σ_i V_iᵀ G_i V_i (eq. 9.59) summed over the
    links' twists. The momentum M(q) q̇ comes from inverse dynamics with q̇ = 0, q̈ = q̇ and no
    gravity (eq. 9.81 with c = g = 0; momentum_balance): O(n) time and memory, M is never formed."""
    p = empty(model.nq)         # M(q) q̇
    try:
        _k.momentum(_checks.buffer(model, data), q, qd, p)
    except _checks.KERNEL_ERRORS as error:
        q, qd = _checks.retry_args(model, error, (q, "q"), (qd, "qd"))
        return kinetic_energy(model, q, qd, data)
    return float(_checks.finite(0.5 * (qd @ p), "kinetic energy", "q, qd"))


def potential_energy(model: Model, q: ArrayLike, data: Data | None = None) -> float:
    """P(q) = −Σ_i m_i gᵀ p_ci in J: gravitational potential energy of the links' centres of mass in
    the root frame (zero at the root origin), so that g(q) = ∂P/∂q (eq. 9.12)."""
    q = _checks.vector(model, q, "q")
    T = _k.body_poses(_checks.buffer(model, data), q)
    com = np.einsum("nij,nj->ni", T[:, :3, :3], model.com) + T[:, :3, 3]
    return float(_checks.finite(-np.sum(model.mass * (com @ model.gravity)), "potential energy", "q"))
