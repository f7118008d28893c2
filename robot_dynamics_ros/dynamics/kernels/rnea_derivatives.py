"""Analytical derivatives of inverse dynamics: ∂τ/∂q and ∂τ/∂q̇ of the RNEA, in O(n²) with O(n) 6x6 work.

The recursions (eqs. 9.53-9.57) written in the fixed base frame {0}, with S_i = [Ad_{T_0i}] A_i the
screw axis of joint i (kinematics.py), G_i body i's spatial inertia in {0} and [ad_V] X = [V, X]:

    V_i = V_λ + S_i θ̇_i                          Ṡ_i = [V_i, S_i] = [V_λ, S_i]
    V̇_i = V̇_λ + S_i θ̈_i + Ṡ_i θ̇_i                  (V̇_0 = (0, −g))
    F_i = Σ_{k in the subtree of i} (G_k V̇_k − [ad_{V_k}]^T G_k V_k)   (+ the tip wrench)
    τ_i = S_i^T F_i

Joint θ_j turns its subtree about S_j, so every axis below it moves as ∂S_k/∂θ_j = [S_j, S_k] and every
inertia as ∂G_k/∂θ_j = −[ad_{S_j}]^T G_k − G_k [ad_{S_j}] (k in the subtree of j). Summing the first over
the path from j to k (the Jacobi identity for the brackets of Ṡ):

    ∂V_k/∂θ_j = [S_j, V_k] + ψ_j,                 ψ_j = [V_λ(j), S_j] = Ṡ_j
    ∂V̇_k/∂θ_j = [S_j, V̇_k] + φ_j + [ψ_j, V_k],     φ_j = [V̇_λ(j), S_j] + [V_λ(j), ψ_j]
    ∂V_k/∂θ̇_j = S_j,   ∂V̇_k/∂θ̇_j = [S_j, V_k] + 2 ψ_j

The [S_j, ·] parts turn each body's wrench rigidly, ∂ = −[ad_{S_j}]^T F_k; what remains is, with
Ġ_k = −[ad_{V_k}]^T G_k − G_k [ad_{V_k}] and 2 B_k = Ġ_k − adbar(G_k V_k) (coriolis.py's factor, so that
G_k [X, V_k] − [ad_X]^T G_k V_k − [ad_{V_k}]^T G_k X = 2 B_k X):

    ∂(body k's wrench)/∂θ_j = −[ad_{S_j}]^T F_k + G_k φ_j + 2 B_k ψ_j
    ∂(body k's wrench)/∂θ̇_j = 2 G_k ψ_j + 2 B_k S_j

Summed over subtrees (composites G^c_i, B^c_i in {0}, as the Coriolis matrix sums them), and since a
rigid turn of the whole subtree of i leaves τ_i = S_i^T F_i unchanged ([S_j, S_i]^T F_i cancels
−S_i^T [ad_{S_j}]^T F_i):

    ∂τ_i/∂θ_j = S_i^T (G^c_i φ_j + 2 B^c_i ψ_j)                      j supports i (j ≤ i)
    ∂τ_i/∂θ_j = S_i^T (−[ad_{S_j}]^T F_j + G^c_j φ_j + 2 B^c_j ψ_j)   i supports j (i < j)
    ∂τ_i/∂θ̇_j = 2 S_i^T (G^c_i ψ_j + B^c_i S_j)  (j ≤ i),   2 S_i^T (G^c_j ψ_j + B^c_j S_j)  (i < j)
    (0 for joints on different branches)

so ∂τ/∂θ̇ = 2 C(q, q̇), twice the Christoffel-consistent Coriolis matrix (c = C q̇ is quadratic in q̇ and
Γ_ijk is symmetric in j, k). One pass over the pairs, coriolis.composite_pairs, writes both matrices
(the Coriolis matrix's own pass, with the ∂τ/∂θ terms switched on): each pair (four entries) is six
6-vector products; each body one 6x6 composite: the mass matrix's cost. ∂τ/∂q̈ = M. With mimic
joints the body derivatives are projected onto the coordinates: ∂τ_r/∂q_r = G^T (∂τ/∂θ) G (G: the mimic map).

Forward dynamics q̈ = FD(q, q̇, τ) solves ID(q, q̇, q̈) = τ, so ∂q̈/∂x = −M⁻¹ ∂τ/∂x at that q̈ (x = q, q̇)
and ∂q̈/∂τ = M⁻¹: q̈ = M⁻¹ (τ − b) by M's Cholesky factor M = L L^T, M⁻¹ = L^−T L⁻¹ from L⁻¹ (linalg.py),
then the inverse dynamics derivatives at q̈ and the two products.
"""
from .christoffel import composite_inertias, composite_pairs, composites_in_base
from .crba import crba
from .jit import inline
from .kinematics import body_poses_in_base, pose_in_base
from .layout import (
    W_F_BODY,
    W_PHI_BASE,
    W_S_BASE,
    W_SDOT_BASE,
    W_V_BASE,
    W_VDOT_BASE,
    W_VDOT_BODY,
    W_Y_BASE,
    has_mimic,
    n_bodies,
    n_coordinates,
    parent,
    run_start,
)
from .linalg import cholesky_in_place, cholesky_solve_in_place, inverse_from_cholesky, row_products
from .rnea import parent_acceleration, rnea
from .rows import row6, set_row6
from .spatial_algebra import (
    ZERO6,
    ad,
    add6,
    adjoint,
    adjoint_inverse_transpose,
    matrix_times,
    neg_ad_transpose,
    scale6,
)


