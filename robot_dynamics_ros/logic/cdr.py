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


def header_stamp_ns(raw):
    """header.stamp of a serialized stamped message (its first field), in ns."""
    data = memoryview(raw).cast('B')
    if len(data) < _HEADER + 8:
        raise ValueError(f'a {len(data)}-byte message is too short for a header')
    sec, nanosec = struct.unpack_from(_byte_order(data) + 'iI', data, _HEADER)
    return sec * 1_000_000_000 + nanosec


def joint_trajectory_sizes(raw, max_names=None):
    """``(number of joint_names, number of points)`` of a serialized JointTrajectory.

    ``raw``: the message's bytes (bytes, bytearray or memoryview) as rclpy gives them to a
    ``raw=True`` subscription. With ``max_names``, a message with more names than that is not
    walked further: ``(names, None)`` (walking a huge name list would itself take time).
    Raises ValueError for an unknown encapsulation or bytes that end or contradict themselves
    before the points' count.
    """
    data = memoryview(raw).cast('B')
    order = _byte_order(data)
    u32 = struct.Struct(order + 'I')
    size = len(data)

    def read_u32(pos):
        pos += -(pos - _HEADER) % 4                  # align to 4 from the end of the header
        if pos + 4 > size:
            raise ValueError(f'the message ends at byte {size}, inside its header fields')
        return u32.unpack_from(data, pos)[0], pos + 4

    def skip_string(pos):
        length, pos = read_u32(pos)
        if length > size - pos:
            raise ValueError(f'a string of {length} bytes at byte {pos} of a {size}-byte message')
        return pos + length

    pos = _HEADER + 8                                # header.stamp
    pos = skip_string(pos)                           # header.frame_id
    names, pos = read_u32(pos)
    if names > (size - pos) // 5:                    # a string takes at least 5 bytes
        raise ValueError(f'{names} joint names cannot fit in {size - pos} bytes')
    if max_names is not None and names > max_names:
        return names, None
    for _ in range(names):
        pos = skip_string(pos)
    points, pos = read_u32(pos)
    if points > (size - pos) // MIN_POINT_BYTES:
        raise ValueError(f'{points} points cannot fit in {size - pos} bytes')
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
    data = memoryview(raw).cast('B')
    order = _byte_order(data)
    u32 = struct.Struct(order + 'I')
    sec_nsec = struct.Struct(order + 'iI')
    size = len(data)
    if size < _HEADER + 8:
        raise ValueError(f'a {size}-byte message is too short for a JointTrajectory')
    sec, nanosec = sec_nsec.unpack_from(data, _HEADER)

    def read_u32(pos):
        pos += -(pos - _HEADER) % 4
        if pos + 4 > size:
            raise ValueError(f'the message ends at byte {size}, inside a field')
        return u32.unpack_from(data, pos)[0], pos + 4

    def read_string(pos):
        length, pos = read_u32(pos)
        if not 1 <= length <= size - pos:
            raise ValueError(f'a string of {length} bytes at byte {pos} of a {size}-byte message')
        return bytes(data[pos:pos + length - 1]).decode('utf-8'), pos + length

    _, pos = read_string(_HEADER + 8)                           # header.frame_id
    count, pos = read_u32(pos)
    if count > (size - pos) // 5:
        raise ValueError(f'{count} joint names cannot fit in {size - pos} bytes')
    names = []
    for _ in range(count):
        name, pos = read_string(pos)
        names.append(name)
    m = len(names)
    if m == 0:
        raise BadInput('no_joints', 'JointTrajectory has no joint_names')
    if len(set(names)) != m:
        twice = sorted(duplicates(names))
        raise BadInput('duplicate', f'JointTrajectory has duplicate joint names {short_list(twice)}')
    n_points, pos = read_u32(pos)
    if n_points > (size - pos) // MIN_POINT_BYTES:
        raise ValueError(f'{n_points} points cannot fit in {size - pos} bytes')
    # Per point and field: the count and the offset (from the CDR origin) of its float64 values.
    counts = np.zeros((n_points, 3), dtype=np.int64)
    offsets = np.zeros((n_points, 3), dtype=np.int64)
    seconds = np.zeros((n_points, 2), dtype=np.int64)
    unpack_u32, unpack_time = u32.unpack_from, sec_nsec.unpack_from
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
        seconds[k] = unpack_time(data, pos)
        pos += 8
    for field, name in enumerate(('positions', 'velocities', 'accelerations')):
        bad = np.flatnonzero((counts[:, field] != m) & ((counts[:, field] != 0) | (field == 0)))
        if bad.size:
            k = int(bad[0])
            raise BadInput('length', f'point {k} has {counts[k, field]} {name} for {m} joints')
    # Every value is 8-aligned from the CDR origin: one float64 view of the message, rows gathered.
    values = np.frombuffer(data, dtype=np.dtype(np.float64).newbyteorder(order), offset=_HEADER,
                           count=(size - _HEADER) // 8)
    columns = np.arange(m)

    def rows(field, points):
        return values[offsets[points, field][:, None] // 8 + columns].astype(np.float64)
    everything = np.arange(n_points)
    positions = rows(0, everything)
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
    times = seconds[:, 0] + seconds[:, 1] * 1e-9
    if times.size and (times[0] < 0.0 or np.any(np.diff(times) <= 0.0)):
        k = int(np.argmax(np.diff(times) <= 0.0)) + 1 if times[0] >= 0.0 else 0
        raise BadInput('times', f'time_from_start must be >= 0 and strictly increasing (point {k}: '
                                f'{times[k]:.9g} s)')
    return TrajectoryArrays(sec * 1_000_000_000 + nanosec, names, times, positions, *optional)
