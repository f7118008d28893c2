"""A FollowJointTrajectory goal's checks and tolerances, as ros2_control's JointTrajectoryController
applies them (ROS-free; computed_torque_controller's ``~/follow_joint_trajectory`` is the wiring).

Error codes are those of ``control_msgs/action/FollowJointTrajectory`` (``ErrorCode``). Times are
integer nanoseconds on the controller's clock; joint vectors are in the controller's model order.

**Validation** (``goal_joint_error``, ``old_stamp_error``, ``error_code_of``): a goal naming a joint
the controller does not control, or one joint twice, or (unless ``allow_partial``) only some of the
controlled joints, is ``INVALID_JOINTS``; no points, mismatched sizes, NaN, times that do not increase,
points or segments beyond the position or velocity limits are ``INVALID_GOAL``; a goal stamped so far in
the past that its last point is over is ``OLD_HEADER_TIMESTAMP``. The tolerance lists are checked
too: a joint the controller does not control is ``INVALID_JOINTS``, a negative value other than −1 is
``INVALID_GOAL``.

**Tolerances** (``Tolerances.from_goal``): per joint, a position and a velocity bound on the error
e = q_d − q, ė = q̇_d − q̇ along the path (``path_*``) and at the end (``goal_*``), plus the time after
the trajectory's end by which the goal must be reached (``goal_time``, s; 0 = no limit, as JTC). A
goal's value > 0 is used as given, 0 means "the controller's default" (its ``constraints.*``
parameters), −1 means "no limit" (stored as +inf, like a default of 0). Accelerations are not
measured, so their tolerances are accepted and not checked. At the end, the goal velocity tolerance
defaults to ``stopped_velocity_tolerance`` (JTC's ``constraints.stopped_velocity_tolerance``).

**Monitoring** (``GoalMonitor.check``): during the trajectory, every step checks the path
tolerances (``PATH_TOLERANCE_VIOLATED``); from its end on, the goal tolerances: within them the goal
succeeds (``SUCCESSFUL``); still outside them ``goal_time`` after the end, it fails
(``GOAL_TOLERANCE_VIOLATED``); with ``goal_time`` 0 it waits. Each failure names the joint, the
quantity, the error and the bound.

Example:
    >>> import numpy as np
    >>> defaults = Tolerances.defaults(['a', 'b'], goal_position=[0.01], goal_time=1.0)
    >>> monitor = GoalMonitor(['a', 'b'], defaults, start_ns=0, end_ns=1_000_000_000, times=[1.0])
    >>> monitor.check(500_000_000, np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)) is None
    True
    >>> monitor.check(1_200_000_000, np.zeros(2), np.zeros(2), np.array([0.0, 0.1]), np.zeros(2))
    >>> monitor.check(2_100_000_000, np.zeros(2), np.zeros(2), np.array([0.0, 0.1]), np.zeros(2))[0]
    -5
"""

import math

import numpy as np

from robot_dynamics_ros.logic.input_guard import BadInput, duplicates, short_list

__all__ = ['ErrorCode', 'Tolerances', 'GoalMonitor', 'goal_joint_error', 'old_stamp_error',
           'error_code_of', 'GoalError']


class ErrorCode:
    """control_msgs/action/FollowJointTrajectory's result codes."""
    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


