"""Demo (``python -m robot_dynamics_ros.demos --identify``, ``make demo DEMO_ARGS=--identify``): the real
arm is not its URDF; identify it from a recording and run the controllers on what was identified.

1. The simulation graph with a simulator_node that plays the "real arm" (urdf/ur5e_real_arm.urdf with
   config/ur5e_real_arm.yaml's armature and effort offsets, joint friction on: tools/make_real_arm.py
   says how it differs from the UR5e's URDF) while the computed-torque controller, the dynamics node
   and the external torque estimator believe the stock urdf/ur5e.urdf.
2. The demo trajectory (the joint-space demo's) under computed torque: the tracking error, and the external
   torque estimator's "phantom" external torques (nothing touches the arm: they are model error).
3. An excitation trajectory (dynamics.excitation_trajectory: a finite Fourier series whose base
   regressor is well conditioned, within the joint limits) sent to the controller, /joint_states
   recorded into a rosbag2 bag (rosbags' Writer, mcap) as `ros2 bag record` would.
4. ``python -m robot_dynamics_ros.cli.identify robot --armature`` on that bag: out/identified_ur5e.urdf
   and out/identified_ur5e.yaml.
5. The graph again, the controller, dynamics node and estimator on the identified URDF and YAML (the
   simulator is the same real arm): the demo trajectory once more.
6. Prints the held-out torque errors and the tracking errors and phantom torques before and after;
   draws out/demo_identify.png.

Exit code 0 when the held-out torque RMS (all joints) dropped at least MIN_IMPROVEMENT times and the
phantom external torque on the moving arm after identification stays below the estimator's
contact_threshold; 1 otherwise or when something did not arrive. (At rest the joints' static friction
holds what the controller leaves over, up to the Coulomb friction: reported, not judged.)
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_dynamics_ros.cli import bringup, resources
from robot_dynamics_ros.demos.recording import (
    GraphRun,
    Series,
    demo_knots,
    demo_main,
    save_figure,
    simulation_graph,
    trajectory_message,
    values_by_name,
    viewer_settings,
)
from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['run', 'main', 'plot']

CONTROLLER = '/computed_torque_controller'
ESTIMATOR = '/external_torque_estimator'
TRAJECTORY_TOPIC = f'{CONTROLLER}/joint_trajectory'
TRACKING_ERROR_TOPIC = f'{CONTROLLER}/tracking_error'
EXTERNAL_TORQUES_TOPIC = f'{ESTIMATOR}/external_torques'
JOINT_STATES_TOPIC = '/joint_states'
REAL_URDF = 'ur5e_real_arm.urdf'
REAL_PARAMETERS = 'ur5e_real_arm.yaml'
MIN_IMPROVEMENT = 5.0           # the held-out torque RMS must drop at least this many times
SETTLE = 1.0                    # s of simulated time after each trajectory
MODEL_NODES = ('computed_torque_controller', 'dynamics_node', 'external_torque_estimator')
# The excitation runs as on a real arm, under the robot's own stiff joint position loop, not under
# computed torque on a model yet to be identified (on the UR5e's wrists the rotors' reflected inertia is
# hundreds of times the links' that the URDF holds, so M_URDF kp is far too soft to follow anything):
# the controller's gains are set so that M_URDF(q0)_jj kp_j = STIFFNESS E_j and M_URDF(q0)_jj kd_j =
# DAMPING E_j (E_j: the joint's effort limit, N m), a decoupled PD of 20 E N m/rad and 1 E N m s/rad.
STIFFNESS, DAMPING = 20.0, 1.0


@dataclass
class Run:
    """One pass of the demo trajectory: tracking errors (rad) and phantom external torques (N m)."""

    tracking_error: Series = field(default_factory=Series)
    external_torque: Series = field(default_factory=Series)
    velocity: Series = field(default_factory=Series)       # the joint states' (rad/s)
    window: tuple = (0, 0)      # stamps (ns) of the trajectory and the settling after it
    duration: float = 0.0       # s of the trajectory (the rest of the window: at rest)


@dataclass
class IdentifyRecording:
    joint_names: tuple = ()
    runs: list = field(default_factory=list)              # [stock Run, identified Run]
    excitation: object = None                             # the ExcitationTrajectory sent
    excitation_states: Series = field(default_factory=Series)
    bag: Path | None = None
    report: dict = field(default_factory=dict)            # identify robot --json
    held_out: dict = field(default_factory=dict)          # t, measured, stock, identified torques
    contact_threshold: float = float('nan')
    mode: str = ''


class IdentifyDemoRecorder:
    """The work of the demo's own node (``node``): records the joint states (and, while `current['bag']`
    is a list, the messages themselves for the bag), the tracking errors and the external torques of
    `current['run']`; sends trajectories (``reference``); sets the controller's gains
    (``set_parameters``). ``last_stamp``, ``last_position``: of the latest joint state."""

    def __init__(self, rec, node, current):
        from rcl_interfaces.srv import SetParametersAtomically
        from rclpy.qos import QoSProfile
        from sensor_msgs.msg import JointState
        from trajectory_msgs.msg import JointTrajectory

        qos = QoSProfile(depth=1000)
        self.rec, self.node, self.current = rec, node, current
        self.reference = node.create_publisher(JointTrajectory, TRAJECTORY_TOPIC, 10)
        self.set_parameters = node.create_client(SetParametersAtomically,
                                                 f'{CONTROLLER}/set_parameters_atomically')
        self.last_stamp = 0
        self.last_position = None
        node.create_subscription(JointState, JOINT_STATES_TOPIC, self.on_state, qos)
        node.create_subscription(JointState, TRACKING_ERROR_TOPIC, self.on_error, qos)
        node.create_subscription(JointState, EXTERNAL_TORQUES_TOPIC, self.on_external, qos)

    def on_state(self, msg):
        rec, current = self.rec, self.current
        if not rec.joint_names:
            rec.joint_names = tuple(msg.name)
        q = values_by_name(msg.name, msg.position, rec.joint_names)
        if q is None:
            return
        self.last_stamp, self.last_position = stamp_ns(msg.header.stamp), q
        if current.get('run') is not None:
            self._append(current['run'].velocity, msg, msg.velocity)
        if current.get('bag') is not None:
            current['bag'].append(msg)
            rec.excitation_states.add(stamp_ns(msg.header.stamp), q)

    def _append(self, series, msg, values):
        values = values_by_name(msg.name, values, self.rec.joint_names) if self.rec.joint_names else None
        if values is not None:
            series.add(stamp_ns(msg.header.stamp), values)

    def on_error(self, msg):
        if self.current.get('run') is not None:
            self._append(self.current['run'].tracking_error, msg, msg.position)

    def on_external(self, msg):
        if self.current.get('run') is not None:
            self._append(self.current['run'].external_torque, msg, msg.effort)


def make_recorder(rec, context, current) -> IdentifyDemoRecorder:
    """The demo's recorder, on a node of its own (imports rclpy)."""
    from rclpy.node import Node

    return IdentifyDemoRecorder(rec, Node('demo_identify_recorder', context=context), current)


