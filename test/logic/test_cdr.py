"""robot_dynamics_ros.logic.cdr without ROS: the sizes, stamp and waypoints of a serialized
JointTrajectory, from bytes built here by hand in both byte orders (test/nodes/test_cdr_messages.py
checks them against rclpy's own serialization)."""

import struct

import pytest

from robot_dynamics_ros.logic.cdr import (
    MIN_POINT_BYTES,
    header_stamp_ns,
    joint_trajectory_sizes,
    read_joint_trajectory,
)


def _cdr(frame_id, names, points, order='<', point_bytes=MIN_POINT_BYTES):
    """A JointTrajectory's CDR: header, names, the points' count, then ``points`` empty points."""
    out = bytearray(b'\x00\x01\x00\x00' if order == '<' else b'\x00\x00\x00\x00')

    def align(n):
        out.extend(b'\x00' * (-(len(out) - 4) % n))

    def string(text):
        align(4)
        data = text.encode() + b'\x00'
        out.extend(struct.pack(order + 'I', len(data)) + data)
    out.extend(struct.pack(order + 'iI', 12, 34))
    string(frame_id)
    align(4)
    out.extend(struct.pack(order + 'I', len(names)))
    for name in names:
        string(name)
    align(4)
    out.extend(struct.pack(order + 'I', points))
    out.extend(bytes(points * point_bytes))
    return bytes(out)


@pytest.mark.parametrize('order', ['<', '>'])
@pytest.mark.parametrize('frame_id', ['', 'b', 'base', 'world_frame'])
def test_sizes_whatever_the_alignment(order, frame_id):
    for names in ([], ['a'], ['ab', 'abc', 'abcd', 'abcde'], [f'joint_{k}' for k in range(7)]):
        for points in (0, 1, 5):
            raw = _cdr(frame_id, names, points, order)
            assert joint_trajectory_sizes(raw) == (len(names), points)
            assert joint_trajectory_sizes(bytearray(raw)) == (len(names), points)


def test_a_name_list_above_max_names_is_not_walked():
    raw = _cdr('', [f'n{k}' for k in range(50)], 2)
    assert joint_trajectory_sizes(raw, max_names=6) == (50, None)
    assert joint_trajectory_sizes(raw, max_names=50) == (50, 2)


def test_malformed_bytes_raise():
    raw = _cdr('frame', ['a', 'b'], 3)
    for bad in (b'', b'\x00\x01', raw[:20], b'\x00\x07' + raw[2:],       # short, unknown encoding
                raw[:12] + struct.pack('<I', 10**9) + raw[16:],            # frame_id longer than all
                raw[:-1]):                                                 # the points do not fit
        with pytest.raises(ValueError):
            joint_trajectory_sizes(bad)
    # A count the bytes cannot hold is refused before anything is walked.
    names_at = len(_cdr('frame', [], 0)) - 8
    huge = bytearray(_cdr('frame', [], 0))
    huge[names_at:names_at + 4] = struct.pack('<I', 2**32 - 1)
    with pytest.raises(ValueError, match='cannot fit'):
        joint_trajectory_sizes(bytes(huge))


def test_header_stamp():
    assert header_stamp_ns(_cdr('', ['a'], 0)) == 12 * 10**9 + 34
    assert header_stamp_ns(_cdr('x', [], 0, order='>')) == 12 * 10**9 + 34
    with pytest.raises(ValueError):
        header_stamp_ns(b'\x00\x01\x00\x00\x00')


@pytest.mark.parametrize('order', ['<', '>'])
def test_read_joint_trajectory_from_bytes_built_by_hand(order):
    """Two points, the first with velocities, the second with accelerations and an effort."""
    out = bytearray(_cdr('base', ['a', 'b'], 0, order)[:-4])

    def align(n):
        out.extend(b'\x00' * (-(len(out) - 4) % n))

    def doubles(values):
        align(4)
        out.extend(struct.pack(order + 'I', len(values)))
        if values:
            align(8)
            out.extend(struct.pack(order + f'{len(values)}d', *values))
    align(4)
    out.extend(struct.pack(order + 'I', 2))
    for positions, velocities, accelerations, effort, (sec, nanosec) in (
            ([1.0, 2.0], [0.5, -0.5], [], [], (0, 500_000_000)),
            ([3.0, 4.0], [], [0.25, 0.125], [9.0], (1, 0))):
        for values in (positions, velocities, accelerations, effort):
            doubles(values)
        align(4)
        out.extend(struct.pack(order + 'iI', sec, nanosec))
    read = read_joint_trajectory(bytes(out))
    assert read.stamp_ns == 12 * 10**9 + 34 and read.names == ['a', 'b']
    assert read.times.tolist() == [0.5, 1.0] and read.positions.tolist() == [[1, 2], [3, 4]]
    assert read.velocities[0].tolist() == [0.5, -0.5] and read.velocities[1] is None
    assert read.accelerations[0] is None and read.accelerations[1].tolist() == [0.25, 0.125]
