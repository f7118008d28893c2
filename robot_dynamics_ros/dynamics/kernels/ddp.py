"""Optimal control of a reaching task by feasibility-driven differential dynamic programming (FDDP,
Mastalli et al., ICRA 2020), with box limits on the torques (box-FDDP: the control step of each knot
from a box-constrained quadratic program, Tassa et al., ICRA 2014: box_qp.py): the loops over the
knots (cost and gaps, derivatives, backward and forward passes). fddp.py puts them together into one
whole iteration; dynamics/optimal_control.py runs the iterations (the iteration and time limits).

State x = (q, q̇) (2n), control u = τ (n), knots t = 0..N-1 and the terminal knot N. Dynamics: the
symplectic (semi-implicit) Euler step of the forward dynamics, f(x, u) = (q + dt q̇⁺, q̇⁺) with
q̇⁺ = q̇ + dt FD(q, q̇, u) (time_step.step); its Jacobians A = ∂f/∂x, B = ∂f/∂u from linearize.py.
Costs, with the frame-placement residual r(q) = log(T_goal^-1 T_f(q)) ∈ ℝ⁶ (angular first):

    l_t = dt ½ (w_g |r(q_t)|² + w_x |x_t - x_ref|² + w_u |u_t|²),     l_N = ½ w_T |r(q_N)|²

with the Gauss-Newton Hessians (∂r/∂q = J_r^-1(r) J_b(q): log_jacobian.py):

    l_x = dt (w_g [∂r/∂q^T r; 0] + w_x (x - x_ref)),   l_xx = dt (w_g [[∂r/∂q^T ∂r/∂q, 0], [0, 0]] + w_x 1),
    l_u = dt w_u u,   l_uu = dt w_u 1,   l_ux = 0.

Gaps: f̄_0 = x_0 - x̄_0, f̄_{t+1} = f(x̄_t, ū_t) - x̄_{t+1}; a trajectory is feasible when they are zero.

Backward pass (V_x, V_xx at the knot after the gap, FDDP), from V_N = l_N:

    Q_x = l_x + A^T V_x',  Q_u = l_u + B^T V_x',  Q_xx = l_xx + A^T V_xx' A,
    Q_uu = l_uu + B^T V_xx' B + μ 1,  Q_ux = B^T V_xx' A
    k = argmin_{lo ≤ ū + k ≤ hi} ½ k^T Q_uu k + Q_u^T k,  K_free = -Q_uu,ff^-1 Q_ux,f,  K_clamped = 0
    V_x = Q_x + K^T (Q_uu k + Q_u) + Q_ux^T k,   V_xx = Q_xx + K^T Q_uu K + K^T Q_ux + Q_ux^T K
    (infeasible: V_x += V_xx f̄_t)

Forward pass at step α: x̂_0 = x̄_0 + α f̄_0, û_t = ū_t + α k_t + K_t (x̂_t - x̄_t) (clamped to the box),
x̂_{t+1} = f(x̂_t, û_t) - (1 - α) f̄_{t+1}: the gaps shrink by (1 - α), and close at α = 1.

P, the problem's packed constants: [dt, w_g, w_x, w_u, w_T, T_goal^-1's rotation (9, row-major) and
translation (3)].
"""
import numpy as np

from .box_qp import box_qp, gather_free, scatter_free
from .frame_jacobians import jacobian
from .jit import inline
from .kinematics import REF_BODY, body_poses_in_base, frame_pose
from .linalg import cholesky_solve_in_place
from .linearize import STATUS_OK as LINEARIZE_OK, linearize_step
from .log_jacobian import log_jacobian
from .spatial_algebra import compose, log_transform
from .time_step import METHOD_SEMI_IMPLICIT, step

P_DT, P_GOAL, P_STATE, P_CONTROL, P_TERMINAL, P_R, P_P = 0, 1, 2, 3, 4, 5, 14
P_SIZE = 17

STATUS_OK = 0
STATUS_DYNAMICS = 1          # M(q) not positive definite somewhere along the trajectory
STATUS_NOT_POSITIVE = 2      # Q_uu not positive definite at a knot: more regularisation