def _wait(graph, recorder, seconds, wall=None):
    """Spin for `seconds` of simulated time (the joint states' stamps); False if they stopped."""
    until = recorder.last_stamp + int(seconds * 1e9)
    return graph.spin_until(lambda: recorder.last_stamp >= until, wall or 3.0 * seconds + 60.0)


def _send(graph, recorder, rec, knots, duration, current=None):
    """Publish the trajectory and spin until its end plus SETTLE (simulated); (start, end) stamps. The
    joint states that queued while this process computed are taken first (the start is the latest
    stamp); with `current`, the states from the start on are collected in current['bag']."""
    graph.spin_until(lambda: False, 0.5)
    if current is not None:
        current['bag'] = []
    start = recorder.last_stamp
    recorder.reference.publish(trajectory_message(rec.joint_names, *knots))
    ok = _wait(graph, recorder, duration + SETTLE)
    print(f'demo: a {duration:g} s trajectory from simulated t = {start * 1e-9:.3f} s to '
          f'{recorder.last_stamp * 1e-9:.3f} s', file=sys.stderr, flush=True)
    return (start, recorder.last_stamp) if ok else None


def _real_arm():
    """(URDF path, {armature, effort_offset}) of the simulated real arm."""
    parameters = bringup.config_parameters(resources.config_file(REAL_PARAMETERS))['/**']
    return resources.urdf_file(REAL_URDF), parameters


