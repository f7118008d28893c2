"""Task-space computed torque: the operational-space law on the task-space dynamics F = Λ V̇ + η
(eqs. 9.97-9.99), in the body frame {b} of a frame on the robot, angular first.

    T = T_sb(q),  T_bd = T⁻¹ T_des,  X_e = log(T_bd)          (the error twist, in {b})
    V_b = J_b q̇,  V_d,b = [Ad_{T_bd}] V_des                   (V_des in the desired frame's own coordinates)
    V_e = V_d,b − V_b
    a = d/dt(V_d,b) + K_p X_e + K_d V_e,   d/dt(V_d,b) = [Ad_{T_bd}] V̇_des + [ad_{V_d,b}] V_b
    F = Λ_b a + η_b                                             (eqs. 9.98-9.99, body Jacobian)
    τ = J_bᵀ F + (1 − J_bᵀ J̄ᵀ)(τ₀ + c + g),   J̄ = M⁻¹ J_bᵀ Λ_b (dynamically consistent)
    τ₀ = M (K_p0 (q₀ − q) − K_d0 q̇)                            (the posture; 0 without q₀)

d/dt(V_d,b): with T_bd = T_sb⁻¹ T_sd, Ṫ_bd = −[V_b] T_bd + T_bd [V_des], so d/dt [Ad_{T_bd}] =
[Ad_{T_bd}][ad_{V_des}] − [ad_{V_b}][Ad_{T_bd}], and [ad_{V_des}] V_des = 0.

With damping = 0 the closed loop satisfies J_b q̈ + J̇_b q̇ = a exactly: M q̈ + c + g = τ gives
J_b q̈ = Λ⁻¹ F − J_b M⁻¹ (c + g) + J_b M⁻¹ (1 − J_bᵀ J̄ᵀ)(…) = a + Λ⁻¹ η − J_b M⁻¹ (c + g) = a − J̇_b q̇,
because J_b M⁻¹ (1 − J_bᵀ J̄ᵀ) = 0: nothing projected into the null space changes a task
acceleration. There, the bias c + g is compensated along with the posture torque, so that a
redundant arm's self-motion (an elbow) neither falls under gravity nor drifts: the null-space
motion is q̈ = (1 − J̄ J_b)(K_p0 (q₀ − q) − K_d0 q̇) (a non-redundant arm has none).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .all_terms import _term_arrays
from .kernels import entries as _k, state_terms as _state_terms
from .model import Data, Model
from .spatial import rigid_transform


def task_space_control(model: Model, q: ArrayLike, qd: ArrayLike, T_des: ArrayLike,
                       V_des: ArrayLike | None = None, Vdot_des: ArrayLike | None = None,
                       kp: ArrayLike = 100.0, kd: ArrayLike = 20.0, frame: str | None = None,
                       nullspace_q: ArrayLike | None = None, nullspace_kp: ArrayLike = 0.0,
                       nullspace_kd: ArrayLike | None = None, damping: float = 0.0,
                       data: Data | None = None) -> np.ndarray:
    """τ (n,) in N·m (N) of the task-space computed-torque law (module docstring) that drives the body
    frame {b} of `frame` (default model.tip_frame) to the pose T_des (4, 4; in the root frame, m).

    V_des, Vdot_des: the desired twist (rad/s, m/s) and its derivative, angular first, in the desired
    frame's own coordinates (None = 0). kp (1/s²), kd (1/s): a scalar, 6 values (angular first) or a
    6×6 matrix. nullspace_q: the posture q₀ (n,) held in the null space with nullspace_kp (1/s²) and
    nullspace_kd (1/s; default 2√kp), scalars or (n,); None = no posture. damping: added to J M⁻¹ Jᵀ
    before inverting it, as in task_space_inertia; with damping = 0, fewer than six joints moving the
    frame or a singular J_b raise a ValueError that asks for damping > 0.

    With damping = 0 the closed loop satisfies J_b q̈ + J̇_b q̇ = a exactly, and the posture torque
    changes no task acceleration.
    """
    # Fast path: float gains and float64 arrays go to the kernel as they are; it checks sizes,
    # finiteness, that T_des is rigid and the null-space gains >= 0, and raises otherwise. The error
    # path then checks each argument again, to say which one is wrong.
    n = model.nq
    buf = _checks.buffer(model, data)
    arrays = _control_arrays(model, data)
    posture = nullspace_q is not None
    try:
        Kp, Kd = _task_gain(kp), _task_gain(kd)
        if posture:
            kp0 = _joint_gain(n, nullspace_kp)
            kd0 = (2.0 * np.sqrt(np.maximum(kp0, 0.0)) if nullspace_kd is None    # (kp0 < 0: the kernel
                   else _joint_gain(n, nullspace_kd))                              # refuses it)
        else:
            nullspace_q, kp0, kd0 = q, _ZERO6[:0], _ZERO6[:0]
        if damping.__class__ is not float or not 0.0 <= damping < np.inf:
            damping = _checks.scalar(damping, "damping", minimum=0.0)
        frame_index = model.frame_index(model.tip_frame if frame is None else frame)
        tau = np.empty(n)
        status = _k.task_space_control(buf, q, qd, frame_index, damping, T_des,
                                       _ZERO6 if V_des is None else V_des,
                                       _ZERO6 if Vdot_des is None else Vdot_des, Kp, Kd, posture, nullspace_q,
                                       kp0, kd0, tau, *arrays)
    except _checks.KERNEL_ERRORS as error:
        return _checked_call(model, error, q, qd, T_des, V_des, Vdot_des, kp, kd, frame,
                             nullspace_q if posture else None, nullspace_kp, nullspace_kd, damping, data)
    if status == _state_terms.STATUS_M_NOT_POSITIVE_DEFINITE:
        raise ValueError(_k.NOT_POSITIVE_DEFINITE)
    if status == _state_terms.STATUS_TASK_SPACE_SINGULAR:
        raise ValueError(_k.SINGULAR_TASK_SPACE)
    return tau


def pose_error(model: Model, q: ArrayLike, T_des: ArrayLike, frame: str | None = None,
               data: Data | None = None) -> np.ndarray:
    """X_e = log(T_sb(q)⁻¹ T_des) (6,), angular first (rad, m): the twist that takes the body frame {b}
    of `frame` (default model.tip_frame) to the desired pose T_des (4, 4; in the root frame) in unit
    time, in {b}'s coordinates: the pose error task_space_control drives to zero (MatrixLog6, eqs.
    3.91-3.92). One compiled call (forward kinematics, then the logarithm)."""
    X = np.empty(6)
    try:
        frame_index = model.frame_index(model.tip_frame if frame is None else frame)
        _k.pose_error(_checks.buffer(model, data), q, frame_index, T_des, X, np.empty((4, 4)))
    except _checks.KERNEL_ERRORS as error:
        T_checked = rigid_transform(T_des, "T_des")
        q_checked = _checks.vector(model, q, "q")
        model.frame_index(model.tip_frame if frame is None else frame)
        if q_checked is q and T_checked is T_des:
            raise error
        return pose_error(model, q_checked, T_checked, frame, data)
    return X


def _checked_call(model, error, q, qd, T_des, V_des, Vdot_des, kp, kd, frame, nullspace_q, nullspace_kp,
                  nullspace_kd, damping, data):
    """The error path of task_space_control: every argument checked and converted (a ValueError naming
    the first wrong one), then the call again; when none had to change, `error` again (it was not the
    input's: an unknown frame, a Data of another model, an overflow)."""
    checked = (rigid_transform(T_des, "T_des"), _checked_task_gain(kp, "kp"),
               _checked_task_gain(kd, "kd"))
    if nullspace_q is not None:
        checked += (_checked_joint_gain(model, nullspace_kp, "nullspace_kp"), None if nullspace_kd is None
                    else _checked_joint_gain(model, nullspace_kd, "nullspace_kd"))
    else:
        checked += (nullspace_kp, nullspace_kd)
    damping = _checks.scalar(damping, "damping", minimum=0.0)
    model.frame_index(model.tip_frame if frame is None else frame)     # (a ValueError naming it)
    specs = ((q, "q"), (qd, "qd"), (_ZERO6 if V_des is None else V_des, "V_des", 6),
             (_ZERO6 if Vdot_des is None else Vdot_des, "Vdot_des", 6)) + (
             ((nullspace_q, "nullspace_q"),) if nullspace_q is not None else ())
    vectors = tuple(_checks.vector(model, *spec) for spec in specs)
    if (all(v is spec[0] for v, spec in zip(vectors, specs))
            and all(c is x for c, x in zip(checked, (T_des, kp, kd, nullspace_kp, nullspace_kd)))):
        raise error
    q, qd, V_des, Vdot_des = vectors[:4]
    T_des, Kp, Kd, nullspace_kp, nullspace_kd = checked
    return task_space_control(model, q, qd, T_des, V_des, Vdot_des, Kp, Kd, frame,
                              vectors[4] if nullspace_q is not None else None, nullspace_kp, nullspace_kd,
                              damping, data)


def _control_arrays(model, data):
    """The kernel's intermediate arrays (all_terms' M, c, g, J, Λ, η, T, scratch and a (6, max(n, 6))
    scratch), kept in `data` (default: the model's Data) and refilled by every call: they are never
    returned, and a call holds the GIL throughout (Data's docstring)."""
    data = _checks.workspace(model, data)
    arrays = data.control_arrays
    if arrays is None:
        arrays = _term_arrays(model.nq) + (np.empty((6, max(model.nq, 6))),)
        object.__setattr__(data, "control_arrays", arrays)
    return arrays


_ZERO6 = np.zeros(6)
_EYE6 = np.eye(6)


def _task_gain(k):
    """A task-space gain as the 6x6 matrix K the kernel takes, unchecked (the kernel checks it): a float
    (k 1), 6 float64 values (their diagonal) or a 6x6 float64 array; other forms through the checks."""
    if k.__class__ is float:
        return k * _EYE6
    if k.__class__ is np.ndarray and k.dtype == np.float64 and k.shape in ((6,), (6, 6)):
        return np.diag(k) if k.ndim == 1 else k
    raise TypeError("a task-space gain to be checked")


def _checked_task_gain(k, name):
    """A task-space gain as the 6x6 matrix K (C order): a scalar (k 1), 6 values (diag, angular first)
    or a 6x6 matrix; a ValueError naming it otherwise."""
    k = _checks.real_array(k, name, "a number, 6 numbers or a 6x6 matrix")
    if k.shape not in ((), (6,), (6, 6)) or not np.isfinite(k).all():
        raise ValueError(f"{name} must be a finite number, 6 numbers (angular first) or a 6x6 matrix, "
                         f"got shape {k.shape}")
    if k.ndim == 2:
        return _checks._kernel_ready(k)
    return np.diag(np.broadcast_to(k, (6,)).astype(np.float64))


def _joint_gain(n, k):
    """A null-space gain as the (n,) vector the kernel takes, unchecked (the kernel checks it)."""
    if k.__class__ is float:
        return np.full(n, k)
    if k.__class__ is np.ndarray and k.dtype == np.float64 and k.shape == (n,):
        return k
    raise TypeError("a null-space gain to be checked")


def _checked_joint_gain(model, k, name):
    """A null-space gain: a number >= 0 or one per joint, as an (n,) array; a ValueError naming it
    otherwise."""
    k = _checks.real_array(k, name, f"a number or a vector of length {model.nq}")
    k = _checks.vector(model, np.full(model.nq, k) if k.ndim == 0 else k, name)
    if np.any(k < 0.0):
        raise ValueError(f"{name} must be >= 0")
    return k
