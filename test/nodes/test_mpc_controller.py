"""mpc_controller over real DDS with simulator_node (lock-step, simulated time): a PoseStamped target
10 cm away is reached within 5 mm and 0.02 rad, within the torque limits, with the predicted path
published; bad targets are refused and nothing moves; ~/enable and ~/hold; stale states give the gravity
hold; parameters validated at run time."""

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Path
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.nodes.conversions import pose_to_matrix
from robot_dynamics_ros.nodes.mpc_controller import MpcController
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode

from _pose_targets import Q0, TOOL, pose_error, target_msg, tool_pose, wait_for_time

pytestmark = pytest.mark.ros

def _start(ros, xml, **parameters):
    controller = ros.add(MpcController, {'robot_description': xml, 'tip_link': TOOL, 'use_sim_time': True,
                                         **parameters})
    sim = ros.add(SimulatorNode, {'robot_description': xml, 'initial_positions': list(Q0),
                                  'publish_rate': 500.0, 'friction': False, 'publish_clock': True,
                                  'lockstep_timeout': 2.0})
    commands = ros.collect(Float64MultiArray, '/effort_controller/commands', qos=1000)
    assert ros.spin_until(lambda: len(commands) > 20, 60.0), 'no control output'
    return controller, sim, commands


def wait_for_replans(ros, controller, sim, seconds, rate=100.0):
    """Wait for `seconds` of simulated time and for the re-plans the node makes in them at `rate` (Hz):
    the simulation runs in lock-step with the commands, faster than real time, while the re-plans take
    wall time; on a loaded machine fewer of them (fewer FDDP iterations) fall in the same simulated time.
    What the tests assert is what the controller reaches with its re-plans, not how fast the machine is."""
    count = controller.replan_count + int(seconds * rate)
    wait_for_time(ros, sim, seconds)
    for _ in range(int(10 * seconds * 10)):            # (at most ten times the simulated time)
        if controller.replan_count >= count:
            break
        wait_for_time(ros, sim, 0.1)
    assert controller.replan_count >= count, ('the re-plans stalled', controller.replan_count, count)


def test_a_target_10_cm_away_is_reached(graph, ur5e_xml):
    ros = graph
    model = rd.load_urdf(ur5e_xml, tip_link=TOOL)
    controller, sim, commands = _start(ros, ur5e_xml)
    name = controller.get_name()
    paths = ros.collect(Path, f'/{name}/predicted_path', qos=100)
    T0 = tool_pose(model, sim)
    assert max(pose_error(T0, rd.frame_pose(model, Q0, TOOL))) < 2e-3, 'it must hold the first pose'
    T_goal = T0.copy()
    T_goal[:3, 3] += (0.06, -0.05, 0.06)                    # 10 cm
    pub = ros.publisher(PoseStamped, f'/{name}/target_pose')
    n = len(commands)
    pub.publish(target_msg(T_goal, 'base_link'))
    wait_for_replans(ros, controller, sim, 3.0)
    angle, distance = pose_error(tool_pose(model, sim), T_goal)
    assert distance < 0.005 and angle < 0.02, (distance, angle)
    tau = np.array([m.data for m in commands[n:]])
    assert len(tau) > 1000 and np.isfinite(tau).all()
    assert (np.abs(tau) <= np.asarray(model.effort_limit) + 1e-9).all()
    assert np.abs(np.array(sim.qd)).max() < 0.05                # at rest
    # the predicted path: the tool along the plan, in the root frame, ending near the goal
    assert paths and paths[-1].header.frame_id == model.root_link
    assert len(paths[-1].poses) == 51
    end = pose_to_matrix(paths[-1].poses[-1].pose)
    assert np.linalg.norm(end[:3, 3] - T_goal[:3, 3]) < 0.01
    print(f'\nreached to {distance * 1e3:.2f} mm, {angle:.2e} rad')


def test_bad_targets_are_refused_and_nothing_moves(graph, ur5e_xml):
    ros = graph
    model = rd.load_urdf(ur5e_xml, tip_link=TOOL)
    controller, sim, commands = _start(ros, ur5e_xml)
    name = controller.get_name()
    T0 = tool_pose(model, sim)
    pub = ros.publisher(PoseStamped, f'/{name}/target_pose')
    far = T0.copy()
    far[:3, 3] += 0.1
    nan = target_msg(far)
    nan.pose.position.y = float('nan')
    zero = target_msg(far)
    o = zero.pose.orientation
    o.x = o.y = o.z = o.w = 0.0
    out_of_reach = target_msg(far)
    out_of_reach.pose.position.z = 5.0
    for msg in (target_msg(far, 'world'), nan, zero, out_of_reach):
        pub.publish(msg)
    wait_for_time(ros, sim, 1.0)
    for kind in ('frame_id', 'NaN', 'quaternion', 'beyond the reach'):
        assert ros.logged(name, kind), kind
    angle, distance = pose_error(tool_pose(model, sim), T0)
    assert distance < 2e-3 and angle < 1e-2, (distance, angle)


