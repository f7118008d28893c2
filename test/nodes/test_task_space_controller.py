"""task_space_controller over real DDS with simulator_node (lock-step, simulated time): a PoseStamped
target is reached; a far target moves the tool smoothly (no step in the torques, nothing saturated);
bad targets are refused and nothing moves; ~/enable and ~/hold; parameters validated."""

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, TwistStamped
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.spatial import exp_coordinates
from robot_dynamics_ros.nodes.conversions import pose_to_matrix
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode
from robot_dynamics_ros.nodes.task_space_controller import TaskSpaceController, task_gains

from _pose_targets import Q0, TOOL, pose_error, target_msg, tool_pose, wait_for_time

pytestmark = pytest.mark.ros

def _start(ros, xml, **parameters):
    controller = ros.add(TaskSpaceController, {'robot_description': xml, 'tip_link': TOOL,
                                               'use_sim_time': True, 'kp': [225.0], 'kd': [30.0],
                                               'max_linear_velocity': 0.2, 'max_angular_velocity': 1.0,
                                               **parameters})
    sim = ros.add(SimulatorNode, {'robot_description': xml, 'initial_positions': list(Q0),
                                  'publish_rate': 500.0, 'friction': False, 'publish_clock': True,
                                  'lockstep_timeout': 2.0})
    name = controller.get_name()
    commands = ros.collect(Float64MultiArray, '/effort_controller/commands', qos=1000)
    errors = ros.collect(TwistStamped, f'/{name}/pose_error', qos=1000)
    desired = ros.collect(PoseStamped, f'/{name}/desired_pose', qos=1000)
    assert ros.spin_until(lambda: len(errors) > 20, 30.0), 'no control output'
    return controller, sim, commands, errors, desired


def test_a_target_is_reached_along_a_smooth_profile(graph, ur5e_xml):
    ros = graph
    model = rd.load_urdf(ur5e_xml, tip_link=TOOL)
    controller, sim, commands, errors, desired = _start(ros, ur5e_xml)
    T0 = tool_pose(model, sim)
    assert max(pose_error(T0, rd.frame_pose(model, Q0, TOOL))) < 1e-3, 'it must hold the first pose'
    assert errors[-1].header.frame_id == TOOL and desired[-1].header.frame_id == model.root_link
    # 0.3 rad about a tilted axis and 25 cm: 15/8 * max(0.3 / 1.0, 0.25 / 0.2) = 2.34 s
    T_goal = T0 @ exp_coordinates(np.r_[0.3 * np.array([0.6, 0.0, 0.8]), 0.0, 0.0, 0.0])
    T_goal[:3, 3] += (0.15, -0.1, 0.17)
    pub = ros.publisher(PoseStamped, f'/{controller.get_name()}/target_pose')
    n = len(commands)
    pub.publish(target_msg(T_goal, 'base_link'))
    wait_for_time(ros, sim, 4.0)
    angle, distance = pose_error(tool_pose(model, sim), T_goal)
    assert distance < 1e-3 and angle < 1e-2, (distance, angle)
    np.testing.assert_allclose(pose_to_matrix(desired[-1].pose), T_goal, atol=1e-9)
    # smooth: no step in the torques (a pose error of 25 cm under kp = 225 would ask for 2 kN)
    tau = np.array([m.data for m in commands[n:]])
    assert len(tau) > 1000
    step = np.abs(np.diff(tau, axis=0)).max()
    assert step < 0.5, f'largest change between two commands {step:.3f} N m'
    assert not ros.warnings(controller.get_name(), 'saturated')
    # the desired pose moved monotonically towards the goal along the screw
    positions = np.array([[m.pose.position.x, m.pose.position.y, m.pose.position.z] for m in desired])
    to_goal = np.linalg.norm(positions - T_goal[:3, 3], axis=1)
    assert (np.diff(to_goal) <= 1e-9).all()
    print(f'\nreached to {distance * 1e3:.3f} mm, {angle:.2e} rad; largest torque step {step:.3f} N m')


def test_bad_targets_are_refused_and_nothing_moves(graph, ur5e_xml):
    ros = graph
    model = rd.load_urdf(ur5e_xml, tip_link=TOOL)
    controller, sim, commands, errors, desired = _start(ros, ur5e_xml)
    name = controller.get_name()
    T0 = tool_pose(model, sim)
    pub = ros.publisher(PoseStamped, f'/{name}/target_pose')
    far = T0.copy()
    far[:3, 3] += 0.2
    nan = target_msg(far)
    nan.pose.position.y = float('nan')
    zero = target_msg(far)
    o = zero.pose.orientation
    o.x = o.y = o.z = o.w = 0.0
    for msg in (target_msg(far, 'world'), nan, zero):
        pub.publish(msg)
    wait_for_time(ros, sim, 1.0)
    out_of_reach = target_msg(far)
    out_of_reach.pose.position.z = 5.0
    pub.publish(out_of_reach)
    wait_for_time(ros, sim, 0.2)
    for kind in ('frame_id', 'NaN', 'quaternion', 'beyond the reach'):
        assert ros.logged(name, kind), kind
    angle, distance = pose_error(tool_pose(model, sim), T0)
    assert distance < 1e-4 and angle < 1e-4
    # a non-unit quaternion is normalised
    scaled = target_msg(T0 @ exp_coordinates([0.0, 0.0, 0.1, 0.02, 0.0, 0.0]))
    o = scaled.pose.orientation
    o.x, o.y, o.z, o.w = 3 * o.x, 3 * o.y, 3 * o.z, 3 * o.w
    pub.publish(scaled)
    wait_for_time(ros, sim, 1.5)
    angle, distance = pose_error(tool_pose(model, sim), pose_to_matrix(scaled.pose))
    assert distance < 1e-3 and angle < 1e-2
    assert all(np.isfinite(m.data).all() for m in commands)


