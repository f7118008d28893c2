"""Jacobians of one integration step x⁺ = f(x, τ), x = (q, q̇), τ held over the step: A = ∂x⁺/∂x (2n × 2n),
B = ∂x⁺/∂τ (2n × n), by the chain rule through the integrator's stages (integrators.py), with the
analytical derivatives of ẋ = (q̇, FD(q, q̇, τ)) at each stage state (derivatives.py):

    ∂ẋ/∂x = F_x = [[0, 1], [∂q̈/∂q, ∂q̈/∂q̇]],    ∂ẋ/∂τ = F_u = [[0], [M⁻¹]]

    Euler                 A = 1 + dt F_x,   B = dt F_u
    semi-implicit Euler   q̇⁺ = q̇ + dt q̈, q⁺ = q + dt q̇⁺:   ∂q̇⁺/∂x = [0, 1] + dt [∂q̈/∂q, ∂q̈/∂q̇],
                          ∂q⁺/∂x = [1, 0] + dt ∂q̇⁺/∂x,  ∂q̇⁺/∂τ = dt M⁻¹,  ∂q⁺/∂τ = dt² M⁻¹
    RK4                   k_s = ẋ(x + c_s dt k_{s−1}), c = (0, ½, ½, 1), weights (1, 2, 2, 1):
                          ∂k_s/∂x = F_x,s (1 + c_s dt ∂k_{s−1}/∂x),
                          ∂k_s/∂τ = F_x,s c_s dt ∂k_{s−1}/∂τ + F_u,s,
                          A = 1 + dt/6 Σ_s w_s ∂k_s/∂x,   B = dt/6 Σ_s w_s ∂k_s/∂τ

F_x's top rows only pick q̇'s rows, so each RK4 stage costs two products by [∂q̈/∂q  ∂q̈/∂q̇] (n × 2n):
6 n³ multiply-adds. They run on the transposes D_s = (∂k_s/∂x)^T and E_s = (∂k_s/∂τ)^T, whose rows are the
columns the products need (linalg.row_products):

    P_s^T = 1 + c_s dt D_{s−1}                                   (formed in D_{s−1}'s place)
    D_s[c, r] = P_s^T[c, n + r],   D_s[c, n + r] = Σ_k X[r, k] P_s^T[c, k]      (X = [∂q̈/∂q  ∂q̈/∂q̇])
    E_s[c, r] = c_s dt E_{s−1}[c, n + r],   E_s[c, n + r] = M⁻¹[r, c] + c_s dt Σ_k X[r, k] E_{s−1}[c, k]

and A^T, B^T are summed from them row by row (A's own storage holds A^T until the end).
"""
from .jit import inline
from .layout import all_finite
from .linalg import row_products
from .rnea_derivatives import forward_dynamics_derivatives
from .time_step import METHOD_EULER, METHOD_RK4, METHOD_SEMI_IMPLICIT

STATUS_OK = 0
STATUS_NOT_POSITIVE_DEFINITE = 1     # M is not positive definite at a stage state
STATUS_OVERFLOW = 2                  # A or B not finite

RK4_NODES = (0.0, 0.5, 0.5, 1.0)     # c_s
RK4_WEIGHTS = (1.0, 2.0, 2.0, 1.0)   # w_s


@inline
def start_jacobians(A, B, k, n):
    """A = 1 (2n × 2n), B = 0 (2n × n), and k_0 = 0 (the stage before RK4's first: x_1 = x)."""
    for r in range(2 * n):
        for c in range(2 * n):
            A[r, c] = 1.0 if r == c else 0.0
        for c in range(n):
            B[r, c] = 0.0
    for i in range(n):
        k[i] = 0.0
        k[n + i] = 0.0


@inline
def euler_jacobians(dt, X, Minv, A, B, n):
    """Euler: A = 1 + dt F_x, B = dt F_u (A = 1 and B = 0 on entry), X = [∂q̈/∂q  ∂q̈/∂q̇]:
    A[:n, n:] += dt 1,  A[n:, :] += dt X,  B[n:] = dt M⁻¹."""
    for r in range(n):
        A[r, n + r] += dt
        for c in range(2 * n):
            A[n + r, c] += dt * X[r, c]
        for c in range(n):
            B[n + r, c] = dt * Minv[r, c]


@inline
def semi_implicit_jacobians(dt, X, Minv, A, B, n):
    """Semi-implicit Euler (A = 1 and B = 0 on entry), X = [∂q̈/∂q  ∂q̈/∂q̇]:
    ∂q̇⁺/∂x = [0, 1] + dt X,  ∂q⁺/∂x = [1, 0] + dt ∂q̇⁺/∂x,  ∂q̇⁺/∂τ = dt M⁻¹,  ∂q⁺/∂τ = dt² M⁻¹."""
    for r in range(n):
        for c in range(2 * n):
            A[n + r, c] += dt * X[r, c]                         # ∂q̇⁺/∂x
        for c in range(2 * n):
            A[r, c] += dt * A[n + r, c]                         # ∂q⁺/∂x = [1, 0] + dt ∂q̇⁺/∂x
        for c in range(n):
            B[n + r, c] = dt * Minv[r, c]
            B[r, c] = dt * dt * Minv[r, c]


