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
out/demo_hardware.png (``--output``'s folder).

Exit code 0 when the right profile's goal succeeded with every tracking error within ``--max-error``,
the wrong profile with the check off drifted beyond it, and the refused run published no command and
said why; 1 otherwise or when something did not arrive.
"""

from __future__ import annotations

import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from robot_dynamics_ros.cli import bringup
from robot_dynamics_ros.demos.joint_space_demo import (
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
    header_ns,
    save_figure,
    simulation_graph,
    spin_for,
    trajectory_message,
    urdf_robot_name,
    viewer_settings,
)

__all__ = ['CASES', 'Case', 'CaseRecording', 'run', 'summary', 'report_text', 'plot', 'main']

CONTROLLER = bringup.CONTROLLER.name
CONTROLLER_STATE_TOPIC = f'/{CONTROLLER}/controller_state'
#: The emulated firmware: adds g(q) to every command (kuka_fri), reports τ − g(q) as effort.
FIRMWARE = {'hardware_profile': 'kuka_fri', 'measured_effort': 'gravity_compensated'}
HOLD = 0.5                  # s of simulated time held before the trajectory
TRAJECTORY = 3.0            # s, the demo trajectory's length
SETTLE = 0.5                # s of simulated time after it
CHECK_OFF_RUN = 3.0         # s of simulated time of the wrong profile with the check off, once enabled
ENABLE_AFTER = 0.3          # s of wall time at rest recorded before it is enabled
CALL_TIMEOUT = 10.0         # s to wait for a service
REFUSED_RUN = 2.0           # s of wall time recorded after the refusal
#: The joints drawn (those the robot has; else its first three): the shoulder and elbow carry the arm's
#: weight, wrist_1 has the smallest inertia against its share of g(q) and moves most under double gravity.
PLOT_JOINTS = ('shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint')


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


def make_recorder(rec, context):
    """The demo's node for one run: records ``rec``, sends the goal (``follow``; imports rclpy)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rcl_interfaces.msg import Log
    from rclpy.node import Node
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from std_srvs.srv import SetBool

    qos = QoSProfile(depth=500)
    # /rosout is latched (transient local): the lines logged before this node subscribed arrive too
    rosout = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)

    class HardwareDemoRecorder(Node):
        def __init__(self):
            super().__init__('demo_hardware_recorder', context=context)
            try:
                from control_msgs.action import FollowJointTrajectory
                from control_msgs.msg import JointTrajectoryControllerState
                from rclpy.action import ActionClient
            except ImportError:                 # no control_msgs: run() says so
                self.follow = None
            else:
                self.follow = ActionClient(self, FollowJointTrajectory, TRAJECTORY_ACTION)
                self.create_subscription(JointTrajectoryControllerState, CONTROLLER_STATE_TOPIC,
                                         self._on_controller_state, qos)
            self.create_subscription(JointState, JOINT_STATES_TOPIC, self._on_state, qos)
            self.create_subscription(JointState, TRACKING_ERROR_TOPIC, self._on_error, qos)
            self.create_subscription(Float64MultiArray, COMMANDS_TOPIC, self._on_command, qos)
            self.create_subscription(Log, '/rosout', self._on_log, rosout)
            self.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 10)
            self.enable = self.create_client(SetBool, f'/{CONTROLLER}/enable')

        def _ordered(self, names, values):
            """values of ``names`` in rec.joint_names order, or None when some are missing."""
            index = {name: i for i, name in enumerate(names)}
            if len(values) != len(names) or any(name not in index for name in rec.joint_names):
                return None
            return [values[index[name]] for name in rec.joint_names]

        def _on_state(self, msg):
            if not rec.joint_names:
                rec.joint_names = tuple(msg.name)
            q = self._ordered(msg.name, msg.position)
            if q is not None:
                rec.joint_states.add(header_ns(msg), q)

        def _on_error(self, msg):
            e = self._ordered(msg.name, msg.position) if rec.joint_names else None
            if e is not None:
                rec.tracking_error.add(header_ns(msg), e)

        def _on_controller_state(self, msg):
            q_d = self._ordered(msg.joint_names, msg.reference.positions) if rec.joint_names else None
            if q_d is not None:
                rec.desired.add(header_ns(msg), q_d)

        def _on_command(self, msg):
            # in the controller's joint order, as the joint states' (the joint-space demo's assumption)
            rec.commands.add(rec.joint_states.stamp[-1] if rec.joint_states.stamp else -1, list(msg.data))

        def _on_log(self, msg):
            if msg.name == CONTROLLER:
                rec.logs.append((int(msg.level), msg.msg))

        def _on_diagnostics(self, msg):
            for status in msg.status:
                if status.name.startswith(CONTROLLER):
                    values = {kv.key: kv.value for kv in status.values}
                    rec.diagnostics.append((status.level[0] if isinstance(status.level, bytes)
                                            else int(status.level), status.message, values.get('mode', '')))

    return HardwareDemoRecorder()