def test_enable_hold_and_parameters(graph, ur5e_xml):
    ros = graph
    model = rd.load_urdf(ur5e_xml, tip_link=TOOL)
    controller, sim, commands, errors, desired = _start(ros, ur5e_xml)
    name = controller.get_name()
    pub = ros.publisher(PoseStamped, f'/{name}/target_pose')
    T0 = tool_pose(model, sim)
    # hold mid-way: the tool stops where it was when asked (it moves no further than its braking)
    T_goal = T0.copy()
    T_goal[:3, 3] += (0.12, -0.08, 0.1)         # (0.2 m straight up stretches the elbow straight)
    pub.publish(target_msg(T_goal))
    wait_for_time(ros, sim, 0.6)
    assert ros.call(Trigger, f'/{name}/hold', Trigger.Request()).success
    T_hold = tool_pose(model, sim)
    wait_for_time(ros, sim, 1.5)
    T_end = tool_pose(model, sim)
    assert np.linalg.norm(T_end[:3, 3] - T_hold[:3, 3]) < 0.02
    assert np.linalg.norm(T_end[:3, 3] - T_goal[:3, 3]) > 0.05, 'the hold must stop the motion'
    # disabled: g(q) every state, targets refused, the arm floats where it is
    assert ros.call(SetBool, f'/{name}/enable', SetBool.Request(data=False)).success
    pub.publish(target_msg(T_goal))
    wait_for_time(ros, sim, 0.5)
    assert ros.logged(name, 'disabled')
    q = np.array(sim.q)
    np.testing.assert_allclose(commands[-1].data, rd.gravity_torques(model, q), atol=0.05)
    # enabled again: holds the pose it is in; a target then goes
    assert ros.call(SetBool, f'/{name}/enable', SetBool.Request(data=True)).success
    T_here = tool_pose(model, sim)
    wait_for_time(ros, sim, 0.5)
    assert np.linalg.norm(tool_pose(model, sim)[:3, 3] - T_here[:3, 3]) < 1e-3
    # parameters: validated, applied
    client = ros.probe.create_client(SetParameters, f'/{name}/set_parameters')
    assert ros.spin_until(client.service_is_ready, 10.0)
    for parameter, good in ((Parameter('kp', value=[1.0, 2.0, 3.0]), False),
                            (Parameter('kd', value=[-1.0]), False),
                            (Parameter('max_linear_velocity', value=0.0), False),
                            (Parameter('damping', value=-1.0), False),
                            (Parameter('nullspace_posture', value=[0.1, 0.2]), False),
                            (Parameter('kp', value=[100.0, 400.0]), True)):
        future = client.call_async(SetParameters.Request(parameters=[parameter.to_parameter_msg()]))
        assert ros.spin_until(future.done, 5.0)
        assert future.result().results[0].successful is good, parameter.name
    np.testing.assert_array_equal(task_gains('kp', [100.0, 400.0]), [100.0] * 3 + [400.0] * 3)
    pub.publish(target_msg(T_goal))
    wait_for_time(ros, sim, 3.0)
    angle, distance = pose_error(tool_pose(model, sim), T_goal)
    assert distance < 1e-3 and angle < 1e-2, (distance, angle)


def test_stale_states_give_the_gravity_hold_and_resumed_ones_hold_the_new_pose(graph, ur5e_xml, ur5e_model):
    """No simulator: the probe publishes the joint states. Stopped for longer than state_timeout: g(q)
    of the last state and a warning; resumed elsewhere: the pose there is held (its pose error 0)."""
    from builtin_interfaces.msg import Time
    from sensor_msgs.msg import JointState

    from _node_harness import UR5E_JOINTS
    ros = graph
    node = ros.add(TaskSpaceController, {'robot_description': ur5e_xml, 'tip_link': TOOL,
                                         'state_timeout': 0.2})
    name = node.get_name()
    commands = ros.collect(Float64MultiArray, '/effort_controller/commands', qos=1000)
    errors = ros.collect(TwistStamped, f'/{name}/pose_error', qos=1000)
    states = ros.publisher(JointState, '/joint_states')

    def send(q, k):
        msg = JointState(name=list(UR5E_JOINTS), position=[float(x) for x in q], velocity=[0.0] * 6)
        msg.header.stamp = Time(sec=k)
        states.publish(msg)

    for k in range(20):
        send(Q0, k)
        ros.spin(0.01)
    assert ros.spin_until(lambda: errors, 10.0), 'no control output'
    ros.spin(0.6)                       # no states: stale
    assert ros.logged(name, 'state_timeout')
    np.testing.assert_allclose(commands[-1].data, rd.gravity_torques(ur5e_model, Q0), atol=1e-9)
    q1 = Q0 + 0.01                      # resumed a little elsewhere (within max_state_jump)
    errors.clear()
    for k in range(20, 40):
        send(q1, k)
        ros.spin(0.01)
    assert ros.spin_until(lambda: len(errors) > 5, 10.0)
    for m in errors[-5:]:
        t = m.twist
        assert max(abs(x) for x in (t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y,
                                    t.angular.z)) < 1e-12
    np.testing.assert_allclose(commands[-1].data, rd.gravity_torques(ur5e_model, q1), atol=1e-9)
