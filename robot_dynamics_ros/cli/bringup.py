"""The node graph, described once, started without ``ros2 launch``.

    python -m robot_dynamics_ros.cli.bringup [--graph simulation|dynamics] [--config FILE] [--urdf FILE]
        [--xacro-args 'name:=value ...'] [--controller computed_torque|task_space|mpc] [--processes]
        [--hardware ros2_control|franka|ur|kinova|kuka_fri] [--feedforward true|false]
        [--engine rigid_body|mujoco] [--world FILE] [--executor events|single|multi] [--real-time-factor X]
        [--use-sim-time true|false] [--duration S] [--ros-args ...]

Two graphs, the same ones launch/simulation.launch.py and launch/dynamics.launch.py start:

- ``simulation``: simulator_node + computed_torque_controller (or, ``--controller task_space``,
  task_space_controller; ``--controller mpc``, mpc_controller) + dynamics_node +
  external_torque_estimator on the default robot (urdf/ur5e.urdf), parameters from
  config/simulation.yaml;
- ``dynamics``: dynamics_node + external_torque_estimator, for a real robot, parameters from
  config/dynamics.yaml; the URDF comes from --urdf or, without it, from the /robot_description topic.

--urdf may be a xacro file (.xacro, .urdf.xacro: a vendor's description), expanded by every node with
--xacro-args (their urdf_path and xacro_args parameters; logic.robot_description).

--hardware sets every node's hardware_profile (logic.hardware, doc/hardware.md): in the simulation
graph the simulator then emulates that arm's firmware and the controller follows its conventions.

Parameters reach the nodes exactly as ``ros2 launch`` passes them: each node gets the node-specific
ROS arguments ``--ros-args --params-file CONFIG -p name:=value ...`` (the YAML is parsed by rcl,
``<node_name>: ros__parameters:`` sections and ``/**`` wildcards included). Whatever follows
``--ros-args`` on this command line is appended to every node's arguments, after the config, so
``--ros-args -p use_sim_time:=true`` overrides the file; it also initialises rclpy (log levels).

By default all nodes run in this process on one executor (rclpy's EventsExecutor, spun with a finite
timeout: rclpy 9.1.2's EventsExecutor hangs in spin() without one); ``--processes`` starts one
``python -m robot_dynamics_ros.nodes.<module>`` process per node instead. Ctrl-C or SIGTERM stops
every node; the exit code is 0 after a clean shutdown.

The module imports no rclpy at import time (launch files and tests can read GRAPHS cheaply).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from robot_dynamics_ros.cli import resources
from robot_dynamics_ros.logic.robot_description import (
    DescriptionError,
    is_xacro,
    parse_xacro_args,
    read_description,
)
from robot_dynamics_ros.nodes import stop

__all__ = [
    'CONTROLLERS',
    'DEFAULT_CONFIGS',
    'GRAPHS',
    'GraphConfig',
    'NodeSpec',
    'create_nodes',
    'every_node',
    'main',
    'resolve_graph',
    'run_in_process',
    'run_processes',
    'split_ros_args',
    'bringup_command',
    'spawn',
    'start_processes',
    'stop_processes',
]


@dataclass(frozen=True)
class NodeSpec:
    """One node of a graph: its name (= its key in the YAML), console script, module and class."""

    name: str
    executable: str
    module: str
    class_name: str
    #: True for the node that makes the simulated clock: it never runs on use_sim_time itself.
    clock_source: bool = False

    def node_class(self) -> type:
        """Import and return the node class (imports rclpy and the dynamics core)."""
        return getattr(importlib.import_module(self.module), self.class_name)


SIMULATOR = NodeSpec(
    'simulator_node', 'simulator_node', 'robot_dynamics_ros.nodes.simulator_node', 'SimulatorNode',
    clock_source=True,
)
CONTROLLER = NodeSpec(
    'computed_torque_controller', 'computed_torque_controller',
    'robot_dynamics_ros.nodes.computed_torque_node', 'ComputedTorqueController',
)
DYNAMICS = NodeSpec(
    'dynamics_node', 'dynamics_node', 'robot_dynamics_ros.nodes.dynamics_node', 'DynamicsNode',
)
ESTIMATOR = NodeSpec(
    'external_torque_estimator', 'external_torque_estimator',
    'robot_dynamics_ros.nodes.external_torque_estimator', 'ExternalTorqueEstimator',
)
TASK_SPACE_CONTROLLER = NodeSpec(
    'task_space_controller', 'task_space_controller',
    'robot_dynamics_ros.nodes.task_space_controller', 'TaskSpaceController',
)
MPC_CONTROLLER = NodeSpec(
    'mpc_controller', 'mpc_controller', 'robot_dynamics_ros.nodes.mpc_controller', 'MpcController',
)
FEEDFORWARD = NodeSpec(
    'trajectory_feedforward', 'trajectory_feedforward', 'robot_dynamics_ros.nodes.trajectory_feedforward',
    'TrajectoryFeedforward',
)
STATE_PUBLISHER = NodeSpec(
    'state_publisher', 'state_publisher', 'robot_dynamics_ros.nodes.state_publisher', 'StatePublisher',
)

#: The graphs, in start order (the simulator first: it publishes /robot_description and /clock).
GRAPHS: dict[str, tuple[NodeSpec, ...]] = {
    'simulation': (SIMULATOR, CONTROLLER, DYNAMICS, ESTIMATOR),
    'dynamics': (DYNAMICS, ESTIMATOR),
}

#: The controllers a graph with a controller can run instead of computed_torque_controller
#: (--controller; launch argument controller:=...): exactly one commands the simulator.
CONTROLLERS = {'computed_torque': CONTROLLER, 'task_space': TASK_SPACE_CONTROLLER,
               'mpc': MPC_CONTROLLER}


#: After a graph's nodes: with --feedforward (launch argument feedforward:=true) the
#: FollowJointTrajectory relay that fills the efforts for a downstream JointTrajectoryController;
#: unless --publish-tf false (publish_tf:=false, where a system robot_state_publisher runs instead)
#: state_publisher, the links on /tf and /tf_static.
OPTIONAL = (FEEDFORWARD, STATE_PUBLISHER)


def every_node(graph: str) -> tuple[NodeSpec, ...]:
    """Every node a graph may run, whichever controller and options: its config file has a section for
    each, its launch file a Node for each (the controllers and options under a condition), in this
    order."""
    nodes: list[NodeSpec] = []
    for spec in GRAPHS[graph]:
        nodes += CONTROLLERS.values() if spec == CONTROLLER else [spec]
    return tuple(nodes) + OPTIONAL


#: The parameter file (under config/) each graph reads unless --config is given.
DEFAULT_CONFIGS = {'simulation': 'simulation.yaml', 'dynamics': 'dynamics.yaml'}

#: Exit codes that count as a clean stop of a node process after it was sent SIGINT/SIGTERM.
_CLEAN_EXIT_CODES = {0, -signal.SIGINT, 128 + signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGTERM}


def split_ros_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split a command line into (non-ROS arguments, ROS arguments without the markers).

    ROS arguments run from ``--ros-args`` to a ``--`` or the end (several sections are allowed), as
    rcl parses them: ``a --ros-args -p x:=1 -- b`` gives ``(['a', 'b'], ['-p', 'x:=1'])``.
    """
    plain: list[str] = []
    ros: list[str] = []
    in_ros = False
    for arg in argv:
        if arg == '--ros-args':
            in_ros = True
        elif in_ros and arg == '--':
            in_ros = False
        elif in_ros:
            ros.append(arg)
        else:
            plain.append(arg)
    return plain, ros


