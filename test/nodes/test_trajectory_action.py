"""computed_torque_controller's ~/follow_joint_trajectory and ~/controller_state over real DDS,
against simulator_node, driven by a client that behaves as MoveIt's controller handle
(moveit_simple_controller_manager's FollowJointTrajectory handle: a goal with empty tolerances, then
it waits for the result and reads error_code and error_string).

Every error path answers: each error code, a path tolerance broken by a push, a goal tolerance
missed, cancel mid-motion (held, no jump, no swing), preemption by a second goal and by a topic
trajectory, disable, a simulator reset, stale states."""

import time

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Time
from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from robot_dynamics_ros.logic.stamps import stamp_ns
from robot_dynamics_ros.logic.trajectory_goal import ErrorCode
from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode

from _node_harness import UR5E_HOME, UR5E_JOINTS
from _trajectory_client import MoveItLikeClient, _duration, _trajectory

pytestmark = pytest.mark.ros

Q0 = np.array(UR5E_HOME)
TARGET = Q0 + np.array([0.3, -0.2, 0.25, 0.2, -0.3, 0.4])
GAINS = {'kp': [400.0], 'kd': [40.0]}


def _positions(msg):
    return np.array([msg.position[list(msg.name).index(j)] for j in UR5E_JOINTS])


def _velocities(msg):
    return np.array([msg.velocity[list(msg.name).index(j)] for j in UR5E_JOINTS])


@pytest.fixture
def loop(graph, ur5e_xml):
    """The simulator (real time, no friction) and the controller, settled at Q0; the client."""
    ros = graph
    ctrl = ros.add(ComputedTorqueController, {'robot_description': ur5e_xml, **GAINS,
                                              'state_timeout': 1.0})
    sim = ros.add(SimulatorNode, {'robot_description': ur5e_xml, 'initial_positions': list(Q0),
                                  'publish_rate': 250.0, 'friction': False})
    states = ros.collect(JointState, '/joint_states', qos=10000)
    assert ros.spin_until(lambda: len(states) > 50, 10.0), 'no closed loop'
    client = MoveItLikeClient(ros, ctrl.get_name())
    return ros, ctrl, sim, states, client


def test_goal_succeeds_with_feedback_and_controller_state(loop):
    ros, ctrl, _, states, client = loop
    controller_state = ros.collect(JointTrajectoryControllerState,
                                   f'/{ctrl.get_name()}/controller_state')
    start = time.monotonic()
    status, code, text = client.execute(_trajectory([(1.0, (Q0 + TARGET) / 2), (2.0, TARGET)]))
    assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, ErrorCode.SUCCESSFUL), text
    assert np.max(np.abs(_positions(states[-1]) - TARGET)) < 1e-3
    # Feedback at action_monitor_rate (20 Hz) while it executed (about 2 s).
    stamps = np.array([t for t, _ in client.feedback if t >= start])
    rate = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    print(f'\nfeedback: {len(stamps)} messages at {rate:.1f} Hz')
    assert 15.0 < rate < 25.0, rate
    last = client.feedback[-1][1]
    assert list(last.joint_names) == list(UR5E_JOINTS)
    assert len(last.desired.positions) == len(last.actual.positions) == len(last.error.positions) == 6
    np.testing.assert_allclose(np.array(last.error.positions),
                               np.array(last.desired.positions) - np.array(last.actual.positions),
                               atol=1e-12)
    if hasattr(last, 'index'):          # Kilted's feedback: the point under way
        assert [f.index for _, f in client.feedback][-1] in (0, 1)
    # ~/controller_state: reference, feedback, error, output for the controller's joints.
    n = len(controller_state)
    assert ros.spin_until(lambda: len(controller_state) > n + 10, 2.0)     # (after the end)
    msg = controller_state[-1]
    assert list(msg.joint_names) == list(UR5E_JOINTS)
    np.testing.assert_allclose(msg.reference.positions, TARGET, atol=1e-9)
    assert np.max(np.abs(np.array(msg.feedback.positions) - TARGET)) < 1e-3
    np.testing.assert_allclose(msg.error.positions,
                               np.array(msg.reference.positions) - np.array(msg.feedback.positions),
                               atol=1e-12)
    assert len(msg.output.effort) == 6 and np.all(np.isfinite(msg.output.effort))


def _at_rest_and_unmoved(ros, states, where, seconds=0.4):
    ros.spin(seconds)
    moved = np.max(np.abs(_positions(states[-1]) - where))
    assert moved < 1e-3, f'the arm moved {moved:.2e} rad after a refused goal'


@pytest.mark.parametrize('case', ['unknown_joint', 'repeated_joint', 'partial', 'beyond_limits',
                                  'not_increasing', 'sizes', 'nan', 'no_points', 'old_stamp'])
