"""bringup: the node graph without ros2 launch (runs here: real processes, real DDS).

- the command-line plumbing (ROS argument splitting, parameter arguments, file lookup);
- the launch files describe the same graph as bringup.GRAPHS (read with ast: launch is absent);
- `python -m robot_dynamics_ros.cli.bringup --graph simulation` in one process and as processes:
  /joint_states, /dynamics_node/gravity_torques and /effort_controller/commands arrive with finite
  values, and SIGINT stops everything with exit code 0 within a few seconds;
- `--graph dynamics` (real-robot mode) takes the URDF from the /robot_description topic.
"""

import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros.cli import bringup, resources

sys.path.insert(0, os.path.dirname(__file__))
from _topic_helpers import message_values, node_executor, wait_for_messages

ROOT = Path(__file__).resolve().parents[2]
UR5E_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
               'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']
# Cold numba caches compile the dynamics kernels at start-up (tens of seconds on a busy machine).
STARTUP_TIMEOUT = 120.0
SHUTDOWN_TIMEOUT = 10.0


# --- command line and graph description (no ROS) -----------------------------------------------

def test_split_ros_args():
    assert bringup.split_ros_args(['--graph', 'dynamics']) == (['--graph', 'dynamics'], [])
    assert bringup.split_ros_args(
        ['a', '--ros-args', '-p', 'x:=1', '--', 'b', '--ros-args', '-r', 'c:=d']) == (
        ['a', 'b'], ['-p', 'x:=1', '-r', 'c:=d'])


def test_node_arguments_load_the_config_then_the_overrides():
    gc = bringup.resolve_graph('simulation', use_sim_time=True, real_time_factor=0.0,
                               ros_args=['-p', 'kp:=[1.0]'])
    assert gc.config == resources.config_file('simulation.yaml')
    assert gc.urdf == resources.default_urdf()
    sim = gc.node_arguments(bringup.SIMULATOR)
    assert sim[:3] == ['--ros-args', '--params-file', str(gc.config)]
    # The simulator makes /clock: never on sim time; it alone gets real_time_factor.
    assert 'use_sim_time:=false' in sim and 'real_time_factor:=0.0' in sim
    assert 'publish_clock:=true' in sim
    assert f'urdf_path:="{gc.urdf}"' in sim
    ctl = gc.node_arguments(bringup.CONTROLLER)
    assert 'use_sim_time:=true' in ctl and not any('real_time_factor' in a for a in ctl)
    # The command line's ROS arguments come last: they win over the file.
    assert ctl[-2:] == ['-p', 'kp:=[1.0]']


def test_the_controller_option_picks_exactly_one_controller():
    assert bringup.CONTROLLER in bringup.resolve_graph('simulation').nodes
    gc = bringup.resolve_graph('simulation', controller='task_space')
    assert [s.name for s in gc.nodes] == ['simulator_node', 'task_space_controller', 'dynamics_node',
                                          'external_torque_estimator', 'state_publisher']
    assert bringup.bringup_command(gc)[-2:] == ['--controller', 'task_space']
    # state_publisher runs unless publish_tf is false (a system robot_state_publisher runs instead)
    quiet = bringup.resolve_graph('simulation', publish_tf=False)
    assert bringup.STATE_PUBLISHER not in quiet.nodes
    assert bringup.bringup_command(quiet)[-2:] == ['--publish-tf', 'false']
    assert '--controller' not in bringup.bringup_command(bringup.resolve_graph('simulation'))
    with pytest.raises(ValueError, match='controller must be one of'):
        bringup.resolve_graph('simulation', controller='impedance')
    with pytest.raises(ValueError, match='runs no controller'):
        bringup.resolve_graph('dynamics', controller='task_space')