def _run_case(opts, case, urdf):
    """One run of ``case`` (module docstring): (CaseRecording, problems)."""
    gc = simulation_graph(opts, hardware=case.hardware, node_parameters=case.node_parameters)
    rec = CaseRecording(case, robot_name=urdf_robot_name(urdf))
    print(f'demo: {case.title}', file=sys.stderr, flush=True)
    with GraphRun(gc, opts.mode, opts.executor, viewer_settings(opts)) as graph:
        recorder = graph.add(make_recorder(rec, graph.context))
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


# --- analysis ----------------------------------------------------------------------------------

def _plot_joints(names):
    """Indices of PLOT_JOINTS in ``names`` (else of the first three joints)."""
    found = [names.index(j) for j in PLOT_JOINTS if j in names]
    return found or list(range(min(3, len(names))))


def summary(recordings):
    """The numbers of the three runs: a dict per case key."""
    right, off, refused = recordings
    out = {}
    _, stamps, e = right.tracking_error.arrays()
    hold = e[stamps < right.sent] if right.sent is not None else e[:0]
    worst = np.abs(e).max(axis=0) if e.size else np.full(len(right.joint_names), np.nan)
    out['right'] = dict(max_error=float(np.nanmax(worst)),
                        worst_joint=right.joint_names[int(np.nanargmax(worst))],
                        rms=float(np.sqrt(np.mean(e ** 2))) if e.size else np.nan,
                        hold_error=float(np.abs(hold).max()) if hold.size else np.nan,
                        commands=len(right.commands.values), goal=right.goal_result)
    _, _, q = off.joint_states.arrays()
    offset = q[-1] - q[0]
    j = int(np.argmax(np.abs(offset)))
    _, _, e = off.tracking_error.arrays()
    out['check_off'] = dict(offset=offset, drift=float(abs(offset[j])), drift_joint=off.joint_names[j],
                            max_drift=float(np.abs(q - q[0]).max()), max_error=float(np.abs(e).max()),
                            commands=len(off.commands.values),
                            seconds=(off.joint_states.stamp[-1] - off.sent) * 1e-9)
    t, stamps, q = refused.joint_states.arrays()
    diagnostic = refused.diagnostic_refusal()
    out['refused'] = dict(commands=len(refused.commands.values), states=int(t.size),
                          seconds=float(t[-1] - t[0]) if t.size else 0.0,
                          moved=float(np.abs(q - q[0]).max()) if q.size else np.nan,
                          simulated=float(stamps.max() * 1e-9) if stamps.size else np.nan,
                          error=refused.refusal(), diagnostic=diagnostic)
    return out


def _short(name):
    return name.replace('_joint', '')


