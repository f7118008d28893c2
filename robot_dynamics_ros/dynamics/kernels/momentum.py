"""The generalized momentum p = M(q) q̇ and its balance, ṗ = τ + τ_ext + C(q, q̇)^T q̇ - g(q), in one
recursion: what a momentum observer needs at each sample, without forming M or C.

With M q̈ + C q̇ + g = τ + τ_ext and Ṁ = C + C^T (C Christoffel-consistent: the skew symmetry of
Ṁ - 2C, eq. 9.87), ṗ = Ṁ q̇ + M q̈ = τ + τ_ext + C^T q̇ - g. In the base frame {0}, with S_i the screw
axis of joint i, V_k body k's twist and G_k its spatial inertia there:

    p_i = S_i^T h_i,    h_i = Σ_{k in subtree(i)} G_k V_k                 (composite momentum)
    ṗ_i = Ṡ_i^T h_i + S_i^T ḣ_i

and along q̈ = 0, ḣ_i sums the bodies' G_k dV_k/dt - [ad_{V_k}]^T G_k V_k (eq. 9.56 with q̈ = 0), so
S_i^T ḣ_i = (C q̇)_i and therefore

    (C^T q̇)_i = Ṡ_i^T h_i = ([ad_{V_i}] S_i)^T h_i        (Ṡ_i = [V_i, S_i])

In each body's own frame {i} (as rnea.py; A_i the joint screw in {i}, Ṡ_i^T h_i is frame-invariant):

  forward (base to tips), V_0 = 0, dV_0/dt = (0, -g) (gravity only: q̇ and q̈ do not enter):
    T_{λ(i),i} = T_tree,i exp([A_i] q_i)                                        (9.53)
    V_i = [Ad_{T_{i,λ(i)}}] V_λ(i) + A_i q̇_i                                    (9.54)
    dV^g_i/dt = [Ad_{T_{i,λ(i)}}] dV^g_λ(i)/dt                                  (9.55, q̇ = q̈ = 0)
  backward (tips to base):
    h_i = G_i V_i + Σ_children [Ad_{T_{c,i}}]^T h_c                             (composite momentum)
    F^g_i = G_i dV^g_i/dt + Σ_children [Ad_{T_{c,i}}]^T F^g_c                   (9.56: g's wrenches)
    p_i = A_i^T h_i
    β_i = (C^T q̇ - g)_i = ([ad_{V_i}] A_i)^T h_i - A_i^T F^g_i                  (9.57 for g)

With mimic joints (layout.py) both are projected onto the coordinates like τ (p_r = G^T p: M_r q̇_r;
β_r = G^T β: C_r^T q̇_r - g_r, with C_r = G^T C G).
"""
import numpy as np

from .kinematics import joint_transform
from .layout import (
    COL_GRAVITY,
    W_F_BODY,
    W_H_BODY,
    W_P_PARENT,
    W_R_PARENT,
    W_V_BODY,
    W_VDOT_BODY,
    body_position,
    body_rate,
    coordinate,
    has_mimic,
    inline,
    is_prismatic,
    multiplier,
    n_bodies,
    parent,
)
from .rows import row3, row6, row9, set_row3, set_row6, set_row9
from .spatial import (
    ZERO6,
    add6,
    adjoint_inverse,
    adjoint_inverse_transpose,
    axis_dot,
    body_inertia,
    inertia_times,
    neg_ad_transpose,
    plus_axis,
)