def _param_arg(name: str, value: Any) -> str:
    """``name:=value`` for a ``-p`` ROS argument; the value is parsed as YAML by rcl.

    JSON is a subset of YAML, so json.dumps gives an unambiguous value: a string stays a string
    (a path like ``/tmp/1.urdf`` or ``true`` is quoted), a float list stays a float list.
    """
    if isinstance(value, float):
        return f'{name}:={value!r}'
    return f'{name}:={json.dumps(value)}'


@dataclass
class GraphConfig:
    """A resolved graph: which nodes, which parameter file, and the command-line overrides."""

    graph: str
    nodes: tuple[NodeSpec, ...]
    config: Path
    urdf: Path | None = None
    #: The arguments of a xacro ``urdf`` (name:=value ...; launch's xacro_args:=), '' = none.
    xacro_args: str = ''
    use_sim_time: bool | None = None
    real_time_factor: float | None = None
    #: Every node's hardware_profile (launch's hardware:=); None = the config file's.
    hardware: str | None = None
    #: The simulator's engine (launch's engine:=: 'rigid_body' or 'mujoco'); None = the config file's.
    engine: str | None = None
    #: The MuJoCo world the simulator attaches (launch's world:=; its world_path); None = the config file's.
    world: Path | None = None
    #: The FollowJointTrajectory relay runs too (launch's feedforward:=true; it is in ``nodes``).
    feedforward: bool = False
    #: state_publisher runs (launch's publish_tf:=true, the default; it is in ``nodes``).
    publish_tf: bool = True
    #: ROS arguments from the command line (without ``--ros-args``), given to every node.
    ros_args: tuple[str, ...] = ()
    #: The key in CONTROLLERS of the graph's controller.
    controller: str = 'computed_torque'
    #: {node name: {parameter: value}}: per-node overrides, after (and winning over) the others, e.g. a
    #: simulator that plays another arm than the controllers believe (--set NODE.PARAM=VALUE).
    node_parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Parameter files applied after ``config`` to every node (launch's params_file:=, e.g. the
    #: armature and effort offsets `identify robot` writes).
    params_files: tuple[Path, ...] = ()
    #: The nodes' namespace ('' = none; launch's namespace:=): relative topics follow it.
    namespace: str = ''
    #: Where the graph's loop topics go (launch's joint_states_topic:=, effort_command_topic:=).
    joint_states_topic: str = 'joint_states'
    effort_command_topic: str = 'effort_controller/commands'

    def overrides(self, spec: NodeSpec) -> dict[str, Any]:
        """Parameters set on the command line for node ``spec`` (they win over the config file)."""
        params: dict[str, Any] = {}
        if self.urdf is not None:
            params['urdf_path'] = str(self.urdf)
        if self.xacro_args:
            params['xacro_args'] = self.xacro_args
        if self.use_sim_time is not None:
            # The simulator makes /clock (and stamps with it) when the others follow it; it
            # keeps running on the wall clock itself.
            params['use_sim_time'] = bool(self.use_sim_time) and not spec.clock_source
            if spec.clock_source:
                params['publish_clock'] = bool(self.use_sim_time)
        if spec == SIMULATOR:
            if self.real_time_factor is not None:
                params['real_time_factor'] = float(self.real_time_factor)
            if self.engine is not None:
                params['engine'] = self.engine
            if self.world is not None:
                params['world_path'] = str(self.world)
        if self.hardware is not None:
            params['hardware_profile'] = self.hardware
        params.update(self.node_parameters.get(spec.name, {}))
        return params

    def node_arguments(self, spec: NodeSpec) -> list[str]:
        """The node-specific ROS arguments of ``spec``, as ``ros2 launch`` would pass them."""
        args = ['--ros-args', '--params-file', str(self.config)]
        for path in self.params_files:
            args += ['--params-file', str(path)]
        for name, value in self.overrides(spec).items():
            args += ['-p', _param_arg(name, value)]
        if self.namespace:
            args += ['-r', f'__ns:=/{self.namespace.strip("/")}']
        for topic, target in (('joint_states', self.joint_states_topic),
                              ('effort_controller/commands', self.effort_command_topic)):
            if target != topic:
                args += ['-r', f'{topic}:={target}']
        return args + list(self.ros_args)

    def robot_description(self) -> str | None:
        """The URDF XML of the graph's robot, as the nodes read it (a xacro ``urdf`` expanded with
        ``xacro_args``); None without a urdf (the nodes take /robot_description)."""
        return None if self.urdf is None else read_description(self.urdf, self.xacro_args)


def config_parameters(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """{node name: {parameter: value}} of a parameter file, its sections keyed as rcl reads them:
    ``/**/<node>`` (any namespace, as the package's files are), ``<node>`` or ``/<node>``; a ``/**``
    section (every node) under the key ``/**``."""
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding='utf-8')) or {}
    parameters: dict[str, dict[str, Any]] = {}
    for key, section in data.items():
        name = key if key == '/**' else key.removeprefix('/**/').lstrip('/')
        parameters.setdefault(name, {}).update((section or {}).get('ros__parameters') or {})
    return parameters


