"""Unit tests of the message conversions (message types only: no node, no DDS)."""

import math
import re
from types import SimpleNamespace

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_ros.logic.input_guard import MAX_LOG_CHARS, BadInput, StateLimits
from robot_dynamics_ros.nodes.common import float_array, gain_vector, string_list
from robot_dynamics_ros.nodes.conversions import (
    JointStateCache,
    Merged,
    index_map,
    joint_state_values,
    joint_trajectory_arrays,
    make_joint_state,
    matrix_to_multiarray,
    multiarray_to_matrix,
    multiarray_to_vector,
    vector_to_multiarray,
)

NAMES = ('a', 'b', 'c')


def test_cache_merges_partial_reordered_messages_by_name():
    cache = JointStateCache(NAMES)
    merged = cache.update(make_joint_state(['c', 'x'], position=[3.0, 9.0], velocity=[30, 90]), 1)
    assert merged == Merged(updated=1, ignored=1)
    assert not cache.complete and cache.missing() == ['a', 'b']
    cache.update(make_joint_state(['b', 'a'], position=[2.0, 1.0]), 2)
    assert cache.complete
    q, qd = cache.arrays()
    np.testing.assert_array_equal(q, [1.0, 2.0, 3.0])
    # No velocity in the second message: unknown, so zero for a and b, kept for c.
    np.testing.assert_array_equal(qd, [0.0, 0.0, 30.0])
    assert cache.oldest_update_ns() == 1
    cache.update(make_joint_state(['c'], position=[3.5]), 5)
    q, qd = cache.arrays()
    assert q[2] == 3.5 and qd[2] == 30.0   # velocity kept when a message omits it
    assert cache.oldest_update_ns() == 2


def test_cache_keeps_state_on_bad_messages():
    cache = JointStateCache(NAMES)
    cache.update(make_joint_state(NAMES, position=[1, 2, 3]), 1)
    bad = [
        make_joint_state(NAMES, position=[1, math.nan, 3]),
        make_joint_state(NAMES, position=[1, 2]),
        make_joint_state(NAMES, position=[1, 2, 3], velocity=[0, math.inf, 0]),
        make_joint_state(['a', 'a', 'b'], position=[1, 2, 3]),
    ]
    kinds = []
    for msg in bad:
        with pytest.raises(BadInput) as error:
            cache.update(msg, 2)
        kinds.append(error.value.kind)
    assert kinds == ['nonfinite', 'length', 'nonfinite', 'duplicate']
    np.testing.assert_array_equal(cache.arrays()[0], [1, 2, 3])
    assert cache.oldest_update_ns() == 1


def test_messages_that_update_no_tracked_joint_are_not_a_new_state():
    """Empty, unknown joints only, or no positions and velocities: nothing changes, and the
    update says so (the nodes then neither publish nor step the controller)."""
    cache = JointStateCache(NAMES)
    cache.update(make_joint_state(NAMES, position=[1, 2, 3]), 1)
    for msg, ignored in ((make_joint_state([]), 0),
                         (make_joint_state(['x', 'y'], position=[5, 6]), 2),
                         (make_joint_state(['a', 'x']), 1)):
        assert cache.update(msg, 2) == Merged(0, ignored)
    assert cache.arrays()[0].tolist() == [1, 2, 3] and cache.oldest_update_ns() == 1


def test_untracked_joints_are_ignored_entirely():
    """A gripper's NaN, or a joint the model does not track named twice, drops nothing."""
    cache = JointStateCache(NAMES)
    msg = make_joint_state(['a', 'gripper', 'b', 'c', 'gripper'], position=[1, math.nan, 2, 3, 0],
                           velocity=[0, math.inf, 0, 0, 0])
    assert cache.update(msg, 1) == Merged(3, 2)
    assert cache.complete and cache.arrays()[0].tolist() == [1, 2, 3]


LIMITED = SimpleNamespace(joint_names=('r', 'c', 'p'), joint_types=('revolute', 'continuous', 'prismatic'),
                          lower=np.array([-1.0, -np.inf, 0.0]), upper=np.array([1.0, np.inf, 0.5]),
                          velocity_limit=np.array([2.0, 0.0, 0.1]))


