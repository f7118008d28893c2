"""Entry points of frames: poses, Jacobians and their derivatives, the task-space inertia, all terms of one
state, the task-space control law, the pose error and the matrix logarithm of a rigid transform."""
import numpy as np
from numba import types

from ..crba import crba as composite_rigid_body
from ..frame_jacobians import jacobian as frame_jacobian, jacobian_derivative as frame_jacobian_derivative
from ..kinematics import (
    body_poses_in_base,
    frame_pose as pose_of_frame,
    urdf_body_poses,
)
from ..layout import (
    all_finite,
    check_state,
    check_vector,
    n_bodies,
    n_coordinates,
    non_negative,
)
from ..linalg import cholesky_in_place, task_space_inertia_from_cholesky
from ..spatial_algebra import is_rigid_transform, log_transform as matrix_log
from ..state_terms import STATUS_OK, all_terms as all_terms_of_state
from ..task_space_law import relative_pose, task_space_control as task_space_law
from .declare import (
    NOT_POSITIVE_DEFINITE,
    OVERFLOW_DJ,
    OVERFLOW_J,
    OVERFLOW_LAMBDA,
    OVERFLOW_LOG,
    OVERFLOW_POSE,
    OVERFLOW_POSE_ERROR,
    OVERFLOW_TASK_CONTROL,
    OVERFLOW_TERMS,
    SINGULAR_TASK_SPACE,
    _entry,
)
from .signatures import _D, _F, _I, _M, _MI, _V, _VI


# ---- kinematics, Jacobians (kinematics.py, jacobians.py) -------------------------------------------------
@_entry(types.none(_D, _VI, _I, _M))
def frame_pose(d, q, frame, T):
    """T_{0f} (4 x 4)."""
    check_vector(d, q, n_coordinates(d))
    body_poses_in_base(d, d, q)
    pose_of_frame(d, d, frame, T)
    if not all_finite(T):
        raise ValueError(OVERFLOW_POSE)


@_entry(types.float64[:, :, ::1](_D, _VI), allocates=True)
def body_poses(d, q):
    """The pose in {0} of every body's URDF frame, (n bodies, 4, 4)."""
    n = n_bodies(d)
    check_vector(d, q, n_coordinates(d))
    T = np.empty((n, 4, 4))
    urdf_body_poses(d, d, q, T)
    if not all_finite(T):
        raise ValueError(OVERFLOW_POSE)
    return T


@_entry(types.none(_D, _VI, _I, _I, _M), allocates=True)
def jacobian(d, q, frame, reference, J):
    """J (6 x n) of a frame in a reference (kinematics.REF_*)."""
    check_vector(d, q, n_coordinates(d))
    frame_jacobian(d, d, q, frame, reference, np.empty((4, 4)), J)
    if not all_finite(J):
        raise ValueError(OVERFLOW_J)


@_entry(types.none(_D, _VI, _VI, _I, _I, _M), allocates=True)
def jacobian_derivative(d, q, qd, frame, reference, dJ):
    """dJ/dt (6 x n) of a frame in a reference."""
    check_state(d, q, qd)
    frame_jacobian_derivative(d, d, q, qd, frame, reference, np.empty((4, 4)), dJ)
    if not all_finite(dJ):
        raise ValueError(OVERFLOW_DJ)


# ---- task space (linalg.py, all_terms.py) --------------------------------------------------------------
@_entry(types.none(_D, _VI, _I, _I, _F, _M), allocates=True)
def task_space_inertia(d, q, frame, reference, damping, Lam):
    """Λ = (J M^-1 J^T + damping 1)^-1 (eq. 9.98 when J is square and invertible)."""
    n = n_coordinates(d)
    check_vector(d, q, n)
    L = np.empty((n, n))
    composite_rigid_body(d, d, q, L)
    J = np.empty((6, n))
    frame_jacobian(d, d, q, frame, reference, np.empty((4, 4)), J, poses_known=True)
    if not (all_finite(L) and all_finite(J)):      # before the factorisations: NaN is no pivot
        raise ValueError(OVERFLOW_LAMBDA)
    if not cholesky_in_place(L, n):
        raise ValueError(NOT_POSITIVE_DEFINITE)
    if not task_space_inertia_from_cholesky(L, n, J, damping, np.empty((n, 6)), np.empty((6, 6)), np.empty(6),
                                            Lam):
        raise ValueError(SINGULAR_TASK_SPACE)
    if not all_finite(Lam):
        raise ValueError(OVERFLOW_LAMBDA)