def report_text(recordings, numbers) -> str:
    right, off, refused = (numbers[k] for k in ('right', 'check_off', 'refused'))
    names = recordings[0].joint_names
    status, code, text = right['goal'] or ('NONE', None, '')
    lines = ['', f'{recordings[0].robot_name}: the simulator emulates a firmware that adds '
             f"g(q) to every command and reports gravity-compensated efforts (hardware_profile "
             f"'{FIRMWARE['hardware_profile']}', measured_effort '{FIRMWARE['measured_effort']}'); "
             f'{recordings[0].mode}',
             f'1. right profile:  hold error {right["hold_error"]:.2g} rad; a {TRAJECTORY:g} s '
             f'FollowJointTrajectory goal {status} (error_code {code}); tracking error max '
             f'{1e3 * right["max_error"]:.3f} mrad ({right["worst_joint"]}), RMS {1e3 * right["rms"]:.3f} '
             f'mrad; {right["commands"]} commands',
             f'2. wrong profile, check off:  after {off["seconds"]:.1f} s the arm is '
             f'{off["drift"]:.4f} rad off its hold at {off["drift_joint"]} (q - q0: '
             + ', '.join(f'{_short(names[j])} {off["offset"][j]:+.4f}' for j in range(len(names)))
             + f' rad); tracking error max {1e3 * off["max_error"]:.1f} mrad; {off["commands"]} commands',
             f'3. wrong profile, check on (default):  {refused["commands"]} commands in '
             f'{refused["seconds"]:.1f} s ({refused["states"]} joint states); the arm moved '
             f'{refused["moved"]:.3g} rad; simulated time stood at {refused["simulated"]:.3f} s',
             f'   ERROR: {refused["error"]}']
    if refused['diagnostic']:
        message, mode = refused['diagnostic']
        lines.append(f'   /diagnostics ERROR: {message} (mode: {mode})')
    if text:
        lines.insert(3, f'   goal: {text}')
    return '\n'.join(lines)


# --- plot --------------------------------------------------------------------------------------

def _axis(series, origin):
    """(seconds, values) of a Series: simulated time from its stamps since the stamp ``origin`` (ns), or
    with ``origin`` None wall time since its first message."""
    t, stamps, values = series.arrays()
    if origin is not None:
        return (stamps - origin) * 1e-9, values
    return t - t[0] if t.size else t, values