def test_enable_hold_stale_and_parameters(graph, ur5e_xml):
    ros = graph
    model = rd.load_urdf(ur5e_xml, tip_link=TOOL)
    controller, sim, commands = _start(ros, ur5e_xml)
    name = controller.get_name()
    pub = ros.publisher(PoseStamped, f'/{name}/target_pose')
    T0 = tool_pose(model, sim)
    T_goal = T0.copy()
    T_goal[:3, 3] += (0.1, 0.0, 0.0)
    pub.publish(target_msg(T_goal))
    wait_for_time(ros, sim, 0.5)
    assert ros.call(Trigger, f'/{name}/hold', Trigger.Request()).success
    T_hold = tool_pose(model, sim)
    wait_for_time(ros, sim, 1.5)
    T_end = tool_pose(model, sim)
    assert np.linalg.norm(T_end[:3, 3] - T_hold[:3, 3]) < 0.01
    assert np.linalg.norm(T_end[:3, 3] - T_goal[:3, 3]) > 0.03, 'the hold must stop the motion'
    # disabled: g(q), targets refused
    assert ros.call(SetBool, f'/{name}/enable', SetBool.Request(data=False)).success
    pub.publish(target_msg(T_goal))
    wait_for_time(ros, sim, 0.3)
    assert ros.logged(name, 'disabled')
    np.testing.assert_allclose(commands[-1].data, rd.gravity_torques(model, np.array(sim.q)), atol=0.05)
    # enabled again: holds where it is
    assert ros.call(SetBool, f'/{name}/enable', SetBool.Request(data=True)).success
    T_here = tool_pose(model, sim)
    wait_for_time(ros, sim, 0.5)
    assert np.linalg.norm(tool_pose(model, sim)[:3, 3] - T_here[:3, 3]) < 2e-3
    # parameters: validated at run time, applied
    client = ros.probe.create_client(SetParameters, f'/{name}/set_parameters')
    assert ros.spin_until(client.service_is_ready, 10.0)
    for parameter, good in ((Parameter('horizon', value=1), False),
                            (Parameter('dt', value=0.0), False),
                            (Parameter('goal_weight', value=-1.0), False),
                            (Parameter('replan_rate', value=0.0), False),
                            (Parameter('max_iterations', value=0), False),
                            (Parameter('max_linear_velocity', value=0.0), False),
                            (Parameter('horizon', value=40), True),
                            (Parameter('replan_rate', value=50.0), True)):
        future = client.call_async(SetParameters.Request(parameters=[parameter.to_parameter_msg()]))
        assert ros.spin_until(future.done, 5.0)
        assert future.result().results[0].successful is good, parameter.name
    pub.publish(target_msg(T_goal))
    wait_for_replans(ros, controller, sim, 3.0, rate=50.0)
    angle, distance = pose_error(tool_pose(model, sim), T_goal)
    assert distance < 0.005 and angle < 0.02, (distance, angle)


def test_stale_states_give_the_gravity_hold(graph, ur5e_xml, ur5e_model):
    """No simulator: the probe publishes the joint states; stopped for longer than state_timeout: g(q)
    of the last state and a warning."""
    from builtin_interfaces.msg import Time
    from sensor_msgs.msg import JointState

    from _node_harness import UR5E_JOINTS
    ros = graph
    node = ros.add(MpcController, {'robot_description': ur5e_xml, 'tip_link': TOOL, 'state_timeout': 0.2})
    name = node.get_name()
    commands = ros.collect(Float64MultiArray, '/effort_controller/commands', qos=1000)
    states = ros.publisher(JointState, '/joint_states')
    for k in range(20):
        msg = JointState(name=list(UR5E_JOINTS), position=[float(x) for x in Q0], velocity=[0.0] * 6)
        msg.header.stamp = Time(sec=k)
        states.publish(msg)
        ros.spin(0.01)
    assert ros.spin_until(lambda: commands, 30.0), 'no control output'
    ros.spin(0.6)
    assert ros.logged(name, 'state_timeout')
    np.testing.assert_allclose(commands[-1].data, rd.gravity_torques(ur5e_model, Q0), atol=1e-9)
