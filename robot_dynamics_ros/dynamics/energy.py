"""Kinetic and potential energy of the tree (eqs. 9.10, 9.59), in J."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .jacobians import body_jacobians
from .kernels import entries as _k
from .model import Data, Model
from .spatial import spatial_inertia


def kinetic_energy(model: Model, q: ArrayLike, qd: ArrayLike, data: Data | None = None) -> float:
    """K = ½ Σ_i V_iᵀ G_i V_i (eq. 9.59) in J, V_i = J_ib q̇ the twist of link frame {i} in {i}.
    Equals ½ q̇ᵀ M(q) q̇ (eq. 9.10)."""
    qd = _checks.vector(model, qd, "qd")
    K = 0.0
    for i, J in enumerate(body_jacobians(model, q, data)):
        V = J @ qd
        K += 0.5 * V @ spatial_inertia(model.mass[i], model.com[i], model.inertia_com[i]) @ V
    return float(K)


def potential_energy(model: Model, q: ArrayLike, data: Data | None = None) -> float:
    """P(q) = −Σ_i m_i gᵀ p_ci in J: gravitational potential energy of the links' centres of mass in
    the root frame (zero at the root origin), so that g(q) = ∂P/∂q (eq. 9.12)."""
    q = _checks.vector(model, q, "q")
    T = _k.body_poses(_checks.buffer(model, data), q)
    com = np.einsum("nij,nj->ni", T[:, :3, :3], model.com) + T[:, :3, 3]
    return float(-np.sum(model.mass * (com @ model.gravity)))