def _graph(opts, model_parameters=None):
    """The simulation graph: the simulator plays the real arm; the model nodes get `model_parameters`."""
    urdf, parameters = _real_arm()
    simulator = dict(urdf_path=str(urdf), xacro_args='', friction=True,
                     armature=[float(a) for a in parameters['armature']],
                     effort_offset=[float(o) for o in parameters['effort_offset']])
    node_parameters = {'simulator_node': simulator, 'external_torque_estimator': {'friction': True},
                       'computed_torque_controller': {'friction_compensation': True}}
    for node in MODEL_NODES if model_parameters else ():
        node_parameters.setdefault(node, {}).update(model_parameters)
    return simulation_graph(opts, node_parameters=node_parameters)


def _pass(opts, rec, model_parameters, excite):
    """One graph run: the demo trajectory (a Run appended to rec.runs), and with `excite` the
    excitation trajectory recorded for the bag. Returns a list of problems (empty: fine)."""
    from robot_dynamics_ros import dynamics as rd

    gc = _graph(opts, model_parameters)
    current = {}
    with GraphRun(gc, opts.mode, opts.executor, viewer_settings(opts)) as graph:
        recorder = make_recorder(rec, graph.context, current)
        graph.add(recorder.node)
        rec.mode = graph.description
        if not graph.spin_until(lambda: recorder.last_position is not None
                                and recorder.reference.get_subscription_count() > 0, opts.startup_timeout):
            return [f'no joint states or {TRAJECTORY_TOPIC} subscriber within {opts.startup_timeout:g} s']
        _wait(graph, recorder, SETTLE)                  # the hold settles
        q0 = np.asarray(recorder.last_position)
        knots, _ = demo_knots(opts, gc.robot_description(), rec.joint_names, q0)
        run = Run()
        current['run'] = run
        window = _send(graph, recorder, rec, knots, opts.duration)
        current['run'] = None
        if window is None:
            return ['the simulation did not reach the end of the demo trajectory']
        run.window, run.duration = window, opts.duration
        rec.runs.append(run)
        if not excite:
            return []
        model = rd.load_urdf(gc.robot_description())
        problem = _stiffen(graph, recorder, model, q0)
        if problem:
            return [problem]
        q0 = np.asarray(recorder.last_position)          # where the stock controller left the arm
        # two periods: the fit (the first 70 %) sees every joint turn back (Coulomb friction and the
        # offset apart) and the held-out part is a new pass over the same motion
        excitation = rd.excitation_trajectory(model, opts.excitation_duration, q0=q0,
                                              base_frequency=2.0 / opts.excitation_duration)
        rec.excitation = excitation
        points = excitation.to_joint_trajectory()
        print(f'demo: exciting the arm for {opts.excitation_duration:g} s (condition of the base regressor '
              f'{excitation.condition:.3g}), recording /joint_states', file=sys.stderr, flush=True)
        knots = (np.asarray(points.time_from_start), np.asarray(points.positions),
                 np.asarray(points.velocities), np.asarray(points.accelerations))
        ok = _send(graph, recorder, rec, knots, opts.excitation_duration, current)
        messages, current['bag'] = current['bag'], None
        if ok is None:
            return ['the simulation did not reach the end of the excitation trajectory']
        rec.bag = write_bag(Path(opts.output).with_name('demo_identify_bag'), messages)
    return []


def _stiffen(graph, recorder, model, q0):
    """The controller's gains for the excitation (STIFFNESS, DAMPING); a problem or None."""
    from rcl_interfaces.srv import SetParametersAtomically
    from rclpy.parameter import Parameter

    from robot_dynamics_ros import dynamics as rd

    diagonal = np.diag(rd.mass_matrix(model, q0))
    size = np.where(np.isfinite(model.effort_limit), model.effort_limit, 100.0)
    gains = [Parameter('kp', value=[float(x) for x in STIFFNESS * size / diagonal]).to_parameter_msg(),
             Parameter('kd', value=[float(x) for x in DAMPING * size / diagonal]).to_parameter_msg()]
    if not graph.spin_until(recorder.set_parameters.service_is_ready, 30.0):
        return f'{CONTROLLER}/set_parameters_atomically is not available'
    future = recorder.set_parameters.call_async(SetParametersAtomically.Request(parameters=gains))
    if not graph.spin_until(future.done, 30.0) or not future.result().result.successful:
        return f'the controller did not take the excitation gains: {future.result()}'
    return None