def resolve_graph(
    graph: str = 'simulation',
    *,
    config: str | os.PathLike | None = None,
    urdf: str | os.PathLike | None = None,
    xacro_args: str = '',
    use_sim_time: bool | None = None,
    real_time_factor: float | None = None,
    hardware: str | None = None,
    engine: str | None = None,
    world: str | os.PathLike | None = None,
    feedforward: bool = False,
    publish_tf: bool = True,
    ros_args: Iterable[str] = (),
    controller: str = 'computed_torque',
    node_parameters: dict[str, dict[str, Any]] | None = None,
    namespace: str = '',
    joint_states_topic: str = 'joint_states',
    effort_command_topic: str = 'effort_controller/commands',
    params_files: Iterable[str | os.PathLike] = (),
) -> GraphConfig:
    """Resolve file names (shipped file names or paths) and defaults into a GraphConfig.

    The simulation graph defaults to the package's urdf/ur5e.urdf; the dynamics graph to no URDF
    (the node then waits for /robot_description). ``xacro_args``: the arguments of a xacro ``urdf``
    (checked here: DescriptionError, a ValueError, for a malformed one or for arguments without a
    xacro urdf).
    ``hardware``: every node's hardware_profile (None: the config file's; a name of
    logic.hardware.PROFILES, else ValueError).
    ``engine``: the simulator's ('rigid_body' or 'mujoco'; None: the config file's); ``world``: the
    MuJoCo world it attaches, a path or the name of a file in the package's worlds/ (e.g. table.xml;
    with engine 'mujoco' only).
    ``feedforward``: the graph runs trajectory_feedforward too (after its other nodes).
    ``publish_tf``: the graph runs state_publisher (last): the links on /tf and /tf_static.
    ``controller``: which of CONTROLLERS the graph runs (a graph without a controller takes only the
    default). ``node_parameters``: {node name:
    {parameter: value}} that win over everything else for that node (GraphConfig.node_parameters).
    ``namespace``, ``joint_states_topic``, ``effort_command_topic``, ``params_files``: as the launch
    files' namespace, joint_states_topic, effort_command_topic and params_file arguments.
    """
    from robot_dynamics_ros.logic.hardware import PROFILES  # (imports the core: not at this module's import)
    from robot_dynamics_ros.logic.simulation import ENGINES

    if graph not in GRAPHS:
        raise ValueError(f'graph must be one of {sorted(GRAPHS)}, got {graph!r}')
    if controller not in CONTROLLERS:
        raise ValueError(f'controller must be one of {sorted(CONTROLLERS)}, got {controller!r}')
    if hardware is not None and hardware not in PROFILES:
        raise ValueError(f'hardware must be one of {sorted(PROFILES)}, got {hardware!r}')
    if CONTROLLER not in GRAPHS[graph] and controller != 'computed_torque':
        raise ValueError(f'the {graph} graph runs no controller')
    if engine is not None and engine not in ENGINES:
        raise ValueError(f'engine must be one of {list(ENGINES)}, got {engine!r}')
    if (engine is not None or world) and SIMULATOR not in GRAPHS[graph]:
        raise ValueError(f'the {graph} graph runs no simulator: no engine or world')
    if world and engine != 'mujoco':
        raise ValueError('a world needs engine mujoco')
    config_path = resources.config_file(str(config) if config else DEFAULT_CONFIGS[graph])
    if urdf:
        urdf_path: Path | None = resources.urdf_file(str(urdf))
    elif graph == 'simulation':
        urdf_path = resources.default_urdf()
    else:
        urdf_path = None
    if xacro_args:
        parse_xacro_args(xacro_args)
        if urdf_path is None or not is_xacro(urdf_path):
            raise DescriptionError(f'xacro arguments {xacro_args!r} given, but the urdf '
                             f'{str(urdf_path) if urdf_path else "(none)"} is not a xacro file (.xacro)')
    return GraphConfig(
        graph=graph,
        nodes=tuple(CONTROLLERS[controller] if spec == CONTROLLER else spec for spec in GRAPHS[graph])
        + ((FEEDFORWARD,) if feedforward else ()) + ((STATE_PUBLISHER,) if publish_tf else ()),
        config=config_path,
        urdf=urdf_path,
        xacro_args=xacro_args or '',
        use_sim_time=use_sim_time,
        real_time_factor=real_time_factor,
        hardware=hardware,
        engine=engine,
        world=resources.world_file(str(world)) if world else None,
        feedforward=bool(feedforward),
        publish_tf=bool(publish_tf),
        ros_args=tuple(ros_args),
        controller=controller,
        node_parameters=_checked_node_parameters(node_parameters or {}, graph),
        params_files=tuple(resources.config_file(str(path)) for path in params_files),
        namespace=namespace.strip('/'),
        joint_states_topic=joint_states_topic,
        effort_command_topic=effort_command_topic,
    )


