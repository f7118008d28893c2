"""computed_torque_controller: joint-space computed-torque control (Modern Robotics eq. 11.35).

    τ = M(q) (q̈_d + K_d ė + K_p e) + c(q, q̇) + g(q),   e = q_d − q,  ė = q̇_d − q̇

one call to the core's ``computed_torque``; efforts saturated at the URDF effort limits.

Topics (joint vectors in the controller's joint order: ``joints`` parameter, else model order):

- in  ``joint_states`` (sensor_msgs/JointState): measured q, q̇, merged by joint name.
- in  ``~/reference`` (trajectory_msgs/JointTrajectory): desired trajectory, joints by name
  (a subset of the controlled joints is allowed; the others hold). It is interpolated (quintic
  where accelerations are given, else cubic; velocities default to zero) and the last point is
  held. A new trajectory replaces the current one from its header.stamp (zero = now); if its first
  point has time_from_start > 0 it starts from the current desired state. An empty point list
  means "stop": hold the current position. References naming a joint the controller does not
  control, or malformed, are rejected with a warning. (The scheduling is
  ``robot_dynamics_ros.reference_schedule.ReferenceSchedule``, ROS-free; this node is its wiring.)
- out ``effort_controller/commands`` (std_msgs/Float64MultiArray): τ, for ros2_control's
  JointGroupEffortController (or simulator_node).
- out ``~/tracking_error`` (sensor_msgs/JointState): position = e, velocity = ė.

Services:

- ``~/enable`` (std_srvs/SetBool). Disabled: a single all-zero command is published (so an effort
  controller that keeps its last command does not keep applying a stale torque), then nothing.
  Enabled again: the reference is discarded and the position at the next joint state is held.
- ``~/hold`` (std_srvs/Trigger): discard the reference, hold the current measured position.

Parameters: the model parameters of model_source, plus (settable at run time unless noted)

- ``kp``, ``kd`` (double arrays, 1 entry = same gain on every joint, or one per joint; >= 0).
- ``control_rate`` (Hz, >= 0): 0 = one command per joint-state message; > 0 = timer.
- ``state_timeout`` (s, >= 0, 0 = off): when any joint's state is older than this, stop tracking,
  publish the gravity-only holding torque g(q) of the last state, warn; when states resume, hold
  the position at that moment (the reference is discarded).
- ``start_enabled`` (bool, read-only): enabled at start-up; with no reference it holds the
  position of the first complete joint state.
"""

import numpy as np
from builtin_interfaces.msg import Time
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.limits import saturate_effort
from robot_dynamics_ros.nodes.common import WarningThrottle, describe, gain_vector, run_node, warm_up
from robot_dynamics_ros.nodes.conversions import (
    all_finite,
    float64_field,
    index_map,
    joint_trajectory_arrays,
    make_joint_state,
    vector_to_multiarray,
)
from robot_dynamics_ros.nodes.joint_state_input import JointStateInput
from robot_dynamics_ros.nodes.model_source import ModelSource
from robot_dynamics_ros.reference_schedule import ReferenceSchedule

__all__ = ['ComputedTorqueController', 'main']


