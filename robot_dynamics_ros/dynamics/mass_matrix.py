"""The joint-space mass matrix M(q): composite-rigid-body algorithm and the textbook's eq. 9.61."""
import numpy as np

from . import _checks
from . import _kernels as _k
from .jacobians import body_jacobians
from .spatial import spatial_inertia



def mass_matrix(model, q, data=None):
    """M(q) (n, n), symmetric positive definite, by the composite-rigid-body algorithm.

    Equals eq. 9.61, M = Σ_i J_ibᵀ G_i J_ib, and the closed form 𝒜ᵀℒᵀ𝒢ℒ𝒜 (eq. 9.82), in O(n·depth).
    """
    M = np.empty(model._square)
    try:
        _k.crba((model._data.buffer if data is None else _checks.buffer(model, data)), q, M)
        return M
    except _checks.KERNEL_ERRORS as exc:
        args = _checks.retry_args(model, exc, (q, "q"))
        return mass_matrix(model, *args, data)


def mass_matrix_trajectory(model, q, data=None):
    """M(q_k) for N configurations q (N, n) at once (CRBA in one compiled loop): (N, n, n)."""
    q = _checks.array(model, q, "q", (None, model.nq))
    M = np.empty((q.shape[0], model.nq, model.nq))
    _k.crba_batch((model._data.buffer if data is None else _checks.buffer(model, data)), q, M)
    return M


def mass_matrix_via_jacobians(model, q):
    """M(q) = Σ_i J_ibᵀ(q) G_i J_ib(q) (eq. 9.61): body Jacobians of every link frame {i} and the
    links' spatial inertias G_i in {i}. O(n²) per link; a cross-check of mass_matrix."""
    M = np.zeros((model.nq, model.nq))
    for i, J in enumerate(body_jacobians(model, q)):
        M += J.T @ spatial_inertia(model.mass[i], model.com[i], model.inertia_com[i]) @ J
    return M
