"""A serialized trajectory_msgs/JointTrajectory read from its CDR bytes (ROS-free).

rclpy converts a whole message to Python objects before a callback sees it, holding the GIL: a
100,000-point trajectory takes seconds, during which no callback of the process runs. A node that
subscribes with ``raw=True`` gets the serialized bytes instead:

- ``joint_trajectory_sizes`` reads the number of joint names and of points, cheaply (no
  per-point work), so a trajectory too large to handle is refused before it is converted;
- ``read_joint_trajectory`` reads the stamp, the names and the waypoints as numpy arrays, without
  one Python object per point: its loop over the points is plain bytecode (a worker thread running
  it lets the executor run between bytecodes; rclpy's conversion is one C call holding the GIL)
  and it leaves nothing behind for the garbage collector.

Layout read (OMG CDR as ROS 2 middlewares serialize it: a 4-byte encapsulation header, 0x0000
big-endian or 0x0001 little-endian, then the fields; every primitive aligned to its own size,
counted from the end of the header; a string is a uint32 length including its NUL, then bytes):

    header.stamp      int32 sec, uint32 nanosec
    header.frame_id   string
    joint_names       uint32 count, then count strings
    points            uint32 count, then per point:
      positions, velocities, accelerations, effort: float64 sequences (uint32 count, then the
                      values, aligned to 8 when there are any)
      time_from_start int32 sec, uint32 nanosec

Example (a little-endian trajectory with frame_id "", joint_names ["a"] and 3 empty points):
    >>> import struct
    >>> raw = (b'\\x00\\x01\\x00\\x00' + struct.pack('<iI', 0, 0) + struct.pack('<I', 1) + b'\\x00'
    ...        + b'\\x00' * 3 + struct.pack('<II', 1, 2) + b'a\\x00' + b'\\x00' * 2
    ...        + struct.pack('<I', 3) + bytes(3 * MIN_POINT_BYTES))
    >>> joint_trajectory_sizes(raw)
    (1, 3)
"""

import collections
import struct

import numpy as np

from robot_dynamics_ros.logic.input_guard import BadInput, duplicates, short_list
from robot_dynamics_ros.logic.stamps import NS_PER_S

__all__ = ['joint_trajectory_sizes', 'header_stamp_ns', 'read_joint_trajectory', 'TrajectoryArrays',
           'MIN_POINT_BYTES']

_HEADER = 4                     # encapsulation id (2 bytes) + options (2 bytes)
_BYTE_ORDER = {b'\x00\x00': '>', b'\x00\x01': '<'}   # CDR_BE, CDR_LE
# A point with four empty sequences and its time_from_start: 4 × uint32 + 2 × 4 bytes. No point
# takes fewer bytes, so a message of B bytes has fewer than B / MIN_POINT_BYTES points.
MIN_POINT_BYTES = 24


def _byte_order(data):
    order = _BYTE_ORDER.get(bytes(data[:2]))
    if order is None:
        raise ValueError(f'not a CDR encapsulation this reader knows: {bytes(data[:4])!r}')
    return order


class _CdrBytes:
    """A serialized message being read: its bytes, byte order and size. Positions are byte offsets in
    the message; every primitive is aligned to its size counted from the CDR origin (the end of the
    encapsulation header)."""

    def __init__(self, raw):
        self.data = memoryview(raw).cast('B')
        self.order = _byte_order(self.data)
        self.size = len(self.data)
        self.unpack_u32 = struct.Struct(self.order + 'I').unpack_from
        self.unpack_time = struct.Struct(self.order + 'iI').unpack_from    # int32 sec, uint32 nanosec

    def u32(self, pos, inside='a field'):
        """(the uint32 at ``pos`` aligned to 4, the position after it); ValueError past the end."""
        pos += -(pos - _HEADER) % 4
        if pos + 4 > self.size:
            raise ValueError(f'the message ends at byte {self.size}, inside {inside}')
        return self.unpack_u32(self.data, pos)[0], pos + 4

    def string_end(self, pos, inside='a field', empty=True):
        """(the string at ``pos``'s length, the position after it); ValueError for a length past the
        end (or, ``empty`` False, a length 0: a string has at least its NUL)."""
        length, pos = self.u32(pos, inside)
        if length > self.size - pos or (length == 0 and not empty):
            raise ValueError(f'a string of {length} bytes at byte {pos} of a {self.size}-byte message')
        return length, pos + length


