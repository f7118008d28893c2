"""state_publisher over real DDS: /tf and /tf_static as robot_state_publisher sends them, the composed
root -> link transforms equal to Pinocchio's frame placements (1e-9), a late subscriber's /tf_static,
frame_prefix, mimic joints and a tree (the Panda of example-robot-data with its fingers), the rate
limit on the messages' stamps, joints missing from a message, and bad input."""

import math

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from robot_dynamics_ros.nodes.state_publisher import TF_QOS, TF_STATIC_QOS, StatePublisher

from _node_harness import PANDA_URDF, UR5E_JOINTS, UR5E_URDF

pin = pytest.importorskip('pinocchio')

TOL = 1e-9


def _matrix(transform):
    t, r = transform.translation, transform.rotation
    x, y, z, w = r.x, r.y, r.z, r.w
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w), t.x],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w), t.y],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y), t.z],
                     [0.0, 0.0, 0.0, 1.0]])


def _edges(*messages):
    """{child frame: (parent frame, T_parent,child)} of TFMessages (later ones win)."""
    edges = {}
    for msg in messages:
        for t in msg.transforms:
            edges[t.child_frame_id] = (t.header.frame_id, _matrix(t.transform))
    return edges


def _compose(edges, frame, root):
    """T_root,frame by walking the edges up from ``frame``."""
    T = np.eye(4)
    while frame != root:
        parent, T_parent = edges[frame]
        T = T_parent @ T
        frame = parent
    return T


def _pinocchio_placements(path, positions):
    """{link: T_root,link} of Pinocchio's BODY frames at ``positions`` ({joint: q}; continuous joints as
    (cos q, sin q)), with Pinocchio's own mimic joints."""
    model = pin.buildModelFromUrdf(str(path), mimic=True)
    data = model.createData()
    q = pin.neutral(model)
    for name, value in positions.items():
        if not model.existJointName(name):
            continue
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 2:
            q[joint.idx_q:joint.idx_q + 2] = math.cos(value), math.sin(value)
        elif joint.nq == 1:
            q[joint.idx_q] = value
    pin.framesForwardKinematics(model, data, q)
    return {f.name: data.oMf[i].homogeneous for i, f in enumerate(model.frames) if f.type == pin.BODY}


def _joint_state(names, positions, sec, nanosec=0):
    msg = JointState(name=list(names), position=[float(q) for q in positions])
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    return msg


def _start(graph, path, **parameters):
    node = graph.add(StatePublisher, {'urdf_path': str(path), 'publish_frequency': 0.0, **parameters})
    pub = graph.publisher(JointState, '/joint_states')
    return node, pub


def test_ur5e_links_equal_pinocchios_placements_and_late_subscribers_get_tf_static(graph):
    node, pub = _start(graph, UR5E_URDF)
    graph.spin(0.3)
    static = graph.collect(TFMessage, '/tf_static', TF_STATIC_QOS)      # subscribed after it was sent
    dynamic = graph.collect(TFMessage, '/tf', TF_QOS)
    assert graph.spin_until(lambda: static, 5.0), 'late subscriber got no /tf_static'
    rng = np.random.default_rng(7)
    for k in range(4):
        q = rng.uniform(-math.pi, math.pi, 6)
        pub.publish(_joint_state(UR5E_JOINTS, q, sec=10 + k))
        assert graph.spin_until(lambda: dynamic and dynamic[-1].transforms[0].header.stamp.sec == 10 + k, 5.0)
        edges = _edges(static[-1], dynamic[-1])
        reference = _pinocchio_placements(UR5E_URDF, dict(zip(UR5E_JOINTS, q)))
        root = node.publishing.tree.root_link
        for link in node.publishing.tree.links:
            np.testing.assert_allclose(_compose(edges, link, root), reference[link], rtol=0, atol=TOL,
                                       err_msg=link)
    tree = node.publishing.tree
    assert {t.child_frame_id for t in dynamic[-1].transforms} == {tree.joint[j].child for j in UR5E_JOINTS}
    fixed = {j.child for j in tree.joints if j.type == 'fixed'}
    assert fixed and {t.child_frame_id for t in static[-1].transforms} == fixed


