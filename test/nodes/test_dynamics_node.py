"""dynamics_node over real DDS: outputs equal the core's, joint states merged by name, models from
the transient-local robot_description topic (bounded in size, built off the executor), bad input
dropped with bounded warnings, messages that update nothing or are impossible publish nothing."""

import math
import time

import numpy as np
import pytest
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.nodes.conversions import make_joint_state, multiarray_to_matrix
from robot_dynamics_ros.nodes.dynamics_node import DynamicsNode

from _node_harness import UR5E_HOME, UR5E_JOINTS, UR5E_URDF

pytestmark = pytest.mark.ros

TRANSIENT = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _stamp(k):
    from builtin_interfaces.msg import Time
    return Time(sec=1000 + k, nanosec=17)


def _outputs(ros, node):
    return {name: ros.collect(t, f'/{node.get_name()}/{name}') for name, t in (
        ('gravity_torques', JointState), ('coriolis_torques', JointState),
        ('mass_matrix', Float64MultiArray), ('task_space_inertia', Float64MultiArray))}


def _all_finite(out):
    for msgs in out.values():
        for m in msgs:
            values = m.effort if isinstance(m, JointState) else m.data
            assert all(math.isfinite(v) for v in values), 'a NaN/inf was published'


def test_outputs_equal_the_core_for_published_states(graph, ur5e_xml, ur5e_model):
    ros = graph
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml})
    out = _outputs(ros, node)
    pub = ros.publisher(JointState, '/joint_states')
    rng = np.random.default_rng(1)
    states = []
    for k in range(5):
        q = np.asarray(UR5E_HOME) + rng.uniform(-0.5, 0.5, 6)
        qd = rng.uniform(-1.0, 1.0, 6)
        states.append((q, qd))
        pub.publish(make_joint_state(UR5E_JOINTS, stamp=_stamp(k), position=q, velocity=qd))
        ros.spin(0.02)
    assert ros.spin_until(lambda: all(len(v) >= 5 for v in out.values()), 10.0), \
        {k: len(v) for k, v in out.items()}
    model = ur5e_model
    for k, (q, qd) in enumerate(states):
        g = out['gravity_torques'][k]
        c = out['coriolis_torques'][k]
        assert tuple(g.name) == UR5E_JOINTS and g.header.stamp == _stamp(k)
        assert c.header.stamp == _stamp(k)
        np.testing.assert_allclose(g.effort, rd.gravity_torques(model, q), rtol=0, atol=1e-9)
        np.testing.assert_allclose(c.effort, rd.coriolis_forces(model, q, qd), rtol=0, atol=1e-9)
        M = out['mass_matrix'][k]
        assert [d.label for d in M.layout.dim] == ['rows', 'cols']
        assert [(d.size, d.stride) for d in M.layout.dim] == [(6, 36), (6, 6)]
        np.testing.assert_allclose(multiarray_to_matrix(M), rd.mass_matrix(model, q), atol=1e-9)
        L = multiarray_to_matrix(out['task_space_inertia'][k])
        np.testing.assert_allclose(
            L, rd.task_space_inertia(model, q, model.tip_frame, reference='world_aligned'),
            rtol=1e-9, atol=1e-9)


