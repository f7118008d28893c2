"""Every node under malformed input over real DDS: every topic it subscribes to and every parameter
it declares (through the real SetParameters service) gets bad values, and its services are called
out of order. Afterwards the node is alive (its executor never raised), still answers a good
message correctly, and nothing it published at any time held a NaN or inf.

The topics and parameters are read from the node itself (its subscriptions, its declared
parameters), so a topic or parameter added later is fuzzed without touching this file.
"""

import math

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
from robot_dynamics_ros.nodes.conversions import make_joint_state
from robot_dynamics_ros.nodes.dynamics_node import DynamicsNode
from robot_dynamics_ros.nodes.external_torque_estimator import ExternalTorqueEstimator
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode
from robot_dynamics_ros.nodes.task_space_controller import TaskSpaceController

from _node_harness import UR5E_HOME, UR5E_JOINTS

pytestmark = pytest.mark.ros

NAN, INF = math.nan, math.inf
N = len(UR5E_JOINTS)

# Parameter values of every type and the edges of every numeric range.
BAD_PARAMETER_VALUES = [
    True, False, 0, -1, 2**62, 0.0, -0.0, -1.0, 1e-300, 5e-324, 1e300, -1e300, NAN, INF, -INF,
    '', 'abc', 'x' * 10_000, [], [NAN], [INF, 1.0], [-1.0], [1e300] * N, [0.0] * (N + 1),
    [1.0] * 100_000, [1, 2], [True, False], ['a', 'b'], [''],
]


def _point(positions, seconds=1.0, **fields):
    point = JointTrajectoryPoint(positions=positions, **fields)
    point.time_from_start.sec = int(seconds)
    point.time_from_start.nanosec = int(round((seconds % 1) * 1e9))
    return point


def _bad_joint_states():
    home = list(UR5E_HOME)
    names = list(UR5E_JOINTS)

    def state(name=names, position=home, velocity=None, effort=()):
        return JointState(name=list(name), position=list(position),
                          velocity=[0.0] * len(position) if velocity is None else list(velocity),
                          effort=list(effort))

    def with_value(i, value):
        q = list(home)
        q[i] = value
        return q

    yield JointState()
    yield state(position=with_value(1, NAN))
    yield state(position=with_value(0, INF))
    yield state(position=with_value(2, 1e300))
    yield state(position=with_value(3, -1e300))
    yield state(position=with_value(1, 50.0))          # far beyond the URDF limits
    yield state(velocity=[1e300] * N)
    yield state(velocity=[NAN] * N)
    yield state(position=home[:3])                      # lengths differ
    yield state(velocity=[0.0] * (N + 2))
    yield state(effort=[NAN] * N)
    yield state(name=['no_such_joint'], position=[0.0])
    yield state(name=[f'ghost_{k}' for k in range(10_000)], position=[0.0] * 10_000)
    yield state(name=names + names, position=home + home)                    # duplicates
    yield state(name=[names[0]] * 100_000, position=[0.0] * 100_000)
    yield state(name=names + ['gripper'], position=home + [NAN])             # untracked NaN
    yield state(name=[''] * N)


def _bad_commands():
    yield Float64MultiArray()
    yield Float64MultiArray(data=[NAN] * N)
    yield Float64MultiArray(data=[INF] * N)
    yield Float64MultiArray(data=[1e300] * N)
    yield Float64MultiArray(data=[-1e300] * N)
    yield Float64MultiArray(data=[0.0] * (N + 1))
    yield Float64MultiArray(data=[0.0] * 100_000)


def _bad_references():
    names = list(UR5E_JOINTS)
    home = list(UR5E_HOME)
    yield JointTrajectory(joint_names=names, points=[_point([NAN] * N)])
    yield JointTrajectory(joint_names=names, points=[_point([INF] * N)])
    yield JointTrajectory(joint_names=names, points=[_point([1e300] * N)])
    yield JointTrajectory(joint_names=names, points=[_point(home[:2])])
    yield JointTrajectory(joint_names=names, points=[_point(home, velocities=[NAN] * N)])
    yield JointTrajectory(joint_names=names, points=[_point(home, velocities=[0.0] * 2)])
    yield JointTrajectory(joint_names=names, points=[_point(home, accelerations=[1e300] * N)])
    yield JointTrajectory(joint_names=names, points=[_point(home, 2.0), _point(home, 1.0)])
    yield JointTrajectory(joint_names=names, points=[_point(home, 1.0), _point(home, 1.0)])
    yield JointTrajectory(joint_names=names, points=[_point(home, 0.0), _point(home, 1e-9)])
    yield JointTrajectory(joint_names=['no_such_joint'], points=[_point([0.0])])
    yield JointTrajectory(joint_names=names + names[:1], points=[_point(home + home[:1])])
    yield JointTrajectory(joint_names=[], points=[_point([])])
    far = JointTrajectory(joint_names=names, points=[_point(home, 1.0)])
    far.header.stamp = Time(sec=2_000_000_000)                        # stamped far in the future
    yield far
    yield JointTrajectory(joint_names=names, points=[_point(home, 1e-3 * k) for k in range(1, 20_001)])


