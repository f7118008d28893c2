"""The Christoffel-consistent Coriolis matrix C(q, q̇) (eq. 9.87) and ∂M/∂q, in O(n²).

In {0}, M = sum_i J_i^T G_i J_i (eq. 9.61 in base coordinates), J_i's columns the screws S_j of the
joints j that support body i, dS_j/dt = [V_j, S_j] and dG_i/dt = -[ad_{V_i}]^T G_i - G_i [ad_{V_i}]. With

    B_i = 1/2 (-[ad_{V_i}]^T G_i - G_i [ad_{V_i}] - adbar(G_i V_i)),   adbar(P) X = [ad_X]^T P (skew in X),

B_i + B_i^T = dG_i/dt and B_i V_i = -[ad_{V_i}]^T G_i V_i, so C = sum_i J_i^T (G_i dJ_i/dt + B_i J_i)
gives c = C q̇ (eq. 9.88) and Ṁ = C + C^T: it is the Christoffel factorisation C_ij = sum_k Γ_ijk q̇_k
(Echeandia & Wensing 2021). Summed over subtrees (composites G^c_i, B^c_i in {0}), for j supporting i:

    C_ij = S_i^T (G^c_i dS_j/dt + B^c_i S_j),     C_ji = S_j^T (G^c_i dS_i/dt + B^c_i S_i)

Since Ṁ = sum_k (∂M/∂q_k) q̇_k = C(q, q̇) + C(q, q̇)^T is linear in q̇:  ∂M/∂q_k = C(q, e_k) + C(q, e_k)^T.

With mimic joints (layout.py) the twists come from q̇_i = m_i q̇[c_i] and C is projected onto the
coordinates, C_r = G^T C(q, G q̇_r) G (C_r[c_i, c_j] += m_i m_j C_ij): then c_r = G^T c = C_r q̇_r and
Ṁ_r = G^T Ṁ G = C_r + C_r^T, so ∂M_r/∂q_r[k] = C_r(q, e_k) + C_r(q, e_k)^T with e_k a unit coordinate
velocity (= sum_i G_ik G^T (∂M/∂q_i) G).
"""
from .jit import inline
from .kinematics import body_poses_in_base, body_twist_in_base, pose_in_base
from .layout import (
    W_BC_BASE,
    W_GC_BASE,
    W_PHI_BASE,
    W_S_BASE,
    W_SDOT_BASE,
    W_V_BASE,
    W_Y_BASE,
    body_rate,
    coordinate,
    has_mimic,
    multiplier,
    n_bodies,
    n_coordinates,
    parent,
    run_start,
)
from .rows import row6
from .spatial_algebra import (
    add6,
    add_skew,
    body_inertia,
    dot6,
    matrix_times,
    matrix_transpose_times,
    moved_inertia,
    set_inertia_matrix,
)


@inline
def composite_inertias(w, i):
    """(G^c_i, B^c_i): the composite spatial inertia and the composite Coriolis factor of the subtree at
    body i, in {0}, as views of its workspace row (W_GC_BASE, W_BC_BASE; 36 each, row-major); the body's
    own G_i and B_i until composites_in_base has summed the children in."""
    return w[i, W_GC_BASE:W_GC_BASE + 36], w[i, W_BC_BASE:W_BC_BASE + 36]


@inline
def coriolis_factor(w, i):
    """B_i = 1/2 (-[ad_V]^T G - G [ad_V] - adbar(G V)) into W_BC_BASE, V = V_i and G = G_i in {0}
    (W_V_BASE, W_GC_BASE).

    With G symmetric, [ad_V]^T G = (G [ad_V])^T, and Y = G [ad_V] is three cross products per row:
    [ad_V] = [[[w], 0], [[v], [w]]] and x^T [w] = (x cross w)^T for a row x, so
    Y[r, 0:3] = G[r, 0:3] x w + G[r, 3:6] x v,   Y[r, 3:6] = G[r, 3:6] x w;  B = -1/2 (Y + Y^T) - 1/2 adbar(P)
    with adbar(P) = [[[m], [f]], [[f], 0]] for P = G V = (m, f).
    """
    G, B = composite_inertias(w, i)
    wx, wy, wz, vx, vy, vz = row6(w, i, W_V_BASE)
    for r in range(6):                         # B = Y first
        a0, a1, a2 = G[6 * r], G[6 * r + 1], G[6 * r + 2]
        b0, b1, b2 = G[6 * r + 3], G[6 * r + 4], G[6 * r + 5]
        B[6 * r] = a1 * wz - a2 * wy + b1 * vz - b2 * vy
        B[6 * r + 1] = a2 * wx - a0 * wz + b2 * vx - b0 * vz
        B[6 * r + 2] = a0 * wy - a1 * wx + b0 * vy - b1 * vx
        B[6 * r + 3] = b1 * wz - b2 * wy
        B[6 * r + 4] = b2 * wx - b0 * wz
        B[6 * r + 5] = b0 * wy - b1 * wx
    for r in range(6):                         # then B = -1/2 (Y + Y^T), in place
        for c in range(r, 6):
            s = -0.5 * (B[6 * r + c] + B[6 * c + r])
            B[6 * r + c] = s
            B[6 * c + r] = s
    P = matrix_times(G, (wx, wy, wz, vx, vy, vz))
    m, f = (P[0], P[1], P[2]), (P[3], P[4], P[5])
    add_skew(B, 0, 0, -0.5, m)                 # B -= 1/2 adbar(P)
    add_skew(B, 0, 3, -0.5, f)
    add_skew(B, 3, 0, -0.5, f)


