"""state_publisher: the robot's links on /tf and /tf_static from its joint states, as robot_state_publisher
publishes them, for installations without it (robot_state_publisher is not on PyPI). RViz (``Fixed
Frame`` the root link, a RobotModel and a TF display: ``config/robot_dynamics.rviz``), tf2 listeners and
MoveIt then find every link, the tool frame included.

- model: ``robot_description`` (parameter or the transient-local topic) or ``urdf_path`` (+
  ``xacro_args``), as every node of the package (nodes/description_source.py); the whole URDF tree
  (dynamics.kinematic_tree: every link, fixed joints kept). A new description on the topic replaces
  the tree and re-sends /tf_static.
- out ``/tf_static`` (tf2_msgs/TFMessage; reliable, transient local, depth 1, as tf2's static
  broadcaster): the fixed joints, parent link -> child link, once per description.
- in ``joint_states`` (sensor_msgs/JointState) -> out ``/tf`` (tf2_msgs/TFMessage): per message, the
  moving joints' transforms (revolute, continuous, prismatic, and the mimic joints of those), each
  parent link -> child link, stamped with the message's stamp; joints missing from a message keep
  their last value (a joint never given one is not sent); joints matched by name, names the URDF lacks
  ignored. Rate-limited by ``publish_frequency`` on the messages' stamps (logic/state_publishing.py:
  robot_state_publisher's rule); ``ignore_timestamp`` sends every message. A message with fields of
  different lengths, duplicate names or a non-finite position is dropped with a throttled warning
  (nothing NaN is ever sent).
- out ``robot_description`` (std_msgs/String, transient local) when ``publish_robot_description`` is
  true and the description came from the parameter or a file, as robot_state_publisher republishes it
  (off by default: in this package's launch files the simulator publishes it).

Parameters: the description parameters, ``publish_frequency`` (Hz, default 20.0 as
robot_state_publisher's; 0 = every message; read-only), ``ignore_timestamp`` (bool, false; read-only),
``frame_prefix`` (string prepended to every frame id, e.g. ``robot1/``; read-only),
``publish_robot_description`` (bool, false; read-only).
"""

import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from robot_dynamics_ros.dynamics.kinematic_tree import KinematicTree
from robot_dynamics_ros.logic.input_guard import bounded, short_list
from robot_dynamics_ros.logic.stamps import stamp_ns
from robot_dynamics_ros.logic.state_publishing import StatePublishing
from robot_dynamics_ros.nodes.common import LATCHED_QOS, WarningThrottle, describe, run_node
from robot_dynamics_ros.nodes.conversions import quaternion_xyzw
from robot_dynamics_ros.nodes.description_source import ROBOT_DESCRIPTION_QOS, DescriptionSource

__all__ = ['StatePublisher', 'main', 'TF_QOS', 'TF_STATIC_QOS', 'transform_message']

# tf2_ros.StaticTransformBroadcaster's: late subscribers get the static transforms
TF_STATIC_QOS = LATCHED_QOS
# tf2_ros.TransformBroadcaster's
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


def transform_message(parent, child, T, stamp, prefix=''):
    """geometry_msgs/TransformStamped of T (4, 4), the child frame's pose in the parent frame."""
    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = prefix + parent
    msg.child_frame_id = prefix + child
    t, r = msg.transform.translation, msg.transform.rotation
    t.x, t.y, t.z = T[0, 3], T[1, 3], T[2, 3]
    r.x, r.y, r.z, r.w = quaternion_xyzw(T)
    return msg


