"""Messages <-> numpy arrays, joints matched BY NAME (no rclpy node needed, only message types).

- ``JointStateCache``: merges sensor_msgs/JointState messages (any joint order, partial messages
  from several publishers) into q, q̇ vectors in a fixed joint order, keeping only physically
  possible states (``input_guard.StateLimits``).
- ``matrix_to_multiarray`` / ``multiarray_to_matrix``: row-major std_msgs/Float64MultiArray with
  layout.dim = [rows (label "rows", size r, stride r·c), cols (label "cols", size c, stride c)].
- ``vector_to_multiarray`` / ``multiarray_to_vector``: a flat vector (one dim, label "joints").
- ``index_map``: reorder a vector between two joint orders.
- ``wrench_vector`` / ``set_wrench``: geometry_msgs/Wrench <-> the wrench (m, f), angular first.
- ``pose_to_matrix`` / ``set_pose``: geometry_msgs/Pose <-> a 4x4 rigid transform (quaternion x, y,
  z, w; a finite non-unit quaternion is normalised, a zero one refused).

Bad input raises ``input_guard.BadInput`` (a ValueError with a ``kind``: the nodes throttle their
warning per kind) with a message fit for a log line: its length does not grow with the message's
(lists of names are shortened); the nodes log it and drop the message.
"""

import array
import collections
import math

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from robot_dynamics_ros.dynamics.spatial import rotation_quaternion
from robot_dynamics_ros.logic.cdr import read_joint_trajectory
from robot_dynamics_ros.logic.input_guard import BadInput, duplicates, short_list
from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['JointStateCache', 'Merged', 'joint_state_values', 'make_joint_state', 'quaternion_xyzw',
           'matrix_to_multiarray', 'multiarray_to_matrix', 'vector_to_multiarray',
           'multiarray_to_vector', 'index_map', 'all_finite', 'joint_trajectory_arrays',
           'joint_trajectory_reader',
           'pose_to_matrix', 'set_pose', 'wrench_vector', 'set_wrench', 'MIN_QUATERNION_NORM']

MIN_QUATERNION_NORM = 1e-6      # a quaternion shorter than this is no rotation: refused


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
        raise BadInput('unknown_joints', f'unknown joints {short_list(missing)}; known joints are '
                                         f'{short_list(list(from_names))}')
    return np.array([position[name] for name in to_names], dtype=np.intp)


def _check_lengths(msg, n):
    for field in ('position', 'velocity'):
        count = len(getattr(msg, field))
        if count not in (0, n):
            raise BadInput('length', f'JointState {field} has {count} entries for {n} names '
                                     '(length mismatch)')


def _finite_or_raise(values, names, field):
    if not np.isfinite(values).all():
        bad = [name for name, v in zip(names, values) if not math.isfinite(v)]
        raise BadInput('nonfinite', f'JointState {field} is not finite for joints '
                                    f'{short_list(bad)}')


def joint_state_values(msg):
    """Validate a whole JointState and return ``(names, position or None, velocity or None)``.

    ``position`` / ``velocity`` are float arrays aligned with ``names``, or None when the message
    leaves that field empty (allowed by sensor_msgs/JointState). The ``effort`` field is not used
    by these nodes and is not checked (drivers without torque sensing often fill it with NaN).
    Raises BadInput for duplicate names, a field whose length is neither 0 nor len(name), or
    a non-finite position/velocity. (``JointStateCache.update`` checks only the joints it
    tracks.)
    """
    names = list(msg.name)
    n = len(names)
    twice = duplicates(names)
    if twice:
        raise BadInput('duplicate', f'JointState has duplicate joint names {short_list(twice)}')
    _check_lengths(msg, n)
    fields = []
    for field in ('position', 'velocity'):
        values = getattr(msg, field)
        if len(values) == 0:
            fields.append(None)
            continue
        values = np.asarray(values, dtype=np.float64)
        _finite_or_raise(values, names, field)
        fields.append(values)
    return names, fields[0], fields[1]


Merged = collections.namedtuple('Merged', 'updated ignored discontinuity', defaults=(None,))
Merged.__doc__ = """What ``JointStateCache.update`` did: ``updated`` tracked joints received a position
or a velocity (0: the message is not a new state), ``ignored`` names are not tracked;
``discontinuity``: None, or why the state does not continue the previous one (the cache's
``continuity``, an ``input_guard.StateContinuity``; the state is merged all the same)."""


