"""computed_torque_controller over real DDS, open loop (the test plays the robot): commands equal
the core's computed_torque, run-time gains, references on ~/joint_trajectory, references beyond
the URDF limits, enable/hold and the disabled modes, stale states, jumps in the states, bad input
(parameters that would break its timer, floods of future references, huge trajectories, states that
update nothing or are physically impossible)."""

import contextlib
import math
import time

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from rcl_interfaces.msg import Parameter as ParameterMsg, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.limits import saturate_effort
from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
from robot_dynamics_ros.nodes.conversions import make_joint_state

from _node_harness import UR5E_HOME, UR5E_JOINTS

pytestmark = pytest.mark.ros

Q0 = np.array(UR5E_HOME)


class Loop:
    """The controller plus the probe's ends of its topics."""

    def __init__(self, ros, parameters):
        self.ros = ros
        # The test publishes single states, not a stream: no staleness unless a test asks.
        self.node = ros.add(ComputedTorqueController, {'state_timeout': 0.0, **parameters})
        self.name = self.node.get_name()
        self.commands = ros.collect(Float64MultiArray, '/effort_controller/commands')
        self.errors = ros.collect(JointState, f'/{self.name}/tracking_error')
        self.states = ros.publisher(JointState, '/joint_states')
        self.reference = ros.publisher(JointTrajectory, f'/{self.name}/joint_trajectory')

    def send(self, q, qd=None, names=UR5E_JOINTS, stamp=None, error=True):
        """Publish a joint state; return the command it produced (None if none came) once its
        tracking error has arrived too (``error``: one is expected)."""
        n, m = len(self.commands), len(self.errors)
        self.states.publish(make_joint_state(names, stamp=stamp, position=q, velocity=qd))
        if not self.ros.spin_until(lambda: len(self.commands) > n, 2.0):
            return None
        if error:
            self.ros.spin_until(lambda: len(self.errors) > m, 1.0)
        return np.array(self.commands[-1].data)

    def quiet(self, seconds=0.3):
        """True when no command arrives for ``seconds``."""
        n = len(self.commands)
        self.ros.spin(seconds)
        return len(self.commands) == n


def expected(model, q, qd, q_d, qd_d, qdd_d, kp, kd):
    tau = rd.computed_torque(model, q, qd, q_d, qd_d, qdd_d, kp, kd)
    return saturate_effort(model, tau)[0]


def test_holds_first_position_and_commands_equal_the_core(graph, ur5e_xml, ur5e_model):
    loop = Loop(graph, {'robot_description': ur5e_xml, 'kp': [100.0], 'kd': [20.0]})
    z = np.zeros(6)
    tau = loop.send(Q0, z)
    assert tau is not None
    np.testing.assert_allclose(tau, expected(ur5e_model, Q0, z, Q0, z, z, 100.0, 20.0), atol=1e-9)
    # Away from the held position: PD on the error, through M(q), plus c + g.
    q = Q0 + np.array([0.01, -0.02, 0.015, 0.0, 0.01, -0.01])
    qd = np.array([0.1, -0.1, 0.05, 0.0, 0.0, 0.2])
    tau = loop.send(q, qd)
    np.testing.assert_allclose(tau, expected(ur5e_model, q, qd, Q0, z, z, 100.0, 20.0), atol=1e-9)
    err = loop.errors[-1]
    assert tuple(err.name) == UR5E_JOINTS
    np.testing.assert_allclose(err.position, Q0 - q, atol=1e-12)
    np.testing.assert_allclose(err.velocity, -qd, atol=1e-12)
    assert all(math.isfinite(v) for m in loop.commands for v in m.data)


