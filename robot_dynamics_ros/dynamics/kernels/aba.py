"""Forward dynamics q̈ = M^-1 (τ - c - g - J^T F_tip) by the articulated-body algorithm (Featherstone), O(n).

Every quantity is in the base frame {0}, so an articulated inertia passes to the parent without a
change of frame. S_i is joint i's screw axis in {0} (kinematics.py), G_i body i's spatial inertia
moved to {0}, G^A_i / p^A_i the articulated-body inertia and bias wrench of the subtree at i.

  pass 1 (base to tips):  V_i = V_λ(i) + S_i q̇_i,   c_i = [V_i, S_i] q̇_i  (= dS_i/dt q̇_i)
                          G^A_i = G_i,   p^A_i = -[ad_{V_i}]^T G_i V_i   (+ F_tip on the tip frame's body)
  pass 2 (tips to base):  U_i = G^A_i S_i,   D_i = S_i^T U_i + a_i (armature),   u_i = τ_i - S_i^T p^A_i
                          G^A_λ += G^A_i - U_i U_i^T / D_i
                          p^A_λ += p^A_i + G^a_i c_i + U_i u_i / D_i,   G^a_i = G^A_i - U_i U_i^T / D_i
  pass 3 (base to tips):  dV_i/dt = dV_λ(i)/dt + c_i with dV_0/dt = (0, -g)  (gravity as a base acceleration)
                          q̈_i = (u_i - U_i^T dV_i/dt) / D_i,   dV_i/dt += S_i q̈_i

One coordinate per body: a model with mimic joints (several bodies on one coordinate, layout.py) takes
integrators.fd_mimic instead (M_r by CRBA, a Cholesky solve).
"""
from .jit import inline
from .kinematics import body_pose_in_base, body_twist_in_base, frame_wrench_in_body
from .layout import (
    COL_GRAVITY,
    W_GA_BASE,
    W_INV_D,
    W_P_BASE,
    W_PA_BASE,
    W_R_BASE,
    W_S_BASE,
    W_SDOT_BASE,
    W_U_BASE,
    W_U_TORQUE,
    W_V_BASE,
    W_VDOT_BASE,
    armature,
    frame_body,
    n_bodies,
    parent,
)
from .rows import row3, row6, row9, set_row6
from .spatial_algebra import (
    add6,
    adjoint_inverse_transpose,
    body_inertia,
    dot6,
    inertia_times,
    moved_inertia,
    neg_ad_transpose,
    scale6,
    set_inertia_matrix,
)