def test_the_engine_and_world_options_reach_the_simulator():
    """--engine / --world (launch: engine:=, world:=) set the simulator's engine and world_path; a world
    is a path or the name of a shipped one (worlds/), it needs engine mujoco, and the dynamics graph has
    no simulator to give them to; the launch file offers the same engines."""
    from robot_dynamics_ros.cli.resources import world_file
    from robot_dynamics_ros.logic.simulation import ENGINES

    table = world_file('table.xml')
    gc = bringup.resolve_graph('simulation', engine='mujoco', world='table.xml')
    arguments = gc.node_arguments(bringup.SIMULATOR)
    assert 'engine:="mujoco"' in arguments and f'world_path:="{table}"' in arguments
    assert not any('engine' in a for a in gc.node_arguments(bringup.CONTROLLER))
    command = bringup.bringup_command(gc)
    assert command[command.index('--engine') + 1] == 'mujoco'
    assert command[command.index('--world') + 1] == str(table)
    with pytest.raises(ValueError, match='a world needs engine mujoco'):
        bringup.resolve_graph('simulation', world='table.xml')
    with pytest.raises(ValueError, match='engine must be one of'):
        bringup.resolve_graph('simulation', engine='gazebo')
    with pytest.raises(ValueError, match='runs no simulator'):
        bringup.resolve_graph('dynamics', engine='mujoco')
    with pytest.raises(FileNotFoundError, match='nowhere.xml'):
        bringup.resolve_graph('simulation', engine='mujoco', world='nowhere.xml')
    tree = ast.parse((ROOT / 'launch' / 'simulation.launch.py').read_text(encoding='utf-8'))
    declared = {ast.literal_eval(call.args[0]): {k.arg: k.value for k in call.keywords}
                for call in ast.walk(tree) if isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name) and call.func.id == 'DeclareLaunchArgument'}
    assert tuple(ast.literal_eval(declared['engine']['choices'])) == ENGINES


def test_the_hardware_option_reaches_every_node_and_the_launch_files_offer_every_profile():
    """--hardware / hardware:= set every node's hardware_profile (doc/hardware.md); the launch files'
    choices are the profiles of logic.hardware (written out there: a launch file imports no core)."""
    from robot_dynamics_ros.logic.hardware import PROFILES

    gc = bringup.resolve_graph('simulation', hardware='franka')
    for spec in gc.nodes:
        assert 'hardware_profile:="franka"' in gc.node_arguments(spec), spec.name
    assert bringup.bringup_command(gc)[-2:] == ['--hardware', 'franka']
    assert not any('hardware_profile' in a for a in bringup.resolve_graph('simulation').node_arguments(
        bringup.SIMULATOR))
    with pytest.raises(ValueError, match='hardware must be one of'):
        bringup.resolve_graph('simulation', hardware='gazebo')
    for graph in sorted(bringup.GRAPHS):
        tree = ast.parse((ROOT / 'launch' / f'{graph}.launch.py').read_text(encoding='utf-8'))
        declared = {ast.literal_eval(call.args[0]): {k.arg: k.value for k in call.keywords}
                    for call in ast.walk(tree) if isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name) and call.func.id == 'DeclareLaunchArgument'}
        assert sorted(ast.literal_eval(declared['hardware']['choices'])) == sorted(PROFILES), graph
        assert ast.literal_eval(declared['hardware']['default_value']) == 'ros2_control'


def test_the_feedforward_option_adds_the_relay():
    gc = bringup.resolve_graph('dynamics', feedforward=True)
    assert [s.name for s in gc.nodes] == ['dynamics_node', 'external_torque_estimator',
                                          'trajectory_feedforward', 'state_publisher']
    assert bringup.bringup_command(gc)[-2:] == ['--feedforward', 'true']
    assert bringup.FEEDFORWARD not in bringup.resolve_graph('simulation').nodes


def test_dynamics_graph_defaults_to_the_robot_description_topic():
    gc = bringup.resolve_graph('dynamics')
    assert [s.name for s in gc.nodes] == ['dynamics_node', 'external_torque_estimator', 'state_publisher']
    assert gc.urdf is None and gc.config.name == 'dynamics.yaml'
    assert not any('urdf_path' in a for a in gc.node_arguments(bringup.DYNAMICS))


