"""What the node tests of the pose controllers (task_space_controller, mpc_controller) share: the UR5e
start posture, the tool frame, a target message, the tool's pose and its error, waiting for simulated
time."""

import numpy as np
from geometry_msgs.msg import PoseStamped

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.spatial import inverse_transform, log_transform
from robot_dynamics_ros.nodes.conversions import set_pose

from _node_harness import UR5E_HOME

Q0 = np.array(UR5E_HOME) + np.array([0.2, 0.3, -0.4, 0.3, 0.2, 0.1])
TOOL = 'tool0'


def tool_pose(model, sim):
    """The tool's pose (4 x 4, base frame) at the simulator's state."""
    return rd.frame_pose(model, np.array(sim.q), TOOL)


def target_msg(T, frame_id=''):
    msg = PoseStamped()
    msg.header.frame_id = frame_id
    set_pose(msg.pose, T)
    return msg


def pose_error(T, T_des):
    """(angle rad, distance m) from pose T to T_des."""
    X = log_transform(inverse_transform(T) @ T_des)
    return np.linalg.norm(X[:3]), np.linalg.norm(T_des[:3, 3] - T[:3, 3])


def wait_for_time(ros, sim, seconds, timeout=120.0):
    """Spin until `seconds` of the simulator's time have passed (timeout: wall s, a stalled simulation)."""
    start = sim.get_clock().now().nanoseconds
    assert ros.spin_until(lambda: (sim.get_clock().now().nanoseconds - start) * 1e-9 >= seconds, timeout), \
        'the simulation stalled'
