"""The node graphs of bring-up, described once: which nodes (NodeSpec), in which order, with which
parameters (GraphConfig: the config file, then the command line's overrides), resolved from file
names and options (resolve_graph). The launch files, bring-up and the demos read them.

The module imports no rclpy at import time (launch files and tests can read GRAPHS cheaply).
"""

from __future__ import annotations

import importlib
import json
import os
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
    'config_parameters',
    'every_node',
    'param_arg',
    'resolve_graph',
    'split_ros_args',
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


def param_arg(name: str, value: Any) -> str:
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
            args += ['-p', param_arg(name, value)]
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
