"""A STAND-IN for ros2_control's JointTrajectoryController (JTC) with an ``effort`` command interface, for
the feed-forward demo (``python -m robot_dynamics_ros.demos --feedforward``, feedforward_demo.py): JTC
itself (C++, run by controller_manager) is not installable here. Demo code: not a controller for an arm.

What it does, as JTC does it (joint_trajectory_controller's trajectory.cpp and its PID on an effort
interface):

- serves control_msgs/action/FollowJointTrajectory at ``action_name`` (default
  ``joint_trajectory_controller/follow_joint_trajectory``, JTC's), one goal at a time: a new goal
  preempts the one executing (aborted, INVALID_GOAL); a cancelled goal holds the measured position
  (result canceled);
- at every ``joint_states`` message (the control step; its stamp is the clock: simulated time here,
  controller_manager's clock in JTC) samples the goal's trajectory at that time with JTC's spline
  (``interpolate_between_points``; the logic/feedforward.py docstring): linear between positions-only
  points, cubic Hermite with velocities, quintic with velocities and accelerations (the cubic and
  quintic are logic/interpolation.PiecewisePolynomial's); before the first point from the measured
  state, after the last one the last point as given (its velocity and acceleration, else zero);
- interpolates the points' ``effort`` linearly between points (what JTC does with the field since
  ros2_controllers PR #1200: a feed-forward added to the PID output; none before the first point);
- commands, on ``effort_controller/commands`` (std_msgs/Float64MultiArray, ``joints`` order),

      τ = kp (q_d − q) + kd (q̇_d − q̇) + τ_ff                (JTC's PID, i = 0, plus the feed-forward)

- the goal succeeds (SUCCESSFUL) at the trajectory's end time, and the last point is held;
- before any goal it holds the first measured position with the same PD and no feed-forward: JTC has
  no model of the arm, so an arm under gravity sags there by about g(q) / kp
  (``hold_before_goal`` false: nothing is commanded before the first goal; a simulator that waits for
  a first command then starts the arm on the trajectory, at rest);
- publishes ``~/controller_state`` (control_msgs/JointTrajectoryControllerState) at every step:
  reference (q_d, q̇_d, q̈_d; effort = τ_ff), feedback (q, q̇), error (q_d − q, q̇_d − q̇), output
  (effort = τ).

What it leaves out of JTC: the real-time loop (a Python callback per joint state here), the I term,
``ff_velocity_scale``, continuous joints' angle wrapping, every tolerance (no path or goal check: a goal
succeeds at its end time whatever the error), ``goal_time``, action feedback, partial goals, the
``~/joint_trajectory`` topic, position and velocity command interfaces, speed scaling, open-loop
control; of JTC's checks of a goal, the joints, the sizes, NaN and the times (and it refuses a
trajectory with velocities, accelerations or efforts at some points only).

Parameters (read-only): ``joints`` (string array, the command's order; [] = the first joint state's,
the simulator's), ``kp`` [N m/rad], ``kd`` [N m s/rad] (one value, or one per joint in ``joints``
order), ``action_name``, ``hold_before_goal`` (bool, true as JTC).
"""

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics_ros.logic.input_guard import BadInput
from robot_dynamics_ros.logic.interpolation import PiecewisePolynomial
from robot_dynamics_ros.logic.stamps import stamp_ns
from robot_dynamics_ros.logic.trajectory_goal import ErrorCode, GoalError, error_code_of, goal_joint_error
from robot_dynamics_ros.nodes.common import describe, gain_vector, run_node, string_list
from robot_dynamics_ros.nodes.conversions import float64_field, index_map, joint_trajectory_arrays
from robot_dynamics_ros.nodes.trajectory_action import (
    FollowJointTrajectory,
    GoalRun,
    JointTrajectoryControllerState,
    mark_executing,
    never_called,
)

__all__ = ['JtcStandIn', 'SampledTrajectory', 'main']

DEFAULT_ACTION = 'joint_trajectory_controller/follow_joint_trajectory'