def test_partial_reordered_states_from_two_publishers(graph, ur5e_xml, ur5e_model):
    ros = graph
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml, 'publish_mass_matrix': False,
                                  'publish_task_space_inertia': False})
    gravity = ros.collect(JointState, f'/{node.get_name()}/gravity_torques')
    pub_a = ros.publisher(JointState, '/joint_states')
    pub_b = ros.publisher(JointState, '/joint_states')
    q = np.array([0.3, -1.2, 1.4, -0.9, -1.6, 0.4])
    # Publisher A: three joints in a scrambled order, plus a joint the model does not have.
    a = [4, 0, 2]
    pub_a.publish(make_joint_state([UR5E_JOINTS[i] for i in a] + ['gripper_finger_joint'],
                                   position=list(q[a]) + [0.02]))
    ros.spin(0.3)
    assert gravity == [], 'published before every joint was known'
    missing = ros.warnings(node.get_name(), 'no joint state received yet')
    assert missing and all(UR5E_JOINTS[i] in missing[0] for i in (1, 3, 5)), ros.logs
    # Publisher B: the other three, reversed.
    b = [5, 3, 1]
    pub_b.publish(make_joint_state([UR5E_JOINTS[i] for i in b], position=q[b]))
    assert ros.spin_until(lambda: len(gravity) >= 1)
    np.testing.assert_allclose(gravity[-1].effort, rd.gravity_torques(ur5e_model, q), atol=1e-9)
    # A later partial update changes only its joints.
    q[0] = -0.7
    pub_a.publish(make_joint_state([UR5E_JOINTS[0]], position=[q[0]]))
    assert ros.spin_until(lambda: len(gravity) >= 2)
    np.testing.assert_allclose(gravity[-1].effort, rd.gravity_torques(ur5e_model, q), atol=1e-9)


def test_robot_description_topic_published_after_start(graph, ur5e_xml, ur5e_model):
    ros = graph
    node = ros.add(DynamicsNode, {'publish_mass_matrix': False,
                                  'publish_task_space_inertia': False, 'publish_coriolis': False})
    gravity = ros.collect(JointState, f'/{node.get_name()}/gravity_torques')
    states = ros.publisher(JointState, '/joint_states')
    q = np.array(UR5E_HOME)
    states.publish(make_joint_state(UR5E_JOINTS, position=q))
    ros.spin(0.3)
    assert gravity == [] and ros.warnings(node.get_name(), 'no robot model')
    description = ros.publisher(String, '/robot_description', TRANSIENT)
    # A malformed description: an error, the node keeps running without a model.
    description.publish(String(data='<robot name="broken"><link name="a"/><joint'))
    assert ros.spin_until(lambda: ros.warnings(node.get_name(), 'cannot build the robot model'))
    description.publish(String(data=ur5e_xml))
    # built in a worker thread: the node serves (without a model here) until it is ready
    assert ros.spin_until(lambda: node.model is not None, 30.0)
    states.publish(make_joint_state(UR5E_JOINTS, position=q))
    assert ros.spin_until(lambda: gravity)
    np.testing.assert_allclose(gravity[-1].effort, rd.gravity_torques(ur5e_model, q), atol=1e-9)


def test_joint_subset_locks_the_others_and_sets_the_order(graph, ur5e_xml):
    ros = graph
    joints = ['elbow_joint', 'shoulder_lift_joint']
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml, 'joints': joints,
                                  'publish_task_space_inertia': False})
    gravity = ros.collect(JointState, f'/{node.get_name()}/gravity_torques')
    mass = ros.collect(Float64MultiArray, f'/{node.get_name()}/mass_matrix')
    pub = ros.publisher(JointState, '/joint_states')
    q = np.array(UR5E_HOME)
    pub.publish(make_joint_state(UR5E_JOINTS, position=q))
    assert ros.spin_until(lambda: gravity and mass)
    locked = {j: 0.0 for j in UR5E_JOINTS if j not in joints}
    model = rd.load_urdf(ur5e_xml, locked_joints=locked)
    idx = [model.joint_names.index(j) for j in joints]
    qm = np.array([q[UR5E_JOINTS.index(j)] for j in model.joint_names])
    assert list(gravity[-1].name) == joints
    np.testing.assert_allclose(gravity[-1].effort, rd.gravity_torques(model, qm)[idx], atol=1e-9)
    np.testing.assert_allclose(multiarray_to_matrix(mass[-1]),
                               rd.mass_matrix(model, qm)[np.ix_(idx, idx)], atol=1e-9)


