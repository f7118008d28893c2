"""The joint-torque regressor: τ = Y(q, q̇, q̈) π, the dynamics linear in the inertial parameters.

Body j's wrench in eq. 9.56, F_j = G_j V̇_j − [ad_{V_j}]^T G_j V_j, is linear in its ten inertial
parameters π_j (G_j = [[I_o, [h]], [[h]^T, m 1]], eq. 9.41 about the frame's origin): F_j = Ψ(V_j, V̇_j) π_j,
column k of Ψ being the wrench of the unit parameter e_k. The backward recursion (9.56) carries it to
every ancestor i of j, where τ_i = A_i^T F (9.57); in base coordinates, with S_i = [Ad_{T_0i}] A_i and
F_j moved to {0}, that is one dot product per ancestor (as in crba.py):

    Y[i, block j] = S_i^T [Ad_{T_{0j}}^-1]^T Ψ(V_j, V̇_j)          (i = j and its ancestors; 0 elsewhere)

V_j and V̇_j (gravity as V̇_0 = (0, −g)) come from RNEA's forward pass (rnea.py, eqs. 9.53–9.55). The
parameters are those of the body's URDF frame (the kernels' z-axis frame is turned by C_j: x_urdf =
C_j x), in Pinocchio's order: π_j = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz) with I
about the frame's origin. So V and V̇ are turned into the URDF axes, Ψ is formed there and moved to {0}
by the URDF frame's pose (R_{0j} C_j^T, p_{0j}). With mimic joints the rows are the coordinates':
Y[c_i] += m_i S_i^T (...) (G^T Y).
"""
from .jit import inline
from .kinematics import body_poses_in_base
from .layout import (
    COL_C,
    W_P_BASE,
    W_R_BASE,
    W_S_BASE,
    W_V_BODY,
    W_VDOT_BODY,
    coordinate,
    has_mimic,
    multiplier,
    n_bodies,
    parent,
    run_start,
)
from .rnea import rnea
from .rows import row3, row6, row9
from .spatial_algebra import (
    add6,
    adjoint_inverse_transpose,
    compose_rotations,
    dot6,
    inertia_times,
    neg_ad_transpose,
    rotate,
    transpose,
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
def unit_parameters(k):
    """The ten inertial parameters e_k (our order)."""
    return (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0, 1.0 if k == 3 else 0.0,
            1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0, 1.0 if k == 6 else 0.0, 1.0 if k == 7 else 0.0,
            1.0 if k == 8 else 0.0, 1.0 if k == 9 else 0.0)


@inline
def regressor_column(mb, w, Y, j, offset, k, V, Vdot, R_0u, p_0, mimic):
    """Column offset + (k in Pinocchio's order) of Y: body j's wrench of the unit parameter e_k (V, V̇
    in its URDF frame, whose pose in {0} is (R_0u, p_0)), moved to {0}, dotted with S_i of j and each
    ancestor i."""
    e = unit_parameters(k)
    F_u = add6(inertia_times(e, Vdot), neg_ad_transpose(V, inertia_times(e, V)))           # Ψ e_k (9.56)
    F_0 = adjoint_inverse_transpose(R_0u, p_0, F_u)                                         # ... in {0}
    column = offset + PARAMETER_COLUMN[k]
    i = j
    while i >= 0:              # the ancestors of j (j included), one run of consecutive bodies at a time
        start = run_start(mb, i)
        for a in range(i, start - 1, -1):
            if mimic:
                Y[coordinate(mb, a), column] += multiplier(mb, a) * dot6(row6(w, a, W_S_BASE), F_0)
            else:
                Y[a, column] = dot6(row6(w, a, W_S_BASE), F_0)                              # (9.57)
        i = parent(mb, start)


@inline
def body_columns(mb, w, Y, j, offset, mimic):
    """Body j's ten columns of the regressor into Y[:, offset:offset + 10] (the workspace holding this
    state's poses and RNEA forward pass)."""
    C = row9(mb, j, COL_C)
    V = turned(C, row6(w, j, W_V_BODY))                                        # in the URDF axes
    Vdot = turned(C, row6(w, j, W_VDOT_BODY))
    R_0u = compose_rotations(row9(w, j, W_R_BASE), transpose(C))               # the URDF frame in {0}
    p_0 = row3(w, j, W_P_BASE)
    # one call per parameter, k a constant at each: once inlined, the zeros of e_k fold away
    regressor_column(mb, w, Y, j, offset, 0, V, Vdot, R_0u, p_0, mimic)
    regressor_column(mb, w, Y, j, offset, 1, V, Vdot, R_0u, p_0, mimic)
    regressor_column(mb, w, Y, j, offset, 2, V, Vdot, R_0u, p_0, mimic)
    regressor_column(mb, w, Y, j, offset, 3, V, Vdot, R_0u, p_0, mimic)
    regressor_column(mb, w, Y, j, offset, 4, V, Vdot, R_0u, p_0, mimic)
    regressor_column(mb, w, Y, j, offset, 5, V, Vdot, R_0u, p_0, mimic)
    regressor_column(mb, w, Y, j, offset, 6, V, Vdot, R_0u, p_0, mimic)
    regressor_column(mb, w, Y, j, offset, 7, V, Vdot, R_0u, p_0, mimic)
    regressor_column(mb, w, Y, j, offset, 8, V, Vdot, R_0u, p_0, mimic)
    regressor_column(mb, w, Y, j, offset, 9, V, Vdot, R_0u, p_0, mimic)


@inline
def joint_torque_regressor(mb, w, q, qd, qdd, Y, tau):
    """Y (nq, 10 n_bodies) with τ = Y π (module docstring); tau (nq): scratch (RNEA's τ)."""
    body_poses_in_base(mb, w, q)                                               # T_0j, S_j (9.37)
    rnea(mb, w, q, qd, qdd, True, True, True, -1, q, tau, True)                # V_j, V̇_j (9.53-9.55)
    for r in range(Y.shape[0]):
        for c in range(Y.shape[1]):
            Y[r, c] = 0.0
    mimic = has_mimic(mb)
    for j in range(n_bodies(mb)):
        body_columns(mb, w, Y, j, 10 * j, mimic)


@inline
def body_regressor(mb, w, q, qd, qdd, j, Y_j, tau):
    """Body j's ten columns Y_j (nq, 10) and the model's τ = M q̈ + c + g (nq) at one state: what
    identifying a payload on body j needs (τ_measured − τ = Y_j π_payload)."""
    body_poses_in_base(mb, w, q)
    rnea(mb, w, q, qd, qdd, True, True, True, -1, q, tau, True)
    for r in range(Y_j.shape[0]):
        for c in range(10):
            Y_j[r, c] = 0.0
    body_columns(mb, w, Y_j, j, 0, has_mimic(mb))
