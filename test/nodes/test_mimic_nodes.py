"""Mimic joints over real DDS: the simulator publishes a mimicking joint beside the coordinates
(position m q + o and velocity m q̇ of the joint it follows, effort 0), and dynamics_node ignores a
mimicking joint's entry in /joint_states (its outputs equal those without the entry, whatever it
says). The robot: a 4-coordinate chain whose third joint j3 mimics j2 (q3 = -0.5 q2 + 0.3)."""

import numpy as np
import pytest
from sensor_msgs.msg import JointState

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.nodes.conversions import make_joint_state
from robot_dynamics_ros.nodes.dynamics_node import DynamicsNode
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode

pytestmark = pytest.mark.ros

INERTIAL = ('<inertial><origin xyz="0.1 0.01 0.02"/><mass value="{m}"/><inertia ixx="0.02" ixy="0.001" '
            'ixz="0" iyy="0.03" iyz="0" izz="0.025"/></inertial>')


def _joint(name, parent, child, xyz, axis, extra=''):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/><limit effort="50" velocity="3" lower="-2" upper="2"/>'
            f'{extra}</joint>')


COUPLED = ''.join([
    '<robot name="coupled">', '<link name="base_link"/>',
    *(f'<link name="l{k}">{INERTIAL.format(m=1.0 + 0.2 * k)}</link>' for k in range(1, 6)),
    _joint('j1', 'base_link', 'l1', '0 0 0.1', '0 0 1'),
    _joint('j2', 'l1', 'l2', '0.05 0 0.2', '0 1 0'),
    _joint('j3', 'l2', 'l3', '0.3 0 0', '0 1 0', '<mimic joint="j2" multiplier="-0.5" offset="0.3"/>'),
    _joint('j4', 'l3', 'l4', '0.25 0 0', '1 0 0'),
    _joint('j5', 'l4', 'l5', '0.1 0 0', '0 0 1'),
    '</robot>'])
COORDINATES = ('j1', 'j2', 'j4', 'j5')


def test_simulator_publishes_the_mimicking_joint_from_the_joint_it_follows(graph):
    ros = graph
    model = rd.load_urdf(COUPLED)
    assert model.joint_names == COORDINATES and model.mimic == {'j3': ('j2', -0.5, 0.3)}
    ros.add(SimulatorNode, {'robot_description': COUPLED, 'dt': 0.001, 'publish_rate': 100.0,
                            'initial_positions': [0.2, 0.4, -0.3, 0.1], 'wait_for_command': False,
                            'friction': False})
    states = ros.collect(JointState, '/joint_states')
    assert ros.spin_until(lambda: len(states) >= 10, 10.0), len(states)
    moved = 0
    for msg in states[:10]:
        assert tuple(msg.name) == COORDINATES + ('j3',)
        q, qd = np.array(msg.position[:4]), np.array(msg.velocity[:4])
        assert msg.position[4] == -0.5 * q[1] + 0.3 and msg.velocity[4] == -0.5 * qd[1]
        assert list(msg.effort) == [0.0] * 5
        moved += abs(qd[1]) > 0
    assert moved, 'the arm never moved under gravity'


def test_dynamics_node_ignores_the_mimicking_joints_entry(graph):
    ros = graph
    model = rd.load_urdf(COUPLED)
    node = ros.add(DynamicsNode, {'robot_description': COUPLED, 'publish_task_space_inertia': False})
    gravity = ros.collect(JointState, f'/{node.get_name()}/gravity_torques')
    coriolis = ros.collect(JointState, f'/{node.get_name()}/coriolis_torques')
    pub = ros.publisher(JointState, '/joint_states')
    q, qd = np.array([0.2, 0.4, -0.3, 0.1]), np.array([0.5, -1.0, 0.3, 0.2])
    # without the entry (the node waits for nothing more), then with two contradicting values of it
    pub.publish(make_joint_state(COORDINATES, position=q, velocity=qd))
    assert ros.spin_until(lambda: len(gravity) >= 1 and len(coriolis) >= 1, 10.0)
    for value in (0.9, -1.7):
        pub.publish(make_joint_state(COORDINATES + ('j3',), position=list(q) + [value],
                                     velocity=list(qd) + [3.0 * value]))
        count = len(gravity)
        assert ros.spin_until(lambda: len(gravity) > count and len(coriolis) > count, 10.0)
    assert not ros.warnings(node.get_name(), 'no joint state received yet')
    for msg in gravity[:3]:
        assert tuple(msg.name) == COORDINATES
        assert list(msg.effort) == list(gravity[0].effort)
    for msg in coriolis[:3]:
        assert list(msg.effort) == list(coriolis[0].effort)
    np.testing.assert_allclose(gravity[0].effort, rd.gravity_torques(model, q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(coriolis[0].effort, rd.coriolis_forces(model, q, qd), rtol=0, atol=1e-12)