def test_gains_set_at_run_time_are_validated(graph, ur5e_xml, ur5e_model):
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    z = np.zeros(6)
    loop.send(Q0, z)
    q = Q0 + 0.01
    kp = [50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    ok = loop.node.set_parameters([Parameter('kp', value=kp), Parameter('kd', value=[5.0])])
    assert all(r.successful for r in ok)
    np.testing.assert_allclose(loop.send(q, z), expected(ur5e_model, q, z, Q0, z, z,
                                                         np.array(kp), 5.0), atol=1e-9)
    for name, value, reason in (('kp', [-1.0], '>= 0'), ('kp', [1.0, 2.0], '1 or 6'),
                                ('kd', [math.nan], 'finite'), ('kp', [], 'empty'),
                                ('control_rate', -5.0, 'out of range')):
        result = loop.node.set_parameters([Parameter(name, value=value)])[0]
        assert not result.successful and reason in result.reason, (name, value, result.reason)
    # Through the node's /set_parameters service, as `ros2 param set` does: rejected and accepted.

    def remote(values):
        request = SetParameters.Request(parameters=[ParameterMsg(name='kp', value=ParameterValue(
            type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=values))])
        return ros.call(SetParameters, f'/{loop.name}/set_parameters', request).results[0]
    assert not remote([1.0, 2.0, 3.0]).successful
    assert remote([30.0]).successful
    assert list(loop.node.get_parameter('kp').value) == [30.0]
    np.testing.assert_allclose(loop.send(q, z), expected(ur5e_model, q, z, Q0, z, z, 30.0, 5.0),
                               atol=1e-9)


def _point(t, q, v=None, a=None):
    return JointTrajectoryPoint(
        positions=[float(x) for x in q], velocities=[] if v is None else [float(x) for x in v],
        accelerations=[] if a is None else [float(x) for x in a],
        time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9))))


def test_reference_is_followed_and_bad_references_are_rejected(graph, ur5e_xml, ur5e_model):
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    z = np.zeros(6)
    loop.send(Q0, z)
    # A reference naming a joint the controller does not control: rejected, still holding.
    bad = JointTrajectory(joint_names=['elbow_joint', 'gripper_joint'],
                          points=[_point(1.0, [0.0, 0.0])])
    loop.reference.publish(bad)
    assert ros.spin_until(lambda: ros.warnings(loop.name, 'does not control'))
    tau = loop.send(Q0, z)
    np.testing.assert_allclose(tau, expected(ur5e_model, Q0, z, Q0, z, z, 100.0, 20.0), atol=1e-9)
    # A one-joint reference, reached in 0.4 s; the other joints keep holding.
    target = Q0[2] + 0.2
    loop.reference.publish(JointTrajectory(joint_names=['elbow_joint'],
                                           points=[_point(0.4, [target])]))
    ros.spin(0.1)
    mid = loop.send(Q0, z)
    assert mid is not None
    e_mid = np.array(loop.errors[-1].position)
    assert 0.0 < e_mid[2] < 0.2 and np.all(e_mid[[0, 1, 3, 4, 5]] == 0.0), e_mid
    ros.spin(0.4)
    loop.send(Q0, z)
    e_end = np.array(loop.errors[-1].position)
    np.testing.assert_allclose(e_end, [0, 0, 0.2, 0, 0, 0], atol=1e-12)
    # Hold: the trajectory is discarded, the current position is held.
    q_now = Q0 + 0.05
    loop.send(q_now, z)
    result = ros.call(Trigger, f'/{loop.name}/hold', Trigger.Request())
    assert result.success, result.message
    loop.send(q_now, z)
    np.testing.assert_allclose(loop.errors[-1].position, 0.0, atol=1e-12)


def test_enable_disable_zero_effort(graph, ur5e_xml, ur5e_model):
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml, 'disabled_mode': 'zero_effort'})
    z = np.zeros(6)
    assert loop.send(Q0, z) is not None
    n = len(loop.commands)
    result = ros.call(SetBool, f'/{loop.name}/enable', SetBool.Request(data=False))
    assert result.success and 'zero_effort' in result.message
    assert ros.spin_until(lambda: len(loop.commands) > n)
    assert list(loop.commands[-1].data) == [0.0] * 6, 'disabling publishes one zero command'
    loop.states.publish(make_joint_state(UR5E_JOINTS, position=Q0, velocity=z))
    assert loop.quiet(), 'disabled controller published'
    # Hold is refused while disabled; a reference is rejected.
    assert not ros.call(Trigger, f'/{loop.name}/hold', Trigger.Request()).success
    # Re-enabled: holds the position of the next joint state.
    q1 = Q0 + 0.1
    assert ros.call(SetBool, f'/{loop.name}/enable', SetBool.Request(data=True)).success
    tau = loop.send(q1, z)
    np.testing.assert_allclose(tau, expected(ur5e_model, q1, z, q1, z, z, 100.0, 20.0), atol=1e-9)


