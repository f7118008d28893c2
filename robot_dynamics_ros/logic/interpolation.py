"""Joint-space trajectory interpolation between waypoints (ROS-free, pure numpy).

A trajectory is a list of knots (t_k, q_k, q̇_k, q̈_k), t strictly increasing, joint vectors of
length n. Between two knots every joint follows one polynomial in s = t - t_k, s ∈ [0, T],
T = t_{k+1} - t_k:

- **quintic** when both knots give accelerations: position, velocity and acceleration match at
  both ends (the fifth-order polynomial time scaling of §9.2.2, generalised to non-rest boundary
  conditions);
- **cubic Hermite** otherwise: position and velocity match at both ends (the third-order
  via-point interpolation of §9.3, "Polynomial Via Point Trajectories"), velocities that are not
  given are zero, so a position-only waypoint list stops at every waypoint (no velocity jumps,
  bounded accelerations: safe default for a torque controller).

Section numbers are those of the *published* Modern Robotics (Lynch & Park, Cambridge University
Press 2017), chapter 9 "Trajectory Generation". The dynamics core cites the draft instead, whose
chapter 9 is the published chapter 8 (Dynamics of Open Chains): its "eq. 9.x" is not this chapter.

Before the first knot the trajectory holds q_0 and after the last one it holds q_N, both with zero
velocity and acceleration.

**Limits.** ``check_limits(trajectory, limits)`` refuses (``LimitViolation``) a trajectory that
leaves the joints' position limits or velocity limits (``JointLimits``, e.g. the URDF's): at a
waypoint, or between two waypoints, where a cubic or quintic inside the limits at both ends may
overshoot them. Each segment polynomial p(s) is checked at its extrema, found analytically: the
real roots of p'(s) (position) and of p''(s) (velocity) in [0, T] (eigenvalues of the companion
matrix of the derivative), plus both ends. No sampling: a violation between two samples cannot
slip through.

Example:
    >>> traj = PiecewisePolynomial([0.0, 2.0], [[0.0], [1.0]])
    >>> q, qd, qdd = traj.sample(1.0)       # mid-way through a rest-to-rest cubic
    >>> float(q[0]), float(qd[0]), float(qdd[0])
    (0.5, 0.75, 0.0)
    >>> [float(v[0]) for v in traj.sample(5.0)]  # held after the end
    [1.0, 0.0, 0.0]
"""

import numpy as np

from robot_dynamics_ros.logic.input_guard import BadInput

__all__ = ['PiecewisePolynomial', 'hold', 'stopping', 'from_waypoints', 'JointLimits', 'LimitViolation',
           'check_limits', 'polynomial_extrema']


def _knot_values(name, values, n_knots, n):
    """Return (array (N, n) with zeros where missing, mask (N,) True where given)."""
    out = np.zeros((n_knots, n))
    given = np.zeros(n_knots, dtype=bool)
    if values is None:
        return out, given
    if isinstance(values, np.ndarray) and values.ndim == 2:
        values = list(values)
    if len(values) != n_knots:
        raise ValueError(f'{name} must have one entry (or None) per knot: '
                         f'got {len(values)} for {n_knots} knots')
    for k, v in enumerate(values):
        if v is None or len(v) == 0:
            continue
        v = np.asarray(v, dtype=np.float64)
        if v.shape != (n,):
            raise ValueError(f'{name}[{k}] must have shape ({n},), got {v.shape}')
        if not np.all(np.isfinite(v)):
            raise ValueError(f'{name}[{k}] must be finite')
        out[k] = v
        given[k] = True
    return out, given


