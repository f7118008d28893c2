"""Dense linear algebra for the small systems of the dynamics: no allocation, no LAPACK dispatch.

    M = L L^T                      (Cholesky; M symmetric positive definite)
    x = M^-1 b = L^-T (L^-1 b)     (two triangular solves, no inverse)
    M^-1 = L^-T L^-1               (where M^-1 itself is wanted: ∂q̈/∂τ)
    Λ = (J M^-1 J^T + δ 1)^-1      with Y = L^-1 J^T:  J M^-1 J^T = Y^T Y   (eq. 9.98 for square J, δ = 0)
"""
import numpy as np

from .jit import inline


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


@inline
def inverse_from_cholesky(A, n, X):
    """A[:n, :n] = M^-1 (full, symmetric) from the Cholesky factor L of M in A's lower triangle, with
    X = L^-1 (n x n scratch, lower triangle, zeros above): M^-1 = L^-T L^-1 = X^T X, n³/3 multiply-adds in
    all. Each loop of the two steps runs along rows, so its innermost loop is contiguous (vectorised), and
    takes four rows of X at a time, so that each pass over a row does four multiply-adds per element."""
    lower_triangular_inverse(A, n, X)
    gram_of_lower_triangular(X, n, A)


@inline
def lower_triangular_inverse(L, n, X):
    """X = L^-1 (n x n, lower triangular, zeros above) of the lower triangle L of L[:n, :n], row by row
    (X L = 1 read along row r):

        X[r, r] = 1 / L[r, r],   X[r, :r] = -(L[r, :r] X[:r, :r]) / L[r, r]
    """
    for r in range(n):
        for c in range(n):
            X[r, c] = 0.0
    for r in range(n):
        X[r, r] = 1.0
        k = 0
        while k < r:
            if k + 4 <= r:
                a0, a1, a2, a3 = L[r, k], L[r, k + 1], L[r, k + 2], L[r, k + 3]
                for c in range(k + 4):
                    X[r, c] -= a0 * X[k, c] + a1 * X[k + 1, c] + a2 * X[k + 2, c] + a3 * X[k + 3, c]
                k += 4
            else:
                a = L[r, k]
                for c in range(k + 1):
                    X[r, c] -= a * X[k, c]
                k += 1
        d = 1.0 / L[r, r]
        for c in range(r + 1):
            X[r, c] *= d


@inline
def gram_of_lower_triangular(X, n, A):
    """A[:n, :n] = X^T X (full, symmetric) of a lower triangular X (n x n): the lower triangle

        A[r, c] = sum_{k >= r} X[k, r] X[k, c]      (c <= r)

    summed four rows k of X at a time, then mirrored to the upper one."""
    for r in range(n):
        for c in range(n):
            A[r, c] = 0.0
    k = 0
    while k < n:
        if k + 4 <= n:
            for r in range(k + 4):
                b0, b1, b2, b3 = X[k, r], X[k + 1, r], X[k + 2, r], X[k + 3, r]
                for c in range(r + 1):
                    A[r, c] += b0 * X[k, c] + b1 * X[k + 1, c] + b2 * X[k + 2, c] + b3 * X[k + 3, c]
            k += 4
        else:
            for r in range(k + 1):
                b = X[k, r]
                for c in range(r + 1):
                    A[r, c] += b * X[k, c]
            k += 1
    for r in range(n):
        for c in range(r):
            A[c, r] = A[r, c]


@inline
def row_products(X, Y, out, rows, cols, inner, scale, transposed, offset):
    """out[r, offset + c] (transposed: out[c, offset + r]) = scale * sum_k X[r, k] Y[c, k] for r < rows,
    c < cols, k < inner: the product X Y^T of two matrices given by rows. Every sum runs along two rows
    (contiguous, vectorised), for a block of four rows of X and two of Y at a time: each load feeds two
    or four sums, eight sums in registers (about 17 GFLOP/s of multiply-adds at n = 30, against 6 for
    the row-times-matrix loop). A last, partial block repeats its last row (column): the same sum, written
    twice."""
    for r in range(0, rows, 4):
        r1, r2, r3 = min(r + 1, rows - 1), min(r + 2, rows - 1), min(r + 3, rows - 1)
        for c in range(0, cols, 2):
            c1 = min(c + 1, cols - 1)
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            t0 = 0.0
            t1 = 0.0
            t2 = 0.0
            t3 = 0.0
            for k in range(inner):
                y, z = Y[c, k], Y[c1, k]
                x0, x1, x2, x3 = X[r, k], X[r1, k], X[r2, k], X[r3, k]
                s0 += x0 * y
                s1 += x1 * y
                s2 += x2 * y
                s3 += x3 * y
                t0 += x0 * z
                t1 += x1 * z
                t2 += x2 * z
                t3 += x3 * z
            if transposed:              # the eight sums (a repeated row or column is written again)
                out[c, offset + r], out[c, offset + r1] = scale * s0, scale * s1
                out[c, offset + r2], out[c, offset + r3] = scale * s2, scale * s3
                out[c1, offset + r], out[c1, offset + r1] = scale * t0, scale * t1
                out[c1, offset + r2], out[c1, offset + r3] = scale * t2, scale * t3
            else:
                out[r, offset + c], out[r1, offset + c] = scale * s0, scale * s1
                out[r2, offset + c], out[r3, offset + c] = scale * s2, scale * s3
                out[r, offset + c1], out[r1, offset + c1] = scale * t0, scale * t1
                out[r2, offset + c1], out[r3, offset + c1] = scale * t2, scale * t3
