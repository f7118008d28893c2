"""What the demos share: the demo trajectory, recorded series, figures, and a running graph.

- ``demo_main``: a graph demo's ``main(opts)`` around its steps (run, report, the time it took, the
  failures, the exit code); ``simulation_graph``: the simulation graph of the demo's options;
- ``demo_trajectory`` / ``trajectory_message``: the joint-space demo trajectory (smooth out-and-back
  bumps from a start pose, within the joint limits) as knots and as a trajectory_msgs/JointTrajectory;
  ``demo_knots``: its knots for the demo's options within a URDF's limits;
- ``urdf_joint_limits``, ``urdf_robot_name``: what a demo needs of a URDF (a file, or the XML of
  ``GraphConfig.robot_description()``: a xacro --urdf expanded), read by the package's own URDF reader
  (``dynamics.load_urdf``, ``dynamics.urdf.robot_name``); ``joint_limits``: a model's, by joint name;
- ``Series``: the messages of one topic as receive times, stamps and values (``at_common_stamps``: two of
  them at the stamps they share); ``values_by_name``: a
  message's values in the demo's joint order; ``record_positions``: a joint state's positions; the
  header stamps in ns: ``logic.stamps.stamp_ns``;
- ``save_figure``: a matplotlib figure to a PNG;
- ``GraphRun``: the simulation graph running (one bring-up process, one process per node, or in this
  process) with an executor for the demo's own nodes, and the browser viewer beside it in a process of
  its own (``viewer_settings``: the demos' ``--viewer-port`` and ``--viewer-wait``, None with
  ``--no-viewer``); ``spin_until`` /
  ``spin_for`` (finite timeouts, as the EventsExecutor needs: ``nodes.common``).

Each demo is a module of its own (joint_space_demo, task_space_demo, mpc_demo, payload_demo, lqr_demo,
identify_demo, hardware_demo, feedforward_demo, mujoco_demo; jtc_stand_in is that demo's stand-in for
ros2_control's JointTrajectoryController; pose_targets: what the demos that send pose targets share) with
``main(opts)``; ``python -m robot_dynamics_ros.demos`` picks one
(``demos/__main__.py``). Nothing here imports a demo.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import bringup
from robot_dynamics_ros.dynamics.urdf import robot_name
from robot_dynamics_ros.logic.stamps import stamp_ns
from robot_dynamics_ros.nodes.common import make_executor, spin_for, spin_until

__all__ = ['AMPLITUDES', 'BUMPS', 'GraphRun', 'Series', 'at_common_stamps', 'demo_knots', 'demo_main',
           'demo_trajectory', 'goal_result', 'joint_limits', 'record_positions', 'save_figure',
           'simulation_graph', 'spin_for', 'spin_until', 'trajectory_message', 'urdf_joint_limits',
           'urdf_robot_name', 'values_by_name', 'viewer_settings']


# Per joint (cycled for arms with more joints): excursion A [rad] and number of out-and-back
# bumps k over the trajectory. Chosen for the UR5e's home pose: every joint visibly moves,
# velocities stay below half the 3.14 rad/s limit for an 8 s trajectory.
AMPLITUDES = (0.9, -0.6, 0.8, -1.0, 1.0, 1.5)


BUMPS = (1, 2, 1, 2, 2, 1)


#: Kept away from the position limits [rad].
LIMIT_MARGIN = 0.1


#: The largest |q̇| of A sin^4(x) is A x' * max(4 sin^3 x cos x) = A x' * 3 sqrt(3) / 4.
_SIN4_PEAK_SLOPE = 3.0 * math.sqrt(3.0) / 4.0


#: Label of the bringup process in bringup.stop_processes' messages.
_BRINGUP = bringup.NodeSpec('bringup', 'bringup', 'robot_dynamics_ros.cli.bringup', '')
#: ... and of the viewer's.
_VIEWER = bringup.NodeSpec('viewer', 'viewer', 'robot_dynamics_ros.cli.view', '')
#: Seconds between a browser opening the viewer and the arm moving: the page loads its scene and draws.
VIEWER_FIRST_DRAW = 2.0


def viewer_settings(opts):
    """(The port the demo's viewer serves on, the seconds to wait for a browser to open it):
    ``--viewer-port``, ``--viewer-wait``; None with ``--no-viewer``."""
    return None if opts.no_viewer else (opts.viewer_port, opts.viewer_wait)


def demo_trajectory(q0, duration=8.0, knot_step=0.5, *, lower=None, upper=None,
                    velocity_limit=None):
    """Knots of the demo trajectory: (times (N,), positions, velocities, accelerations (N, n)).

    q_j(t) = q0_j + A_j sin^4(x_j), x_j = pi k_j t / T: k_j smooth out-and-back bumps, starting and
    ending at q0 at rest (q̇ = q̈ = 0). Derivatives, with s = sin x, c = cos x, x' = pi k / T:
    q̇ = 4 A s^3 c x',  q̈ = 4 A x'^2 (3 s^2 c^2 - s^4).
    A_j is flipped in sign or shrunk to keep q within [lower + 0.1, upper - 0.1] and |q̇| within
    half of ``velocity_limit`` (arrays (n,), inf where unlimited).
    """
    q0 = np.asarray(q0, dtype=np.float64)
    n = q0.size
    if duration <= 0 or knot_step <= 0:
        raise ValueError('duration and knot_step must be > 0')
    lower = np.full(n, -np.inf) if lower is None else np.asarray(lower, dtype=np.float64)
    upper = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=np.float64)
    vmax = (np.full(n, np.inf) if velocity_limit is None
            else np.asarray(velocity_limit, dtype=np.float64))
    amplitude = np.array([AMPLITUDES[j % len(AMPLITUDES)] for j in range(n)])
    bumps = np.array([BUMPS[j % len(BUMPS)] for j in range(n)], dtype=np.float64)
    rate = math.pi * bumps / duration  # x'
    for j in range(n):
        room_up = upper[j] - LIMIT_MARGIN - q0[j]
        room_down = q0[j] - (lower[j] + LIMIT_MARGIN)
        a = amplitude[j]
        if (a > 0 and room_up < a) or (a < 0 and room_down < -a):
            # Go the other way if there is more room there, and no further than the room.
            a = abs(a) if room_up >= room_down else -abs(a)
            a = float(np.clip(a, -max(room_down, 0.0), max(room_up, 0.0)))
        speed = abs(a) * rate[j] * _SIN4_PEAK_SLOPE
        if speed > 0.5 * vmax[j]:
            a *= 0.5 * vmax[j] / speed
        amplitude[j] = a
    times = np.arange(0.0, duration + 0.5 * knot_step, knot_step)
    times[-1] = duration
    x = np.outer(times, rate)
    s, c = np.sin(x), np.cos(x)
    positions = q0 + amplitude * s**4
    velocities = 4.0 * amplitude * s**3 * c * rate
    accelerations = 4.0 * amplitude * rate**2 * (3.0 * s**2 * c**2 - s**4)
    # Exact rest at the ends (sin(pi k) is 1e-16, not 0).
    positions[-1], velocities[[0, -1]], accelerations[[0, -1]] = q0, 0.0, 0.0
    return times, positions, velocities, accelerations


def demo_knots(opts, urdf, joint_names, q0):
    """The demo trajectory's knots from q0 (``demo_trajectory``: ``opts.duration``, a knot every
    ``opts.knot_step``) within the URDF's position and velocity limits of ``joint_names``, and those
    limits: ``(knots, (lower, upper, velocity, effort))`` (``urdf_joint_limits``; ``urdf``: a file or
    its XML)."""
    limits = urdf_joint_limits(urdf, joint_names)
    lower, upper, velocity, _ = limits
    knots = demo_trajectory(q0, opts.duration, opts.knot_step, lower=lower, upper=upper,
                            velocity_limit=velocity)
    return knots, limits


def trajectory_message(joint_names, times, positions, velocities, accelerations):
    """trajectory_msgs/JointTrajectory with a zero header stamp (start on receipt)."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    msg = JointTrajectory()
    msg.joint_names = list(joint_names)
    for t, q, qd, qdd in zip(times, positions, velocities, accelerations):
        sec = int(math.floor(t))
        msg.points.append(JointTrajectoryPoint(
            positions=q.tolist(), velocities=qd.tolist(), accelerations=qdd.tolist(),
            time_from_start=Duration(sec=sec, nanosec=int(round((t - sec) * 1e9)))))
    return msg


