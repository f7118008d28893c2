"""Analytical derivatives of inverse dynamics: ∂τ/∂q and ∂τ/∂q̇ by differentiating the RNEA.

The recursions (eqs. 9.53-9.57), in body frames, with T_{i,λ} = e^{-[A_i] θ_i} M_{i,λ}:

    V_i = [Ad_{T_{i,λ}}] V_λ + A_i θ̇_i
    V̇_i = [Ad_{T_{i,λ}}] V̇_λ + [ad_{V_i}] A_i θ̇_i + A_i θ̈_i                   (V̇_0 = (0, −g))
    F_i = Σ_c [Ad_{T_{c,i}}]^T F_c + G_i V̇_i − [ad_{V_i}]^T G_i V_i          (+ the tip wrench)
    τ_i = A_i^T F_i

depend on θ_j through Ad_{T_{j,λ}} only, whose derivative is
∂[Ad_{T_{j,λ}}]/∂θ_j = −[ad_{A_j}] [Ad_{T_{j,λ}}].
Differentiating each line with respect to θ_j (one sweep per j, "forward mode"; bodies outside j's
subtree have ∂V = ∂V̇ = 0 and no own term):

    ∂V_j/∂θ_j = −[ad_{A_j}] V_j = [V_j, A_j]
    ∂V̇_j/∂θ_j = [U_j, A_j] + [∂V_j, A_j] θ̇_j,       U_j = [Ad_{T_{j,λ}}] V̇_λ
    ∂V_i/∂θ_j = [Ad_{T_{i,λ}}] ∂V_λ,   ∂V̇_i/∂θ_j = [Ad_{T_{i,λ}}] ∂V̇_λ + [∂V_i, A_i] θ̇_i      (i below j)
    ∂F_i = Σ_c [Ad_{T_{c,i}}]^T ∂F_c + G_i ∂V̇_i − [ad_{∂V_i}]^T G_i V_i − [ad_{V_i}]^T G_i ∂V_i
           − [Ad_{T_{j,λ}}]^T [ad_{A_j}]^T F_j      (added to j's parent: the moved transform)
    ∂τ_i/∂θ_j = A_i^T ∂F_i

and with respect to θ̇_j (no transform moves):

    ∂V_j/∂θ̇_j = A_j,   ∂V̇_j/∂θ̇_j = [V_j, A_j]      (+ [A_j, A_j] θ̇_j = 0)
    ∂V_i, ∂V̇_i below j, ∂F_i and ∂τ_i: as above without the transform terms.

∂τ/∂q̈ = M. Forward dynamics q̈ = FD(q, q̇, τ) solves ID(q, q̇, q̈) = τ, so ∂q̈/∂x = −M⁻¹ ∂τ/∂x at that q̈
(x = q, q̇) and ∂q̈/∂τ = M⁻¹: q̈ = M⁻¹ (τ − b) and M⁻¹ from M's Cholesky factor (linalg.py), then
the inverse dynamics derivatives at q̈. One sweep costs O(n) per j: O(n²) in all, like the mass
matrix. With mimic joints the body derivatives are projected onto the coordinates:
∂τ_r/∂q_r = G^T (∂τ/∂θ) G (G: the mimic map). The sweeps keep ∂V, ∂V̇, ∂F of q and q̇ in the
workspace columns of the Coriolis composite inertias (W_GC_BASE, W_BC_BASE), which no other pass of
this call uses.
"""
from .crba import crba
from .layout import (
    W_BC_BASE,
    W_F_BODY,
    W_GC_BASE,
    W_P_PARENT,
    W_R_PARENT,
    W_V_BODY,
    body_rate,
    coordinate,
    has_mimic,
    inline,
    is_prismatic,
    multiplier,
    n_bodies,
    parent,
)
from .linalg import cholesky_in_place, cholesky_solve_in_place
from .rnea import parent_acceleration, rnea
from .rows import row3, row6, row9, set_row6
from .spatial import (
    ZERO6,
    add6,
    adjoint_inverse,
    adjoint_inverse_transpose,
    axis_dot,
    body_inertia,
    inertia_times,
    neg_ad_transpose,
    plus_ad_axis,
    plus_axis,
)