class ComputedTorqueController(Node):
    """Computed-torque joint controller (see module docstring)."""

    def __init__(self, node_name='computed_torque_controller', **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = WarningThrottle(self.get_logger())
        self.model = None
        self.joint_order = ()
        self._to_order = self._to_model = None
        self._kp = self._kd = None          # (n,) in model order, None while invalid
        # The desired trajectory over time; empty = hold the position of the next complete state.
        self._schedule = ReferenceSchedule()
        self._stale = False
        self._timer = None

        self.declare_parameter('kp', [100.0], describe(
            'Position gains K_p, 1/s^2: one value for every joint, or one per joint.',
            dynamic_typing=True, additional_constraints='1 or n numbers, each >= 0'))
        self.declare_parameter('kd', [20.0], describe(
            'Velocity gains K_d, 1/s: one value for every joint, or one per joint.',
            dynamic_typing=True, additional_constraints='1 or n numbers, each >= 0'))
        self.declare_parameter('control_rate', 0.0, describe(
            'Control rate in Hz; 0 = compute and publish on every joint-state message.',
            min_value=0.0, max_value=10000.0))
        self.declare_parameter('state_timeout', 0.1, describe(
            'Seconds without a joint state after which the controller stops tracking and '
            'publishes the gravity-only holding torque (0 = never).', min_value=0.0))
        self.declare_parameter('start_enabled', True, describe(
            'Start enabled (holding the first measured position until a reference arrives).',
            read_only=True))
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        self.enabled = bool(self.get_parameter('start_enabled').value)
        self._state_timeout = float(self.get_parameter('state_timeout').value)
        self._control_rate = float(self.get_parameter('control_rate').value)

        self._pub_command = self.create_publisher(Float64MultiArray,
                                                  'effort_controller/commands', 10)
        self._pub_error = self.create_publisher(JointState, '~/tracking_error', 10)
        self.create_subscription(JointTrajectory, '~/reference', self._on_reference, 10)
        self.create_service(SetBool, '~/enable', self._on_enable)
        self.create_service(Trigger, '~/hold', self._on_hold)
        self._input = JointStateInput(self, self._throttle, self._on_state)
        self._make_timer()
        self._source = ModelSource(self, self._on_model)
        self._source.start()

    # -- parameters -------------------------------------------------------------------------
    def _n(self):
        return self.model.nq if self.model is not None else None

    def _validate_parameters(self, params):
        try:
            for p in params:
                if p.name in ('kp', 'kd'):
                    gain_vector(p.name, p.value, self._n())
                elif p.name in ('control_rate', 'state_timeout'):
                    if not (np.isfinite(p.value) and p.value >= 0.0):
                        raise ValueError(f'{p.name} must be finite and >= 0, got {p.value}')
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _apply_parameters(self, params):
        names = {p.name for p in params}
        if names & {'kp', 'kd'}:
            self._update_gains()
        if names & {'control_rate', 'state_timeout'}:
            self._state_timeout = float(self.get_parameter('state_timeout').value)
            self._control_rate = float(self.get_parameter('control_rate').value)
            self._make_timer()

    def _update_gains(self):
        """Gains in model order; None (and an error) when they do not fit the model."""
        self._kp = self._kd = None
        if self.model is None:
            return
        try:
            kp = gain_vector('kp', self.get_parameter('kp').value, self.model.nq)
            kd = gain_vector('kd', self.get_parameter('kd').value, self.model.nq)
        except ValueError as exc:
            self.get_logger().error(f'{exc}: no commands until kp and kd are set correctly')
            return
        self._kp, self._kd = kp[self._to_model], kd[self._to_model]

    def _make_timer(self):
        """Control timer at control_rate, or (rate 0) a watchdog that detects stale states."""
        if self._timer is not None:
            self.destroy_timer(self._timer)
            self._timer = None
        if self._control_rate > 0.0:
            # (a lambda: rclpy hands a TimerInfo to a callback that takes an argument)
            self._timer = self.create_timer(1.0 / self._control_rate, lambda: self._step())
        elif self._state_timeout > 0.0:
            self._timer = self.create_timer(min(max(self._state_timeout / 2, 0.005), 0.5),
                                            self._watchdog)

    # -- model ------------------------------------------------------------------------------
    def _on_model(self, model, joint_order):
        self.model = model
        self.joint_order = joint_order
        self._schedule.clear()
        self._stale = False
        self._throttle.reset()
        if model is None:
            self._input.reset(None)
            self._kp = self._kd = None
            return
        self._to_order = index_map(model.joint_names, joint_order)
        self._to_model = index_map(joint_order, model.joint_names)
        # the outgoing messages, built once: each control step only refills their arrays
        self._command_msg = vector_to_multiarray(np.zeros(model.nq))
        self._error_msg = make_joint_state(joint_order)
        self._input.reset(model.joint_names)
        self._update_gains()
        warm_up(self.get_logger(), model, (
            lambda q, qd: rd.computed_torque(model, q, qd, q, qd, qd, np.ones(model.nq),
                                             np.ones(model.nq)),
            lambda q, qd: rd.gravity_torques(model, q)))

    # -- reference --------------------------------------------------------------------------
    def _on_reference(self, msg):
        if self.model is None:
            self._throttle.warn('reference/no_model', 'reference rejected: no robot model yet')
            return
        if not self.enabled:
            self._throttle.warn('reference/disabled',
                                'reference rejected: the controller is disabled (~/enable)')
            return
        try:
            names, times, positions, velocities, accelerations = joint_trajectory_arrays(msg)
            unknown = [name for name in names if name not in self.joint_order]
            if unknown:
                raise ValueError(f'it names joints {unknown} that this controller does not '
                                 f'control (it controls {list(self.joint_order)})')
        except ValueError as exc:
            self._throttle.warn(f'reference/bad/{exc}', f'reference rejected: {exc}')
            return
        now_ns = self.get_clock().now().nanoseconds
        if not self._ensure_reference(now_ns):
            self._throttle.warn('reference/no_state',
                                'reference rejected: no complete joint state yet')
            return
        if times.size == 0:
            q, _ = self._input.cache.arrays()
            self._schedule.hold(q, now_ns)
            self.get_logger().info('empty reference: holding the current position')
            return
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        columns = index_map(self.model.joint_names, names)
        try:
            start_ns = self._schedule.add_waypoints(now_ns, stamp_ns, times, positions, velocities,
                                                    accelerations, columns=columns)
        except ValueError as exc:
            self._throttle.warn(f'reference/bad/{exc}', f'reference rejected: {exc}')
            return
        self.get_logger().info(
            f'new reference: {len(times)} points for {names} over {times[-1]:.3f} s '
            f'starting {(start_ns - now_ns) * 1e-9:+.3f} s from now')

    def _ensure_reference(self, now_ns):
        """Latch the hold position if one is pending; False while there is no complete state."""
        if not self._input.complete:
            return False
        if self._schedule.empty:
            q, _ = self._input.cache.arrays()
            self._schedule.hold(q, now_ns)
        return True

    # -- services ---------------------------------------------------------------------------
    def _on_enable(self, request, response):
        if request.data and not self.enabled:
            self.enabled = True
            self._schedule.clear()          # hold the position of the next complete state
            self._stale = False
            response.message = 'enabled: holding the current position'
        elif not request.data and self.enabled:
            self.enabled = False
            self._schedule.clear()
            if self.model is not None:
                self._pub_command.publish(vector_to_multiarray(np.zeros(self.model.nq)))
            response.message = 'disabled: published one zero command, no commands from now on'
        else:
            response.message = f"already {'enabled' if self.enabled else 'disabled'}"
        self.get_logger().info(response.message)
        response.success = True
        return response

    def _on_hold(self, request, response):
        if not self.enabled:
            response.success, response.message = False, 'the controller is disabled'
        elif not self._input.complete:
            response.success, response.message = False, 'no complete joint state yet'
        else:
            q, _ = self._input.cache.arrays()
            self._schedule.hold(q, self.get_clock().now().nanoseconds)
            response.success = True
            response.message = f'holding {np.round(q[self._to_order], 4).tolist()}'
            self.get_logger().info(response.message)
        return response

    # -- control ----------------------------------------------------------------------------
    def _on_state(self, _msg):
        if self._control_rate == 0.0:
            self._step(self._input.last_ns)

    def _is_stale(self, now_ns):
        if self._state_timeout <= 0.0:
            return False
        age = (now_ns - self._input.cache.oldest_update_ns()) * 1e-9
        return age > self._state_timeout

    def _watchdog(self):
        if self.enabled and self.model is not None and self._input.complete:
            now_ns = self.get_clock().now().nanoseconds
            if self._is_stale(now_ns):
                self._hold_against_gravity()

    def _hold_against_gravity(self):
        """Stale joint states: gravity-only holding torque g(q) at the last measured q."""
        if not self._stale:
            self._stale = True
            self._schedule.clear()          # hold where the robot is when states resume
        self._throttle.warn('stale', f'joint states older than state_timeout = '
                                     f'{self._state_timeout} s: publishing gravity-only holding '
                                     'torque, tracking stopped')
        q, _ = self._input.cache.arrays()
        try:
            tau = rd.gravity_torques(self.model, q)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            self._throttle.warn('compute/gravity', f'cannot compute gravity torques: {exc}')
            return
        self._publish_command(tau)

    def _step(self, now_ns=None):
        """One control update at node-clock time now_ns (default: now)."""
        if not self.enabled or self.model is None or not self._input.check_complete():
            return
        if now_ns is None:
            now_ns = self.get_clock().now().nanoseconds
        if self._is_stale(now_ns):
            self._hold_against_gravity()
            return
        if self._stale:
            self._stale = False
            self.get_logger().warning('joint states resumed: holding the current position')
        if self._kp is None:
            self._throttle.warn('gains', 'kp/kd do not fit the model: no commands')
            return
        self._ensure_reference(now_ns)
        q, qd = self._input.cache.arrays()
        self._schedule.prune(now_ns)
        q_d, qd_d, qdd_d = self._schedule.sample(now_ns)
        try:
            tau = rd.computed_torque(self.model, q, qd, q_d, qd_d, qdd_d, self._kp, self._kd)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
            self._throttle.warn('compute/tau', f'cannot compute the computed torque: {exc}')
            return
        if self._publish_command(tau):
            order = self._to_order
            msg = self._error_msg
            msg.header.stamp = Time(sec=now_ns // 1_000_000_000, nanosec=now_ns % 1_000_000_000)
            msg.position = float64_field((q_d - q)[order])
            msg.velocity = float64_field((qd_d - qd)[order])
            self._pub_error.publish(msg)

    def _publish_command(self, tau):
        """Saturate, check finite, publish in joint order; True when published."""
        if not all_finite(tau):
            self._throttle.warn('nonfinite', f'computed torque is not finite ({tau}): '
                                             'nothing published')
            return False
        tau, saturated = saturate_effort(self.model, tau)
        for i in np.flatnonzero(saturated) if saturated.any() else ():
            name = self.model.joint_names[i]
            self._throttle.once(f'saturated/{name}',
                                f'effort of {name} saturated at its URDF limit '
                                f'{abs(tau[i]):g} (warned once per joint)')
        self._command_msg.data = float64_field(tau[self._to_order])
        self._pub_command.publish(self._command_msg)
        return True


def main(args=None):
    run_node(ComputedTorqueController, args)


if __name__ == '__main__':
    main()