def urdf_robot_name(urdf_path) -> str:
    """The <robot name=...> of a URDF file (the file name if it has none), or of a URDF's XML."""
    if str(urdf_path).lstrip().startswith('<'):
        return robot_name(str(urdf_path)) or 'robot'
    try:
        with open(urdf_path, encoding='utf-8') as f:
            return robot_name(f.read()) or Path(urdf_path).stem
    except OSError:         # the nodes report a missing URDF; the name only labels the output
        return Path(urdf_path).stem


def urdf_joint_limits(urdf_path, joint_names):
    """(lower, upper, velocity, effort) arrays for ``joint_names`` from a URDF, a file or its XML (the
    model's limits: ``dynamics.load_urdf``, ``joint_limits``)."""
    return joint_limits(rd.load_urdf(str(urdf_path)), joint_names)


def joint_limits(model, joint_names):
    """(lower, upper, velocity, effort) arrays for ``joint_names`` from a Model's limits; ±inf where there
    is none, and for joints the model does not have."""
    index = {name: k for k, name in enumerate(model.joint_names)}
    out = np.full((4, len(joint_names)), np.inf)
    out[0] = -np.inf
    for i, name in enumerate(joint_names):
        k = index.get(name)
        if k is not None:
            out[:, i] = (model.lower[k], model.upper[k], model.velocity_limit[k], model.effort_limit[k])
    return out