def plot(recordings, numbers, path) -> Path:
    """A row per run: joint positions (measured, desired) of the PLOT_JOINTS from the start pose, the
    tracking error, the commanded torques; the refused run's row with its ERROR in words."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    names = recordings[0].joint_names
    joints = _plot_joints(list(names))
    colors = ('tab:blue', 'tab:orange', 'tab:green')
    right, off, refused = (numbers[k] for k in ('right', 'check_off', 'refused'))
    titles = {
        'right': f'1. right profile: holds, then tracks a {TRAJECTORY:g} s goal to '
                 f'{1e3 * right["max_error"]:.2f} mrad, the largest error of any joint '
                 f'(goal {(right["goal"] or ("no result",))[0].lower()})',
        'check_off': f'2. wrong profile, check off: double gravity lifts the arm by {off["drift"]:.2f} rad '
                     f'({_short(off["drift_joint"])}) against the hold',
        'refused': f'3. wrong profile, default: refused, nothing commanded ({refused["commands"]} commands, '
                   f'the arm moved {refused["moved"]:.0f} rad)',
    }
    subtitles = {
        'right': "every node: hardware_profile 'kuka_fri', measured_effort 'gravity_compensated', the "
                 'conventions of the simulated firmware: the commands leave g(q) to it',
        'check_off': "controller: hardware_profile 'ros2_control' (it sends g(q) itself), "
                     'check_effort_convention false; the firmware adds g(q) again. Started disabled, enabled '
                     '(~/enable) at t = 0 with the arm at rest',
        'refused': "controller: hardware_profile 'ros2_control', check_effort_convention true (the "
                   'default): the efforts at rest hold none of g(q); the simulator waits for a first command',
    }
    fig = plt.figure(figsize=(16, 13))
    head, *rows = fig.subfigures(4, 1, height_ratios=(0.35, 4, 4, 4))
    head.suptitle(f'{recordings[0].robot_name}, simulated with a firmware that adds g(q) to every command '
                  'and reports gravity-compensated efforts', fontsize=13, fontweight='bold', y=0.8)
    for row, rec in zip(rows, recordings):
        key = rec.case.key
        row.text(0.01, 0.985, titles[key], fontsize=12, fontweight='bold', ha='left', va='top')
        row.text(0.01, 0.915, subtitles[key], fontsize=9, color='0.3', ha='left', va='top')
        axes = row.subplots(1, 3)
        row.subplots_adjust(left=0.06, right=0.985, top=0.78, bottom=0.15, wspace=0.22)
        ax_q, ax_e, ax_tau = axes
        origin = (None if key == 'refused' or not rec.joint_states.stamp
                  else rec.sent if key == 'check_off' else rec.joint_states.stamp[0])
        tq, q = _axis(rec.joint_states, origin)
        q0 = q[0] if q.size else np.zeros(len(names))
        td, q_d = _axis(rec.desired, origin)
        for c, j in enumerate(joints):
            ax_q.plot(tq, q[:, j] - q0[j], color=colors[c], lw=1.8, label=_short(names[j]))
            if q_d.size:
                ax_q.plot(td, q_d[:, j] - q0[j], color='k', lw=0.9, ls=(0, (4, 3)),
                          label='desired' if c == len(joints) - 1 else None)
        ax_q.set_ylabel('position − start pose [rad]')
        ax_q.set_title('joint positions' + (' (dashed: desired)' if q_d.size else ''), loc='left',
                       fontsize=10)
        ax_q.legend(fontsize=8, loc='center right' if key == 'check_off' else 'best')
        ax_q.grid(True, alpha=0.3)
        if key == 'refused':
            ax_q.set_ylim(-0.05, 0.05)
            ax_q.set_xlabel('wall-clock time [s] (simulated time stands still)')
            _refusal_panel(ax_e, refused)
            ax_tau.axis('off')
            ax_tau.text(0.5, 0.5, f'{COMMANDS_TOPIC}\n\n{refused["commands"]} messages\nin '
                                  f'{refused["seconds"]:.1f} s', ha='center', va='center', fontsize=15,
                        transform=ax_tau.transAxes,
                        bbox=dict(boxstyle='round', facecolor='#eef6ee', edgecolor='#2ca02c'))
            continue
        te, e = _axis(rec.tracking_error, origin)
        tt, tau = _axis(rec.commands, origin)
        for c, j in enumerate(joints):
            ax_e.plot(te, 1e3 * e[:, j], color=colors[c], lw=1.2, label=_short(names[j]))
            if tau.ndim == 2 and tau.shape[1] == len(names):
                ax_tau.plot(tt, tau[:, j], color=colors[c], lw=1.2, label=_short(names[j]))
        ax_e.axhline(0.0, color='k', lw=0.5)
        ax_e.set_ylabel('e = q_d − q [mrad]')
        ax_e.set_title('tracking error (~/tracking_error)', loc='left', fontsize=10)
        ax_tau.axhline(0.0, color='k', lw=0.5)
        ax_tau.set_ylabel('commanded τ [N m]')
        ax_tau.set_title(f'commands ({COMMANDS_TOPIC})', loc='left', fontsize=10)
        ax_tau.legend(fontsize=8, loc='best')
        if key == 'right' and rec.sent is not None:
            sent = (rec.sent - origin) * 1e-9
            for ax in axes:
                ax.axvspan(sent, sent + TRAJECTORY, color='0.92', zorder=0)
            ax_q.text(sent + 0.05, 0.03, 'goal', transform=ax_q.get_xaxis_transform(), fontsize=8,
                      color='0.4')
        if key == 'check_off':
            for ax in axes:
                ax.axvline(0.0, color='0.4', lw=0.8, ls=':')
            ax_q.text(0.03, 0.03, '~/enable', transform=ax_q.get_xaxis_transform(), fontsize=8, color='0.4')
            ax_tau.text(0.98, 0.5, 'sent: g(q) + the PD term\napplied: that + g(q) (firmware)\n'
                                   'at rest: PD = −g(q), sent = 0', transform=ax_tau.transAxes, ha='right',
                        va='center', fontsize=8.5, color='0.3')
        for ax in axes:
            ax.grid(True, alpha=0.3)
            ax.set_xlabel('simulated time [s]')
    return save_figure(fig, path, dpi=90)


def _refusal_panel(ax, numbers):
    """The refused run's ERROR line and /diagnostics status, in words."""
    ax.axis('off')
    error = numbers['error'] or '(no ERROR line received)'
    text = 'ERROR on /rosout:\n' + textwrap.fill(error, 62)
    if numbers['diagnostic']:
        message, mode = numbers['diagnostic']
        text += '\n\n/diagnostics ERROR, mode:\n' + textwrap.fill(mode, 62)
    ax.text(0.0, 1.0, text, ha='left', va='top', fontsize=8.5, family='monospace', transform=ax.transAxes,
            bbox=dict(boxstyle='round', facecolor='#fdecea', edgecolor='#d62728'))


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