def _checked_node_parameters(node_parameters, graph):
    """node_parameters with every node name one of the graph's (else a ValueError naming it)."""
    names = {spec.name for spec in every_node(graph)}
    for name in node_parameters:
        if name not in names:
            raise ValueError(f'node_parameters: no node {name!r} in the {graph} graph ({sorted(names)})')
    return {name: dict(values) for name, values in node_parameters.items()}


# --- one process -------------------------------------------------------------------------------

def create_nodes(gc: GraphConfig, *, context=None) -> list:
    """Instantiate every node of the graph in this process (rclpy must be initialised).

    Each node gets ``gc.node_arguments(spec)`` as its ``cli_args``, so rcl loads the parameter file
    exactly as for a separate process. On failure the nodes created so far are destroyed.
    """
    nodes = []
    try:
        for spec in gc.nodes:
            cls = spec.node_class()
            nodes.append(cls(cli_args=gc.node_arguments(spec), context=context))
    except BaseException:
        for node in reversed(nodes):
            node.destroy_node()
        raise
    return nodes


def _log(message: str) -> None:
    print(f'[bringup] {message}', file=sys.stderr, flush=True)


def run_in_process(
    gc: GraphConfig, *, executor: str = 'events', duration: float | None = None,
    stop_event: threading.Event | None = None,
) -> int:
    """Run the graph's nodes in this process on one executor until Ctrl-C/SIGTERM or ``duration``.

    ``stop_event`` (optional) stops the loop when set, for callers running this in a thread.
    Returns the exit code (0 after a clean shutdown).
    """
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from robot_dynamics_ros.nodes.common import make_executor

    context = rclpy.Context()
    rclpy.init(args=['--ros-args', *gc.ros_args], context=context,
               signal_handler_options=SignalHandlerOptions.NO)
    nodes: list = []
    ex = None
    # SIGINT/SIGTERM as in a node process, through the clean-up too: a Ctrl-C under `ros2 launch`
    # arrives twice (from the terminal and forwarded by launch), and the second changes nothing
    with stop.handling() as request:
        try:
            nodes = create_nodes(gc, context=context)
            ex = make_executor(context, executor)
            for node in nodes:
                ex.add_node(node)
            _log(f"graph '{gc.graph}' running in one process ({type(ex).__name__}): "
                 + ', '.join(n.get_fully_qualified_name() for n in nodes)
                 + f'; config {gc.config}; urdf {gc.urdf or "from /robot_description"}')
            deadline = None if duration is None else time.monotonic() + duration
            while context.ok() and not request.requested:
                if stop_event is not None and stop_event.is_set():
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    break
                ex.spin_once(timeout_sec=0.1)
            reason = (signal.Signals(request.signum).name if request.signum is not None
                      else 'end of --duration' if deadline is not None else 'stop request')
            _log(f'shutting down ({reason})')
        except KeyboardInterrupt:
            _log('interrupted')
        finally:
            if ex is not None:
                for node in nodes:
                    ex.remove_node(node)
                ex.shutdown(timeout_sec=2.0)
            for node in reversed(nodes):
                node.destroy_node()
            if context.ok():
                rclpy.shutdown(context=context)
    return 0


