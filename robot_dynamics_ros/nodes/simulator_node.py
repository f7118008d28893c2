"""simulator_node: forward-dynamics simulation of the robot model, a stand-in for the hardware.

Every step (``dt`` of simulated time) it integrates M(q) q̈ + c + g + friction + Jᵀ F_tip = τ with
the core's ``rk4_step`` / ``semi_implicit_euler_step`` / ``euler_step``, then enforces the joint
position limits (hard stops: ``limits.enforce_position_limits``). Simulated time = steps × dt.

Joint vectors are in the simulator's joint order (``joints`` parameter, else model order).

Topics:

- in  ``effort_controller/commands`` (std_msgs/Float64MultiArray): joint efforts, saturated at the
  URDF effort limits. A message of the wrong size, or with NaN/inf, is dropped with a warning (as
  ros2_control's JointGroupEffortController does). No command for ``command_timeout`` s of
  simulated time: zero effort.
- in  ``~/external_wrench`` (geometry_msgs/WrenchStamped): wrench exerted ON the robot by the
  environment at the tip frame (``tip_link`` / model.tip_frame), torque about the frame origin,
  expressed in the tip frame; header.frame_id must be empty or the tip frame. Applied until the
  next message (a zero wrench removes it) or, if ``external_wrench_timeout`` > 0, for that long.
- out ``joint_states`` (sensor_msgs/JointState, /joint_states in the root namespace) every
  1/``publish_rate`` s of simulated time: position, velocity, effort = the applied (saturated)
  effort. While paused, the frozen state is republished at ``publish_rate`` (wall time).
- out ``/clock`` (rosgraph_msgs/Clock) with the simulated time, when ``publish_clock`` is true;
  the simulator then stamps its messages with the simulated time, else with its node clock.
- out ``robot_description`` (std_msgs/String, TRANSIENT_LOCAL) when the model came from
  ``urdf_path``, so every node of the graph can share that one model.

Services: ``~/reset`` (std_srvs/Trigger: initial positions, zero velocity, no command or wrench;
simulated time continues), ``~/pause`` (std_srvs/SetBool: true = pause, false = resume).

Parameters: the model parameters of model_source, plus

- ``integrator`` ('rk4' | 'semi_implicit_euler' | 'euler'; settable at run time),
- ``dt`` (s, > 0, read-only), ``friction`` (bool: URDF <dynamics damping/friction>),
- ``publish_rate`` (Hz, > 0), ``publish_clock`` (bool, read-only), ``real_time_factor``
  (>= 0; 0 = as fast as possible), ``initial_positions`` (double array in joint order, [] = zeros
  clipped into the position limits; used at start-up and by ~/reset), ``command_timeout`` (s, > 0),
  ``external_wrench_timeout`` (s, >= 0, 0 = until the next message), ``lockstep_timeout`` (s of
  wall time, >= 0; see lock-step below).

The stepping runs in a steady-clock timer (never the ROS clock: with use_sim_time the simulator
would wait for its own /clock): each tick advances the simulation by the elapsed wall time ×
real_time_factor, returning right after each joint-state publication (so a controller in the
same executor answers every state before the simulation runs on); a backlog beyond two
publication periods is dropped with a warning (the simulation then runs slower than real time,
like Gazebo, instead of running open loop in bursts). At real_time_factor 0 the timer has period
0 (it runs whenever the executor has nothing else to do) and steps for at most ``FAST_BUDGET`` s
of wall time per tick.

Lock-step with the controller: after publishing a state the simulator may wait (at most
``lockstep_timeout`` s of wall time, default 0.05 s, without stepping) for the next effort
command. In real time it does so once a controller has answered ``LOCKSTEP_STREAK`` states in a
row (a controller on every joint state, in this process or another one): a controller starved of
CPU then slows the simulation down instead of leaving it open loop. At real_time_factor 0 it does
so whenever some node publishes commands, so the loop runs as in real time, only faster. A wait
that times out (controller disabled or slower than publish_rate) ends lock-step until the
controller answers again; on a loaded machine a controller may miss 0.05 s now and then, so a
loop that must stay in lock-step (a test, a reproducible run) raises ``lockstep_timeout``. 0 never
waits.
"""

import math
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.time import Time
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.limits import (
    clip_positions, enforce_position_limits, saturate_effort)
