"""Forward kinematics: joint transforms, body poses and screw axes in {0}, twists in {0}, frame poses.

    T_{λ(i),i}(q_i) = T_tree,i exp([A_i] q_i)                          (eqs. 9.35, 9.50)
    T_{0i} = T_{0,λ(i)} T_{λ(i),i}                                      (eq. 9.37)
    S_i = [Ad_{T_0i}] A_i        joint i's screw axis in {0}: column i of the space Jacobian
    V_i = V_{λ(i)} + S_i q̇_i     body i's twist in {0} (the space form of eq. 9.54)
    dS_i/dt = [V_i, S_i]         (S_i moves with body i: dAd_T/dt = ad_V Ad_T)
    T_{0f} = T_{0b} T_{bf}       frame f fixed on body b
"""
import numpy as np

from .jit import inline
from .layout import (
    COL_C,
    COL_P,
    COL_R,
    FCOL_BODY,
    FCOL_P,
    FCOL_R,
    W_P_BASE,
    W_P_PARENT,
    W_R_BASE,
    W_R_PARENT,
    W_S_BASE,
    W_SDOT_BASE,
    W_V_BASE,
    body_position,
    frame_row,
    has_mimic,
    is_prismatic,
    n_bodies,
    parent,
)
from .rows import row3, row6, row9, set_row3, set_row6, set_row9
from .spatial_algebra import (
    ZERO6,
    ad,
    add3,
    add6,
    adjoint_inverse,
    adjoint_inverse_transpose,
    compose,
    compose_rotations,
    cross,
    scale6,
    screw_axis_in_base,
    transpose,
)

REF_SPACE = 0
REF_BODY = 1
REF_WORLD_ALIGNED = 2


@inline
def joint_transform(mb, i, q_i):
    """T_{λ(i),i}(q_i) = T_tree exp([A_i] q_i) as (R, p)  (eqs. 9.35, 9.50).

    With the joint axis along z: R = R_tree Rz(q), p = p_tree (revolute); R = R_tree,
    p = p_tree + q R_tree e_z (prismatic).
    """
    if is_prismatic(mb, i):
        R = row9(mb, i, COL_R)
        return R, add3(row3(mb, i, COL_P), (q_i * R[2], q_i * R[5], q_i * R[8]))
    # sin and cos first: a libm call clobbers every floating-point register, so nothing loaded
    # before it would stay in one
    s, c = np.sin(q_i), np.cos(q_i)
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = row9(mb, i, COL_R)
    return (c * t00 + s * t01, c * t01 - s * t00, t02,
            c * t10 + s * t11, c * t11 - s * t10, t12,
            c * t20 + s * t21, c * t21 - s * t20, t22), row3(mb, i, COL_P)


@inline
def pose_in_base(w, i):
    """T_{0i} of body i as (R_0i, row-major 9-tuple; p_0i, 3-tuple), read from its workspace row, where
    body_pose_in_base left it."""
    return row9(w, i, W_R_BASE), row3(w, i, W_P_BASE)


@inline
def body_pose_in_base(mb, w, i, q_i):
    """Body i's joint transform T_{λ(i),i} (W_*_PARENT), its pose T_{0i} (W_*_BASE) and its screw
    axis S_i in {0} (W_S_BASE), from its parent's pose (eq. 9.37)."""
    R, p = joint_transform(mb, i, q_i)
    set_row9(w, i, W_R_PARENT, R)
    set_row3(w, i, W_P_PARENT, p)
    lam = parent(mb, i)
    if lam >= 0:
        R_0lam, p_0lam = pose_in_base(w, lam)
        R0, p0 = compose(R_0lam, p_0lam, R, p)                                          # T_0λ T_λi (9.37)
    else:
        R0, p0 = R, p
    set_row9(w, i, W_R_BASE, R0)
    set_row3(w, i, W_P_BASE, p0)
    set_row6(w, i, W_S_BASE, screw_axis_in_base(is_prismatic(mb, i), R0, p0))


@inline
def body_poses_in_base(mb, w, q):
    """T_{0i} and S_i of every body (eq. 9.37), base to tips; q: the coordinates (q_i = m_i q[c_i] + o_i)."""
    mimic = has_mimic(mb)
    for i in range(n_bodies(mb)):
        body_pose_in_base(mb, w, i, body_position(mb, q, i, mimic))


