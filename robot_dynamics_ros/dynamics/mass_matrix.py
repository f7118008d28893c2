"""The joint-space mass matrix M(q): composite-rigid-body algorithm and the textbook's eq. 9.61.

M's entries are in kg·m² (revolute–revolute), kg·m (revolute–prismatic) or kg (prismatic–prismatic).
"""
from __future__ import annotations

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks, threads
from .inertia import spatial_inertia
from .jacobians import body_jacobians
from .kernels import entries as _k
from .model import Data, Model

#: Configurations per range at least when mass_matrix_trajectory splits across threads (≥ 0.15 ms:
#: threads.py) at 0.40 µs per configuration on a 7-joint arm.
MIN_CHUNK = 400


def mass_matrix(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """M(q) (n, n), symmetric positive definite (eq. 9.1), by the composite-rigid-body algorithm.

    Equals eq. 9.61, M = Σ_i J_ibᵀ G_i J_ib, and the closed form 𝒜ᵀℒᵀ𝒢ℒ𝒜 (eq. 9.82), in O(n·depth).
    q: (n,) in model.joint_names order; rows and columns in the same order.
    """
    M = empty(model._square)
    try:
        _k.crba(_checks.buffer(model, data), q, M)
    except _checks.KERNEL_ERRORS as error:
        (q,) = _checks.retry_args(model, error, (q, "q"))
        return mass_matrix(model, q, data)
    return M


def mass_matrix_trajectory(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """M(q_k) (eq. 9.1) for N configurations q (N, n) at once: (N, n, n). The CRBA in one compiled
    loop per range of configurations (threads.py: get_num_threads() ranges at most, none under
    MIN_CHUNK); the same M for any thread count."""
    q = _checks.array(model, q, "q", (None, model.nq))
    M = empty((q.shape[0], model.nq, model.nq))
    buf = _checks.buffer(model, data)

    def rows(start, stop, workspace):   # one range of configurations, in its own copy of the workspace
        _k.crba_batch(workspace, q[start:stop], M[start:stop])
    threads.run_chunks(q.shape[0], rows, MIN_CHUNK, buf)
    return M


def mass_matrix_via_jacobians(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """M(q) = Σ_i J_ibᵀ(q) G_i J_ib(q) + diag(armature) (eq. 9.61, plus the rotors' reflected inertia):
    body Jacobians of every link frame {i} and the links' spatial inertias G_i in {i} (kg, kg·m, kg·m²).
    O(n²) per link; a cross-check of mass_matrix."""
    M = np.diag(model.armature)
    for i, J in enumerate(body_jacobians(model, q, data)):
        M += J.T @ spatial_inertia(model.mass[i], model.com[i], model.inertia_com[i]) @ J
    return _checks.finite(M, "M(q)", "q")