def test_bad_messages_warn_and_publish_no_nan(graph, ur5e_xml, ur5e_model):
    ros = graph
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml})
    out = _outputs(ros, node)
    pub = ros.publisher(JointState, '/joint_states')
    q = np.array(UR5E_HOME)
    bad = [
        make_joint_state(UR5E_JOINTS, position=[math.nan] + list(q[1:])),
        make_joint_state(UR5E_JOINTS, position=q[:5]),
        make_joint_state(UR5E_JOINTS, position=q, velocity=[math.inf] * 6),
        make_joint_state(['unknown_joint'], position=[1.0]),
    ]
    for msg in bad:
        pub.publish(msg)
    ros.spin(0.5)
    assert all(v == [] for v in out.values()), 'a bad message produced output'
    assert ros.logged(node.get_name(), 'not finite for joints')
    assert ros.logged(node.get_name(), 'length mismatch')
    # Still alive: a good message is answered.
    pub.publish(make_joint_state(UR5E_JOINTS, position=q))
    assert ros.spin_until(lambda: all(v for v in out.values()))
    np.testing.assert_allclose(out['gravity_torques'][-1].effort,
                               rd.gravity_torques(ur5e_model, q), atol=1e-9)
    _all_finite(out)
    # Run-time parameters: validated, and they take effect.
    ok = node.set_parameters([Parameter('publish_mass_matrix', value=False)])
    assert ok[0].successful
    for name, value in (('task_space_reference', 'tool'), ('task_space_damping', -1.0)):
        result = node.set_parameters([Parameter(name, value=value)])[0]
        assert not result.successful and name in result.reason
    n_mass = len(out['mass_matrix'])
    pub.publish(make_joint_state(UR5E_JOINTS, position=q))
    assert ros.spin_until(lambda: len(out['gravity_torques']) >= 2)
    ros.spin(0.1)
    assert len(out['mass_matrix']) == n_mass


def test_panda_tree_with_fingers_locked(graph):
    """A 7-joint arm whose URDF is a tree (two finger joints): joints = the arm, fingers locked
    at 0; /joint_states also carries the fingers, which are ignored."""
    from _node_harness import PANDA_URDF
    if not PANDA_URDF.exists():
        pytest.skip('example-robot-data (test dependency) is not installed')
    ros = graph
    arm = [f'panda_joint{i}' for i in range(1, 8)]
    node = ros.add(DynamicsNode, {'urdf_path': str(PANDA_URDF), 'joints': arm})
    out = _outputs(ros, node)
    pub = ros.publisher(JointState, '/joint_states')
    q = np.array([0.1, -0.4, 0.2, -2.0, 0.3, 1.6, 0.7])
    pub.publish(make_joint_state(arm[::-1] + ['panda_finger_joint1', 'panda_finger_joint2'],
                                 position=list(q[::-1]) + [0.04, 0.04]))
    assert ros.spin_until(lambda: all(out.values()))
    model = rd.load_urdf(str(PANDA_URDF),
                         locked_joints={'panda_finger_joint1': 0.0, 'panda_finger_joint2': 0.0})
    assert list(model.joint_names) == arm
    np.testing.assert_allclose(out['gravity_torques'][-1].effort, rd.gravity_torques(model, q),
                               atol=1e-9)
    assert [d.size for d in out['mass_matrix'][-1].layout.dim] == [7, 7]
    assert [d.size for d in out['task_space_inertia'][-1].layout.dim] == [6, 6]
    _all_finite(out)


