"""A desired pose over time for the task-space controller (ROS-free): held, or moving to a target
along a screw motion with a minimum-jerk (quintic) time scaling.

From rest, the textbook's straight-line-in-SE(3) trajectory (Modern Robotics, published edition,
§9.2, ScrewTrajectory with QuinticTimeScaling):

    T(t) = T_start e^{[X] s(t)},   X = log(T_start⁻¹ T_goal),   s(t) = 10 τ³ − 15 τ⁴ + 6 τ⁵, τ = t / T_f

whose body twist is V = X ṡ and V̇ = X s̈ (X commutes with e^{[X] s}). A target that arrives while
the desired pose is moving must not make its velocity or acceleration jump, so the general form
starts from the current desired twist V₀ and its derivative A₀:

    T(t) = T_start e^{[ξ(t)]},   ξ(t) quintic in t with ξ(0) = 0, ξ̇(0) = V₀, ξ̈(0) = A₀,
                                 ξ(T_f) = X, ξ̇(T_f) = ξ̈(T_f) = 0        (interpolation.PiecewisePolynomial)

(at ξ = 0 the body twist of T_start e^{[ξ]} is ξ̇ and its derivative ξ̈). Its body twist and the
twist's derivative, in the desired frame's own coordinates (the V_des, V̇_des of task_space_control):

    V = J_r(ξ) ξ̇,   V̇ = J_r(ξ) ξ̈ + J̇_r(ξ) ξ̇,   J_r(ξ) = Σ_k (−[ad_ξ])^k / (k + 1)!

(the right Jacobian of the exponential; J̇_r from d/dt (−[ad_ξ])^k, with [ad_ξ]' = [ad_ξ̇]). Summed
term by term on vectors until the terms vanish: from rest ξ̇ and ξ̈ are parallel to ξ, [ad_ξ] ξ̇ = 0,
and the sums stop after their first term, V = X ṡ, V̇ = X s̈ exactly.

Duration: from rest the peak of ṡ is 15 / (8 T_f), so T_f = 15/8 · max(|ω_X| / ω_max, |v_X| / v_max)
keeps the frame's angular speed under ``max_angular_velocity`` and its origin's speed (|v| of a body
twist) under ``max_linear_velocity``; at least ``MIN_DURATION``. A profile that starts moving may
exceed them briefly while it turns the motion it inherits around.

Example:
    >>> import numpy as np
    >>> from robot_dynamics_ros.dynamics.spatial import exp_coordinates
    >>> reference = PoseReference(max_linear_velocity=0.1, max_angular_velocity=1.0)
    >>> reference.hold(np.eye(4), 0.0)
    >>> goal = exp_coordinates([0.0, 0.0, 0.0, 0.1, 0.0, 0.0])     # 10 cm along x
    >>> round(reference.move_to(goal, 0.0), 4)                      # 15/8 · 0.1 m / 0.1 m/s
    1.875
    >>> T, V, Vdot = reference.sample(1.875 / 2)
    >>> round(float(T[0, 3]), 6), round(float(V[3]), 6)             # half-way, at peak speed
    (0.05, 0.1)
"""
import math

import numpy as np

from robot_dynamics_ros.dynamics.spatial import ad, exp_coordinates, inverse_transform, log_transform
from robot_dynamics_ros.logic.interpolation import PiecewisePolynomial

__all__ = ['ScrewProfile', 'PoseReference', 'screw_duration', 'body_twist_of_exponential',
           'MIN_DURATION', 'reach']

MIN_DURATION = 0.05         # s: the shortest profile (a target next to the desired pose)
_PEAK_SPEED = 15.0 / 8.0    # max ṡ of the quintic time scaling, times its duration
_ZERO6 = np.zeros(6)


def screw_duration(X, max_linear_velocity, max_angular_velocity):
    """T_f (s) of the rest-to-rest screw motion along X (6,) whose peak speeds stay within the limits
    (m/s, rad/s, each > 0)."""
    return max(_PEAK_SPEED * max(math.hypot(*X[:3]) / max_angular_velocity,
                                 math.hypot(*X[3:]) / max_linear_velocity), MIN_DURATION)


def body_twist_of_exponential(xi, xi_dot, xi_ddot):
    """(V, V̇): the body twist of e^{[ξ(t)]} and its time derivative (module docstring), from ξ, ξ̇, ξ̈ (6,)
    each, angular first."""
    A, A_dot = -ad(xi), -ad(xi_dot)
    P, D, F = xi_dot, np.zeros(6), xi_ddot          # (−ad_ξ)^k ξ̇, its derivative in ξ, (−ad_ξ)^k ξ̈
    V, V_dot = xi_dot.copy(), xi_ddot.copy()
    scale = 1e-17 * (1.0 + np.abs(xi_dot).max() + np.abs(xi_ddot).max())
    factorial = 1.0
    for k in range(1, 60):
        D = A_dot @ P + A @ D
        P, F = A @ P, A @ F
        factorial *= k + 1
        step_V, step_V_dot = P / factorial, (F + D) / factorial
        V += step_V
        V_dot += step_V_dot
        if max(np.abs(step_V).max(), np.abs(step_V_dot).max()) <= scale:
            break
    return V, V_dot


