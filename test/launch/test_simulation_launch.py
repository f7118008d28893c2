"""launch_testing: launch/simulation.launch.py brings up the simulated, controlled arm.

Runs where ROS 2's launch_testing is installed (colcon test, launch_test); skipped elsewhere.
"""

import os
import sys
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

sys.path.insert(0, os.path.dirname(__file__))
from _topic_helpers import message_values, wait_for_messages

LAUNCH_FILE = Path(__file__).resolve().parents[2] / 'launch' / 'simulation.launch.py'
UR5E_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
               'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']


@pytest.mark.launch_test
@pytest.mark.launch
def generate_test_description():
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
            launch_arguments={'real_time_factor': '1.0', 'log_level': 'info'}.items(),
        ),
        launch_testing.actions.ReadyToTest(),
    ])


class TestSimulationGraph(unittest.TestCase):
    """Active tests: run while the launched nodes run."""

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node('test_simulation_launch')

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def test_graph_publishes_finite_values(self):
        topics = {
            '/joint_states': JointState,
            '/effort_controller/commands': Float64MultiArray,
            '/computed_torque_controller/tracking_error': JointState,
            '/dynamics_node/gravity_torques': JointState,
            '/dynamics_node/mass_matrix': Float64MultiArray,
        }
        # Generous: numba compiles the dynamics kernels on a cold cache.
        received = wait_for_messages(self.node, topics, timeout=60.0)
        for topic, msgs in received.items():
            with self.subTest(topic=topic):
                self.assertGreaterEqual(len(msgs), 3, f'too few messages on {topic}')
                self.assertTrue(all(np.all(np.isfinite(message_values(m))) for m in msgs),
                                f'non-finite values on {topic}')
        state = received['/joint_states'][-1]
        self.assertEqual(sorted(state.name), sorted(UR5E_JOINTS))
        self.assertEqual(len(received['/effort_controller/commands'][-1].data), len(UR5E_JOINTS))
        mass = received['/dynamics_node/mass_matrix'][-1]
        self.assertEqual(len(mass.data), len(UR5E_JOINTS) ** 2)

    def test_controller_holds_the_arm(self, proc_output):
        """start_enabled: the controller holds the arm against gravity where it starts (the
        simulator integrates nothing before the controller's first command: wait_for_command),
        so there is no start-up transient to wait out."""
        received = wait_for_messages(
            self.node, {'/computed_torque_controller/tracking_error': JointState},
            timeout=60.0, count=1500)  # 3 s at 500 Hz
        errors = received['/computed_torque_controller/tracking_error']
        self.assertGreaterEqual(len(errors), 1500)
        every = np.array([m.position for m in errors])
        self.assertLess(np.max(np.abs(every)), 1e-3)


@launch_testing.post_shutdown_test()
class TestSimulationShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        """Every node exits cleanly on launch's SIGINT."""
        launch_testing.asserts.assertExitCodes(proc_info)
