"""The Jacobian of the matrix logarithm of a rigid transform: how the twist X = log(T) (angular first,
spatial_algebra.log_transform) moves when T moves in its own frame,

    log(T e^{[δ]}) = X + J_r^-1(X) δ + O(|δ|²),

J_r^-1 the inverse of SE(3)'s right Jacobian (Barfoot, State Estimation for Robotics, §7.1.5, with
J_r(X) = J_l(-X); there translation first, here reordered angular first). With X = (φ, ρ), θ = |φ|:

    J_r^-1(X) = [[J^-1,                 0   ],          J^-1 = 1 + ½[φ] + b [φ]²,
                 [-J^-1 Q J^-1,         J^-1]]          b = 1/θ² - (1 + cos θ) / (2θ sin θ)

    Q = -½[ρ] + c1 ([φ][ρ] + [ρ][φ] - [φ][ρ][φ]) + c2 (3[φ][ρ][φ] - [φ]²[ρ] - [ρ][φ]²)
        + c3 ([φ][ρ][φ]² + [φ]²[ρ][φ])

    c1 = (θ - sin θ)/θ³,  c2 = (θ² + 2 cos θ - 2)/(2θ⁴),  c3 = (2θ - 3 sin θ + θ cos θ)/(2θ⁵)

(Q is Barfoot's Q_l at -X), with the series of b, c1, c2, c3 near θ = 0. The frame-placement residual of
optimal control, r(q) = log(T_goal^-1 T_f(q)), has the Jacobian J_r^-1(r) J_b(q), J_b the frame's
body Jacobian (ddp.py).
"""
import numpy as np

from .jit import inline
from .spatial_algebra import compose_rotations as mul3  # A B of 3 x 3 row-major 9-tuples


@inline
def hat(a):
    """[a]: the 3 x 3 skew matrix of a 3-tuple, row-major 9-tuple."""
    return (0.0, -a[2], a[1], a[2], 0.0, -a[0], -a[1], a[0], 0.0)


@inline
def log_coefficients(theta):
    """(b, c1, c2, c3) of the module docstring at θ, by their series below θ = 1e-2."""
    t2 = theta * theta
    if theta < 1e-2:
        b = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
        c1 = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
        c2 = 1.0 / 24.0 - t2 / 720.0 + t2 * t2 / 40320.0
        c3 = 1.0 / 120.0 - t2 / 2520.0 + t2 * t2 / 120960.0
        return b, c1, c2, c3
    s, c = np.sin(theta), np.cos(theta)
    b = 1.0 / t2 - (1.0 + c) / (2.0 * theta * s)
    c1 = (theta - s) / (t2 * theta)
    c2 = (t2 + 2.0 * c - 2.0) / (2.0 * t2 * t2)
    c3 = (2.0 * theta - 3.0 * s + theta * c) / (2.0 * t2 * t2 * theta)
    return b, c1, c2, c3


@inline
def log_jacobian(X, Jlog):
    """J_r^-1(X) (module docstring) into the 6 x 6 array Jlog, X = (φ, ρ) a twist log(T), angular first."""
    phi, rho = (X[0], X[1], X[2]), (X[3], X[4], X[5])
    theta = np.sqrt(phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2])
    b, c1, c2, c3 = log_coefficients(theta)
    P, Rh = hat(phi), hat(rho)
    PP = mul3(P, P)
    PR, RP = mul3(P, Rh), mul3(Rh, P)
    PRP = mul3(PR, P)
    PPR, RPP = mul3(P, PR), mul3(RP, P)
    PRPP, PPRP = mul3(PRP, P), mul3(P, PRP)
    Jinv = (1.0 + 0.5 * P[0] + b * PP[0], 0.5 * P[1] + b * PP[1], 0.5 * P[2] + b * PP[2],
            0.5 * P[3] + b * PP[3], 1.0 + 0.5 * P[4] + b * PP[4], 0.5 * P[5] + b * PP[5],
            0.5 * P[6] + b * PP[6], 0.5 * P[7] + b * PP[7], 1.0 + 0.5 * P[8] + b * PP[8])
    for e in range(9):              # Q, held in the lower-right block until the end
        Jlog[3 + e // 3, 3 + e % 3] = (-0.5 * Rh[e] + c1 * (PR[e] + RP[e] - PRP[e])
                                       + c2 * (3.0 * PRP[e] - PPR[e] - RPP[e]) + c3 * (PRPP[e] + PPRP[e]))
    for r in range(3):              # J^-1 Q, held in the upper-right block
        for c in range(3):
            Jlog[r, 3 + c] = (Jinv[3 * r] * Jlog[3, 3 + c] + Jinv[3 * r + 1] * Jlog[4, 3 + c]
                              + Jinv[3 * r + 2] * Jlog[5, 3 + c])
    for r in range(3):              # -J^-1 Q J^-1
        for c in range(3):
            Jlog[3 + r, c] = -(Jlog[r, 3] * Jinv[c] + Jlog[r, 4] * Jinv[3 + c] + Jlog[r, 5] * Jinv[6 + c])
    for r in range(3):
        for c in range(3):
            Jlog[r, c] = Jinv[3 * r + c]
            Jlog[r, 3 + c] = 0.0
            Jlog[3 + r, 3 + c] = Jinv[3 * r + c]