def test_disabled_in_gravity_compensation_publishes_g_for_every_state(graph, ur5e_xml, ur5e_model):
    """The default disabled_mode: disabling publishes g(q) at once, then g(q) (+ the URDF
    friction torques of q̇ with friction_compensation) for every state, no tracking error; the
    mode can be switched while disabled."""
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    z = np.zeros(6)
    assert loop.node.get_parameter('disabled_mode').value == 'gravity_compensation'
    q = Q0 + 0.03
    assert loop.send(q, z) is not None
    n, m = len(loop.commands), len(loop.errors)
    result = ros.call(SetBool, f'/{loop.name}/enable', SetBool.Request(data=False))
    assert result.success and 'gravity_compensation' in result.message
    assert ros.spin_until(lambda: len(loop.commands) > n)
    np.testing.assert_allclose(loop.commands[-1].data, rd.gravity_torques(ur5e_model, q), atol=1e-9)
    for k in range(3):
        q_k, qd_k = Q0 - 0.05 * k, np.full(6, 0.1 * (k - 1))
        tau = loop.send(q_k, qd_k, error=False)
        np.testing.assert_allclose(tau, rd.gravity_torques(ur5e_model, q_k), atol=1e-9)
    assert len(loop.errors) == m, 'a disabled controller published a tracking error'
    # friction compensation: the URDF's damping and Coulomb friction at the measured velocity
    assert loop.node.set_parameters([Parameter('friction_compensation', value=True)])[0].successful
    qd = np.array([0.2, -0.1, 0.0, 0.3, -0.3, 0.1])
    tau = loop.send(q, qd, error=False)
    np.testing.assert_allclose(tau, rd.gravity_torques(ur5e_model, q)
                               + rd.friction_torques(ur5e_model, qd), atol=1e-9)
    assert np.abs(rd.friction_torques(ur5e_model, qd)).max() > 0.1
    # Switched to zero_effort while disabled: one zero command, then nothing.
    n = len(loop.commands)
    assert loop.node.set_parameters([Parameter('disabled_mode', value='zero_effort')])[0].successful
    assert ros.spin_until(lambda: len(loop.commands) > n)
    assert list(loop.commands[-1].data) == [0.0] * 6
    loop.states.publish(make_joint_state(UR5E_JOINTS, position=Q0, velocity=z))
    assert loop.quiet()
    result = loop.node.set_parameters([Parameter('disabled_mode', value='limp')])[0]
    assert not result.successful and 'gravity_compensation' in result.reason


def test_disabled_at_start(graph, ur5e_xml, ur5e_model):
    loop = Loop(graph, {'robot_description': ur5e_xml, 'start_enabled': False,
                        'disabled_mode': 'zero_effort'})
    loop.states.publish(make_joint_state(UR5E_JOINTS, position=Q0))
    assert loop.quiet(0.4)
    graph.remove_all()
    loop = Loop(graph, {'robot_description': ur5e_xml, 'start_enabled': False})
    tau = loop.send(Q0, np.zeros(6), error=False)
    np.testing.assert_allclose(tau, rd.gravity_torques(ur5e_model, Q0), atol=1e-9)


def test_stale_states_give_gravity_hold(graph, ur5e_xml, ur5e_model):
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml, 'state_timeout': 0.1})
    z = np.zeros(6)
    q = Q0 + 0.02
    loop.send(Q0, z)
    loop.send(q, z)
    n = len(loop.commands)
    assert ros.spin_until(lambda: len(loop.commands) > n, 1.0), 'no command once states stopped'
    np.testing.assert_allclose(loop.commands[-1].data, rd.gravity_torques(ur5e_model, q),
                               atol=1e-9)
    assert ros.logged(loop.name, 'state_timeout')
    # States resume: hold where the robot is now.
    q2 = Q0 - 0.03
    tau = loop.send(q2, z)
    np.testing.assert_allclose(tau, expected(ur5e_model, q2, z, q2, z, z, 100.0, 20.0), atol=1e-9)


def test_timer_rate(graph, ur5e_xml):
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml, 'control_rate': 50.0, 'state_timeout': 0.0})
    loop.states.publish(make_joint_state(UR5E_JOINTS, position=Q0))
    ros.spin_until(lambda: loop.commands, 2.0)
    n = len(loop.commands)
    ros.spin(1.0)
    # Commands from the 50 Hz timer, with no new state: never more than the rate allows (a busy
    # machine can only delay the timer, so no lower bound beyond "it runs").
    assert loop.node._timer.timer_period_ns == 20_000_000
    assert 2 <= len(loop.commands) - n <= 65, len(loop.commands) - n


