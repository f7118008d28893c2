"""One integration step of the forward dynamics (the textbook's EulerStep, §9.3) and friction.

    friction torques  τ_f = F_v q̇ + F_s sgn(q̇)  (viscous and Coulomb; the Lagrangian notes)
    q̈ = FD(q, q̇, τ - τ_f)   by the articulated-body algorithm (aba.py); with mimic joints by
                           M_r q̈ = τ - τ_f - b (crba.py, rnea.py, a Cholesky solve: fd_mimic)
    Euler:            q' = q + dt q̇,   q̇' = q̇ + dt q̈
    semi-implicit:    q̇' = q̇ + dt q̈,   q' = q + dt q̇'
    RK4:              the classical fourth-order Runge-Kutta on x = (q, q̇), ẋ = (q̇, q̈), τ held over dt
    trajectory:       (q_0, q̇_0) given, (q_k+1, q̇_k+1) = step(q_k, q̇_k, τ_k) for k = 0..steps-1
                      (the textbook's ForwardDynamicsTrajectory), one rollout of simulate / simulate_batch
"""
import numpy as np

from .aba import aba
from .crba import crba
from .jit import inline, subroutine
from .layout import W_MIMIC_M, all_finite, has_mimic, n_coordinates
from .linalg import cholesky_in_place, cholesky_solve_in_place
from .rnea import rnea

METHOD_EULER = 0
METHOD_SEMI_IMPLICIT = 1
METHOD_RK4 = 2

FD_OK = 0
FD_OVERFLOW = 1
FD_NOT_POSITIVE_DEFINITE = 2


@inline
def friction_torque(viscous, coulomb, qd, i):
    """τ_f,i = F_v,i q̇_i + F_s,i sgn(q̇_i): coordinate i's viscous and Coulomb friction torque."""
    return viscous[i] * qd[i] + coulomb[i] * np.sign(qd[i])


@subroutine
def fd_mimic(mb, w, q, qd, tau, frame, f_tip, qdd):
    """q̈ = M_r^-1 (τ - b_r - J_r^T F_tip) into qdd for a model with mimic joints (the articulated-body
    algorithm assumes one coordinate per body): M_r = G^T M G by CRBA into the workspace's W_MIMIC_M
    columns, b_r by RNEA into qdd, then a Cholesky solve in place. Returns FD_OK, FD_OVERFLOW (M_r or
    τ - b_r not finite: qdd is then NaN) or FD_NOT_POSITIVE_DEFINITE (qdd garbage). A called function,
    not inlined: the forward-dynamics entries and the integrators carry it for mimic models only."""
    n = n_coordinates(mb)
    L = w[0:n, W_MIMIC_M:W_MIMIC_M + n]
    crba(mb, w, q, L)
    rnea(mb, w, q, qd, qd, True, False, True, frame, f_tip, qdd, True)
    finite = True
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
        finite = finite and np.isfinite(qdd[i])
    for i in range(n):
        for k in range(i + 1):
            finite = finite and np.isfinite(L[i, k])
    if not finite:                                  # NaN is no pivot: checked before the factorisation
        for i in range(n):
            qdd[i] = np.nan
        return FD_OVERFLOW
    if not cholesky_in_place(L, n):
        return FD_NOT_POSITIVE_DEFINITE
    cholesky_solve_in_place(L, n, qdd)
    return FD_OK


@subroutine
def joint_acceleration(mb, w, q, qd, tau, frame, f_tip, viscous, coulomb, tau_net, qdd):
    """q̈ = FD(q, q̇, τ - F_v q̇ - F_s sgn(q̇)) into qdd; tau_net (n,) is scratch. A called function,
    not inlined: an RK4 step calls it four times. With mimic joints, a failed solve (M_r not positive
    definite, an overflow) gives NaN, which the step's check reports."""
    for i in range(tau.shape[0]):
        tau_net[i] = tau[i] - friction_torque(viscous, coulomb, qd, i)
    if has_mimic(mb):
        if fd_mimic(mb, w, q, qd, tau_net, frame, f_tip, qdd) != FD_OK:
            for i in range(qdd.shape[0]):
                qdd[i] = np.nan
        return
    aba(mb, w, q, qd, tau_net, frame, f_tip, qdd)


@subroutine
def step(mb, w, q, qd, tau, dt, method, frame, f_tip, viscous, coulomb, q_next, qd_next, s):
    """One step of (q, q̇) under τ held constant over dt into (q_next, qd_next); s: scratch (8, n)."""
    n = q.shape[0]
    k1, q_stage, qd_stage = s[0], s[1], s[2]
    for i in range(n):      # every stage passes scratch rows: one compiled joint_acceleration
        q_stage[i] = q[i]
        qd_stage[i] = qd[i]
    joint_acceleration(mb, w, q_stage, qd_stage, tau, frame, f_tip, viscous, coulomb, s[7], k1)
    if method == METHOD_EULER:
        for i in range(n):
            q_next[i] = q[i] + dt * qd[i]
            qd_next[i] = qd[i] + dt * k1[i]
        return
    if method == METHOD_SEMI_IMPLICIT:
        for i in range(n):
            qd_next[i] = qd[i] + dt * k1[i]
            q_next[i] = q[i] + dt * qd_next[i]
        return
    k2, k3, k4 = s[3], s[4], s[5]
    v2, v3 = s[6], q_next   # q_next is free until the end: it holds v3
    for i in range(n):
        q_stage[i] = q[i] + 0.5 * dt * qd[i]
        qd_stage[i] = qd[i] + 0.5 * dt * k1[i]
    joint_acceleration(mb, w, q_stage, qd_stage, tau, frame, f_tip, viscous, coulomb, s[7], k2)
    for i in range(n):
        v2[i] = qd_stage[i]
        q_stage[i] = q[i] + 0.5 * dt * v2[i]
        qd_stage[i] = qd[i] + 0.5 * dt * k2[i]
    joint_acceleration(mb, w, q_stage, qd_stage, tau, frame, f_tip, viscous, coulomb, s[7], k3)
    for i in range(n):
        v3[i] = qd_stage[i]
        q_stage[i] = q[i] + dt * v3[i]
        qd_stage[i] = qd[i] + dt * k3[i]
    joint_acceleration(mb, w, q_stage, qd_stage, tau, frame, f_tip, viscous, coulomb, s[7], k4)
    for i in range(n):
        v4 = qd_stage[i]
        q_next[i] = q[i] + dt / 6.0 * (qd[i] + 2.0 * v2[i] + 2.0 * v3[i] + v4)
        qd_next[i] = qd[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@inline
def trajectory(mb, w, q0, qd0, tau, dt, method, frame, f_tip, viscous, coulomb, q, qd, s):
    """One rollout: q[0], q̇[0] = q0, q̇0, then (q[k+1], q̇[k+1]) = step(q[k], q̇[k], τ[k]) for
    k = 0..steps-1 (τ[k] held over step k) into q, qd (steps + 1, n); s: scratch (8, n). Returns True,
    or False at the first step whose state is not finite (the rows after it are left unwritten): the
    one loop of simulate and of each rollout of simulate_batch (entries/stepping.py)."""
    n = q0.shape[0]
    for i in range(n):
        q[0, i] = q0[i]
        qd[0, i] = qd0[i]
    for k in range(tau.shape[0]):
        step(mb, w, q[k], qd[k], tau[k], dt, method, frame, f_tip, viscous, coulomb, q[k + 1], qd[k + 1], s)
        if not (all_finite(q[k + 1]) and all_finite(qd[k + 1])):     # stop at the first divergent step
            return False
    return True