# --- one process per node ----------------------------------------------------------------------

def child_command(gc: GraphConfig, spec: NodeSpec) -> list[str]:
    """The command that runs node ``spec`` in its own process (this interpreter, ``-m module``)."""
    return [sys.executable, '-m', spec.module, *gc.node_arguments(spec)]


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the bringup process dies (Linux), so a killed
    bringup leaves no orphaned nodes behind."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # best effort: not Linux, no libc
        pass


def bringup_command(gc: GraphConfig, *, executor: str = 'events') -> list[str]:
    """The command that runs the whole graph in one separate process (this module's main)."""
    cmd = [sys.executable, '-m', 'robot_dynamics_ros.cli.bringup', '--graph', gc.graph,
           '--config', str(gc.config), '--executor', executor]
    if gc.urdf is not None:
        cmd += ['--urdf', str(gc.urdf)]
    if gc.xacro_args:
        cmd += ['--xacro-args', gc.xacro_args]
    if gc.use_sim_time is not None:
        cmd += ['--use-sim-time', str(bool(gc.use_sim_time)).lower()]
    if gc.real_time_factor is not None:
        cmd += ['--real-time-factor', repr(float(gc.real_time_factor))]
    if gc.hardware is not None:
        cmd += ['--hardware', gc.hardware]
    if gc.engine is not None:
        cmd += ['--engine', gc.engine]
    if gc.world is not None:
        cmd += ['--world', str(gc.world)]
    if gc.feedforward:
        cmd += ['--feedforward', 'true']
    if not gc.publish_tf:
        cmd += ['--publish-tf', 'false']
    if gc.controller != 'computed_torque':
        cmd += ['--controller', gc.controller]
    for path in gc.params_files:
        cmd += ['--params-file', str(path)]
    if gc.namespace:
        cmd += ['--namespace', gc.namespace]
    if gc.joint_states_topic != 'joint_states':
        cmd += ['--joint-states-topic', gc.joint_states_topic]
    if gc.effort_command_topic != 'effort_controller/commands':
        cmd += ['--effort-command-topic', gc.effort_command_topic]
    for node, values in gc.node_parameters.items():
        for name, value in values.items():
            cmd += ['--set', f'{node}.{_param_arg(name, value)}'.replace(':=', '=', 1)]
    if gc.ros_args:
        cmd += ['--ros-args', *gc.ros_args]
    return cmd