class SampledTrajectory:
    """A goal's trajectory in the controller's joint order, sampled as JTC samples it (module docstring).

    ``times`` (N,) s from the trajectory's start; ``positions`` (N, n); ``velocities``,
    ``accelerations``, ``efforts``: (N, n) or None (not given); ``q_now``, ``qd_now`` (n,): the measured
    state, the start of a first segment when the first point is later than 0.
    """

    def __init__(self, times, positions, velocities, accelerations, efforts, q_now, qd_now):
        self.end = float(times[-1])
        n = positions.shape[1]
        last = [positions[-1]] + [np.zeros(n) if a is None else a[-1]
                                  for a in (velocities, accelerations, efforts)]
        self.last = tuple(np.array(v) for v in last)      # held after the end, as given (JTC)
        self.first = float(times[0])                      # no feed-forward before it
        self.efforts = efforts
        self.effort_times = times
        if times[0] > 0.0:                                # from the measured state (JTC's point before)
            times = np.concatenate(([0.0], times))
            positions = np.vstack((q_now, positions))
            velocities = None if velocities is None else np.vstack((qd_now, velocities))
            accelerations = None if accelerations is None else np.vstack((np.zeros(n), accelerations))
        self.times, self.positions = times, positions
        # cubic Hermite with velocities, quintic where both ends give accelerations: JTC's own polynomials
        self.spline = None if velocities is None else PiecewisePolynomial(times, positions, velocities,
                                                                          accelerations)

    def sample(self, t):
        """(q_d, q̇_d, q̈_d, τ_ff), each (n,), at ``t`` s from the trajectory's start."""
        if t >= self.end:
            return self.last
        t = max(t, 0.0)
        if self.spline is not None:
            q, qd, qdd = self.spline.sample(t)
        else:                                           # linear between positions-only points
            k = min(int(np.searchsorted(self.times, t, side='right')) - 1, self.times.size - 2)
            T = self.times[k + 1] - self.times[k]
            qd = (self.positions[k + 1] - self.positions[k]) / T
            q, qdd = self.positions[k] + qd * (t - self.times[k]), np.zeros_like(qd)
        if self.efforts is None or t < self.first:
            return q, qd, qdd, np.zeros_like(q)
        times = self.effort_times
        k = min(int(np.searchsorted(times, t, side='right')) - 1, times.size - 2)
        s = (t - times[k]) / (times[k + 1] - times[k])
        return q, qd, qdd, (1.0 - s) * self.efforts[k] + s * self.efforts[k + 1]


def _field(points, name, m):
    """(N, m) of a point field given at every point, None when at none; GoalError when at some only."""
    values = [getattr(p, name) for p in points]
    given = [len(v) for v in values]
    if not any(given):
        return None
    if not all(n == m for n in given):
        raise GoalError(ErrorCode.INVALID_GOAL, f'{name} must be given at every point, for every joint '
                                                '(this JTC stand-in takes no mixed trajectories)')
    array = np.array(values, dtype=np.float64)
    if not np.isfinite(array).all():
        raise GoalError(ErrorCode.INVALID_GOAL, f'the points\' {name} are not finite')
    return array


