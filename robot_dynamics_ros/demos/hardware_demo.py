"""Demo (``python -m robot_dynamics_ros.demos --hardware``, ``make demo DEMO_ARGS=--hardware``): hardware
profiles (doc/hardware.md) on a simulated arm whose firmware adds g(q) to every command and reports
gravity-compensated efforts: simulator_node with ``hardware_profile: kuka_fri`` (the firmware adds g(q))
and ``measured_effort: gravity_compensated`` (the efforts without it) emulates that firmware. The
simulation graph (config/simulation.yaml, the UR5e) runs three times, a few seconds each:

1. **right profile**: every node with the firmware's conventions (bringup's ``--hardware kuka_fri`` and
   ``measured_effort: gravity_compensated``). The controller's start-up check finds the efforts
   consistent, it holds the arm at start-up (its commands at rest are what is left of g(q): nothing),
   then follows a TRAJECTORY s demo trajectory (recording.demo_trajectory) sent as a FollowJointTrajectory
   goal, as the joint-space demo sends it.
2. **wrong profile, check off** (simulation only!): the controller at the default profile
   (ros2_control: it sends the full torque, g(q) included) with ``check_effort_convention: false``. The
   firmware adds g(q) once more: the arm is pushed against gravity by a second g(q), which the hold's PD
   gains balance only at an offset, q − q_d ≈ M(q)⁻¹ g(q) / kp (the command then is 0: the PD term
   cancels the controller's own g(q)). The controller starts disabled (``disabled_mode: zero_effort``:
   the arm stays at rest) and is enabled (~/enable) once this demo hears the arm, so that the run is
   recorded from rest whenever discovery matched; recorded for CHECK_OFF_RUN s of simulated time.
3. **wrong profile, the default** (``check_effort_convention: true``): the same controller refuses: the
   efforts at rest hold none of g(q), which contradicts its measured_effort 'full'. It commands nothing,
   logs an ERROR and reports it on /diagnostics; the simulator, waiting for a first command, never
   moves the arm. Recorded for REFUSED_RUN s of wall time after the refusal (simulated time stands
   still).

Records /joint_states, the controller's ~/controller_state (desired positions), ~/tracking_error and
effort_controller/commands, its /rosout lines and its /diagnostics status; prints the right profile's
tracking error, the wrong profile's offset and the refused run's command count; draws
out/demo_hardware.png (``--output``'s folder; the numbers, report and figure: hardware_report.py).

Exit code 0 when the right profile's goal succeeded with every tracking error within ``--max-error``,
the wrong profile with the check off drifted beyond it, and the refused run published no command and
said why; 1 otherwise or when something did not arrive.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from robot_dynamics_ros.cli import bringup
from robot_dynamics_ros.demos.hardware_report import FIRMWARE, TRAJECTORY, plot, report_text, summary
from robot_dynamics_ros.demos.joint_space_report import (
    COMMANDS_TOPIC,
    JOINT_STATES_TOPIC,
    TRACKING_ERROR_TOPIC,
    TRAJECTORY_ACTION,
)
from robot_dynamics_ros.demos.recording import (
    GraphRun,
    Series,
    demo_knots,
    demo_main,
    goal_result,
    simulation_graph,
    spin_for,
    trajectory_message,
    urdf_robot_name,
    values_by_name,
    viewer_settings,
)
from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['CASES', 'Case', 'CaseRecording', 'HardwareDemoRecorder', 'main', 'make_recorder', 'run']

CONTROLLER = bringup.CONTROLLER.name
CONTROLLER_STATE_TOPIC = f'/{CONTROLLER}/controller_state'
HOLD = 0.5                  # s of simulated time held before the trajectory
SETTLE = 0.5                # s of simulated time after it
CHECK_OFF_RUN = 3.0         # s of simulated time of the wrong profile with the check off, once enabled
ENABLE_AFTER = 0.3          # s of wall time at rest recorded before it is enabled
CALL_TIMEOUT = 10.0         # s to wait for a service
REFUSED_RUN = 2.0           # s of wall time recorded after the refusal


@dataclass(frozen=True)
class Case:
    """One run: ``key``, a title, ``node_parameters`` of the graph (bringup's --set) and every node's
    hardware_profile (bringup's --hardware; None: the config file's, the default)."""
    key: str
    title: str
    node_parameters: dict
    hardware: str | None = None


CASES = (
    Case('right', 'right profile: the controller knows the firmware adds g(q)',
         {spec.name: {'measured_effort': FIRMWARE['measured_effort']}
          for spec in bringup.GRAPHS['simulation']},
         hardware=FIRMWARE['hardware_profile']),
    Case('check_off', 'wrong profile (ros2_control), check_effort_convention false',
         {bringup.SIMULATOR.name: FIRMWARE,
          CONTROLLER: {'check_effort_convention': False, 'start_enabled': False,
                       'disabled_mode': 'zero_effort'}}),
    Case('refused', 'wrong profile (ros2_control), the default check on',
         {bringup.SIMULATOR.name: FIRMWARE}),
)


@dataclass
class CaseRecording:
    """What one run records, vectors in ``joint_names`` order (/joint_states'); stamps: simulated time
    (ns). ``commands`` are stamped with the joint state they answer (the latest received)."""

    case: Case
    joint_names: tuple = ()
    joint_states: Series = field(default_factory=Series)
    desired: Series = field(default_factory=Series)         # ~/controller_state reference positions
    tracking_error: Series = field(default_factory=Series)  # ~/tracking_error: e = q_d − q
    commands: Series = field(default_factory=Series)        # effort_controller/commands
    logs: list = field(default_factory=list)                # the controller's /rosout lines: (level, text)
    diagnostics: list = field(default_factory=list)         # its /diagnostics: (level, message, mode)
    sent: int | None = None             # stamp at which the trajectory was sent (the controller enabled)
    goal_result: tuple | None = None    # (status, error_code, error_string)
    robot_name: str = 'robot'
    mode: str = ''

    def refusal(self):
        """The controller's ERROR about the effort convention, or None."""
        return next((text for level, text in self.logs if level >= 40 and 'contradict' in text), None)

    def diagnostic_refusal(self):
        """The controller's /diagnostics ERROR (level 2) status: (message, mode), or None."""
        return next(((message, mode) for level, message, mode in self.diagnostics if level == 2), None)


class HardwareDemoRecorder:
    """The work of the demo's own node (``node``) for one run: records ``rec``; ``follow``: the
    FollowJointTrajectory client (None without control_msgs), ``enable``: the controller's ~/enable."""

    def __init__(self, rec, node):
        from diagnostic_msgs.msg import DiagnosticArray
        from rcl_interfaces.msg import Log
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from std_srvs.srv import SetBool

        qos = QoSProfile(depth=500)
        # /rosout is latched (transient local): the lines logged before this node subscribed arrive too
        rosout = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                            durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.rec, self.node = rec, node
        self.follow = self._follow_and_state(qos)
        node.create_subscription(JointState, JOINT_STATES_TOPIC, self.on_state, qos)
        node.create_subscription(JointState, TRACKING_ERROR_TOPIC, self.on_error, qos)
        node.create_subscription(Float64MultiArray, COMMANDS_TOPIC, self.on_command, qos)
        node.create_subscription(Log, '/rosout', self.on_log, rosout)
        node.create_subscription(DiagnosticArray, '/diagnostics', self.on_diagnostics, 10)
        self.enable = node.create_client(SetBool, f'/{CONTROLLER}/enable')

    def _follow_and_state(self, qos):
        """The action client, with ~/controller_state recorded; None without control_msgs."""
        try:
            from control_msgs.action import FollowJointTrajectory
            from control_msgs.msg import JointTrajectoryControllerState
            from rclpy.action import ActionClient
        except ImportError:                 # no control_msgs: run() says so
            return None
        self.node.create_subscription(JointTrajectoryControllerState, CONTROLLER_STATE_TOPIC,
                                      self.on_controller_state, qos)
        return ActionClient(self.node, FollowJointTrajectory, TRAJECTORY_ACTION)

    def on_state(self, msg):
        rec = self.rec
        if not rec.joint_names:
            rec.joint_names = tuple(msg.name)
        q = values_by_name(msg.name, msg.position, rec.joint_names)
        if q is not None:
            rec.joint_states.add(stamp_ns(msg.header.stamp), q)

    def on_error(self, msg):
        e = values_by_name(msg.name, msg.position, self.rec.joint_names) if self.rec.joint_names else None
        if e is not None:
            self.rec.tracking_error.add(stamp_ns(msg.header.stamp), e)

    def on_controller_state(self, msg):
        rec = self.rec
        q_d = values_by_name(msg.joint_names, msg.reference.positions, rec.joint_names) if rec.joint_names \
            else None
        if q_d is not None:
            rec.desired.add(stamp_ns(msg.header.stamp), q_d)

    def on_command(self, msg):
        # in the controller's joint order, as the joint states' (the joint-space demo's assumption)
        rec = self.rec
        rec.commands.add(rec.joint_states.stamp[-1] if rec.joint_states.stamp else -1, list(msg.data))

    def on_log(self, msg):
        if msg.name == CONTROLLER:
            self.rec.logs.append((int(msg.level), msg.msg))

    def on_diagnostics(self, msg):
        for status in msg.status:
            if status.name.startswith(CONTROLLER):
                values = {kv.key: kv.value for kv in status.values}
                self.rec.diagnostics.append((status.level[0] if isinstance(status.level, bytes)
                                             else int(status.level), status.message, values.get('mode', '')))


def make_recorder(rec, context) -> HardwareDemoRecorder:
    """The demo's recorder for one run, on a node of its own (imports rclpy)."""
    from rclpy.node import Node

    return HardwareDemoRecorder(rec, Node('demo_hardware_recorder', context=context))


def _run_case(opts, case, urdf):
    """One run of ``case`` (module docstring): (CaseRecording, problems)."""
    gc = simulation_graph(opts, hardware=case.hardware, node_parameters=case.node_parameters)
    rec = CaseRecording(case, robot_name=urdf_robot_name(urdf))
    print(f'demo: {case.title}', file=sys.stderr, flush=True)
    with GraphRun(gc, opts.mode, opts.executor, viewer_settings(opts)) as graph:
        recorder = make_recorder(rec, graph.context)
        graph.add(recorder.node)
        rec.mode = graph.description
        if recorder.follow is None:
            return rec, ['the hardware demo needs control_msgs (tools/build_interfaces.sh builds it)']
        if case.key == 'refused':
            if not graph.spin_until(lambda: rec.joint_states.values and rec.refusal(), opts.startup_timeout):
                return rec, [f'{case.title}: no ERROR from {CONTROLLER} about the effort convention within '
                             f'{opts.startup_timeout:g} s' + graph.exit_note()]
            start = time.monotonic()        # REFUSED_RUN s more, with the /diagnostics status in them
            graph.spin_until(lambda: rec.diagnostic_refusal() is not None, REFUSED_RUN)
            spin_for(graph.executor, REFUSED_RUN - (time.monotonic() - start))
            return rec, [] if graph.alive() else [f'{case.title}: {graph.exited()}']
        # the loop is closed: states, commands answering them (and the action server to send to)
        if not graph.spin_until(lambda: rec.joint_states.values and (
                rec.commands.values and recorder.follow.server_is_ready() if case.key == 'right'
                else recorder.enable.service_is_ready()), opts.startup_timeout):
            return rec, [f'{case.title}: no joint states, commands or action server within '
                         f'{opts.startup_timeout:g} s' + graph.exit_note()]
        if case.key == 'check_off':
            # disabled at start-up (zero_effort: the arm stays at rest), enabled once this node hears
            # the arm: recorded from rest, however late discovery matched it
            spin_for(graph.executor, ENABLE_AFTER)
            enabled, problem = _enable(graph, recorder, rec, CALL_TIMEOUT)
            if problem or not graph.wait_simulated(rec.joint_states, CHECK_OFF_RUN):
                return rec, [f'{case.title}: ' + (problem or 'the simulation stalled') + graph.exit_note()]
            rec.sent = enabled[1]
            _trim(rec, enabled[0] - ENABLE_AFTER)
            return rec, []
        graph.wait_simulated(rec.joint_states, HOLD)
        from control_msgs.action import FollowJointTrajectory

        knots, _ = demo_knots(SimpleNamespace(duration=TRAJECTORY, knot_step=opts.knot_step), urdf,
                              rec.joint_names, np.asarray(rec.joint_states.values[-1]))
        rec.sent = rec.joint_states.stamp[-1]
        goal = recorder.follow.send_goal_async(
            FollowJointTrajectory.Goal(trajectory=trajectory_message(rec.joint_names, *knots)))
        span = TRAJECTORY + SETTLE
        if not graph.wait_simulated(rec.joint_states, span, timeout=3 * span + 30):
            return rec, [f'{case.title}: the simulation did not reach the end of the trajectory'
                         + graph.exit_note()]
        rec.goal_result = goal_result(graph.executor, goal)
    return rec, []


def _call(graph, client, request, timeout):
    """The service's answer, or None when it is not there or does not answer within ``timeout`` s."""
    if not graph.spin_until(client.service_is_ready, timeout):
        return None
    future = client.call_async(request)
    return future.result() if graph.spin_until(future.done, timeout) else None


def _enable(graph, recorder, rec, timeout):
    """The controller's ~/enable true once this node hears the arm at rest: (receive time of the
    request, stamp of the last state before it), problem or None."""
    from std_srvs.srv import SetBool

    sent, stamp = time.monotonic(), rec.joint_states.stamp[-1]
    answer = _call(graph, recorder.enable, SetBool.Request(data=True), timeout)
    if answer is None or not answer.success:
        return None, f'{CONTROLLER}/enable failed: {answer.message if answer else "no answer"}'
    return (sent, stamp), None


def _trim(rec, t0):
    """Keep what was received from ``t0`` (monotonic s) on."""
    for name in ('joint_states', 'desired', 'tracking_error', 'commands'):
        series = getattr(rec, name)
        keep = [k for k, t in enumerate(series.t) if t >= t0]
        setattr(rec, name, Series([series.t[k] for k in keep], [series.stamp[k] for k in keep],
                                  [series.values[k] for k in keep], series.names))


def run(opts):
    """The three runs (CASES), one after the other: ([CaseRecording], problems)."""
    urdf = simulation_graph(opts).robot_description()
    recordings = []
    for case in CASES:
        rec, problems = _run_case(opts, case, urdf)
        recordings.append(rec)
        if problems:
            return recordings, problems
    return recordings, []


# --- main --------------------------------------------------------------------------------------

def main(opts) -> int:
    """The hardware demo with the dispatcher's options (demos/__main__.py: ``--hardware``, ``--max-error``,
    ``--knot-step``, ``--output``, ``--no-plot``, ``--mode``, ``--executor``, ``--config``, ``--urdf``)."""
    return demo_main(opts, run, _report)


def _report(opts, recordings):
    """The report printed, the figure drawn; the failed checks."""
    numbers = summary(recordings)
    print(report_text(recordings, numbers))
    if not opts.no_plot:
        path = plot(recordings, numbers, Path(opts.output).with_name('demo_hardware.png'))
        print(f'\nplot: {path}')
    right, off, refused = (numbers[k] for k in ('right', 'check_off', 'refused'))
    failures = []
    status = (right['goal'] or ('NONE',))[0]
    if status != 'SUCCEEDED':
        failures.append(f'right profile: the FollowJointTrajectory goal ended {status}')
    if not right['max_error'] <= opts.max_error:
        failures.append(f'right profile: tracking error {right["max_error"]:.4f} rad at '
                        f'{right["worst_joint"]} (> --max-error {opts.max_error} rad)')
    if not off['max_drift'] > opts.max_error:
        failures.append(f'wrong profile, check off: the arm stayed within {off["max_drift"]:.4f} rad of its '
                        f'hold (double gravity should push it beyond --max-error {opts.max_error} rad)')
    if refused['commands']:
        failures.append(f'wrong profile, check on: {refused["commands"]} commands published (expected none)')
    if not refused['moved'] == 0.0:
        failures.append(f'wrong profile, check on: the arm moved {refused["moved"]:.3g} rad')
    if refused['diagnostic'] is None:
        failures.append('wrong profile, check on: no ERROR on /diagnostics')
    return failures
