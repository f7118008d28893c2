"""A FollowJointTrajectory client that behaves as MoveIt's controller handle, for the node tests
(moveit_simple_controller_manager's FollowJointTrajectoryControllerHandle: a goal with empty
tolerances, then it waits for the result and reads error_code and error_string)."""

import time

from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from _node_harness import UR5E_JOINTS


def _duration(t):
    return Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))


def _trajectory(points, joints=UR5E_JOINTS, stamp=None):
    """points: [(t, positions)]."""
    msg = JointTrajectory(joint_names=list(joints))
    if stamp is not None:
        msg.header.stamp = stamp
    for t, q in points:
        msg.points.append(JointTrajectoryPoint(positions=[float(x) for x in q],
                                               time_from_start=_duration(t)))
    return msg


class MoveItLikeClient:
    """What moveit_simple_controller_manager's FollowJointTrajectoryControllerHandle does: send a
    goal (empty tolerances unless given), wait for acceptance, then for the result."""

    def __init__(self, ros, controller_name):
        self.ros = ros
        self.client = ActionClient(ros.probe, FollowJointTrajectory,
                                   f'/{controller_name}/follow_joint_trajectory')
        assert ros.spin_until(self.client.server_is_ready, 10.0), 'no action server'
        self.feedback = []

    def send(self, trajectory, **goal_fields):
        goal = FollowJointTrajectory.Goal(trajectory=trajectory, **goal_fields)
        future = self.client.send_goal_async(
            goal, feedback_callback=lambda m: self.feedback.append((time.monotonic(), m.feedback)))
        assert self.ros.spin_until(future.done, 5.0), 'goal not answered'
        handle = future.result()
        assert handle.accepted, 'goal rejected (this controller accepts and aborts invalid goals)'
        return handle

    def result(self, handle, timeout=10.0):
        future = handle.get_result_async()
        assert self.ros.spin_until(future.done, timeout), 'no result: the client was left waiting'
        response = future.result()
        return response.status, response.result.error_code, response.result.error_string

    def execute(self, trajectory, timeout=10.0, **goal_fields):
        return self.result(self.send(trajectory, **goal_fields), timeout)