@inline
def composites_in_base(mb, w, qd, mimic):
    """V_i, dS_i/dt (kinematics.body_twist_in_base), then the composites G^c_i (W_GC_BASE) and B^c_i
    (W_BC_BASE) of every subtree, all in {0}; needs T_{0i} and S_i (body_poses_in_base)."""
    n = n_bodies(mb)
    for i in range(n):
        body_twist_in_base(mb, w, i, body_rate(mb, qd, i, mimic))
        R_0i, p_0i = pose_in_base(w, i)
        set_inertia_matrix(w, i, W_GC_BASE, moved_inertia(R_0i, p_0i, body_inertia(mb, i)))  # G^c_i = G_i ...
        coriolis_factor(w, i)                                                            # B^c_i = B_i ...
    for i in range(n - 1, -1, -1):                                                  # ... + the children's
        lam = parent(mb, i)
        if lam >= 0:
            for k in range(36):
                w[lam, W_GC_BASE + k] += w[i, W_GC_BASE + k]
                w[lam, W_BC_BASE + k] += w[i, W_BC_BASE + k]


@inline
def coriolis_matrix(mb, w, q, qd, C, poses_known=False):
    """C(q, q̇) into C (n x n), C_ij = sum_k Γ_ijk q̇_k (eq. 9.87). poses_known: T_{0i} and S_i of
    this q are already in the workspace."""
    if not poses_known:
        body_poses_in_base(mb, w, q)
    composites_in_base(mb, w, qd, has_mimic(mb))
    coriolis_from_composites(mb, w, C, 1.0, False)


@inline
def coriolis_from_composites(mb, w, C, scale, transposed):
    """scale C(q, q̇) (transposed: its transpose) into C, from the composites G^c_i, B^c_i and the axes
    S_i, dS_i/dt in the workspace (composites_in_base): the pairs of the module docstring."""
    composite_pairs(mb, w, C, scale, transposed, False, C)


@inline
def composite_pairs(mb, w, C, scale, transposed, derivatives, dtau_dq):
    """The pairs (i, j), j supporting i (i itself first), of the module docstring: scale C(q, q̇)
    (transposed: its transpose) into C; with `derivatives`, in the same pass, the pairs of the
    derivative recursion (derivatives.py) into dtau_dq (transposed likewise; zeroed by the caller where a
    model leaves entries unwritten), from φ_j and Y_i in the workspace (W_PHI_BASE, W_Y_BASE):

        ∂τ_i/∂θ_j = S_i^T (G^c_i φ_j + 2 B^c_i ψ_j),     ∂τ_j/∂θ_i = S_j^T Y_i     (ψ_j = dS_j/dt)

    Both share S_i^T G^c_i and S_i^T B^c_i (G^c symmetric) and the reads of S_j, ψ_j."""
    n = n_bodies(mb)
    mimic = has_mimic(mb)
    C[:, :] = 0.0
    for i in range(n):
        Gc, Bc = composite_inertias(w, i)
        S_i, Sdot_i = row6(w, i, W_S_BASE), row6(w, i, W_SDOT_BASE)
        GcS = matrix_times(Gc, S_i)                     # G^c_i S_i (= (S_i^T G^c_i)^T: G^c symmetric)
        BcTS = matrix_transpose_times(Bc, S_i)          # B^c_i^T S_i
        F = add6(matrix_times(Gc, Sdot_i), matrix_times(Bc, S_i))     # G^c_i dS_i/dt + B^c_i S_i
        Y_i = row6(w, i, W_Y_BASE) if derivatives else F
        c_i, m_i = (coordinate(mb, i), multiplier(mb, i)) if mimic else (i, 1.0)
        j = i
        while j >= 0:                   # the joints that support i, a run of consecutive bodies at a time
            start = run_start(mb, j)
            for k in range(j, start - 1, -1):
                S_k, Sdot_k = row6(w, k, W_S_BASE), row6(w, k, W_SDOT_BASE)
                c_k, m = (coordinate(mb, k), m_i * multiplier(mb, k)) if mimic else (k, 1.0)
                put(C, c_i, c_k, scale * m * (dot6(GcS, Sdot_k) + dot6(BcTS, S_k)), mimic, transposed)  # C_ik
                if k != i:
                    put(C, c_k, c_i, scale * m * dot6(S_k, F), mimic, transposed)                       # C_ki
                if derivatives:
                    put(dtau_dq, c_i, c_k, m * (dot6(GcS, row6(w, k, W_PHI_BASE)) + 2.0 * dot6(BcTS, Sdot_k)),
                        mimic, transposed)                                                  # ∂τ_i/∂θ_k
                    if k != i:
                        put(dtau_dq, c_k, c_i, m * dot6(S_k, Y_i), mimic, transposed)     # ∂τ_k/∂θ_i
            j = parent(mb, start)


@inline
def put(X, r, c, v, accumulate, transposed):
    """X[r, c] (transposed: X[c, r]) = v, or += v when accumulating (mimic joints: G^T (·) G)."""
    if transposed:
        r, c = c, r
    if accumulate:
        X[r, c] += v
    else:
        X[r, c] = v


@inline
def mass_matrix_derivatives(mb, w, q, unit, C, dM):
    """∂M/∂q_k = C(q, e_k) + C(q, e_k)^T into dM[:, :, k] for every coordinate k; unit (nq,) and C (nq, nq)
    are scratch."""
    n = n_coordinates(mb)
    body_poses_in_base(mb, w, q)
    for k in range(n):
        for j in range(n):
            unit[j] = 0.0
        unit[k] = 1.0
        coriolis_matrix(mb, w, q, unit, C, poses_known=True)
        for i in range(n):
            for j in range(n):
                dM[i, j, k] = C[i, j] + C[j, i]
