"""Messages <-> numpy arrays, joints matched BY NAME (no rclpy node needed, only message types).

- ``JointStateCache``: merges sensor_msgs/JointState messages (any joint order, partial messages
  from several publishers) into q, q̇ vectors in a fixed joint order.
- ``matrix_to_multiarray`` / ``multiarray_to_matrix``: row-major std_msgs/Float64MultiArray with
  layout.dim = [rows (label "rows", size r, stride r·c), cols (label "cols", size c, stride c)].
- ``vector_to_multiarray`` / ``multiarray_to_vector``: a flat vector (one dim, label "joints").
- ``index_map``: reorder a vector between two joint orders.

Bad input raises ``ValueError`` with a message fit for a log line; the nodes log it and drop the
message.
"""

import array
import math

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

__all__ = ['JointStateCache', 'joint_state_values', 'make_joint_state', 'matrix_to_multiarray',
           'multiarray_to_matrix', 'vector_to_multiarray', 'multiarray_to_vector', 'index_map',
           'all_finite', 'joint_trajectory_arrays']


def float64_field(values):
    """``values`` (any shape, read row-major) as the ``array.array('d')`` in which a float64[]
    message field is stored: assigned as is, without the per-element checks a list goes through."""
    return array.array('d', np.asarray(values, dtype=np.float64).tobytes())


def all_finite(*arrays):
    """True when every element of every array is finite (no NaN, no inf)."""
    return all(bool(np.isfinite(a).all()) for a in arrays)


def index_map(from_names, to_names):
    """Indices ``idx`` such that ``vector_in_to_order = vector_in_from_order[idx]``.

    >>> index_map(('a', 'b', 'c'), ('c', 'a', 'b')).tolist()
    [2, 0, 1]
    """
    position = {name: i for i, name in enumerate(from_names)}
    missing = [name for name in to_names if name not in position]
    if missing:
        raise ValueError(f'unknown joints {missing}; known joints are {list(from_names)}')
    return np.array([position[name] for name in to_names], dtype=np.intp)


def joint_state_values(msg):
    """Validate a JointState and return ``(names, position or None, velocity or None)``.

    ``position`` / ``velocity`` are float arrays aligned with ``names``, or None when the message
    leaves that field empty (allowed by sensor_msgs/JointState). The ``effort`` field is not used
    by these nodes and is not checked (drivers without torque sensing often fill it with NaN).
    Raises ValueError for duplicate names, a field whose length is neither 0 nor len(name), or
    a non-finite position/velocity.
    """
    names = list(msg.name)
    n = len(names)
    if len(set(names)) != n:
        raise ValueError(f'JointState has duplicate joint names {names}')
    fields = []
    for field in ('position', 'velocity'):
        values = getattr(msg, field)
        if len(values) == 0:
            fields.append(None)
            continue
        if len(values) != n:
            raise ValueError(f'JointState {field} has {len(values)} entries for {n} names '
                             f'{names} (length mismatch)')
        array = np.asarray(values, dtype=np.float64)
        if not np.isfinite(array).all():
            bad = [name for name, v in zip(names, array) if not math.isfinite(v)]
            raise ValueError(f'JointState {field} is not finite for joints {bad}')
        fields.append(array)
    return names, fields[0], fields[1]


class JointStateCache:
    """Latest position and velocity per joint, merged from any number of JointState messages.

    Policy:
    - joints are matched by name; names the cache does not track are ignored (and reported);
    - a joint counts as known once a position has been received for it;
    - a message without velocities leaves the velocities of its joints unchanged (zero if never
      given): an empty velocity field means "unknown", not "at rest";
    - a malformed message (see ``joint_state_values``) changes nothing;
    - ``update`` records the receive time per joint, so ``oldest_update_ns`` detects a publisher
      that stopped while others still publish.
    """

    def __init__(self, joint_names):
        self.joint_names = tuple(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        n = len(self.joint_names)
        self._q = np.zeros(n)
        self._qd = np.zeros(n)
        self._known = np.zeros(n, dtype=bool)
        self._complete = n == 0
        self._stamp_ns = np.zeros(n, dtype=np.int64)

    def update(self, msg, now_ns):
        """Merge ``msg`` (a JointState) received at ``now_ns``; return the ignored joint names.

        Raises ValueError (and keeps the previous state) when the message is malformed.
        """
        names, position, velocity = joint_state_values(msg)
        ignored = []
        for k, name in enumerate(names):
            i = self._index.get(name)
            if i is None:
                ignored.append(name)
                continue
            if position is not None:
                self._q[i] = position[k]
                self._known[i] = True
                self._stamp_ns[i] = now_ns
            if velocity is not None:
                self._qd[i] = velocity[k]
        if not self._complete:
            self._complete = bool(self._known.all())
        return ignored

    @property
    def complete(self):
        """True once a position has been received for every tracked joint."""
        return self._complete

    def missing(self):
        """Names of the tracked joints never heard of."""
        return [name for name, known in zip(self.joint_names, self._known) if not known]

    def arrays(self):
        """``(q, qd)``: copies, in ``joint_names`` order."""
        return self._q.copy(), self._qd.copy()

    def oldest_update_ns(self):
        """Receive time of the least recently updated joint (0 if some joint is unknown)."""
        return int(self._stamp_ns.min()) if len(self.joint_names) else 0


def make_joint_state(names, stamp=None, position=None, velocity=None, effort=None):
    """A JointState with the given names and (n,) fields (None leaves a field empty)."""
    msg = JointState()
    if stamp is not None:
        msg.header.stamp = stamp
    msg.name = list(names)
    if position is not None:
        msg.position = float64_field(position)
    if velocity is not None:
        msg.velocity = float64_field(velocity)
    if effort is not None:
        msg.effort = float64_field(effort)
    return msg


def matrix_to_multiarray(matrix):
    """Row-major Float64MultiArray of a 2-D array (dims "rows", "cols")."""
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f'matrix must be 2-D, got shape {matrix.shape}')
    rows, cols = matrix.shape
    msg = Float64MultiArray()
    msg.layout.dim = [
        MultiArrayDimension(label='rows', size=rows, stride=rows * cols),
        MultiArrayDimension(label='cols', size=cols, stride=cols),
    ]
    msg.layout.data_offset = 0
    msg.data = float64_field(matrix)
    return msg


