"""Task-space computed torque (the dynamics.task_space_control law) in one compiled pass: the terms of
all_terms.py at the frame in body coordinates, then, with M = L L^T from that pass,

    T_bd = T^-1 T_des,  X_e = log(T_bd),  V_b = J_b q̇,  V_d,b = [Ad_{T_bd}] V_des
    a = [Ad_{T_bd}] V̇_des + [ad_{V_d,b}] V_b + K_p X_e + K_d (V_d,b - V_b)
    F = Λ_b a + η_b                                                             (eqs. 9.98-9.99)
    τ₀ = c + g (+ M (K_p0 (q₀ - q) - K_d0 q̇) with a posture)
    τ = J_b^T F + τ₀ - J_b^T Λ_b J_b M^-1 τ₀                  (the null-space projection of τ₀)

(dynamics/task_space_control.py derives it and states the closed-loop identity.)
"""
from .jit import inline
from .kinematics import REF_BODY
from .layout import n_coordinates
from .linalg import cholesky_solve_in_place
from .spatial_algebra import ad, add6, adjoint, log_transform
from .state_terms import STATUS_OK, all_terms


@inline
def relative_pose(T, T_des):
    """T_bd = T^-1 T_des of two 4 x 4 poses, as (R_bd 9-tuple, p_bd 3-tuple): R_bd = R^T R_des,
    p_bd = R^T (p_des - p)."""
    R_bd = (T[0, 0] * T_des[0, 0] + T[1, 0] * T_des[1, 0] + T[2, 0] * T_des[2, 0],
            T[0, 0] * T_des[0, 1] + T[1, 0] * T_des[1, 1] + T[2, 0] * T_des[2, 1],
            T[0, 0] * T_des[0, 2] + T[1, 0] * T_des[1, 2] + T[2, 0] * T_des[2, 2],
            T[0, 1] * T_des[0, 0] + T[1, 1] * T_des[1, 0] + T[2, 1] * T_des[2, 0],
            T[0, 1] * T_des[0, 1] + T[1, 1] * T_des[1, 1] + T[2, 1] * T_des[2, 1],
            T[0, 1] * T_des[0, 2] + T[1, 1] * T_des[1, 2] + T[2, 1] * T_des[2, 2],
            T[0, 2] * T_des[0, 0] + T[1, 2] * T_des[1, 0] + T[2, 2] * T_des[2, 0],
            T[0, 2] * T_des[0, 1] + T[1, 2] * T_des[1, 1] + T[2, 2] * T_des[2, 1],
            T[0, 2] * T_des[0, 2] + T[1, 2] * T_des[1, 2] + T[2, 2] * T_des[2, 2])
    dx, dy, dz = T_des[0, 3] - T[0, 3], T_des[1, 3] - T[1, 3], T_des[2, 3] - T[2, 3]
    p_bd = (T[0, 0] * dx + T[1, 0] * dy + T[2, 0] * dz, T[0, 1] * dx + T[1, 1] * dy + T[2, 1] * dz,
            T[0, 2] * dx + T[1, 2] * dy + T[2, 2] * dz)
    return R_bd, p_bd


@inline
def commanded_acceleration(T, J, qd, n, T_des, V_des, Vdot_des, Kp, Kd, a):
    """The commanded body acceleration of the law into a (6), from the frame's pose T = T_0f and body
    Jacobian J (6 x n) at q, q̇ and the desired pose, twist and acceleration (V_des, V̇_des in {d}):

        T_bd = T^-1 T_des,  X_e = log(T_bd),  V_b = J_b q̇,  V_d,b = [Ad_{T_bd}] V_des
        a = [Ad_{T_bd}] V̇_des + [ad_{V_d,b}] V_b + K_p X_e + K_d (V_d,b - V_b)        (all in {b})
    """
    R_bd, p_bd = relative_pose(T, T_des)
    X_e = log_transform(R_bd, p_bd)
    V_b = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for k in range(n):                                                            # V_b = J_b q̇
        V_b = add6(V_b, (J[0, k] * qd[k], J[1, k] * qd[k], J[2, k] * qd[k], J[3, k] * qd[k],
                         J[4, k] * qd[k], J[5, k] * qd[k]))
    Vd_b = adjoint(R_bd, p_bd, (V_des[0], V_des[1], V_des[2], V_des[3], V_des[4], V_des[5]))
    feed = add6(adjoint(R_bd, p_bd, (Vdot_des[0], Vdot_des[1], Vdot_des[2], Vdot_des[3], Vdot_des[4],
                                     Vdot_des[5])), ad(Vd_b, V_b))                # d/dt(V_d,b)
    for r in range(6):
        s = feed[r]
        for k in range(6):
            s += Kp[r, k] * X_e[k] + Kd[r, k] * (Vd_b[k] - V_b[k])
        a[r] = s


@inline
def posture_torque(M, c, g, q, qd, n, posture, q0, kp0, kd0, tau0):
    """τ₀ = c + g (+ M (K_p0 (q₀ - q) - K_d0 q̇) with a posture: K_p0, K_d0 diagonal) into tau0 (n): the
    joint torque whose null-space part the law keeps."""
    for i in range(n):
        tau0[i] = c[i] + g[i]
    if posture:                                                   # + M (K_p0 (q0 - q) - K_d0 q̇)
        for i in range(n):
            s = 0.0
            for k in range(n):
                s += M[i, k] * (kp0[k] * (q0[k] - q[k]) - kd0[k] * qd[k])
            tau0[i] += s


@inline
def task_space_control(mb, w, q, qd, frame, damping, T_des, V_des, Vdot_des, Kp, Kd, posture, q0, kp0, kd0,
                       tau, M, c, g, J, Lam, eta, T, scratch, work):
    """τ of the law into tau (nq); M, c, g, J, Lam, eta, T, scratch: all_terms' arrays; work: scratch
    (6, max(nq, 6)). Kp, Kd: 6 x 6; posture: whether q0, kp0, kd0 (nq each) hold a posture. Returns
    all_terms' status
    (tau is unset unless it is STATUS_OK)."""
    status = all_terms(mb, w, q, qd, frame, REF_BODY, damping, M, c, g, J, Lam, eta, T, scratch)
    if status != STATUS_OK:
        return status
    n = n_coordinates(mb)
    L = scratch[0:n, 0:n]                   # all_terms leaves the Cholesky factor of M here
    a = work[0, 0:6]                       # (a, then F: scratch rows of work, which has max(n, 6) columns)
    commanded_acceleration(T, J, qd, n, T_des, V_des, Vdot_des, Kp, Kd, a)
    F = work[1, 0:6]
    for r in range(6):                                                            # F = Λ a + η
        s = eta[r]
        for k in range(6):
            s += Lam[r, k] * a[k]
        F[r] = s
    tau0 = work[2, 0:n]
    posture_torque(M, c, g, q, qd, n, posture, q0, kp0, kd0, tau0)               # τ₀
    y = work[3, 0:n]
    for i in range(n):
        y[i] = tau0[i]
    cholesky_solve_in_place(L, n, y)                                              # M^-1 τ₀
    x = work[4, 0:6]
    for r in range(6):                                                            # x = Λ J M^-1 τ₀
        s = 0.0
        for k in range(n):
            s += J[r, k] * y[k]
        x[r] = s
    z = work[5, 0:6]
    for r in range(6):
        s = 0.0
        for k in range(6):
            s += Lam[r, k] * x[k]
        z[r] = s
    for i in range(n):                                                            # J^T (F - z) + τ₀
        s = tau0[i]
        for r in range(6):
            s += J[r, i] * (F[r] - z[r])
        tau[i] = s
    return STATUS_OK