def test_bad_joint_states_are_dropped(graph, ur5e_xml):
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    z = np.zeros(6)
    assert loop.send(Q0, z) is not None
    for msg in (make_joint_state(UR5E_JOINTS, position=[math.nan] * 6),
                make_joint_state(UR5E_JOINTS, position=Q0, velocity=[1.0] * 5),
                make_joint_state(['not_a_joint'], position=[1.0])):
        loop.states.publish(msg)
    ros.spin(0.3)
    assert ros.logged(loop.name, 'not finite') and ros.logged(loop.name, 'length mismatch')
    assert all(math.isfinite(v) for m in loop.commands for v in m.data)
    assert loop.send(Q0, z) is not None, 'controller stopped answering'


def test_joint_subset_sets_the_command_order(graph, ur5e_xml):
    ros = graph
    joints = ['elbow_joint', 'shoulder_lift_joint']
    loop = Loop(ros, {'robot_description': ur5e_xml, 'joints': joints, 'kp': [50.0, 80.0]})
    q = np.array(UR5E_HOME)
    loop.send(q, np.zeros(6))
    dq = np.zeros(6)
    dq[UR5E_JOINTS.index('elbow_joint')] = 0.02
    tau = loop.send(q + dq, np.zeros(6))
    assert tau.shape == (2,) and list(loop.errors[-1].name) == joints
    model = rd.load_urdf(ur5e_xml, locked_joints={j: 0.0 for j in UR5E_JOINTS if j not in joints})
    to_model = [joints.index(j) for j in model.joint_names]   # model order from joints order
    qm = np.array([(q + dq)[UR5E_JOINTS.index(j)] for j in model.joint_names])
    qh = np.array([q[UR5E_JOINTS.index(j)] for j in model.joint_names])
    z = np.zeros(2)
    kp = np.array([50.0, 80.0])[to_model]
    tau_model = expected(model, qm, z, qh, z, z, kp, 20.0)
    np.testing.assert_allclose(tau, [tau_model[model.joint_names.index(j)] for j in joints],
                               atol=1e-9)


def test_reference_stamped_in_the_future_starts_at_its_stamp(graph, ur5e_xml):
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    z = np.zeros(6)
    loop.send(Q0, z)
    msg = JointTrajectory(joint_names=['wrist_1_joint'], points=[_point(0.2, [Q0[3] + 0.1])])
    msg.header.stamp = (loop.node.get_clock().now() + rclpy_duration(0.4)).to_msg()
    loop.reference.publish(msg)
    ros.spin(0.2)
    loop.send(Q0, z)
    assert loop.errors[-1].position[3] == 0.0, 'moved before its stamp'
    ros.spin(0.5)
    loop.send(Q0, z)
    assert abs(loop.errors[-1].position[3] - 0.1) < 1e-12, 'not at the point after stamp + 0.2 s'


def test_control_rate_changes_at_run_time(graph, ur5e_xml):
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml, 'control_rate': 100.0})
    loop.states.publish(make_joint_state(UR5E_JOINTS, position=Q0))
    assert ros.spin_until(lambda: len(loop.commands) > 5, 2.0)
    assert loop.node.set_parameters([Parameter('control_rate', value=0.0)])[0].successful
    ros.spin(0.05)
    assert loop.quiet(0.3), 'timer still running at control_rate 0'
    assert loop.send(Q0, np.zeros(6)) is not None, 'no command per state at control_rate 0'


def rclpy_duration(seconds):
    from rclpy.duration import Duration as RclpyDuration
    return RclpyDuration(nanoseconds=int(seconds * 1e9))


# -- bad input: the controller keeps running, refuses what it cannot use, moves nothing ---------

def _set_remote(ros, node_name, name, value):
    """Set a double parameter through the node's /set_parameters service (as `ros2 param set`)."""
    request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE, double_value=float(value)))])
    return ros.call(SetParameters, f'/{node_name}/set_parameters', request).results[0]