# ---- costs --------------------------------------------------------------------------------------------
@inline
def goal_residual(mb, w, q, frame, P, T, r):
    """r = log(T_goal^-1 T_0f(q)) into r (6); T receives T_0f. Computes the body poses of q."""
    body_poses_in_base(mb, w, q)
    frame_pose(mb, w, frame, T)
    R_f = (T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2])
    R_goal_inv = (P[P_R], P[P_R + 1], P[P_R + 2], P[P_R + 3], P[P_R + 4], P[P_R + 5], P[P_R + 6], P[P_R + 7],
                  P[P_R + 8])
    R_e, p_e = compose(R_goal_inv, (P[P_P], P[P_P + 1], P[P_P + 2]), R_f, (T[0, 3], T[1, 3], T[2, 3]))
    X = log_transform(R_e, p_e)
    for i in range(6):
        r[i] = X[i]


@inline
def residual_jacobian(mb, w, q, frame, T, r, Jb, Jlog, Jr):
    """∂r/∂q = J_r^-1(r) J_b(q) (6 x n) into Jr, after goal_residual at this q (the poses in place)."""
    jacobian(mb, w, q, frame, REF_BODY, T, Jb, True)
    log_jacobian((r[0], r[1], r[2], r[3], r[4], r[5]), Jlog)
    for a in range(6):
        for j in range(Jb.shape[1]):
            s = 0.0
            for b in range(6):
                s += Jlog[a, b] * Jb[b, j]
            Jr[a, j] = s


@inline
def squared_norm(r):
    s = 0.0
    for v in r:
        s += v * v
    return s


@inline
def running_cost(P, x, u, x_ref, r):
    """l_t = dt ½ (w_g |r|² + w_x |x - x_ref|² + w_u |u|²), r the goal residual at x's q."""
    dx = 0.0
    for i in range(x.shape[0]):
        dx += (x[i] - x_ref[i]) * (x[i] - x_ref[i])
    return P[P_DT] * 0.5 * (P[P_GOAL] * squared_norm(r) + P[P_STATE] * dx + P[P_CONTROL] * squared_norm(u))


# ---- the trajectory's cost and gaps -----------------------------------------------------------------
@inline
def cost_and_gaps(mb, w, P, frame, x0, x_ref, xs, us, fs, T, r, x_next, s, zero):
    """The cost of (xs, us) and its gaps f̄ into fs (N+1, 2n); NaN when a step diverges."""
    N, n = us.shape
    dt = P[P_DT]
    cost = 0.0
    for i in range(2 * n):
        fs[0, i] = x0[i] - xs[0, i]
    for t in range(N):
        q, qd = xs[t, :n], xs[t, n:]
        goal_residual(mb, w, q, frame, P, T, r)
        cost += running_cost(P, xs[t], us[t], x_ref, r)
        step(mb, w, q, qd, us[t], dt, METHOD_SEMI_IMPLICIT, -1, q, zero, zero, x_next[:n], x_next[n:], s)
        for i in range(2 * n):
            fs[t + 1, i] = x_next[i] - xs[t + 1, i]
            if not np.isfinite(x_next[i]):
                return np.nan
    goal_residual(mb, w, xs[N, :n], frame, P, T, r)
    return cost + 0.5 * P[P_TERMINAL] * squared_norm(r)


