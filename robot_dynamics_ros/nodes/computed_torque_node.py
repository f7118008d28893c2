"""computed_torque_controller: joint-space computed-torque control (Modern Robotics eq. 11.35).

    τ = M(q) (q̈_d + K_d ė + K_p e) + c(q, q̇) + g(q),   e = q_d − q,  ė = q̇_d − q̇

one call to the core's ``computed_torque``; efforts saturated at the URDF effort limits.

Topics (joint vectors in the controller's joint order: ``joints`` parameter, else model order):

- in  ``joint_states`` (sensor_msgs/JointState): measured q, q̇, merged by joint name.
- in  ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory; the topic of ros2_control's
  JointTrajectoryController): desired trajectory, joints by name
  (a subset of the controlled joints is allowed; the others hold). It is interpolated (quintic
  where accelerations are given, else cubic; velocities default to zero) and the last point is
  held. A new trajectory replaces the current one from its header.stamp (zero = now); if its first
  point has time_from_start > 0 it starts from the current desired state. An empty point list
  means "stop": hold the current position. References naming a joint the controller does not
  control, or malformed, are rejected with a warning. A reference that leaves the URDF limits is
  refused whole, with a warning naming the joint, the point and the limit, and the arm keeps doing
  what it did: a point beyond the position limits or faster than the velocity limit, or an
  interpolated segment between two points that overshoots either (its extrema, found from the
  roots of the polynomial's derivatives: ``interpolation.check_limits``); continuous joints have
  no position limits. (The scheduling is
  ``robot_dynamics_ros.logic.reference_schedule.ReferenceSchedule``, ROS-free; this node is its wiring.)
  The subscription takes the serialized message: a trajectory with more than
  ``max_trajectory_points`` points (or more joint names than the controller controls) is refused
  before rclpy converts it (``robot_dynamics_ros.logic.cdr``), so converting it never stalls control.
  One with more than ``INLINE_POINTS`` (200) points is interpolated in a background job
  (``robot_dynamics_ros.logic.background_job``: latest wins) while control goes on with the current
  reference, then takes over (its time still counts from its
  stamp, or its arrival); a newer reference, a hold, ``~/enable`` or a new model arriving
  meanwhile supersedes it (dropped with a warning).
  A reference stamped in the future waits for its start; at most ``max_pending_references`` may
  wait at once, further ones are refused with a warning.
- out ``effort_controller/commands`` (std_msgs/Float64MultiArray): τ, for ros2_control's
  JointGroupEffortController (or simulator_node).
- out ``~/tracking_error`` (sensor_msgs/JointState): position = e, velocity = ė.
- action ``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory) and out
  ``~/controller_state`` (control_msgs/msg/JointTrajectoryControllerState): JointTrajectoryController's
  interfaces, for MoveIt and the ros2_control tools (``nodes/trajectory_action.py``; the goals' checks
  and tolerances: ``robot_dynamics_ros.logic.trajectory_goal``). A goal's trajectory is scheduled as a topic
  reference is; invalid goals are accepted and aborted at once with JTC's error code and the reason;
  one goal at a time; cancel decelerates the desired motion to rest. Parameters
  ``allow_partial_joints_goal`` (false), ``action_monitor_rate`` (Hz, 20), ``state_publish_rate`` (Hz,
  50; 0 = off), ``stop_deceleration`` (rad/s² or m/s², 5), ``constraints.stopped_velocity_tolerance``
  (0.01), ``constraints.goal_time`` (s, 1; 0 = no limit), ``constraints.<joint>.trajectory`` and
  ``constraints.<joint>.goal`` (rad or m, 0 = no limit; declared once the model is known).
- out ``/diagnostics`` (diagnostic_msgs/DiagnosticArray), ``diagnostics_period`` (s, default 1; 0 =
  none), ``diagnostics_min_rate`` (Hz, default 0 = no check): one status
  ``computed_torque_controller: control`` (nodes/diagnostics_publisher.py: model, joint-state rate and
  age, drops by reason (refused goals under ``goal/<code>``), compute time, and ``mode``: disabled, holding,
  tracking, following a goal, stopping a cancelled goal or stale-hold); ERROR without a model or when
  the joint states are older than ``state_timeout``.

Services:

- ``~/enable`` (std_srvs/SetBool). Disabled, the reference is discarded and the output depends on
  ``disabled_mode``: ``gravity_compensation`` (default) publishes g(q) (plus the URDF friction
  torques of the measured velocity with ``friction_compensation``) for every joint state (at
  ``control_rate``), so the arm floats where it is and can be guided by hand (an arm disabled
  while moving keeps its momentum, which only joint friction takes away: ``~/hold`` first);
  ``zero_effort`` publishes a single all-zero command (so an effort controller that keeps its last
  command does not keep applying a stale torque), then nothing: an arm without brakes falls.
  Enabled again: the position at the next joint state is held.
- ``~/hold`` (std_srvs/Trigger): discard the reference, hold the current measured position.

Parameters: the model parameters of model_source, plus (settable at run time unless noted)

- ``armature``, ``effort_offset`` (model_source's, settable at run time): as every controller uses
  them (nodes/controller.py).
- ``kp``, ``kd`` (double arrays, 1 entry = same gain on every joint, or one per joint; >= 0).
- ``control_rate`` (Hz; 0 = one command per joint state), ``state_timeout`` (s, 0 = off: the
  gravity-only hold of stale states; when they resume, the position then is held), ``start_enabled``
  (read-only; with no reference it holds the position of the first complete joint state; disabled at
  start-up: ``disabled_mode`` applies): as every controller (nodes/controller.py).
- ``disabled_mode`` ('gravity_compensation' | 'zero_effort'): what a disabled controller publishes
  (see ``~/enable``). ``friction_compensation`` (bool, false): add the model's joint friction (the
  URDF's damping and friction, e.g. an identified URDF's): while tracking F_v q̇_d + F_c sgn(q̇_d) of
  the reference velocity, in gravity_compensation mode of the measured one.
- ``max_state_jump`` (rad, default 0.05; 0 = off), ``max_state_jump_prismatic`` (m, 0.01): a
  joint state whose stamp goes backwards, or in which a joint moved by more than this both from
  its previous position and from where its velocities put it (``input_guard.StateContinuity``),
  is a discontinuity (a simulator reset, an encoder re-homed): the reference is dropped and the
  position of that state is held, with a warning.
- ``max_trajectory_points`` (integer >= 1, default 10000): larger references are refused.
- ``max_pending_references`` (integer >= 1, default 100): future-stamped references that may wait.
- ``position_tolerance``, ``position_tolerance_prismatic``, ``velocity_limit_factor``: which joint
  states are physically possible (joint_state_input); ``max_description_bytes`` (model_source).
"""