def test_a_tree_with_several_tips_and_no_tip_link_publishes_no_task_space_inertia(graph):
    """The full Panda, fingers moving: two tips and no tip_link. g, c and M are published; the
    task-space inertia (at which tip?) is not, and the node says so once, naming the tips. With
    tip_link, Λ is published at that frame. panda_finger_joint2 mimics panda_finger_joint1: it has
    no coordinate, and its entry in /joint_states is ignored."""
    from _node_harness import PANDA_URDF
    if not PANDA_URDF.exists():
        pytest.skip('example-robot-data (test dependency) is not installed')
    ros = graph
    node = ros.add(DynamicsNode, {'urdf_path': str(PANDA_URDF)})
    out = _outputs(ros, node)
    pub = ros.publisher(JointState, '/joint_states')
    names = [f'panda_joint{i}' for i in range(1, 8)] + ['panda_finger_joint1', 'panda_finger_joint2']
    q = np.array([0.1, -0.4, 0.2, -2.0, 0.3, 1.6, 0.7, 0.02, 0.02])
    for k in range(5):
        pub.publish(make_joint_state(names, stamp=_stamp(k), position=q))
        ros.spin(0.05)
    assert ros.spin_until(lambda: len(out['gravity_torques']) >= 5 and len(out['mass_matrix']) >= 5)
    ros.spin(0.2)
    assert not out['task_space_inertia'], 'a task-space inertia at an arbitrary tip'
    assert list(out['gravity_torques'][-1].name) == names[:8]
    np.testing.assert_allclose(out['gravity_torques'][-1].effort,
                               rd.gravity_torques(rd.load_urdf(str(PANDA_URDF)), q[:8]), atol=1e-9)
    warnings = ros.warnings(node.get_name(), 'tip_link')
    assert len(warnings) == 1, warnings
    assert "2 tips ['panda_leftfinger', 'panda_rightfinger']" in warnings[0], warnings[0]
    assert 'No ~/task_space_inertia' in warnings[0]
    # tip_link set: the chain to the hand's TCP, fingers locked, Λ at panda_hand_tcp
    ros.remove_all()
    node = ros.add(DynamicsNode, {'urdf_path': str(PANDA_URDF), 'tip_link': 'panda_hand_tcp'})
    out = _outputs(ros, node)
    pub.publish(make_joint_state(names, position=q))
    assert ros.spin_until(lambda: out['task_space_inertia'])
    model = rd.load_urdf(str(PANDA_URDF), tip_link='panda_hand_tcp')
    np.testing.assert_allclose(
        multiarray_to_matrix(out['task_space_inertia'][-1]),
        rd.task_space_inertia(model, q[:7], 'panda_hand_tcp', reference='world_aligned'),
        rtol=1e-9, atol=1e-9)


def test_default_node_names():
    import inspect

    from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
    from robot_dynamics_ros.nodes.simulator_node import SimulatorNode
    for cls, name in ((DynamicsNode, 'dynamics_node'),
                      (ComputedTorqueController, 'computed_torque_controller'),
                      (SimulatorNode, 'simulator_node')):
        assert inspect.signature(cls.__init__).parameters['node_name'].default == name


@pytest.mark.parametrize('parameters, message', [
    ({'robot_description': '<robot name="x"><link name="a"/><joint name="j" type="revolute">'},
     'cannot build the robot model from the parameter'),
    ({'robot_description': 'not xml at all'}, 'is not URDF XML'),
    ({'urdf_path': '/nonexistent/robot.urdf'}, "cannot read urdf_path"),
    ({'robot_description': '<robot/>', 'gravity': [0.0, -9.81]}, 'cannot build the robot model'),
    ({'robot_description': '<robot name="x"/>' + ' ' * 2000, 'max_description_bytes': 1000},
     'from the parameter refused: 2017 bytes, more than max_description_bytes = 1000'),
    ({'urdf_path': str(UR5E_URDF), 'max_description_bytes': 5000}, 'from the file refused'),
])
def test_bad_model_parameters_leave_the_node_running_without_a_model(graph, parameters, message):
    ros = graph
    node = ros.add(DynamicsNode, parameters)
    gravity = ros.collect(JointState, f'/{node.get_name()}/gravity_torques')
    assert ros.spin_until(lambda: ros.warnings(node.get_name(), message), 3.0), \
        [m.msg for m in ros.logs]
    assert node.model is None
    pub = ros.publisher(JointState, '/joint_states')
    pub.publish(make_joint_state(UR5E_JOINTS, position=UR5E_HOME))
    assert ros.spin_until(lambda: ros.warnings(node.get_name(), 'no robot model yet'), 3.0)
    assert gravity == []