class PiecewisePolynomial:
    """Cubic / quintic interpolation through joint-space knots.

    Args:
        times: (N,) knot times in seconds, strictly increasing (N >= 1).
        positions: (N, n) knot positions.
        velocities: None, or N entries each None/empty (= zero) or (n,).
        accelerations: None, or N entries each None/empty (= not constrained) or (n,).
            A segment is quintic iff both of its knots give accelerations.

    ``sample(t)`` returns ``(q, qd, qdd)``, three new (n,) arrays.

    ``point_index`` (N,) ints: the waypoint each knot comes from (its index in the message), -1
    for a knot that is no waypoint (the start state of ``from_waypoints``); ``named`` (n,) bools:
    the joints the waypoints give (the others hold their start position). Both are for messages
    about the trajectory (``check_limits``); by default every knot is waypoint k, every joint
    named.
    """

    def __init__(self, times, positions, velocities=None, accelerations=None):
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        positions = np.asarray(positions, dtype=np.float64)
        if times.size < 1:
            raise ValueError('times must contain at least one knot')
        if positions.ndim != 2 or positions.shape[0] != times.size:
            raise ValueError(f'positions must have shape ({times.size}, n), got {positions.shape}')
        if not (np.all(np.isfinite(times)) and np.all(np.isfinite(positions))):
            raise ValueError('times and positions must be finite')
        if np.any(np.diff(times) <= 0.0):
            raise ValueError(f'times must be strictly increasing, got {times.tolist()}')
        n_knots, n = positions.shape
        vel, _ = _knot_values('velocities', velocities, n_knots, n)
        acc, acc_given = _knot_values('accelerations', accelerations, n_knots, n)
        self.times = times
        self.positions = positions.copy()
        self.velocities = vel
        self.accelerations = acc
        self.n = n
        self.point_index = np.arange(n_knots)
        self.named = np.ones(n, dtype=bool)
        # coeffs[k, j] multiplies s**j on segment k (j = 0..5), one column per joint.
        self._coeffs = np.zeros((max(n_knots - 1, 0), 6, n))
        self.quintic = np.zeros(max(n_knots - 1, 0), dtype=bool)
        for k in range(n_knots - 1):
            T = times[k + 1] - times[k]
            q0, q1 = positions[k], positions[k + 1]
            v0, v1 = vel[k], vel[k + 1]
            c = self._coeffs[k]
            h = q1 - q0
            c[0], c[1] = q0, v0
            if acc_given[k] and acc_given[k + 1]:
                a0, a1 = acc[k], acc[k + 1]
                c[2] = 0.5 * a0
                c[3] = (20 * h - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3)
                c[4] = (-30 * h + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T**2) / (2 * T**4)
                c[5] = (12 * h - 6 * (v1 + v0) * T - (a0 - a1) * T**2) / (2 * T**5)
                self.quintic[k] = True
            else:
                c[2] = (3 * h - (2 * v0 + v1) * T) / T**2
                c[3] = (-2 * h + (v0 + v1) * T) / T**3

    @property
    def coefficients(self):
        """(K, 6, n) read-only view: ``coefficients[k, j]`` multiplies s**j on segment k, s in
        [0, times[k+1] - times[k]] (zero above the degree: a cubic's j = 4, 5)."""
        view = self._coeffs.view()
        view.setflags(write=False)
        return view

    @property
    def start_time(self):
        return float(self.times[0])

    @property
    def end_time(self):
        return float(self.times[-1])

    def sample(self, t):
        """Desired (q, qd, qdd) at time ``t`` (seconds, same origin as ``times``)."""
        t = float(t)
        zero = np.zeros(self.n)
        if t <= self.times[0]:
            if self.times.size == 1 or t < self.times[0]:
                return self.positions[0].copy(), zero, zero.copy()
        if t >= self.times[-1]:
            return self.positions[-1].copy(), zero, zero.copy()
        k = int(np.searchsorted(self.times, t, side='right')) - 1
        s = t - self.times[k]
        c = self._coeffs[k]
        # Horner evaluation of p, p', p''.
        q = c[5]
        for j in range(4, -1, -1):
            q = q * s + c[j]
        qd = 5 * c[5]
        for j in range(4, 0, -1):
            qd = qd * s + j * c[j]
        qdd = 20 * c[5]
        for j in range(4, 1, -1):
            qdd = qdd * s + j * (j - 1) * c[j]
        return np.array(q), np.array(qd), np.array(qdd)


def hold(q, t=0.0):
    """A one-knot trajectory that holds ``q`` (zero velocity and acceleration) at all times."""
    q = np.asarray(q, dtype=np.float64).reshape(1, -1)
    return PiecewisePolynomial([t], q)