def _bad_wrenches():
    for field, value in (('force', NAN), ('torque', INF), ('force', 1e300)):
        msg = WrenchStamped()
        getattr(msg.wrench, field).x = value
        yield msg
    msg = WrenchStamped()
    msg.header.frame_id = 'no_such_frame'
    msg.wrench.force.z = 1.0
    yield msg


def _bad_targets():
    for field, value in (('x', NAN), ('y', INF), ('z', 1e300)):
        msg = PoseStamped()
        msg.pose.orientation.w = 1.0
        setattr(msg.pose.position, field, value)
        yield msg
    msg = PoseStamped()                                 # the zero quaternion
    yield msg
    msg = PoseStamped()
    msg.pose.orientation.w = NAN
    yield msg
    msg = PoseStamped()
    msg.header.frame_id = 'no_such_frame'
    msg.pose.orientation.w = 1.0
    yield msg
    msg = PoseStamped()
    msg.pose.orientation.w = 1e-300                     # finite, but no rotation
    yield msg
    msg = PoseStamped()
    msg.pose.orientation.x = 1e300
    msg.pose.orientation.w = 1e300                      # its norm overflows
    yield msg
    msg = PoseStamped()
    msg.pose.position.x = 1e6                           # unreachable, but a pose
    msg.pose.orientation.w = 1.0
    yield msg


def _bad_descriptions():
    yield String(data='')
    yield String(data='not xml at all')
    yield String(data='<robot name="empty"/>')
    yield String(data='<robot name="x"><link name="a"/><joint name="j" type="revolute">'
                      '<parent link="a"/><child link="a"/></joint></robot>')


BAD_MESSAGES = {JointState: _bad_joint_states, Float64MultiArray: _bad_commands,
                JointTrajectory: _bad_references, WrenchStamped: _bad_wrenches, String: _bad_descriptions,
                PoseStamped: _bad_targets}


def _numbers(msg):
    """Every float in a ROS message, recursively (arrays, sequences, nested messages)."""
    if isinstance(msg, float):
        yield msg
        return
    if isinstance(msg, (list, tuple, np.ndarray)) or type(msg).__name__ == 'array':
        for item in msg:
            yield from _numbers(item)
        return
    if hasattr(msg, 'get_fields_and_field_types'):
        for field in msg.get_fields_and_field_types():
            yield from _numbers(getattr(msg, field))


def _watch_outputs(ros, node):
    """Subscribe the probe to every topic the node publishes; return {topic: [messages]}."""
    received = {}
    for publisher in node.publishers:
        topic = publisher.topic_name
        if topic in ('/rosout', '/parameter_events') or topic in received:
            continue
        received[topic] = ros.collect(publisher.msg_type, topic, qos=1000)
    return received


def _assert_finite(received):
    for topic, messages in received.items():
        for msg in messages:
            bad = [x for x in _numbers(msg) if not math.isfinite(x)]
            assert not bad, f'{topic} published a non-finite value: {bad[:3]}'


def _fuzz_parameters(ros, node):
    """Set every declared parameter to every bad value through the SetParameters service, then
    set the original values back. Every call must be answered."""
    names = sorted(node.list_parameters([], 0).names)
    originals = {name: node.get_parameter(name) for name in names}
    client = ros.probe.create_client(SetParameters, f'/{node.get_name()}/set_parameters')
    assert ros.spin_until(client.service_is_ready, 10.0)
    answered = 0
    try:
        for name in names:
            for value in BAD_PARAMETER_VALUES:
                try:
                    message = Parameter(name, value=value).to_parameter_msg()
                except (TypeError, ValueError):
                    continue                      # not a value a ROS parameter can hold
                future = client.call_async(SetParameters.Request(parameters=[message]))
                assert ros.spin_until(future.done, 10.0), f'no answer setting {name} = {value!r:.60}'
                answered += 1
        restore = [p.to_parameter_msg() for p in originals.values()
                   if not node.describe_parameter(p.name).read_only]
        future = client.call_async(SetParameters.Request(parameters=restore))
        assert ros.spin_until(future.done, 10.0)
        assert all(r.successful for r in future.result().results), future.result().results
    finally:
        ros.probe.destroy_client(client)
    return answered