def test_unknown_files_and_graphs_are_errors():
    with pytest.raises(FileNotFoundError, match='no_such.yaml'):
        bringup.resolve_graph('simulation', config='no_such.yaml')
    with pytest.raises(ValueError, match='graph'):
        bringup.resolve_graph('moon')
    assert bringup.main(['--config', 'no_such.yaml']) == 2


def test_shipped_files_are_found():
    for kind, name in (('urdf', 'ur5e.urdf'), ('config', 'simulation.yaml'),
                       ('config', 'dynamics.yaml'), ('launch', 'simulation.launch.py'),
                       ('launch', 'dynamics.launch.py')):
        path = resources.share_file(kind, name)
        assert path.is_file() and path.name == name
    # An existing path is taken as it is.
    assert resources.urdf_file(str(ROOT / 'urdf' / 'ur5e.urdf')) == ROOT / 'urdf' / 'ur5e.urdf'


def _launch_nodes(path):
    """(executable, name) of every launch_ros Node(...) call in a launch file, and the names of
    DeclareLaunchArgument calls without a description."""
    tree = ast.parse(Path(path).read_text(encoding='utf-8'))
    nodes, undescribed = [], []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            continue
        kwargs = {k.arg: k.value for k in call.keywords}
        if call.func.id == 'Node' and 'name' in kwargs:      # (the one-process bringup has none)
            nodes.append((ast.literal_eval(kwargs['executable']),
                          ast.literal_eval(kwargs['name'])))
        elif call.func.id == 'DeclareLaunchArgument':
            if 'description' not in kwargs:
                undescribed.append(ast.literal_eval(call.args[0]))
    return nodes, undescribed


@pytest.mark.parametrize('graph', sorted(bringup.GRAPHS))
def test_launch_file_starts_the_same_graph_as_bringup(graph):
    path = ROOT / 'launch' / f'{graph}.launch.py'
    compile(path.read_text(encoding='utf-8'), str(path), 'exec')
    nodes, undescribed = _launch_nodes(path)
    assert nodes == [(s.executable, s.name) for s in bringup.every_node(graph)]
    assert undescribed == []
    assert f"'{bringup.DEFAULT_CONFIGS[graph]}'" in path.read_text(encoding='utf-8')


class _Recorded:
    """Stand-in for every launch / launch_ros class: remembers its arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def _stub_launch_modules(monkeypatch):
    """Minimal fake `launch` and `launch_ros` packages: enough to execute a launch file's
    generate_launch_description() where ROS 2's launch is not installed."""
    import types

    names = {
        'launch': ['LaunchDescription'],
        'launch.actions': ['DeclareLaunchArgument', 'IncludeLaunchDescription'],
        'launch.conditions': ['IfCondition', 'UnlessCondition'],
        'launch.substitutions': ['LaunchConfiguration', 'PathJoinSubstitution', 'EqualsSubstitution',
                                 'AndSubstitution'],
        'launch_ros': [],
        'launch_ros.actions': ['Node'],
        'launch_ros.parameter_descriptions': ['ParameterValue'],
        'launch_ros.substitutions': ['FindPackageShare'],
    }
    for module_name, classes in names.items():
        module = types.ModuleType(module_name)
        for cls in classes:
            setattr(module, cls, type(cls, (_Recorded,), {}))
        monkeypatch.setitem(sys.modules, module_name, module)