def header_stamp_ns(raw):
    """header.stamp of a serialized stamped message (its first field), in ns."""
    data = memoryview(raw).cast('B')
    if len(data) < _HEADER + 8:
        raise ValueError(f'a {len(data)}-byte message is too short for a header')
    sec, nanosec = struct.unpack_from(_byte_order(data) + 'iI', data, _HEADER)
    return sec * NS_PER_S + nanosec


def joint_trajectory_sizes(raw, max_names=None):
    """``(number of joint_names, number of points)`` of a serialized JointTrajectory.

    ``raw``: the message's bytes (bytes, bytearray or memoryview) as rclpy gives them to a
    ``raw=True`` subscription. With ``max_names``, a message with more names than that is not
    walked further: ``(names, None)`` (walking a huge name list would itself take time).
    Raises ValueError for an unknown encapsulation or bytes that end or contradict themselves
    before the points' count.
    """
    msg = _CdrBytes(raw)
    inside = 'its header fields'
    _, pos = msg.string_end(_HEADER + 8, inside)     # header.stamp, then header.frame_id
    names, pos = msg.u32(pos, inside)
    if names > (msg.size - pos) // 5:                # a string takes at least 5 bytes
        raise ValueError(f'{names} joint names cannot fit in {msg.size - pos} bytes')
    if max_names is not None and names > max_names:
        return names, None
    for _ in range(names):
        _, pos = msg.string_end(pos, inside)
    points, pos = msg.u32(pos, inside)
    if points > (msg.size - pos) // MIN_POINT_BYTES:
        raise ValueError(f'{points} points cannot fit in {msg.size - pos} bytes')
    return names, points


TrajectoryArrays = collections.namedtuple(
    'TrajectoryArrays', 'stamp_ns names times positions velocities accelerations')
TrajectoryArrays.__doc__ = """A JointTrajectory's content: ``stamp_ns`` (header.stamp in ns), ``names``
(list of str), ``times`` (N,) s, ``positions`` (N, m), and per point None (field empty) or an
(m,) array for ``velocities`` and ``accelerations``: what ``nodes.conversions.
joint_trajectory_arrays`` returns for the deserialized message (effort is not read)."""


def read_joint_trajectory(raw):
    """Decode and validate a serialized JointTrajectory (see module docstring).

    Raises ValueError for bytes that are not a JointTrajectory this reader knows, and BadInput
    with the kinds and checks of ``nodes.conversions.joint_trajectory_arrays``: no joint names,
    duplicate names, a point whose positions are not one per name (velocities, accelerations:
    0 or one per name), non-finite values, times negative or not strictly increasing.
    """
    msg = _CdrBytes(raw)
    if msg.size < _HEADER + 8:
        raise ValueError(f'a {msg.size}-byte message is too short for a JointTrajectory')
    sec, nanosec = msg.unpack_time(msg.data, _HEADER)
    names, pos = _joint_names(msg, _HEADER + 8)
    n_points, pos = msg.u32(pos)
    if n_points > (msg.size - pos) // MIN_POINT_BYTES:
        raise ValueError(f'{n_points} points cannot fit in {msg.size - pos} bytes')
    counts, offsets, time_from_start = _point_layout(msg, pos, n_points)
    for field, name in enumerate(('positions', 'velocities', 'accelerations')):
        bad = np.flatnonzero((counts[:, field] != len(names)) & ((counts[:, field] != 0) | (field == 0)))
        if bad.size:
            k = int(bad[0])
            raise BadInput('length', f'point {k} has {counts[k, field]} {name} for {len(names)} joints')
    positions, velocities, accelerations = _point_values(msg, counts, offsets, len(names))
    times = _times_from_start(time_from_start)
    return TrajectoryArrays(sec * NS_PER_S + nanosec, names, times, positions, velocities, accelerations)