def from_waypoints(start, times, positions, velocities=None, accelerations=None, columns=None,
                   start_time=0.0):
    """A trajectory over all n joints that starts from ``start`` and passes through waypoints.

    Args:
        start: ``(q, qd, qdd)`` at time 0, each (n,): the state the trajectory starts from
            (for a controller, the desired state when the new trajectory takes over).
        times: (N,) waypoint times >= 0, strictly increasing. A waypoint at ``start_time``
            replaces the start state (for the joints it names); a first waypoint later than that
            is reached from the start state (velocity kept; acceleration kept when the waypoint
            gives accelerations).
        positions: (N, m) waypoint positions of the joints ``columns`` (m = len(columns)).
        velocities, accelerations: None, or N entries each None/empty or (m,).
        columns: indices in 0..n-1 of the joints the waypoints give (default: all n, in order).
            The other joints hold the start position with zero velocity and acceleration.

        start_time: time (>= 0, on the axis of ``times``) at which the trajectory leaves the
            ``start`` state; used when a trajectory is received after its own start. Waypoints
            before it are dropped; a waypoint at exactly ``start_time`` replaces the start state.
            ValueError when every waypoint lies before ``start_time``.

    Returns a PiecewisePolynomial on the time axis of ``times``.
    """
    q0, qd0, qdd0 = (np.asarray(v, dtype=np.float64).reshape(-1) for v in start)
    n = q0.size
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    positions = np.asarray(positions, dtype=np.float64)
    columns = np.arange(n) if columns is None else np.asarray(columns, dtype=np.intp)
    N, m = times.size, columns.size
    if N == 0:
        raise ValueError('a trajectory needs at least one waypoint')
    if positions.shape != (N, m):
        raise ValueError(f'positions must have shape ({N}, {m}), got {positions.shape}')
    if times[0] < 0.0:
        raise ValueError(f'waypoint times must be >= 0, got {times[0]}')
    vel, vel_given = _knot_values('velocities', velocities, N, m)
    acc, acc_given = _knot_values('accelerations', accelerations, N, m)
    keep = times >= start_time
    if not keep.any():
        raise ValueError(f'every waypoint (last at {times[-1]:.3f} s) lies before the start '
                         f'time {start_time:.3f} s')
    times, positions = times[keep], positions[keep]
    vel, vel_given, acc, acc_given = vel[keep], vel_given[keep], acc[keep], acc_given[keep]
    N = times.size
    # Every knot over all n joints: the joints not named hold their start position.
    full_q = np.tile(q0, (N, 1))
    full_q[:, columns] = positions
    full_qd = np.zeros((N, n))
    full_qd[:, columns] = vel
    full_qdd = np.zeros((N, n))
    full_qdd[:, columns] = acc
    acc_list = [full_qdd[k] if acc_given[k] else None for k in range(N)]
    vel_list = [full_qd[k] if vel_given[k] else None for k in range(N)]
    points = np.flatnonzero(keep)           # the waypoints' indices in the message
    if times[0] > start_time:
        start_acc = qdd0 if acc_given[0] else None
        trajectory = PiecewisePolynomial(np.concatenate(([start_time], times)),
                                         np.vstack((q0, full_q)), [qd0] + vel_list,
                                         [start_acc] + acc_list)
        trajectory.point_index = np.concatenate(([-1], points))
    else:
        trajectory = PiecewisePolynomial(times, full_q, vel_list, acc_list)
        trajectory.point_index = points
    trajectory.named = np.zeros(n, dtype=bool)
    trajectory.named[columns] = True
    return trajectory


def stopping(start, deceleration, limits=None):
    """A trajectory that brings the desired state ``start`` = (q, q̇, q̈) to rest without a jump.

    Every joint decelerates uniformly along its current direction of motion, all stopping together
    after T = max_j |q̇_j| / ``deceleration`` (rad/s² or m/s², > 0): q(s) = q + q̇ s − q̇ s²/(2T), the
    cubic Hermite segment from (q, q̇) to (q + q̇ T/2, 0), whose velocity falls monotonically (it
    stays within the velocity limits it started within) and whose acceleration is q̇/T, at most
    ``deceleration`` in magnitude. With ``limits`` (a ``JointLimits``), T is shortened where the
    stop would cross a position limit (the deceleration is then stronger): the joints stop at it at
    the latest. At rest (every |q̇| < 1e-9) it holds q.
    """
    q0, qd0, _ = (np.asarray(v, dtype=np.float64).reshape(-1) for v in start)
    if not (np.isfinite(deceleration) and deceleration > 0.0):
        raise ValueError(f'deceleration must be finite and > 0, got {deceleration}')
    speed = np.abs(qd0)
    if not np.any(speed >= 1e-9):
        return hold(q0)
    duration = float(np.max(speed)) / deceleration          # T
    if limits is not None:
        # Distance to the limit ahead of each moving joint; q + q̇T/2 must not pass it.
        ahead = np.where(qd0 > 0.0, limits.upper - q0, q0 - limits.lower)
        moving = speed >= 1e-9
        room = np.where(moving, 2.0 * np.maximum(ahead, 0.0) / np.where(moving, speed, 1.0), np.inf)
        duration = min(duration, float(np.min(room)))
    if duration <= 1e-9:
        return hold(q0)
    return PiecewisePolynomial([0.0, duration], [q0, q0 + 0.5 * duration * qd0],
                               [qd0, np.zeros_like(qd0)])


