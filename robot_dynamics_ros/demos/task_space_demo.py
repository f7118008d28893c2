"""Demo (``python -m robot_dynamics_ros.demos --task-space``, ``make demo DEMO_ARGS=--task-space``): the
simulated UR5e's tool visits the corners of a square under task-space control.

1. Starts the simulation graph with task_space_controller commanding the simulator (bringup's
   ``--controller task_space``; config/simulation.yaml), as the joint-space demo does for the joint
   controller.
2. Once the arm holds its first pose, sends the tool's targets to /task_space_controller/target_pose
   (geometry_msgs/PoseStamped in the root link's frame): the corners of a ``--side`` square in the
   base's y-z plane around the start, the tool turned by ±``--turn`` rad about its own z axis at
   alternate corners, then the start pose again. Each target goes when the controller's desired pose
   (~/desired_pose) has reached the previous one, plus ``--dwell`` s.
3. Records the joint states, effort commands, ~/pose_error and ~/desired_pose; the tool's actual
   pose is the model's frame_pose of each joint state. Prints the pose error at each corner (the
   last ~/pose_error before the next target) and the largest during the motion; draws the tool's
   path, desired and actual position over time, the pose error and the joint torques to
   out/demo_task_space.png.

Exit code 0 when every corner was reached within ``--max-position-error`` and
``--max-orientation-error``; 1 otherwise or when something did not arrive.
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
    desired_pose_at,
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
from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['TaskSpaceRecording', 'square_targets', 'corner_errors', 'run', 'report_text', 'plot']

CONTROLLER = '/task_space_controller'
TARGET_TOPIC = f'{CONTROLLER}/target_pose'
POSE_ERROR_TOPIC = f'{CONTROLLER}/pose_error'
DESIRED_POSE_TOPIC = f'{CONTROLLER}/desired_pose'
COMMANDS_TOPIC = '/effort_controller/commands'
JOINT_STATES_TOPIC = '/joint_states'


def square_targets(T_start, side=0.12, turn=0.3):
    """The demo's targets (4, 4 each): the corners of a square of ``side`` m in the base's y-z plane,
    centred on the start's position, the tool turned by +turn, -turn, +turn, -turn rad about its own
    z axis at the corners, then the start pose."""
    from robot_dynamics_ros.dynamics.spatial import exp_coordinates

    h = side / 2.0
    targets = []
    for k, (dy, dz) in enumerate(((-h, -h), (h, -h), (h, h), (-h, h))):
        T = T_start @ exp_coordinates([0.0, 0.0, turn if k % 2 == 0 else -turn, 0.0, 0.0, 0.0])
        T[:3, 3] = T_start[:3, 3] + (0.0, dy, dz)
        targets.append(T)
    return targets + [np.array(T_start, dtype=np.float64)]


@dataclass
class TaskSpaceRecording:
    """What the task-space demo records (stamps: the simulated time, ns)."""

    joint_names: tuple = ()
    joint_states: Series = field(default_factory=Series)      # q
    commands: Series = field(default_factory=Series)          # τ, joint order
    pose_error: Series = field(default_factory=Series)        # X_e (6,), angular first
    desired: Series = field(default_factory=Series)           # T_des (4, 4) flattened
    targets: list = field(default_factory=list)               # (stamp ns when sent, T (4, 4))
    robot_name: str = 'robot'
    mode: str = ''
    effort_limit: np.ndarray | None = None


def make_recorder(rec, context):
    """The demo's node's recorder: records, and publishes the targets (imports rclpy)."""
    from geometry_msgs.msg import PoseStamped, TwistStamped

    from robot_dynamics_ros.nodes.conversions import pose_to_matrix

    recorder = pose_target_recorder(rec, context, 'demo_task_space_recorder', TARGET_TOPIC,
                                    JOINT_STATES_TOPIC, COMMANDS_TOPIC)
    recorder.node.create_subscription(TwistStamped, POSE_ERROR_TOPIC, lambda m: rec.pose_error.add(
        stamp_ns(m.header.stamp), [m.twist.angular.x, m.twist.angular.y, m.twist.angular.z,
                                   m.twist.linear.x, m.twist.linear.y, m.twist.linear.z]), recorder.qos)
    recorder.node.create_subscription(PoseStamped, DESIRED_POSE_TOPIC, lambda m: rec.desired.add(
        stamp_ns(m.header.stamp), pose_to_matrix(m.pose).ravel().tolist()), recorder.qos)
    return recorder


def run(opts):
    """Bring the graph up with the task-space controller, visit the targets, record. Returns
    (recording, model, problems)."""
    from robot_dynamics_ros import dynamics as rd

    gc = simulation_graph(opts, controller='task_space')
    urdf = gc.robot_description()
    model = rd.load_urdf(urdf, tip_link=TOOL)
    rec = TaskSpaceRecording(robot_name=urdf_robot_name(urdf))
    with GraphRun(gc, opts.mode, opts.executor, viewer_settings(opts)) as graph:
        recorder = make_recorder(rec, graph.context)
        graph.add(recorder.node)
        T_start, problem = start_at_rest(PoseDemo(graph, model, rec, recorder), rec.pose_error, 'pose errors',
                                         opts.startup_timeout)
        if problem:
            return rec, model, [problem]
        for k, T in enumerate(square_targets(T_start, opts.side, opts.turn)):
            recorder.send(T)
            print(f'demo: target {k + 1}: tool at ({T[0, 3]:.3f}, {T[1, 3]:.3f}, {T[2, 3]:.3f}) m',
                  file=sys.stderr, flush=True)
            # the desired pose reaches the target, then a dwell in simulated time
            if not graph.spin_until(lambda: desired_pose_at(rec, T), 120.0):
                return rec, model, [f'the desired pose did not reach target {k + 1}' + graph.exit_note()]
            if not graph.wait_simulated(rec.joint_states, opts.dwell):
                return rec, model, ['the simulation stalled']
    return rec, model, []


def corner_errors(rec):
    """Per target: (position error m, orientation error rad) of the last ~/pose_error before the
    next target was sent (the last one: before the recording ended), and the largest |position
    error| while moving."""
    _, stamps, X = rec.pose_error.arrays()
    ends = [s for s, _ in rec.targets[1:]] + [np.inf]
    out = []
    for end in ends:
        before = np.flatnonzero(stamps < end)
        x = X[before[-1]] if before.size else np.full(6, np.nan)
        out.append((float(np.linalg.norm(x[3:])), float(np.linalg.norm(x[:3]))))
    moving = np.linalg.norm(X[:, 3:], axis=1).max() if X.size else math.nan
    return out, float(moving)


def report_text(rec, errors, moving, opts) -> str:
    lines = ['', f'{rec.robot_name}: task-space control of {TOOL} over {len(rec.targets)} targets '
                 f'({rec.mode})', 'target  position error [um]  orientation error [urad]']
    for k, (position, angle) in enumerate(errors):
        lines.append(f'{k + 1:>6}  {1e6 * position:>20.3g}  {1e6 * angle:>24.3g}')
    lines.append(f'largest position error while moving: {1e6 * moving:.3g} um')
    _, s, _ = rec.joint_states.arrays()
    if s.size > 1:
        lines.append(f'simulated {1e-9 * (s[-1] - s[0]):.1f} s; /joint_states {len(s)} messages, '
                     f'{len(rec.commands.values)} commands')
    return '\n'.join(lines)


def plot(rec, model, errors, path) -> Path:
    """Tool path (y-z), position over time (desired vs actual), pose error (log), joint torques."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from robot_dynamics_ros import dynamics as rd

    _, sq, Q = rec.joint_states.arrays()
    _, sd, D = rec.desired.arrays()
    D = D.reshape(-1, 4, 4)[:, :3, 3]                      # desired positions
    _, se, X = rec.pose_error.arrays()
    tc, _, tau = rec.commands.arrays()
    origin = sq[0]
    P = np.array([rd.frame_pose(model, q, TOOL)[:3, 3] for q in Q[:, model_order(model, rec.joint_names)]])
    t_q, t_d, t_e = (sq - origin) * 1e-9, (sd - origin) * 1e-9, (se - origin) * 1e-9
    # commands carry no stamp: placed on the states' time axis by their arrival
    tq_wall = np.asarray(rec.joint_states.t)
    t_c = np.interp(tc, tq_wall, t_q) if tc.size else tc
    fig, axes = plt.subplots(2, 2, figsize=(14, 9))
    ax = axes[0, 0]
    ax.plot(D[:, 1], D[:, 2], color='#1f77b4', lw=2.5, label='desired (screw motion, quintic timing)')
    ax.plot(P[:, 1], P[:, 2], color='#ff7f0e', lw=1.2, ls='--',
            label='actual (frame_pose of the joint states)')
    for k, (_, T) in enumerate(rec.targets):
        ax.plot(T[1, 3], T[2, 3], 'ks', ms=6)
        ax.annotate(str(k + 1), (T[1, 3], T[2, 3]), textcoords='offset points', xytext=(6, 6), fontsize=9)
    ax.set_xlabel('y [m]')
    ax.set_ylabel('z [m]')
    ax.set_aspect('equal', adjustable='datalim')
    ax.set_title(f'{TOOL} path in the base frame', loc='left', fontweight='bold')
    ax.legend(fontsize=8)
    ax = axes[0, 1]
    for i, (axis_name, color) in enumerate(zip('xyz', ('#d62728', '#2ca02c', '#1f77b4'))):
        ax.plot(t_d, D[:, i], color=color, lw=2.5, alpha=0.5, label=f'desired {axis_name}')
        ax.plot(t_q, P[:, i], color=color, lw=1.0, ls='--', label=f'actual {axis_name}')
    ax.set_ylabel('[m]')
    ax.set_title('Tool position', loc='left', fontweight='bold')
    ax.legend(fontsize=8, ncol=3)
    ax = axes[1, 0]
    ax.semilogy(t_e, np.maximum(np.linalg.norm(X[:, 3:], axis=1), 1e-12), color='#d62728', lw=1.0,
                label='|position error| [m]')
    ax.semilogy(t_e, np.maximum(np.linalg.norm(X[:, :3], axis=1), 1e-12), color='#9467bd', lw=1.0,
                label='|orientation error| [rad]')
    for stamp, _ in rec.targets:
        ax.axvline((stamp - origin) * 1e-9, color='0.6', lw=0.8, ls=':')
    ax.set_title('Pose error X_e = log(T⁻¹ T_des) (~/pose_error); dotted: a target sent', loc='left',
                 fontweight='bold', fontsize=10)
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    for j, name in enumerate(rec.joint_names):
        ax.plot(t_c, tau[:, j], lw=1.0, label=name)
    ax.set_ylabel('[N m]')
    ax.set_title('Joint torques (effort_controller/commands)', loc='left', fontweight='bold')
    ax.legend(fontsize=7, ncol=2)
    for ax in (axes[0, 1], axes[1, 0], axes[1, 1]):
        ax.set_xlabel('simulated time [s]')
    for ax in axes.flat:
        ax.grid(True, alpha=0.3)
    worst = max(errors, key=lambda e: e[0]) if errors else (math.nan, math.nan)
    fig.suptitle(f'{rec.robot_name}: task-space computed torque, {len(rec.targets)} targets; worst error at '
                 f'a target {1e6 * worst[0]:.3g} µm, {1e6 * max(e[1] for e in errors):.3g} µrad; {rec.mode}',
                 fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return save_figure(fig, path)


def main(opts) -> int:
    """The task-space demo with the demos' parsed options (demos/__main__.py: ``--task-space`` and the ones it
    shares)."""
    return demo_main(opts, run, _report)


def _report(opts, rec, model):
    """The errors at the corners printed, the figure drawn; the failed checks."""
    errors, moving = corner_errors(rec)
    print(report_text(rec, errors, moving, opts))
    if not opts.no_plot:
        path = plot(rec, model, errors, Path(opts.output).with_name('demo_task_space.png'))
        print(f'\nplot: {path}')
    failures = [f'target {k + 1} not reached within {opts.max_position_error * 1e3:g} mm and '
                f'{opts.max_orientation_error:g} rad'
                for k, (position, angle) in enumerate(errors)
                if not (position <= opts.max_position_error and angle <= opts.max_orientation_error)]
    if not all(np.isfinite(v).all() for v in (rec.commands.values, rec.pose_error.values)):
        failures.append('a non-finite command or pose error')
    return failures
