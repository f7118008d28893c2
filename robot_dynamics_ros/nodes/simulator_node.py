"""simulator_node: forward-dynamics simulation of the robot model, a stand-in for the hardware.

Every step (``dt`` of simulated time) it integrates M(q) q̈ + c + g + friction + Jᵀ F_tip = τ with one of
two engines (parameter ``engine``, read-only):

- ``rigid_body`` (the default, the fast path): the core's ``rk4_step`` / ``semi_implicit_euler_step`` /
  ``euler_step``, then the joint position limits as hard stops (``limits.enforce_position_limits``;
  logic/rigid_body_engine.py);
- ``mujoco``: MuJoCo's dynamics of MuJoCo's model of the same URDF (or of ``mjcf_path``), with a world
  to touch (``world_path``): contacts, joint limits as soft constraints, the URDF's friction as MuJoCo's
  ``frictionloss`` (logic/mujoco_engine.py says how it maps and differs); ``pip install
  robot_dynamics_ros[mujoco]``, imported only then. Integrators 'rk4', 'semi_implicit_euler' (MuJoCo's
  Euler, semi-implicit in the damping) and 'implicitfast' (the stiffest contacts); ground truth on
  ``~/contact_torques`` and ``~/contacts`` (below). Everything else here is the same on both engines.

Simulated time = steps × dt. The stepping, pacing and lock-step below are
``robot_dynamics_ros.logic.simulation.Simulation`` (ROS-free, tested without DDS; its pacing:
logic/pacing.py, the forces it applies: logic/applied_forces.py); this node holds its parameters
(those of the simulation: nodes/simulation_parameters.py), topics, services and timer.

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
  A wrench with a NaN, inf or a component of 1e6 N (N·m) or more is dropped with a warning. A
  robot with several tips (a tree) and no ``tip_link`` has no tip frame: wrenches are dropped,
  with a warning naming the tips (``robot_dynamics_ros.logic.task_frame``).
- out ``~/applied_wrench`` (geometry_msgs/WrenchStamped, latched: reliable, transient local, depth 1): the
  external wrench in force (zero: none), in the tip frame; published with the first joint state after it
  changes (a new wrench, its removal, its timeout, a reset), and at start-up; stamped, with
  ``publish_clock``, with the simulated time from which it acts (else as that joint state). The ground
  truth of a push, dated by the simulation, for an external torque estimator (the ``~/external_wrench``
  it publishes) and for the demos.
- out ``joint_states`` (sensor_msgs/JointState, /joint_states in the root namespace) every
  1/``publish_rate`` s of simulated time: position, velocity, effort = the applied (saturated)
  effort in the hardware profile's convention plus ``effort_offset`` (what a real arm's torque
  sensors would read; while still, the g(q) that holds it, as brakes would); never a NaN or inf
  (such a state is skipped with a warning). Mimic joints (URDF <mimic>), which have no
  coordinate of their own, follow the joints: their position
  m q + o and velocity m q̇ from the joint each follows, effort 0 (they take no command). While still (see
  ``wait_for_command``) the state is published at ``publish_rate`` per wall second, with the same
  stamp; while paused nothing is published. A new ``publish_rate`` takes effect at once (the next
  state is due one new period after the last one).
- out ``/clock`` (rosgraph_msgs/Clock) with the simulated time, when ``publish_clock`` is true;
  the simulator then stamps its messages with the simulated time, else with its node clock.
  Simulated time stands still while the simulation is paused or still, and so does /clock.
- out ``robot_description`` (std_msgs/String, TRANSIENT_LOCAL) when the model came from
  ``urdf_path``, so every node of the graph can share that one model.
- out ``~/contact_torques`` (sensor_msgs/JointState; engine mujoco, while something subscribes): with
  every joint state (the same stamp), effort = Σ_k J_kᵀ f_k over MuJoCo's contacts on the arm at that
  state, the joint torques the contacts exert on the arm (N·m or N, joint order): what an external
  torque estimator should find.
- out ``~/contacts`` (visualization_msgs/MarkerArray; engine mujoco, while something subscribes): the
  contact points, normals and forces at that state in the root link's frame (nodes/contact_markers.py:
  the force f = (points[1] − points[0]) / 0.01 m/N), for RViz and the viewer.

Services: ``~/reset`` (std_srvs/Trigger: initial positions, zero velocity, no command or wrench;
simulated time continues; with ``wait_for_command`` the simulation then stays still until the next
command, so a running controller first sees the reset state, re-anchors its hold on it (the jump:
``max_state_jump``) and answers it before anything moves; in lock-step, the controller's answer to
the state before the reset, still on its way, is skipped: it was computed for that state),
``~/pause`` (std_srvs/SetBool: true = pause, false = resume from the same state).

Parameters: the model parameters of model_source, plus

- ``engine`` ('rigid_body' | 'mujoco', read-only); with 'mujoco' also (read-only) ``mjcf_path`` (an MJCF
  of the arm, e.g. a MuJoCo Menagerie model, its joints matched by name with the URDF's, its actuators
  removed; '' = MuJoCo compiles the URDF), ``world_path`` (an MJCF whose worldbody is attached to the
  scene; '' = none; the package ships worlds/table.xml), ``package_paths`` (folders for package://
  meshes, before the ament index and ROS_PACKAGE_PATH), ``keep_visuals`` (false: the URDF's visuals are
  dropped), ``self_collision`` (false: the arm touches only the world). A file that cannot be used is an
  error naming it: the node stays up without a simulation (nothing published, /diagnostics ERROR);
  the payload parameters become a body of MuJoCo's model fixed to their frame,
- ``integrator`` ('rk4' | 'semi_implicit_euler' | 'euler'; with engine mujoco 'rk4' |
  'semi_implicit_euler' | 'implicitfast'; settable at run time),
- ``dt`` (s, > 0, read-only), ``friction`` (bool: URDF <dynamics damping/friction>),
- ``publish_rate`` (Hz, 0.1 to 10000), ``publish_clock`` (bool, read-only), ``real_time_factor``
  (0 to 1000; 0 = as fast as possible), ``initial_positions`` (double array in joint order, [] = zeros
  clipped into the position limits; used at start-up and by ~/reset; the arm starts exactly there,
  at rest), ``wait_for_command`` (bool, default true: no integration after start-up or ~/reset
  until the first effort command arrives; the state is published meanwhile, so a controller can
  start; false: the arm moves under gravity at once), ``command_timeout`` (s, > 0),
  ``external_wrench_timeout`` (s, >= 0, 0 = until the next message), ``lockstep_timeout`` (s of
  wall time, 0 to 60; see lock-step below), ``max_description_bytes`` (model_source). Every
  numeric parameter has a range, and the timer period derived from them stays within
  [0.1 ms, 0.1 s], or 0 at real_time_factor 0 (``Simulation.tick_period``),
- of model_source, settable at run time (a wrong number of values, a negative or non-finite value:
  refused with the reason; at start-up an error, and no model): ``armature`` (double array, kg m² or
  kg, one per joint in joint order; [] = the model's own, zeros from a URDF): the simulated arm's
  rotor inertias, M(q) + diag(armature) in its forward dynamics (changed mid-run: the state carries
  on); ``effort_offset`` (double array, N·m or N, same order; [] = zeros): the simulated effort
  sensors' constant offset, ADDED to the efforts published in ``joint_states`` (measured effort =
  applied torque + effort_offset, as on a real arm); the torques applied are unchanged.
- the hardware parameters (nodes/hardware_parameters.py, read-only): ``hardware_profile``,
  ``firmware_compensates``, ``measured_effort``, ...: the simulator emulates that hardware's firmware
  (logic/applied_forces.py): it adds the firmware's terms (its g(q), and with ``friction`` its friction
  compensation, by the model without the payload) to every command, publishes the efforts in the profile's
  convention (plus ``effort_offset``), and reacts to a missing command as the profile says (``brake``: the
  arm stops and holds until the next command). 'ros2_control' (the default): the command applied as it is.
- ``diagnostics_period`` (s, default 1; 0 = none), ``diagnostics_min_rate`` (Hz, default 0 = no
  check), ``diagnostics_max_age`` (s, default 0.5; 0 = no check), settable at run time:
  ``/diagnostics`` (diagnostic_msgs/DiagnosticArray), one status ``simulator_node: simulation``
  (nodes/diagnostics_publisher.py: model; the effort commands' rate and age; drops by reason (commands,
  external wrenches); compute time = a timer tick that stepped: the integration and the joint state
  it publishes; ``state`` (paused, still or running), ``simulated time (s)``, ``simulated time
  dropped (s)``); ERROR without a model, WARN when the last command is older than
  ``diagnostics_max_age`` (wall time), commands are slower than ``diagnostics_min_rate``, none came
  yet, or some were dropped in the last period. Paused, the commands are not checked.

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

import time

import numpy as np
from builtin_interfaces.msg import Time as TimeMsg
from geometry_msgs.msg import WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger

from robot_dynamics_ros.logic.diagnostics import ComputeTimes, InputMeter, number
from robot_dynamics_ros.logic.input_guard import BadInput, bounded
from robot_dynamics_ros.logic.rigid_body_engine import RigidBodyEngine
from robot_dynamics_ros.logic.simulation import (
    ENGINES,
    FAST_BUDGET,
    LOCKSTEP_STREAK,
    Simulation,
    mimic_joint_states,
)
from robot_dynamics_ros.logic.stamps import sec_nanosec
from robot_dynamics_ros.logic.task_frame import task_frame
from robot_dynamics_ros.nodes.common import (
    LATCHED_QOS,
    WarningThrottle,
    describe,
    parameter_validator,
    run_node,
)
from robot_dynamics_ros.nodes.conversions import (
    all_finite,
    index_map,
    make_joint_state,
    multiarray_to_vector,
    set_wrench,
    wrench_vector,
)
from robot_dynamics_ros.nodes.description_source import ROBOT_DESCRIPTION_QOS
from robot_dynamics_ros.nodes.diagnostics_publisher import Details, NodeDiagnostics
from robot_dynamics_ros.nodes.hardware_parameters import HardwareParameters
from robot_dynamics_ros.nodes.model_source import ModelSource
from robot_dynamics_ros.nodes.mujoco_wiring import MujocoWiring
from robot_dynamics_ros.nodes.simulation_parameters import (
    check_simulation_parameters,
    declare_simulation_parameters,
    initial_state,
    simulation_settings,
)

__all__ = ['SimulatorNode', 'main', 'FAST_BUDGET', 'LOCKSTEP_STREAK']

MAX_ABS_WRENCH = 1e6            # N, N·m: no external wrench component is this large


class _NodeReport:
    """The Simulation's reports as node log messages, recurring ones throttled per key."""

    def __init__(self, logger, throttle):
        self._logger = logger
        self.warn = throttle.warn

    def warning(self, message):
        self._logger.warning(bounded(message))

    def error(self, message):
        self._logger.error(bounded(message))