import math

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.background_job import BackgroundJob
from robot_dynamics_ros.logic.cdr import header_stamp_ns
from robot_dynamics_ros.logic.input_guard import BadInput, bounded, short_list
from robot_dynamics_ros.logic.interpolation import JointLimits
from robot_dynamics_ros.logic.reference_intake import (
    INLINE_POINTS,
    ReferenceJob,
    checked_names,
    prepare,
    size_refusal,
)
from robot_dynamics_ros.logic.reference_schedule import (
    DEFAULT_MAX_PENDING,
    ReferenceSchedule,
    Superseded,
    TooManyPending,
)
from robot_dynamics_ros.logic.stamps import stamp_ns
from robot_dynamics_ros.logic.trajectory_goal import ErrorCode
from robot_dynamics_ros.nodes.common import (
    MAX_CONTROL_RATE,
    MIN_CONTROL_RATE,
    describe,
    gain_vector,
    run_node,
)
from robot_dynamics_ros.nodes.controller import COMPUTE_ERRORS, Controller, stamp
from robot_dynamics_ros.nodes.conversions import (
    all_finite,
    float64_field,
    joint_trajectory_arrays,
    joint_trajectory_reader,
    make_joint_state,
)
from robot_dynamics_ros.nodes.trajectory_action import AVAILABLE as ACTION_AVAILABLE, TrajectoryAction

__all__ = ['ComputedTorqueController', 'main', 'MIN_CONTROL_RATE', 'MAX_CONTROL_RATE',
           'INLINE_POINTS', 'DISABLED_MODES']

