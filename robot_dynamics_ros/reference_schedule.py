"""Which desired trajectory is in force when: the controller's reference schedule (ROS-free).

Times are integer nanoseconds on the controller's clock; joint vectors are in model joint order.
A trajectory (an ``interpolation.PiecewisePolynomial``) has its time 0 at its entry's start.

- ``hold(q, now)``: hold q from now on; everything scheduled before is discarded.
- ``add_waypoints(now, stamp, ...)``: a new trajectory through waypoints, starting at ``stamp``
  (0 = now). It leaves the desired state in force when it takes over (at its stamp, or now if
  the stamp is already past: then the waypoints already past are skipped). Stamped in the
  future, it replaces the current reference only from its stamp on (the current one stays in
  force until then); stamped now or in the past, it replaces everything at once.
- ``sample(now)``: the desired (q, q̇, q̈): the newest entry started by ``now``; if none has
  started, the oldest one (before its first knot a trajectory holds its first position).
- ``prune(now)``: forget the entries that can no longer be in force at ``now`` or later.

Entries are a list, walked with loops: a long chain of future-stamped references costs time in
proportion to its length, never Python recursion depth.

Example:
    >>> import numpy as np
    >>> schedule = ReferenceSchedule()
    >>> schedule.hold(np.zeros(1), now_ns=0)
    >>> start = schedule.add_waypoints(0, 2_000_000_000, times=[1.0], positions=[[1.0]])
    >>> [float(schedule.sample(t)[0][0]) for t in (1_000_000_000, 2_500_000_000, 4_000_000_000)]
    [0.0, 0.5, 1.0]
"""

from robot_dynamics_ros.interpolation import from_waypoints, hold

__all__ = ['ReferenceSchedule']


class ReferenceSchedule:
    """Trajectories scheduled by start time (see module docstring)."""

    def __init__(self):
        # (start_ns, trajectory), oldest first. Entry k is in force from its start until a newer
        # entry has started; the oldest one also before its own start.
        self._entries = []

    def __len__(self):
        return len(self._entries)

    @property
    def empty(self):
        """True when no reference is scheduled (the caller then holds a measured position)."""
        return not self._entries

    def clear(self):
        """Discard every reference."""
        self._entries.clear()

    def hold(self, q, now_ns):
        """Hold ``q`` (zero velocity and acceleration) from ``now_ns`` on, replacing everything."""
        self._entries = [(int(now_ns), hold(q))]

    def add(self, trajectory, start_ns, now_ns):
        """Schedule ``trajectory`` from ``start_ns``: after the current entries if it starts in
        the future, else in place of all of them."""
        start_ns, now_ns = int(start_ns), int(now_ns)
        if start_ns > now_ns:
            self._entries.append((start_ns, trajectory))
        else:
            self._entries = [(start_ns, trajectory)]

    def add_waypoints(self, now_ns, stamp_ns, times, positions, velocities=None,
                      accelerations=None, columns=None):
        """Schedule a trajectory through waypoints stamped ``stamp_ns`` (0 = now); return its
        start in ns.

        ``times`` (s after the start), ``positions`` (N, m), ``velocities``, ``accelerations``
        and ``columns`` (the m joints' indices in model order) as ``interpolation.from_waypoints``.
        The trajectory starts from the desired state in force when it takes over. ValueError on
        bad waypoints (or every waypoint already past), or when nothing is scheduled to start
        from (``hold`` first); the schedule is then unchanged.
        """
        if self.empty:
            raise ValueError('no reference to start from: hold a position first')
        now_ns = int(now_ns)
        start_ns = int(stamp_ns) if stamp_ns > 0 else now_ns
        takeover_ns = max(start_ns, now_ns)
        trajectory = from_waypoints(self.sample(takeover_ns), times, positions, velocities,
                                    accelerations, columns=columns,
                                    start_time=(takeover_ns - start_ns) * 1e-9)
        self.add(trajectory, start_ns, now_ns)
        return start_ns

    def _index_in_force(self, now_ns):
        """Index of the entry in force at ``now_ns``: the newest started one, else the oldest."""
        entries = self._entries
        for k in range(len(entries) - 1, 0, -1):
            if now_ns >= entries[k][0]:
                return k
        return 0

    def prune(self, now_ns):
        """Forget the entries older than the one in force at ``now_ns``."""
        k = self._index_in_force(now_ns)
        if k:
            del self._entries[:k]

    def sample(self, now_ns):
        """Desired (q, q̇, q̈) at ``now_ns``, three new (n,) arrays. Needs a scheduled entry."""
        if self.empty:
            raise ValueError('no reference scheduled')
        start_ns, trajectory = self._entries[self._index_in_force(now_ns)]
        return trajectory.sample((now_ns - start_ns) * 1e-9)