class StatePublisher(Node):
    """robot_state_publisher's behaviour (module docstring)."""

    def __init__(self, node_name='state_publisher', **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = WarningThrottle(self.get_logger())
        self.declare_parameter('publish_frequency', 20.0, describe(
            'Most /tf messages per second of joint-state time (the messages\' stamps); 0 = one per '
            'joint_states message.', read_only=True, min_value=0.0, max_value=1e6))
        self.declare_parameter('ignore_timestamp', False, describe(
            'Send every joint_states message, whatever its stamp (no rate limit, no check that time '
            'goes forward).', read_only=True))
        self.declare_parameter('frame_prefix', '', describe(
            "Prefix of every frame id sent (e.g. 'robot1/'); '' = the URDF's link names.", read_only=True))
        self.declare_parameter('publish_robot_description', False, describe(
            'Republish a description given as parameter or file on robot_description (transient local), '
            'as robot_state_publisher does.', read_only=True))
        self._prefix = self.get_parameter('frame_prefix').value
        self.publishing = None              # StatePublishing of the current tree
        self._text = None                   # its description
        self._description_pub = None
        self._static_pub = self.create_publisher(TFMessage, '/tf_static', TF_STATIC_QOS)
        self._tf_pub = self.create_publisher(TFMessage, '/tf', TF_QOS)
        self.create_subscription(JointState, 'joint_states', self._on_joint_state, 10)
        self._source = DescriptionSource(
            self, self._on_description, self._throttle,
            kept=lambda: 'keeping the current tree' if self.publishing is not None else 'no robot tree')
        self._source.start()

    def _on_description(self, text, origin):
        if self.publishing is not None and text == self._text:
            return                          # the same robot: nothing to do
        try:
            tree = KinematicTree.from_urdf(text)
        except ValueError as exc:
            keeps = 'keeping the current tree' if self.publishing is not None else 'nothing is sent'
            self.get_logger().error(bounded(f'robot description from the {origin} not used: {exc}; {keeps}'))
            return
        self.publishing = StatePublishing(tree, float(self.get_parameter('publish_frequency').value),
                                          bool(self.get_parameter('ignore_timestamp').value))
        self._text = text
        if tree.unsupported_joints:
            self.get_logger().warning(bounded(f'joints {short_list(tree.unsupported_joints)} are floating '
                                              'or planar: not sent (no scalar position)'))
        stamp = self.get_clock().now().to_msg()
        self._static_pub.publish(TFMessage(transforms=[
            transform_message(parent, child, T, stamp, self._prefix)
            for parent, child, T in self.publishing.fixed_transforms()]))
        if origin != 'topic' and self.get_parameter('publish_robot_description').value:
            if self._description_pub is None:
                self._description_pub = self.create_publisher(String, 'robot_description',
                                                              ROBOT_DESCRIPTION_QOS)
            self._description_pub.publish(String(data=text))
        mimic = f', mimic {list(tree.mimic_joints)}' if tree.mimic_joints else ''
        self.get_logger().info(bounded(
            f'robot tree from the {origin}: root {tree.root_link!r}, {len(tree.links)} links, moving joints '
            f'{list(tree.moving_joints)}{mimic}'))

    def _on_joint_state(self, msg):
        if self.publishing is None:
            return
        names, positions = msg.name, msg.position
        if len(positions) != len(names):
            self._throttle.warn('joint_states/lengths', f'joint_states dropped: {len(names)} names but '
                                f'{len(positions)} positions')
            return
        if len(set(names)) != len(names):
            self._throttle.warn('joint_states/duplicate', 'joint_states dropped: a joint named twice')
            return
        values = np.asarray(positions, dtype=float)
        if not np.isfinite(values).all():
            bad = [name for name, q in zip(names, values) if not np.isfinite(q)]
            self._throttle.warn('joint_states/nonfinite', f'joint_states dropped: non-finite positions of '
                                f'{short_list(bad)}')
            return
        stamp = msg.header.stamp
        transforms = self.publishing.update(names, values.tolist(), stamp_ns(stamp))
        if transforms:
            self._tf_pub.publish(TFMessage(transforms=[
                transform_message(parent, child, T, stamp, self._prefix) for parent, child, T in transforms]))


def main(args=None):
    run_node(StatePublisher, args)


if __name__ == '__main__':
    main()