DEFAULT_MAX_TRAJECTORY_POINTS = 10000
_POLL_PERIOD = 0.005            # s between checks for a prepared reference (only while one is)
DISABLED_MODES = ('gravity_compensation', 'zero_effort')
TRAJECTORY_TOPIC = '~/joint_trajectory'     # as ros2_control's JointTrajectoryController


class ComputedTorqueController(Controller):
    """Computed-torque joint controller (see module docstring)."""

    UNFIT_GAINS = ('gains', 'kp/kd do not fit the model: no commands', False)

    def __init__(self, node_name='computed_torque_controller', **kwargs):
        super().__init__(node_name, 'position', **kwargs)
        # The desired trajectory over time; empty = hold the position of the next complete state.
        self._schedule = ReferenceSchedule()

        self.declare_parameter('kp', [100.0], describe(
            'Position gains K_p, 1/s^2: one value for every joint, or one per joint.',
            dynamic_typing=True, additional_constraints='1 or n numbers, each >= 0'))
        self.declare_parameter('kd', [20.0], describe(
            'Velocity gains K_d, 1/s: one value for every joint, or one per joint.',
            dynamic_typing=True, additional_constraints='1 or n numbers, each >= 0'))
        self.declare_parameter('max_trajectory_points', DEFAULT_MAX_TRAJECTORY_POINTS, describe(
            'References with more points are refused before they are deserialized.',
            integer=True, min_value=1, max_value=10_000_000))
        self.declare_parameter('max_pending_references', DEFAULT_MAX_PENDING, describe(
            'References stamped in the future that may wait for their start at once; more are '
            'refused.', integer=True, min_value=1, max_value=100_000))
        self.declare_parameter('disabled_mode', 'gravity_compensation', describe(
            'Output while disabled (~/enable false): gravity_compensation = g(q) for every joint '
            'state (the arm floats), zero_effort = one zero command, then nothing.',
            additional_constraints=f'one of {list(DISABLED_MODES)}'))
        self.declare_parameter('friction_compensation', False, describe(
            'Add the model\'s joint friction (URDF damping and friction, or an identified model\'s): '
            'while tracking, F_v qd_d + F_c sgn(qd_d) of the reference velocity; in gravity_compensation '
            'mode, of the measured velocity.'))
        self._disabled_mode = self.get_parameter('disabled_mode').value
        if self._disabled_mode not in DISABLED_MODES:        # a start-up value: not validated
            self.get_logger().error(f'disabled_mode {bounded(repr(self._disabled_mode), 100)} is '
                                    f'not one of {list(DISABLED_MODES)}: using gravity_compensation')
            self._disabled_mode = 'gravity_compensation'
        self._friction_compensation = bool(self.get_parameter('friction_compensation').value)
        self._read_limits()

        self._pub_error = self.create_publisher(JointState, '~/tracking_error', 10)
        # raw: the size is checked before rclpy converts the message
        self.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, self._on_reference_raw, 10,
                                 raw=True)
        # Long references are interpolated in a background job; this timer (steady clock: with
        # use_sim_time a ROS-time timer would wait for /clock) polls it, only while it is active.
        self._preparation = BackgroundJob('reference interpolation')
        self._poll_timer = self.create_timer(_POLL_PERIOD, self._poll_prepared,
                                             clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._poll_timer.cancel()
        if ACTION_AVAILABLE:
            self._action = TrajectoryAction(self, self._throttle)
        else:
            self._action = None
            self.get_logger().warning('control_msgs is not installed: no ~/follow_joint_trajectory '
                                      'action and no ~/controller_state (tools/build_interfaces.sh '
                                      'builds it; a ROS installation has it)')
        self._start('drops the reference and holds the new position')

    # -- parameters -------------------------------------------------------------------------
    def _check_parameter(self, p):
        if p.name in ('kp', 'kd'):
            gain_vector(p.name, p.value, self._n())
        elif self._action is not None and self._action.check_parameter(p):
            pass
        elif p.name == 'disabled_mode' and p.value not in DISABLED_MODES:
            raise ValueError(f'disabled_mode must be one of {list(DISABLED_MODES)}, got '
                             f'{bounded(repr(p.value), 100)}')
        else:
            super()._check_parameter(p)

    def _apply_parameters(self, params):
        names = {p.name for p in params}
        if names & {'kp', 'kd'}:
            self._update_gains()
        self._apply_timing(names)
        if names & {'max_trajectory_points', 'max_pending_references'}:
            self._read_limits()
        self._friction_compensation = bool(self.get_parameter('friction_compensation').value)
        if self._action is not None:
            self._action.apply_parameters(names)
        if 'disabled_mode' in names:
            mode = self.get_parameter('disabled_mode').value
            if mode != self._disabled_mode:
                self._disabled_mode = mode
                if not self.enabled:
                    self.get_logger().info(self._disable(self._input.latest()))

    def _read_limits(self):
        self._max_points = int(self.get_parameter('max_trajectory_points').value)
        self._schedule.max_pending = int(self.get_parameter('max_pending_references').value)

    def _update_gains(self):
        """Gains (kp, kd), each (n,) in model order; None (and an error) when they do not fit the model."""
        self._gains = None
        if self.model is None:
            return
        try:
            kp = gain_vector('kp', self.get_parameter('kp').value, self.model.nq)
            kd = gain_vector('kd', self.get_parameter('kd').value, self.model.nq)
        except ValueError as exc:
            self.get_logger().error(bounded(f'{exc}: no commands until kp and kd are set correctly'))
            return
        self._gains = kp[self._to_model], kd[self._to_model]

    # -- model ------------------------------------------------------------------------------
    @staticmethod
    def _warm_up_calls(model):
        """The core calls of a control step, to compile them before the first one."""
        ones = np.ones(model.nq)
        return (lambda q, qd: rd.computed_torque(model, q, qd, q, qd, qd, ones, ones),
                lambda q, qd: rd.gravity_torques(model, q))

    def _use_model(self, model):
        self._schedule.clear()
        self._schedule.limits = None if model is None else JointLimits.from_model(model)
        self._supersede_preparation('the robot model changed')  # (one under way: dropped at its commit)
        if model is not None:
            # the outgoing message, built once: each control step only refills its arrays
            self._error_msg = make_joint_state(self.joint_order)
            self._update_gains()
        if self._action is not None:
            self._action.on_model(model, self.joint_order)

    # -- reference --------------------------------------------------------------------------
    def _on_reference_raw(self, raw):
        """The serialized reference: refuse it by size, else deserialize and handle it."""
        why = self.reference_refusal()
        if why:
            self._throttle.warn('reference/no_model' if self.model is None else 'reference/disabled',
                                f'reference rejected: {why}')
            return
        refusal, names, points = size_refusal(raw, len(self.joint_order), self._max_points)
        if refusal is not None:
            self._throttle.warn(refusal[0], f'reference rejected: {refusal[1]}')
            return
        if names and points > INLINE_POINTS:
            # read from the bytes by the background job: only the stamp is needed now
            self._on_reference(raw, points, header_stamp_ns(raw))
            return
        try:
            msg = deserialize_message(raw, JointTrajectory)
        except Exception as exc:  # bytes the middleware delivered but rclpy cannot read
            self._throttle.warn('reference/malformed', f'reference rejected: unreadable ({exc})')
            return
        self._on_reference(msg, len(msg.points), stamp_ns(msg.header.stamp))

    def reference_refusal(self):
        """Why no reference is accepted now (no model, disabled), or None."""
        if self.model is None:
            return 'no robot model yet'
        if not self.enabled:
            return 'the controller is disabled (~/enable)'
        return None

    def follow(self, msg, stamp_ns, goal):
        """An action goal's trajectory (trajectory_action): scheduled as a topic reference is;
        refusals end the goal with their reason."""
        self._on_reference(msg, len(msg.points), stamp_ns, goal)

    def stop_motion(self):
        """A cancelled goal: the arm's measured motion decelerates to rest and is held there
        (ReferenceSchedule.stop from the measured q, q̇: where the arm is, not where the trajectory
        was, so a tracking error at that moment is not made up with a lunge); a reference being
        prepared is superseded."""
        state = self._input.latest()
        if self._schedule.empty or state is None:
            return
        self._supersede_preparation('a goal was cancelled')
        now_ns = self.get_clock().now().nanoseconds
        deceleration = float(self.get_parameter('stop_deceleration').value)
        if not (math.isfinite(deceleration) and deceleration > 0.0):   # (a start-up value)
            deceleration = 5.0
        rest_ns = self._schedule.stop(now_ns, deceleration, (state.q, state.qd, np.zeros_like(state.q)))
        self.get_logger().info(f'goal cancelled: stopping within {(rest_ns - now_ns) * 1e-9:.3f} s, '
                               'then holding')

    def _refuse(self, goal, key, message):
        """A reference refused: a goal ends with ``message`` (a ValueError's code), a topic
        reference is logged."""
        if goal is not None:
            self._action.refuse(goal, message if isinstance(message, ValueError) else ValueError(message))
        else:
            self._throttle.warn(key, f'reference rejected: {message}')

    def _supersede_preparation(self, reason):
        """The reference being prepared is superseded (dropped at its commit), the one waiting to be
        prepared dropped now: its goal ends with ``reason``."""
        self._refuse_waiting(self._preparation.cancel(), reason)

    def _refuse_waiting(self, submission, reason):
        if submission is not None and submission.tag.goal is not None:
            self._action.refuse(submission.tag.goal, ValueError(reason))

    def _on_reference(self, source, n_points, stamp_ns, goal=None):
        """A reference with a model, enabled: planned now (its start state is the desired state
        in force when it takes over), then read and interpolated, then committed to the schedule.
        ``source``: the deserialized message, read and interpolated here; or (more than
        INLINE_POINTS points) its serialized bytes, read and interpolated in the background job."""
        state = self._input.latest()        # (the reference's start: the desired state in force)
        if state is None:
            self._refuse(goal, 'reference/no_state', 'no complete joint state yet')
            return
        now_ns = self.get_clock().now().nanoseconds
        self._ensure_reference(state, now_ns)
        if n_points == 0:           # (a goal has points: trajectory_action checks)
            try:                    # well formed, and naming controlled joints only
                checked_names(joint_trajectory_arrays(source)[0], self.joint_order)
            except BadInput as exc:
                self._throttle.warn(f'reference/{exc.kind}', f'reference rejected: {exc}')
                return
            self._schedule.hold(state.q, now_ns)
            self._end_goals('an empty trajectory on ~/joint_trajectory: holding')
            self.get_logger().info('empty reference: holding the current position')
            return
        try:
            plan = self._schedule.plan(now_ns, stamp_ns)
        except TooManyPending as exc:
            self._refuse(goal, 'reference/pending', exc)
            return
        job = ReferenceJob(plan, joint_trajectory_reader(source), self.model, self.joint_order, now_ns, goal)
        if n_points > INLINE_POINTS:        # after the one under way (now superseded), if any
            self._refuse_waiting(self._preparation.submit(lambda: prepare(job), tag=job),
                                 'superseded by a newer trajectory before it started')
            self._poll_timer.reset()
            return
        self._supersede_preparation('superseded by a newer trajectory before it started')
        try:
            result, error = prepare(job), None
        except ValueError as exc:
            result, error = None, exc
        self._commit(job, result, error)

    def _poll_prepared(self):
        """Executor thread (the timer, while the background job is active): commit a reference it
        has prepared (the next one waiting then starts)."""
        outcome = self._preparation.poll()
        if not self._preparation.active:
            self._poll_timer.cancel()
        if outcome is not None:
            self._commit(outcome.tag, outcome.value, outcome.error, outcome.superseded)

    def _commit(self, job, result, error, superseded=False):
        """Executor thread: schedule a prepared reference (``result``; ``error``: why it is refused),
        unless something newer came first (``superseded``, or a new model or the schedule changed)."""
        goal = job.goal
        if goal is not None and (goal.finished or goal.handle.is_cancel_requested):
            return                          # ended (or cancelled) while it was prepared
        if error is not None:
            kind = error.kind if isinstance(error, BadInput) else 'waypoints'
            self._refuse(goal, f'reference/{kind}', error)
            return
        trajectory, names, times = result
        now_ns = self.get_clock().now().nanoseconds
        try:
            if superseded or job.model is not self.model or not self.enabled:
                raise Superseded('a newer reference, or a model change, came while it was prepared')
            self._schedule.commit(job.plan, trajectory, now_ns)
        except Superseded as exc:
            if goal is not None:
                self._refuse(goal, None, exc)
            else:
                self._throttle.warn('reference/superseded', f'reference of {len(times)} points '
                                                            f'dropped: {exc}')
            return
        except TooManyPending as exc:
            self._refuse(goal, 'reference/pending', exc)
            return
        if goal is not None:
            self._action.on_commit(goal, job.plan.start_ns, times)
        else:
            self._end_goals('replaced by a trajectory on ~/joint_trajectory')
        late = f' (prepared in {(now_ns - job.now_ns) * 1e-9:.3f} s)' if now_ns - job.now_ns > 1e7 else ''
        self.get_logger().info(
            f'new reference: {len(times)} points for {short_list(names)} over {times[-1]:.3f} s '
            f'starting {(job.plan.start_ns - job.now_ns) * 1e-9:+.3f} s from its arrival{late}',
            throttle_duration_sec=1.0)

    # -- the reference (Controller's hooks) ---------------------------------------------------
    def _reference_empty(self):
        return self._schedule.empty

    def _hold(self, state, now_ns, reason=None):
        """Hold the measured position of ``state`` from now_ns on; with a ``reason`` (a hold that
        replaces a reference), the reference being prepared is superseded and goals end with it."""
        self._schedule.hold(state.q, now_ns)
        if reason is not None:
            self._supersede_preparation(reason)
            self._end_goals(reason)
        return f'holding {np.round(state.q[self.to_order], 4).tolist()}'

    def _drop_reference(self, reason):
        self._schedule.clear()
        self._supersede_preparation(reason)
        self._end_goals(reason)

    def _end_goals(self, reason):
        """The action's unfinished goals end (aborted, ``reason``): the reference they followed
        was replaced or dropped."""
        if self._action is not None:
            self._action.end_goals(ErrorCode.INVALID_GOAL, reason)

    # -- diagnostics ------------------------------------------------------------------------
    def _mode(self):
        goal = self._action.describe_goal() if self._action is not None else None
        if goal is not None and self.enabled and not self._stale:
            return goal
        return super()._mode()

    def _tracking(self):
        return self._schedule.moving(self.get_clock().now().nanoseconds)

    def destroy_node(self):
        if self._action is not None:
            self._action.destroy()
        self._preparation.close(timeout=1.0)
        return super().destroy_node()

    def _control(self, state, now_ns):
        """The computed torque of the reference at now_ns from the measured ``state`` (after
        Controller._step's opening)."""
        q, qd = state.q, state.qd
        self._schedule.prune(now_ns)
        q_d, qd_d, qdd_d = self._schedule.sample(now_ns)
        kp, kd = self._gains
        try:
            tau = rd.computed_torque(self.model, q, qd, q_d, qd_d, qdd_d, kp, kd)
            # of the reference: no chatter from a noisy q̇ near rest; none where the firmware supplies it
            if self._friction_compensation and not self._hardware.firmware_adds_friction:
                tau = tau + rd.friction_torques(self.model, qd_d)
        except COMPUTE_ERRORS as exc:
            self._throttle.warn('compute/tau', f'cannot compute the computed torque: {exc}')
            return
        if self._command.publish(tau, q, qd):
            if self._action is not None and self._action.after_step(now_ns, q, qd, q_d, qd_d, qdd_d,
                                                                    tau):
                self._schedule.hold(q, now_ns)      # a tolerance violated: hold where the arm is
            order = self.to_order
            e, e_dot = (q_d - q)[order], (qd_d - qd)[order]
            if not all_finite(e, e_dot):       # (finite τ implies finite e unless a gain is 0)
                self._throttle.warn('nonfinite/error', 'tracking error not finite: not published')
                return
            msg = self._error_msg
            msg.header.stamp = stamp(now_ns)
            msg.position = float64_field(e)
            msg.velocity = float64_field(e_dot)
            self._pub_error.publish(msg)


def main(args=None):
    run_node(ComputedTorqueController, args)


if __name__ == '__main__':
    main()
