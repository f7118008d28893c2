"""Inverse-dynamics feed-forward for a trajectory that ros2_control's JointTrajectoryController will run
(ROS-free; ``trajectory_feedforward``'s node is the wiring).

Every point k of a trajectory_msgs/JointTrajectory gets the effort the arm needs there,

    τ_k = M(q_k) q̈_k + c(q_k, q̇_k) + g(q_k)  [+ F_v q̇_k + F_s sgn(q̇_k)]          (eq. 9.81, the RNEA)

less what the hardware's firmware adds to every command itself (logic/hardware.py, eq. 1), so that
JTC with an ``effort`` command interface adds it to its PID output (ros2_controllers PR #1200) and the
PID is left with the model's errors only.

**The point's velocity and acceleration** are those JTC's spline sampler gives at the point's time
(joint_trajectory_controller's ``interpolate_between_points``: linear between two points with
positions only, cubic with velocities at both ends, quintic with accelerations too), taken from the
segment that starts at the point, since that is the one JTC samples from t_k on:

- positions only (a linear segment): q̇_k = (q_{k+1} − q_k) / T_k, q̈_k = 0 — a linear segment has no
  acceleration; its velocity jumps at the points, which no effort can follow (JTC's own advice:
  send velocities);
- velocities at both ends (cubic Hermite): q̇_k as given, q̈_k = 2 (3 h − (2 v_k + v_{k+1}) T_k) / T_k²,
  h = q_{k+1} − q_k: the cubic's second derivative at its start;
- velocities and accelerations at both ends (quintic): both as given.

The **first point** is filled from the segment it starts, like the others (JTC reaches it from the arm's
current state along a segment of its own, which no point describes). The **last point** is where JTC
holds after the end: its own velocity and acceleration where given, else zero (at rest). A point's
fields that are given are used as given wherever the segment's spline uses them. Points whose efforts
are already set keep them unless ``overwrite``.

All arrays are per point k = 0..N−1, joints in the goal's order; the model's other joints (a goal for
some joints only) stand at ``q_rest`` (their measured positions), at rest.

Example (a 1-joint pendulum, positions only: linear segments):
    >>> import numpy as np
    >>> times, q = np.array([1.0, 2.0]), np.array([[0.0], [0.5]])
    >>> qd, qdd = knot_derivatives(times, q, [None, None], [None, None])
    >>> qd.ravel().tolist(), qdd.ravel().tolist()
    ([0.5, 0.0], [0.0, 0.0])
"""

import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.input_guard import BadInput, short_list

__all__ = ['knot_derivatives', 'trajectory_efforts', 'FeedforwardPlan']


def knot_derivatives(times, positions, velocities, accelerations):
    """(q̇, q̈), each (N, m): the velocity and acceleration at each point as JTC's spline sampler gives
    them at the point's time (module docstring). ``velocities``, ``accelerations``: per point None
    (the field empty) or an (m,) array, as ``nodes.conversions.joint_trajectory_arrays`` returns them.
    Segment k (from point k to k + 1) is linear, cubic or quintic by what both of its ends carry."""
    times = np.asarray(times, dtype=np.float64)
    q = np.asarray(positions, dtype=np.float64)
    N, m = q.shape
    zeros = np.zeros(m)
    has_v = np.array([v is not None for v in velocities], dtype=bool)
    has_a = np.array([a is not None for a in accelerations], dtype=bool)
    V = np.array([zeros if v is None else v for v in velocities], dtype=np.float64).reshape(N, m)
    A = np.array([zeros if a is None else a for a in accelerations], dtype=np.float64).reshape(N, m)
    T = np.diff(times)[:, None]
    h = np.diff(q, axis=0)
    cubic = (has_v[:-1] & has_v[1:])[:, None]             # velocities at both ends
    quintic = cubic & (has_a[:-1] & has_a[1:])[:, None]    # and accelerations
    qd, qdd = np.empty((N, m)), np.empty((N, m))
    qd[:-1] = np.where(cubic, V[:-1], h / T)                            # linear: the slope
    hermite = 2.0 * (3.0 * h - (2.0 * V[:-1] + V[1:]) * T) / T ** 2     # the cubic's p''(0) = 2 c2
    qdd[:-1] = np.where(quintic, A[:-1], np.where(cubic, hermite, 0.0))
    qd[-1], qdd[-1] = V[-1], A[-1]           # the last point: JTC holds it as given (else at rest)
    return qd, qdd


def trajectory_efforts(model, columns, q_rest, positions, qd, qdd, friction=False):
    """τ_k (N, m) of the module docstring, without the firmware's part, for the goal's joints
    ``columns`` (model indices, goal order); also the full (N, n) Q and Q̇ it was computed at.

    ``q_rest`` (n,): the model's positions for the joints the goal does not name (at rest);
    ``positions``, ``qd``, ``qdd`` (N, m): the goal's joints; ``friction``: add the model's URDF
    friction of q̇_k.
    """
    N = positions.shape[0]
    Q = np.tile(np.asarray(q_rest, dtype=np.float64), (N, 1))
    QD, QDD = np.zeros_like(Q), np.zeros_like(Q)
    Q[:, columns], QD[:, columns], QDD[:, columns] = positions, qd, qdd
    # RNEA per point, eq. 9.81 (+ F_v q̇ + F_s sgn(q̇), the core's friction, with ``friction``)
    tau = rd.inverse_dynamics_trajectory(model, Q, QD, QDD, friction=True if friction else None)
    return tau[:, columns], Q, QD


class FeedforwardPlan:
    """The efforts to fill into one trajectory (``fill``), or the reason it is refused.

    ``names``: the goal's joints, all of them joints of ``model`` (BadInput 'unknown_joints'
    otherwise, which a JTC goal answers with INVALID_JOINTS); ``firmware_model``: the arm as its
    firmware knows it (without the payload), for the terms the firmware adds.
    """

    def __init__(self, model, firmware_model, conventions, names, friction=False):
        unknown = [n for n in names if n not in model.joint_names]
        if unknown:
            raise BadInput('unknown_joints', f'joints {short_list(unknown)} are not joints of the model '
                                             f'{short_list(list(model.joint_names))}')
        self.model, self.firmware_model, self.conventions = model, firmware_model, conventions
        self.names = list(names)
        self.columns = np.array([model.joint_names.index(n) for n in names], dtype=np.intp)
        self.friction = friction and not conventions.adds_friction

    def fill(self, q_rest, times, positions, velocities, accelerations):
        """(N, m) efforts for the points: the model's torque less the firmware's terms at each point's
        planned state (logic/hardware.py, eq. 1), joints in the goal's order."""
        qd, qdd = knot_derivatives(times, positions, velocities, accelerations)
        tau, Q, QD = trajectory_efforts(self.model, self.columns, q_rest, positions, qd, qdd, self.friction)
        if self.conventions.firmware_compensates - {'friction'}:     # logic/hardware.py, eq. 1
            tau -= self.conventions.left_to_firmware(self.firmware_model, Q, QD)[:, self.columns]
        return tau