def test_physically_impossible_states_are_dropped():
    limits = StateLimits.from_model(LIMITED, position_tolerance=0.1, prismatic_tolerance=0.01,
                                    velocity_factor=10.0)
    cache = JointStateCache(LIMITED.joint_names, limits)
    good = [1.09, 1e5, 0.509]                       # within limit + tolerance; continuous: any < 1e6
    cache.update(make_joint_state(LIMITED.joint_names, position=good, velocity=[19, 5e5, 0.9]), 1)
    for position, velocity, kind, text in (
            ([1e300, 0, 0], None, 'position_limit', "1e+300 of joint 'r'"),
            ([-1.11, 0, 0], None, 'position_limit', '[-1.1, 1.1]'),
            ([0, 0, 0.52], None, 'position_limit', "joint 'p'"),
            ([0, 2e6, 0], None, 'position_limit', "joint 'c'"),
            ([0, 0, 0], [21, 0, 0], 'velocity_limit', '±20'),
            ([0, 0, 0], [0, 1e7, 0], 'velocity_limit', "joint 'c'")):
        with pytest.raises(BadInput, match=re.escape(text)) as error:
            cache.update(make_joint_state(LIMITED.joint_names, position=position,
                                          velocity=velocity), 2)
        assert error.value.kind == kind
    q, qd = cache.arrays()
    assert q.tolist() == good and qd.tolist() == [19, 5e5, 0.9] and cache.oldest_update_ns() == 1
    # The tolerances are parameters: 0 makes the URDF limits exact.
    cache.limits = StateLimits.from_model(LIMITED, position_tolerance=0.0)
    with pytest.raises(BadInput):
        cache.update(make_joint_state(['r'], position=[1.01]), 3)


def test_error_messages_do_not_grow_with_the_message():
    """100,000 names, each long: the error names a few of them and counts the rest."""
    names = [f'joint_{k:06d}_' + 'x' * 200 for k in range(100_000)]
    for msg, call in (
            (make_joint_state(names + names[:1], position=np.zeros(100_001)), joint_state_values),
            (make_joint_state(names, position=np.full(100_000, math.nan)), joint_state_values),
            (make_joint_state(['a'] * 100_000, position=np.zeros(100_000)),
             lambda m: JointStateCache(NAMES).update(m, 1)),
            (Float64MultiArray(data=[math.nan] * 100_000), lambda m: multiarray_to_vector(m, 100_000)),
            (names, lambda m: index_map(NAMES, m))):
        with pytest.raises(BadInput) as error:
            call(msg)
        assert len(str(error.value)) < MAX_LOG_CHARS, str(error.value)[:200]


def test_effort_is_not_validated():
    names, q, qd = joint_state_values(make_joint_state(['a'], position=[1.0], effort=[math.nan]))
    assert names == ['a'] and q.tolist() == [1.0] and qd is None


def test_matrix_roundtrip_and_layout():
    M = np.arange(12.0).reshape(3, 4)
    msg = matrix_to_multiarray(M)
    d = msg.layout.dim
    assert [x.label for x in d] == ['rows', 'cols']
    assert [x.size for x in d] == [3, 4] and [x.stride for x in d] == [12, 4]
    assert list(msg.data) == list(range(12))
    np.testing.assert_array_equal(multiarray_to_matrix(msg), M)


def test_vector_multiarray():
    msg = vector_to_multiarray([1.0, 2.0])
    assert list(msg.data) == [1.0, 2.0] and msg.layout.dim[0].size == 2
    np.testing.assert_array_equal(multiarray_to_vector(msg, 2), [1.0, 2.0])
    for data, n in (([1.0], 2), ([1.0, math.nan], 2)):
        with pytest.raises(ValueError):
            multiarray_to_vector(Float64MultiArray(data=data), n)


def test_index_map():
    assert index_map(NAMES, ('c', 'a')).tolist() == [2, 0]
    with pytest.raises(ValueError, match='unknown joints'):
        index_map(NAMES, ('z',))


def _point(t, q, v=(), a=()):
    duration = Duration(sec=int(t), nanosec=int(round(t % 1 * 1e9)))
    return JointTrajectoryPoint(positions=list(q), velocities=list(v), accelerations=list(a),
                                time_from_start=duration)