class SimulatorNode(Node):
    """Forward-dynamics simulator (see module docstring)."""

    def __init__(self, node_name='simulator_node', **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = WarningThrottle(self.get_logger())
        self.joint_order = ()
        self._to_order = self._to_model = None
        self._clock_steps = -1                  # step count last published on /clock
        self._wrench_frame = None               # frame of external wrenches (None: ambiguous)
        self._no_wrench_frame = ''              # why there is none
        self._wrench_since = None               # wrench_since of the last ~/applied_wrench published

        self.declare_parameter('engine', 'rigid_body', describe(
            "The physics: 'rigid_body' (the package's forward dynamics) or 'mujoco' (MuJoCo, with "
            'contacts; pip install robot_dynamics_ros[mujoco]).', read_only=True,
            additional_constraints=f'one of {list(ENGINES)}'))
        self.engine = self.get_parameter('engine').value
        if self.engine not in ENGINES:
            raise ValueError(f"parameter 'engine' must be one of {list(ENGINES)}, got {self.engine!r}")
        # engine mujoco: its parameters, topics and engine factory (MuJoCo is imported only then)
        self._mujoco = MujocoWiring(self) if self.engine == 'mujoco' else None
        engine_type = self._mujoco or RigidBodyEngine       # the Simulation's engine type
        declare_simulation_parameters(self, engine_type.integrators)
        self.add_on_set_parameters_callback(parameter_validator(self._check_parameters))
        self.add_post_set_parameters_callback(self._apply_parameters)
        self._publish_clock = bool(self.get_parameter('publish_clock').value)

        self._pub_joint_states = self.create_publisher(JointState, 'joint_states', 10)
        self._pub_clock = (self.create_publisher(ClockMsg, '/clock', 10)
                           if self._publish_clock else None)
        self._pub_description = None
        self._commands = InputMeter()           # effort commands accepted (/diagnostics)
        self._tick_times = ComputeTimes()       # ticks that stepped (/diagnostics)
        self._sub_command = self.create_subscription(
            Float64MultiArray, 'effort_controller/commands', self._on_command, 10)
        # The stepping, on the steady clock (never the ROS clock: with use_sim_time the simulator
        # would wait for its own /clock).
        self.sim = Simulation(
            float(self.get_parameter('dt').value), publish=self._publish_state,
            report=_NodeReport(self.get_logger(), self._throttle),
            initial_state=self.initial_state,
            command_source=lambda: self._sub_command.get_publisher_count() > 0,
            clock=time.monotonic, engine_type=engine_type, **simulation_settings(self))
        self.create_subscription(WrenchStamped, '~/external_wrench', self._on_wrench, 10)
        self._pub_applied_wrench = self.create_publisher(WrenchStamped, '~/applied_wrench', LATCHED_QOS)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_service(SetBool, '~/pause', self._on_pause)
        self._source = ModelSource(self, self._on_model, warm_up=self.sim.warm_up_calls,
                                   throttle=self._throttle, on_payload=self._on_payload,
                                   effort_offset_use='Added to the efforts published in joint_states '
                                                     '(the torques applied are unchanged).')
        if self._mujoco:
            self._mujoco.source = self._source
        self._hardware = HardwareParameters(self, self._source, runtime=False)
        self._source.start()
        self._timer = None
        self._make_timer()
        self._diagnostics = NodeDiagnostics(self, 'simulation', self._throttle, self._source, self._commands,
                                            self._tick_times, self._sub_command.topic_name, 'effort commands',
                                            details=self._diagnostic_details)

    # The simulation's state, read by tests and tools.
    model = property(lambda self: self.sim.model)
    dt = property(lambda self: self.sim.dt)
    steps = property(lambda self: self.sim.steps)
    sim_time = property(lambda self: self.sim.sim_time, doc='Simulated time in seconds.')
    paused = property(lambda self: self.sim.paused)
    q = property(lambda self: self.sim.q)
    qd = property(lambda self: self.sim.qd)
    tau = property(lambda self: self.sim.tau)

    def _make_timer(self):
        """The stepping timer, on the steady clock: period 0 at real_time_factor 0."""
        if self._timer is not None:
            self.destroy_timer(self._timer)
        self.sim.resync()
        self._timer = self.create_timer(self.sim.tick_period(), self._tick,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))

    # -- parameters -------------------------------------------------------------------------
    def _check_parameters(self, params):
        check_simulation_parameters(params, self.sim.integrators, self.model)

    def _apply_parameters(self, params):
        self.sim.configure(**simulation_settings(self))
        if {p.name for p in params} & {'real_time_factor', 'publish_rate'}:
            self._make_timer()

    # -- model and state --------------------------------------------------------------------
    def _on_model(self, model, joint_order):
        self.joint_order = joint_order
        if model is None:
            self.sim.set_model(None)
            return
        self._to_order = index_map(model.joint_names, joint_order)
        self._to_model = index_map(joint_order, model.joint_names)
        self._wrench_frame, reason = task_frame(model, self.get_parameter('tip_link').value)
        self._no_wrench_frame = reason or ''
        if reason is not None:
            self._throttle.reset('tip_link/several_tips')
            self._throttle.once('tip_link/several_tips', f'{reason}. External wrenches are '
                                                         'dropped until then.')
        conventions = self._hardware.conventions()
        if conventions is None:         # (the reason is logged): no plant rather than a wrong one
            self.sim.set_model(None)
            return
        try:
            self.sim.set_model(model, self._source.base_model, conventions)
        except ValueError as exc:       # the MuJoCo engine: a world, MJCF or mesh it cannot use
            self.get_logger().error(bounded(f'engine {self.engine!r}: {exc}: no simulation'))
            self.sim.set_model(None)
            return
        if not conventions.full_torque_commands:
            self.get_logger().info(f'emulating the firmware of {conventions.describe()}')
        self.sim.resync(clear_budget=False)
        self._publish_description()

    def _on_payload(self, model):
        """The same arm with another payload or armature: simulated from the current state on; its
        firmware still knows only the arm (``ModelSource.base_model``)."""
        if self.model is None:
            return
        if self._mujoco:                    # MuJoCo carries the payload as a body of its own
            self._mujoco.set_payload(self.sim.engine, model)
        self.sim.replace_model(model, self._source.base_model)

    def _publish_description(self):
        """Publish the URDF file's text on robot_description, once (the first model from the file:
        at start-up, or when run-time parameters that did not fit are set to values that do)."""
        if self._pub_description is None and self._source.origin == 'file' \
                and self._source.urdf_xml is not None:
            self._pub_description = self.create_publisher(String, 'robot_description',
                                                          ROBOT_DESCRIPTION_QOS)
            self._pub_description.publish(String(data=self._source.urdf_xml))

    def initial_state(self):
        """(q0, qd0) in model order from ``initial_positions``, clipped into the limits."""
        return initial_state(self, self.model, self._to_model, self._to_order)

    # -- inputs -----------------------------------------------------------------------------
    def _on_command(self, msg):
        if self.model is None:
            self._throttle.warn('command/no_model', 'command ignored: no robot model yet')
            return
        try:
            tau = multiarray_to_vector(msg, self.model.nq)
        except BadInput as exc:
            self._throttle.warn(f'command/{exc.kind}',
                                f'dropping an effort command: {exc} (joint order '
                                f'{list(self.joint_order)})')
            return
        self.sim.command(tau[self._to_model])
        self._commands.add()

    def _on_wrench(self, msg):
        if self.model is None:
            self._throttle.warn('wrench/no_model', 'external wrench ignored: no robot model yet')
            return
        if self._wrench_frame is None:
            self._throttle.warn('wrench/no_tip', f'dropping an external wrench: '
                                                 f'{self._no_wrench_frame}')
            return
        frame = msg.header.frame_id
        if frame not in ('', self._wrench_frame):
            self._throttle.warn('wrench/frame',
                                f"dropping an external wrench in frame '{bounded(frame, 100)}': it "
                                f"must be expressed in the tip frame '{self._wrench_frame}' (or '')")
            return
        on_robot = wrench_vector(msg.wrench)
        if not all_finite(on_robot):
            self._throttle.warn('wrench/nonfinite', 'dropping a non-finite external wrench')
            return
        if np.abs(on_robot).max() >= MAX_ABS_WRENCH:     # the integration would only diverge
            self._throttle.warn('wrench/implausible', f'dropping an external wrench with a '
                                                      f'component beyond {MAX_ABS_WRENCH:g}')
            return
        self.sim.apply_wrench(on_robot)

    # -- services ---------------------------------------------------------------------------
    def _on_reset(self, request, response):
        if not self.sim.reset():
            response.success, response.message = False, 'no robot model'
            return response
        response.success = True
        still = ', still until the next command' if self.sim.still else ''
        response.message = (f'reset to {self.q[self._to_order].tolist()} at simulated time '
                            f'{self.sim_time:.3f} s{still}')
        self.get_logger().info(response.message)
        return response

    def _on_pause(self, request, response):
        self.sim.set_paused(request.data)
        response.success = True
        response.message = f"{'paused' if self.paused else 'running'} at simulated time " \
                           f'{self.sim_time:.3f} s'
        self.get_logger().info(response.message)
        return response

    # -- simulation loop --------------------------------------------------------------------
    def _tick(self):
        start = time.perf_counter_ns()
        if not self.sim.tick():
            return
        if self._pub_clock is not None:
            self._publish_sim_clock(self.steps, self._stamp(self.sim_time))
        self._tick_times.record(time.perf_counter_ns() - start)

    def _diagnostic_details(self):
        """The simulator's part of its /diagnostics status; paused, the commands are not expected."""
        sim = self.sim
        state = ('paused' if sim.paused else 'still: waiting for an effort command' if sim.still
                 else 'running')
        if sim.braked:
            state = 'braked: no command for the hardware\'s command timeout'
        return Details(values=(('state', state), ('simulated time (s)', number(sim.sim_time, 3)),
                               ('simulated time dropped (s)', number(sim.dropped, 3)),
                               ('real_time_factor', f"{sim.settings['real_time_factor']:g}"),
                               *self._hardware.details()),
                       summary=state, idle='paused' if sim.paused else None)

    def _stamp(self, sim_time):
        """The stamp of the messages of simulated time ``sim_time`` (s): that time with ``publish_clock``,
        else the node clock's now."""
        if self._publish_clock:
            sec, nanosec = sec_nanosec(round(sim_time * 1e9))
            return TimeMsg(sec=sec, nanosec=nanosec)
        return self.get_clock().now().to_msg()

    def _publish_sim_clock(self, steps, stamp):
        """/clock at ``stamp``, once per step count (with ``publish_clock``)."""
        if self._pub_clock is not None and self._clock_steps != steps:
            self._clock_steps = steps
            self._pub_clock.publish(ClockMsg(clock=stamp))

    def _publish_state(self, state):
        """joint_states of the Simulation's ``state`` (a SimulatedState)."""
        stamp = self._stamp(state.sim_time)
        self._publish_sim_clock(state.steps, stamp)
        model, o = self.sim.model, self._to_order
        if not all_finite(state.q, state.qd, state.tau):      # the Simulation resets on divergence
            self._throttle.warn('nonfinite/state', 'simulated state not finite: not published')
            return
        # what the effort sensors read, in the hardware's convention (with their offset)
        measured = self._hardware.conventions().measured(self.sim.firmware_model, state.tau, state.q)[o]
        # mimic joints (none without): where they follow their joints, effort 0 (they take no command)
        names, q, qd = mimic_joint_states(model, state.q, state.qd)
        self._pub_joint_states.publish(make_joint_state(
            tuple(self.joint_order) + names, stamp=stamp, position=np.concatenate([state.q[o], q]),
            velocity=np.concatenate([state.qd[o], qd]), effort=np.concatenate([measured, 0.0 * q])))
        if state.wrench_since != self._wrench_since:
            self._publish_applied_wrench(state.wrench, state.wrench_since)
        if self._mujoco:
            self._mujoco.publish_contacts(self.sim.engine, self.model, self.joint_order, o, stamp)

    def _publish_applied_wrench(self, on_robot, since):
        """~/applied_wrench: the wrench ``on_robot`` (m, f) in force since simulated time ``since`` (s)."""
        self._wrench_since = since
        msg = WrenchStamped()
        msg.header.stamp, msg.header.frame_id = self._stamp(since), self._wrench_frame or ''
        set_wrench(msg.wrench, on_robot)
        self._pub_applied_wrench.publish(msg)

    def destroy_node(self):
        self._source.close()        # the model builder's thread (logic/background_job)
        return super().destroy_node()


def main(args=None):
    run_node(SimulatorNode, args)


if __name__ == '__main__':
    main()