@inline
def inverse_dynamics_derivatives(mb, w, q, qd, qdd, frame, f_tip, tau, dtau_dq, dtau_dqd, transposed,
                                 poses_known=False):
    """τ (RNEA, with the tip wrench at `frame` >= 0), ∂τ/∂q and ∂τ/∂q̇ (nq × nq each; transposed: their
    transposes) by the pairs of the module docstring. poses_known: T_0i and S_i of this q are already in
    the workspace (kinematics.body_poses_in_base)."""
    n = n_bodies(mb)
    mimic = has_mimic(mb)
    if not poses_known:
        body_poses_in_base(mb, w, q)                                                   # T_0i, S_i
    rnea(mb, w, q, qd, qdd, True, True, True, frame, f_tip, tau, True)                 # V̇_i, F_i in {i}
    composites_in_base(mb, w, qd, mimic)                                   # V_i, ψ_i, G^c_i, B^c_i
    for i in range(n):
        R, p = pose_in_base(w, i)
        set_row6(w, i, W_VDOT_BASE, adjoint(R, p, row6(w, i, W_VDOT_BODY)))           # V̇_i in {0}
        lam = parent(mb, i)
        Vdot_lam = row6(w, lam, W_VDOT_BASE) if lam >= 0 else parent_acceleration(mb, w, lam, True)
        V_lam = row6(w, lam, W_V_BASE) if lam >= 0 else ZERO6
        S_i, psi_i = row6(w, i, W_S_BASE), row6(w, i, W_SDOT_BASE)
        phi_i = add6(ad(Vdot_lam, S_i), ad(V_lam, psi_i))                              # φ_i
        set_row6(w, i, W_PHI_BASE, phi_i)
        F_i = adjoint_inverse_transpose(R, p, row6(w, i, W_F_BODY))                   # F_i in {0}
        Gc, Bc = composite_inertias(w, i)
        set_row6(w, i, W_Y_BASE, add6(add6(neg_ad_transpose(S_i, F_i), matrix_times(Gc, phi_i)),
                                      scale6(matrix_times(Bc, psi_i), 2.0)))   # Y_i = −[ad_{S_i}]^T F_i
        #                                                                        + G^c_i φ_i + 2 B^c_i ψ_i
    if mimic or (n > 0 and run_start(mb, n - 1) != 0):
        for r in range(n_coordinates(mb)):  # mimic: G^T (·) G accumulates; a tree: branches do not couple
            for c in range(n_coordinates(mb)):
                dtau_dq[r, c] = 0.0
    composite_pairs(mb, w, dtau_dqd, 2.0, transposed, True, dtau_dq)    # ∂τ/∂θ̇ = 2 C and ∂τ/∂θ, pairwise


@inline
def forward_dynamics_derivatives(mb, w, q, qd, tau, frame, f_tip, qdd, scratch, Minv, dqdd_dx, dtau_dx_T):
    """q̈ = FD(q, q̇, τ) into qdd, M⁻¹ into Minv (n × n) and [∂q̈/∂q  ∂q̈/∂q̇] = −M⁻¹ [∂τ/∂q  ∂τ/∂q̇] into
    dqdd_dx (n × 2n), from the transposes [∂τ/∂q  ∂τ/∂q̇]^T (left in dtau_dx_T, 2n × n): module
    docstring; scratch (n). Minv and dtau_dx_T may have more columns than n, zeros (linalg.row_products
    sums along all of them: a width of a multiple of 8 has no scalar remainder). False when M is not
    positive definite."""
    n = qdd.shape[0]
    crba(mb, w, q, Minv)                                                               # M
    rnea(mb, w, q, qd, qd, True, False, True, frame, f_tip, qdd, True)                 # b = c + g + J^T F
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
    if not cholesky_in_place(Minv, n):
        return False
    cholesky_solve_in_place(Minv, n, qdd)                                              # q̈ = M⁻¹ (τ − b)
    inverse_from_cholesky(Minv, n, dtau_dx_T)                                  # M⁻¹ (dtau_dx_T: scratch)
    inverse_dynamics_derivatives(mb, w, q, qd, qdd, frame, f_tip, scratch, dtau_dx_T[:n], dtau_dx_T[n:],
                                 True, True)                                   # ∂τ/∂x at q̈, transposed
    row_products(Minv, dtau_dx_T, dqdd_dx, n, 2 * n, Minv.shape[1], -1.0, False, 0)   # −M⁻¹ ∂τ/∂x
    return True