class ScrewProfile:
    """T(t) = T_start e^{[ξ(t)]} from (T_start, V_start, A_start) at t_start to T_goal at rest at
    t_start + duration (module docstring). Times in s; twists in the moving frame's own coordinates."""

    def __init__(self, T_start, T_goal, t_start, duration, V_start=None, A_start=None):
        self.T_start = np.array(T_start, dtype=np.float64)
        self.T_goal = np.array(T_goal, dtype=np.float64)
        self.t_start = float(t_start)
        self.duration = float(duration)
        self.X = log_transform(inverse_transform(self.T_start) @ self.T_goal)
        V0 = _ZERO6 if V_start is None else np.asarray(V_start, dtype=np.float64)
        A0 = _ZERO6 if A_start is None else np.asarray(A_start, dtype=np.float64)
        self._xi = PiecewisePolynomial([0.0, self.duration], [_ZERO6, self.X], [V0, _ZERO6], [A0, _ZERO6])

    @property
    def end_time(self):
        return self.t_start + self.duration

    def sample(self, t):
        """(T (4, 4), V (6,), V̇ (6,)) at time t; T_start before t_start, T_goal at rest after the end."""
        t = float(t) - self.t_start
        if t < 0.0:
            return self.T_start.copy(), _ZERO6.copy(), _ZERO6.copy()
        if t >= self.duration:
            return self.T_goal.copy(), _ZERO6.copy(), _ZERO6.copy()
        xi, xi_dot, xi_ddot = self._xi.sample(t)        # (at t = 0: 0, V₀, A₀)
        V, V_dot = body_twist_of_exponential(xi, xi_dot, xi_ddot)
        return self.T_start @ exp_coordinates(xi), V, V_dot


class PoseReference:
    """The task-space controller's desired pose over time: nothing yet (empty), held, or moving along a
    ScrewProfile. A new target starts a profile from the desired pose, twist and twist derivative at
    that moment, so the reference never jumps. Times in s (any origin, the same for every call)."""

    def __init__(self, max_linear_velocity=0.1, max_angular_velocity=0.5):
        self.max_linear_velocity = max_linear_velocity
        self.max_angular_velocity = max_angular_velocity
        self._held = None           # T held, or None
        self._profile = None

    @property
    def empty(self):
        return self._held is None and self._profile is None

    @property
    def moving(self):
        return self._profile is not None

    @property
    def goal(self):
        """The pose the reference holds or moves to (None while empty)."""
        return self._profile.T_goal if self._profile is not None else self._held

    def clear(self):
        self._held = self._profile = None

    def hold(self, T, t):
        """Hold the pose T (4, 4) from time t on, at rest."""
        self._held, self._profile = np.array(T, dtype=np.float64), None

    def move_to(self, T_goal, t):
        """Move from the desired state at time t to T_goal (4, 4), arriving at rest; returns the
        duration (s). The reference must not be empty."""
        T_start, V_start, A_start = self.sample(t)
        X = log_transform(inverse_transform(T_start) @ T_goal)
        duration = screw_duration(X, self.max_linear_velocity, self.max_angular_velocity)
        self._profile = ScrewProfile(T_start, T_goal, t, duration, V_start, A_start)
        self._held = None
        return duration

    def sample(self, t):
        """(T_des, V_des, V̇_des) at time t (s); V_des, V̇_des in the desired frame's own coordinates.
        A profile that has ended becomes a hold of its goal."""
        if self._profile is not None:
            if t < self._profile.end_time:
                return self._profile.sample(t)
            self._held, self._profile = self._profile.T_goal, None
        if self._held is None:
            raise ValueError('no desired pose yet: hold() or move_to() first')
        return self._held.copy(), _ZERO6.copy(), _ZERO6.copy()


def reach(model, frame):
    """An upper bound (m) on the distance of ``frame``'s origin from the root link's over every
    configuration: the lengths of the joint placements from the frame's body to the root, plus the
    frame's placement, plus each prismatic joint's largest travel (inf without position limits). A
    target farther than this is out of reach whatever the joints do."""
    f = model.frame_index(frame)
    total = float(np.linalg.norm(model.frame_placement[f][:3, 3]))
    i = int(model.frame_body[f])
    while i >= 0:
        total += float(np.linalg.norm(model.T_tree[i][:3, 3]))
        if model.body_joint_types[i] == 'prismatic':
            c = model.body_coordinate[i]
            travel = max(abs(model.lower[c]), abs(model.upper[c]))
            total += abs(model.body_multiplier[i]) * travel + abs(model.body_offset[i])
        i = int(model.parent[i])
    return total