def write_bag(path, messages):
    """A rosbag2 bag (mcap) at `path` with the JointState `messages` on /joint_states, as ros2 bag record
    writes it (the CDR of each message, received at its stamp): rosbags' Writer."""
    import shutil

    from rclpy.serialization import serialize_message
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    path = Path(path)
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    typestore = get_typestore(Stores.ROS2_HUMBLE)
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection(JOINT_STATES_TOPIC, 'sensor_msgs/msg/JointState',
                                           typestore=typestore)
        for msg in messages:
            writer.write(connection, stamp_ns(msg.header.stamp), serialize_message(msg))
    return path


def _identify(opts, rec):
    """identify robot on the bag, in this process as the command line runs it; (json report, problem)."""
    import contextlib
    import io

    from robot_dynamics_ros.cli import identify

    output = Path(opts.output).with_name('identified_ur5e.urdf')
    argv = ['robot', '--bag', str(rec.bag), '--urdf', str(resources.default_urdf() if opts.urdf is None
                                                             else resources.urdf_file(opts.urdf)),
            '--xacro-args', opts.xacro_args, '--output', str(output), '--armature', '--json']
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = identify.main(argv)
    if code != 0:
        return None, f'identify robot failed: {stderr.getvalue().strip()}'
    print(f'demo: python -m robot_dynamics_ros.cli.identify {" ".join(argv)}', file=sys.stderr, flush=True)
    return json.loads(stdout.getvalue()), None


def _held_out(rec, stock_urdf, parameters):
    """The held-out part of the bag (the last 30 %, as identify robot validates) as identify robot judges
    it: measured efforts and the torques the stock URDF and the identified model predict, through the
    fit's low-pass, and where each joint moves (robot_identification.torque_prediction)."""
    from robot_dynamics_ros import dynamics as rd
    from robot_dynamics_ros.cli.identify import read_joint_states
    from robot_dynamics_ros.dynamics.robot_identification import torque_prediction

    stock = rd.load_urdf(stock_urdf)
    identified = rd.load_urdf(rec.report['output'], armature=parameters['armature'])
    log = read_joint_states(rec.bag, JOINT_STATES_TOPIC, stock.joint_names)
    held_out = log.window(log.t[0] + 0.7 * (log.t[-1] - log.t[0]), None)
    t, measured, predicted_stock, moves = torque_prediction(stock, held_out.t, held_out.q, held_out.tau)
    _, _, predicted, _ = torque_prediction(identified, held_out.t, held_out.q, held_out.tau,
                                           offset=parameters['effort_offset'])
    return dict(t=t, measured=measured, stock=predicted_stock, identified=predicted, moving=moves,
                fit_end=float(held_out.t[0]))


def run(opts):
    """The demo's steps (module docstring); (recording, problems)."""
    rec = IdentifyRecording()
    config = bringup.config_parameters(_graph(opts).config)
    rec.contact_threshold = float(config['external_torque_estimator']['contact_threshold'])
    print('demo: the simulator plays the real arm (ur5e_real_arm); the controllers believe ur5e.urdf',
          file=sys.stderr, flush=True)
    problems = _pass(opts, rec, None, excite=True)
    if problems:
        return rec, problems
    rec.report, problem = _identify(opts, rec)
    if problem:
        return rec, [problem]
    parameters = bringup.config_parameters(rec.report['parameters'])['/**']     # identify robot's OUT.yaml
    identified = dict(urdf_path=rec.report['output'], xacro_args='',
                      armature=[float(a) for a in parameters['armature']],
                      effort_offset=[float(o) for o in parameters['effort_offset']])
    print('demo: the controller, dynamics node and estimator restarted on the identified model',
          file=sys.stderr, flush=True)
    problems = _pass(opts, rec, identified, excite=False)
    if problems:
        return rec, problems
    rec.held_out = _held_out(rec, _graph(opts).robot_description(), parameters)
    return rec, []


def _in_window(run, series):
    _, stamps, values = series.arrays()
    inside = (stamps >= run.window[0]) & (stamps <= run.window[1])
    return (stamps[inside] - run.window[0]) * 1e-9, values[inside]


