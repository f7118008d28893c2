"""rclpy's floor for the node round trips: a node that does nothing but republish each /joint_states
message on /echo/joint_states, run by the nodes' own main() (common.run_node: the same executor and
spin loop). The benchmark measures it like the real nodes (`_ros.measure_round_trip(kind="echo")`)."""
from rclpy.node import Node
from sensor_msgs.msg import JointState

from robot_dynamics_ros.nodes.common import run_node


class EchoNode(Node):
    def __init__(self):
        super().__init__("echo")
        publisher = self.create_publisher(JointState, "/echo/joint_states", 10)
        self.create_subscription(JointState, "/joint_states", publisher.publish, 10)


if __name__ == "__main__":
    run_node(EchoNode)