from robot_dynamics_ros.nodes.common import (
    WarningThrottle, describe, float_array, run_node, warm_up)
from robot_dynamics_ros.nodes.conversions import (
    all_finite, index_map, make_joint_state, multiarray_to_vector)
from robot_dynamics_ros.nodes.model_source import ROBOT_DESCRIPTION_QOS, ModelSource

__all__ = ['SimulatorNode', 'main', 'INTEGRATORS']

INTEGRATORS = {
    'rk4': 'rk4_step',
    'semi_implicit_euler': 'semi_implicit_euler_step',
    'euler': 'euler_step',
}
FAST_BUDGET = 0.01     # s of wall time spent stepping per tick at real_time_factor 0
LOCKSTEP_STREAK = 3      # real time: states answered in a row before the simulator waits


class SimulatorNode(Node):
    """Forward-dynamics simulator (see module docstring)."""

    def __init__(self, node_name='simulator_node', **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = WarningThrottle(self.get_logger())
        self.model = None
        self.joint_order = ()
        self._to_order = self._to_model = None
        self.q = self.qd = self.tau = None     # model order
        self.steps = 0                          # simulated time = steps * dt
        self.paused = False
        self._command = None                    # (n,) model order
        self._command_steps = 0                 # step count when the command arrived
        self._command_timed_out = True
        self._f_tip = None                      # wrench the robot exerts on the environment
        self._wrench_steps = 0
        self._next_publish_steps = 0.0
        self._sim_budget = 0.0                  # simulated seconds owed to real time
        self._published = False                 # the last step published a joint state
        self._dropped = 0.0                     # simulated seconds dropped (CPU too slow)
        self._command_seq = 0                   # valid commands received
        self._lockstep = True                   # rtf 0: wait for commands (until a timeout)
        self._awaiting = None                   # (command_seq, since) while waiting
        self._answered = 0                      # consecutive states answered by a command
        self._seq_at_publication = 0            # command_seq when the last state was published
        self._clock_steps = -1                  # step count last published on /clock
        self._last_wall = time.monotonic()
        self._last_paused_publish = -math.inf

        self.declare_parameter('integrator', 'rk4', describe(
            'Integration method of the forward dynamics.',
            additional_constraints=f'one of {sorted(INTEGRATORS)}'))
        self.declare_parameter('dt', 0.001, describe(
            'Integration step, s of simulated time.', read_only=True, min_value=1e-6,
            max_value=0.1))
        self.declare_parameter('friction', True, describe(
            'Apply the URDF joint damping (viscous) and friction (Coulomb).'))
        self.declare_parameter('publish_rate', 100.0, describe(
            'joint_states rate, Hz of simulated time.', min_value=0.1, max_value=10000.0))
        self.declare_parameter('publish_clock', False, describe(
            'Publish the simulated time on /clock and stamp messages with it.', read_only=True))
        self.declare_parameter('real_time_factor', 1.0, describe(
            'Simulated seconds per wall-clock second; 0 = as fast as possible.', min_value=0.0,
            max_value=1000.0))
        self.declare_parameter('initial_positions', [], describe(
            'Initial joint positions in joint order (start-up and ~/reset); [] = zeros clipped '
            'into the position limits.', dynamic_typing=True,
            additional_constraints='[] or n finite numbers'))
        self.declare_parameter('command_timeout', 0.5, describe(
            'Simulated seconds without a command after which the effort is zero.',
            min_value=1e-6))
        self.declare_parameter('external_wrench_timeout', 0.0, describe(
            'Simulated seconds an external wrench is applied after its message (0 = until the '
            'next message).', min_value=0.0))
        self.declare_parameter('lockstep_timeout', 0.05, describe(
            'Wall-clock seconds the simulation waits at most for the command answering a joint '
            'state (lock-step with the controller); 0 = never wait.', min_value=0.0,
            max_value=60.0))
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        self.dt = float(self.get_parameter('dt').value)
        self._publish_clock = bool(self.get_parameter('publish_clock').value)
        self._read_settings()

        self._pub_joint_states = self.create_publisher(JointState, 'joint_states', 10)
        self._pub_clock = (self.create_publisher(ClockMsg, '/clock', 10)
                           if self._publish_clock else None)
        self._pub_description = None
        self._sub_command = self.create_subscription(
            Float64MultiArray, 'effort_controller/commands', self._on_command, 10)
        self.create_subscription(WrenchStamped, '~/external_wrench', self._on_wrench, 10)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_service(SetBool, '~/pause', self._on_pause)
        self._source = ModelSource(self, self._on_model)
        self._source.start()
        if self._source.origin == 'file' and self._source.urdf_xml is not None:
            self._pub_description = self.create_publisher(String, 'robot_description',
                                                          ROBOT_DESCRIPTION_QOS)
            self._pub_description.publish(String(data=self._source.urdf_xml))
        self._timer = None
        self._make_timer()

    def _make_timer(self):
        """The stepping timer, on the steady clock: period 0 at real_time_factor 0."""
        if self._timer is not None:
            self.destroy_timer(self._timer)
        if self._settings['real_time_factor'] > 0.0:
            period = min(max(self.dt, 0.001), 1.0 / self._settings['publish_rate'])
        else:
            period = 0.0
        self._last_wall = time.monotonic()
        self._sim_budget = 0.0
        self._timer = self.create_timer(period, self._tick,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))

    # -- parameters -------------------------------------------------------------------------
    def _validate_parameters(self, params):
        try:
            for p in params:
                if p.name == 'integrator' and p.value not in INTEGRATORS:
                    raise ValueError(f'integrator must be one of {sorted(INTEGRATORS)}, '
                                     f'got {p.value!r}')
                if p.name == 'initial_positions':
                    values = float_array('initial_positions', p.value)
                    if self.model is not None and values.size not in (0, self.model.nq):
                        raise ValueError(f'initial_positions must have 0 or {self.model.nq} '
                                         f'entries, got {values.size}')
                if p.name in ('publish_rate', 'real_time_factor', 'command_timeout',
                              'external_wrench_timeout', 'lockstep_timeout') \
                        and not math.isfinite(p.value):
                    raise ValueError(f'{p.name} must be finite')
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        return SetParametersResult(successful=True)

    def _apply_parameters(self, params):
        self._read_settings()
        if {p.name for p in params} & {'real_time_factor', 'publish_rate'}:
            self._make_timer()

    def _read_settings(self):
        names = ('integrator', 'friction', 'publish_rate', 'real_time_factor', 'command_timeout',
                 'external_wrench_timeout', 'lockstep_timeout')
        self._settings = {name: self.get_parameter(name).value for name in names}
        self._step_function = getattr(rd, INTEGRATORS[self._settings['integrator']])

    # -- model and state --------------------------------------------------------------------
    def _on_model(self, model, joint_order):
        self.model = model
        self.joint_order = joint_order
        if model is None:
            self.q = self.qd = self.tau = None
            return
        self._to_order = index_map(model.joint_names, joint_order)
        self._to_model = index_map(joint_order, model.joint_names)
        self._reset_state()
        friction = True if self._settings['friction'] else None
        f_tip = np.zeros(6)
        warm_up(self.get_logger(), model, (
            lambda q, qd: self._step_function(model, q, qd, qd, self.dt, friction=friction),
            lambda q, qd: self._step_function(model, q, qd, qd, self.dt, f_tip=f_tip,
                                              frame=model.tip_frame, friction=friction)))
        self._last_wall = time.monotonic()

    def initial_state(self):
        """(q0, qd0) in model order from ``initial_positions``, clipped into the limits."""
        n = self.model.nq
        values = float_array('initial_positions', self.get_parameter('initial_positions').value)
        if values.size == 0:
            q0 = np.zeros(n)
        elif values.size == n:
            q0 = values[self._to_model]
        else:
            self.get_logger().error(f'initial_positions has {values.size} entries for {n} joints: '
                                    'using zeros')
            q0 = np.zeros(n)
        clipped = clip_positions(self.model, q0)
        if values.size and not np.array_equal(clipped, q0):
            self.get_logger().warning('initial_positions outside the position limits: clipped to '
                                      f'{clipped[self._to_order].tolist()}')
        return clipped, np.zeros(n)

    def _reset_state(self):
        self.q, self.qd = self.initial_state()
        self.tau = np.zeros(self.model.nq)
        self._command = None
        self._command_timed_out = True
        self._f_tip = None
        self._awaiting = None
        self._next_publish_steps = float(self.steps)  # publish the new state at once

    @property
    def sim_time(self):
        """Simulated time in seconds."""
        return self.steps * self.dt

    # -- inputs -----------------------------------------------------------------------------
    def _on_command(self, msg):
        if self.model is None:
            self._throttle.warn('command/no_model', 'command ignored: no robot model yet')
            return
        try:
            tau = multiarray_to_vector(msg, self.model.nq)
        except ValueError as exc:
            self._throttle.warn(f'command/bad/{exc}'[:80],
                                f'dropping an effort command: {exc} (joint order '
                                f'{list(self.joint_order)})')
            return
        self._command = tau[self._to_model]
        self._command_steps = self.steps
        self._command_timed_out = False
        self._command_seq += 1
        self._lockstep = True

    def _on_wrench(self, msg):
        if self.model is None:
            return
        frame = msg.header.frame_id
        if frame not in ('', self.model.tip_frame):
            self._throttle.warn(f'wrench/frame/{frame}',
                                f"dropping an external wrench in frame '{frame}': it must be "
                                f"expressed in the tip frame '{self.model.tip_frame}' (or '')")
            return
        w = msg.wrench
        on_robot = np.array([w.torque.x, w.torque.y, w.torque.z, w.force.x, w.force.y, w.force.z])
        if not all_finite(on_robot):
            self._throttle.warn('wrench/nonfinite', 'dropping a non-finite external wrench')
            return
        # The core's f_tip is the wrench the robot exerts ON the environment (eq. 8.1): minus
        # the wrench the environment exerts on the robot, angular first.
        self._f_tip = None if not on_robot.any() else -on_robot
        self._wrench_steps = self.steps

    # -- services ---------------------------------------------------------------------------
    def _on_reset(self, request, response):
        if self.model is None:
            response.success, response.message = False, 'no robot model'
            return response
        self._reset_state()
        self._sim_budget = 0.0
        response.success = True
        response.message = (f'reset to {self.q[self._to_order].tolist()} at simulated time '
                            f'{self.sim_time:.3f} s')
        self.get_logger().info(response.message)
        return response

    def _on_pause(self, request, response):
        self.paused = bool(request.data)
        self._last_wall = time.monotonic()
        self._sim_budget = 0.0
        self._awaiting = None
        response.success = True
        response.message = f"{'paused' if self.paused else 'running'} at simulated time " \
                           f'{self.sim_time:.3f} s'
        self.get_logger().info(response.message)
        return response

    # -- simulation loop --------------------------------------------------------------------
    def _tick(self):
        now = time.monotonic()
        elapsed, self._last_wall = now - self._last_wall, now
        if self.model is None:
            return
        if self.paused:
            if now - self._last_paused_publish >= 1.0 / self._settings['publish_rate']:
                self._last_paused_publish = now
                self._publish_state()
            return
        rtf = self._settings['real_time_factor']
        if rtf > 0.0:
            # Owe at most two publication periods: beyond that, simulated time is dropped (the
            # simulation runs slower than real time, as Gazebo does) rather than simulated in one
            # open-loop burst that a controller could not react to.
            publish_period = 1.0 / self._settings['publish_rate']
            limit = 2.0 * max(publish_period, self.dt)
            self._sim_budget += elapsed * rtf
            if self._sim_budget > limit:
                self._dropped += self._sim_budget - limit
                self._sim_budget = limit
                if self._dropped > 0.05:
                    self._throttle.warn('lag', f'simulation slower than real_time_factor {rtf:g}: '
                                               f'{self._dropped:.3f} s of simulated time '
                                               'dropped so far (CPU overloaded, or waiting for '
                                               'a controller)')
        if self._waiting_for_command(now):
            return
        if rtf > 0.0:
            # Stop after publishing a state: the controller answers it before the simulation
            # runs on (the tick is due again at once if behind).
            while self._sim_budget >= self.dt * (1 - 1e-9):
                self._sim_budget -= self.dt
                if not self._step() or self._published:
                    break
        else:
            deadline = now + FAST_BUDGET
            while time.monotonic() < deadline and self._step():
                if self._awaiting is not None:
                    break
        if self._pub_clock is not None and self._clock_steps != self.steps:
            self._clock_steps = self.steps
            self._pub_clock.publish(ClockMsg(clock=self._stamp()))

    def _waiting_for_command(self, now):
        """Lock-step: True while the simulation waits for the answer to the last state."""
        if self._awaiting is None:
            return False
        seq, since = self._awaiting
        if self._command_seq != seq:
            self._awaiting = None
            return False
        timeout = self._settings['lockstep_timeout']
        if now - since < timeout:
            return True
        self._awaiting = None
        self._answered = 0
        self._lockstep = False
        self._throttle.warn('lockstep', f'no command within {timeout:g} s of a joint state '
                                        '(lockstep_timeout): running on without waiting for '
                                        'commands')
        return False

    def _after_publication(self):
        """Decide whether to wait for the command answering the state just published.

        Real time (real_time_factor > 0): once a controller has answered LOCKSTEP_STREAK
        consecutive states each before the next one (a controller on every joint state), wait
        for its answer, so a controller descheduled by a busy CPU cannot leave the simulation
        running open loop. A slower (timer-driven) controller never builds the streak and is not
        waited for. As fast as possible (0): wait whenever some node publishes commands, until a
        wait times out (then again after the next command).
        """
        answered = self._command_seq != self._seq_at_publication
        self._answered = self._answered + 1 if answered else 0
        self._seq_at_publication = self._command_seq
        if self._settings['real_time_factor'] > 0.0:
            wait = self._answered >= LOCKSTEP_STREAK
        else:
            wait = self._lockstep and self._sub_command.get_publisher_count() > 0
        if wait and self._settings['lockstep_timeout'] > 0.0:
            self._awaiting = (self._command_seq, time.monotonic())

    def _applied_effort(self):
        timeout_steps = self._settings['command_timeout'] / self.dt
        if self._command is not None and self.steps - self._command_steps > timeout_steps:
            self._command = None
            if not self._command_timed_out:
                self._command_timed_out = True
                self.get_logger().warning(
                    f"no effort command for {self._settings['command_timeout']} s of simulated "
                    'time: applying zero effort')
        if self._command is None:
            return np.zeros(self.model.nq)
        tau, saturated = saturate_effort(self.model, self._command)
        for i in np.flatnonzero(saturated):
            self._throttle.warn(f'saturated/{i}', f'effort command of '
                                                  f'{self.model.joint_names[i]} saturated at '
                                                  f'{abs(tau[i]):g}')
        return tau

    def _external_f_tip(self):
        timeout = self._settings['external_wrench_timeout']
        if (self._f_tip is not None and timeout > 0.0
                and (self.steps - self._wrench_steps) * self.dt > timeout):
            self._f_tip = None
        return self._f_tip

    def _step(self):
        """One integrator step of dt, then the joint stops; publish when due. False on failure."""
        self.tau = self._applied_effort()
        f_tip = self._external_f_tip()
        friction = True if self._settings['friction'] else None
        try:
            q, qd = self._step_function(
                self.model, self.q, self.qd, self.tau, self.dt, f_tip=f_tip,
                frame=None if f_tip is None else self.model.tip_frame, friction=friction)
        except Exception as exc:  # noqa: BLE001 - a failing step must not kill the node
            self.paused = True
            self.get_logger().error(
                f'integration step failed ({type(exc).__name__}: {exc}): simulation paused '
                '(~/reset, then ~/pause false, to continue)')
            return False
        if not all_finite(q, qd):
            self.get_logger().error('the simulation diverged (non-finite state): reset to the '
                                    'initial state; consider a smaller dt or rk4')
            self._reset_state()
            return False
        self.q, self.qd = enforce_position_limits(self.model, q, qd)
        self.steps += 1
        self._published = self.steps >= self._next_publish_steps
        if self._published:
            self._publish_state()
            self._after_publication()
            period_steps = 1.0 / (self._settings['publish_rate'] * self.dt)
            self._next_publish_steps = max(self._next_publish_steps + period_steps,
                                           self.steps + 0.5)
        return True

    def _stamp(self):
        if self._publish_clock:
            return Time(nanoseconds=round(self.sim_time * 1e9)).to_msg()
        return self.get_clock().now().to_msg()

    def _publish_state(self):
        stamp = self._stamp()
        if self._pub_clock is not None and self._clock_steps != self.steps:
            self._clock_steps = self.steps
            self._pub_clock.publish(ClockMsg(clock=stamp))
        o = self._to_order
        self._pub_joint_states.publish(make_joint_state(
            self.joint_order, stamp=stamp, position=self.q[o], velocity=self.qd[o],
            effort=self.tau[o]))


def main(args=None):
    run_node(SimulatorNode, args)


if __name__ == '__main__':
    main()
