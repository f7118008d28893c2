"""Demo (``python -m robot_dynamics_ros.demos --mpc``, ``make demo DEMO_ARGS=--mpc``): the simulated
UR5e's tool visits a few targets under model-predictive control, with the torque limits on.

1. Starts the simulation graph with mpc_controller commanding the simulator (bringup's ``--controller
   mpc``; config/simulation.yaml: 50 knots of 10 ms re-planned at 100 Hz, torque_limits true), with
   its /diagnostics every 0.1 s.
2. Once the arm holds its first pose, sends the tool's targets to /mpc_controller/target_pose: the
   corners of a ``--side`` square in the base's y-z plane around the start, the tool turned by
   ±``--turn`` rad about its own z axis at alternate corners, then the start pose again (the task-space
   demo's targets). Each target goes once the tool is within ``--max-position-error`` and
   ``--max-orientation-error`` of the previous one and ``--dwell`` s of simulated time have passed
   (or after ``--target-timeout`` s of simulated time).
3. Records the joint states, effort commands, ~/predicted_path (each re-plan's plan of the tool),
   ~/desired_pose (each re-plan's goal: the screw profile's pose at its time) and /diagnostics; the
   tool's actual pose is the model's frame_pose of each joint state. Prints the pose error at each
   target, the solve times and the achieved re-plan rate; draws out/demo_mpc.png: the tool's path
   (targets, desired, predicted, actual), the pose error over time, the joint torques against their
   limits, the solve time per re-plan (sampled by /diagnostics) and the re-plan rate.

Exit code 0 when every target was reached within the tolerances with every torque within its limit;
1 otherwise or when something did not arrive.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_dynamics_ros.demos.pose_targets import (
    TOOL,
    PoseDemo,
    model_order,
    pose_target_recorder,
    start_at_rest,
)
from robot_dynamics_ros.demos.recording import (
    GraphRun,
    Series,
    demo_main,
    save_figure,
    simulation_graph,
    urdf_robot_name,
    viewer_settings,
)
from robot_dynamics_ros.demos.task_space_demo import square_targets
from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['MpcRecording', 'run', 'target_errors', 'report_text', 'plot']

CONTROLLER = '/mpc_controller'
TARGET_TOPIC = f'{CONTROLLER}/target_pose'
PATH_TOPIC = f'{CONTROLLER}/predicted_path'
DESIRED_TOPIC = f'{CONTROLLER}/desired_pose'
COMMANDS_TOPIC = '/effort_controller/commands'
JOINT_STATES_TOPIC = '/joint_states'
DIAGNOSTICS_PERIOD = 0.1


@dataclass
class MpcRecording:
    """What the MPC demo records (stamps: the simulated time, ns)."""

    joint_names: tuple = ()
    joint_states: Series = field(default_factory=Series)      # q
    commands: Series = field(default_factory=Series)          # τ, joint order
    paths: Series = field(default_factory=Series)             # the plan's tool positions (N + 1, 3)
    desired: Series = field(default_factory=Series)           # each re-plan's goal position (3,)
    solves: Series = field(default_factory=Series)            # (last solve ms, iterations), /diagnostics
    summary: dict = field(default_factory=dict)               # the last diagnostics values
    targets: list = field(default_factory=list)               # (stamp ns when sent, T (4, 4))
    reached: list = field(default_factory=list)               # stamp ns each was reached at, or None
    robot_name: str = 'robot'
    mode: str = ''
    effort_limit: np.ndarray | None = None


def make_recorder(rec, context):
    """The demo's node's recorder: records, and publishes the targets (imports rclpy)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Path as PathMsg

    recorder = pose_target_recorder(rec, context, 'demo_mpc_recorder', TARGET_TOPIC, JOINT_STATES_TOPIC,
                                    COMMANDS_TOPIC)

    def on_diagnostics(msg):
        for status in msg.status:
            if status.name.startswith('mpc_controller'):
                values = {v.key: v.value for v in status.values}
                rec.summary = values
                if 'last solve (ms)' in values:
                    rec.solves.add(rec.joint_states.stamp[-1] if rec.joint_states.stamp else -1,
                                   [float(values['last solve (ms)']), float(values['last iterations'])])

    node = recorder.node
    node.create_subscription(PathMsg, PATH_TOPIC, lambda m: rec.paths.add(
        stamp_ns(m.header.stamp), [[p.pose.position.x, p.pose.position.y, p.pose.position.z]
                                   for p in m.poses]), recorder.qos)
    node.create_subscription(PoseStamped, DESIRED_TOPIC, lambda m: rec.desired.add(
        stamp_ns(m.header.stamp), [m.pose.position.x, m.pose.position.y, m.pose.position.z]), recorder.qos)
    node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, recorder.qos)
    return recorder