@inline
def body_twist_in_base(mb, w, i, qd_i):
    """V_i = V_{λ(i)} + S_i q̇_i (W_V_BASE) and dS_i/dt = [V_i, S_i] (W_SDOT_BASE), all in {0}.
    Needs S_i (body_pose_in_base) and the parent's twist."""
    lam = parent(mb, i)
    S = row6(w, i, W_S_BASE)
    V = add6(row6(w, lam, W_V_BASE) if lam >= 0 else ZERO6, scale6(S, qd_i))
    set_row6(w, i, W_V_BASE, V)
    set_row6(w, i, W_SDOT_BASE, ad(V, S))


@inline
def frame_pose(mb, w, f, T):
    """T (4x4) = T_{0f} = T_{0b} T_{bf} of frame f on body b (b = -1: the base); needs T_{0b}."""
    r = frame_row(mb, f)
    b = int(mb[r, FCOL_BODY])
    R_bf = row9(mb, r, FCOL_R)
    p_bf = row3(mb, r, FCOL_P)
    if b >= 0:
        R_0b, p_0b = pose_in_base(w, b)
        R, p = compose(R_0b, p_0b, R_bf, p_bf)                                          # T_0b T_bf
    else:
        R, p = R_bf, p_bf
    T[0, 0], T[0, 1], T[0, 2], T[0, 3] = R[0], R[1], R[2], p[0]
    T[1, 0], T[1, 1], T[1, 2], T[1, 3] = R[3], R[4], R[5], p[1]
    T[2, 0], T[2, 1], T[2, 2], T[2, 3] = R[6], R[7], R[8], p[2]
    T[3, 0], T[3, 1], T[3, 2], T[3, 3] = 0.0, 0.0, 0.0, 1.0


@inline
def change_reference(T, reference, X):
    """A twist X given in {0} (space form) in the requested reference at frame T = T_{0f}:
    space: X; body: [Ad_{T^-1}] X = (R^T w, R^T (v + w x p)); world_aligned: (w, v + w x p), the
    velocity of the point p with the axes of {0}."""
    if reference == REF_SPACE:
        return X
    p = (T[0, 3], T[1, 3], T[2, 3])
    if reference == REF_WORLD_ALIGNED:
        v = add3((X[3], X[4], X[5]), cross((X[0], X[1], X[2]), p))
        return X[0], X[1], X[2], v[0], v[1], v[2]
    R = (T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2])
    return adjoint_inverse(R, p, X)


@inline
def frame_wrench_in_body(mb, f, F):
    """A wrench F (array of 6) given in frame f's coordinates, re-expressed in the frame of the body
    that carries f: [Ad_{T_bf^-1}]^T F."""
    r = frame_row(mb, f)
    F_f = (F[0], F[1], F[2], F[3], F[4], F[5])
    return adjoint_inverse_transpose(row9(mb, r, FCOL_R), row3(mb, r, FCOL_P), F_f)


@inline
def urdf_body_poses(mb, w, q, T):
    """T[i] (4x4) = T_{0i} C_i^T: the pose of every body's URDF frame (not the z-axis frame of the
    kernels: C_i turns one into the other, Model._pack)."""
    body_poses_in_base(mb, w, q)
    for i in range(n_bodies(mb)):
        R = compose_rotations(row9(w, i, W_R_BASE), transpose(row9(mb, i, COL_C)))
        p = row3(w, i, W_P_BASE)
        T[i, 0, 0], T[i, 0, 1], T[i, 0, 2], T[i, 0, 3] = R[0], R[1], R[2], p[0]
        T[i, 1, 0], T[i, 1, 1], T[i, 1, 2], T[i, 1, 3] = R[3], R[4], R[5], p[1]
        T[i, 2, 0], T[i, 2, 1], T[i, 2, 2], T[i, 2, 3] = R[6], R[7], R[8], p[2]
        T[i, 3, 0], T[i, 3, 1], T[i, 3, 2], T[i, 3, 3] = 0.0, 0.0, 0.0, 1.0