@pytest.mark.parametrize('graph', sorted(bringup.GRAPHS))
def test_launch_file_executes(graph, monkeypatch):
    """generate_launch_description() runs (with stand-ins for launch), declares described
    arguments, and gives every node the config file first, then overrides."""
    import importlib.util

    _stub_launch_modules(monkeypatch)
    path = ROOT / 'launch' / f'{graph}.launch.py'
    spec = importlib.util.spec_from_file_location(f'_launch_{graph}', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    entities = description.args[0]
    arguments = [e for e in entities if type(e).__name__ == 'DeclareLaunchArgument']
    every = [e for e in entities if type(e).__name__ == 'Node']
    nodes = [n for n in every if 'name' in n.kwargs]
    assert {'urdf', 'config', 'use_sim_time'} <= {a.args[0] for a in arguments}
    assert all(a.kwargs.get('description') for a in arguments)
    assert [(n.kwargs['executable'], n.kwargs['name']) for n in nodes] == [
        (s.executable, s.name) for s in bringup.every_node(graph)]
    # the simulation graph: one bringup process unless processes:=true, then a process per node
    one_process = [n for n in every if 'name' not in n.kwargs]
    if graph == 'simulation':
        assert [n.kwargs['executable'] for n in one_process] == ['bringup']
        arguments = one_process[0].kwargs['arguments']
        assert arguments[:2] == ['--graph', 'simulation'] and '--params-file' in arguments
        assert type(one_process[0].kwargs['condition']).__name__ == 'UnlessCondition'
        assert all(type(n.kwargs['condition']).__name__ == 'IfCondition' for n in nodes)
        # exactly one controller runs for each value of the controller argument
        conditional = [n for n in nodes if type(n.kwargs['condition'].args[0]).__name__ == 'AndSubstitution'
                       and type(n.kwargs['condition'].args[0].args[1]).__name__ == 'EqualsSubstitution']
        assert [n.kwargs['name'] for n in conditional] == [s.name for s in bringup.CONTROLLERS.values()]
        equals = [n.kwargs['condition'].args[0].args[1] for n in conditional]
        assert [e.args[1] for e in equals] == list(bringup.CONTROLLERS)
    else:       # the dynamics graph's nodes always run, the options only on their argument
        assert one_process == []
        conditional = [n.kwargs['name'] for n in nodes if 'condition' in n.kwargs]
        assert conditional == [s.name for s in bringup.OPTIONAL]
    # the optional nodes run on their launch argument (feedforward:=true, publish_tf:=true)
    switches = {'trajectory_feedforward': 'feedforward', 'state_publisher': 'publish_tf'}
    for node in (n for n in nodes if n.kwargs['name'] in {s.name for s in bringup.OPTIONAL}):
        condition = node.kwargs['condition'].args[0]
        argument = condition.args[1] if graph == 'simulation' else condition
        assert argument.args == (switches[node.kwargs['name']],), node.kwargs['name']
    for node in nodes:
        assert node.kwargs['package'] == 'robot_dynamics_ros'
        config = node.kwargs['parameters'][0]
        assert type(config).__name__ == 'LaunchConfiguration' and config.args == ('config',)


# --- the real thing ----------------------------------------------------------------------------

@pytest.fixture
def ros_domain(monkeypatch, spare_domain):
    """A ROS domain of its own (localhost only) for this test and the processes it starts."""
    domain = spare_domain()
    monkeypatch.setenv('ROS_DOMAIN_ID', str(domain))
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    monkeypatch.delenv('ROS_LOCALHOST_ONLY', raising=False)
    monkeypatch.delenv('ROS_STATIC_PEERS', raising=False)
    return domain


@pytest.fixture
def observer(ros_domain):
    """An rclpy node in its own context on the test's domain."""
    rclpy = pytest.importorskip('rclpy')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    node = rclpy.create_node('bringup_observer', context=context)
    yield node
    node.destroy_node()
    rclpy.shutdown(context=context)


def _start_bringup(tmp_path, *args):
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(ROOT), env.get('PYTHONPATH')) if p)
    log = open(tmp_path / 'bringup.log', 'w+b')
    proc = subprocess.Popen([sys.executable, '-m', 'robot_dynamics_ros.cli.bringup', *args],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    return proc, log


def _output(log):
    log.seek(0)
    return log.read().decode(errors='replace')[-6000:]


def _stop(proc, log, sig=signal.SIGINT):
    """Send ``sig``; assert exit code 0 within SHUTDOWN_TIMEOUT s. Returns the output."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        code = proc.wait(timeout=SHUTDOWN_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f'bringup did not stop within {SHUTDOWN_TIMEOUT} s of {sig.name}:\n'
                    + _output(log))
    output = _output(log)
    assert code == 0, f'bringup exited with {code} after {sig.name}:\n{output}'
    return output


def _assert_finite_messages(received, proc, log):
    for topic, msgs in received.items():
        assert msgs, (f'no message on {topic} (bringup '
                      f'{"running" if proc.poll() is None else f"exited {proc.returncode}"}):\n'
                      + _output(log))
        for msg in msgs:
            assert np.all(np.isfinite(message_values(msg))), f'non-finite values on {topic}'


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize('mode, sig', [
    pytest.param([], signal.SIGINT, id='one-process'),
    pytest.param(['--processes'], signal.SIGINT, id='processes'),
    pytest.param(['--executor', 'single'], signal.SIGTERM, id='single-threaded-sigterm'),
    # the loop closes in the namespace, through the remapped joint states topic
    pytest.param(['--namespace', 'arm', '--joint-states-topic', 'states'], signal.SIGINT, id='namespaced'),
])
def test_simulation_graph_runs_and_stops_cleanly(observer, tmp_path, mode, sig):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    ns = '/arm' if '--namespace' in mode else ''
    states = f'{ns}/states' if '--joint-states-topic' in mode else '/joint_states'
    gravity, commands = f'{ns}/dynamics_node/gravity_torques', f'{ns}/effort_controller/commands'
    proc, log = _start_bringup(tmp_path, '--graph', 'simulation', *mode)
    try:
        received = wait_for_messages(observer, {states: JointState, gravity: JointState,
                                                commands: Float64MultiArray},
                                     timeout=STARTUP_TIMEOUT, count=5)
        _assert_finite_messages(received, proc, log)
        assert sorted(received[states][-1].name) == sorted(UR5E_JOINTS)
        assert len(received[commands][-1].data) == len(UR5E_JOINTS)
        assert sorted(received[gravity][-1].name) == sorted(UR5E_JOINTS)
        t0 = time.monotonic()
        output = _stop(proc, log, sig)
        assert time.monotonic() - t0 < SHUTDOWN_TIMEOUT
        assert 'Traceback' not in output, output
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.ros
@pytest.mark.slow
def test_dynamics_graph_takes_the_urdf_from_the_topic(observer, tmp_path):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    description = observer.create_publisher(String, '/robot_description', latched)
    description.publish(String(data=(ROOT / 'urdf' / 'ur5e.urdf').read_text(encoding='utf-8')))
    states = observer.create_publisher(JointState, '/joint_states', 10)
    gravity = []
    observer.create_subscription(JointState, '/dynamics_node/gravity_torques', gravity.append, 10)

    proc, log = _start_bringup(tmp_path, '--graph', 'dynamics')
    executor = node_executor(observer)
    try:
        q = [0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0]
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while len(gravity) < 3 and time.monotonic() < deadline and proc.poll() is None:
            states.publish(JointState(name=UR5E_JOINTS, position=q, velocity=[0.0] * 6))
            executor.spin_once(timeout_sec=0.02)
        _assert_finite_messages({'/dynamics_node/gravity_torques': gravity}, proc, log)
        lift = gravity[-1].effort[list(gravity[-1].name).index('shoulder_lift_joint')]
        assert abs(lift) > 1.0  # the shoulder carries the horizontal upper arm
        _stop(proc, log)
    finally:
        executor.remove_node(observer)
        executor.shutdown(timeout_sec=1.0)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def test_namespace_and_remappings_reach_every_node_and_the_bringup_command():
    gc = bringup.resolve_graph('simulation', namespace='/arm/', joint_states_topic='states',
                               effort_command_topic='/efforts')
    args = gc.node_arguments(bringup.SIMULATOR)
    assert args[args.index('__ns:=/arm') - 1] == '-r'
    assert 'joint_states:=states' in args and 'effort_controller/commands:=/efforts' in args
    plain, _ = bringup.split_ros_args(bringup.bringup_command(gc)[3:])
    opts = bringup.build_parser().parse_args(plain)
    chosen = (opts.namespace, opts.joint_states_topic, opts.effort_command_topic)
    assert chosen == ('arm', 'states', '/efforts')
    assert not any(a.startswith('__ns') for a in bringup.resolve_graph('simulation').node_arguments(
        bringup.SIMULATOR))
