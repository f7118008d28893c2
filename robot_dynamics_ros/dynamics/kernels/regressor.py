"""The joint-torque regressor: τ = Y(q, q̇, q̈) π, the dynamics linear in the inertial parameters.

Body j's wrench in eq. 9.56, F_j = G_j V̇_j − [ad_{V_j}]^T G_j V_j, is linear in its ten inertial
parameters π_j (G_j = [[I_o, [h]], [[h]^T, m 1]], eq. 9.41 about the frame's origin): F_j = Ψ(V_j, V̇_j) π_j,
column k of Ψ being the wrench of the unit parameter e_k. The wrench reaches joint i of every ancestor
of j through the backward recursion, [Ad_{T_{j,i}}]^T (9.56), and τ_i = A_i^T F (9.57), so

    Y[i, block j] = A_i^T [Ad_{T_{j,i}}]^T Ψ(V_j, V̇_j)          (i = j and its ancestors; 0 elsewhere)

V_j and V̇_j (gravity as V̇_0 = (0, −g)) come from RNEA's forward pass (rnea.py, eqs. 9.53–9.55). The
parameters are those of the body's URDF frame (the kernels' z-axis frame is turned by C_j: x_urdf =
C_j x), in Pinocchio's order: π_j = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz) with I
about the frame's origin. So V and V̇ are turned into the URDF axes, Ψ formed there and its columns
turned back. With mimic joints the rows are the coordinates': Y[c_i] += m_i A_i^T (...) (G^T Y).
"""
from .layout import (
    COL_C,
    W_P_PARENT,
    W_R_PARENT,
    W_V_BODY,
    W_VDOT_BODY,
    coordinate,
    inline,
    is_prismatic,
    multiplier,
    n_bodies,
    parent,
)
from .rnea import rnea
from .rows import row3, row6, row9
from .spatial import (
    add6,
    adjoint_inverse_transpose,
    axis_dot,
    inertia_times,
    neg_ad_transpose,
    rotate,
    rotate_back,
)

#: Column of each of our ten parameters (m, h, I_xx, I_xy, I_xz, I_yy, I_yz, I_zz: spatial.body_inertia)
#: in Pinocchio's order (m, h, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz).
PARAMETER_COLUMN = (0, 1, 2, 3, 4, 5, 7, 6, 8, 9)


@inline
def turned(R, X):
    """(R w, R v) of a twist or wrench X."""
    w = rotate(R, (X[0], X[1], X[2]))
    v = rotate(R, (X[3], X[4], X[5]))
    return w[0], w[1], w[2], v[0], v[1], v[2]


@inline
def turned_back(R, X):
    """(R^T w, R^T v)."""
    w = rotate_back(R, (X[0], X[1], X[2]))
    v = rotate_back(R, (X[3], X[4], X[5]))
    return w[0], w[1], w[2], v[0], v[1], v[2]


@inline
def unit_parameters(k):
    """The ten inertial parameters e_k (our order)."""
    return (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0, 1.0 if k == 3 else 0.0,
            1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0, 1.0 if k == 6 else 0.0, 1.0 if k == 7 else 0.0,
            1.0 if k == 8 else 0.0, 1.0 if k == 9 else 0.0)


@inline
def joint_torque_regressor(mb, w, q, qd, qdd, Y, tau):
    """Y (nq, 10 n_bodies) with τ = Y π (module docstring); tau (nq): scratch (RNEA's τ)."""
    rnea(mb, w, q, qd, qdd, True, True, True, -1, q, tau)                     # V_j, V̇_j (9.53-9.55)
    for r in range(Y.shape[0]):
        for c in range(Y.shape[1]):
            Y[r, c] = 0.0
    for j in range(n_bodies(mb)):
        C = row9(mb, j, COL_C)
        V = turned(C, row6(w, j, W_V_BODY))                                    # in the URDF axes
        Vdot = turned(C, row6(w, j, W_VDOT_BODY))
        for k in range(10):
            e = unit_parameters(k)
            F = turned_back(C, add6(inertia_times(e, Vdot), neg_ad_transpose(V, inertia_times(e, V))))
            column = 10 * j + PARAMETER_COLUMN[k]
            i = j
            while i >= 0:
                Y[coordinate(mb, i), column] += multiplier(mb, i) * axis_dot(is_prismatic(mb, i), F)  # 9.57
                lam = parent(mb, i)
                if lam >= 0:
                    F = adjoint_inverse_transpose(row9(w, i, W_R_PARENT), row3(w, i, W_P_PARENT), F)  # (9.56)
                i = lam