def _fuzz_topics(ros, node):
    """Publish every bad message of each subscribed topic's type; return the number sent."""
    sent = 0
    for subscription in node.subscriptions:
        make = BAD_MESSAGES.get(subscription.msg_type)
        assert make is not None, f'no bad messages for {subscription.topic_name} ({subscription.msg_type})'
        publisher = ros.publisher(subscription.msg_type, subscription.topic_name,
                                  qos=subscription.qos_profile, wait_for=1)
        for msg in make():
            publisher.publish(msg)
            sent += 1
            ros.spin(0.02)
        ros.probe.destroy_publisher(publisher)
    return sent


def _call_services_out_of_order(ros, node):
    prefix = f'/{node.get_name()}'
    services = {name: types for name, types in node.get_service_names_and_types_by_node(
        node.get_name(), node.get_namespace()) if name.startswith(prefix)
        and not name.rsplit('/', 1)[1].endswith(('parameters', 'parameter_types', 'type_description'))}
    for name, types in services.items():
        if types == ['std_srvs/srv/SetBool']:
            for data in (False, False, True, True, False, True):
                assert ros.call(SetBool, name, SetBool.Request(data=data)) is not None
        elif types == ['std_srvs/srv/Trigger']:
            for _ in range(3):
                assert ros.call(Trigger, name, Trigger.Request()) is not None
    return sorted(services)


def _good_state(k, q, qd=None):
    return make_joint_state(UR5E_JOINTS, stamp=Time(sec=5000 + k), position=np.asarray(q),
                            velocity=np.zeros(N) if qd is None else np.asarray(qd))


def _fuzz(ros, node):
    outputs = _watch_outputs(ros, node)
    ros.spin(0.3)
    answered = _fuzz_parameters(ros, node)
    sent = _fuzz_topics(ros, node)
    services = _call_services_out_of_order(ros, node)
    ros.spin(0.3)
    _assert_finite(outputs)
    assert answered > 100 and sent > 10, (answered, sent)
    return outputs, services


def test_dynamics_node_survives_bad_input_and_answers_correctly(graph, ur5e_xml, ur5e_model):
    ros = graph
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml})
    outputs, _ = _fuzz(ros, node)
    gravity = outputs[f'/{node.get_name()}/gravity_torques']
    state = ros.publisher(JointState, '/joint_states')
    q = np.asarray(UR5E_HOME) + 0.1
    qd = np.linspace(-0.5, 0.5, N)
    gravity.clear()
    for k in range(3):
        state.publish(_good_state(k, q, qd))
        ros.spin(0.05)
    assert ros.spin_until(lambda: any(m.header.stamp.sec == 5002 for m in gravity), 10.0), \
        'no answer to a good joint state after the fuzzing'
    answer = next(m for m in gravity if m.header.stamp.sec == 5002)
    np.testing.assert_allclose(answer.effort, rd.gravity_torques(ur5e_model, q), rtol=0, atol=1e-9)
    _assert_finite(outputs)