class JtcStandIn(Node):
    """The stand-in for JTC with an effort interface (module docstring)."""

    def __init__(self, node_name='jtc_stand_in', **kwargs):
        super().__init__(node_name, **kwargs)
        self.declare_parameter('joints', [], describe(
            "The joints, in the command's order ([] = the first joint state's).", read_only=True,
            dynamic_typing=True))
        self.declare_parameter('kp', [100.0], describe(
            'Position gains [N m/rad]: one value, or one per joint.', read_only=True, dynamic_typing=True))
        self.declare_parameter('kd', [10.0], describe(
            'Velocity gains [N m s/rad]: one value, or one per joint.', read_only=True, dynamic_typing=True))
        self.declare_parameter('action_name', DEFAULT_ACTION, describe(
            'The FollowJointTrajectory action served.', read_only=True))
        self.declare_parameter('hold_before_goal', True, describe(
            'Hold the first measured position (PD, no feed-forward) before the first goal, as JTC '
            '(false: command nothing until then).', read_only=True))
        self.joints = tuple(string_list('joints', self.get_parameter('joints').value)) or None
        self.hold_before_goal = bool(self.get_parameter('hold_before_goal').value)
        self.kp = self.kd = None
        self._state = JointTrajectoryControllerState()
        self._gains()
        self._state_index = {}          # joint state names -> indices into ``joints`` order
        self._q = self._qd = None       # the last measured state
        self._run = None                # the GoalRun executing
        self._trajectory = None         # what is followed: a goal's, or the hold
        self._start_ns = None           # the trajectory's start (ns); None: the next state's stamp
        self._commands = self.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
        self._state_pub = self.create_publisher(JointTrajectoryControllerState, '~/controller_state', 10)
        self.create_subscription(JointState, 'joint_states', self._on_state, 10)
        self._server = ActionServer(self, FollowJointTrajectory, self.get_parameter('action_name').value,
                                    execute_callback=never_called,
                                    goal_callback=lambda _goal: GoalResponse.ACCEPT,
                                    handle_accepted_callback=self._on_accepted,
                                    cancel_callback=self._on_cancel)

    def _gains(self):
        if self.joints is not None:
            n = len(self.joints)
            self.kp = gain_vector('kp', self.get_parameter('kp').value, n)
            self.kd = gain_vector('kd', self.get_parameter('kd').value, n)
            self._state.joint_names = list(self.joints)

    # -- the goals ----------------------------------------------------------------------------
    def _on_accepted(self, handle):
        run = GoalRun(self._server, handle)
        mark_executing(handle)
        try:
            trajectory = self._trajectory_of(handle.request)
        except (GoalError, BadInput) as exc:
            run.finish(error_code_of(exc), str(exc))
            return
        if self._run is not None:
            self._run.finish(ErrorCode.INVALID_GOAL, 'preempted by a new goal')
        self._run, self._trajectory = run, trajectory
        stamp = handle.request.trajectory.header.stamp
        self._start_ns = stamp_ns(stamp) or None   # 0: start now (JTC)

    def _trajectory_of(self, goal):
        """The goal's SampledTrajectory in ``joints`` order; GoalError (JTC's code, the reason)."""
        if self.joints is None or self._q is None:
            raise GoalError(ErrorCode.INVALID_GOAL, 'no joint state yet')
        if goal.multi_dof_trajectory.joint_names:
            raise GoalError(ErrorCode.INVALID_JOINTS, 'multi_dof_trajectory is not supported')
        error = goal_joint_error(goal.trajectory.joint_names, self.joints, False)
        if error:
            raise error
        names, times, q, _, _ = joint_trajectory_arrays(goal.trajectory)
        if times.size == 0:
            raise GoalError(ErrorCode.INVALID_GOAL, 'the trajectory has no points')
        order = index_map(names, self.joints)
        points, m = goal.trajectory.points, len(names)
        qd, qdd, effort = (None if a is None else a[:, order]
                           for a in (_field(points, f, m) for f in ('velocities', 'accelerations', 'effort')))
        return SampledTrajectory(times, q[:, order], qd, qdd, effort, self._q, self._qd)

    def _on_cancel(self, handle):
        """Accepted for the executing goal: it ends at the next step (the measured position held)."""
        return CancelResponse.ACCEPT if self._run is not None and self._run.handle is handle \
            else CancelResponse.REJECT

    def _hold(self, q):
        """Hold ``q`` from the next step on (at rest, no feed-forward)."""
        self._trajectory = SampledTrajectory(np.zeros(1), q[None, :], None, None, None, q, q)
        self._start_ns = None

    # -- the control step -----------------------------------------------------------------------
    def _on_state(self, msg):
        names = tuple(msg.name)
        index = self._state_index.get(names)
        if index is None:
            if self.joints is None:
                self.joints = names
                self._gains()
            try:
                index = self._state_index[names] = index_map(names, self.joints)
            except BadInput as exc:
                self.get_logger().warning(f'joint state dropped: {exc}', throttle_duration_sec=5.0)
                return
        if len(msg.position) != len(names) or len(msg.velocity) != len(names):
            return
        q = np.asarray(msg.position)[index]
        qd = np.asarray(msg.velocity)[index]
        self._q, self._qd = q, qd
        if self._run is not None and self._run.handle.is_cancel_requested:
            self._run.finish(ErrorCode.SUCCESSFUL, 'canceled: holding the measured position', 'canceled')
            self._run = None
            self._hold(q)
        if self._trajectory is None:
            if not self.hold_before_goal:
                return
            self._hold(q)
        now_ns = stamp_ns(msg.header.stamp)
        if self._start_ns is None:
            self._start_ns = now_ns
        t = (now_ns - self._start_ns) * 1e-9
        q_d, qd_d, qdd_d, tau_ff = self._trajectory.sample(t)
        tau = self.kp * (q_d - q) + self.kd * (qd_d - qd) + tau_ff
        self._commands.publish(Float64MultiArray(data=float64_field(tau)))
        if self._run is not None and t >= self._trajectory.end:
            self._run.finish(ErrorCode.SUCCESSFUL, 'the trajectory ended', 'succeed')
            self._run = None
        self._publish_state(msg.header.stamp, q, qd, q_d, qd_d, qdd_d, tau_ff, tau)

    def _publish_state(self, stamp, q, qd, q_d, qd_d, qdd_d, tau_ff, tau):
        s = self._state
        s.header.stamp = stamp
        s.reference.positions, s.reference.velocities = float64_field(q_d), float64_field(qd_d)
        s.reference.accelerations, s.reference.effort = float64_field(qdd_d), float64_field(tau_ff)
        s.feedback.positions, s.feedback.velocities = float64_field(q), float64_field(qd)
        s.error.positions, s.error.velocities = float64_field(q_d - q), float64_field(qd_d - qd)
        s.output.effort = float64_field(tau)
        self._state_pub.publish(s)

    def destroy_node(self):
        if self._run is not None:
            self._run.finish(ErrorCode.INVALID_GOAL, 'the controller is shutting down')
        self._server.destroy()
        return super().destroy_node()


def main(args=None):
    run_node(JtcStandIn, args)


if __name__ == '__main__':
    main()