def _pose_error(model, rec, T_goal):
    """(position m, orientation rad) of the tool at the last joint state from T_goal."""
    from robot_dynamics_ros import dynamics as rd
    from robot_dynamics_ros.dynamics.spatial import inverse_transform, log_transform

    q = np.asarray(rec.joint_states.values[-1])[model_order(model, rec.joint_names)]
    T = rd.frame_pose(model, q, TOOL)
    X = log_transform(inverse_transform(T) @ T_goal)
    return float(np.linalg.norm(T_goal[:3, 3] - T[:3, 3])), float(np.linalg.norm(X[:3]))


def run(opts):
    """Bring the graph up with the MPC controller, visit the targets, record. Returns (recording, model,
    problems)."""
    from robot_dynamics_ros import dynamics as rd

    gc = simulation_graph(opts, controller='mpc',
                          node_parameters={'mpc_controller': {'diagnostics_period': DIAGNOSTICS_PERIOD}})
    urdf = gc.robot_description()
    model = rd.load_urdf(urdf, tip_link=TOOL)
    rec = MpcRecording(robot_name=urdf_robot_name(urdf))
    with GraphRun(gc, opts.mode, opts.executor, viewer_settings(opts)) as graph:
        recorder = make_recorder(rec, graph.context)
        graph.add(recorder.node)
        T_start, problem = start_at_rest(PoseDemo(graph, model, rec, recorder), rec.commands, 'commands',
                                         opts.startup_timeout)
        if problem:
            return rec, model, [problem]
        for k, T in enumerate(square_targets(T_start, opts.side, opts.turn)):
            recorder.send(T)
            sent = rec.joint_states.stamp[-1]
            print(f'demo: target {k + 1}: tool at ({T[0, 3]:.3f}, {T[1, 3]:.3f}, {T[2, 3]:.3f}) m',
                  file=sys.stderr, flush=True)

            def arrived():
                position, angle = _pose_error(model, rec, T)
                return position <= opts.max_position_error and angle <= opts.max_orientation_error

            def timed_out():
                return rec.joint_states.stamp[-1] >= sent + opts.target_timeout * 1e9
            if not graph.spin_until(lambda: arrived() or timed_out(), 300.0):
                return rec, model, ['the simulation stalled' + graph.exit_note()]
            rec.reached.append(rec.joint_states.stamp[-1] if arrived() else None)
            if not graph.wait_simulated(rec.joint_states, opts.dwell):
                return rec, model, ['the simulation stalled']
    return rec, model, []


def target_errors(model, rec):
    """Per target: (position error m, orientation error rad) at the last joint state before the next
    target was sent (the last one: at the end of the recording)."""
    from robot_dynamics_ros import dynamics as rd
    from robot_dynamics_ros.dynamics.spatial import inverse_transform, log_transform

    _, stamps, Q = rec.joint_states.arrays()
    ends = [s for s, _ in rec.targets[1:]] + [np.inf]
    out = []
    for (_, T), end in zip(rec.targets, ends):
        before = np.flatnonzero(stamps < end)
        q = Q[before[-1]][model_order(model, rec.joint_names)]
        T_now = rd.frame_pose(model, q, TOOL)
        out.append((float(np.linalg.norm(T[:3, 3] - T_now[:3, 3])),
                    float(np.linalg.norm(log_transform(inverse_transform(T_now) @ T)[:3]))))
    return out


def replan_rate(rec):
    """Re-plans per simulated second, from the predicted paths' stamps (one per re-plan)."""
    _, stamps, _ = rec.paths.arrays()
    if stamps.size < 2:
        return math.nan
    return (stamps.size - 1) / ((stamps[-1] - stamps[0]) * 1e-9)