@inline
def first_stage_transposes(X, Minv, D_next, E_next, B_T, n):
    """RK4's first stage: D_1 = F_x^T = [[0, X^T[:n]], [1, X^T[n:]]] into D_next (2n × 2n),
    E_1 = F_u^T = [0, M⁻¹] into E_next (n × 2n); B^T's sum starts at 0."""
    for c in range(2 * n):
        for r in range(n):
            D_next[c, r] = 1.0 if c == n + r else 0.0
            D_next[c, n + r] = X[r, c]
    for c in range(n):
        for r in range(n):
            E_next[c, r] = 0.0
            E_next[c, n + r] = Minv[r, c]
            B_T[c, r] = 0.0
            B_T[c, n + r] = 0.0


@inline
def next_stage_transposes(h, X, Minv, D, D_next, E, E_next, n):
    """RK4's stage s > 1 (h = c_s dt) from D_{s−1}, E_{s−1} (in D, E, overwritten) into D_next, E_next:

        P_s^T = 1 + h D_{s−1},   D_s[c, r] = P_s^T[c, n + r],   D_s[c, n + r] = Σ_k X[r, k] P_s^T[c, k]
        E_s[c, r] = h E_{s−1}[c, n + r],   E_s[c, n + r] = M⁻¹[r, c] + Σ_k X[r, k] h E_{s−1}[c, k]
    """
    for c in range(2 * n):                                  # D_{s−1} -> 1 + h D_{s−1} = P_s^T
        for r in range(2 * n):
            D[c, r] = (1.0 if c == r else 0.0) + h * D[c, r]
    for c in range(n):                                      # E_{s−1} -> h E_{s−1}
        for r in range(2 * n):
            E[c, r] *= h
    row_products(X, D, D_next, n, 2 * n, X.shape[1], 1.0, True, n)      # (X P_s)^T
    row_products(X, E, E_next, n, n, X.shape[1], 1.0, True, n)          # (X h ∂k_{s−1}/∂τ)^T
    for c in range(2 * n):
        for r in range(n):
            D_next[c, r] = D[c, n + r]                      # the rows of q̇ in P_s
    for c in range(n):
        for r in range(n):
            E_next[c, r] = E[c, n + r]
            E_next[c, n + r] += Minv[c, r]                  # + F_u (M⁻¹ symmetric)


@inline
def add_stage_transposes(weight, D_s, E_s, A, B_T, n):
    """A^T += weight D_s (A's own storage holds A^T until the end), B^T += weight E_s (weight = dt/6 w_s)."""
    for c in range(2 * n):
        for r in range(2 * n):
            A[c, r] += weight * D_s[c, r]
    for c in range(n):
        for r in range(2 * n):
            B_T[c, r] += weight * E_s[c, r]


@inline
def untranspose(A, B, B_T, n):
    """A from A^T in place, B from B^T."""
    for r in range(2 * n):
        for c in range(r):
            A[r, c], A[c, r] = A[c, r], A[r, c]
        for c in range(n):
            B[r, c] = B_T[c, r]


@inline
def linearize_step(mb, w, q, qd, tau, dt, method, A, B, vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next,
                   B_T):
    """A (2n × 2n), B (2n × n) of one step from (q, q̇) under τ (module docstring). Scratch: vectors
    (4, 2n): the stage state, k_s, q̈ and one more; Minv (n × n), X (n × 2n), dtau_dx_T (2n × n), D, D_next
    (2n × 2n), E, E_next, B_T (n × 2n). Minv and dtau_dx_T may be wider than n, X, D, D_next, E and
    E_next wider than 2n, with zeros there (the products sum along the whole width: widths of a multiple
    of 8 leave no scalar remainder). Returns (status, stage): STATUS_NOT_POSITIVE_DEFINITE at that
    stage."""
    n = q.shape[0]
    x_s, k = vectors[0], vectors[1]
    qdd, scratch = vectors[2][:n], vectors[3][:n]
    start_jacobians(A, B, k, n)
    stages = 4 if method == METHOD_RK4 else 1
    for s in range(stages):
        c_s = RK4_NODES[s] if method == METHOD_RK4 else 0.0
        for i in range(n):                                              # x_s = x + c_s dt k_{s−1}
            x_s[i] = q[i] + c_s * dt * k[i]
            x_s[n + i] = qd[i] + c_s * dt * k[n + i]
        if not forward_dynamics_derivatives(mb, w, x_s[:n], x_s[n:], tau, -1, tau, qdd, scratch, Minv, X,
                                            dtau_dx_T):
            return STATUS_NOT_POSITIVE_DEFINITE, s
        for i in range(n):                                              # k_s = (q̇_s, q̈_s)
            k[i] = x_s[n + i]
            k[n + i] = qdd[i]
        if method == METHOD_EULER:
            euler_jacobians(dt, X, Minv, A, B, n)
        elif method == METHOD_SEMI_IMPLICIT:
            semi_implicit_jacobians(dt, X, Minv, A, B, n)
        else:
            if s == 0:                                                  # D_1 = F_x^T, E_1 = F_u^T
                first_stage_transposes(X, Minv, D_next, E_next, B_T, n)
            else:
                next_stage_transposes(c_s * dt, X, Minv, D, D_next, E, E_next, n)
            add_stage_transposes(dt / 6.0 * RK4_WEIGHTS[s], D_next, E_next, A, B_T, n)  # dt/6 w_s D_s, E_s
            D, D_next = D_next, D
            E, E_next = E_next, E
    if method == METHOD_RK4:                                            # A, B from their transposes
        untranspose(A, B, B_T, n)
    if not (all_finite(A) and all_finite(B)):
        return STATUS_OVERFLOW, stages - 1
    return STATUS_OK, 0