def test_a_tiny_control_rate_is_refused_with_a_reason(graph, ur5e_xml):
    """1/control_rate is the timer period: a positive rate in the declared range but tiny
    (1e-300, anything <= 1.08e-10) overflowed create_timer in the post-set callback, the
    service never answered and the process exited. Refused in the on-set callback now."""
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    z = np.zeros(6)
    assert loop.send(Q0, z) is not None
    for value in (1e-300, 1.08e-10, 0.05):
        result = _set_remote(ros, loop.name, 'control_rate', value)
        assert not result.successful and 'at least 0.1 Hz' in result.reason, (value, result.reason)
    assert loop.node.get_parameter('control_rate').value == 0.0
    assert loop.send(Q0, z) is not None, 'the controller stopped answering'
    # The extremes that are accepted keep it running: a 10 s timer, a 0.1 ms timer, timeouts.
    assert _set_remote(ros, loop.name, 'control_rate', 0.1).successful
    assert loop.node._timer.timer_period_ns == 10_000_000_000
    assert _set_remote(ros, loop.name, 'control_rate', 10000.0).successful
    assert ros.spin_until(lambda: len(loop.commands) > 50, 5.0)
    for value in (1e-300, 1e300):
        assert _set_remote(ros, loop.name, 'state_timeout', value).successful
        n = len(loop.commands)
        assert ros.spin_until(lambda: len(loop.commands) > n + 5, 5.0)
    assert not _set_remote(ros, loop.name, 'state_timeout', math.inf).successful
    assert _set_remote(ros, loop.name, 'control_rate', 0.0).successful
    assert loop.send(Q0, z) is not None


def test_future_stamped_references_are_bounded(graph, ur5e_xml):
    """A client stamping with wall time a controller on simulated time: every reference waits
    forever. 2000 of them at a high rate: at most max_pending_references wait, the others are
    refused with a warning, and the controller keeps commanding throughout."""
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml, 'max_pending_references': 50})
    z = np.zeros(6)
    assert loop.send(Q0, z) is not None
    stamp = (loop.node.get_clock().now() + rclpy_duration(1000.0)).to_msg()
    answered = 0
    for k in range(2000):
        msg = JointTrajectory(joint_names=['elbow_joint'], points=[_point(0.1, [Q0[2] + 1e-4 * k])])
        msg.header.stamp = stamp
        loop.reference.publish(msg)
        if k % 10 == 9:             # let the controller take them (the topic's depth is 10)
            ros.spin(0.002)
        if k % 200 == 199:
            answered += loop.send(Q0, z) is not None
    assert answered == 10, 'the controller stopped commanding'
    assert ros.spin_until(lambda: ros.warnings(loop.name, 'max_pending'), 5.0)
    assert len(loop.node._schedule) == 51           # the hold and 50 waiting
    assert loop.node._schedule.pending(loop.node.get_clock().now().nanoseconds) == 50
    tau = loop.send(Q0, z)
    assert tau is not None and np.all(np.isfinite(tau))
    assert len(ros.warnings(loop.name, 'max_pending')) <= 2, 'the refusals are not throttled'


@contextlib.contextmanager
def _states_at_1khz(ros, loop):
    """Joint states at Q0 from a 1 kHz timer while the block runs; yields the list of the arrival
    times of the controller's commands, once they flow."""
    received = []
    ros.probe.create_subscription(Float64MultiArray, '/effort_controller/commands',
                                  lambda _msg: received.append(time.monotonic()), 100)
    state = make_joint_state(UR5E_JOINTS, position=Q0, velocity=np.zeros(6))
    timer = ros.probe.create_timer(0.001, lambda: loop.states.publish(state))
    try:
        assert ros.spin_until(lambda: len(received) > 200, 10.0), 'no commands at 1 kHz'
        yield received
    finally:
        timer.cancel()
        ros.probe.destroy_timer(timer)


def _longest_gap(received, start, end):
    """Longest time without a command from 0.2 s before ``start`` to ``end`` (s)."""
    return np.diff([start - 0.2] + [t for t in received if start - 0.2 <= t <= end] + [end]).max()