class JointStateCache:
    """Latest position and velocity per joint, merged from any number of JointState messages.

    Policy:
    - joints are matched by name; names the cache does not track are ignored entirely (their
      values are not even checked: a gripper's NaN does not drop the arm's state);
    - a message that sets no tracked joint's position or velocity changes nothing and is not a
      new state (``Merged.updated == 0``);
    - a joint counts as known once a position has been received for it;
    - a message without velocities leaves the velocities of its joints unchanged (zero if never
      given): an empty velocity field means "unknown", not "at rest";
    - efforts are merged the same way with ``track_effort`` (then a tracked joint's non-finite
      effort makes the message malformed); otherwise the effort field is not read at all;
    - a malformed message (field lengths that do not match the names; a tracked joint named
      twice, or with a non-finite position or velocity) changes nothing, and neither does a
      physically impossible one (``limits``, an ``input_guard.StateLimits`` in this order:
      a position beyond the URDF limits plus a tolerance, an implausible velocity);
    - ``update`` records the receive time per joint, so ``oldest_update_ns`` detects a publisher
      that stopped while others still publish;
    - with ``continuity`` (an ``input_guard.StateContinuity`` over the same joints; None: not
      checked), ``update`` says when a state does not continue the previous one (a stamp that
      goes backwards, a jump): ``Merged.discontinuity``.
    """

    def __init__(self, joint_names, limits=None, track_effort=False):
        self.joint_names = tuple(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        n = len(self.joint_names)
        self._q = np.zeros(n)
        self._qd = np.zeros(n)
        # efforts (track_effort): merged like the velocities, checked finite for the tracked joints
        self._track_effort = track_effort
        self._tau = np.zeros(n)
        self._tau_known = np.zeros(n, dtype=bool)
        self._known = np.zeros(n, dtype=bool)
        self._complete = n == 0
        self._stamp_ns = np.zeros(n, dtype=np.int64)
        self._layout_names = None       # the names of the last message, and what they map to
        self._layout = None
        self.limits = limits
        self.continuity = None

    @property
    def limits(self):
        return self._limits

    @limits.setter
    def limits(self, limits):
        self._limits = limits
        self._layout_names = self._layout = None

    def _layout_of(self, names):
        """What a message with these names updates (cached: publishers repeat their names).

        ``(entries, joints, lower, upper, max_velocity, error)``: the message entries of tracked
        joints and their joints' indices, the bounds of an acceptable state for them (from
        ``limits``; without, only finite), or the BadInput of a tracked joint named twice.
        """
        if names == self._layout_names:
            return self._layout
        get = self._index.get
        entries, joints = [], []
        for k, name in enumerate(names):
            i = get(name)
            if i is not None:
                entries.append(k)
                joints.append(i)
        error = None
        if len(set(joints)) != len(joints):
            twice = duplicates([self.joint_names[i] for i in joints])
            error = BadInput('duplicate', f'JointState names joints {short_list(twice)} more than '
                                          'once')
        joints = np.asarray(joints, dtype=np.intp)
        big = np.finfo(np.float64).max          # without limits: any finite value
        limits = self._limits
        if limits is None:
            lower, upper, vmax = (np.full(joints.size, -big), np.full(joints.size, big),
                                  np.full(joints.size, big))
        else:
            lower, upper, vmax = (limits.lower[joints], limits.upper[joints],
                                  limits.max_velocity[joints])
        identity = entries == list(range(len(names)))
        layout = (None if identity else np.asarray(entries, dtype=np.intp), joints, lower, upper,
                  vmax, error)
        self._layout_names, self._layout = list(names), layout
        return layout

    def update(self, msg, now_ns):
        """Merge ``msg`` (a JointState) received at ``now_ns``; return ``Merged``.

        Raises BadInput (and keeps the previous state) when the message is malformed or the state
        of a tracked joint is implausible.
        """
        names = msg.name
        n = len(names)
        _check_lengths(msg, n)
        entries, joints, lower, upper, vmax, error = self._layout_of(names)
        position, velocity = msg.position, msg.velocity
        if joints.size == 0 or (len(position) == 0 and len(velocity) == 0):
            return Merged(0, n - joints.size)
        if error is not None:
            raise error
        q = qd = None
        # One comparison per field finds NaN, inf and implausible values alike (a NaN compares
        # false); only a message that fails it is examined further, to say what is wrong.
        if len(position):
            q = np.asarray(position, dtype=np.float64)
            q = q if entries is None else q[entries]
            if not ((q >= lower) & (q <= upper)).all():
                self._explain(joints, q, None)
        if len(velocity):
            qd = np.asarray(velocity, dtype=np.float64)
            qd = qd if entries is None else qd[entries]
            if not (np.abs(qd) <= vmax).all():
                self._explain(joints, q, qd)
        tau = None
        if self._track_effort and len(msg.effort):
            if len(msg.effort) != n:
                raise BadInput('length', f'JointState effort has {len(msg.effort)} entries for {n} names '
                                         '(length mismatch)')
            tau = np.asarray(msg.effort, dtype=np.float64)
            tau = tau if entries is None else tau[entries]
            if not np.isfinite(tau).all():
                _finite_or_raise(tau, [self.joint_names[i] for i in joints], 'effort')
        discontinuity = None
        if self.continuity is not None:
            discontinuity = self.continuity.check(joints, q, qd, stamp_ns(msg.header.stamp))
        if q is not None:
            self._q[joints] = q
            self._known[joints] = True
            self._stamp_ns[joints] = now_ns
        if qd is not None:
            self._qd[joints] = qd
        if tau is not None:
            self._tau[joints] = tau
            self._tau_known[joints] = True
        if not self._complete:
            self._complete = bool(self._known.all())
        return Merged(joints.size, n - joints.size, discontinuity)

    def _explain(self, joints, position, velocity):
        """Raise the BadInput of a state that failed the combined check: non-finite first."""
        tracked = [self.joint_names[i] for i in joints]
        for field, values in (('position', position), ('velocity', velocity)):
            if values is not None:
                _finite_or_raise(values, tracked, field)
        if self._limits is not None:
            self._limits.check(joints, position, velocity)
        raise BadInput('implausible', 'JointState values outside the bounds of a possible state')

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

    def message_efforts(self, msg):
        """The efforts ``msg`` gives every tracked joint (``joint_names`` order; after ``update``
        accepted it), or None when it lacks one or one is not finite. Reads the effort field
        whether or not the cache tracks efforts, and never refuses the message."""
        effort = msg.effort
        if len(effort) != len(msg.name):
            return None
        entries, joints = self._layout_of(msg.name)[:2]
        if joints.size != len(self.joint_names):
            return None
        tau = np.asarray(effort, dtype=np.float64)
        tau = tau if entries is None else tau[entries]
        out = np.empty(joints.size)
        out[joints] = tau
        return out if np.isfinite(out).all() else None

    def efforts(self):
        """The merged efforts (a copy, ``joint_names`` order), or None while some joint's effort was
        never received (or the cache does not track efforts)."""
        return self._tau.copy() if self._track_effort and self._tau_known.all() else None

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
    """The data of a Float64MultiArray as an (n,) array; BadInput for a wrong size or NaN/inf.

    The layout is ignored, as ros2_control's forward command controllers do.
    """
    data = np.asarray(msg.data, dtype=np.float64)
    if data.shape != (n,):
        raise BadInput('length', f'expected {n} values, got {data.size}')
    if not np.isfinite(data).all():
        bad = np.flatnonzero(~np.isfinite(data))
        raise BadInput('nonfinite', f'values are not finite at indices {short_list(bad.tolist())}')
    return data


def joint_trajectory_reader(source):
    """A function of no arguments that reads a reference's waypoint arrays (as ``joint_trajectory_arrays``
    returns them): ``cdr.read_joint_trajectory`` of its serialized bytes, ``joint_trajectory_arrays`` of a
    message (logic.reference_intake.ReferenceJob.read: called where the job runs)."""
    if isinstance(source, bytes):
        return lambda: read_joint_trajectory(source)[1:]
    return lambda: joint_trajectory_arrays(source)


def joint_trajectory_arrays(msg):
    """Validate a trajectory_msgs/JointTrajectory and return its waypoints as arrays.

    Returns ``(names, times, positions, velocities, accelerations)``: times (N,) in seconds from
    the trajectory start (time_from_start), positions (N, m) for the m ``names``, and per point
    None (field empty) or an (m,) array for velocities and accelerations. Raises BadInput for
    no joint names, duplicate names, a field of the wrong length, non-finite values, or times that
    are negative or not strictly increasing. An empty ``points`` list gives N = 0.
    """
    names = list(msg.joint_names)
    m = len(names)
    if m == 0:
        raise BadInput('no_joints', 'JointTrajectory has no joint_names')
    twice = duplicates(names)
    if twice:
        raise BadInput('duplicate', f'JointTrajectory has duplicate joint names {short_list(twice)}')
    points = msg.points
    N = len(points)
    # Field by field over all points at once: the bytes of the float64[] fields joined, no
    # per-value Python work (a long trajectory is checked in a few list passes).
    positions = [p.positions for p in points]
    lengths = np.fromiter(map(len, positions), dtype=np.intp, count=N)
    bad = np.flatnonzero(lengths != m)
    if bad.size:
        k = int(bad[0])
        raise BadInput('length', f'point {k} has {lengths[k]} positions for {m} joints')
    q = np.frombuffer(b''.join(positions), dtype=np.float64).reshape(N, m)
    optional = []
    for field in ('velocities', 'accelerations'):
        values = [getattr(p, field) for p in points]
        lengths = np.fromiter(map(len, values), dtype=np.intp, count=N)
        bad = np.flatnonzero((lengths != 0) & (lengths != m))
        if bad.size:
            k = int(bad[0])
            raise BadInput('length', f'point {k} has {lengths[k]} {field} for {m} joints')
        given = np.flatnonzero(lengths)
        rows = np.frombuffer(b''.join(values[k] for k in given), dtype=np.float64).reshape(-1, m)
        per_point = [None] * N
        for row, k in enumerate(given):
            per_point[k] = rows[row]
        optional.append((rows, given, per_point))
    finite = np.isfinite(q).all(axis=1)
    for rows, given, _ in optional:
        finite[given] &= np.isfinite(rows).all(axis=1)
    if not finite.all():
        raise BadInput('nonfinite', f'point {int(np.argmin(finite))} has non-finite values')
    times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in points],
                     dtype=np.float64)
    if times.size and (times[0] < 0.0 or np.any(np.diff(times) <= 0.0)):
        k = int(np.argmax(np.diff(times) <= 0.0)) + 1 if times[0] >= 0.0 else 0
        raise BadInput('times', f'time_from_start must be >= 0 and strictly increasing (point {k}: '
                                f'{times[k]:.9g} s)')
    return names, times, q.copy(), optional[0][2], optional[1][2]


