"""launch_testing: launch/simulation.launch.py under namespace:=arm with its config file.

The config file's sections are keyed /**/<node>: the values in force in /arm/computed_torque_controller
and /arm/dynamics_node must be the file's, not the nodes' built-in defaults (a plain `<node>:` key
would have matched /<node> only and dropped the file silently). The graph's loop runs in the
namespace: /arm/joint_states arrives, /joint_states does not. Skipped where launch_testing is absent.
"""

import os
import sys
import time
import unittest
from pathlib import Path

import pytest

pytest.importorskip('launch_testing')
pytest.importorskip('launch_ros')

import launch_testing.actions
import launch_testing.asserts
import rclpy
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from rcl_interfaces.srv import GetParameters
from rclpy.parameter import parameter_value_to_python
from sensor_msgs.msg import JointState

from robot_dynamics_ros.cli import bringup

sys.path.insert(0, os.path.dirname(__file__))

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILE = ROOT / 'launch' / 'simulation.launch.py'
CONFIG = ROOT / 'config' / 'simulation.yaml'
# (node, parameter) whose value in the file differs from the node's built-in default
CHECKED = (('computed_torque_controller', 'kp'), ('computed_torque_controller', 'kd'),
           ('dynamics_node', 'tip_link'), ('external_torque_estimator', 'contact_threshold'),
           ('simulator_node', 'initial_positions'))


@pytest.mark.launch_test
@pytest.mark.launch
def generate_test_description():
    return LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
                                 launch_arguments={'namespace': 'arm', 'config': str(CONFIG)}.items()),
        launch_testing.actions.ReadyToTest(),
    ])


class TestNamespacedGraph(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node('test_namespaced_launch')

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def _parameter(self, node_name, name):
        client = self.node.create_client(GetParameters, f'/arm/{node_name}/get_parameters')
        try:
            deadline = time.monotonic() + 60.0
            while not client.service_is_ready() and time.monotonic() < deadline:
                rclpy.spin_once(self.node, timeout_sec=0.1)
            self.assertTrue(client.service_is_ready(), f'/arm/{node_name} is not there')
            # A request may go before the server's response writer has matched this client's reader
            # (Fast DDS then drops the response: "failed to send response (timeout)"): asked again.
            while time.monotonic() < deadline:
                future = client.call_async(GetParameters.Request(names=[name]))
                ask_again = time.monotonic() + 5.0
                while not future.done() and time.monotonic() < min(ask_again, deadline):
                    rclpy.spin_once(self.node, timeout_sec=0.1)
                if future.done():
                    return parameter_value_to_python(future.result().values[0])
                client.remove_pending_request(future)
            self.fail(f'/arm/{node_name} did not answer get_parameters')
        finally:
            self.node.destroy_client(client)

    def test_the_config_file_is_in_force_under_the_namespace(self):
        expected = bringup.config_parameters(CONFIG)
        for node_name, name in CHECKED:
            with self.subTest(node=node_name, parameter=name):
                value = self._parameter(node_name, name)
                want = expected[node_name][name]
                self.assertEqual(list(value) if isinstance(want, list) else value, want)

    def test_the_loop_runs_in_the_namespace(self):
        received = {'/arm/joint_states': [], '/joint_states': []}
        for topic, messages in received.items():
            self.node.create_subscription(JointState, topic, messages.append, 10)
        deadline = time.monotonic() + 60.0
        while len(received['/arm/joint_states']) < 20 and time.monotonic() < deadline:
            rclpy.spin_once(self.node, timeout_sec=0.05)
        self.assertGreaterEqual(len(received['/arm/joint_states']), 20)
        self.assertEqual(received['/joint_states'], [])


@launch_testing.post_shutdown_test()
class TestNamespacedShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
