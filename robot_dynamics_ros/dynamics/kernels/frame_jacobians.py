"""Frame Jacobians and their time derivatives, from the base-frame kinematics (kinematics.py).

    space:          J_s = [S_j] for the joints j that move the frame (zero columns elsewhere)  (eq. 5.11 of
                    the book; M = sum J^T G J in eq. 9.61)
    body:           J_b = [Ad_{T_0f^-1}] J_s
    world_aligned:  origin at the frame, axes of {0}: (w_j, v_j + w_j x p_f)
    dJ_s/dt:        dS_j/dt = [V_j, S_j]
    dJ_b/dt:        [Ad_{T_0f^-1}] (dS_j/dt - [V_f, S_j])       (V_f: the frame's twist in {0})
    world_aligned:  (dw_j, dv_j + dw_j x p_f + w_j x dp_f/dt),  dp_f/dt = v_f + w_f x p_f

With mimic joints (layout.py) the columns are those of the coordinates, J_r = J G: body j's column
adds m_j times itself to column c_j (dJ_r/dt = dJ/dt G likewise: G is constant).
"""
from .jit import inline
from .kinematics import (
    REF_BODY,
    REF_WORLD_ALIGNED,
    body_poses_in_base,
    body_twist_in_base,
    change_reference,
    frame_pose,
)
from .layout import (
    W_S_BASE,
    W_SDOT_BASE,
    W_V_BASE,
    body_rate,
    coordinate,
    frame_body,
    has_mimic,
    multiplier,
    n_bodies,
    parent,
)
from .rows import row6
from .spatial_algebra import ad, add3, cross


@inline
def set_column(mb, J, j, column, mimic):
    """Body j's column (a 6-tuple) into J, zeroed before: J[:, j] = column, or with mimic joints
    J[:, c_j] += m_j column (J_r = J G)."""
    if mimic:
        c, m = coordinate(mb, j), multiplier(mb, j)
        for k in range(6):
            J[k, c] += m * column[k]
    else:
        for k in range(6):
            J[k, j] = column[k]


@inline
def jacobian(mb, w, q, frame, reference, T, J, poses_known=False):
    """J (6 x n) of frame `frame` in `reference`; T receives T_{0f}. poses_known: T_{0i} and S_i of
    this q are already in the workspace."""
    if not poses_known:
        body_poses_in_base(mb, w, q)
    frame_pose(mb, w, frame, T)
    J[:, :] = 0.0
    mimic = has_mimic(mb)
    j = frame_body(mb, frame)
    while j >= 0:
        set_column(mb, J, j, change_reference(T, reference, row6(w, j, W_S_BASE)), mimic)
        j = parent(mb, j)


@inline
def jacobian_derivative(mb, w, q, qd, frame, reference, T, dJ, poses_known=False):
    """dJ/dt (6 x n) of jacobian(frame, reference); T receives T_{0f}."""
    if not poses_known:
        body_poses_in_base(mb, w, q)
    mimic = has_mimic(mb)
    for i in range(n_bodies(mb)):
        body_twist_in_base(mb, w, i, body_rate(mb, qd, i, mimic))
    frame_pose(mb, w, frame, T)
    dJ[:, :] = 0.0
    b = frame_body(mb, frame)
    if b < 0:
        return
    V_f = row6(w, b, W_V_BASE)             # the frame's twist in {0} (space form) = its body's
    p_f = (T[0, 3], T[1, 3], T[2, 3])
    w_f = (V_f[0], V_f[1], V_f[2])
    pdot = add3((V_f[3], V_f[4], V_f[5]), cross(w_f, p_f))     # dp_f/dt = v_f + w_f x p_f
    j = b
    while j >= 0:
        Sdot = row6(w, j, W_SDOT_BASE)
        if reference == REF_WORLD_ALIGNED:
            x = change_reference(T, reference, Sdot)
            s = row6(w, j, W_S_BASE)
            extra = cross((s[0], s[1], s[2]), pdot)
            dJ_j = (x[0], x[1], x[2], x[3] + extra[0], x[4] + extra[1], x[5] + extra[2])
        elif reference == REF_BODY:
            b_ = ad(V_f, row6(w, j, W_S_BASE))
            dJ_j = change_reference(T, reference, (Sdot[0] - b_[0], Sdot[1] - b_[1], Sdot[2] - b_[2],
                                                   Sdot[3] - b_[3], Sdot[4] - b_[4], Sdot[5] - b_[5]))
        else:
            dJ_j = Sdot
        set_column(mb, dJ, j, dJ_j, mimic)          # dJ_r/dt = dJ/dt G
        j = parent(mb, j)