def simulation_graph(opts, **kwargs):
    """The simulation graph (``bringup.resolve_graph``) of the demo's ``--config``, ``--urdf``,
    ``--xacro-args`` and ROS arguments; ``kwargs``: resolve_graph's others (``controller``,
    ``node_parameters``). Its URDF, as the nodes read it: ``robot_description()``."""
    return bringup.resolve_graph('simulation', config=opts.config, urdf=opts.urdf, xacro_args=opts.xacro_args,
                                 ros_args=opts.ros_args, **kwargs)


def demo_main(opts, run, report) -> int:
    """A graph demo's ``main(opts)``: ``run(opts)`` returns ``(*results, problems)``; problems (the demo
    did not get through: something did not arrive) are printed, exit code 1. Else ``report(opts,
    *results)`` prints the report, draws the figures and returns the demo's failed checks; then the time
    the demo took and the failures. The exit code: 0 when nothing failed, else 1."""
    started = time.monotonic()
    *results, problems = run(opts)
    if problems:
        _print_failures(problems)
        return 1
    failures = report(opts, *results)
    print(f'demo took {time.monotonic() - started:.1f} s')
    _print_failures(failures)
    return 1 if failures else 0


def _print_failures(failures):
    for failure in failures:
        print(f'demo FAILED: {failure}', file=sys.stderr)


@dataclass
class Series:
    """Messages of one topic: receive times (monotonic s), header stamps (ns, or -1), values."""

    t: list = field(default_factory=list)
    stamp: list = field(default_factory=list)
    values: list = field(default_factory=list)
    names: tuple = ()

    def add(self, stamp_ns, values):
        """One message, received now: its header stamp (ns, or -1) and its values."""
        self.t.append(time.monotonic())
        self.stamp.append(stamp_ns)
        self.values.append(values)

    def arrays(self):
        """(receive times (N,), stamps (N,) int64, values (N, ...) float64)."""
        if not self.values:
            return np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros((0, len(self.names)))
        return (np.asarray(self.t), np.asarray(self.stamp, dtype=np.int64),
                np.asarray(self.values, dtype=np.float64))


def at_common_stamps(a: Series, b: Series):
    """(stamps, values of a, values of b) at the stamps both Series have, in time order."""
    _, sa, A = a.arrays()
    _, sb, B = b.arrays()
    common, ia, ib = np.intersect1d(sa, sb, return_indices=True)
    return common, A[ia], B[ib]


