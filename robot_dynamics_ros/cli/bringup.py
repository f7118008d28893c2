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
import signal
import sys
import threading
import time
from typing import Any, Sequence

from robot_dynamics_ros.cli.node_graph import (
    CONTROLLER,
    CONTROLLERS,
    DEFAULT_CONFIGS,
    DYNAMICS,
    ESTIMATOR,
    FEEDFORWARD,
    GRAPHS,
    MPC_CONTROLLER,
    OPTIONAL,
    SIMULATOR,
    STATE_PUBLISHER,
    TASK_SPACE_CONTROLLER,
    GraphConfig,
    NodeSpec,
    config_parameters,
    every_node,
    resolve_graph,
    split_ros_args,
)
from robot_dynamics_ros.cli.node_processes import (
    bringup_command,
    child_command,
    log,
    run_processes,
    spawn,
    start_processes,
    stop_processes,
)
from robot_dynamics_ros.nodes import stop

# The graphs (node_graph) and the one-process-per-node mode (node_processes) are part of bring-up's
# interface: the launch files, the demos and the tests use them as bringup.<name>.
__all__ = [
    'CONTROLLER',
    'CONTROLLERS',
    'DEFAULT_CONFIGS',
    'DYNAMICS',
    'ESTIMATOR',
    'FEEDFORWARD',
    'GRAPHS',
    'GraphConfig',
    'MPC_CONTROLLER',
    'NodeSpec',
    'OPTIONAL',
    'SIMULATOR',
    'STATE_PUBLISHER',
    'TASK_SPACE_CONTROLLER',
    'bringup_command',
    'child_command',
    'config_parameters',
    'create_nodes',
    'every_node',
    'main',
    'resolve_graph',
    'run_in_process',
    'run_processes',
    'spawn',
    'split_ros_args',
    'start_processes',
    'stop_processes',
]


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
            log(f"graph '{gc.graph}' running in one process ({type(ex).__name__}): "
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
            log(f'shutting down ({reason})')
        except KeyboardInterrupt:
            log('interrupted')
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
        log(f'error: {exc}')
        return 2
    if opts.processes:
        return run_processes(gc, duration=opts.duration)
    return run_in_process(gc, executor=opts.executor, duration=opts.duration)


if __name__ == '__main__':
    sys.exit(main())
