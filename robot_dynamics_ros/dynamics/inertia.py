"""Rigid-body inertias outside the kernels: the parallel-axis theorem, lumping parts into one body, the
spatial inertia and its split, and the checks of a body's mass and rotational inertia.

A body's inertia is (m, c, I_c): mass (kg), centre of mass c (m) and rotational inertia about c
(kg m^2), both in the body frame {i}. About the origin of {i} the rotational inertia is
I_o = I_c + m [c]^T [c] (parallel axis) and the spatial inertia, angular first,
G = [[I_c - m [c]^2, m [c]], [-m [c], m 1]] (eq. 9.41 moved off the centre of mass).
The numba kernels keep their own form of the same quantities (kernels/spatial_algebra.py).
"""
from __future__ import annotations

import numpy as np

from .model_checks import MAX_INERTIA, MAX_MASS, first
from .spatial import skew


def parallel_axis(mass, com):
    """m ([c]^T [c]) = m (|c|² 1 − c c^T) for each (mass (k,), com (k, 3)): (k, 3, 3), what moving a
    rotational inertia from the centre of mass c to the origin adds (I_o = I_c + m [c]^T [c])."""
    cc = np.einsum("ij,ij->i", com, com)[:, None, None]
    return mass[:, None, None] * (cc * np.eye(3) - com[:, :, None] * com[:, None, :])


def _sum_per_body(body, values, n):
    """(n, ...) sums of the rows of values (k, ...) with the same body index body[k], added in row order
    (np.add.at's result; bincount is its fast form)."""
    flat = values.reshape(len(values), int(np.prod(values.shape[1:])))
    sums = [np.bincount(body, weights=flat[:, j], minlength=n) for j in range(flat.shape[1])]
    return np.stack(sums, axis=1).reshape((n,) + values.shape[1:])


def lump_inertias(body, mass, com, inertia_com, n):
    """(mass (n,), com (n, 3), inertia about the com (n, 3, 3)) of n bodies made of k rigid parts: part k
    (mass[k], its centre of mass com[k] and rotational inertia about it inertia_com[k], both in body[k]'s
    frame) belongs to body body[k]. About each body's origin the parts add: m = Σ m_k, h = Σ m_k c_k,
    I_o = Σ (I_c,k + m_k ([c_k]^T [c_k])) (parallel axis), then c = h / m and I_c = I_o − m ([c]^T [c])."""
    total = _sum_per_body(body, mass, n)
    first_moment = _sum_per_body(body, mass[:, None] * com, n)
    second = _sum_per_body(body, inertia_com + parallel_axis(mass, com), n)
    centre = np.zeros((n, 3))
    np.divide(first_moment, total[:, None], out=centre, where=total[:, None] > 0)
    about_com = second - parallel_axis(total, centre)
    return total, centre, 0.5 * (about_com + about_com.transpose(0, 2, 1))


def spatial_inertia(mass, com, inertia_com):
    """G in a frame whose origin is off the centre of mass c:
    G = Ad_{T_cb}^T diag(I_c, m 1) Ad_{T_cb} = [[I_c - m[c]^2, m[c]], [-m[c], m 1]] (eq. 9.41 moved)."""
    C = skew(com)
    G = np.zeros((6, 6))
    G[:3, :3] = inertia_com - mass * C @ C
    G[:3, 3:] = mass * C
    G[3:, :3] = -mass * C
    G[3:, 3:] = mass * np.eye(3)
    return G


def split_spatial_inertia(G, label):
    """(m, c, I_c) of a spatial inertia G = [[I_c − m[c]², m[c]], [−m[c], m 1]] (about a frame's origin),
    checked as a Model checks a body's (check_inertia); ValueError naming `label` (e.g. 'Glist[2]')."""
    if not np.all(np.isfinite(G)):
        raise ValueError(f"{label} must be finite")
    if not np.allclose(G, G.T, atol=1e-9):
        raise ValueError(f"{label} must be symmetric")
    m = G[3, 3]
    if not np.allclose(G[3:, 3:], m * np.eye(3), atol=1e-9) or m < 0:
        raise ValueError(f"{label}: lower-right block must be m·1 with m >= 0")
    mc_skew = G[:3, 3:]
    if not np.allclose(mc_skew, -mc_skew.T, atol=1e-9):
        raise ValueError(f"{label}: upper-right block must be m[c] (skew-symmetric)")
    c = np.array([mc_skew[2, 1], mc_skew[0, 2], mc_skew[1, 0]]) / m if m > 0 else np.zeros(3)
    Ic = G[:3, :3] - m * (c @ c * np.eye(3) - np.outer(c, c))
    Ic = 0.5 * (Ic + Ic.T)
    check_inertia(lambda _: label, [m], [Ic])
    return m, c, Ic


def check_inertia(label, mass, inertia):
    """ValueError naming label(i) unless every mass[i] (kg) is finite with 0 <= m <= MAX_MASS and every
    rotational inertia[i] (3x3, kg m^2) is finite, symmetric, positive semi-definite (smallest
    eigenvalue >= -1e-12 max(1, |I|max)) with entries at most MAX_INERTIA. mass (k,), inertia (k, 3, 3)."""
    mass = np.asarray(mass, dtype=float).reshape(-1)
    inertia = np.asarray(inertia, dtype=float).reshape(-1, 3, 3)
    bad = ~(np.isfinite(mass) & (mass >= 0) & (mass <= MAX_MASS))
    if bad.any():
        i = first(bad)
        raise ValueError(f"{label(i)}: mass must be a finite non-negative number of at most {MAX_MASS:g} kg, "
                         f"got {mass[i]}")
    finite = np.isfinite(inertia).all(axis=(1, 2))
    bad = ~(finite & np.isclose(inertia, inertia.transpose(0, 2, 1), atol=1e-12).all(axis=(1, 2)))
    if bad.any():
        raise ValueError(f"{label(first(bad))}: inertia tensor must be finite and symmetric")
    largest = np.abs(inertia).max(axis=(1, 2), initial=0.0)
    if np.any(largest > MAX_INERTIA):
        raise ValueError(f"{label(first(largest > MAX_INERTIA))}: inertia tensor entries must be at most "
                         f"{MAX_INERTIA:g} kg m^2")
    eig = np.linalg.eigvalsh(inertia) if len(inertia) else np.zeros((0, 3))
    bad = eig[:, 0] < -1e-12 * np.maximum(1.0, largest)
    if bad.any():
        i = first(bad)
        raise ValueError(f"{label(i)}: inertia tensor is not positive semi-definite (eigenvalues {eig[i]})")


def rigid_body_error(mass, inertia_com):
    """Why (mass, rotational inertia about the com) is no rigid body, or None: mass > 0, I_c positive
    definite and its principal moments satisfying the triangle inequalities (each at most the sum of the
    other two: a body's mass lies somewhere in space)."""
    if not mass > 0.0:
        return f"mass must be > 0, got {mass:g} kg"
    moments = np.linalg.eigvalsh(0.5 * (inertia_com + inertia_com.T))
    if not moments[0] > 0.0:
        return (f"rotational inertia about the centre of mass is not positive definite (principal moments "
                f"{moments})")
    return triangle_error(moments)


def triangle_error(moments):
    """Why principal moments (ascending) are no body's, or None: the largest at most the sum of the
    other two (equal for a thin rod or plate)."""
    if moments[2] > moments[0] + moments[1] + 1e-12 * moments[2]:
        return (f"principal moments {moments} violate the triangle inequality (the largest exceeds the "
                "sum of the other two)")
    return None