def test_invalid_goals_are_aborted_with_their_code_and_nothing_moves(loop, case):
    ros, ctrl, _, states, client = loop
    joints = list(UR5E_JOINTS)
    if case == 'unknown_joint':
        goal, expected = _trajectory([(1.0, TARGET)], joints[:5] + ['gripper_joint']), 'INVALID_JOINTS'
    elif case == 'repeated_joint':
        goal, expected = _trajectory([(1.0, TARGET)], joints[:5] + [joints[0]]), 'INVALID_JOINTS'
    elif case == 'partial':
        goal, expected = _trajectory([(1.0, TARGET[:3])], joints[:3]), 'INVALID_JOINTS'
    elif case == 'beyond_limits':       # the UR5e's elbow is limited to ±π
        goal, expected = _trajectory([(1.0, Q0 + [0, 0, 2.0, 0, 0, 0])]), 'INVALID_GOAL'
    elif case == 'not_increasing':
        goal, expected = _trajectory([(1.0, TARGET), (1.0, Q0)]), 'INVALID_GOAL'
    elif case == 'sizes':
        goal = _trajectory([(1.0, TARGET)])
        goal.points[0].velocities = [0.0, 0.0]
        expected = 'INVALID_GOAL'
    elif case == 'nan':
        goal, expected = _trajectory([(1.0, Q0 + [np.nan, 0, 0, 0, 0, 0])]), 'INVALID_GOAL'
    elif case == 'no_points':
        goal, expected = _trajectory([]), 'INVALID_GOAL'
    else:                               # stamped 10 s ago, 1 s long: over
        now = ctrl.get_clock().now().nanoseconds - 10_000_000_000
        goal = _trajectory([(1.0, TARGET)], stamp=Time(sec=now // 10**9, nanosec=now % 10**9))
        expected = 'OLD_HEADER_TIMESTAMP'
    where = _positions(states[-1])
    status, code, text = client.execute(goal, timeout=5.0)
    print(f'\n{case}: {expected}: {text}')
    assert status == GoalStatus.STATUS_ABORTED
    assert code == getattr(ErrorCode, expected), (code, text)
    assert text, 'no error_string'
    assert ros.logged(ctrl.get_name(), 'goal aborted'), 'the reason was not logged'
    _at_rest_and_unmoved(ros, states, where)


def test_partial_goal_with_allow_partial_joints_goal(loop):
    ros, ctrl, _, states, client = loop
    from rclpy.parameter import Parameter
    ctrl.set_parameters([Parameter('allow_partial_joints_goal', value=True)])
    status, code, text = client.execute(_trajectory([(1.0, TARGET[:2])], UR5E_JOINTS[:2]))
    assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, ErrorCode.SUCCESSFUL), text
    q = _positions(states[-1])
    np.testing.assert_allclose(q[:2], TARGET[:2], atol=1e-3)
    np.testing.assert_allclose(q[2:], Q0[2:], atol=1e-3)        # the others held


def _tolerances(position):
    return [JointTolerance(name=j, position=position) for j in UR5E_JOINTS]


@pytest.mark.parametrize('source', ['goal', 'parameters'])
def test_push_breaks_the_path_tolerance_and_the_arm_holds(loop, source):
    """The path tolerance from the goal, or (a goal with empty tolerances, as MoveIt sends) from the
    controller's constraints.<joint>.trajectory parameters."""
    ros, ctrl, sim, states, client = loop
    wrench = ros.publisher(WrenchStamped, f'/{sim.get_name()}/external_wrench')
    if source == 'goal':
        handle = client.send(_trajectory([(4.0, TARGET)]), path_tolerance=_tolerances(0.01))
    else:
        from rclpy.parameter import Parameter
        result = ctrl.set_parameters([Parameter(f'constraints.{joint}.trajectory', value=0.01)
                                      for joint in UR5E_JOINTS])
        assert all(r.successful for r in result)
        handle = client.send(_trajectory([(4.0, TARGET)]))
    ros.spin(1.0)
    push = WrenchStamped()
    push.wrench.force.x = 400.0         # N at the tool: more than kp = 400 holds within 0.01 rad
    wrench.publish(push)
    status, code, text = client.result(handle, timeout=5.0)
    wrench.publish(WrenchStamped())     # released
    print(f'\npush: {text}')
    assert (status, code) == (GoalStatus.STATUS_ABORTED, ErrorCode.PATH_TOLERANCE_VIOLATED), text
    assert 'path tolerance' in text and 'joint' in text
    # Held where the arm was when it broke: it settles, and does not go on to the target.
    ros.spin(1.5)
    q = _positions(states[-1])
    assert np.max(np.abs(_velocities(states[-1]))) < 0.05
    assert np.max(np.abs(q - TARGET)) > 0.1, 'the arm went on to the target'


def test_goal_tolerance_missed_within_goal_time(loop):
    ros, ctrl, sim, states, client = loop
    wrench = ros.publisher(WrenchStamped, f'/{sim.get_name()}/external_wrench')
    push = WrenchStamped()
    push.wrench.force.z = 50.0          # a steady load: a steady error of about a milliradian
    wrench.publish(push)
    ros.spin(0.5)
    status, code, text = client.execute(
        _trajectory([(0.5, TARGET)]), goal_tolerance=_tolerances(1e-6),
        goal_time_tolerance=_duration(0.3))
    wrench.publish(WrenchStamped())
    print(f'\ngoal tolerance: {text}')
    assert (status, code) == (GoalStatus.STATUS_ABORTED, ErrorCode.GOAL_TOLERANCE_VIOLATED), text


def test_cancel_mid_motion_stops_without_jump_or_swing(loop):
    ros, ctrl, _, states, client = loop
    far = Q0 + np.array([1.0, -0.6, 0.8, 0.6, -0.8, 1.2])
    handle = client.send(_trajectory([(3.0, far)]))
    ros.spin(1.3)                       # mid-way: moving at about its top speed
    n = len(states)
    cancel = handle.cancel_goal_async()
    assert ros.spin_until(cancel.done, 2.0)
    # The controller began its stop before it answered the cancel: every state stamped from here on
    # is under the stop (the arm may have sped up along the trajectory until the cancel arrived, more
    # so on a loaded machine, which is not a jump).
    stopping_ns = time.time_ns()
    status, code, text = client.result(handle, timeout=2.0)
    assert status == GoalStatus.STATUS_CANCELED and code == ErrorCode.SUCCESSFUL, text
    ros.spin(1.5)
    q = np.array([_positions(m) for m in states[n:]])
    qd = np.array([_velocities(m) for m in states[n:]])
    stamps = np.array([stamp_ns(m.header.stamp) for m in states[n:]])
    speed = np.max(np.abs(qd), axis=1)
    stopping = speed[stamps >= stopping_ns]
    print(f'\ncancel at {speed[0]:.2f} rad/s, {stopping[0]:.2f} rad/s once answered: stopped after '
          f'{np.argmax(speed < 0.01) / 250:.2f} s, final speed {speed[-1]:.1e}')
    # No jump: under the stop the speed only falls until the arm is at rest (a stop begun from the
    # desired state, with the tracking error made up, would rise first). At the stop's end its
    # deceleration (5 rad/s²) ends a command's latency late, so the arm turns back slightly:
    # 0.02 rad/s on a loaded machine (4 ms), bounded here by 10 ms of it.
    at_rest = np.argmax(stopping < 0.01)
    assert at_rest > 0 and np.all(np.diff(stopping[:at_rest + 1]) < 0.01), 'it sped up after the cancel'
    assert np.all(stopping[at_rest:] < 0.05), 'it turned back after the stop (a swing)'
    assert speed[-1] < 0.01, 'not at rest'
    # No swing: once stopped it stays where it stopped (no going back and forth).
    rest = np.argmax(speed < 0.01)
    assert np.max(np.abs(q[rest:] - q[-1])) < 5e-3
    # Stopped short of the target, along the way it was going.
    assert np.max(np.abs(q[-1] - far)) > 0.1


def test_preemption_by_a_second_goal_and_by_a_topic_trajectory(loop):
    ros, ctrl, _, states, client = loop
    first = client.send(_trajectory([(3.0, TARGET)]))
    ros.spin(0.5)
    second = client.send(_trajectory([(1.5, Q0 + 0.1)]))
    status, code, text = client.result(first, timeout=2.0)
    assert status == GoalStatus.STATUS_ABORTED and 'preempted' in text, text
    status, code, text = client.result(second, timeout=5.0)
    assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, ErrorCode.SUCCESSFUL), text
    third = client.send(_trajectory([(3.0, TARGET)]))
    ros.spin(0.5)
    topic = ros.publisher(JointTrajectory, f'/{ctrl.get_name()}/joint_trajectory')
    topic.publish(_trajectory([(1.0, Q0)]))
    status, code, text = client.result(third, timeout=2.0)
    assert status == GoalStatus.STATUS_ABORTED and 'joint_trajectory' in text, text
    ros.spin(1.5)
    assert np.max(np.abs(_positions(states[-1]) - Q0)) < 1e-3     # the topic's trajectory ran


@pytest.mark.parametrize('event', ['disable', 'reset', 'stale', 'hold'])
def test_events_end_the_goal_with_a_reason(loop, event):
    ros, ctrl, sim, states, client = loop
    handle = client.send(_trajectory([(2.0, TARGET)]))
    ros.spin(1.0)                       # (moved 0.1-0.2 rad: a reset is a jump)
    if event == 'disable':
        ros.call(SetBool, f'/{ctrl.get_name()}/enable', SetBool.Request(data=False))
        expected = 'disabled'
    elif event == 'reset':
        ros.call(Trigger, f'/{sim.get_name()}/reset', Trigger.Request())
        expected = 'holding the position of this state'
    elif event == 'stale':
        ros.call(SetBool, f'/{sim.get_name()}/pause', SetBool.Request(data=True))
        expected = 'state_timeout'
    else:
        ros.call(Trigger, f'/{ctrl.get_name()}/hold', Trigger.Request())
        expected = '~/hold'
    status, code, text = client.result(handle, timeout=3.0)
    print(f'\n{event}: {text}')
    assert status == GoalStatus.STATUS_ABORTED and expected in text, text
    if event == 'stale':
        ros.call(SetBool, f'/{sim.get_name()}/pause', SetBool.Request(data=False))