def test_estimator_survives_bad_input_and_estimates_correctly(graph, ur5e_xml, ur5e_model):
    """After every bad parameter, message and service call, a still arm whose efforts are
    g(q) − τ_ext gives τ_ext back (the observer restarts on the new stamps and converges)."""
    ros = graph
    node = ros.add(ExternalTorqueEstimator, {'robot_description': ur5e_xml})
    outputs, services = _fuzz(ros, node)
    assert f'/{node.get_name()}/zero' in services
    torques = outputs[f'/{node.get_name()}/external_torques']
    state = ros.publisher(JointState, '/joint_states')
    q = np.asarray(UR5E_HOME) + 0.1
    tau_ext = np.linspace(-2.0, 3.0, N)
    effort = rd.gravity_torques(ur5e_model, q) - tau_ext
    torques.clear()
    for k in range(150):
        msg = _good_state(0, q)
        msg.header.stamp = Time(sec=6000 + k // 100, nanosec=(k % 100) * 10_000_000)
        msg.effort = [float(x) for x in effort]
        state.publish(msg)
        ros.spin(0.005)
    def last(m):
        return m.header.stamp.sec == 6001 and m.header.stamp.nanosec == 490_000_000
    assert ros.spin_until(lambda: any(last(m) for m in torques), 10.0), 'no estimate after the fuzzing'
    # (no bad message carried efforts, so there was no estimate to tare when ~/zero was called)
    np.testing.assert_allclose(next(m for m in torques if last(m)).effort, tau_ext, rtol=0, atol=1e-6)
    _assert_finite(outputs)


def _fuzz_controller(ros, node, model, before_holding=None):
    """Fuzz a controller at the good state q = UR5E_HOME, then enable it (and ``before_holding``,
    given the number of good states sent so far): whatever happened (it may have gone stale, been
    disabled and enabled), at q it ends up holding q: the command is the gravity torque g(q). Returns
    the services it offers."""
    state = ros.publisher(JointState, '/joint_states')
    commands = ros.collect(Float64MultiArray, '/effort_controller/commands', qos=1000)
    q = np.asarray(UR5E_HOME)
    state.publish(_good_state(0, q))
    assert ros.spin_until(lambda: commands, 10.0)
    outputs, services = _fuzz(ros, node)
    assert ros.call(SetBool, f'/{node.get_name()}/enable', SetBool.Request(data=True)).success
    sent = 1
    if before_holding is not None:
        for k in range(1, 5):
            state.publish(_good_state(k, q))
            ros.spin(0.01)
        before_holding()
        sent = 5
    commands.clear()
    for k in range(sent, 40):
        state.publish(_good_state(k, q))
        ros.spin(0.01)
    assert ros.spin_until(lambda: len(commands) >= 10, 10.0), 'no commands after the fuzzing'
    np.testing.assert_allclose(commands[-1].data, rd.gravity_torques(model, q), rtol=0, atol=1e-6)
    _assert_finite(outputs)
    assert all(all(math.isfinite(x) for x in c.data) for c in commands)
    return services


def test_controller_survives_bad_input_and_holds_the_good_state(graph, ur5e_xml, ur5e_model):
    _fuzz_controller(graph, graph.add(ComputedTorqueController, {'robot_description': ur5e_xml}), ur5e_model)


def test_task_space_controller_survives_bad_input_and_holds_the_good_state(graph, ur5e_xml, ur5e_model):
    """After every bad parameter, target and service call (a target 1000 km away included), the
    controller at a still good state q, enabled and told to hold, commands g(q) and publishes no
    non-finite value."""
    ros = graph
    node = ros.add(TaskSpaceController, {'robot_description': ur5e_xml, 'tip_link': 'tool0'})

    def hold():
        assert ros.call(Trigger, f'/{node.get_name()}/hold', Trigger.Request()).success
    services = _fuzz_controller(ros, node, ur5e_model, before_holding=hold)
    assert {f'/{node.get_name()}/enable', f'/{node.get_name()}/hold'} <= set(services)


def test_simulator_survives_bad_input_and_simulates_correctly(graph, ur5e_xml, ur5e_model):
    ros = graph
    q0 = np.asarray(UR5E_HOME)
    node = ros.add(SimulatorNode, {'robot_description': ur5e_xml, 'initial_positions': list(q0),
                                   'publish_rate': 200.0, 'friction': False})
    outputs, services = _fuzz(ros, node)
    assert f'/{node.get_name()}/reset' in services
    # Paused, reset, given the gravity torque g(q0) as the command, then resumed: the arm stays at q0.
    assert ros.call(SetBool, f'/{node.get_name()}/pause', SetBool.Request(data=True)) is not None
    assert ros.call(Trigger, f'/{node.get_name()}/reset', Trigger.Request()).success
    command = ros.publisher(Float64MultiArray, '/effort_controller/commands')
    g = Float64MultiArray(data=[float(x) for x in rd.gravity_torques(ur5e_model, q0)])
    states = outputs['/joint_states']
    for _ in range(10):
        command.publish(g)
        ros.spin(0.01)
    assert ros.call(SetBool, f'/{node.get_name()}/pause', SetBool.Request(data=False)).success
    for _ in range(30):
        command.publish(g)
        ros.spin(0.01)
    states.clear()
    for _ in range(20):
        command.publish(g)
        ros.spin(0.01)
    assert ros.spin_until(lambda: len(states) >= 5, 10.0), 'no joint states after the fuzzing'
    q = np.array([states[-1].position[states[-1].name.index(j)] for j in UR5E_JOINTS])
    np.testing.assert_allclose(q, q0, atol=1e-3)
    _assert_finite(outputs)