@inline
def aba(mb, w, q, qd, tau, frame, f_tip, qdd):
    """q̈ into qdd by the articulated-body algorithm; frame >= 0 applies the tip wrench f_tip there
    (the wrench the robot exerts on its environment, in the frame's coordinates)."""
    n = n_bodies(mb)
    for i in range(n):                                                    # pass 1
        body_pose_in_base(mb, w, i, q[i])
        body_twist_in_base(mb, w, i, qd[i])
        G_i = moved_inertia(row9(w, i, W_R_BASE), row3(w, i, W_P_BASE), body_inertia(mb, i))   # G_i in {0}
        set_inertia_matrix(w, i, W_GA_BASE, G_i)                                                # G^A_i = G_i
        V_i = row6(w, i, W_V_BASE)
        set_row6(w, i, W_PA_BASE, neg_ad_transpose(V_i, inertia_times(G_i, V_i)))              # p^A_i
    if frame >= 0:
        b = frame_body(mb, frame)
        if b >= 0:
            F_0 = adjoint_inverse_transpose(row9(w, b, W_R_BASE), row3(w, b, W_P_BASE),
                                            frame_wrench_in_body(mb, frame, f_tip))
            set_row6(w, b, W_PA_BASE, add6(row6(w, b, W_PA_BASE), F_0))
    for i in range(n - 1, -1, -1):                                        # pass 2
        GA_i = w[i, W_GA_BASE:W_GA_BASE + 36]
        U_i = w[i, W_U_BASE:W_U_BASE + 6]
        pA_i = w[i, W_PA_BASE:W_PA_BASE + 6]
        S_i = w[i, W_S_BASE:W_S_BASE + 6]
        D_i = armature(mb, i)                                             # D_i = a_i + ...
        u_i = tau[i]
        for r in range(6):
            acc = 0.0
            for k in range(6):
                acc += GA_i[6 * r + k] * S_i[k]
            U_i[r] = acc                                                  # U_i = G^A_i S_i
            D_i += S_i[r] * acc                                           # D_i = S_i^T U_i
            u_i -= S_i[r] * pA_i[r]                                       # u_i = τ_i - S_i^T p^A_i
        inv_D_i = 1.0 / D_i
        w[i, W_INV_D] = inv_D_i
        w[i, W_U_TORQUE] = u_i
        lam = parent(mb, i)
        if lam < 0:
            continue
        c0, c1, c2, c3, c4, c5 = scale6(row6(w, i, W_SDOT_BASE), qd[i])   # c_i = dS_i/dt q̇_i
        v0, v1, v2 = U_i[0] * inv_D_i, U_i[1] * inv_D_i, U_i[2] * inv_D_i          # U_i / D_i
        v3, v4, v5 = U_i[3] * inv_D_i, U_i[4] * inv_D_i, U_i[5] * inv_D_i
        # (u_i - U_i^T c_i) / D_i
        e_i = u_i * inv_D_i - (v0 * c0 + v1 * c1 + v2 * c2 + v3 * c3 + v4 * c4 + v5 * c5)
        GA_lam = w[lam, W_GA_BASE:W_GA_BASE + 36]
        for r in range(6):     # a row is read whole before the parent's is written: free scheduling
            a0, a1, a2 = GA_i[6 * r], GA_i[6 * r + 1], GA_i[6 * r + 2]
            a3, a4, a5 = GA_i[6 * r + 3], GA_i[6 * r + 4], GA_i[6 * r + 5]
            b0, b1, b2 = GA_lam[6 * r], GA_lam[6 * r + 1], GA_lam[6 * r + 2]
            b3, b4, b5 = GA_lam[6 * r + 3], GA_lam[6 * r + 4], GA_lam[6 * r + 5]
            ur = U_i[r]
            # p^A_λ += p^A_i + G^A_i c_i + U_i (u_i - U_i^T c_i) / D_i  (= p^A_i + G^a_i c_i + U_i u_i / D_i);
            # G^A_λ += G^A_i - U_i U_i^T / D_i
            w[lam, W_PA_BASE + r] += (pA_i[r] + ur * e_i
                                      + a0 * c0 + a1 * c1 + a2 * c2 + a3 * c3 + a4 * c4 + a5 * c5)
            GA_lam[6 * r], GA_lam[6 * r + 1], GA_lam[6 * r + 2] = (b0 + a0 - ur * v0, b1 + a1 - ur * v1,
                                                                   b2 + a2 - ur * v2)
            GA_lam[6 * r + 3], GA_lam[6 * r + 4], GA_lam[6 * r + 5] = (b3 + a3 - ur * v3, b4 + a4 - ur * v4,
                                                                       b5 + a5 - ur * v5)
    g = (mb[0, COL_GRAVITY], mb[0, COL_GRAVITY + 1], mb[0, COL_GRAVITY + 2])
    for i in range(n):                                                    # pass 3
        lam = parent(mb, i)
        Vdot_lam = row6(w, lam, W_VDOT_BASE) if lam >= 0 else (0.0, 0.0, 0.0, -g[0], -g[1], -g[2])
        Vdot_i = add6(Vdot_lam, scale6(row6(w, i, W_SDOT_BASE), qd[i]))     # dV_λ/dt + c_i
        qdd_i = (w[i, W_U_TORQUE] - dot6(row6(w, i, W_U_BASE), Vdot_i)) * w[i, W_INV_D]
        qdd[i] = qdd_i
        set_row6(w, i, W_VDOT_BASE, add6(Vdot_i, scale6(row6(w, i, W_S_BASE), qdd_i)))
