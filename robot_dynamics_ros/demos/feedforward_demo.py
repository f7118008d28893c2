"""Demo (``python -m robot_dynamics_ros.demos --feedforward``, ``make demo DEMO_ARGS=--feedforward``):
trajectory_feedforward, the relay that fills a FollowJointTrajectory goal's efforts with the model's
inverse dynamics, in front of a JointTrajectoryController with an effort interface, whose PID adds the
efforts to its output. JTC itself is not installable here: jtc_stand_in.py stands in for it (PD plus the
trajectory's efforts, JTC's interpolation). The graph, in this process:

    simulator_node (the UR5e, config/simulation.yaml: no friction) ──joint_states──> jtc_stand_in
    jtc_stand_in ──effort_controller/commands──> simulator_node
    this demo ──goal──> (a) jtc_stand_in's FollowJointTrajectory action, efforts empty
                        (b) trajectory_feedforward's ~/follow_joint_trajectory
                                ──efforts filled──> jtc_stand_in's action

No computed_torque_controller: the stand-in commands the simulator. The same TRAJECTORY s demo trajectory
(recording.demo_trajectory from the start pose, a point every KNOT_STEP s with positions, velocities and
accelerations, as MoveIt sends them) runs twice, each time in a fresh graph, under the same PD gains
kp = KP M_ii(q0), kd = KD M_ii(q0) (each joint's own inertia at the start pose): (a) with no
feed-forward, the PD alone fights gravity and inertia; (b) with the relay's efforts, the PD is left with
what the model and the interpolation miss. The stand-in commands nothing before its goal
(``hold_before_goal`` false; the simulator waits for a first command), so both runs start from rest at
the start pose on the trajectory's first point (JTC would hold there with its PD alone, and sag).

Records /joint_states and the stand-in's ~/controller_state (desired positions, the error q_d − q, the
interpolated feed-forward τ_ff and the command τ = PD + τ_ff); prints the max and RMS tracking error per
joint of both runs and the improvement; draws out/demo_feedforward.png (``--output``'s folder).

Exit code 0 when both goals succeeded, run (b)'s efforts were filled (and (a)'s empty), and the feed-forward
run's largest tracking error is at least MIN_IMPROVEMENT times smaller than the PD run's; 1 otherwise or
when something did not arrive. The nodes run in this process whatever ``--mode``.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import bringup
from robot_dynamics_ros.demos.joint_space_report import JOINT_STATES_TOPIC
from robot_dynamics_ros.demos.recording import (
    GraphRun,
    Series,
    demo_knots,
    demo_main,
    goal_result,
    save_figure,
    simulation_graph,
    trajectory_message,
    urdf_robot_name,
    viewer_settings,
)
from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['CASES', 'Case', 'CaseRecording', 'run', 'summary', 'report_text', 'plot', 'main']

TRAJECTORY = 3.0            # s, the demo trajectory's length
KNOT_STEP = 0.1             # s between its points
SETTLE = 0.5                # s of simulated time recorded after it (the last point held)
KP, KD = 400.0, 40.0        # [1/s², 1/s]: the PD gains per unit of the joint's inertia M_ii(q0)
MIN_IMPROVEMENT = 10.0      # the feed-forward run's max error is at least this many times smaller
STAND_IN = 'jtc_stand_in'
STAND_IN_ACTION = '/joint_trajectory_controller/follow_joint_trajectory'
RELAY_ACTION = f'/{bringup.FEEDFORWARD.name}/follow_joint_trajectory'
STATE_TOPIC = f'/{STAND_IN}/controller_state'


@dataclass(frozen=True)
class Case:
    """One run: ``key``, a title, the action the goal goes to."""
    key: str
    title: str
    action: str


CASES = (
    Case('pd', 'without feed-forward: the goal straight to the JTC stand-in (efforts empty)',
         STAND_IN_ACTION),
    Case('feedforward', 'with feed-forward: the goal through trajectory_feedforward (efforts filled)',
         RELAY_ACTION),
)


@dataclass
class CaseRecording:
    """What one run records, vectors in ``joint_names`` order (/joint_states'); stamps: simulated time
    (ns). The controller_state series share their stamps (one message each)."""

    case: Case
    joint_names: tuple = ()
    joint_states: Series = field(default_factory=Series)
    desired: Series = field(default_factory=Series)         # q_d
    error: Series = field(default_factory=Series)           # e = q_d − q
    feedforward: Series = field(default_factory=Series)     # τ_ff, the trajectory's efforts interpolated
    command: Series = field(default_factory=Series)         # τ = PD + τ_ff
    kp: np.ndarray | None = None
    kd: np.ndarray | None = None
    goal_result: tuple | None = None    # (status, error_code, error_string)
    robot_name: str = 'robot'
    mode: str = ''


class FeedforwardDemoRecorder:
    """The work of the demo's own node (``node``) for one run: records ``rec``; ``follow[action]``: a
    FollowJointTrajectory client of each action."""

    def __init__(self, rec, node):
        from control_msgs.action import FollowJointTrajectory
        from control_msgs.msg import JointTrajectoryControllerState
        from rclpy.action import ActionClient
        from rclpy.qos import QoSProfile
        from sensor_msgs.msg import JointState

        qos = QoSProfile(depth=500)
        self.rec, self.node = rec, node
        self.follow = {action: ActionClient(node, FollowJointTrajectory, action)
                       for action in (STAND_IN_ACTION, RELAY_ACTION)}
        node.create_subscription(JointState, JOINT_STATES_TOPIC, self.on_state, qos)
        node.create_subscription(JointTrajectoryControllerState, STATE_TOPIC, self.on_controller, qos)
        self._order = {}

    def _ordered(self, names):
        """Indices taking ``names``' order to rec.joint_names' (matched by name)."""
        from robot_dynamics_ros.nodes.conversions import index_map

        names = tuple(names)
        if names not in self._order:
            self._order[names] = index_map(names, self.rec.joint_names)
        return self._order[names]

    def on_state(self, msg):
        rec = self.rec
        if not rec.joint_names:
            rec.joint_names = tuple(msg.name)
        rec.joint_states.add(stamp_ns(msg.header.stamp),
                             np.asarray(msg.position)[self._ordered(msg.name)].tolist())

    def on_controller(self, msg):
        rec = self.rec
        if not rec.joint_names:
            return
        k, stamp = self._ordered(msg.joint_names), stamp_ns(msg.header.stamp)
        for series, values in ((rec.desired, msg.reference.positions), (rec.error, msg.error.positions),
                               (rec.feedforward, msg.reference.effort), (rec.command, msg.output.effort)):
            series.add(stamp, np.asarray(values)[k].tolist())


def make_recorder(rec, context) -> FeedforwardDemoRecorder:
    """The demo's recorder for one run, on a node of its own (imports rclpy)."""
    from rclpy.node import Node

    return FeedforwardDemoRecorder(rec, Node('demo_feedforward_recorder', context=context))


def pd_gains(urdf, joint_names, q0):
    """(kp, kd) [N m/rad, N m s/rad] in ``joint_names`` order: KP and KD times each joint's inertia
    M_ii at ``q0`` (the same order)."""
    from robot_dynamics_ros.nodes.conversions import index_map

    model = rd.load_urdf(urdf)
    to_model = index_map(joint_names, model.joint_names)
    q = np.zeros(model.nq)
    q[to_model] = q0
    inertia = np.diag(rd.mass_matrix(model, q))[index_map(model.joint_names, joint_names)]
    return KP * inertia, KD * inertia


def _graph(opts):
    """simulator_node and trajectory_feedforward (downstream_action: the stand-in's action), in this
    process; the stand-in is the demo's own node."""
    gc = simulation_graph(opts)
    relay = bringup.FEEDFORWARD
    parameters = {**gc.node_parameters, relay.name: {'downstream_action': STAND_IN_ACTION}}
    return dataclasses.replace(gc, nodes=(bringup.SIMULATOR, relay), feedforward=True,
                               node_parameters=parameters)


def _run_case(opts, case, gc, urdf):
    """One run of ``case`` (module docstring): (CaseRecording, problems)."""
    from rclpy.parameter import Parameter

    from robot_dynamics_ros.demos.jtc_stand_in import JtcStandIn

    rec = CaseRecording(case, robot_name=urdf_robot_name(urdf))
    print(f'demo: {case.title}', file=sys.stderr, flush=True)
    with GraphRun(gc, 'in-process', opts.executor, viewer_settings(opts)) as graph:
        recorder = make_recorder(rec, graph.context)
        graph.add(recorder.node)
        rec.mode = graph.description
        # the simulator publishes its start pose, at rest, until a first command
        if not graph.spin_until(lambda: rec.joint_states.values, opts.startup_timeout):
            return rec, [f'{case.title}: no joint states within {opts.startup_timeout:g} s'
                         + graph.exit_note()]
        q0 = np.asarray(rec.joint_states.values[-1])
        rec.kp, rec.kd = pd_gains(urdf, rec.joint_names, q0)
        graph.add(JtcStandIn(STAND_IN, context=graph.context, parameter_overrides=[
            Parameter('joints', value=list(rec.joint_names)), Parameter('kp', value=rec.kp.tolist()),
            Parameter('kd', value=rec.kd.tolist()), Parameter('hold_before_goal', value=False)]))
        if not graph.spin_until(lambda: all(c.server_is_ready() for c in recorder.follow.values()),
                                opts.startup_timeout):
            return rec, [f'{case.title}: the action servers {STAND_IN_ACTION} and {RELAY_ACTION} did not '
                         f'appear within {opts.startup_timeout:g} s' + graph.exit_note()]
        from control_msgs.action import FollowJointTrajectory

        knots, _ = demo_knots(SimpleNamespace(duration=TRAJECTORY, knot_step=KNOT_STEP), urdf,
                              rec.joint_names, q0)
        goal = recorder.follow[case.action].send_goal_async(
            FollowJointTrajectory.Goal(trajectory=trajectory_message(rec.joint_names, *knots)))
        span = TRAJECTORY + SETTLE
        if not graph.spin_until(lambda: rec.command.values, 30.0) \
                or not graph.wait_simulated(rec.command, span, timeout=3 * span + 30):
            return rec, [f'{case.title}: the simulation did not reach the end of the trajectory'
                         + graph.exit_note()]
        rec.goal_result = goal_result(graph.executor, goal)
    return rec, []


def run(opts):
    """The two runs (CASES), one after the other, each in a graph of its own: ([CaseRecording], problems)."""
    gc = _graph(opts)
    urdf = gc.robot_description()
    recordings = []
    for case in CASES:
        rec, problems = _run_case(opts, case, gc, urdf)
        recordings.append(rec)
        if problems:
            return recordings, problems
    return recordings, []


# --- analysis ----------------------------------------------------------------------------------

def summary(recordings):
    """The numbers of each run (a dict per case key): per joint max and RMS |e| [rad] over the trajectory
    and the settling after it, both overall, the largest |τ_ff| and |τ|."""
    out = {}
    for rec in recordings:
        _, _, e = rec.error.arrays()
        _, _, ff = rec.feedforward.arrays()
        _, _, tau = rec.command.arrays()
        per_max, per_rms = np.abs(e).max(axis=0), np.sqrt(np.mean(e ** 2, axis=0))
        worst = int(np.argmax(per_max))
        out[rec.case.key] = dict(
            max=per_max, rms=per_rms, max_error=float(per_max[worst]), worst_joint=rec.joint_names[worst],
            rms_error=float(np.sqrt(np.mean(e ** 2))), max_feedforward=float(np.abs(ff).max()),
            max_command=float(np.abs(tau).max()), goal=rec.goal_result or ('NONE', None, ''), steps=len(e))
    pd, ff = out['pd'], out['feedforward']
    out['improvement'] = dict(max=pd['max_error'] / ff['max_error'], rms=pd['rms_error'] / ff['rms_error'])
    return out


def _short(name):
    return name.replace('_joint', '')


def report_text(recordings, numbers) -> str:
    rec = recordings[0]
    pd, ff, better = numbers['pd'], numbers['feedforward'], numbers['improvement']
    lines = ['', f'{rec.robot_name}: a {TRAJECTORY:g} s FollowJointTrajectory goal ({KNOT_STEP:g} s between '
             f'points) on the JTC stand-in, PD kp = {KP:g} M_ii(q0), kd = {KD:g} M_ii(q0); {rec.mode}',
             '  kp [N m/rad]   ' + ' '.join(f'{v:9.3g}' for v in rec.kp),
             '  kd [N m s/rad] ' + ' '.join(f'{v:9.3g}' for v in rec.kd), '',
             f'{"tracking error [mrad]":24s}' + ''.join(f'{h:>12s}' for h in ('max, no ff', 'max, ff',
                                                                               'RMS, no ff', 'RMS, ff'))]
    for j, name in enumerate(rec.joint_names):
        lines.append(f'{name:24s}{1e3 * pd["max"][j]:12.3f}{1e3 * ff["max"][j]:12.3f}'
                     f'{1e3 * pd["rms"][j]:12.3f}{1e3 * ff["rms"][j]:12.3f}')
    lines.append(f'{"all joints":24s}{1e3 * pd["max_error"]:12.3f}{1e3 * ff["max_error"]:12.3f}'
                 f'{1e3 * pd["rms_error"]:12.3f}{1e3 * ff["rms_error"]:12.3f}')
    for key, label in (('pd', 'without feed-forward'), ('feedforward', 'with feed-forward')):
        status, code, text = numbers[key]['goal']
        n = numbers[key]
        lines.append(f'{label}: goal {status} (error_code {code}{", " + text if text else ""}); largest '
                     f'|tau_ff| {n["max_feedforward"]:.3g} N m, |tau| {n["max_command"]:.3g} N m; '
                     f'{n["steps"]} control steps')
    lines.append(f'feed-forward: max tracking error {better["max"]:.1f} times smaller, '
                 f'RMS {better["rms"]:.1f} times smaller')
    return '\n'.join(lines)


# --- plot --------------------------------------------------------------------------------------

def _axis(series, origin):
    """(simulated seconds since the stamp ``origin`` (ns), values) of a Series."""
    _, stamps, values = series.arrays()
    return (stamps - origin) * 1e-9, values


def plot(recordings, numbers, path) -> Path:
    """Top: the trajectory (desired, from the start pose), the tracking error without and with
    feed-forward on one scale; bottom: the max error per joint (bars, log scale), the commands without
    feed-forward (all PD), and with it (τ_ff solid, the PD part dashed)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    pd_rec, ff_rec = recordings
    names = pd_rec.joint_names
    colors = plt.get_cmap('tab10').colors
    pd, ff, better = numbers['pd'], numbers['feedforward'], numbers['improvement']
    fig, axes = plt.subplots(2, 3, figsize=(17, 9.5))
    fig.suptitle(f'{pd_rec.robot_name}: inverse-dynamics feed-forward (trajectory_feedforward) under a JTC '
                 f'stand-in\'s PD: max tracking error {1e3 * pd["max_error"]:.1f} → '
                 f'{1e3 * ff["max_error"]:.2f} mrad ({better["max"]:.0f}x), '
                 f'RMS {1e3 * pd["rms_error"]:.1f} → {1e3 * ff["rms_error"]:.2f} mrad ({better["rms"]:.0f}x)',
                 fontsize=13, fontweight='bold')
    fig.text(0.5, 0.935, f'the same {TRAJECTORY:g} s goal twice ({KNOT_STEP:g} s between points), PD '
             f'kp = {KP:g} M_ii(q0), kd = {KD:g} M_ii(q0) per joint; shaded: the trajectory, then its last '
             'point is held; simulated arm, no friction', ha='center', fontsize=10, color='0.3')
    (ax_q, ax_e0, ax_e1), (ax_bar, ax_t0, ax_t1) = axes
    origin = {id(rec): rec.command.stamp[0] for rec in recordings}
    t, q_d = _axis(ff_rec.desired, origin[id(ff_rec)])
    for j, name in enumerate(names):
        ax_q.plot(t, q_d[:, j] - q_d[0, j], color=colors[j], lw=1.5, label=_short(name))
    ax_q.set_ylabel('q_d − q_d(0) [rad]')
    ax_q.set_title('the trajectory (desired positions)', loc='left', fontsize=10)
    ax_q.legend(fontsize=8, ncol=2, loc='best')
    limit = 1.1e3 * pd['max_error']
    for ax, rec, key, label in ((ax_e0, pd_rec, 'pd', 'without feed-forward (PD alone)'),
                                (ax_e1, ff_rec, 'feedforward', 'with feed-forward (efforts filled)')):
        t, e = _axis(rec.error, origin[id(rec)])
        for j, name in enumerate(names):
            ax.plot(t, 1e3 * e[:, j], color=colors[j], lw=1.2, label=_short(name))
        ax.set_ylim(-limit, limit)
        ax.set_ylabel('e = q_d − q [mrad]')
        n = numbers[key]
        ax.set_title(f'tracking error {label}\nmax {1e3 * n["max_error"]:.2f} mrad '
                     f'({_short(n["worst_joint"])}), RMS {1e3 * n["rms_error"]:.2f} mrad', loc='left',
                     fontsize=10)
    ax_e1.text(0.02, 0.04, 'same scale as without', transform=ax_e1.transAxes, fontsize=8, color='0.4')
    x = np.arange(len(names))
    ax_bar.bar(x - 0.2, 1e3 * pd['max'], 0.4, color='tab:red', label='without feed-forward')
    ax_bar.bar(x + 0.2, 1e3 * ff['max'], 0.4, color='tab:green', label='with feed-forward')
    ax_bar.set_yscale('log')
    ax_bar.set_xticks(x, [_short(n) for n in names], fontsize=8, rotation=20)
    ax_bar.set_ylabel('max |e| [mrad] (log scale)')
    ax_bar.set_title(f'largest tracking error per joint: {better["max"]:.0f}x smaller overall', loc='left',
                     fontsize=10)
    ax_bar.legend(fontsize=8)
    t, tau = _axis(pd_rec.command, origin[id(pd_rec)])
    for j, name in enumerate(names):
        ax_t0.plot(t, tau[:, j], color=colors[j], lw=1.2, label=_short(name))
    ax_t0.set_title('commands without feed-forward: τ = PD only', loc='left', fontsize=10)
    t, tau = _axis(ff_rec.command, origin[id(ff_rec)])
    _, tau_ff = _axis(ff_rec.feedforward, origin[id(ff_rec)])
    for j, name in enumerate(names):
        ax_t1.plot(t, tau_ff[:, j], color=colors[j], lw=1.5, label=_short(name))
        ax_t1.plot(t, tau[:, j] - tau_ff[:, j], color=colors[j], lw=1.0, ls='--')
    ax_t1.set_title('with feed-forward: τ_ff filled by the relay (solid), PD part (dashed)', loc='left',
                    fontsize=10)
    low, high = (min(a.get_ylim()[0] for a in (ax_t0, ax_t1)), max(a.get_ylim()[1] for a in (ax_t0, ax_t1)))
    for ax in (ax_t0, ax_t1):
        ax.set_ylim(low, high + 0.3 * (high - low))         # room for the legend above the curves
        ax.set_ylabel('effort [N m]')
        ax.legend(fontsize=8, ncol=3, loc='upper center')
    for ax in (ax_q, ax_e0, ax_e1, ax_t0, ax_t1):
        ax.axvspan(0.0, TRAJECTORY, color='0.93', zorder=0)
        ax.axhline(0.0, color='k', lw=0.5)
        ax.set_xlabel('simulated time since the goal started [s]')
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return save_figure(fig, path, dpi=90)


# --- main --------------------------------------------------------------------------------------

def main(opts) -> int:
    """The feed-forward demo with the dispatcher's options (demos/__main__.py: ``--feedforward``,
    ``--output``, ``--no-plot``, ``--executor``, ``--config``, ``--urdf``; the nodes run in this process)."""
    return demo_main(opts, run, _report)


def _report(opts, recordings):
    """The report printed, the figure drawn; the failed checks."""
    numbers = summary(recordings)
    print(report_text(recordings, numbers))
    if not opts.no_plot:
        path = plot(recordings, numbers, Path(opts.output).with_name('demo_feedforward.png'))
        print(f'\nplot: {path}')
    failures = []
    for key, label in (('pd', 'without feed-forward'), ('feedforward', 'with feed-forward')):
        status, _, text = numbers[key]['goal']
        if status != 'SUCCEEDED':
            failures.append(f'{label}: the FollowJointTrajectory goal ended {status}: {text}')
    if numbers['pd']['max_feedforward'] != 0.0:
        failures.append('without feed-forward: the stand-in had efforts to add (the goal had none)')
    if not numbers['feedforward']['max_feedforward'] > 0.0:
        failures.append('with feed-forward: the goal reached the stand-in without efforts')
    if not numbers['improvement']['max'] >= MIN_IMPROVEMENT:
        failures.append(f'the feed-forward run\'s max tracking error is only '
                        f'{numbers["improvement"]["max"]:.1f} times smaller (expected at least '
                        f'{MIN_IMPROVEMENT:g})')
    return failures