def record_positions(rec, msg):
    """A sensor_msgs/JointState's positions into ``rec.joint_states`` (at its header stamp, ns) when it
    names ``rec.joint_names`` in that order; the first message names them."""
    if not rec.joint_names:
        rec.joint_names = tuple(msg.name)
    if tuple(msg.name) == rec.joint_names and len(msg.position) == len(msg.name):
        rec.joint_states.add(stamp_ns(msg.header.stamp), list(msg.position))


def values_by_name(names, values, wanted):
    """``values`` (a message's field, in ``names`` order) in ``wanted`` order, as a list; None when their
    lengths differ or one of ``wanted`` is not in ``names``."""
    if len(values) != len(names):
        return None
    index = {name: i for i, name in enumerate(names)}
    if any(name not in index for name in wanted):
        return None
    return [values[index[name]] for name in wanted]


def goal_result(executor, goal_sent, timeout=10.0):
    """(status name, error_code, error_string) of a sent FollowJointTrajectory goal (``goal_sent``: the
    future of ``send_goal_async``), spinning ``executor`` with finite timeouts until it ends."""
    from action_msgs.msg import GoalStatus

    if not spin_until(executor, goal_sent.done, timeout):
        return 'UNANSWERED', None, 'the goal was not answered'
    handle = goal_sent.result()
    if not handle.accepted:
        return 'REJECTED', None, 'the goal was rejected'
    result = handle.get_result_async()
    if not spin_until(executor, result.done, timeout):
        return 'NO_RESULT', None, f'no result within {timeout:g} s of the trajectory end'
    response = result.result()
    names = {v: k[len('STATUS_'):] for k, v in vars(GoalStatus).items() if k.startswith('STATUS_')}
    return (names.get(response.status, str(response.status)), response.result.error_code,
            response.result.error_string)


def save_figure(fig, path, dpi=100) -> Path:
    """Write ``fig`` to ``path`` as a PNG (its folder made), close it; the absolute path."""
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path.resolve()