def _phantom(run):
    """(moving (M, n), external torques (M, n)) of a run: each estimate, and whether its joint was moving
    then (robot_identification.moving of the joint states' velocities at that stamp)."""
    from robot_dynamics_ros.dynamics.robot_identification import moving

    _, stamps_x, X = run.external_torque.arrays()
    _, stamps_v, V = run.velocity.arrays()
    inside = (stamps_x >= run.window[0]) & (stamps_x <= run.window[1])
    stamps_x, X = stamps_x[inside], X[inside]
    speed = np.column_stack([np.interp(stamps_x, stamps_v, np.abs(V[:, j])) for j in range(V.shape[1])])
    return moving(speed), X


def summary(rec):
    """Numbers of the report and the pass criteria."""
    from robot_dynamics_ros.dynamics.robot_identification import rms_where

    h = rec.held_out
    rms = {key: rms_where(h[key] - h['measured'], h['moving']) for key in ('stock', 'identified')}
    total = {key: float(np.sqrt(np.mean((h[key] - h['measured'])[h['moving']] ** 2)))
             for key in ('stock', 'identified')}
    runs = []
    for run in rec.runs:
        _, E = _in_window(run, run.tracking_error)
        moves, X = _phantom(run)
        runs.append(dict(tracking_rms=float(np.sqrt(np.mean(E ** 2))), tracking_max=float(np.abs(E).max()),
                         phantom_max=float(np.abs(X[moves]).max(initial=0.0)),
                         phantom_rest=float(np.abs(X[~moves]).max(initial=0.0))))
    return dict(rms=rms, total=total, runs=runs)


def report_text(rec, numbers) -> str:
    names = [name.replace('_joint', '') for name in rec.joint_names]
    r = rec.report
    lines = ['', f'the real arm identified from {r["samples"]} samples ({r["base_parameters"]} base '
             'parameters, '
             f'condition {r["condition"]:.3g}, {r["method"]}); {rec.mode}',
             f'{"joint":<14} {"held-out RMS [N m]":>19} {"":>8} {"offset [N m]":>13} {"armature":>9}',
             f'{"":<14} {"URDF":>9} {"identified":>10}']
    for k, name in enumerate(names):
        lines.append(f'{name:<14} {numbers["rms"]["stock"][k]:9.3f} {numbers["rms"]["identified"][k]:10.3f} '
                     f'{"":>8} {r["offset"][k]:13.3f} {r["armature"][k]:9.3f}')
    lines.append(f'{"all joints":<14} {numbers["total"]["stock"]:9.3f} {numbers["total"]["identified"]:10.3f}'
                 f'   ({numbers["total"]["stock"] / numbers["total"]["identified"]:.1f} times smaller)')
    lines.append('')
    lines.append(f'{"":<20} {"tracking RMS [mrad]":>20} {"max [mrad]":>11}   phantom external torque max '
                 '[N m]: moving, at rest')
    for label, run in zip(('stock URDF', 'identified model'), numbers['runs']):
        lines.append(f'{label:<20} {1e3 * run["tracking_rms"]:20.3f} {1e3 * run["tracking_max"]:11.3f}   '
                     f'{run["phantom_max"]:28.3f} {run["phantom_rest"]:9.3f}')
    lines.append(f'(the estimator\'s contact_threshold: {rec.contact_threshold:g} N m; nothing touches the '
                 'arm. At rest the joints\' static friction holds whatever the controller leaves over, up to '
                 'the Coulomb friction: no observer can tell that torque from an external one)')
    return '\n'.join(lines)


