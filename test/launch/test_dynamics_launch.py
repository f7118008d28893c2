"""launch_testing: launch/dynamics.launch.py, the dynamics node alone as on a real robot.

No `urdf` argument: the node must take the model from the /robot_description topic, which this
test publishes (transient local, as robot_state_publisher does), together with joint states.
Runs where ROS 2's launch_testing is installed; skipped elsewhere.
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
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

sys.path.insert(0, os.path.dirname(__file__))
from _topic_helpers import message_values

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILE = ROOT / 'launch' / 'dynamics.launch.py'
URDF_FILE = ROOT / 'urdf' / 'ur5e.urdf'
UR5E_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
               'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']


@pytest.mark.launch_test
@pytest.mark.launch
def generate_test_description():
    return LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(str(LAUNCH_FILE))),
        launch_testing.actions.ReadyToTest(),
    ])


class TestDynamicsNode(unittest.TestCase):
    """Active tests: play the robot (robot_description + joint_states), read the dynamics."""

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node('test_dynamics_launch')

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def test_dynamics_from_robot_description_topic(self):
        node = self.node
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        description = node.create_publisher(String, '/robot_description', latched)
        description.publish(String(data=URDF_FILE.read_text(encoding='utf-8')))
        states = node.create_publisher(JointState, '/joint_states', 10)

        received = {'/dynamics_node/gravity_torques': [], '/dynamics_node/mass_matrix': []}
        node.create_subscription(JointState, '/dynamics_node/gravity_torques',
                                 received['/dynamics_node/gravity_torques'].append, 10)
        node.create_subscription(Float64MultiArray, '/dynamics_node/mass_matrix',
                                 received['/dynamics_node/mass_matrix'].append, 10)

        q = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
        deadline = time.monotonic() + 60.0  # numba may compile on a cold cache
        while time.monotonic() < deadline and not all(len(v) >= 3 for v in received.values()):
            msg = JointState(name=UR5E_JOINTS, position=q.tolist(), velocity=[0.0] * 6)
            msg.header.stamp = node.get_clock().now().to_msg()
            states.publish(msg)
            rclpy.spin_once(node, timeout_sec=0.02)

        for topic, msgs in received.items():
            with self.subTest(topic=topic):
                self.assertGreaterEqual(len(msgs), 3, f'too few messages on {topic}')
                self.assertTrue(all(np.all(np.isfinite(message_values(m))) for m in msgs))
        gravity = received['/dynamics_node/gravity_torques'][-1]
        self.assertEqual(sorted(gravity.name), sorted(UR5E_JOINTS))
        # Shoulder lift carries the arm: its gravity torque is far from zero in this pose.
        lift = gravity.effort[list(gravity.name).index('shoulder_lift_joint')]
        self.assertGreater(abs(lift), 1.0)
        self.assertEqual(len(received['/dynamics_node/mass_matrix'][-1].data), 36)


@launch_testing.post_shutdown_test()
class TestDynamicsShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
