"""computed_torque_controller's ros2_control interfaces: the ``~/follow_joint_trajectory`` action
(control_msgs/action/FollowJointTrajectory) and ``~/controller_state``
(control_msgs/msg/JointTrajectoryControllerState), as JointTrajectoryController serves them.

The goals' checks and tolerances are ``robot_dynamics_ros.logic.trajectory_goal`` (ROS-free); the
trajectory itself goes the way of a ``~/joint_trajectory`` message (the controller's reference
schedule: same interpolation, same limit check). This module is the wiring: ``TrajectoryAction``
belongs to a ComputedTorqueController, which calls it where a goal can begin, go on or end.

- **Invalid goals are accepted and aborted at once** (never rejected), with JTC's error code and the
  reason in ``error_string`` (also logged, and counted on /diagnostics under ``goal/<code>``): so that
  a client always learns why. Nothing is scheduled for them: the arm does what it did.
- **One goal at a time**: a goal whose trajectory takes over aborts the one executing
  (``INVALID_GOAL``, "preempted by a new goal", as JTC's preemption); so does a trajectory on
  ``~/joint_trajectory``, ``~/hold``, ``~/enable false``, a joint-state discontinuity (a reset),
  stale states, a new robot model. The arm then does what that event makes it do.
- **Cancel**: the arm's measured motion decelerates to rest (``stop_deceleration``, within the
  position limits: ``reference_schedule.ReferenceSchedule.stop``) and is held there; result canceled
  (``SUCCESSFUL``). No jump (the stop starts from the measured state: the arm is not pulled to where
  the trajectory was), no swing.
- **Tolerances**: checked at every control step (``GoalMonitor``); a path or goal tolerance
  violation aborts the goal and holds the measured position (as JTC).
- **Feedback** at ``action_monitor_rate`` (desired, actual, error; ``index`` where the message has
  it, Kilted), from the last control step.
- **controller_state** at ``state_publish_rate`` (0 = off): reference, feedback, error, output (τ).

**No waiting task.** rclpy awaits a Future by yielding to the executor at every turn, so an execute
callback that awaited the goal's end would keep the executor busy and delay the control steps (what
that measured: doc/performance.md, section "Nodes"). Instead a goal is begun in the
accepted-callback and marked executing (``ServerGoalHandle._update_state(EXECUTE)``, rclpy's own step
in ``execute()``; where a future rclpy lacks it, the goal shows ACCEPTED until it ends); when it ends,
a one-shot execute callback sets the terminal state and returns the result (``GoalRun.finish``), so
nothing runs in between.
"""

import math

from action_msgs.msg import GoalStatus
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.parameter import Parameter

from robot_dynamics_ros.logic.stamps import stamp_ns
from robot_dynamics_ros.logic.trajectory_goal import (
    ErrorCode,
    GoalError,
    GoalMonitor,
    Tolerances,
    error_code_of,
    goal_joint_error,
    old_stamp_error,
)
from robot_dynamics_ros.nodes.common import describe, float_array
from robot_dynamics_ros.nodes.controller import stamp
from robot_dynamics_ros.nodes.conversions import float64_field

try:    # control_msgs has no wheel: a ROS installation's, or tools/build_interfaces.sh's
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTrajectoryControllerState
except ImportError:         # pragma: no cover (the set-up builds it)
    FollowJointTrajectory = JointTrajectoryControllerState = None

__all__ = ['TrajectoryAction', 'GoalRun', 'AVAILABLE', 'ACTION_NAME', 'STATE_TOPIC', 'mark_executing',
           'never_called']

AVAILABLE = FollowJointTrajectory is not None
ACTION_NAME = '~/follow_joint_trajectory'
STATE_TOPIC = '~/controller_state'
_CODE_NAMES = {value: name for name, value in vars(ErrorCode).items() if not name.startswith('_')}


def mark_executing(handle):
    """ACCEPTED -> EXECUTING, the step rclpy's ServerGoalHandle.execute() takes before it runs the
    execute callback (module docstring: here the callback runs only at the end)."""
    update = getattr(handle, '_update_state', None)
    event = getattr(getattr(_rclpy, 'GoalEvent', None), 'EXECUTE', None)
    if update is not None and event is not None and not handle.is_cancel_requested:
        update(event)