def report_text(rec, errors, opts) -> str:
    lines = ['', f'{rec.robot_name}: model-predictive control of {TOOL} over {len(rec.targets)} targets '
                 f'({rec.mode})', 'target  position error [mm]  orientation error [mrad]  reached after [s]']
    for k, ((position, angle), (sent, _)) in enumerate(zip(errors, rec.targets)):
        reached = rec.reached[k] if k < len(rec.reached) else None
        after = '-' if reached is None else f'{(reached - sent) * 1e-9:.2f}'
        lines.append(f'{k + 1:>6}  {1e3 * position:>18.3f}  {1e3 * angle:>24.3f}  {after:>17}')
    s = rec.summary
    if s:
        lines.append(f"solve time: median {s.get('solve median (ms)', '-')} ms, "
                     f"p99 {s.get('solve p99 (ms)', '-')} ms; re-plan rate {replan_rate(rec):.1f} Hz of "
                     f"simulated time ({s.get('replan rate (Hz)', '-')} Hz on /diagnostics)")
    _, _, tau = rec.commands.arrays()
    if tau.size and rec.effort_limit is not None:
        lines.append(f'largest |torque| / limit: {np.max(np.abs(tau) / rec.effort_limit):.3f}')
    return '\n'.join(lines)


def plot(rec, model, errors, path) -> Path:
    """Tool path (y-z: targets, desired, predicted, actual), pose error over time, torques against their
    limits, solve time per re-plan and the re-plan rate."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from robot_dynamics_ros import dynamics as rd

    _, sq, Q = rec.joint_states.arrays()
    origin = sq[0]
    t_q = (sq - origin) * 1e-9
    T_actual = [rd.frame_pose(model, q, TOOL) for q in Q[:, model_order(model, rec.joint_names)]]
    tc, _, tau = rec.commands.arrays()
    t_c = np.interp(tc, np.asarray(rec.joint_states.t), t_q) if tc.size else tc
    fig, axes = plt.subplots(2, 2, figsize=(14, 9))
    _plot_path(axes[0, 0], rec, np.array([T[:3, 3] for T in T_actual]))
    _plot_pose_error(axes[0, 1], rec, sq, T_actual)
    _plot_torques(axes[1, 0], rec, t_c, tau)
    _plot_solves(axes[1, 1], rec, origin)
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    worst = max(errors, key=lambda e: e[0]) if errors else (math.nan, math.nan)
    fig.suptitle(f'{rec.robot_name}: model-predictive control (box-FDDP, torque limits), {len(rec.targets)} '
                 f'targets; worst error at a target {1e3 * worst[0]:.2f} mm, '
                 f'{1e3 * max(e[1] for e in errors):.2f} mrad; {rec.mode}', fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return save_figure(fig, path)


def _plot_path(ax, rec, P):
    """The tool's path in the base's y-z plane: every 25th plan, the desired, the actual (P (N, 3)), the
    targets."""
    for k, plan in enumerate(rec.paths.values[::25]):
        plan = np.asarray(plan)
        ax.plot(plan[:, 1], plan[:, 2], color='#2ca02c', lw=0.6, alpha=0.5,
                label='predicted (a re-plan of every 25)' if k == 0 else None)
    if rec.desired.values:
        D = np.asarray(rec.desired.values)
        ax.plot(D[:, 1], D[:, 2], color='k', lw=1.0, ls='--',
                label="desired (each re-plan's goal: the screw profile)")
    ax.plot(P[:, 1], P[:, 2], color='#ff7f0e', lw=1.5, label='actual (frame_pose of the joint states)')
    for k, (_, T) in enumerate(rec.targets):
        ax.plot(T[1, 3], T[2, 3], 'ks', ms=6, label='targets' if k == 0 else None)
        ax.annotate(str(k + 1), (T[1, 3], T[2, 3]), textcoords='offset points', xytext=(6, 6), fontsize=9)
    ax.set_xlabel('y [m]')
    ax.set_ylabel('z [m]')
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_title(f'{TOOL} path in the base frame', loc='left', fontweight='bold')
    x_lo, x_hi = ax.get_xlim()
    ax.plot([x_hi + 0.9 * (x_hi - x_lo)], [P[0, 2]], alpha=0.0)     # room on the right for the legend
    ax.legend(fontsize=8, loc='center right')


def _plot_pose_error(ax, rec, sq, T_actual):
    """The pose error to the current target at every joint state (stamps ``sq``, tool poses
    ``T_actual``), log scale; a dotted line where a target was sent."""
    from robot_dynamics_ros.dynamics.spatial import inverse_transform, log_transform

    origin = sq[0]
    sent = np.array([s for s, _ in rec.targets])
    position_error, angle_error = [], []
    for s, T in zip(sq, T_actual):
        k = np.searchsorted(sent, s, side='right') - 1
        if k < 0:
            position_error.append(np.nan)
            angle_error.append(np.nan)
            continue
        goal = rec.targets[k][1]
        position_error.append(np.linalg.norm(goal[:3, 3] - T[:3, 3]))
        angle_error.append(np.linalg.norm(log_transform(inverse_transform(T) @ goal)[:3]))
    t_q = (sq - origin) * 1e-9
    ax.semilogy(t_q, np.maximum(position_error, 1e-7), color='#d62728', lw=1.0,
                label='|position error| [m]')
    ax.semilogy(t_q, np.maximum(angle_error, 1e-7), color='#9467bd', lw=1.0,
                label='|orientation error| [rad]')
    for s in sent:
        ax.axvline((s - origin) * 1e-9, color='0.6', lw=0.8, ls=':')
    ax.set_title('Pose error to the current target; dotted: a target sent', loc='left', fontweight='bold')
    ax.set_xlabel('simulated time [s]')
    ax.legend(fontsize=8)


def _plot_torques(ax, rec, t_c, tau):
    """The commanded torques (at simulated times ``t_c``) against their limits (dashed)."""
    for j, name in enumerate(rec.joint_names):
        line, = ax.plot(t_c, tau[:, j], lw=1.0, label=name)
        if rec.effort_limit is not None and np.isfinite(rec.effort_limit[j]):
            ax.axhline(rec.effort_limit[j], color=line.get_color(), lw=0.8, ls='--', alpha=0.6)
            ax.axhline(-rec.effort_limit[j], color=line.get_color(), lw=0.8, ls='--', alpha=0.6)
    ax.set_ylabel('[N m]')
    ax.set_xlabel('simulated time [s]')
    ax.set_title('Joint torques (effort_controller/commands); dashed: their limits', loc='left',
                 fontweight='bold')
    ax.legend(fontsize=7, ncol=2)


def _plot_solves(ax, rec, origin):
    """The solve time and iterations sampled by /diagnostics, and the re-plan rate (a running mean of
    the predicted paths' rate, on a second axis); simulated time from the stamp ``origin``."""
    _, ss, solves = rec.solves.arrays()
    if solves.size:
        keep = ss >= 0
        ax.plot((ss[keep] - origin) * 1e-9, solves[keep, 0], 'o', ms=3, color='#1f77b4',
                label=f'solve time [ms] (sampled every {DIAGNOSTICS_PERIOD:g} s)')
        ax.plot((ss[keep] - origin) * 1e-9, solves[keep, 1], 'x', ms=3, color='#8c564b', label='iterations')
    _, sp, _ = rec.paths.arrays()
    if sp.size > 1:
        rate = 1.0 / np.maximum(np.diff(sp) * 1e-9, 1e-9)
        window = min(25, rate.size)
        smooth = np.convolve(rate, np.ones(window) / window, mode='valid')
        ax2 = ax.twinx()
        ax2.plot((sp[window:] - origin) * 1e-9, smooth, color='#2ca02c', lw=1.2,
                 label=f're-plan rate [Hz] (simulated time, mean of {window})')
        ax2.set_ylim(0, max(150.0, smooth.max() * 1.2))
        ax2.set_ylabel('re-plans per second')
        ax2.legend(fontsize=8, loc='upper right')
    ax.set_xlabel('simulated time [s]')
    ax.set_title('Solve time and iterations per re-plan; re-plan rate', loc='left', fontweight='bold')
    ax.legend(fontsize=8, loc='upper left')


def main(opts) -> int:
    """The MPC demo with the demos' parsed options (``--mpc`` and the ones it shares)."""
    return demo_main(opts, run, _report)


def _report(opts, rec, model):
    """The errors at the targets printed, the figure drawn; the failed checks."""
    errors = target_errors(model, rec)
    print(report_text(rec, errors, opts))
    if not opts.no_plot:
        path = plot(rec, model, errors, Path(opts.output).with_name('demo_mpc.png'))
        print(f'\nplot: {path}')
    failures = [f'target {k + 1} not reached within {opts.max_position_error * 1e3:g} mm and '
                f'{opts.max_orientation_error:g} rad'
                for k, (position, angle) in enumerate(errors)
                if not (position <= opts.max_position_error and angle <= opts.max_orientation_error)]
    _, _, tau = rec.commands.arrays()
    if not np.isfinite(tau).all():
        failures.append('a non-finite command')
    elif rec.effort_limit is not None and (np.abs(tau) > rec.effort_limit + 1e-9).any():
        failures.append('a torque beyond its limit')
    return failures