# ---- derivatives along the trajectory ---------------------------------------------------------------
@inline
def derivatives(mb, w, P, frame, x_ref, xs, us, A, B, Lx, Lu, Lqq, T, r, Jb, Jlog, Jr, vectors, Minv, X,
                dtau_dx_T, D, D_next, E, E_next, B_T):
    """A_t, B_t (linearize.py) and the costs' gradients and Gauss-Newton Hessians (module docstring):
    l_x (N+1, 2n), l_u (N, n), the goal's q-block of l_xx (N+1, n, n) (the rest of l_xx is dt w_x 1,
    l_uu is dt w_u 1). Returns STATUS_OK or STATUS_DYNAMICS."""
    N, n = us.shape
    dt = P[P_DT]
    for t in range(N + 1):
        q = xs[t, :n]
        if t < N:
            status, _ = linearize_step(mb, w, q, xs[t, n:], us[t], dt, METHOD_SEMI_IMPLICIT, A[t], B[t],
                                       vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next, B_T)
            if status != LINEARIZE_OK:
                return STATUS_DYNAMICS
            g, x_weight = dt * P[P_GOAL], dt * P[P_STATE]
            for i in range(n):
                Lu[t, i] = dt * P[P_CONTROL] * us[t, i]
        else:
            g, x_weight = P[P_TERMINAL], 0.0
        goal_residual(mb, w, q, frame, P, T, r)
        residual_jacobian(mb, w, q, frame, T, r, Jb, Jlog, Jr)
        for j in range(n):
            s = 0.0
            for a in range(6):
                s += Jr[a, j] * r[a]
            Lx[t, j] = g * s + x_weight * (xs[t, j] - x_ref[j])
            Lx[t, n + j] = x_weight * (xs[t, n + j] - x_ref[n + j])
            for c in range(j, n):
                s = 0.0
                for a in range(6):
                    s += Jr[a, j] * Jr[a, c]
                Lqq[t, j, c] = g * s
                Lqq[t, c, j] = g * s
    return STATUS_OK


# ---- backward pass ---------------------------------------------------------------------------------------
@inline
def terminal_value(Lx_N, Lqq_N, Vx_N, Vxx_N):
    """V_N = l_N: V_x = l_x, V_xx = the goal's q-block of l_xx, zeros elsewhere (no state cost at N)."""
    n = Lqq_N.shape[0]
    for i in range(2 * n):
        Vx_N[i] = Lx_N[i]
        for j in range(2 * n):
            Vxx_N[i, j] = Lqq_N[i, j] if i < n and j < n else 0.0


@inline
def add_gap_term(Vxx_t, f_t, Vx_t):
    """V_x += V_xx f̄ at a knot whose gap f̄ is open (FDDP: the value's gradient at the defect's end)."""
    for i in range(Vx_t.shape[0]):
        s = 0.0
        for j in range(Vx_t.shape[0]):
            s += Vxx_t[i, j] * f_t[j]
        Vx_t[i] += s


@inline
def value_products(dt, At, Bt, Vxx1, W, VA, SH):
    """The products of the next knot's V_xx' with the step's Jacobians, by the symplectic Euler step's
    structure: A = [[1, 0], [0, 0]] + E G, B = E H, E = [dt 1; 1] (2n x n), with G = ∂q̇⁺/∂x = A's lower
    rows (n x 2n) and H = ∂q̇⁺/∂u = B's lower rows (n x n):

        W = V_xx' E (2n x n),   V_xx' A = [V_xx'[:, :n], 0] + W G   (into VA),
        Y = E^T V_xx' A = dt (V_xx'A)[:n] + (V_xx'A)[n:]             (over VA's lower rows),
        S H = (E^T V_xx' E) H,  S = dt W[:n] + W[n:]                 (into SH)

    about half the multiply-adds of the dense products. Each product runs along rows (an inner loop over
    contiguous columns, which LLVM vectorises)."""
    n = Bt.shape[1]
    nx = 2 * n
    for i in range(nx):
        for j in range(n):
            W[i, j] = dt * Vxx1[i, j] + Vxx1[i, n + j]
    for i in range(nx):                                                   # V_xx' A = [V_xx'[:, :n], 0] + W G
        for j in range(n):
            VA[i, j] = Vxx1[i, j]
            VA[i, n + j] = 0.0
        for c in range(n):
            w_ic = W[i, c]
            for j in range(nx):
                VA[i, j] += w_ic * At[n + c, j]
    for i in range(n):                                                    # Y = dt (V_xx'A)[:n] + (V_xx'A)[n:]
        for j in range(nx):
            VA[n + i, j] += dt * VA[i, j]
    for i in range(n):                                                    # S H, S = dt W[:n] + W[n:]
        for j in range(n):
            SH[i, j] = 0.0
        for c in range(n):
            s_ic = dt * W[i, c] + W[n + i, c]
            for j in range(n):
                SH[i, j] += s_ic * Bt[n + c, j]


