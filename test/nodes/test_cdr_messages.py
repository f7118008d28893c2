"""robot_dynamics_ros.logic.cdr against the middleware's own serialization (rclpy.serialization, message
types only: no node, no DDS): the sizes read from the bytes of every shape of JointTrajectory, and
the waypoints read from them equal those of the deserialized message."""

import itertools
import math

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from rclpy.serialization import deserialize_message, serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_ros.logic.cdr import MIN_POINT_BYTES, joint_trajectory_sizes, read_joint_trajectory
from robot_dynamics_ros.logic.input_guard import BadInput
from robot_dynamics_ros.nodes.conversions import joint_trajectory_arrays


def _trajectory(frame_id, names, n_points, width):
    msg = JointTrajectory(joint_names=names)
    msg.header.frame_id = frame_id
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1_700_000_000, 123
    msg.points = [JointTrajectoryPoint(positions=[0.5] * width, velocities=[0.1] * (width * (k % 2)),
                                       time_from_start=Duration(sec=k, nanosec=7))
                  for k in range(n_points)]
    return msg


@pytest.mark.parametrize('frame_id, names', list(itertools.product(
    ['', 'w', 'base', 'base_link', 'a' * 13],
    [[], ['j'], ['ab', 'abc'], ['shoulder_pan_joint', 'elbow_joint', 'wrist_1_joint']])))
def test_sizes_of_serialized_trajectories(frame_id, names):
    for n_points in (0, 1, 2, 7):
        for width in (0, 1, 3):
            raw = serialize_message(_trajectory(frame_id, names, n_points, width))
            assert joint_trajectory_sizes(raw) == (len(names), n_points)


def test_no_point_takes_fewer_than_the_minimum_bytes():
    """The byte-count bound the controller falls back on: no point takes fewer bytes (Fast CDR
    even pads each empty float64 sequence to 8 bytes: 40)."""
    sizes = [len(serialize_message(_trajectory('', ['a'], n, 0))) for n in range(10, 14)]
    assert min(b - a for a, b in zip(sizes, sizes[1:])) >= MIN_POINT_BYTES


def test_a_large_trajectory_is_read_without_walking_its_points():
    raw = serialize_message(_trajectory('base', ['a', 'b'], 20_000, 2))
    assert joint_trajectory_sizes(raw, max_names=2) == (2, 20_000)


def _random_trajectory(rng, n_points, names):
    m = len(names)
    msg = JointTrajectory(joint_names=names)
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
    msg.header.frame_id = 'f' * int(rng.integers(0, 9))
    t = 0.0
    for _ in range(n_points):
        t += float(rng.uniform(0.001, 0.5))
        sec = int(t)
        msg.points.append(JointTrajectoryPoint(
            positions=rng.normal(size=m).tolist(),
            velocities=rng.normal(size=m).tolist() if rng.random() < 0.5 else [],
            accelerations=rng.normal(size=m).tolist() if rng.random() < 0.3 else [],
            effort=rng.normal(size=int(rng.integers(0, 3))).tolist(),
            time_from_start=Duration(sec=sec, nanosec=int((t - sec) * 1e9))))
    return msg


def _same(a, b):
    """Two results of joint_trajectory_arrays / read_joint_trajectory (without the stamp)."""
    names, times, positions, velocities, accelerations = a
    assert names == b[0] and times.tolist() == b[1].tolist() and positions.tolist() == b[2].tolist()
    for ours, theirs in zip((velocities, accelerations), b[3:]):
        assert [None if v is None else v.tolist() for v in ours] == \
               [None if v is None else v.tolist() for v in theirs]


@pytest.mark.parametrize('seed', range(6))
def test_read_joint_trajectory_equals_rclpy_deserialization(seed):
    """The arrays read from the bytes are those of the deserialized message, value for value."""
    rng = np.random.default_rng(seed)
    names = [f'joint_{k}' * int(rng.integers(1, 3)) for k in range(int(rng.integers(1, 8)))]
    msg = _random_trajectory(rng, int(rng.integers(0, 300)), names)
    raw = serialize_message(msg)
    read = read_joint_trajectory(raw)
    assert read.stamp_ns == msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
    _same(read[1:], joint_trajectory_arrays(deserialize_message(raw, JointTrajectory)))


def _bad(msg, change):
    change(msg)
    return msg


@pytest.mark.parametrize('change, kind', [
    (lambda m: setattr(m, 'joint_names', []), 'no_joints'),
    (lambda m: setattr(m, 'joint_names', ['a', 'b', 'a']), 'duplicate'),
    (lambda m: setattr(m.points[1], 'positions', [1.0]), 'length'),
    (lambda m: setattr(m.points[2], 'velocities', [1.0, 2.0]), 'length'),
    (lambda m: setattr(m.points[0], 'accelerations', [0.0, math.inf, 0.0]), 'nonfinite'),
    (lambda m: setattr(m.points[3], 'positions', [math.nan, 0.0, 0.0]), 'nonfinite'),
    (lambda m: setattr(m.points[2], 'time_from_start', Duration(sec=0, nanosec=1)), 'times'),
])
def test_read_joint_trajectory_refuses_what_joint_trajectory_arrays_refuses(change, kind):
    msg = _bad(_random_trajectory(np.random.default_rng(1), 5, ['a', 'b', 'c']), change)
    raw = serialize_message(msg)
    with pytest.raises(BadInput) as ours:
        read_joint_trajectory(raw)
    with pytest.raises(BadInput) as theirs:
        joint_trajectory_arrays(deserialize_message(raw, JointTrajectory))
    assert ours.value.kind == theirs.value.kind == kind
    assert str(ours.value) == str(theirs.value)


def test_read_joint_trajectory_of_truncated_bytes_raises():
    raw = serialize_message(_random_trajectory(np.random.default_rng(2), 20, ['a', 'b']))
    size = 4 + 8 + 4 + 4 + 4 + 2 + 4 + 2 + 20 * 24          # well inside the points
    for cut in (0, 3, 10, 30, size // 2, size):
        with pytest.raises(ValueError):
            read_joint_trajectory(raw[:cut])