class GoalRun:
    """One goal from acceptance to its result (``finish``, at most once)."""

    def __init__(self, server, handle, tolerances=None):
        self._server = server
        self.handle = handle
        self.finished = False
        self.tolerances = tolerances
        self.monitor = None             # a GoalMonitor once its trajectory is scheduled
        self.stopping = False           # cancel accepted: the arm is being brought to rest

    def finish(self, code, message, state='abort'):
        """End the goal: ``state`` 'succeed', 'abort' or 'canceled', with the result (code,
        message). A one-shot execute callback sets the state and returns the result (rclpy then
        answers the client); False if it had ended already."""
        if self.finished:
            return False
        self.finished = True
        result = FollowJointTrajectory.Result(error_code=int(code), error_string=message)

        def end(handle):
            try:
                getattr(handle, state)()
            except Exception:       # (a state the goal cannot go to from where it is: aborted)
                if handle.is_active:
                    handle.abort()
            return result

        if self.handle.status == GoalStatus.STATUS_EXECUTING:
            self._server.notify_execute(self.handle, end)
        else:       # ACCEPTED (-> EXECUTING, then the end) or CANCELING (stays until the end)
            self.handle.execute(end)
        return True


class TrajectoryAction:
    """The action server and controller-state publisher of ``controller`` (module docstring)."""

    def __init__(self, controller, throttle):
        self._node = node = controller
        self._throttle = throttle
        self._goals = []            # unfinished GoalRuns: the executing one last
        self._last_step = None      # (now_ns, q, qd, q_d, qd_d, qdd_d, tau) in model order
        self._defaults = None       # Tolerances from the constraints.* parameters
        self._joint_parameters = set()
        self._declaring = False
        node.declare_parameter('allow_partial_joints_goal', False, describe(
            'Accept goals naming only some of the joints (the others hold their position).'))
        node.declare_parameter('action_monitor_rate', 20.0, describe(
            'Rate (Hz) of the action feedback and of the cancel handling.', min_value=0.1,
            max_value=1000.0))
        node.declare_parameter('state_publish_rate', 50.0, describe(
            'Rate (Hz) of ~/controller_state (0 = not published).', min_value=0.0, max_value=1000.0,
            additional_constraints='0, or 0.1 to 1000'))
        node.declare_parameter('stop_deceleration', 5.0, describe(
            'Deceleration (rad/s^2 or m/s^2) with which a cancelled goal brings the desired motion '
            'to rest (stronger only where a position limit is closer).', min_value=1e-3))
        node.declare_parameter('constraints.stopped_velocity_tolerance', 0.01, describe(
            'Velocity error bound (rad/s or m/s) at the goal where the goal gives none (0 = none).',
            min_value=0.0))
        node.declare_parameter('constraints.goal_time', 1.0, describe(
            'Time (s) after the trajectory end by which the goal tolerances must hold where the goal '
            'gives no goal_time_tolerance (0 = no limit, as JTC: the goal may then never end).',
            min_value=0.0))
        self._server = ActionServer(node, FollowJointTrajectory, ACTION_NAME,
                                    execute_callback=never_called,
                                    goal_callback=lambda _goal: GoalResponse.ACCEPT,
                                    handle_accepted_callback=self._on_accepted,
                                    cancel_callback=self._on_cancel)
        self._state_msg = JointTrajectoryControllerState()
        if hasattr(self._state_msg, 'speed_scaling_factor'):      # (no speed scaling here)
            self._state_msg.speed_scaling_factor = 1.0
        self._feedback_msg = FollowJointTrajectory.Feedback()
        self._has_index = hasattr(self._feedback_msg, 'index')
        self._monitor_timer = None
        self._state_timer = None
        self.apply_parameters({'action_monitor_rate', 'state_publish_rate'})

    # -- parameters -------------------------------------------------------------------------
    def check_parameter(self, p):
        """Raise ValueError when p is one of this module's parameters and not acceptable; return
        whether it was one."""
        if p.name in ('action_monitor_rate', 'state_publish_rate', 'stop_deceleration',
                      'constraints.stopped_velocity_tolerance', 'constraints.goal_time'):
            value = float(p.value)
            low = {'action_monitor_rate': 0.1, 'stop_deceleration': 1e-3}.get(p.name, 0.0)
            if not (math.isfinite(value) and value >= low):
                raise ValueError(f'{p.name} must be finite and >= {low}, got {value}')
            if p.name == 'state_publish_rate' and 0.0 < value < 0.1:
                raise ValueError(f'state_publish_rate must be 0 (off) or at least 0.1 Hz, got {value}')
            if p.name.endswith('_rate') and value > 1000.0:
                raise ValueError(f'{p.name} must be at most 1000 Hz, got {value}')
            return True
        if p.name in self._joint_parameters:
            value = float_array(p.name, p.value)
            if value.size != 1 or value[0] < 0.0:
                raise ValueError(f'{p.name} must be one number >= 0 (0 = no limit), got '
                                 f'{value.tolist()}')
            return True
        return False

    def apply_parameters(self, names):
        node = self._node
        if 'action_monitor_rate' in names:
            if self._monitor_timer is not None:
                node.destroy_timer(self._monitor_timer)
            self._monitor_timer = node.create_timer(1.0 / self._rate('action_monitor_rate', 20.0),
                                                    self._monitor)
            if not self._goals:
                self._monitor_timer.cancel()            # runs only while a goal is unfinished
        if 'state_publish_rate' in names:
            if self._state_timer is not None:
                node.destroy_timer(self._state_timer)
                self._state_timer = None
            rate = self._rate('state_publish_rate', 50.0)
            if rate > 0.0:
                if not hasattr(self, '_state_pub'):
                    self._state_pub = node.create_publisher(JointTrajectoryControllerState,
                                                            STATE_TOPIC, 10)
                self._state_timer = node.create_timer(1.0 / rate, self._publish_state)
        if not self._declaring and names & (self._joint_parameters | {
                'constraints.stopped_velocity_tolerance', 'constraints.goal_time'}):
            self._read_defaults()

    def _rate(self, name, default):
        """A rate parameter's value (Hz); a start-up value that is not acceptable (start-up values
        do not go through check_parameter) is logged and replaced by ``default``."""
        value = self._node.get_parameter(name).value
        try:
            self.check_parameter(Parameter(name, value=value))
        except (ValueError, TypeError) as exc:
            self._node.get_logger().error(f'{exc}: using {default} Hz')
            return default
        return float(value)

    def _read_defaults(self):
        node = self._node
        model = node.model
        if model is None:
            self._defaults = None
            return

        def per_joint(kind):
            return [float(node.get_parameter(f'constraints.{name}.{kind}').value)
                    for name in model.joint_names]

        try:
            self._defaults = Tolerances.defaults(
                model.joint_names, path_position=per_joint('trajectory'),
                goal_position=per_joint('goal'),
                goal_time=float(node.get_parameter('constraints.goal_time').value),
                stopped_velocity=float(node.get_parameter(
                    'constraints.stopped_velocity_tolerance').value))
        except ValueError as exc:       # a start-up value (not checked by check_parameter)
            node.get_logger().error(f'constraints.*: {exc}: using JTC\'s defaults')
            self._defaults = Tolerances.defaults(model.joint_names, goal_time=1.0)

    # -- the controller's events ------------------------------------------------------------
    def on_model(self, model, joint_order):
        """A new robot model (or none): goals end; ``constraints.<joint>.trajectory|goal`` are
        declared for its joints (JTC's per-joint tolerances, 0 = no limit)."""
        self.end_goals(ErrorCode.INVALID_GOAL, 'the robot model changed')
        self._last_step = None
        self._state_msg.joint_names = list(joint_order)
        self._feedback_msg.joint_names = list(joint_order)
        if model is not None:
            new = [(f'constraints.{name}.{kind}', 0.0, describe(
                       f'Position error bound of {name} {text} (rad or m) where the goal gives none '
                       '(0 = no limit).', min_value=0.0))
                   for name in model.joint_names
                   for kind, text in (('trajectory', 'along the path'), ('goal', 'at the goal'))
                   if f'constraints.{name}.{kind}' not in self._joint_parameters]
            self._declaring = True      # (the parameter callbacks run for each one declared)
            try:
                self._node.declare_parameters('', new)
            finally:
                self._declaring = False
            self._joint_parameters.update(name for name, _, _ in new)
        self._read_defaults()

    def end_goals(self, code, reason, keep=None):
        """Abort every unfinished goal but ``keep`` with ``code`` and ``reason``."""
        for run in list(self._goals):
            if run is not keep:
                self._finish(run, code, reason)

    def on_commit(self, run, start_ns, times):
        """A goal's trajectory took over at ``start_ns``: it executes, the others end."""
        if run.finished:
            return
        node = self._node
        self.end_goals(ErrorCode.INVALID_GOAL, 'preempted by a new goal', keep=run)
        end_ns = start_ns + round(float(times[-1]) * 1e9)
        run.monitor = GoalMonitor(node.model.joint_names, run.tolerances, start_ns, end_ns, times)

    def after_step(self, now_ns, q, qd, q_d, qd_d, qdd_d, tau):
        """Every control step (model order): remember it for the feedback and the state, check the
        executing goal's tolerances. Returns True when a violation ended the goal: the caller
        then holds the measured position."""
        self._last_step = (now_ns, q, qd, q_d, qd_d, qdd_d, tau)
        if not self._goals:
            return False
        run = self._goals[-1]
        if run.monitor is None or run.stopping:
            return False
        outcome = run.monitor.check(now_ns, q, qd, q_d, qd_d)
        if outcome is None:
            return False
        code, message = outcome
        self._finish(run, code, message, 'succeed' if code == ErrorCode.SUCCESSFUL else 'abort')
        return code != ErrorCode.SUCCESSFUL

    # -- the action server ------------------------------------------------------------------
    def _on_accepted(self, handle):
        """A goal accepted: executing from now on; checked and handed to the controller (or ended
        at once with the reason)."""
        run = GoalRun(self._server, handle)
        mark_executing(handle)
        self._goals.append(run)
        self._monitor_timer.reset()
        try:
            self._begin(run)
        except GoalError as exc:
            self._finish(run, exc.code, str(exc))

    def _begin(self, run):
        """Check the goal; hand its trajectory to the controller (GoalError: refused)."""
        node = self._node
        goal = run.handle.request
        trajectory = goal.trajectory
        why = node.reference_refusal()
        if why:
            raise GoalError(ErrorCode.INVALID_GOAL, why)
        if goal.multi_dof_trajectory.points or goal.multi_dof_trajectory.joint_names:
            raise GoalError(ErrorCode.INVALID_JOINTS, 'multi_dof_trajectory is not supported: this '
                                                      'controller has single-DOF joints only')
        error = goal_joint_error(trajectory.joint_names, node.joint_order,
                                 bool(node.get_parameter('allow_partial_joints_goal').value))
        if error:
            raise error
        points = trajectory.points
        if not points:
            raise GoalError(ErrorCode.INVALID_GOAL, 'the trajectory has no points')
        start_stamp_ns = stamp_ns(trajectory.header.stamp)
        last = points[-1].time_from_start
        error = old_stamp_error(start_stamp_ns, last.sec + last.nanosec * 1e-9,
                                node.get_clock().now().nanoseconds)
        if error:
            raise error
        if self._defaults is None:
            raise GoalError(ErrorCode.INVALID_GOAL, 'no robot model yet')
        run.tolerances = self._defaults.from_goal(
            node.model.joint_names,
            [(t.name, t.position, t.velocity, t.acceleration) for t in goal.path_tolerance],
            [(t.name, t.position, t.velocity, t.acceleration) for t in goal.goal_tolerance],
            goal.goal_time_tolerance.sec + goal.goal_time_tolerance.nanosec * 1e-9)
        node.follow(trajectory, start_stamp_ns, run)

    def refuse(self, run, exc):
        """The controller could not schedule ``run``'s trajectory: ``exc`` (a ValueError) says why."""
        self._finish(run, error_code_of(exc), str(exc))

    def _on_cancel(self, handle):
        """A cancel request: accepted for an unfinished goal; the arm is brought to rest now, the
        result follows at the next monitor tick (the goal is then CANCELING)."""
        run = next((r for r in self._goals if r.handle is handle), None)
        if run is None:
            return CancelResponse.REJECT
        if run is self._goals[-1] and run.monitor is not None and not run.stopping:
            run.stopping = True
            self._node.stop_motion()
        # (a goal whose trajectory is still being prepared is dropped when it would take over)
        return CancelResponse.ACCEPT

    def _finish(self, run, code, message, state='abort'):
        if run.finish(code, message, state):
            self._goals.remove(run)
            name = _CODE_NAMES.get(code, str(code)).lower()
            if code == ErrorCode.SUCCESSFUL:
                self._node.get_logger().info(f'goal {state}: {message}')
            else:
                self._throttle.warn(f'goal/{name}', f'goal aborted ({name.upper()}): {message}')
        if not self._goals and self._monitor_timer is not None:
            self._monitor_timer.cancel()

    def _monitor(self):
        """At action_monitor_rate while goals are unfinished: the cancelled goals' results, the
        executing goal's feedback."""
        for run in list(self._goals):
            if run.handle.is_cancel_requested:
                self._finish(run, ErrorCode.SUCCESSFUL,
                             'canceled: the arm was brought to rest and holds' if run.stopping
                             else 'canceled before its trajectory started', 'canceled')
        if not self._goals or self._last_step is None:
            return
        run = self._goals[-1]
        if run.monitor is None or run.finished:
            return
        now_ns = self._last_step[0]
        order = self._node.to_order
        msg = self._feedback_msg
        msg.header.stamp = stamp(now_ns)
        _fill_tracking(msg.desired, msg.actual, msg.error, self._last_step, order)
        if self._has_index:
            msg.index = run.monitor.index(now_ns)
        run.handle.publish_feedback(msg)

    def _publish_state(self):
        if self._last_step is None:
            return
        order = self._node.to_order
        msg = self._state_msg
        msg.header.stamp = stamp(self._last_step[0])
        _fill_tracking(msg.reference, msg.feedback, msg.error, self._last_step, order)
        msg.output.effort = float64_field(self._last_step[6][order])
        self._state_pub.publish(msg)

    def describe_goal(self):
        """'following a goal' / 'stopping a cancelled goal' / None, for the diagnostics."""
        if not self._goals:
            return None
        run = self._goals[-1]
        return 'stopping a cancelled goal' if run.stopping else 'following a goal'

    def destroy(self):
        self.end_goals(ErrorCode.INVALID_GOAL, 'the controller is shutting down')
        self._server.destroy()


def never_called(handle):
    """The ActionServer's required execute callback of a server whose goals end by GoalRun.finish (which
    passes its own): never called."""
    handle.abort()
    return FollowJointTrajectory.Result(error_code=ErrorCode.INVALID_GOAL,
                                        error_string='internal: goal executed without a run')


def _fill_tracking(desired, actual, error, step, order):
    """Three trajectory_msgs/JointTrajectoryPoint of a control step (now_ns, q, q̇, q_d, q̇_d, q̈_d,
    τ in model order), in the controller's joint ``order``: the desired (q_d, q̇_d, q̈_d), the actual
    (q, q̇) and the error (q_d − q, q̇_d − q̇); of the feedback and of the controller state alike."""
    _, q, qd, q_d, qd_d, qdd_d, _ = step
    desired.positions = float64_field(q_d[order])
    desired.velocities = float64_field(qd_d[order])
    desired.accelerations = float64_field(qdd_d[order])
    actual.positions = float64_field(q[order])
    actual.velocities = float64_field(qd[order])
    error.positions = float64_field((q_d - q)[order])
    error.velocities = float64_field((qd_d - qd)[order])