class GoalError(ValueError):
    """A goal refused: ``code`` (ErrorCode) and the reason (the message)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


# BadInput kinds of a malformed trajectory that concern its joints, not its values.
_JOINT_KINDS = ('unknown_joints', 'duplicate', 'no_joints')


def error_code_of(exc):
    """The ErrorCode of the ValueError that refused a goal's trajectory (``GoalError`` carries its
    own; BadInput about joints: INVALID_JOINTS; anything else, limits included: INVALID_GOAL)."""
    if isinstance(exc, GoalError):
        return exc.code
    if isinstance(exc, BadInput) and exc.kind in _JOINT_KINDS:
        return ErrorCode.INVALID_JOINTS
    return ErrorCode.INVALID_GOAL


def goal_joint_error(names, joint_order, allow_partial):
    """Why a goal's ``names`` do not fit a controller of ``joint_order`` (a GoalError with
    INVALID_JOINTS), or None."""
    names = list(names)
    if not names:
        return GoalError(ErrorCode.INVALID_JOINTS, 'the trajectory names no joints')
    twice = duplicates(names)
    if twice:
        return GoalError(ErrorCode.INVALID_JOINTS,
                         f'the trajectory names joints {short_list(twice)} more than once')
    unknown = [name for name in names if name not in joint_order]
    if unknown:
        return GoalError(ErrorCode.INVALID_JOINTS,
                         f'the trajectory names joints {short_list(unknown)} that this controller '
                         f'does not control (it controls {short_list(list(joint_order))})')
    given = set(names)
    missing = [name for name in joint_order if name not in given]
    if missing and not allow_partial:
        return GoalError(ErrorCode.INVALID_JOINTS,
                         f'the trajectory leaves out joints {short_list(missing)} '
                         '(allow_partial_joints_goal is false)')
    return None


def old_stamp_error(stamp_ns, last_time_s, now_ns):
    """OLD_HEADER_TIMESTAMP (a GoalError) when a trajectory stamped ``stamp_ns`` (0 = now) is over
    at ``now_ns``: its last point, ``last_time_s`` after the stamp, lies in the past; else None."""
    if stamp_ns <= 0:
        return None
    end_ns = stamp_ns + round(last_time_s * 1e9)
    if end_ns < now_ns:
        return GoalError(ErrorCode.OLD_HEADER_TIMESTAMP,
                         f'the trajectory is over: it ended {(now_ns - end_ns) * 1e-9:.3f} s ago '
                         '(header.stamp plus the last time_from_start)')
    return None


def _bound(value, default, what):
    """A goal's tolerance value: > 0 as given, 0 the default, −1 no limit (inf); else GoalError."""
    value = float(value)
    if not math.isfinite(value) or (value < 0.0 and value != -1.0):
        raise GoalError(ErrorCode.INVALID_GOAL, f'{what} must be > 0, 0 (the default) or -1 (no '
                                                f'limit), got {value}')
    if value == -1.0:
        return math.inf
    return value if value > 0.0 else default


class Tolerances:
    """Per-joint bounds (inf = no limit) on the tracking error, in model order (module docstring).

    Attributes: ``path_position``, ``path_velocity``, ``goal_position``, ``goal_velocity`` ((n,)
    arrays, rad or m, rad/s or m/s), ``goal_time`` (s, 0 = no limit).
    """

    def __init__(self, path_position, path_velocity, goal_position, goal_velocity, goal_time):
        self.path_position = np.asarray(path_position, dtype=np.float64)
        self.path_velocity = np.asarray(path_velocity, dtype=np.float64)
        self.goal_position = np.asarray(goal_position, dtype=np.float64)
        self.goal_velocity = np.asarray(goal_velocity, dtype=np.float64)
        self.goal_time = float(goal_time)

    @classmethod
    def defaults(cls, joint_names, path_position=(0.0,), path_velocity=(0.0,), goal_position=(0.0,),
                 goal_velocity=(0.0,), goal_time=0.0, stopped_velocity=0.01):
        """The controller's defaults (its ``constraints.*`` parameters): each argument one value
        for every joint or one per joint, 0 = no limit. The goal velocity bound is
        ``goal_velocity`` where given, else ``stopped_velocity`` (JTC's stopped_velocity_tolerance,
        0 = no limit)."""
        n = len(joint_names)

        def per_joint(values, name):
            values = np.asarray(values, dtype=np.float64).reshape(-1)
            if values.size not in (1, n):
                raise ValueError(f'{name} must have 1 or {n} values, got {values.size}')
            if not np.all(np.isfinite(values)) or np.any(values < 0.0):
                raise ValueError(f'{name} must be finite and >= 0, got {values.tolist()}')
            values = np.broadcast_to(values, (n,)).copy()
            values[values == 0.0] = math.inf
            return values

        if not (math.isfinite(goal_time) and goal_time >= 0.0):
            raise ValueError(f'goal_time must be finite and >= 0, got {goal_time}')
        if not (math.isfinite(stopped_velocity) and stopped_velocity >= 0.0):
            raise ValueError(f'stopped_velocity must be finite and >= 0, got {stopped_velocity}')
        goal_v = per_joint(goal_velocity, 'goal_velocity')
        goal_v[np.isinf(goal_v)] = stopped_velocity if stopped_velocity > 0.0 else math.inf
        return cls(per_joint(path_position, 'path_position'),
                   per_joint(path_velocity, 'path_velocity'),
                   per_joint(goal_position, 'goal_position'), goal_v, goal_time)

    def from_goal(self, joint_names, path_tolerance, goal_tolerance, goal_time_s):
        """These defaults overridden by a goal's: ``path_tolerance`` and ``goal_tolerance`` are
        iterables of (joint name, position, velocity, acceleration) (control_msgs/JointTolerance),
        ``goal_time_s`` its goal_time_tolerance (0 = the default). GoalError on a joint the
        controller does not control (INVALID_JOINTS) or a bad value (INVALID_GOAL)."""
        index = {name: k for k, name in enumerate(joint_names)}
        arrays = {key: getattr(self, key).copy() for key in
                  ('path_position', 'path_velocity', 'goal_position', 'goal_velocity')}
        for kind, entries in (('path', path_tolerance), ('goal', goal_tolerance)):
            for name, position, velocity, acceleration in entries:
                if name not in index:
                    raise GoalError(ErrorCode.INVALID_JOINTS,
                                    f'{kind}_tolerance names joint {name!r}, which this controller '
                                    'does not control')
                k = index[name]
                what = f'{kind}_tolerance of {name}'
                for quantity, value in (('position', position), ('velocity', velocity)):
                    key = f'{kind}_{quantity}'
                    arrays[key][k] = _bound(value, arrays[key][k], f'{what}: {quantity}')
                _bound(acceleration, 0.0, f'{what}: acceleration')     # checked, not measured
        goal_time = _bound(goal_time_s, self.goal_time, 'goal_time_tolerance')
        return Tolerances(goal_time=0.0 if math.isinf(goal_time) else goal_time, **arrays)