W_DV_Q = W_GC_BASE              # 6  ∂V_i/∂θ_j
W_DVDOT_Q = W_GC_BASE + 6       # 6  ∂V̇_i/∂θ_j
W_DF_Q = W_GC_BASE + 12         # 6  ∂F_i/∂θ_j
W_DV_QD = W_GC_BASE + 18        # 6  ∂V_i/∂θ̇_j
W_DVDOT_QD = W_GC_BASE + 24     # 6  ∂V̇_i/∂θ̇_j
W_DF_QD = W_GC_BASE + 30        # 6  ∂F_i/∂θ̇_j
W_IN_SUBTREE = W_BC_BASE        # 1  1 when body i is j or below it


@inline
def own_wrench_derivative(G, V, dV, dVdot):
    """∂(G V̇ − [ad_V]^T G V) = G ∂V̇ − [ad_{∂V}]^T G V − [ad_V]^T G ∂V."""
    return add6(add6(inertia_times(G, dVdot), neg_ad_transpose(dV, inertia_times(G, V))),
                neg_ad_transpose(V, inertia_times(G, dV)))


@inline
def forward_sweep(mb, w, qd, j, mimic):
    """∂V_i, ∂V̇_i with respect to θ_j and θ̇_j for j and the bodies below it (module docstring)."""
    n = n_bodies(mb)
    for i in range(j, n):
        lam = parent(mb, i)
        inside = i == j or (lam >= j and w[lam, W_IN_SUBTREE] != 0.0)
        w[i, W_IN_SUBTREE] = 1.0 if inside else 0.0
        if not inside:
            continue
        prismatic = is_prismatic(mb, i)
        R, p = row9(w, i, W_R_PARENT), row3(w, i, W_P_PARENT)
        V = row6(w, i, W_V_BODY)
        qd_i = body_rate(mb, qd, i, mimic)
        if i == j:
            dV = plus_ad_axis(prismatic, V, ZERO6, 1.0)                                  # [V_j, A_j]
            U = adjoint_inverse(R, p, parent_acceleration(mb, w, lam, True))
            dVdot = plus_ad_axis(prismatic, dV, plus_ad_axis(prismatic, U, ZERO6, 1.0), qd_i)
            dV_qd = plus_axis(prismatic, ZERO6, 1.0)                                    # A_j
            dVdot_qd = plus_ad_axis(prismatic, V, ZERO6, 1.0)                            # [V_j, A_j]
        else:
            dV = adjoint_inverse(R, p, row6(w, lam, W_DV_Q))
            dVdot = plus_ad_axis(prismatic, dV, adjoint_inverse(R, p, row6(w, lam, W_DVDOT_Q)), qd_i)
            dV_qd = adjoint_inverse(R, p, row6(w, lam, W_DV_QD))
            dVdot_qd = plus_ad_axis(prismatic, dV_qd, adjoint_inverse(R, p, row6(w, lam, W_DVDOT_QD)), qd_i)
        set_row6(w, i, W_DV_Q, dV)
        set_row6(w, i, W_DVDOT_Q, dVdot)
        set_row6(w, i, W_DV_QD, dV_qd)
        set_row6(w, i, W_DVDOT_QD, dVdot_qd)


