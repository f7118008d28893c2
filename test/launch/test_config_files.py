"""config/*.yaml: they parse, name the graph's nodes, and set only parameters the nodes declare.

rcl ignores a parameter-file entry that no node declares (and a node name that matches no node),
so a misspelt key would silently do nothing: every key is checked against the real node classes,
instantiated with the file exactly as bringup and the launch files pass it (--params-file).
"""

import math
from pathlib import Path

import pytest
import yaml

from robot_dynamics_ros.cli import bringup

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / 'config').glob('*.yaml'))
NODE_NAMES = {spec.name for graph in bringup.GRAPHS for spec in bringup.every_node(graph)}


def _parameters(path):
    return bringup.config_parameters(path)


def test_every_graph_has_its_config_file():
    names = {p.name for p in CONFIGS}
    assert set(bringup.DEFAULT_CONFIGS.values()) <= names


@pytest.mark.parametrize('path', CONFIGS, ids=lambda p: p.name)
def test_config_file_is_well_formed(path):
    data = yaml.safe_load(path.read_text(encoding='utf-8'))
    assert isinstance(data, dict) and data, 'expected <node_name>: ros__parameters: ...'
    for node_name, section in data.items():
        # /** (every node, under any namespace): what identify robot writes, and the real arm's file;
        # /**/<node>: that node under any namespace (a plain <node> key would match /<node> only)
        assert node_name == '/**' or node_name.removeprefix('/**/') in NODE_NAMES, (
            f'{node_name!r} is not a node of any graph')
        assert node_name == '/**' or node_name.startswith('/**/'), (
            f'{node_name!r}: key it /**/{node_name.lstrip("/")} so that it applies under a namespace')
        assert isinstance(section, dict) and list(section) == ['ros__parameters']
        for key, value in section['ros__parameters'].items():
            if isinstance(value, list):
                # rcl types an array from its elements: [400, 300.0] is an error, [400, 300] an
                # integer array that a double-array parameter rejects.
                assert value, f'{key}: rcl cannot type an empty array; leave the default'
                kinds = {type(v) for v in value}
                assert len(kinds) == 1, f'{key}: mixed element types {kinds}'
                assert kinds != {int}, f'{key}: write doubles with a decimal point'
            elif isinstance(value, float):
                assert math.isfinite(value), key


@pytest.mark.parametrize('graph', sorted(bringup.GRAPHS))
def test_graph_config_covers_every_node(graph):
    params = _parameters(ROOT / 'config' / bringup.DEFAULT_CONFIGS[graph])
    assert set(params) == {spec.name for spec in bringup.every_node(graph)}


def _same(value, want):
    """A parameter's value equals the file's (floats approximately, arrays element-wise)."""
    if isinstance(want, list):
        value = list(value)
        if want and isinstance(want[0], float):
            return value == pytest.approx(want)
        return value == want
    if isinstance(want, float):
        return value == pytest.approx(want)
    return value == want


@pytest.fixture
def ros_context(spare_domain):
    rclpy = pytest.importorskip('rclpy')
    context = rclpy.Context()
    # The nodes are only constructed, never connected: any domain of this worker's will do.
    rclpy.init(context=context, domain_id=spare_domain())
    yield context
    rclpy.shutdown(context=context)


@pytest.mark.ros
@pytest.mark.parametrize('graph', sorted(bringup.GRAPHS))
def test_every_config_key_is_a_parameter_the_node_declares(graph, ros_context):
    gc = bringup.resolve_graph(graph, urdf='ur5e.urdf')
    expected = _parameters(gc.config)
    for spec in bringup.every_node(graph):
        node = spec.node_class()(cli_args=gc.node_arguments(spec), context=ros_context)
        try:
            declared = set(node.list_parameters([], 0).names)
            keys = set(expected[spec.name])
            assert keys <= declared, (
                f'{gc.config.name}: {spec.name} does not declare {sorted(keys - declared)}')
            for key in keys:
                assert _same(node.get_parameter(key).value, expected[spec.name][key]), (
                    f'{spec.name}.{key} = {node.get_parameter(key).value!r}, '
                    f'file says {expected[spec.name][key]!r}')
            assert node.get_parameter('urdf_path').value == str(gc.urdf)
        finally:
            node.destroy_node()


def test_the_rviz_config_shows_the_graphs_topics_from_the_robots_root_frame():
    """config/robot_dynamics.rviz (for a system installation's rviz2): YAML, its Fixed Frame the root
    link of the default robot, its RobotModel on the transient-local /robot_description, and every
    other topic one of the graph's nodes' (/<node>/<topic>), of a type that node publishes there."""
    from robot_dynamics_ros.dynamics.kinematic_tree import KinematicTree

    rviz = yaml.safe_load((ROOT / 'config' / 'robot_dynamics.rviz').read_text())
    manager = rviz['Visualization Manager']
    tree = KinematicTree.from_urdf(str(ROOT / 'urdf' / 'ur5e.urdf'))
    assert manager['Global Options']['Fixed Frame'] == tree.root_link
    displays = {d['Class']: d for d in manager['Displays']}
    model = displays['rviz_default_plugins/RobotModel']['Description Topic']
    assert (model['Value'], model['Durability Policy']) == ('/robot_description', 'Transient Local')
    assert 'rviz_default_plugins/TF' in displays
    published = {'rviz_default_plugins/Pose': 'desired_pose', 'rviz_default_plugins/Path': 'predicted_path',
                 'rviz_default_plugins/Wrench': 'external_wrench',
                 'rviz_default_plugins/MarkerArray': 'contacts'}
    for display in manager['Displays']:
        if display['Class'] in published:
            _, node, topic = display['Topic']['Value'].split('/')
            assert node in NODE_NAMES and topic == published[display['Class']], display['Name']