def multiarray_to_matrix(msg):
    """Inverse of ``matrix_to_multiarray`` (reads the layout; ValueError if inconsistent)."""
    dims = msg.layout.dim
    if len(dims) != 2:
        raise ValueError(f'expected a 2-D layout, got {len(dims)} dimensions')
    rows, cols = dims[0].size, dims[1].size
    offset = msg.layout.data_offset
    data = np.asarray(msg.data, dtype=np.float64)
    if data.size < offset + rows * cols:
        raise ValueError(f'{data.size} values for a {rows}x{cols} matrix at offset {offset}')
    return data[offset:offset + rows * cols].reshape(rows, cols).copy()


def vector_to_multiarray(vector, label='joints'):
    """Float64MultiArray of a flat vector (one dim); what JointGroupEffortController expects."""
    vector = np.asarray(vector, dtype=np.float64).reshape(-1)
    msg = Float64MultiArray()
    msg.layout.dim = [MultiArrayDimension(label=label, size=vector.size, stride=vector.size)]
    msg.data = float64_field(vector)
    return msg


def multiarray_to_vector(msg, n):
    """The data of a Float64MultiArray as an (n,) array; ValueError for a wrong size or NaN/inf.

    The layout is ignored, as ros2_control's forward command controllers do.
    """
    data = np.asarray(msg.data, dtype=np.float64)
    if data.shape != (n,):
        raise ValueError(f'expected {n} values, got {data.size}')
    if not np.isfinite(data).all():
        raise ValueError(f'values are not finite: {data.tolist()}')
    return data


def joint_trajectory_arrays(msg):
    """Validate a trajectory_msgs/JointTrajectory and return its waypoints as arrays.

    Returns ``(names, times, positions, velocities, accelerations)``: times (N,) in seconds from
    the trajectory start (time_from_start), positions (N, m) for the m ``names``, and per point
    None (field empty) or an (m,) array for velocities and accelerations. Raises ValueError for
    no joint names, duplicate names, a field of the wrong length, non-finite values, or times that
    are negative or not strictly increasing. An empty ``points`` list gives N = 0.
    """
    names = list(msg.joint_names)
    m = len(names)
    if m == 0:
        raise ValueError('JointTrajectory has no joint_names')
    if len(set(names)) != m:
        raise ValueError(f'JointTrajectory has duplicate joint names {names}')
    times, positions, velocities, accelerations = [], [], [], []
    for k, point in enumerate(msg.points):
        t = point.time_from_start.sec + point.time_from_start.nanosec * 1e-9
        if len(point.positions) != m:
            raise ValueError(f'point {k} has {len(point.positions)} positions for {m} joints')
        fields = []
        for field in ('velocities', 'accelerations'):
            values = getattr(point, field)
            if len(values) not in (0, m):
                raise ValueError(f'point {k} has {len(values)} {field} for {m} joints')
            fields.append(np.asarray(values, dtype=np.float64) if len(values) else None)
        q = np.asarray(point.positions, dtype=np.float64)
        if not all_finite(q, *[f for f in fields if f is not None]):
            raise ValueError(f'point {k} has non-finite values')
        times.append(t)
        positions.append(q)
        velocities.append(fields[0])
        accelerations.append(fields[1])
    times = np.asarray(times, dtype=np.float64)
    if times.size and (times[0] < 0.0 or np.any(np.diff(times) <= 0.0)):
        raise ValueError(f'time_from_start must be >= 0 and strictly increasing, got '
                         f'{times.tolist()}')
    positions = np.asarray(positions, dtype=np.float64).reshape(len(times), m)
    return names, times, positions, velocities, accelerations