@inline
def q_function(P, reg, Lx_t, Lu_t, Lqq_t, At, Bt, Vx1, VA, SH, Qx, Qxx, Qu_t, Quu, Qux):
    """The knot's Q terms (module docstring) from l_x, l_u, the goal's block of l_xx and the products of
    value_products (V_xx' A in VA, Y over its lower rows, S H in SH), with
    y = E^T V_x' = dt V_x'[:n] + V_x'[n:]:

        Q_x = l_x + [V_x'[:n]; 0] + G^T y,             Q_xx = l_xx + [(V_xx' A)[:n]; 0] + G^T Y,
        Q_u = l_u + H^T y,   Q_uu = l_uu + μ 1 + H^T S H,   Q_ux = H^T Y          (μ = reg)
    """
    n = Bt.shape[1]
    nx = 2 * n
    dt = P[P_DT]
    x_weight, u_weight = dt * P[P_STATE], dt * P[P_CONTROL]
    Y = VA[n:]
    for i in range(nx):                                   # l_x, l_xx, [V_x'[:n]; 0], [(V_xx'A)[:n]; 0]
        Qx[i] = Lx_t[i] + (Vx1[i] if i < n else 0.0)
        for j in range(nx):
            Qxx[i, j] = ((Lqq_t[i, j] if i < n and j < n else 0.0) + (x_weight if i == j else 0.0)
                         + (VA[i, j] if i < n else 0.0))
    for i in range(n):                                                    # l_u, l_uu + μ
        Qu_t[i] = Lu_t[i]
        for j in range(n):
            Quu[i, j] = u_weight + reg if i == j else 0.0
        for j in range(nx):
            Qux[i, j] = 0.0
    for c in range(n):                                    # + G^T y, G^T Y; H^T y, H^T Y, H^T S H
        y_c = dt * Vx1[c] + Vx1[n + c]
        for i in range(nx):
            g = At[n + c, i]
            Qx[i] += g * y_c
            for j in range(nx):
                Qxx[i, j] += g * Y[c, j]
        for i in range(n):
            h = Bt[n + c, i]
            Qu_t[i] += h * y_c
            for j in range(nx):
                Qux[i, j] += h * Y[c, j]
            for j in range(n):
                Quu[i, j] += h * SH[c, j]


@inline
def feedback_gain(Qux, free_t, L, m, rhs, K_t):
    """K = -Q_uu,ff^-1 Q_ux,f on the free rows, 0 on the clamped ones (L: Q_uu,ff's Cholesky factor from
    the box QP), one column of K at a time."""
    for j in range(Qux.shape[1]):
        gather_free(Qux[:, j], free_t, -1.0, rhs)
        cholesky_solve_in_place(L, m, rhs)
        scatter_free(rhs, free_t, K_t[:, j])


@inline
def value_update(Qx, Qxx, Qu_t, Quu, Qux, k_t, K_t, Quuk_t, grad, Vx_t, Vxx_t):
    """V_x = Q_x + K^T (Q_uu k + Q_u) + Q_ux^T k,  V_xx = Q_xx + Q_ux^T K (with K = -Q_uu,ff^-1 Q_ux,f on
    the free rows and 0 on the clamped ones, K^T Q_uu K + K^T Q_ux = 0), made symmetric to rounding;
    Q_uu k into Quuk_t (grad: scratch)."""
    n, nx = Qux.shape
    for i in range(n):                                                    # Q_uu k (and + Q_u in grad)
        s = 0.0
        for j in range(n):
            s += Quu[i, j] * k_t[j]
        Quuk_t[i] = s
        grad[i] = s + Qu_t[i]
    for i in range(nx):
        Vx_t[i] = Qx[i]
        for j in range(nx):
            Vxx_t[i, j] = Qxx[i, j]
    for c in range(n):
        g, kc = grad[c], k_t[c]
        for i in range(nx):
            Vx_t[i] += K_t[c, i] * g + Qux[c, i] * kc
            a = Qux[c, i]
            for j in range(nx):
                Vxx_t[i, j] += a * K_t[c, j]
    for i in range(nx):                                                   # symmetric to rounding
        for j in range(i + 1, nx):
            v = 0.5 * (Vxx_t[i, j] + Vxx_t[j, i])
            Vxx_t[i, j] = v
            Vxx_t[j, i] = v