# -- limits ------------------------------------------------------------------------------------

class LimitViolation(BadInput):
    """A trajectory that leaves the joint limits (``check_limits``); ``kind`` is 'limits'."""

    def __init__(self, message):
        super().__init__('limits', message)


class JointLimits:
    """Position and velocity limits of n joints, in the order of the trajectories checked.

    Args:
        names: (n,) joint names (for the messages).
        lower, upper: (n,) position limits, -inf / +inf where there is none (continuous joints).
        velocity: (n,) velocity limits |q̇| <= velocity, inf (or <= 0: not given) where none.
        types: (n,) 'revolute' | 'continuous' | 'prismatic' (for the units in the messages:
            rad or m); default revolute.
    """

    def __init__(self, names, lower, upper, velocity, types=None):
        self.names = tuple(names)
        n = len(self.names)
        self.lower = np.asarray(lower, dtype=np.float64).reshape(n)
        self.upper = np.asarray(upper, dtype=np.float64).reshape(n)
        velocity = np.asarray(velocity, dtype=np.float64).reshape(n)
        self.velocity = np.where((velocity > 0.0) & ~np.isnan(velocity), velocity, np.inf)
        if np.any(np.isnan(self.lower) | np.isnan(self.upper)) or np.any(self.lower > self.upper):
            raise ValueError('lower and upper must be numbers with lower <= upper')
        types = ('revolute',) * n if types is None else tuple(types)
        self.units = tuple('m' if t == 'prismatic' else 'rad' for t in types)

    @classmethod
    def from_model(cls, model):
        """The URDF limits a ``dynamics.Model`` stores (model joint order)."""
        return cls(model.joint_names, model.lower, model.upper, model.velocity_limit,
                   model.joint_types)


def _horner(a, u):
    """Polynomials with ascending coefficients ``a`` (m, d+1) at points ``u`` (m, c)."""
    value = np.broadcast_to(a[:, -1:], u.shape).copy()
    for j in range(a.shape[1] - 2, -1, -1):
        value = value * u + a[:, j:j + 1]
    return value


def polynomial_extrema(a):
    """Minimum and maximum of polynomials on [0, 1], from the roots of their derivatives.

    ``a`` (m, d+1): row i is p_i(u) = Σ_j a[i, j] u^j. The extrema of p_i on [0, 1] lie at u = 0,
    u = 1 or a real root of p_i' in (0, 1); the roots are the eigenvalues of the companion matrix
    of p_i' (its degree: the highest coefficient above 1e-12 × the largest), computed for all
    rows of one degree at once. Returns ``(low, u_low, high, u_high)``, each (m,); a row with a
    non-finite coefficient gives NaN.

    >>> low, u_low, high, u_high = polynomial_extrema(np.array([[0.0, 3.0, -3.0]]))  # 3u - 3u²
    >>> float(high[0]), float(u_high[0]), float(low[0])
    (0.75, 0.5, 0.0)
    """
    a = np.asarray(a, dtype=np.float64)
    m, d1 = a.shape
    finite = np.isfinite(a).all(axis=1)
    a = np.where(finite[:, None], a, 0.0)
    # candidates: both ends, then the real parts of the roots of p' clipped into [0, 1] (every
    # candidate is a point of [0, 1], so a complex root's real part only adds a true value of p)
    candidates = np.zeros((m, max(d1, 2)))
    candidates[:, 1] = 1.0
    if d1 > 2:
        b = a[:, 1:] * np.arange(1, d1)                 # p' (m, d), ascending
        scale = np.abs(b).max(axis=1)
        significant = np.abs(b) > 1e-12 * scale[:, None]
        degree = np.where(significant.any(axis=1),
                          b.shape[1] - 1 - np.argmax(significant[:, ::-1], axis=1), 0)
        for d in np.unique(degree):
            if d == 0:
                continue
            rows = np.flatnonzero(degree == d)
            companion = np.zeros((rows.size, d, d))
            companion[:, np.arange(1, d), np.arange(d - 1)] = 1.0
            companion[:, :, -1] = -b[rows, :d] / b[rows, d][:, None]
            roots = np.linalg.eigvals(companion)
            candidates[rows, 2:2 + d] = np.clip(roots.real, 0.0, 1.0)
    values = _horner(a, candidates)
    i_low, i_high = values.argmin(axis=1), values.argmax(axis=1)
    rows = np.arange(m)
    low, high = values[rows, i_low], values[rows, i_high]
    u_low, u_high = candidates[rows, i_low], candidates[rows, i_high]
    low[~finite] = high[~finite] = np.nan
    return low, u_low, high, u_high


