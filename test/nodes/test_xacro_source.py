"""A xacro file as a node's urdf_path, over real DDS: expanded with xacro_args, it gives the model of the
equivalent URDF (dynamics_node's gravity torques), the simulator publishes the expanded URDF on
/robot_description, and an argument not given leaves the node without a model and an error naming it.

The file is test/data/xacro/ur.urdf.xacro: ur_description's interface (ur_type, name) over the
package's own UR5e, included through $(find robot_dynamics_ros), which resolves through the ament
index (`make test` puts the venv, where the set-up links the package's share files, on
AMENT_PREFIX_PATH)."""

import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import bringup
from robot_dynamics_ros.logic.robot_description import DescriptionError, read_description
from robot_dynamics_ros.nodes.conversions import make_joint_state
from robot_dynamics_ros.nodes.dynamics_node import DynamicsNode
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode

from _node_harness import REPO, UR5E_HOME, UR5E_JOINTS

pytestmark = pytest.mark.ros

pytest.importorskip('xacro')

UR_XACRO = str(REPO / 'test' / 'data' / 'xacro' / 'ur.urdf.xacro')
UR5E_ARGS = 'ur_type:=ur5e name:=ur'


@pytest.fixture(scope='module', autouse=True)
def expandable():
    """Skips where $(find robot_dynamics_ros) does not resolve (no AMENT_PREFIX_PATH with it)."""
    try:
        read_description(UR_XACRO, UR5E_ARGS)
    except DescriptionError as exc:
        if '$(find' not in str(exc):
            raise
        pytest.skip(f'{exc} (`make test` puts the venv, where the set-up links the share files, on '
                    'AMENT_PREFIX_PATH)')


def test_a_xacro_urdf_path_with_its_arguments_gives_the_urdf_model(graph, ur5e_model):
    ros = graph
    node = ros.add(DynamicsNode, {'urdf_path': UR_XACRO, 'xacro_args': UR5E_ARGS,
                                  'publish_mass_matrix': False, 'publish_task_space_inertia': False})
    assert node.model is not None, ros.logged(node.get_name())
    gravity = ros.collect(JointState, f'/{node.get_name()}/gravity_torques')
    states = ros.publisher(JointState, '/joint_states')
    rng = np.random.default_rng(7)
    sent = []
    for _ in range(3):
        q = np.asarray(UR5E_HOME) + rng.uniform(-0.5, 0.5, 6)
        sent.append(q)
        states.publish(make_joint_state(UR5E_JOINTS, position=q))
        ros.spin(0.05)
    assert ros.spin_until(lambda: len(gravity) >= 3, 10.0), len(gravity)
    for msg, q in zip(gravity, sent):
        assert tuple(msg.name) == UR5E_JOINTS
        np.testing.assert_allclose(msg.effort, rd.gravity_torques(ur5e_model, q), rtol=0, atol=1e-9)


def test_bringup_arguments_reach_the_node_through_rcl(graph, ur5e_model):
    """The one-process bring-up (and launch's processes:=false) hands xacro_args over as a ROS argument,
    -p xacro_args:="ur_type:=ur5e name:=ur": rcl splits it at the first :=, the rest is the value."""
    ros = graph
    gc = bringup.resolve_graph('dynamics', urdf=UR_XACRO, xacro_args=UR5E_ARGS)
    node = ros.add(DynamicsNode, cli_args=gc.node_arguments(bringup.DYNAMICS))
    assert node.get_parameter('xacro_args').value == UR5E_ARGS
    assert node.model is not None and node.model.joint_names == ur5e_model.joint_names


def test_the_simulator_publishes_the_expanded_urdf(graph):
    ros = graph
    ros.add(SimulatorNode, {'urdf_path': UR_XACRO, 'xacro_args': UR5E_ARGS,
                            'initial_positions': list(UR5E_HOME)})
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
    descriptions = ros.collect(String, '/robot_description', qos)
    assert ros.spin_until(lambda: descriptions, 5.0)
    published = descriptions[-1].data
    assert published == read_description(UR_XACRO, UR5E_ARGS)
    assert published.lstrip().startswith('<?xml') and '<robot name="ur">' in published
    # what robot_state_publisher and the other nodes read: plain URDF, no xacro left
    assert 'xacro:' not in published and '$(arg' not in published
    assert rd.load_urdf(published).joint_names == UR5E_JOINTS


def _logged_at_start(capfd, contains):
    """The lines the node logged while it was created (its console output: /rosout may not have
    matched the probe yet when a constructor logs) that contain ``contains``."""
    return [line for line in capfd.readouterr().err.splitlines() if contains in line]


def test_an_argument_not_given_leaves_no_model_and_names_it(graph, capfd):
    ros = graph
    node = ros.add(DynamicsNode, {'urdf_path': UR_XACRO, 'xacro_args': 'name:=ur'})
    assert node.model is None
    (error,) = _logged_at_start(capfd, "xacro argument 'ur_type' is not set")
    assert '[ERROR]' in error and f'[{node.get_name()}]' in error
    assert "pass xacro_args 'ur_type:=VALUE'" in error and 'running without a robot model' in error


def test_xacro_args_with_a_urdf_file_are_unused_and_said_so(graph, ur5e_model, capfd):
    ros = graph
    node = ros.add(DynamicsNode, {'urdf_path': str(REPO / 'urdf' / 'ur5e.urdf'), 'xacro_args': UR5E_ARGS})
    assert node.model is not None and node.model.joint_names == ur5e_model.joint_names
    (warning,) = _logged_at_start(capfd, 'is not a xacro file')
    assert '[WARN]' in warning and "xacro_args 'ur_type:=ur5e name:=ur' unused" in warning


def test_the_demos_take_a_xacro_and_refuse_it_without_its_arguments(capsys):
    """`python -m robot_dynamics_ros.demos --urdf X.xacro --xacro-args ...`: the graph's nodes get both, the
    demo reads the expanded URDF; an argument missing ends the demo before any node starts."""
    from robot_dynamics_ros.demos import __main__ as demos
    from robot_dynamics_ros.demos.recording import simulation_graph, urdf_robot_name

    opts = demos.build_parser().parse_args(['--urdf', UR_XACRO, '--xacro-args', UR5E_ARGS])
    opts.ros_args = []
    gc = simulation_graph(opts)
    assert gc.overrides(bringup.SIMULATOR)['xacro_args'] == UR5E_ARGS
    assert urdf_robot_name(gc.robot_description()) == 'ur'
    assert demos.main(['--urdf', UR_XACRO, '--xacro-args', 'name:=ur', '--no-plot']) == 2
    assert "demo: xacro argument 'ur_type' is not set" in capsys.readouterr().err