@_entry(_I(_D, _VI, _VI, _I, _I, _F, _M, _V, _V, _M, _M, _V, _M, _M))
def all_terms(d, q, qd, frame, reference, damping, M, c, g, J, Lam, eta, T, scratch):
    """M, c, g and (frame >= 0) J, Λ, η, T_{0f} of one state; returns all_terms.STATUS_*."""
    check_state(d, q, qd)
    status = all_terms_of_state(d, d, q, qd, frame, reference, damping, M, c, g, J, Lam, eta, T, scratch)
    # NaN fails the factorisations too: an overflow is reported as one, whatever the status says.
    if not (all_finite(M) and all_finite(c) and all_finite(g)):
        raise ValueError(OVERFLOW_TERMS)
    if frame >= 0 and not (all_finite(J) and all_finite(T)
                           and (status != STATUS_OK or (all_finite(Lam) and all_finite(eta)))):
        raise ValueError(OVERFLOW_TERMS)
    return status


# ---- task-space control (task_space_control.py) ------------------------------------------------------
@_entry(_I(_D, _VI, _VI, _I, _F, _MI, _VI, _VI, _MI, _MI, types.boolean, _VI, _VI, _VI, _V, _M, _V, _V, _M,
           _M, _V, _M, _M, _M))
def task_space_control(d, q, qd, frame, damping, T_des, V_des, Vdot_des, Kp, Kd, posture, q0, kp0, kd0,
                       tau, M, c, g, J, Lam, eta, T, scratch, work):
    """τ of the task-space law; returns all_terms.STATUS_* (tau unset unless STATUS_OK)."""
    n = check_state(d, q, qd)
    check_vector(d, V_des, 6)
    check_vector(d, Vdot_des, 6)
    if posture:
        check_vector(d, q0, n)
        check_vector(d, kp0, n)
        check_vector(d, kd0, n)
    if not (T_des.shape == (4, 4) and Kp.shape == (6, 6) and Kd.shape == (6, 6) and all_finite(T_des)
            and all_finite(Kp) and all_finite(Kd) and is_rigid_transform(T_des) and non_negative(kp0)
            and non_negative(kd0)):
        raise ValueError("invalid task-space target or gains")
    status = task_space_law(d, d, q, qd, frame, damping, T_des, V_des, Vdot_des, Kp, Kd, posture, q0, kp0,
                            kd0, tau, M, c, g, J, Lam, eta, T, scratch, work)
    if status == STATUS_OK and not all_finite(tau):
        raise ValueError(OVERFLOW_TASK_CONTROL)
    return status


@_entry(types.none(_D, _VI, _I, _MI, _V, _M))
def pose_error(d, q, frame, T_des, X, T):
    """X (6) = log(T_0f(q)^-1 T_des), the frame's pose error in its body coordinates; T: its pose."""
    check_vector(d, q, n_coordinates(d))
    if not (T_des.shape == (4, 4) and all_finite(T_des) and is_rigid_transform(T_des)):
        raise ValueError("invalid task-space target")
    body_poses_in_base(d, d, q)
    pose_of_frame(d, d, frame, T)
    if not all_finite(T):
        raise ValueError(OVERFLOW_POSE)
    R_bd, p_bd = relative_pose(T, T_des)
    X_e = matrix_log(R_bd, p_bd)
    for i in range(6):
        X[i] = X_e[i]
    if not all_finite(X):
        raise ValueError(OVERFLOW_POSE_ERROR)



# ---- the matrix logarithm of a rigid transform (spatial.py) ------------------------------------------
@_entry(types.none(_MI, _V))
def log_transform(T, X):
    """X (6) = S θ with e^{[S] θ} = T (4 x 4 rigid transform); ValueError when T is not one."""
    if not (T.shape == (4, 4) and X.shape[0] == 6 and all_finite(T) and is_rigid_transform(T)):
        raise ValueError("invalid rigid transform")
    R = (T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2])
    S = matrix_log(R, (T[0, 3], T[1, 3], T[2, 3]))
    for i in range(6):
        X[i] = S[i]
    if not all_finite(X):
        raise ValueError(OVERFLOW_LOG)