# -- bad input: bounded warnings, nothing published that is not a new, possible state -----------

def test_a_flood_of_different_malformed_messages_gives_few_short_warnings(graph, ur5e_xml):
    """Malformed messages that differ each time were each logged (the throttle keyed on the
    error text, names included) and each key kept: 2,654 messages in 10 s gave 268 MB of log;
    one message with 100,000 duplicate names gave one 500 KB line, also on /rosout. Now one
    warning per kind of problem and period, each line bounded, the throttle's keys bounded."""
    ros = graph
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml})
    out = _outputs(ros, node)
    pub = ros.publisher(JointState, '/joint_states', qos=1000)
    q = np.array(UR5E_HOME)
    for k in range(300):
        names = [f'flood_{k}_{i}' for i in range(200)] + list(UR5E_JOINTS)
        bad = make_joint_state(names + [UR5E_JOINTS[k % 6]], position=np.zeros(207))
        pub.publish(bad)                                     # a model joint named twice
        pub.publish(make_joint_state(names, position=np.zeros(206 - k % 5)))    # lengths differ
        if k % 20 == 0:
            ros.spin(0.01)
    huge = make_joint_state(['shoulder_pan_joint'] * 100_000, position=np.zeros(100_000))
    pub.publish(huge)
    pub.publish(make_joint_state(UR5E_JOINTS, position=q))
    assert ros.spin_until(lambda: out['gravity_torques'], 10.0), 'the node stopped answering'
    ros.spin(0.3)
    warnings = ros.warnings(node.get_name())
    assert 1 <= len(warnings) <= 3, [w[:100] for w in warnings]
    assert all(len(w) <= 1100 for w in warnings), [len(w) for w in warnings]
    assert len(node._throttle) <= 10
    _all_finite(out)


def test_messages_that_update_no_joint_publish_nothing(graph, ur5e_xml, ur5e_model):
    """An empty JointState, or one naming only joints the model does not have, used to give a
    full set of outputs from the cached state stamped with the new stamp. A gripper's NaN (a
    joint the model does not track) dropped the whole message."""
    ros = graph
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml})
    out = _outputs(ros, node)
    pub = ros.publisher(JointState, '/joint_states')
    q = np.array(UR5E_HOME)
    pub.publish(make_joint_state(UR5E_JOINTS, stamp=_stamp(0), position=q))
    assert ros.spin_until(lambda: all(out.values()))
    pub.publish(make_joint_state([], stamp=_stamp(1)))
    pub.publish(make_joint_state(['gripper_finger_joint'], stamp=_stamp(2), position=[0.01]))
    ros.spin(0.4)
    assert all(len(v) == 1 for v in out.values()), {k: len(v) for k, v in out.items()}
    assert ros.logged(node.get_name(), 'names none of the joints')
    q2 = q + 0.1
    pub.publish(make_joint_state(UR5E_JOINTS + ('gripper_finger_joint',), stamp=_stamp(3),
                                 position=list(q2) + [math.nan]))
    assert ros.spin_until(lambda: len(out['gravity_torques']) == 2), "the gripper's NaN dropped it"
    assert out['gravity_torques'][-1].header.stamp == _stamp(3)
    np.testing.assert_allclose(out['gravity_torques'][-1].effort,
                               rd.gravity_torques(ur5e_model, q2), atol=1e-9)


