"""Unit tests of the message conversions (message types only: no node, no DDS)."""

import math

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_ros.nodes.common import float_array, gain_vector, string_list
from robot_dynamics_ros.nodes.conversions import (
    JointStateCache,
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
    ignored = cache.update(make_joint_state(['c', 'x'], position=[3.0, 9.0], velocity=[30, 90]), 1)
    assert ignored == ['x']
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
    for msg in bad:
        with pytest.raises(ValueError):
            cache.update(msg, 2)
    np.testing.assert_array_equal(cache.arrays()[0], [1, 2, 3])
    assert cache.oldest_update_ns() == 1


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
    with pytest.raises(ValueError):
        joint_trajectory_arrays(msg)


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
