"""Inverse dynamics by the recursive Newton-Euler algorithm (Modern Robotics eqs. 9.53-9.57).

In each body's own frame {i}, with T_{i,λ(i)} = T_{λ(i),i}^-1 and the joint screw A_i in {i}:

  forward (base to tips), V_0 = 0, dV_0/dt = (0, -g):
    T_{λ(i),i} = T_tree,i exp([A_i] q_i)                                             (9.53)
    V_i = [Ad_{T_{i,λ(i)}}] V_λ(i) + A_i q̇_i                                         (9.54)
    dV_i/dt = [Ad_{T_{i,λ(i)}}] dV_λ(i)/dt + [ad_{V_i}] A_i q̇_i + A_i q̈_i            (9.55)
  backward (tips to base), F_tip added to the wrench of the body that carries the tip frame:
    F_i = G_i dV_i/dt - [ad_{V_i}]^T G_i V_i + sum over children c of [Ad_{T_{c,i}}]^T F_c   (9.56)
    τ_i = F_i^T A_i  (+ a_i q̈_i: the armature, the rotor inertia reflected through the gearbox)  (9.57)

Gravity enters as an upward acceleration of the base, dV_0/dt = (0, -g), so g(q) needs no extra
term. On a tree each body adds its wrench to its parent's (9.56 summed over the children).

With mimic joints (layout.py) body i's joint moves as q_i = m_i q[c_i] + o_i, q̇_i = m_i q̇[c_i],
q̈_i = m_i q̈[c_i], and the torques are projected onto the coordinates: τ[c] = Σ_{i: c_i = c} m_i F_i^T A_i
(τ_r = G^T τ).
"""
from .jit import inline
from .kinematics import frame_wrench_in_body, joint_transform
from .layout import (
    COL_GRAVITY,
    W_F_BODY,
    W_P_PARENT,
    W_R_PARENT,
    W_V_BODY,
    W_VDOT_BODY,
    armature,
    body_position,
    body_rate,
    coordinate,
    frame_body,
    has_mimic,
    is_prismatic,
    multiplier,
    n_bodies,
    parent,
)
from .rows import row3, row6, row9, set_row3, set_row6, set_row9
from .spatial_algebra import (
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


@inline
def parent_acceleration(mb, w, lam, use_gravity):
    """dV_λ/dt of the parent λ (its workspace row), or for λ = −1 the base's (0, −g) (0 without gravity)."""
    if lam >= 0:
        return row6(w, lam, W_VDOT_BODY)
    if use_gravity:
        return 0.0, 0.0, 0.0, -mb[0, COL_GRAVITY], -mb[0, COL_GRAVITY + 1], -mb[0, COL_GRAVITY + 2]
    return ZERO6


@inline
def add_tip_wrench(mb, w, frame, f_tip):
    """F_b += [Ad_{T_bf^-1}]^T F_tip in {b}: the tip wrench f_tip (given in frame f's coordinates) added to
    the wrench of the body b that carries frame f (none when f is fixed to the base), before the
    backward pass of eq. 9.56 carries it to the joints."""
    b = frame_body(mb, frame)
    if b >= 0:
        set_row6(w, b, W_F_BODY, add6(row6(w, b, W_F_BODY), frame_wrench_in_body(mb, frame, f_tip)))


@inline
def rnea(mb, w, q, qd, qdd, use_qd, use_qdd, use_gravity, frame, f_tip, tau, poses_known=False):
    """τ = M(q) q̈ + c(q, q̇) + g(q) + J^T F_tip into tau, by recursive Newton-Euler (eqs. 9.53-9.57).

    use_qd / use_qdd False treat q̇ / q̈ as zero, use_gravity False drops g(q) (callers pass
    constants: the unused terms compile away). frame >= 0 applies the tip wrench f_tip (the wrench
    the robot exerts on its environment, in the frame's coordinates) there. poses_known: the joint
    transforms T_{λ(i),i} of this q are already in the workspace (kinematics.body_poses_in_base).
    """
    n = n_bodies(mb)
    mimic = has_mimic(mb)
    for i in range(n):
        if not poses_known:
            R, p = joint_transform(mb, i, body_position(mb, q, i, mimic))                  # (9.53)
            set_row9(w, i, W_R_PARENT, R)
            set_row3(w, i, W_P_PARENT, p)
        # Each quantity goes to its workspace row when complete and is read back where it is used,
        # and F_i is summed in its row in two parts: fewer values held in registers at once (a
        # joint's sin/cos is a libm call, which clobbers every floating-point register); faster than
        # holding them all as tuples (doc/performance.md, "Design measurements").
        lam = parent(mb, i)
        A_i = is_prismatic(mb, i)   # the joint screw A_i in {i}: (0, e_z) if prismatic, else (e_z, 0)
        if use_qd:
            qd_i = body_rate(mb, qd, i, mimic)
            V_i = ZERO6
            if lam >= 0:
                V_i = adjoint_inverse(row9(w, i, W_R_PARENT), row3(w, i, W_P_PARENT),
                                      row6(w, lam, W_V_BODY))                              # (9.54)
            set_row6(w, i, W_V_BODY, plus_axis(A_i, V_i, qd_i))
        Vdot_lam = parent_acceleration(mb, w, lam, use_gravity)
        Vdot_i = adjoint_inverse(row9(w, i, W_R_PARENT), row3(w, i, W_P_PARENT), Vdot_lam)   # (9.55)
        if use_qd:
            Vdot_i = plus_ad_axis(A_i, row6(w, i, W_V_BODY), Vdot_i, qd_i)
        if use_qdd:
            Vdot_i = plus_axis(A_i, Vdot_i, body_rate(mb, qdd, i, mimic))
        set_row6(w, i, W_VDOT_BODY, Vdot_i)
        G_i = body_inertia(mb, i)                                                          # in {i}
        set_row6(w, i, W_F_BODY, inertia_times(G_i, Vdot_i))                               # G_i dV_i/dt
        if use_qd:
            V_i = row6(w, i, W_V_BODY)
            G_i = body_inertia(mb, i)   # (read again: not held across the stores above)
            set_row6(w, i, W_F_BODY, add6(row6(w, i, W_F_BODY),
                                          neg_ad_transpose(V_i, inertia_times(G_i, V_i))))    # (9.56)
    if frame >= 0:
        add_tip_wrench(mb, w, frame, f_tip)
    if mimic:                   # τ_r = G^T τ is accumulated
        for c in range(tau.shape[0]):
            tau[c] = 0.0
    for i in range(n - 1, -1, -1):
        F_i = row6(w, i, W_F_BODY)
        A_i = is_prismatic(mb, i)
        tau_i = axis_dot(A_i, F_i)                                                         # (9.57)
        if use_qdd:
            tau_i += armature(mb, i) * body_rate(mb, qdd, i, mimic)                        # + a_i q̈_i
        if mimic:
            tau[coordinate(mb, i)] += multiplier(mb, i) * tau_i                            # G^T
        else:
            tau[i] = tau_i
        lam = parent(mb, i)
        if lam >= 0:
            F_lam = adjoint_inverse_transpose(row9(w, i, W_R_PARENT), row3(w, i, W_P_PARENT), F_i)  # (9.56)
            set_row6(w, lam, W_F_BODY, add6(row6(w, lam, W_F_BODY), F_lam))