def spawn(cmd: Sequence[str], **popen_kwargs) -> subprocess.Popen:
    """Start ``cmd`` as a child that can import this package (also from a source tree), in its
    own session (a terminal's Ctrl-C reaches only the parent, which stops the child with
    stop_processes), and that gets SIGTERM if the parent dies (Linux)."""
    env = dict(popen_kwargs.pop('env', None) or os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        p for p in (str(resources.package_parent()), env.get('PYTHONPATH', '')) if p)
    return subprocess.Popen(list(cmd), env=env, start_new_session=True,
                            preexec_fn=_die_with_parent, **popen_kwargs)


def start_processes(gc: GraphConfig, **popen_kwargs) -> list[tuple[NodeSpec, subprocess.Popen]]:
    """Start one process per node of the graph (child_command, via spawn); returns (spec, Popen)
    pairs. ``popen_kwargs`` go to subprocess.Popen (e.g. stdout, stderr). If one start fails,
    the children started so far are stopped.
    """
    children: list[tuple[NodeSpec, subprocess.Popen]] = []
    try:
        for spec in gc.nodes:
            cmd = child_command(gc, spec)
            proc = spawn(cmd, **popen_kwargs)
            children.append((spec, proc))
            _log(f'started {spec.name} (pid {proc.pid}): {shlex.join(cmd)}')
    except BaseException:
        stop_processes(children, timeout=3.0)
        raise
    return children


def run_processes(
    gc: GraphConfig, *, duration: float | None = None, shutdown_timeout: float = 10.0,
) -> int:
    """Start one process per node; stop them all on Ctrl-C/SIGTERM, ``duration``, or when one exits.

    Returns 0 when every node stopped cleanly after being asked to, else non-zero (the exit code
    of a node that ended on its own, or 1).
    """
    failed: tuple[NodeSpec, int] | None = None
    children: list[tuple[NodeSpec, subprocess.Popen]] = []
    # no deadline: this process waits for its children (stop_processes escalates if they hang)
    with stop.handling(deadline_s=None) as request:
        try:
            children = start_processes(gc)
            _log(f"graph '{gc.graph}' running as {len(children)} processes; "
                 f'config {gc.config}; urdf {gc.urdf or "from /robot_description"}')
            deadline = None if duration is None else time.monotonic() + duration
            while not request.requested:
                time.sleep(0.1)
                if deadline is not None and time.monotonic() >= deadline:
                    break
                exited = [(s, p.returncode) for s, p in children if p.poll() is not None]
                if exited:
                    failed = exited[0]
                    _log(f'{failed[0].name} exited with code {failed[1]}; stopping the graph')
                    break
            if request.signum is not None:
                _log(f'shutting down ({signal.Signals(request.signum).name})')
        except KeyboardInterrupt:
            pass
        finally:
            clean = stop_processes(children, shutdown_timeout)
    if failed is not None:
        # A node that ends on its own (even with 0) ended the graph early: a failure.
        return failed[1] if failed[1] > 0 else 1
    return 0 if clean else 1