@inline
def backward_pass(P, limited, u_lo, u_hi, us, A, B, Lx, Lu, Lqq, fs, feasible, reg, Vx, Vxx, k, K, Qu, Quuk,
                  free, Qx, Qxx, Quu, Qux, VA, VB, L, lo, hi, grad, step_, trial, rhs):
    """The Riccati recursion of the module docstring from t = N-1 down to 0. Returns (STATUS_OK, 0), or
    (STATUS_NOT_POSITIVE, t) when Q_uu (with μ = reg) is not positive definite at knot t. Scratch: VB holds
    W and L holds S H (value_products) before L holds the box QP's factor."""
    N, n = us.shape
    terminal_value(Lx[N], Lqq[N], Vx[N], Vxx[N])
    if not feasible:
        add_gap_term(Vxx[N], fs[N], Vx[N])
    for t in range(N - 1, -1, -1):
        value_products(P[P_DT], A[t], B[t], Vxx[t + 1], VB, VA, L)
        q_function(P, reg, Lx[t], Lu[t], Lqq[t], A[t], B[t], Vx[t + 1], VA, L, Qx, Qxx, Qu[t], Quu, Qux)
        for i in range(n):                                      # k's box: u_lo ≤ ū + k ≤ u_hi
            lo[i] = u_lo[i] - us[t, i]
            hi[i] = u_hi[i] - us[t, i]
        m = box_qp(Quu, Qu[t], lo, hi, limited, k[t], free[t], L, grad, step_, trial, rhs)
        if m < 0:
            return STATUS_NOT_POSITIVE, t
        feedback_gain(Qux, free[t], L, m, rhs, K[t])
        value_update(Qx, Qxx, Qu[t], Quu, Qux, k[t], K[t], Quuk[t], grad, Vx[t], Vxx[t])
        if not feasible:
            add_gap_term(Vxx[t], fs[t], Vx[t])
    return STATUS_OK, 0


# ---- forward pass ------------------------------------------------------------------------------------------
@inline
def forward_pass(mb, w, P, frame, x0, x_ref, limited, u_lo, u_hi, xs, us, fs, k, K, alpha, feasible, xs_try,
                 us_try, T, r, dx, s, zero):
    """The rollout at step α (module docstring) into xs_try, us_try; returns its cost (NaN when it
    diverges)."""
    N, n = us.shape
    nx = 2 * n
    dt = P[P_DT]
    close = feasible or alpha == 1.0
    cost = 0.0
    for i in range(nx):
        xs_try[0, i] = x0[i] if close else x0[i] + (alpha - 1.0) * fs[0, i]
    for t in range(N):
        for i in range(nx):
            dx[i] = xs_try[t, i] - xs[t, i]
        for i in range(n):
            u = us[t, i] + alpha * k[t, i]
            for j in range(nx):
                u += K[t, i, j] * dx[j]
            us_try[t, i] = min(max(u, u_lo[i]), u_hi[i]) if limited else u
        q, qd = xs_try[t, :n], xs_try[t, n:]
        goal_residual(mb, w, q, frame, P, T, r)
        cost += running_cost(P, xs_try[t], us_try[t], x_ref, r)
        step(mb, w, q, qd, us_try[t], dt, METHOD_SEMI_IMPLICIT, -1, q, zero, zero, xs_try[t + 1, :n],
             xs_try[t + 1, n:], s)
        for i in range(nx):
            if not close:
                xs_try[t + 1, i] += (alpha - 1.0) * fs[t + 1, i]
            if not np.isfinite(xs_try[t + 1, i]):
                return np.nan
    goal_residual(mb, w, xs_try[N, :n], frame, P, T, r)
    return cost + 0.5 * P[P_TERMINAL] * squared_norm(r)