def test_panda_tree_with_mimic_fingers_and_frame_prefix(graph):
    node, pub = _start(graph, PANDA_URDF, frame_prefix='arm1/')
    static = graph.collect(TFMessage, '/tf_static', TF_STATIC_QOS)
    dynamic = graph.collect(TFMessage, '/tf', TF_QOS)
    tree = node.publishing.tree
    assert tree.mimic_joints == ('panda_finger_joint2',)
    names = [f'panda_joint{i}' for i in range(1, 8)] + ['panda_finger_joint1']
    q = np.array([0.3, -0.5, 0.2, -2.0, 0.4, 1.6, -0.7, 0.031])
    assert graph.spin_until(lambda: static, 5.0)
    pub.publish(_joint_state(names, q, sec=3, nanosec=250))
    assert graph.spin_until(lambda: dynamic, 5.0)
    sent = dynamic[-1].transforms
    assert all(t.header.frame_id.startswith('arm1/') and t.child_frame_id.startswith('arm1/')
               for t in sent + static[-1].transforms)
    assert {(t.header.stamp.sec, t.header.stamp.nanosec) for t in sent} == {(3, 250)}
    # both fingers: two branches of the tree, the second following the first (mimic)
    assert {'arm1/panda_leftfinger', 'arm1/panda_rightfinger'} <= {t.child_frame_id for t in sent}
    edges = _edges(static[-1], dynamic[-1])
    reference = _pinocchio_placements(PANDA_URDF, dict(zip(names, q)))
    for link in tree.links:
        np.testing.assert_allclose(_compose(edges, 'arm1/' + link, 'arm1/' + tree.root_link), reference[link],
                                   rtol=0, atol=TOL, err_msg=link)


def test_rate_limit_on_stamps_and_joints_missing_keep_their_last_value(graph):
    _, pub = _start(graph, UR5E_URDF, publish_frequency=20.0)
    dynamic = graph.collect(TFMessage, '/tf', TF_QOS)
    graph.spin(0.2)
    home = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
    for k in range(200):                            # 0.2 s of a 1 kHz stream: 4 messages at 20 Hz
        pub.publish(_joint_state(UR5E_JOINTS, home, sec=5, nanosec=k * 1_000_000))
        graph.spin(0.002)
    graph.spin(0.5)
    stamps = [m.transforms[0].header.stamp.nanosec for m in dynamic]
    # (a message the subscription's queue dropped on a loaded machine moves the next one later)
    assert stamps[0] == 0 and len(stamps) in (3, 4) and min(np.diff(stamps)) >= 50_000_000, stamps
    # a message with the first joint only: the others keep their values
    pub.publish(_joint_state(UR5E_JOINTS[:1], [0.5], sec=6))
    n = len(dynamic)
    assert graph.spin_until(lambda: len(dynamic) == n + 1, 5.0)
    sent = {t.child_frame_id: _matrix(t.transform) for t in dynamic[-1].transforms}
    before = {t.child_frame_id: _matrix(t.transform) for t in dynamic[-2].transforms}
    assert sent.keys() == before.keys() and len(sent) == 6
    changed = [frame for frame in sent if not np.allclose(sent[frame], before[frame], atol=1e-12)]
    assert changed == ['shoulder_link']
    # time going backwards (a bag looping): sent again at once
    pub.publish(_joint_state(UR5E_JOINTS, home, sec=1))
    assert graph.spin_until(lambda: len(dynamic) == n + 2, 5.0)


def test_bad_joint_states_are_dropped_with_a_warning_and_nothing_nan_is_sent(graph):
    node, pub = _start(graph, UR5E_URDF)
    dynamic = graph.collect(TFMessage, '/tf', TF_QOS)
    graph.spin(0.2)
    q = [0.1] * 6
    pub.publish(_joint_state(UR5E_JOINTS, q[:5] + [float('nan')], sec=1))
    pub.publish(JointState(name=list(UR5E_JOINTS), position=q[:3]))
    assert graph.logged(node.get_name(), 'non-finite positions of')
    assert graph.logged(node.get_name(), '6 names but 3 positions')
    assert not dynamic
    pub.publish(_joint_state(UR5E_JOINTS + ('not_a_joint',), q + [2.0], sec=2))      # unknown name: ignored
    assert graph.spin_until(lambda: dynamic, 5.0)
    values = [v for t in dynamic[-1].transforms for v in (t.transform.translation.x, t.transform.rotation.w)]
    assert np.isfinite(values).all()


def test_a_description_that_cannot_be_read_leaves_the_node_running_without_a_tree(graph):
    node = graph.add(StatePublisher, {'robot_description': '<robot name="x"><link name="a"/>'})
    assert node.publishing is None
    assert graph.logged(node.get_name(), 'not used')


def test_a_description_from_a_file_is_republished_when_asked(graph):
    from std_msgs.msg import String

    from robot_dynamics_ros.nodes.description_source import ROBOT_DESCRIPTION_QOS

    graph.add(StatePublisher, {'urdf_path': str(UR5E_URDF), 'publish_robot_description': True})
    graph.spin(0.2)
    received = graph.collect(String, '/robot_description', ROBOT_DESCRIPTION_QOS)     # a late subscriber
    assert graph.spin_until(lambda: received, 5.0)
    assert received[-1].data == UR5E_URDF.read_text()