def stop_processes(children: list[tuple[NodeSpec, subprocess.Popen]], timeout: float = 10.0) -> bool:
    """SIGINT every running child, wait ``timeout`` s, then SIGTERM, then SIGKILL.

    Returns True if every child stopped cleanly (exit code 0, or died of the SIGINT).
    """
    clean = True
    running = [(s, p) for s, p in children if p.poll() is None]
    for sig, wait in ((signal.SIGINT, timeout), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        if not running:
            break
        if sig != signal.SIGINT:
            clean = False
            _log(f'sending {sig.name} to ' + ', '.join(s.name for s, _ in running))
        for _, proc in running:
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass
        end = time.monotonic() + wait
        for _, proc in running:
            try:
                proc.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        running = [(s, p) for s, p in running if p.poll() is None]
    for spec, proc in children:
        code = proc.poll()
        if code not in _CLEAN_EXIT_CODES:
            clean = False
            _log(f'{spec.name} exited with code {code}')
    return clean


# --- command line ------------------------------------------------------------------------------

def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ('1', 'true', 'yes', 'on'):
        return True
    if value in ('0', 'false', 'no', 'off'):
        return False
    raise argparse.ArgumentTypeError(f'expected true or false, got {text!r}')


def build_parser() -> argparse.ArgumentParser:
    from robot_dynamics_ros.logic.hardware import PROFILES  # (imports the core: not at this module's import)
    from robot_dynamics_ros.logic.simulation import ENGINES

    parser = argparse.ArgumentParser(
        prog='python -m robot_dynamics_ros.cli.bringup',
        description='Start the robot_dynamics_ros node graph (as the launch files do) without '
                    'ros2 launch. ROS arguments after --ros-args go to every node.',
    )
    parser.add_argument('--graph', choices=sorted(GRAPHS), default='simulation',
                        help='simulation: simulator + computed-torque controller + dynamics node; '
                             'dynamics: dynamics node alone, for a real robot (default: simulation)')
    parser.add_argument('--controller', choices=sorted(CONTROLLERS), default='computed_torque',
                        help='the simulation graph\'s controller: computed_torque (joint '
                             'trajectories), task_space (tool poses on '
                             '/task_space_controller/target_pose) or mpc (tool poses on '
                             '/mpc_controller/target_pose) (default: computed_torque)')
    parser.add_argument('--config', metavar='FILE',
                        help='parameter file (<node_name>: ros__parameters: ...), a path or the '
                             'name of a file in the package\'s config/ '
                             '(default: simulation.yaml or dynamics.yaml)')
    parser.add_argument('--urdf', metavar='FILE',
                        help='robot URDF, a path or the name of a file in the package\'s urdf/ '
                             '(default: ur5e.urdf for simulation; the /robot_description topic '
                             'for dynamics); a xacro file (.xacro) is expanded with --xacro-args')
    parser.add_argument('--xacro-args', default='', metavar="'NAME:=VALUE ...'",
                        help='the arguments of a xacro --urdf, as on xacro\'s command line, e.g. '
                             "'ur_type:=ur5e name:=ur' (default: none, the file's defaults)")
    parser.add_argument('--hardware', choices=sorted(PROFILES), metavar='PROFILE',
                        help='every node\'s hardware_profile (doc/hardware.md): '
                             f'{", ".join(sorted(PROFILES))}; in simulation the simulator emulates that '
                             'arm\'s firmware (default: the config file\'s, ros2_control)')
    parser.add_argument('--engine', choices=ENGINES, default=None,
                        help="the simulator's physics: rigid_body (the package's own) or mujoco (MuJoCo, "
                             "with contacts; pip install .[mujoco]) (default: the config file's, rigid_body)")
    parser.add_argument('--world', metavar='FILE',
                        help='with --engine mujoco: an MJCF world (tables, objects) attached to the scene, '
                             "a path or the name of a file in the package's worlds/, e.g. table.xml")
    parser.add_argument('--feedforward', type=_bool, default=False, metavar='true|false',
                        help='also run trajectory_feedforward, the FollowJointTrajectory relay that fills '
                             "the efforts for ros2_control's JointTrajectoryController (default: false)")
    parser.add_argument('--publish-tf', type=_bool, default=True, metavar='true|false',
                        help='run state_publisher: the links on /tf and /tf_static for RViz and tf2 '
                             '(default: true; false where a robot_state_publisher runs instead)')
    parser.add_argument('--processes', action='store_true',
                        help='run each node in its own process instead of one executor')
    parser.add_argument('--executor', choices=('events', 'single', 'multi'), default='events',
                        help='executor of the one-process mode (default: events)')
    parser.add_argument('--real-time-factor', type=float, metavar='X',
                        help='simulator speed relative to the wall clock; 0 = as fast as possible '
                             '(use with --use-sim-time true)')
    parser.add_argument('--use-sim-time', type=_bool, metavar='true|false',
                        help='the simulator publishes /clock and the controller and dynamics node '
                             'follow it (default: as in the config file)')
    parser.add_argument('--duration', type=float, metavar='S',
                        help='stop after S seconds (default: run until Ctrl-C/SIGTERM)')
    parser.add_argument('--params-file', action='append', default=[], metavar='FILE',
                        help='a parameter file applied after --config to every node (repeatable), e.g. '
                             'the OUT.yaml of identify robot')
    parser.add_argument('--namespace', default='', metavar='NS',
                        help='namespace of every node (as launch\'s namespace:=); topics are relative, so '
                             'the graph moves into it, and the config\'s /**/<node> sections still apply')
    parser.add_argument('--joint-states-topic', default='joint_states', metavar='TOPIC',
                        help='the joint states topic (default: %(default)s, relative: in the namespace)')
    parser.add_argument('--effort-command-topic', default='effort_controller/commands', metavar='TOPIC',
                        help='the controller\'s effort commands to the simulator (default: %(default)s)')
    parser.add_argument('--set', action='append', default=[], metavar='NODE.PARAM=VALUE',
                        type=_node_parameter,
                        help='a parameter of one node (VALUE as YAML), winning over the config file and '
                             'the other options; repeatable (e.g. --set simulator_node.friction=true)')
    return parser


def _node_parameter(text: str) -> tuple[str, str, Any]:
    """(node, parameter, value) of NODE.PARAM=VALUE, the value read as YAML (as rcl reads -p)."""
    import yaml

    target, equals, value = text.partition('=')
    node, dot, name = target.partition('.')
    if not (equals and dot and node and name):
        raise argparse.ArgumentTypeError(f'expected NODE.PARAM=VALUE, got {text!r}')
    try:
        return node, name, yaml.safe_load(value)
    except yaml.YAMLError as exc:
        raise argparse.ArgumentTypeError(f'{text!r}: the value is not YAML ({exc})') from None


def _grouped(settings):
    """{node: {parameter: value}} of --set's (node, parameter, value) triples (the last one wins)."""
    grouped: dict[str, dict[str, Any]] = {}
    for node, name, value in settings:
        grouped.setdefault(node, {})[name] = value
    return grouped


def main(args: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if args is None else args)
    plain, ros = split_ros_args(argv)
    opts = build_parser().parse_args(plain)
    try:
        gc = resolve_graph(
            opts.graph, config=opts.config, urdf=opts.urdf, xacro_args=opts.xacro_args,
            use_sim_time=opts.use_sim_time,
            real_time_factor=opts.real_time_factor, hardware=opts.hardware, engine=opts.engine,
            world=opts.world, feedforward=opts.feedforward,
            publish_tf=opts.publish_tf, ros_args=ros,
            controller=opts.controller,
            node_parameters=_grouped(opts.set), namespace=opts.namespace, params_files=opts.params_file,
            joint_states_topic=opts.joint_states_topic, effort_command_topic=opts.effort_command_topic,
        )
    except (FileNotFoundError, ValueError) as exc:
        _log(f'error: {exc}')
        return 2
    if opts.processes:
        return run_processes(gc, duration=opts.duration)
    return run_in_process(gc, executor=opts.executor, duration=opts.duration)


if __name__ == '__main__':
    sys.exit(main())
