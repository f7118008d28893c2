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

Example:
    >>> traj = PiecewisePolynomial([0.0, 2.0], [[0.0], [1.0]])
    >>> q, qd, qdd = traj.sample(1.0)       # mid-way through a rest-to-rest cubic
    >>> float(q[0]), float(qd[0]), float(qdd[0])
    (0.5, 0.75, 0.0)
    >>> [float(v[0]) for v in traj.sample(5.0)]  # held after the end
    [1.0, 0.0, 0.0]
"""

import numpy as np

__all__ = ['PiecewisePolynomial', 'hold', 'from_waypoints']


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
    if times[0] > start_time:
        start_acc = qdd0 if acc_given[0] else None
        return PiecewisePolynomial(np.concatenate(([start_time], times)), np.vstack((q0, full_q)),
                                   [qd0] + vel_list, [start_acc] + acc_list)
    return PiecewisePolynomial(times, full_q, vel_list, acc_list)
