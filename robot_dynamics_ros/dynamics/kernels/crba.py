"""The mass matrix M(q) by the composite-rigid-body algorithm (Featherstone).

M is eq. 9.61, M = sum_i J_i^T G_i J_i, summed over subtrees: with G^c_i the inertia of the subtree
rooted at body i (the composite rigid body: body i and everything it carries) and S_j the joint
screws in {0},

    G^c_i = G_i + sum over children c of [Ad_{T_{c,i}}]^T G^c_c [Ad_{T_{c,i}}]     (tips to base, eq. 9.42)
    M_ij = M_ji = S_j^T [Ad_{T_{i,0}}]^T (G^c_i A_i)     for every j that supports i (j ≤ i)
    M_ij = 0                                              for i, j on different branches
    M_ii += a_i                                           the armature: M(q) + diag(a)

The composites are summed in the bodies' own frames as ten-parameter rigid bodies (spatial.py);
each wrench G^c_i A_i is moved to {0} once, so every entry of M is one 6-vector product.

With mimic joints (layout.py) M is projected onto the coordinates, M_r = G^T M G: each body pair (i, k)
adds m_i m_k M_ik to M_r[c_i, c_k] and, for i != k, m_i m_k M_ki to M_r[c_k, c_i] (both to one diagonal
entry when two bodies share a coordinate).
"""
from .jit import inline
from .kinematics import body_poses_in_base
from .layout import (
    W_GC_BODY,
    W_P_BASE,
    W_P_PARENT,
    W_R_BASE,
    W_R_PARENT,
    W_S_BASE,
    armature,
    coordinate,
    has_mimic,
    is_prismatic,
    multiplier,
    n_bodies,
    parent,
    run_start,
)
from .rows import row3, row6, row9, row10, set_row10
from .spatial_algebra import (
    add_inertias,
    adjoint_inverse_transpose,
    body_inertia,
    dot6,
    inertia_times_axis,
    moved_inertia,
)


@inline
def crba(mb, w, q, M, poses_known=False):
    """M(q) into M (n x n) by the composite-rigid-body algorithm. poses_known: T_{0i} and S_i of
    this q are already in the workspace (kinematics.body_poses_in_base)."""
    n = n_bodies(mb)
    mimic = has_mimic(mb)
    if mimic or (n > 0 and run_start(mb, n - 1) != 0):
        M[:, :] = 0.0          # a tree: bodies on different branches do not couple; mimic: M_r accumulates
    if not poses_known:
        body_poses_in_base(mb, w, q)
    for i in range(n):
        G_i = body_inertia(mb, i)                                                   # in {i}
        set_row10(w, i, W_GC_BODY, G_i)                                             # G^c_i = G_i ...
    for i in range(n - 1, -1, -1):
        lam = parent(mb, i)
        if lam >= 0:                                                                # ... + the children's
            T_lam_i = row9(w, i, W_R_PARENT), row3(w, i, W_P_PARENT)
            Gc_i_in_parent = moved_inertia(T_lam_i[0], T_lam_i[1], row10(w, i, W_GC_BODY))
            set_row10(w, lam, W_GC_BODY, add_inertias(row10(w, lam, W_GC_BODY), Gc_i_in_parent))
    for i in range(n):
        A_i = is_prismatic(mb, i)   # the joint screw A_i in {i}: (0, e_z) if prismatic, else (e_z, 0)
        F_i = inertia_times_axis(A_i, row10(w, i, W_GC_BODY))                       # G^c_i A_i in {i}
        F_0 = adjoint_inverse_transpose(row9(w, i, W_R_BASE), row3(w, i, W_P_BASE), F_i)   # ... in {0}
        j = i
        while j >= 0:          # the ancestors j of i (i included), one run of consecutive bodies at a time
            start = run_start(mb, j)
            for k in range(j, start - 1, -1):
                M_ik = dot6(row6(w, k, W_S_BASE), F_0)                                  # S_k^T F_0
                if k == i:
                    M_ik += armature(mb, i)                                             # + a_i
                if mimic:                                                               # M_r = G^T M G
                    v = multiplier(mb, i) * multiplier(mb, k) * M_ik
                    M[coordinate(mb, i), coordinate(mb, k)] += v
                    if k != i:
                        M[coordinate(mb, k), coordinate(mb, i)] += v
                else:
                    M[i, k] = M_ik
                    M[k, i] = M_ik
            j = parent(mb, start)