def _violation(joint_names, error, bound, quantity):
    """'joint X: position error +0.12 beyond the tolerance 0.1' (rad or m; rad/s or m/s) for the
    joint furthest beyond its bound, or None."""
    excess = np.abs(error) - bound
    k = int(np.argmax(excess))
    if not excess[k] > 0.0:
        return None
    return f'joint {joint_names[k]}: {quantity} error {error[k]:+.4g} beyond the tolerance {bound[k]:.4g}'


class GoalMonitor:
    """The tolerances of one executing goal (module docstring).

    Args:
        joint_names: the controller's joints in model order (for the messages).
        tolerances: the goal's ``Tolerances``.
        start_ns, end_ns: when the trajectory starts and when its last point is due.
        times: the goal's points' time_from_start (s), for ``index``.
    """

    def __init__(self, joint_names, tolerances, start_ns, end_ns, times):
        self.joint_names = list(joint_names)
        self.tolerances = tolerances
        self.start_ns = int(start_ns)
        self.end_ns = int(end_ns)
        self._times = np.asarray(times, dtype=np.float64)
        # Which path bounds exist at all (a control step then checks only those; the check's cost:
        # doc/performance.md, section "Nodes")
        self._path_position = bool(np.isfinite(tolerances.path_position).any())
        self._path_velocity = bool(np.isfinite(tolerances.path_velocity).any())

    def index(self, now_ns):
        """The index of the goal point whose segment is under way at ``now_ns`` (the point last
        passed; 0 before the first, the last point after the end)."""
        k = int(np.searchsorted(self._times, (now_ns - self.start_ns) * 1e-9, side='right')) - 1
        return min(max(k, 0), self._times.size - 1)

    def check(self, now_ns, q, qd, q_d, qd_d):
        """None while the goal goes on, else ``(ErrorCode, message)``: the outcome at ``now_ns``
        with the measured (q, q̇) and the desired (q_d, q̇_d), (n,) arrays in model order."""
        tol = self.tolerances
        if now_ns < self.end_ns:
            if now_ns < self.start_ns:
                return None
            why = None
            if self._path_position and (np.abs(q_d - q) > tol.path_position).any():
                why = _violation(self.joint_names, q_d - q, tol.path_position, 'position')
            elif self._path_velocity and (np.abs(qd_d - qd) > tol.path_velocity).any():
                why = _violation(self.joint_names, qd_d - qd, tol.path_velocity, 'velocity')
            if why:
                return ErrorCode.PATH_TOLERANCE_VIOLATED, f'path tolerance violated: {why}'
            return None
        why = (_violation(self.joint_names, q_d - q, tol.goal_position, 'position')
               or _violation(self.joint_names, qd_d - qd, tol.goal_velocity, 'velocity'))
        if why is None:
            late = (now_ns - self.end_ns) * 1e-9
            return ErrorCode.SUCCESSFUL, (f'reached the goal {late:.3f} s after the trajectory end'
                                          if late > 1e-3 else 'reached the goal')
        if tol.goal_time > 0.0 and (now_ns - self.end_ns) * 1e-9 > tol.goal_time:
            return ErrorCode.GOAL_TOLERANCE_VIOLATED, (
                f'goal tolerance violated {tol.goal_time:.3f} s (goal_time_tolerance) after the '
                f'trajectory end: {why}')
        return None
