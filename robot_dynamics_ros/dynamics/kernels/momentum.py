"""The generalized momentum p = M(q) q̇ and its balance, ṗ = τ + τ_ext + C(q, q̇)^T q̇ - g(q): what a
momentum observer needs at each sample, from two RNEA passes, without forming M or C.

With M q̈ + C q̇ + g = τ + τ_ext and Ṁ = C + C^T (C Christoffel-consistent: the skew symmetry of
Ṁ - 2C, eq. 9.87), ṗ = Ṁ q̇ + M q̈ = τ + τ_ext + C^T q̇ - g. In the base frame {0}, with S_i the screw
axis of joint i, V_k body k's twist and G_k its spatial inertia there:

    p_i = S_i^T h_i,    h_i = Σ_{k in subtree(i)} G_k V_k                 (composite momentum)
    ṗ_i = Ṡ_i^T h_i + S_i^T ḣ_i

and along q̈ = 0, ḣ_i sums the bodies' G_k dV_k/dt - [ad_{V_k}]^T G_k V_k (eq. 9.56 with q̈ = 0), so
S_i^T ḣ_i = (C q̇)_i and therefore

    (C^T q̇)_i = Ṡ_i^T h_i = ([ad_{V_i}] S_i)^T h_i = ([ad_{V_i}] A_i)^T h_i      (Ṡ_i = [V_i, S_i])

the last form in body i's own frame {i} (A_i the joint screw there; the product is frame-invariant).
RNEA (rnea.py) computes every piece. Run with q̇ = 0 and q̈ = q̇ and no gravity, its acceleration
recursion (9.55) becomes the twist recursion (9.54), so its dV_i/dt column holds V_i, its wrench F_i
(9.56) is G_i V_i plus the children's: h_i, and its τ_i = A_i^T h_i (9.57) is p_i. Run with
q̇ = q̈ = 0, it gives g(q). So

    β = C^T q̇ - g:   β ← -RNEA(q, 0, 0, gravity);   p ← RNEA(q, 0, q̇, no gravity);
                     β_i += ([ad_{V_i}] A_i)^T h_i = -A_i^T (-[ad_{V_i}]^T h_i)

With mimic joints (layout.py) both are projected onto the coordinates like τ (p_r = G^T p: M_r q̇_r;
β_r = G^T β: C_r^T q̇_r - g_r, with C_r = G^T C G).
"""
import numpy as np

from .jit import inline
from .layout import W_F_BODY, W_VDOT_BODY, coordinate, has_mimic, is_prismatic, multiplier, n_bodies
from .rnea import rnea
from .rows import row6
from .spatial_algebra import axis_dot, neg_ad_transpose
from .time_step import friction_torque


@inline
def momentum_balance(mb, w, q, qd, p, beta, with_beta):
    """p = M(q) q̇ and, when with_beta, β = C(q, q̇)^T q̇ - g(q) into p and beta (nq each), from two
    RNEA passes (module docstring); with_beta False (a constant) computes p alone (beta unused)."""
    if with_beta:
        rnea(mb, w, q, q, q, False, False, True, -1, q, beta, False)                   # β = g(q)
        for c in range(beta.shape[0]):
            beta[c] = -beta[c]                                                            # β = -g
    # p = M q̇ (the joint poses are those of this q): V_i in the dV/dt column, h_i in the wrench column
    rnea(mb, w, q, qd, qd, False, True, False, -1, q, p, with_beta)
    if with_beta:
        mimic = has_mimic(mb)
        for i in range(n_bodies(mb)):
            V, h = row6(w, i, W_VDOT_BODY), row6(w, i, W_F_BODY)
            ct_i = -axis_dot(is_prismatic(mb, i), neg_ad_transpose(V, h))                 # ([ad_V] A)^T h
            if mimic:
                beta[coordinate(mb, i)] += multiplier(mb, i) * ct_i                       # G^T
            else:
                beta[i] += ct_i


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
        beta[c] -= friction_torque(viscous, coulomb, qd, c)                              # - τ_f
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
        beta_previous[c] -= friction_torque(viscous, coulomb, qd, c)
        r[c] = 0.0