def plot(rec, numbers, path) -> Path:
    """Held-out measured vs predicted torque per joint, the excitation, tracking error and phantom torque
    before vs after."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    h = rec.held_out
    n = len(rec.joint_names)
    fig = plt.figure(figsize=(16, 12))
    grid = fig.add_gridspec(4, max(n, 4) // 2 + max(n, 4) % 2)
    columns = grid.ncols
    t = h['t'] - h['t'][0]
    for k in range(n):
        ax = fig.add_subplot(grid[k // columns, k % columns])
        ax.plot(t, h['measured'][:, k], color='k', lw=1.4, label='measured')
        ax.plot(t, h['stock'][:, k], color='#d62728', lw=1.0,
                label=f'URDF ({numbers["rms"]["stock"][k]:.2f} N m RMS)')
        ax.plot(t, h['identified'][:, k], color='#2ca02c', lw=1.0, ls='--',
                label=f'identified ({numbers["rms"]["identified"][k]:.3f})')
        ax.set_title(rec.joint_names[k], loc='left', fontsize=9, fontweight='bold')
        ax.set_ylabel('torque [N m]', fontsize=8)
        ax.legend(fontsize=7, loc='upper right')
        if k // columns == (n - 1) // columns:
            ax.set_xlabel('held-out time [s]', fontsize=8)
    ax = fig.add_subplot(grid[2, :])
    _, stamps, Q = rec.excitation_states.arrays()
    ax.plot((stamps - stamps[0]) * 1e-9, Q, lw=1.0)
    ax.axvspan(0.7 * (stamps[-1] - stamps[0]) * 1e-9, (stamps[-1] - stamps[0]) * 1e-9, color='0.9',
               label='held out (not fitted)')
    ax.set_xlabel('time [s]')
    ax.set_ylabel('joint position [rad]')
    ax.set_title(f'Excitation trajectory (finite Fourier series, condition {rec.excitation.condition:.3g}) '
                 'as recorded to the bag', loc='left', fontweight='bold')
    ax.legend(rec.joint_names + ('held out',), fontsize=7, ncol=7, loc='upper right')
    colors = ('#d62728', '#2ca02c')
    labels = ('stock URDF', 'identified model')
    ax = fig.add_subplot(grid[3, :columns // 2])
    for run, color, label in zip(rec.runs, colors, labels):
        time_s, E = _in_window(run, run.tracking_error)
        ax.semilogy(time_s, np.maximum(np.linalg.norm(E, axis=1), 1e-9), color=color, lw=1.0, label=label)
    ax.set_xlabel('time since the trajectory was sent [s]')
    ax.set_ylabel('|tracking error| [rad]')
    ax.set_title('Computed-torque tracking of the demo trajectory', loc='left', fontweight='bold')
    ax.legend(fontsize=8)
    ax = fig.add_subplot(grid[3, columns // 2:])
    for run, color, label in zip(rec.runs, colors, labels):
        time_s, X = _in_window(run, run.external_torque)
        ax.plot(time_s, np.abs(X).max(axis=1), color=color, lw=1.0, label=label)
    ax.axhline(rec.contact_threshold, color='k', ls=':', label='contact_threshold')
    ax.axvspan(rec.runs[0].duration, (rec.runs[0].window[1] - rec.runs[0].window[0]) * 1e-9, color='0.92',
               label='at rest: static friction')
    ax.set_xlabel('time since the trajectory was sent [s]')
    ax.set_ylabel('max |external torque| [N m]')
    ax.set_title('Phantom external torque (nothing touches the arm)', loc='left', fontweight='bold')
    ax.legend(fontsize=8)
    for a in fig.axes:
        a.grid(True, alpha=0.3)
    fig.suptitle(f'UR5e: the real arm identified from a recording; held-out torque error '
                 f'{numbers["total"]["stock"]:.2f} -> {numbers["total"]["identified"]:.3f} N m RMS',
                 fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return save_figure(fig, path)


def main(opts) -> int:
    """The identification demo with the demos' parsed options (demos/__main__.py: ``--identify``
    and the ones it shares)."""
    return demo_main(opts, run, _report)


def _report(opts, rec):
    """The report printed, the figure drawn; the failed checks."""
    numbers = summary(rec)
    print(report_text(rec, numbers))
    if not opts.no_plot:
        print(f'\nplot: {plot(rec, numbers, Path(opts.output).with_name("demo_identify.png"))}')
    failures = []
    improvement = numbers['total']['stock'] / numbers['total']['identified']
    if not improvement >= MIN_IMPROVEMENT:
        failures.append(f'the held-out torque RMS dropped {improvement:.3g} times (at least '
                        f'{MIN_IMPROVEMENT:g})')
    phantom = numbers['runs'][1]['phantom_max']
    if not phantom < rec.contact_threshold:
        failures.append(f'the phantom external torque on the moving joints of the identified model reaches '
                        f'{phantom:.3g} N m, not below the contact_threshold {rec.contact_threshold:g} N m')
    return failures