def test_joint_trajectory_arrays():
    msg = JointTrajectory(joint_names=['b', 'a'],
                          points=[_point(0.5, [1, 2], [0, 0]), _point(1.25, [3, 4], [], [1, 1])])
    names, t, q, v, a = joint_trajectory_arrays(msg)
    assert names == ['b', 'a']
    np.testing.assert_allclose(t, [0.5, 1.25])
    np.testing.assert_array_equal(q, [[1, 2], [3, 4]])
    assert v[1] is None and a[0] is None and a[1].tolist() == [1, 1]


@pytest.mark.parametrize('msg', [
    JointTrajectory(joint_names=[], points=[]),
    JointTrajectory(joint_names=['a', 'a'], points=[_point(1, [0, 0])]),
    JointTrajectory(joint_names=['a'], points=[_point(1, [0, 0])]),
    JointTrajectory(joint_names=['a'], points=[_point(1, [0], [0, 0])]),
    JointTrajectory(joint_names=['a'], points=[_point(1, [math.nan])]),
    JointTrajectory(joint_names=['a'], points=[_point(1, [0]), _point(1, [1])]),
])
def test_joint_trajectory_arrays_rejects(msg):
    with pytest.raises(BadInput):
        joint_trajectory_arrays(msg)


def test_joint_trajectory_arrays_of_many_points():
    """Checked field by field over all points: the same arrays as point by point."""
    rng = np.random.default_rng(3)
    points = [_point(0.01 * (k + 1), rng.normal(size=3), rng.normal(size=3) if k % 3 else (),
                     rng.normal(size=3) if k % 5 == 0 else ()) for k in range(500)]
    names, t, q, v, a = joint_trajectory_arrays(JointTrajectory(joint_names=['x', 'y', 'z'],
                                                                points=points))
    np.testing.assert_allclose(t, [0.01 * (k + 1) for k in range(500)], rtol=0, atol=1e-9)
    for k, p in enumerate(points):
        assert q[k].tolist() == list(p.positions)
        assert (v[k] is None) == (k % 3 == 0) and (a[k] is None) == (k % 5 != 0)
        if v[k] is not None:
            assert v[k].tolist() == list(p.velocities)
    points[321].accelerations = [1.0, math.inf, 0.0]
    with pytest.raises(BadInput, match='point 321 has non-finite'):
        joint_trajectory_arrays(JointTrajectory(joint_names=['x', 'y', 'z'], points=points))


def test_parameter_helpers():
    np.testing.assert_array_equal(gain_vector('kp', [5.0], 3), [5, 5, 5])
    np.testing.assert_array_equal(gain_vector('kp', [1, 2, 3], 3), [1, 2, 3])
    for bad in ([-1.0], [1.0, 2.0], [], ['x'], [math.nan]):
        with pytest.raises(ValueError):
            gain_vector('kp', bad, 3)
    assert float_array('g', [0, 0, -9.81]).tolist() == [0, 0, -9.81]
    assert string_list('joints', []) == [] and string_list('joints', ['a']) == ['a']
    with pytest.raises(ValueError):
        string_list('joints', [1.0])


def test_poses_and_quaternions_round_trip():
    """set_pose then pose_to_matrix gives T back (rotations near 0 and π, about every axis); a scaled
    quaternion is normalised (1e300 too); a zero or non-finite one is refused."""
    from geometry_msgs.msg import Pose

    from robot_dynamics_ros.dynamics.spatial import exp_coordinates
    from robot_dynamics_ros.nodes.conversions import pose_to_matrix, set_pose
    rng = np.random.default_rng(3)
    for angle in (0.0, 1e-9, 0.5, 2.0, np.pi - 1e-9, np.pi):
        for _ in range(10):
            axis = rng.normal(size=3)
            T = exp_coordinates(np.r_[angle * axis / np.linalg.norm(axis), rng.normal(size=3)])
            pose = set_pose(Pose(), T)
            o = pose.orientation
            assert o.w >= 0.0 and abs(math.hypot(o.x, o.y, o.z, o.w) - 1.0) < 1e-15
            np.testing.assert_allclose(pose_to_matrix(pose), T, atol=1e-14)
    pose = Pose()
    pose.orientation.x = pose.orientation.w = 1e300
    quarter_turn = exp_coordinates([np.pi / 2, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(pose_to_matrix(pose)[:3, :3], quarter_turn[:3, :3], atol=1e-15)
    for bad in (0.0, math.nan):
        pose.orientation.x = pose.orientation.w = bad
        with pytest.raises(BadInput):
            pose_to_matrix(pose)