@inline
def backward_sweep(mb, w, j, dtau_dq, dtau_dqd, mimic):
    """∂F_i and ∂τ_i of every body for one j; adds column j's entries (projected with mimic joints)."""
    n = n_bodies(mb)
    for i in range(n):
        if i >= j and w[i, W_IN_SUBTREE] != 0.0:
            G, V = body_inertia(mb, i), row6(w, i, W_V_BODY)
            set_row6(w, i, W_DF_Q, own_wrench_derivative(G, V, row6(w, i, W_DV_Q), row6(w, i, W_DVDOT_Q)))
            set_row6(w, i, W_DF_QD, own_wrench_derivative(G, V, row6(w, i, W_DV_QD), row6(w, i, W_DVDOT_QD)))
        else:
            set_row6(w, i, W_DF_Q, ZERO6)
            set_row6(w, i, W_DF_QD, ZERO6)
    column, m_j = coordinate(mb, j), multiplier(mb, j)
    for i in range(n - 1, -1, -1):
        prismatic = is_prismatic(mb, i)
        dF, dF_qd = row6(w, i, W_DF_Q), row6(w, i, W_DF_QD)
        row, scale = coordinate(mb, i), multiplier(mb, i) * m_j
        dtau_dq[row, column] += scale * axis_dot(prismatic, dF)                          # A_i^T ∂F_i
        dtau_dqd[row, column] += scale * axis_dot(prismatic, dF_qd)
        lam = parent(mb, i)
        if lam >= 0:
            R, p = row9(w, i, W_R_PARENT), row3(w, i, W_P_PARENT)
            if i == j:      # the moved transform: −[Ad]^T [ad_{A_j}]^T F_j
                dF = add6(dF, neg_ad_transpose(plus_axis(prismatic, ZERO6, 1.0), row6(w, i, W_F_BODY)))
            set_row6(w, lam, W_DF_Q, add6(row6(w, lam, W_DF_Q), adjoint_inverse_transpose(R, p, dF)))
            set_row6(w, lam, W_DF_QD, add6(row6(w, lam, W_DF_QD), adjoint_inverse_transpose(R, p, dF_qd)))


@inline
def inverse_dynamics_derivatives(mb, w, q, qd, qdd, frame, f_tip, tau, dtau_dq, dtau_dqd):
    """τ (RNEA, with the tip wrench at `frame` >= 0), ∂τ/∂q and ∂τ/∂q̇ (nq × nq each)."""
    rnea(mb, w, q, qd, qdd, True, True, True, frame, f_tip, tau)                       # V, V̇, F (9.53-9.57)
    mimic = has_mimic(mb)
    for r in range(dtau_dq.shape[0]):
        for c in range(dtau_dq.shape[1]):
            dtau_dq[r, c] = 0.0
            dtau_dqd[r, c] = 0.0
    for j in range(n_bodies(mb)):
        forward_sweep(mb, w, qd, j, mimic)
        backward_sweep(mb, w, j, dtau_dq, dtau_dqd, mimic)


@inline
def forward_dynamics_derivatives(mb, w, q, qd, tau, frame, f_tip, qdd, scratch, Minv, dqdd_dq, dqdd_dqd,
                                 dtau_dq, dtau_dqd):
    """q̈ = FD(q, q̇, τ), M⁻¹, ∂q̈/∂q = −M⁻¹ ∂τ/∂q and ∂q̈/∂q̇ = −M⁻¹ ∂τ/∂q̇ (module docstring); scratch (n).
    False when M is not positive definite."""
    n = qdd.shape[0]
    crba(mb, w, q, Minv)                                                               # M
    rnea(mb, w, q, qd, qd, True, False, True, frame, f_tip, qdd, True)                 # b = c + g + J^T F
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
    if not cholesky_in_place(Minv, n):
        return False
    cholesky_solve_in_place(Minv, n, qdd)                                              # q̈ = M⁻¹ (τ − b)
    for c in range(n):                  # the columns of M⁻¹, from the factor (held in Minv's lower triangle)
        for r in range(n):
            scratch[r] = 1.0 if r == c else 0.0
        cholesky_solve_in_place(Minv, n, scratch)
        for r in range(n):
            dqdd_dqd[r, c] = scratch[r]
    for r in range(n):
        for c in range(n):
            Minv[r, c] = 0.5 * (dqdd_dqd[r, c] + dqdd_dqd[c, r])
    inverse_dynamics_derivatives(mb, w, q, qd, qdd, frame, f_tip, scratch, dtau_dq, dtau_dqd)
    for r in range(n):
        for c in range(n):
            s_q = 0.0
            s_qd = 0.0
            for k in range(n):
                s_q -= Minv[r, k] * dtau_dq[k, c]
                s_qd -= Minv[r, k] * dtau_dqd[k, c]
            dqdd_dq[r, c] = s_q
            dqdd_dqd[r, c] = s_qd
    return True