def _exceeds(value, low, high):
    """Beyond [low, high] by more than rounding (NaN counts as beyond)."""
    margin = 1e-9 * np.maximum(1.0, np.abs(value))
    return ~((value >= low - margin) & (value <= high + margin))


def check_limits(trajectory, limits):
    """Raise ``LimitViolation`` if ``trajectory`` leaves ``limits`` (a ``JointLimits`` in the
    trajectory's joint order); return None when it stays within them.

    Checked: every waypoint's position against [lower, upper] and its velocity against the
    velocity limit (joints it names); between knots, the extrema of every segment's position and
    velocity polynomials (``polynomial_extrema``). The state a trajectory starts from is where the
    arm is meant to be now, not a waypoint: the segment that leaves it, and the joints that only
    hold it, may go as far out as it is (a measured position held slightly beyond a limit), no
    further. The message names one violation: the joint, the point (its index in the message) or
    the two points it lies between, the value and the limit: the first in time of the first kind
    found, in this order: a waypoint's position, a waypoint's velocity, a position between
    waypoints, a velocity between waypoints.
    """
    n = trajectory.n
    if len(limits.names) != n:
        raise ValueError(f'limits are for {len(limits.names)} joints, the trajectory has {n}')
    # per kind of violation found, in the order above: (count, message of the first in time)
    found = _waypoint_violations(trajectory, limits) + _segment_violations(trajectory, limits)
    if found:
        total = sum(count for count, _ in found)
        more = f" (and {total - 1} more violation{'s' if total > 2 else ''})" if total > 1 else ''
        raise LimitViolation(found[0][1] + more)


def _earliest(bad, when, order, message):
    """(count, ``message(*index)`` of the first in time, then ``order``) of the violations ``bad`` (a
    boolean array; ``when`` and ``order`` of its shape); None when there are none."""
    if not bad.any():
        return None
    index = np.nonzero(bad)
    key = np.lexsort((order[index], when[index]))[0]
    return int(bad.sum()), message(*(i[key] for i in index))


def _waypoint_violations(trajectory, limits):
    """check_limits's waypoint kinds: positions, then velocities, of the joints each waypoint names
    against the strict limits; [(count, message)] of the kinds violated."""
    times, q, v, point = trajectory.times, trajectory.positions, trajectory.velocities, trajectory.point_index
    lower, upper, vmax = limits.lower, limits.upper, limits.velocity
    N, n = q.shape
    knot_time = np.broadcast_to(times[:, None], (N, n))
    knot_order = np.broadcast_to(2 * np.arange(N)[:, None], (N, n))
    at_waypoint = (point >= 0)[:, None] & trajectory.named     # knot k is a waypoint naming joint j

    def position_at_knot(k, j):
        side, bound = ('upper', upper[j]) if not q[k, j] <= upper[j] else ('lower', lower[j])
        unit = limits.units[j]
        return (f'point {point[k]}: joint {limits.names[j]!r} at {q[k, j]:.6g} {unit}, beyond its '
                f'{side} position limit {bound:.6g} {unit}')

    def velocity_at_knot(k, j):
        unit = limits.units[j]
        return (f'point {point[k]}: joint {limits.names[j]!r} at velocity {v[k, j]:.6g} {unit}/s, '
                f'beyond its velocity limit {vmax[j]:.6g} {unit}/s')

    found = (_earliest(_exceeds(q, lower, upper) & at_waypoint, knot_time, knot_order, position_at_knot),
             _earliest(_exceeds(np.abs(v), 0.0, vmax) & at_waypoint, knot_time, knot_order, velocity_at_knot))
    return [f for f in found if f is not None]


