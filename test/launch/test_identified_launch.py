"""launch_testing: launch/dynamics.launch.py on an identified arm, as `identify robot` tells a user to run it.

urdf:= the identified URDF and params_file:= the YAML written beside it (here the shipped real arm:
urdf/ur5e_real_arm.urdf and config/ur5e_real_arm.yaml, the same form): the dynamics node's mass matrix
must be the identified model's M(q) + diag(armature), its gravity torques the identified model's, and
the estimator must take the effort offset out of the measured efforts (a state whose efforts are the
identified model's torques plus the offset reads as no external torque). Skipped where launch_testing
is not installed.
"""

import os
import sys
import time
import unittest
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip('launch_testing')
pytest.importorskip('launch_ros')

import launch_testing.actions
import launch_testing.asserts
import rclpy
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import bringup

sys.path.insert(0, os.path.dirname(__file__))

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILE = ROOT / 'launch' / 'dynamics.launch.py'
URDF_FILE = ROOT / 'urdf' / 'ur5e_real_arm.urdf'
PARAMS_FILE = ROOT / 'config' / 'ur5e_real_arm.yaml'
Q = np.array([0.3, -1.2, 1.4, -1.7, -1.5, 0.4])


@pytest.mark.launch_test
@pytest.mark.launch
def generate_test_description():
    arguments = {'urdf': str(URDF_FILE), 'params_file': str(PARAMS_FILE)}.items()
    return LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(str(LAUNCH_FILE)), launch_arguments=arguments),
        launch_testing.actions.ReadyToTest(),
    ])


class TestIdentifiedModel(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node('test_identified_launch')

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def test_the_nodes_run_on_the_identified_model(self):
        parameters = bringup.config_parameters(PARAMS_FILE)['/**']
        model = rd.load_urdf(URDF_FILE, armature=parameters['armature'])
        offset = np.array(parameters['effort_offset'])
        node = self.node
        states = node.create_publisher(JointState, '/joint_states', 10)
        received = {'mass_matrix': [], 'gravity': [], 'external': []}
        node.create_subscription(Float64MultiArray, '/dynamics_node/mass_matrix',
                                 received['mass_matrix'].append, 10)
        node.create_subscription(JointState, '/dynamics_node/gravity_torques', received['gravity'].append, 10)
        node.create_subscription(JointState, '/external_torque_estimator/external_torques',
                                 received['external'].append, 10)
        effort = rd.gravity_torques(model, Q) + offset        # at rest: what the sensors read
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and not all(len(v) >= 20 for v in received.values()):
            msg = JointState(name=list(model.joint_names), position=Q.tolist(), velocity=[0.0] * 6,
                             effort=effort.tolist())
            msg.header.stamp = node.get_clock().now().to_msg()
            states.publish(msg)
            rclpy.spin_once(node, timeout_sec=0.01)
        for key, msgs in received.items():
            self.assertGreaterEqual(len(msgs), 20, f'too few messages on {key}')
        M = np.array(received['mass_matrix'][-1].data).reshape(6, 6)
        np.testing.assert_allclose(M, rd.mass_matrix(model, Q), atol=1e-9)
        self.assertGreater(M[5, 5], 0.05)                     # the armature, not the wrist link's 3e-4
        gravity = received['gravity'][-1]
        np.testing.assert_allclose([gravity.effort[list(gravity.name).index(j)] for j in model.joint_names],
                                   rd.gravity_torques(model, Q), atol=1e-9)
        external = np.array(received['external'][-1].effort)
        self.assertLess(np.abs(external).max(), 1e-6)         # the offset is taken out


@launch_testing.post_shutdown_test()
class TestIdentifiedShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
