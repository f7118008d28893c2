"""Dense linear algebra for the small systems of the dynamics: no allocation, no LAPACK dispatch.

    M = L L^T                      (Cholesky; M symmetric positive definite)
    x = M^-1 b = L^-T (L^-1 b)     (two triangular solves, no inverse)
    Λ = (J M^-1 J^T + δ 1)^-1      with Y = L^-1 J^T:  J M^-1 J^T = Y^T Y   (eq. 9.98 for square J, δ = 0)
"""
import numpy as np

from .layout import inline


@inline
def cholesky_in_place(A, n):
    """A[:n, :n] = L with L L^T = A (lower triangle; the upper is left untouched). False if A is not
    positive definite."""
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            return False
        d = np.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    return True


@inline
def cholesky_solve_in_place(L, n, b):
    """b = (L L^T)^-1 b for a vector b."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


@inline
def task_space_inertia_from_cholesky(L, n, J, damping, Y, Lam_inv, unit, Lam):
    """Λ = (J M^-1 J^T + damping 1)^-1 into Lam (6 x 6), from the Cholesky factor L of M and J (6 x n).
    Scratch: Y (n x 6), Lam_inv (6 x 6), unit (6,). False when J M^-1 J^T + damping 1 is singular."""
    for c in range(6):                      # Y = L^-1 J^T
        for i in range(n):
            s = J[c, i]
            for k in range(i):
                s -= L[i, k] * Y[k, c]
            Y[i, c] = s / L[i, i]
    for r in range(6):                      # Λ^-1 = Y^T Y + damping 1
        for c in range(r + 1):
            s = 0.0
            for k in range(n):
                s += Y[k, r] * Y[k, c]
            Lam_inv[r, c] = s
            Lam_inv[c, r] = s
        Lam_inv[r, r] += damping
    if not cholesky_in_place(Lam_inv, 6):
        return False
    for c in range(6):                      # Λ, column by column
        for r in range(6):
            unit[r] = 0.0
        unit[c] = 1.0
        cholesky_solve_in_place(Lam_inv, 6, unit)
        for r in range(6):
            Lam[r, c] = unit[r]
    return True