def test_physically_impossible_states_publish_nothing(graph, ur5e_xml):
    ros = graph
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml, 'position_tolerance': 0.2})
    out = _outputs(ros, node)
    pub = ros.publisher(JointState, '/joint_states')
    q = np.array(UR5E_HOME)
    pub.publish(make_joint_state(UR5E_JOINTS, position=q))
    assert ros.spin_until(lambda: all(out.values()))
    elbow = UR5E_JOINTS.index('elbow_joint')                # limits ±π
    for value in (1e300, np.pi + 0.21, -np.pi - 0.3):
        bad = q.copy()
        bad[elbow] = value
        pub.publish(make_joint_state(UR5E_JOINTS, position=bad))
    pub.publish(make_joint_state(UR5E_JOINTS, position=q, velocity=[0, 0, 0, 0, 1e6, 0]))
    ros.spin(0.4)
    assert all(len(v) == 1 for v in out.values()), {k: len(v) for k, v in out.items()}
    warning = ros.warnings(node.get_name(), 'elbow_joint')
    assert warning and '1e+300' in warning[0] and '[-3.34159, 3.34159]' in warning[0], warning
    assert ros.logged(node.get_name(), 'implausible velocity 1e+06')
    bad = q.copy()
    bad[elbow] = np.pi + 0.19                               # within the tolerance
    pub.publish(make_joint_state(UR5E_JOINTS, position=bad))
    assert ros.spin_until(lambda: len(out['gravity_torques']) == 2)
    _all_finite(out)


def _chain(n, name='chain'):
    """A URDF chain of n revolute joints j1..jn (a model that takes a while to build)."""
    parts = [f'<robot name="{name}">', '<link name="l0"/>']
    for k in range(1, n + 1):
        parts.append(f'<link name="l{k}"><inertial><mass value="1"/><origin xyz="0 0 0.05"/><inertia '
                     'ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                     f'<joint name="j{k}" type="revolute"><parent link="l{k - 1}"/><child link="l{k}"/>'
                     '<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>'
                     '<limit lower="-3" upper="3" effort="100" velocity="2"/></joint>')
    return ''.join(parts) + '</robot>'


def test_descriptions_from_the_topic_are_bounded_and_built_off_the_executor(graph, ur5e_xml):
    """A description above max_description_bytes is refused before it is deserialized and the
    current model kept; a large valid one is built in a worker thread while the node keeps
    serving joint states with the model it has, then swapped in."""
    ros = graph
    # A topic of its own: the probe's publishers of /robot_description from other tests keep
    # their last description, delivered whenever they match (the newest description wins).
    topic = f'/robot_description_{time.monotonic_ns()}'
    node = ros.add(DynamicsNode, {'max_description_bytes': 400_000,
                                  'publish_task_space_inertia': False},
                   cli_args=['--ros-args', '-r', f'robot_description:={topic}'])
    gravity = ros.collect(JointState, f'/{node.get_name()}/gravity_torques')
    description = ros.publisher(String, topic, TRANSIENT)
    description.publish(String(data=ur5e_xml))
    assert ros.spin_until(lambda: node.model is not None and node.model.nq == 6, 10.0)
    states = ros.publisher(JointState, '/joint_states')
    q = np.array(UR5E_HOME)
    too_big = _chain(1) + '<!--' + 'x' * 500_000 + '-->'
    description.publish(String(data=too_big))
    assert ros.spin_until(lambda: ros.warnings(node.get_name(), 'max_description_bytes'), 5.0)
    assert node.model.nq == 6 and node._source.urdf_xml == ur5e_xml
    # A 1000-joint chain (about 0.35 MB): the node answers UR5e states while it is built.
    description.publish(String(data=_chain(1000)))
    answered_while_building = 0
    deadline = time.monotonic() + 180.0     # generous: numba may recompile the kernels meanwhile
    while node.model.nq == 6 and time.monotonic() < deadline:
        n = len(gravity)
        states.publish(make_joint_state(UR5E_JOINTS, position=q))
        if ros.spin_until(lambda: len(gravity) > n, 2.0) and node._source.building:
            answered_while_building += 1
    assert node.model.nq == 1000, 'the new model was never swapped in'
    assert answered_while_building >= 3, answered_while_building
    assert list(gravity[-1].name) == list(UR5E_JOINTS)
    # The new model answers its own joints.
    names = [f'j{k}' for k in range(1, 1001)]
    n = len(gravity)
    states.publish(make_joint_state(names, position=np.zeros(1000)))
    assert ros.spin_until(lambda: len(gravity) > n, 10.0)
    assert len(gravity[-1].effort) == 1000