def _joint_names(msg, pos):
    """(joint_names after header.frame_id at ``pos``, the position after them); BadInput for none or
    a name given twice."""
    _, pos = msg.string_end(pos, empty=False)                     # header.frame_id
    count, pos = msg.u32(pos)
    if count > (msg.size - pos) // 5:
        raise ValueError(f'{count} joint names cannot fit in {msg.size - pos} bytes')
    names = []
    for _ in range(count):
        length, end = msg.string_end(pos, empty=False)
        names.append(bytes(msg.data[end - length:end - 1]).decode('utf-8'))
        pos = end
    if not names:
        raise BadInput('no_joints', 'JointTrajectory has no joint_names')
    if len(set(names)) != len(names):
        twice = sorted(duplicates(names))
        raise BadInput('duplicate', f'JointTrajectory has duplicate joint names {short_list(twice)}')
    return names, pos


def _point_layout(msg, pos, n_points):
    """Where the points' values are, without reading them: per point and field (positions,
    velocities, accelerations) the count and the offset from the CDR origin of its float64 values
    (``counts``, ``offsets``, (n_points, 3)), and its time_from_start (sec, nanosec) (n_points, 2).
    Plain bytecode, no object per point (module docstring)."""
    data, size, unpack_u32, unpack_time = msg.data, msg.size, msg.unpack_u32, msg.unpack_time
    counts = np.zeros((n_points, 3), dtype=np.int64)
    offsets = np.zeros((n_points, 3), dtype=np.int64)
    time_from_start = np.zeros((n_points, 2), dtype=np.int64)
    for k in range(n_points):
        for field in range(4):          # positions, velocities, accelerations, effort
            pos += -(pos - _HEADER) % 4
            if pos + 4 > size:
                raise ValueError(f'the message ends at byte {size}, inside point {k}')
            n = unpack_u32(data, pos)[0]
            pos += 4
            if n:
                pos += -(pos - _HEADER) % 8
                if field < 3:
                    counts[k, field], offsets[k, field] = n, pos - _HEADER
                pos += 8 * n
        pos += -(pos - _HEADER) % 4
        if pos + 8 > size:
            raise ValueError(f'the message ends at byte {size}, inside point {k}')
        time_from_start[k] = unpack_time(data, pos)
        pos += 8
    return counts, offsets, time_from_start


def _point_values(msg, counts, offsets, m):
    """The points' positions (N, m), and their velocities and accelerations as a list of one (m,)
    array or None (field empty) per point; BadInput for a non-finite value. Every value is 8-aligned
    from the CDR origin: one float64 view of the message, its rows gathered."""
    n_points = counts.shape[0]
    values = np.frombuffer(msg.data, dtype=np.dtype(np.float64).newbyteorder(msg.order), offset=_HEADER,
                           count=(msg.size - _HEADER) // 8)
    columns = np.arange(m)

    def rows(field, points):
        return values[offsets[points, field][:, None] // 8 + columns].astype(np.float64)

    positions = rows(0, np.arange(n_points))
    finite = np.isfinite(positions).all(axis=1)
    optional = []
    for field in (1, 2):
        given = np.flatnonzero(counts[:, field])
        given_rows = rows(field, given)
        finite[given] &= np.isfinite(given_rows).all(axis=1)
        per_point = [None] * n_points
        for row, k in enumerate(given):
            per_point[k] = given_rows[row]
        optional.append(per_point)
    if not finite.all():
        raise BadInput('nonfinite', f'point {int(np.argmin(finite))} has non-finite values')
    return positions, *optional


def _times_from_start(time_from_start):
    """The points' time_from_start (N,) s from their (sec, nanosec); BadInput for a negative time or
    times not strictly increasing."""
    times = time_from_start[:, 0] + time_from_start[:, 1] * 1e-9
    if times.size and (times[0] < 0.0 or np.any(np.diff(times) <= 0.0)):
        k = int(np.argmax(np.diff(times) <= 0.0)) + 1 if times[0] >= 0.0 else 0
        raise BadInput('times', f'time_from_start must be >= 0 and strictly increasing (point {k}: '
                                f'{times[k]:.9g} s)')
    return times