class GraphRun:
    """The simulation graph of ``gc`` running (``mode``: bringup = one ``python -m
    robot_dynamics_ros.cli.bringup`` process, processes = one per node, in-process = here) and an executor
    of ``executor_kind`` in this process for the demo's own nodes (``add``): a context manager that
    stops and destroys everything on the way out. rclpy gets no signal handlers: Ctrl-C raises
    KeyboardInterrupt in the demo, and the way out stops the graph.

    ``viewer``: (port, wait) or None: the viewer (``python -m robot_dynamics_ros.cli.view``, the robot
    from the simulator's /robot_description) runs in a process of its own on that port, its log in
    out/viewer.log; the address is printed, and the demo waits up to ``wait`` seconds for a browser to
    open it (the viewer's /diagnostics count the clients), so that the user sees the arm move from the
    start. A viewer that cannot start (the port is taken) is said and the demo goes on without it: it
    is not part of the graph (``alive`` does not look at it)."""

    def __init__(self, gc, mode, executor_kind, viewer=None):
        self.gc, self.mode, self.executor_kind = gc, mode, executor_kind
        self.viewer_port, self.viewer_wait = viewer if viewer is not None else (None, 0.0)
        self.nodes, self.children, self.executor, self.context = [], [], None, None
        self.viewer = None
        self.description = ''

    def __enter__(self):
        import rclpy
        from rclpy.signals import SignalHandlerOptions

        self.context = rclpy.Context()
        rclpy.init(args=['--ros-args', *self.gc.ros_args], context=self.context,
                   signal_handler_options=SignalHandlerOptions.NO)
        try:
            if self.viewer_port is not None:
                self._start_viewer()
            if self.mode == 'bringup':
                cmd = bringup.bringup_command(self.gc, executor=self.executor_kind)
                self.children = [(_BRINGUP, bringup.spawn(cmd))]
                self.description = f'graph in one bringup process, {self.executor_kind} executor'
            elif self.mode == 'processes':
                self.children = bringup.start_processes(self.gc)
                self.description = f'{len(self.children)} node processes'
            else:
                self.nodes = bringup.create_nodes(self.gc, context=self.context)
            self.executor = make_executor(self.context, self.executor_kind)
            for node in self.nodes:
                self.executor.add_node(node)
            if self.nodes:
                self.description = f'nodes and recorder in one process, {type(self.executor).__name__}'
            if self.viewer is not None and self.viewer_wait > 0:
                self._wait_for_a_browser()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start_viewer(self):
        log_path = Path('out') / 'viewer.log'
        log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, '-m', 'robot_dynamics_ros.cli.view', '--port', str(self.viewer_port)]
        if self.gc.namespace:
            cmd += ['--ros-args', '-r', f'__ns:=/{self.gc.namespace}']
        with open(log_path, 'w') as log:
            self.viewer = (_VIEWER, bringup.spawn(cmd, stdout=log, stderr=log))
        wait = f'; the demo waits up to {self.viewer_wait:g} s for it' if self.viewer_wait > 0 else ''
        print(f'viewer: open http://localhost:{self.viewer_port} to watch the arm{wait} (its log: '
              f'{log_path}; --no-viewer: without it)', flush=True)

    def _wait_for_a_browser(self):
        """Spin until the viewer's /diagnostics say a browser is connected, the viewer ended, or
        ``viewer_wait`` s passed."""
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.node import Node

        clients = []

        def on_diagnostics(msg):
            for status in msg.status:
                values = {kv.key: kv.value for kv in status.values}
                if 'clients' in values and values.get('url', '').endswith(f':{self.viewer_port}'):
                    clients.append(int(values['clients']))

        node = Node('demo_viewer_wait', context=self.context)
        node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)
        self.executor.add_node(node)
        try:
            spin_until(self.executor, lambda: (clients and clients[-1] > 0) or self.viewer_note() is not None,
                       self.viewer_wait)
        finally:
            self.executor.remove_node(node)
            node.destroy_node()
        if clients and clients[-1] > 0:
            print('viewer: a browser is watching', flush=True)
            spin_for(self.executor, VIEWER_FIRST_DRAW)

    def viewer_note(self):
        """Why the viewer is not there (its exit and last log line), or None while it runs."""
        if self.viewer is None or self.viewer[1].poll() is None:
            return None
        lines = (Path('out') / 'viewer.log').read_text(errors='replace').strip().splitlines()
        return f'viewer exited with code {self.viewer[1].returncode}' + (f': {lines[-1]}' if lines else '')

    def add(self, node):
        """A node of the demo's own, spun by the executor and destroyed on the way out."""
        self.executor.add_node(node)
        self.nodes.append(node)
        return node

    def alive(self):
        return all(p.poll() is None for _, p in self.children)

    def exited(self):
        return ', '.join(f'{spec.name} exited with code {p.returncode}'
                         for spec, p in self.children if p.poll() is not None)

    def spin_until(self, condition, timeout):
        """Spin until ``condition()`` or the graph ends; True when ``condition()`` is."""
        return spin_until(self.executor, lambda: not self.alive() or condition(), timeout) and condition()

    def exit_note(self):
        """' (<node> exited with code <n>, ...)' when part of the graph has ended, else ''."""
        return f' ({self.exited()})' if not self.alive() else ''

    def wait_simulated(self, states, seconds, timeout=60.0):
        """Spin for ``seconds`` of simulated time after the last of ``states`` (a Series of joint states,
        stamped in simulated time), at most ``timeout`` s of wall time; False when it stalled."""
        until = states.stamp[-1] + int(seconds * 1e9)
        return self.spin_until(lambda: states.stamp[-1] >= until, timeout)

    def __exit__(self, *exc):
        import rclpy

        if self.executor is not None:
            for node in self.nodes:
                self.executor.remove_node(node)
            self.executor.shutdown(timeout_sec=2.0)
        for node in reversed(self.nodes):
            node.destroy_node()
        if self.context.ok():
            rclpy.shutdown(context=self.context)
        if self.children:
            bringup.stop_processes(self.children, timeout=10.0)
        if self.viewer is not None:
            note = self.viewer_note()
            if note is not None:
                print(f'demo: {note}', file=sys.stderr)
            bringup.stop_processes([self.viewer], timeout=5.0)
        return False