def test_a_huge_trajectory_is_refused_without_stalling_control(graph, ur5e_xml):
    """A 100,000-point trajectory while the controller answers 1 kHz joint states: rclpy alone
    spends over a second converting such a message (holding the GIL), and then the controller
    processed it in its callback: no command for 2.5 s. Its size is read from the serialized
    bytes and it is refused before any conversion. The longest gap between commands is held to
    the time rclpy takes to convert that message, measured here on the same machine in the same
    run (a shared, noisy machine: no absolute bound)."""
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    big = JointTrajectory(joint_names=list(UR5E_JOINTS))
    big.points = [JointTrajectoryPoint(positions=list(Q0), time_from_start=Duration(
        sec=k // 1000, nanosec=(k % 1000) * 1_000_000)) for k in range(1, 100_001)]
    raw = serialize_message(big)            # published as bytes: the probe converts nothing
    del big
    converting = time.monotonic()
    deserialize_message(raw, JointTrajectory)
    conversion = time.monotonic() - converting
    with _states_at_1khz(ros, loop) as received:
        start = time.monotonic()
        loop.reference.publish(raw)
        assert ros.spin_until(lambda: ros.warnings(loop.name, 'max_trajectory_points'), 10.0)
        ros.spin(0.5)
        end = time.monotonic()
    gap = _longest_gap(received, start, end)
    assert gap < conversion, (f'no command for {gap:.2f} s around the big trajectory; rclpy '
                              f'converts it in {conversion:.2f} s')
    # A trajectory within the bound is followed as before.
    loop.reference.publish(JointTrajectory(joint_names=['elbow_joint'],
                                           points=[_point(0.2, [Q0[2] + 0.1])]))
    ros.spin(0.4)
    loop.send(Q0, np.zeros(6))
    assert abs(loop.errors[-1].position[2] - 0.1) < 1e-12


def test_messages_that_update_no_joint_trigger_no_command(graph, ur5e_xml, ur5e_model):
    """An empty JointState, or one naming only joints the model does not have, is not a new
    state: no control step from the cached one. A gripper's NaN does not drop the arm's state."""
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    z = np.zeros(6)
    assert loop.send(Q0, z) is not None
    loop.states.publish(make_joint_state([]))
    loop.states.publish(make_joint_state(['gripper_joint'], position=[0.01]))
    assert loop.quiet(0.4), 'a message naming no model joint produced a command'
    assert ros.logged(loop.name, 'names none of the joints')
    q = Q0 + 0.01
    tau = loop.send(list(q) + [math.nan], list(z) + [math.nan],
                    names=UR5E_JOINTS + ('gripper_joint',))
    assert tau is not None, "a gripper's NaN dropped the arm's state"
    np.testing.assert_allclose(tau, expected(ur5e_model, q, z, Q0, z, z, 100.0, 20.0), atol=1e-9)


def test_impossible_states_are_dropped_and_never_held(graph, ur5e_xml, ur5e_model):
    """q = 1e300 in a stream of good states gave a full-effort command; arriving first after a
    stale period it was latched as the hold target. Dropped now, with a warning naming the joint,
    the value and the bound; the position held after the stale period is a measured one."""
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml, 'state_timeout': 0.1})
    z = np.zeros(6)
    assert loop.send(Q0, z) is not None
    bad = Q0.copy()
    bad[1] = 1e300
    loop.states.publish(make_joint_state(UR5E_JOINTS, position=bad, velocity=z))
    assert ros.spin_until(lambda: ros.warnings(loop.name, 'shoulder_lift_joint'), 2.0)
    warning = ros.warnings(loop.name, 'shoulder_lift_joint')[0]
    assert '1e+300' in warning and '6.38319' in warning, warning       # the limit 2π + 0.1
    assert all(np.abs(m.data).max() < 150.0 for m in loop.commands), 'a full-effort command'
    fast = make_joint_state(UR5E_JOINTS, position=Q0, velocity=[0, 0, 100.0, 0, 0, 0])
    loop.states.publish(fast)                       # 100 rad/s: beyond 10 × 3.14 rad/s
    assert ros.spin_until(lambda: ros.warnings(loop.name, 'implausible velocity'), 2.0)
    # Stale: gravity hold; then the impossible state first, then good ones.
    n = len(loop.commands)
    assert ros.spin_until(lambda: len(loop.commands) > n, 2.0)
    assert ros.spin_until(lambda: ros.warnings(loop.name, 'state_timeout'), 2.0)
    loop.states.publish(make_joint_state(UR5E_JOINTS, position=bad, velocity=z))
    ros.spin(0.05)
    q2 = Q0 + 0.02
    tau = loop.send(q2, z)
    np.testing.assert_allclose(tau, expected(ur5e_model, q2, z, q2, z, z, 100.0, 20.0), atol=1e-9)
    np.testing.assert_allclose(loop.errors[-1].position, 0.0, atol=1e-12)
    # The tolerance is a parameter.
    result = loop.node.set_parameters([Parameter('position_tolerance', value=-1.0)])[0]
    assert not result.successful


def test_a_long_trajectory_is_read_off_the_executor_and_followed(graph, ur5e_xml):
    """max_trajectory_points (10,000) points while the controller answers 1 kHz joint states:
    read from its bytes and interpolated in a worker thread, so commands keep coming while it is
    prepared, then followed; a newer reference arriving while a long one is prepared wins.

    One executor runs the controller and the probe here: a controller that prepared the
    reference in its callback would block the probe too, and no command would arrive between
    the moment preparation starts and the moment it is committed. The test counts those
    commands rather than timing them (a shared, noisy machine)."""
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    n_points = 10_000
    long = JointTrajectory(joint_names=['elbow_joint', 'wrist_1_joint'])
    long.points = [JointTrajectoryPoint(positions=[Q0[2] + 0.1 * k / n_points, Q0[3]],
                                        time_from_start=Duration(sec=k // 1000,
                                                                 nanosec=(k % 1000) * 1_000_000))
                   for k in range(1, n_points + 1)]
    raw = serialize_message(long)
    with _states_at_1khz(ros, loop) as received:
        generation = loop.node._schedule.generation
        window = {}

        def watch():
            """Between executor callbacks: when preparation is seen under way, and committed."""
            now = time.monotonic()
            if loop.node._preparation.running:
                window.setdefault('preparing', now)
            if loop.node._schedule.generation != generation:
                window.setdefault('committed', now)
            return 'committed' in window

        loop.reference.publish(raw)
        assert ros.spin_until(watch, 30.0), 'the long reference was never committed'
        assert 'preparing' in window, 'it was not prepared off the executor'
        during = [t for t in received if window['preparing'] < t < window['committed']]
        assert len(during) >= 1, (
            f'no command during the {window["committed"] - window["preparing"]:.3f} s it was '
            'prepared')
        # followed: 2 s after its arrival the elbow's desired position is 0.02 rad ahead
        assert ros.spin_until(lambda: loop.errors and loop.errors[-1].position[2] > 0.015, 10.0)
        # A long one, then at once a short one: the short one is in force.
        loop.reference.publish(raw)
        loop.reference.publish(JointTrajectory(joint_names=['wrist_1_joint'],
                                               points=[_point(0.05, [Q0[3] - 0.1])]))
        ros.spin(0.5)
    ros.spin(0.1)
    loop.send(Q0, np.zeros(6))
    held = np.array(loop.errors[-1].position)
    assert abs(held[3] + 0.1) < 1e-12, held
    ros.spin(0.2)
    loop.send(Q0, np.zeros(6))
    # the others hold the desired state in force when it took over: the long one was dropped
    np.testing.assert_array_equal(loop.errors[-1].position, held)
    assert not loop.node._preparation.active


def test_the_trajectory_topic_is_joint_trajectory(graph, ur5e_xml):
    """ros2_control's JointTrajectoryController topic, and no other trajectory topic."""
    loop = Loop(graph, {'robot_description': ur5e_xml})
    topics = {sub.topic_name for sub in loop.node.subscriptions}
    assert f'/{loop.name}/joint_trajectory' in topics
    assert not any(t.endswith('/reference') for t in topics), topics


def test_a_reference_beyond_the_limits_is_refused_and_the_arm_keeps_holding(graph, ur5e_xml,
                                                                           ur5e_model):
    """shoulder_pan_joint to 7.5 rad (limit 2π); a cubic through points inside the limits that
    overshoots; a velocity beyond the limit: each refused whole with a warning naming the
    joint, the point and the limit; the commands stay those of the hold."""
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    z = np.zeros(6)
    hold = expected(ur5e_model, Q0, z, Q0, z, z, 100.0, 20.0)
    np.testing.assert_allclose(loop.send(Q0, z), hold, atol=1e-9)
    upper = ur5e_model.upper
    for reference, fragments in (
            (JointTrajectory(joint_names=['wrist_1_joint', 'shoulder_pan_joint'],
                             points=[_point(2.0, [Q0[3], 3.0]), _point(4.0, [Q0[3], 7.5])]),
             ('point 1', "'shoulder_pan_joint'", '7.5 rad', 'upper position limit 6.28319 rad')),
            (JointTrajectory(joint_names=['elbow_joint'],
                             points=[_point(2.0, [upper[2] - 0.1], v=[1.0]),
                                     _point(3.0, [upper[2] - 0.05])]),
             ('between point 0 and point 1', "'elbow_joint'", 'upper position limit 3.14159')),
            (JointTrajectory(joint_names=['wrist_3_joint'], points=[_point(1.0, [0.5], v=[4.0])]),
             ('point 0', "'wrist_3_joint'", 'velocity limit 3.14159 rad/s'))):
        ros.logs.clear()
        loop.reference.publish(reference)
        assert ros.spin_until(lambda: ros.warnings(loop.name, 'reference rejected'), 5.0)
        warning = ros.warnings(loop.name, 'reference rejected')[0]
        assert all(f in warning for f in fragments), warning
        loop.node._throttle.reset()         # the next refusal is logged at once
        ros.spin(0.3)
        np.testing.assert_allclose(loop.send(Q0, z), hold, atol=1e-9)
        np.testing.assert_array_equal(loop.errors[-1].position, 0.0)
    # the same points within the limits are followed
    loop.reference.publish(JointTrajectory(joint_names=['shoulder_pan_joint'],
                                           points=[_point(0.3, [0.05])]))
    ros.spin(0.5)
    loop.send(Q0, z)
    assert abs(loop.errors[-1].position[0] - 0.05) < 1e-12


def _stamp(seconds):
    from builtin_interfaces.msg import Time
    return Time(sec=int(seconds), nanosec=int(round((seconds % 1) * 1e9)))


def test_a_jump_or_a_stamp_going_back_drops_the_reference_and_holds_there(graph, ur5e_xml,
                                                                           ur5e_model):
    """A state in which a joint jumped by more than max_state_jump (a simulator reset), or whose
    stamp goes backwards: the reference is dropped and the new position held, with a warning.
    Motion its velocities explain is no jump."""
    ros = graph
    loop = Loop(ros, {'robot_description': ur5e_xml})
    z = np.zeros(6)
    assert loop.send(Q0, z, stamp=_stamp(10.0)) is not None
    loop.reference.publish(JointTrajectory(joint_names=['elbow_joint'],
                                           points=[_point(5.0, [Q0[2] + 0.5])]))
    ros.spin(0.3)
    loop.send(Q0, z, stamp=_stamp(10.01))
    assert loop.errors[-1].position[2] > 0.0, 'the reference is not followed'
    # fast but continuous: 0.3 rad at 3 rad/s in 0.1 s
    qd = np.array([0, 0, 0, 3.0, 0, 0])
    loop.send(Q0, qd, stamp=_stamp(10.1))
    loop.send(Q0 + 0.1 * qd, qd, stamp=_stamp(10.2))
    assert not ros.warnings(loop.name, 'holding the position of this state')
    assert loop.errors[-1].position[2] > 0.0
    # a jump: shoulder_lift 0.4 rad at rest
    q_jump = Q0 + 0.1 * qd + np.array([0, 0.4, 0, 0, 0, 0])
    tau = loop.send(q_jump, z, stamp=_stamp(10.21))
    np.testing.assert_allclose(tau, expected(ur5e_model, q_jump, z, q_jump, z, z, 100.0, 20.0),
                               atol=1e-9)
    warning = ros.warnings(loop.name, 'holding the position of this state')
    assert warning and "joint 'shoulder_lift_joint' jumped" in warning[0], warning
    ros.spin(0.3)
    loop.send(q_jump, z, stamp=_stamp(10.5))
    np.testing.assert_array_equal(loop.errors[-1].position, 0.0)    # the reference is gone
    # a stamp going backwards
    loop.node._throttle.reset()
    loop.reference.publish(JointTrajectory(joint_names=['elbow_joint'],
                                           points=[_point(5.0, [Q0[2] + 0.5])]))
    ros.spin(0.3)
    loop.send(q_jump, z, stamp=_stamp(10.6))
    assert loop.errors[-1].position[2] > 0.0
    q_back = q_jump + 0.01
    tau = loop.send(q_back, z, stamp=_stamp(3.0))
    np.testing.assert_allclose(tau, expected(ur5e_model, q_back, z, q_back, z, z, 100.0, 20.0),
                               atol=1e-9)
    assert ros.logged(loop.name, 'stamp went back')
    # max_state_jump 0: never a jump
    assert loop.node.set_parameters([Parameter('max_state_jump', value=0.0)])[0].successful
    loop.node._throttle.reset()
    ros.logs.clear()
    loop.send(q_back + 1.0, z, stamp=_stamp(3.1))
    assert not ros.warnings(loop.name, 'jumped')
    assert not loop.node.set_parameters([Parameter('max_state_jump', value=-1.0)])[0].successful
