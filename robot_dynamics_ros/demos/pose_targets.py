"""What the demos that send pose targets share (task_space_demo, mpc_demo, mujoco_demo).

- ``PoseTargetRecorder`` (``pose_target_recorder``: with its rclpy node): records the joint states and
  the effort commands, publishes the targets;
- ``PoseDemo``: what such a demo's run holds (the graph, the model, the recording, the recorder);
  ``start_at_rest``: the opening of its run;
- ``desired_pose_at``: the controller's latest desired pose is a given one;
- ``model_order``: the indices that put a joint-state row in the model's joint order.

Imports rclpy only where a node is made.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_dynamics_ros.demos.recording import GraphRun, joint_limits, record_positions, spin_for

__all__ = ['TOOL', 'PoseDemo', 'PoseTargetRecorder', 'desired_pose_at', 'model_order', 'pose_target_recorder',
           'start_at_rest']

#: The frame the pose demos control: the UR5e's tool flange.
TOOL = 'tool0'


class PoseTargetRecorder:
    """The work of a pose demo's own node (``node``): records the joint states (rec.joint_states, names in
    rec.joint_names) and the effort commands (rec.commands); ``send(T)`` publishes the target T (4 x 4, root
    link's frame) on ``target`` and notes it in rec.targets with the last joint state's stamp. A demo adds
    its own subscriptions to ``node`` (with ``qos``)."""

    def __init__(self, rec, node, target_topic, joint_states_topic, commands_topic):
        from geometry_msgs.msg import PoseStamped
        from rclpy.qos import QoSProfile
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        self.rec, self.node = rec, node
        self.qos = QoSProfile(depth=200)
        self.target = node.create_publisher(PoseStamped, target_topic, 10)
        node.create_subscription(JointState, joint_states_topic, self.on_state, self.qos)
        node.create_subscription(Float64MultiArray, commands_topic,
                                 lambda m: rec.commands.add(-1, list(m.data)), self.qos)

    def on_state(self, msg):
        """A sensor_msgs/JointState: its positions recorded (the first one names the joints)."""
        record_positions(self.rec, msg)

    def send(self, T):
        """Publish the target pose T (4 x 4, root link's frame); noted in rec.targets."""
        from geometry_msgs.msg import PoseStamped

        from robot_dynamics_ros.nodes.conversions import set_pose

        msg = PoseStamped()
        msg.header.frame_id = ''            # the root link's frame
        set_pose(msg.pose, T)
        self.target.publish(msg)
        self.rec.targets.append((self.rec.joint_states.stamp[-1], np.array(T)))


def pose_target_recorder(rec, context, node_name, target_topic, joint_states_topic='/joint_states',
                         commands_topic='/effort_controller/commands') -> PoseTargetRecorder:
    """A PoseTargetRecorder of ``rec`` on a node ``node_name`` of its own in ``context`` (imports rclpy)."""
    from rclpy.node import Node

    return PoseTargetRecorder(rec, Node(node_name, context=context), target_topic, joint_states_topic,
                              commands_topic)


@dataclass
class PoseDemo:
    """What a pose demo's run holds: the graph running, the model (tip TOOL) of its URDF, its recording
    (joint_states, joint_names, effort_limit, mode, targets), and its own node's recorder."""

    graph: GraphRun
    model: object
    rec: object
    recorder: PoseTargetRecorder


def desired_pose_at(rec, T, tolerance=1e-9) -> bool:
    """The controller's latest desired pose (rec.desired, 4 x 4 flattened) is T (to ``tolerance``)."""
    return bool(rec.desired.values) and bool(np.abs(np.reshape(rec.desired.values[-1], (4, 4)) - T).max()
                                             <= tolerance)


def model_order(model, joint_names):
    """Indices that put a joint-state row (``joint_names`` order) in the model's joint order."""
    from robot_dynamics_ros.nodes.conversions import index_map
    return index_map(joint_names, model.joint_names)


def start_at_rest(demo: PoseDemo, first_output, what, timeout):
    """The opening of a pose demo: wait up to ``timeout`` s for the joint states, the controller's
    ``first_output`` (a Series; ``what`` it is, for the error) and a subscriber to the targets; note the
    effort limits (the model's); let the first hold show for 0.5 s in the plot. Returns (the tool's pose
    then, None) or (None, what did not come)."""
    from robot_dynamics_ros import dynamics as rd

    graph, rec, target = demo.graph, demo.rec, demo.recorder.target
    rec.mode = graph.description
    if not graph.spin_until(lambda: rec.joint_states.values and first_output.values
                            and target.get_subscription_count() > 0, timeout):
        return None, (f'no joint states, {what} or {target.topic_name} subscriber within '
                      f'{timeout:g} s' + graph.exit_note())
    rec.effort_limit = joint_limits(demo.model, rec.joint_names)[3]
    spin_for(graph.executor, 0.5)
    q = np.asarray(rec.joint_states.values[-1])[model_order(demo.model, rec.joint_names)]
    return rd.frame_pose(demo.model, q, TOOL), None