def _segment_bounds(trajectory, limits):
    """(lower, upper, vmax), each (K, n), for the segments: the strict limits for the joints the
    segment's end names; the limits widened to include the start state for the joints that only hold
    it and, when the trajectory starts from it, for every joint of the segment that leaves it."""
    q0, v0, named = trajectory.positions[0], np.abs(trajectory.velocities[0]), trajectory.named
    strict = (limits.lower, limits.upper, limits.velocity)
    wide = (np.minimum(limits.lower, q0), np.maximum(limits.upper, q0), np.maximum(limits.velocity, v0))
    bounds = [np.where(named, s, w) * np.ones((trajectory.times.size - 1, 1)) for s, w in zip(strict, wide)]
    if trajectory.point_index.size > 0 and trajectory.point_index[0] < 0:      # from the start state
        for bound, w in zip(bounds, wide):
            bound[0] = w
    return tuple(bounds)


def _segment_violations(trajectory, limits):
    """check_limits's kinds between waypoints: positions, then velocities, from the extrema of p(s)
    and p'(s) on every segment [0, T] (s = T u; ``polynomial_extrema``); [(count, message)] of the
    kinds violated."""
    times, point = trajectory.times, trajectory.point_index
    K = times.size - 1
    if K <= 0:
        return []
    T = np.diff(times)
    c = trajectory.coefficients                                   # (K, 6, n)
    powers = T[:, None] ** np.arange(6)[None, :]                  # (K, 6)
    a = c * powers[:, :, None]                                    # p in u
    va = (c[:, 1:] * np.arange(1, 6)[None, :, None]) * powers[:, :5, None]   # p'(s) in u
    seg_lower, seg_upper, seg_vmax = _segment_bounds(trajectory, limits)
    at_waypoint = (point >= 0)[:, None] & trajectory.named
    found = []
    for what, coefficients, checked, lower, upper in (
            ('position', a, np.isfinite(limits.lower) | np.isfinite(limits.upper), seg_lower, seg_upper),
            ('velocity', va, np.isfinite(limits.velocity), -seg_vmax, seg_vmax)):
        columns = np.flatnonzero(checked)
        if columns.size == 0:
            continue
        rows = coefficients[:, :, columns].transpose(0, 2, 1).reshape(K * columns.size, -1)
        shape = (K, columns.size)
        low, u_low, high, u_high = (x.reshape(shape) for x in polynomial_extrema(rows))
        lo_bound, hi_bound = lower[:, columns], upper[:, columns]
        over = _exceeds(high, -np.inf, hi_bound)
        under = _exceeds(low, lo_bound, np.inf) & ~over
        order = np.broadcast_to(2 * np.arange(K)[:, None] + 1, shape)
        for bad, value, u, bound, side in ((over, high, u_high, hi_bound, 'upper'),
                                           (under, low, u_low, lo_bound, 'lower')):
            # an extremum at a waypoint is that waypoint's violation, found above
            bad = bad & ~(((u == 0.0) & at_waypoint[:-1, columns])
                          | ((u == 1.0) & at_waypoint[1:, columns]))
            when = times[:-1, None] + u * T[:, None]

            def between(k, i, what=what, value=value, bound=bound, side=side, when=when, columns=columns):
                j = columns[i]
                unit = limits.units[j]
                start = f'point {point[k]}' if point[k] >= 0 else 'the start state'
                if what == 'position':
                    detail = (f'would reach {value[k, i]:.6g} {unit}, beyond its {side} '
                              f'position limit {bound[k, i]:.6g} {unit}')
                else:
                    detail = (f'would move at {value[k, i]:.6g} {unit}/s, beyond its '
                              f'velocity limit {abs(bound[k, i]):.6g} {unit}/s')
                return (f'between {start} and point {point[k + 1]} (at {when[k, i]:.3f} s): '
                        f'joint {limits.names[j]!r} {detail}')

            found.append(_earliest(bad, when, order, between))
    return [f for f in found if f is not None]