@inline
def momentum_balance(mb, w, q, qd, p, beta, with_beta):
    """p = M(q) q̇ and, when with_beta, β = C(q, q̇)^T q̇ - g(q) into p and beta (nq each), one
    recursion (module docstring); with_beta False (a constant) computes p alone (beta unused)."""
    n = n_bodies(mb)
    mimic = has_mimic(mb)
    gravity_acceleration = (0.0, 0.0, 0.0, -mb[0, COL_GRAVITY], -mb[0, COL_GRAVITY + 1],
                            -mb[0, COL_GRAVITY + 2])                                     # dV_0/dt = (0, -g)
    for i in range(n):
        R, p_parent = joint_transform(mb, i, body_position(mb, q, i, mimic))            # (9.53)
        set_row9(w, i, W_R_PARENT, R)
        set_row3(w, i, W_P_PARENT, p_parent)
        lam = parent(mb, i)
        V = ZERO6
        Vdot_lam = gravity_acceleration
        if lam >= 0:
            V = adjoint_inverse(R, p_parent, row6(w, lam, W_V_BODY))                     # (9.54)
            Vdot_lam = row6(w, lam, W_VDOT_BODY)
        V = plus_axis(is_prismatic(mb, i), V, body_rate(mb, qd, i, mimic))
        set_row6(w, i, W_V_BODY, V)
        G = body_inertia(mb, i)
        set_row6(w, i, W_H_BODY, inertia_times(G, V))                                     # G_i V_i
        if with_beta:
            Vdot = adjoint_inverse(R, p_parent, Vdot_lam)                                 # (9.55), g only
            set_row6(w, i, W_VDOT_BODY, Vdot)
            set_row6(w, i, W_F_BODY, inertia_times(G, Vdot))                              # G_i dV^g_i/dt
    if mimic:                   # p_r = G^T p and β_r = G^T β are accumulated
        for c in range(p.shape[0]):
            p[c] = 0.0
            if with_beta:
                beta[c] = 0.0
    for i in range(n - 1, -1, -1):
        prismatic = is_prismatic(mb, i)
        h = row6(w, i, W_H_BODY)
        p_i = axis_dot(prismatic, h)                                                      # A_i^T h_i
        if mimic:
            p[coordinate(mb, i)] += multiplier(mb, i) * p_i                                # G^T
        else:
            p[i] = p_i
        lam = parent(mb, i)
        R, p_parent = row9(w, i, W_R_PARENT), row3(w, i, W_P_PARENT)
        if lam >= 0:
            h_lam = add6(row6(w, lam, W_H_BODY), adjoint_inverse_transpose(R, p_parent, h))  # h_λ += Ad^T h_i
            set_row6(w, lam, W_H_BODY, h_lam)
        if with_beta:
            F = row6(w, i, W_F_BODY)
            # ([ad_V] A)^T h - A^T F = -A^T (-[ad_V]^T h + F)
            beta_i = -axis_dot(prismatic, add6(neg_ad_transpose(row6(w, i, W_V_BODY), h), F))
            if mimic:
                beta[coordinate(mb, i)] += multiplier(mb, i) * beta_i
            else:
                beta[i] = beta_i
            if lam >= 0:
                F_lam = add6(row6(w, lam, W_F_BODY), adjoint_inverse_transpose(R, p_parent, F))
                set_row6(w, lam, W_F_BODY, F_lam)


@inline
def observer_step(mb, w, q, qd, tau, dt, gain, viscous, coulomb, state, r):
    """One sample of the generalized-momentum observer (MomentumObserver): r ← the estimate of τ_ext
    at (q, q̇), with τ the torque applied over the last dt (held), gain K (nq,). Returns False, and
    changes neither r nor state's rows 0-1, when the result is not finite (an overflow).

    state rows: 0 the integral z = p(0) + ∫ (τ + β + r) ds, 1 β at the previous sample (β includes
    -τ_f, the friction torque F_v q̇ + F_s sgn(q̇)); 2 p, 3 β and 4 r at this sample (scratch). The
    integral: τ held over the step, β by the trapezoid rule, and r by the trapezoid rule too, which
    makes the update implicit in r_k and, solved for it, Tustin's discretisation of ṙ = K (τ_ext - r):

        A = p_k - (z_{k-1} + dt τ + dt/2 (β_{k-1} + β_k) + dt/2 r_{k-1})
        r_k = K A / (1 + K dt/2)              (= K (p_k - z_k))
        z_k = z_{k-1} + dt τ + dt/2 (β_{k-1} + β_k) + dt/2 (r_{k-1} + r_k)
    """
    z, beta_previous, p, beta, r_new = state[0], state[1], state[2], state[3], state[4]
    momentum_balance(mb, w, q, qd, p, beta, True)
    finite = True
    for c in range(p.shape[0]):
        beta[c] -= viscous[c] * qd[c] + coulomb[c] * np.sign(qd[c])                      # - τ_f
        increment = dt * tau[c] + 0.5 * dt * (beta_previous[c] + beta[c])
        r_new[c] = gain[c] * (p[c] - (z[c] + increment + 0.5 * dt * r[c])) / (1.0 + 0.5 * dt * gain[c])
        p[c] = increment                                                                 # kept for the commit
        finite = finite and np.isfinite(r_new[c]) and np.isfinite(increment)
    if not finite:
        return False
    for c in range(p.shape[0]):
        z[c] += p[c] + 0.5 * dt * (r[c] + r_new[c])
        beta_previous[c] = beta[c]
        r[c] = r_new[c]
    return True


@inline
def observer_reset(mb, w, q, qd, viscous, coulomb, state, r):
    """Start the observer at (q, q̇): z = p(0) = M(q) q̇, β_previous = β(q, q̇) (state rows 0, 1),
    r = 0."""
    z, beta_previous = state[0], state[1]
    momentum_balance(mb, w, q, qd, z, beta_previous, True)
    for c in range(z.shape[0]):
        beta_previous[c] -= viscous[c] * qd[c] + coulomb[c] * np.sign(qd[c])
        r[c] = 0.0