def pose_to_matrix(pose):
    """geometry_msgs/Pose -> T (4, 4): R of the unit quaternion q / |q| (x, y, z, w), p the position.
    BadInput for a NaN or inf, or |q| < MIN_QUATERNION_NORM."""
    p, o = pose.position, pose.orientation
    values = (p.x, p.y, p.z, o.x, o.y, o.z, o.w)
    if not all(math.isfinite(v) for v in values):
        raise BadInput('nonfinite', 'the pose has NaN or inf values')
    norm = math.hypot(o.x, o.y, o.z, o.w)          # (hypot: no overflow for 1e300 entries)
    if norm < MIN_QUATERNION_NORM:
        raise BadInput('quaternion', f'its orientation quaternion has norm {norm:.3g}: no rotation')
    x, y, z, w = o.x / norm, o.y / norm, o.z / norm, o.w / norm
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w), p.x],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w), p.y],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y), p.z],
                     [0.0, 0.0, 0.0, 1.0]])


def set_pose(pose, T):
    """Fill geometry_msgs/Pose (or a Transform's rotation and translation) from the rigid transform
    T (4, 4): the position, and the unit quaternion of R with w >= 0 (quaternion_xyzw)."""
    o, p = pose.orientation, pose.position
    o.x, o.y, o.z, o.w = quaternion_xyzw(T)
    p.x, p.y, p.z = T[0, 3], T[1, 3], T[2, 3]
    return pose


def quaternion_xyzw(T):
    """The unit quaternion (x, y, z, w), w >= 0, of the rotation R = T[:3, :3], in ROS's order
    (dynamics.spatial.rotation_quaternion)."""
    w, x, y, z = rotation_quaternion(T)
    return x, y, z, w


def wrench_vector(wrench):
    """(6,) the wrench (m, f) of a geometry_msgs/Wrench, angular first (the package's convention)."""
    m, f = wrench.torque, wrench.force
    return np.array([m.x, m.y, m.z, f.x, f.y, f.z])


def set_wrench(wrench, m_f):
    """Fill a geometry_msgs/Wrench with the wrench ``m_f`` (6,): (m, f), angular first."""
    m, f = wrench.torque, wrench.force
    m.x, m.y, m.z, f.x, f.y, f.z = map(float, m_f)
