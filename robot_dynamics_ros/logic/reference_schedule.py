"""Which desired trajectory is in force when: the controller's reference schedule (ROS-free).

Times are integer nanoseconds on the controller's clock; joint vectors are in model joint order.
A trajectory (an ``interpolation.PiecewisePolynomial``) has its time 0 at its entry's start.

- ``hold(q, now)``: hold q from now on; everything scheduled before is discarded.
- ``stop(now, deceleration, start)``: bring a state (the measured one, or the desired one in force
  now) to rest, decelerating uniformly along its motion (``interpolation.stopping``, within
  ``limits``), then hold; everything scheduled before is discarded. A cancelled motion ends without
  a jump or a swing.
- ``add_waypoints(now, stamp, ...)``: a new trajectory through waypoints, starting at ``stamp``
  (0 = now). It leaves the desired state in force when it takes over (at its stamp, or now if
  the stamp is already past: then the waypoints already past are skipped). Stamped in the
  future, it replaces the current reference only from its stamp on (the current one stays in
  force until then); stamped now or in the past, it replaces everything at once.
- ``sample(now)``: the desired (q, q̇, q̈): the newest entry started by ``now``; if none has
  started, the oldest one (before its first knot a trajectory holds its first position).
- ``prune(now)``: forget the entries that can no longer be in force at ``now`` or later.
- ``plan(now, stamp)``, ``Plan.trajectory(...)``, ``commit(plan, trajectory, now)``: what
  ``add_waypoints`` does, in three steps, so that the interpolation of a long trajectory (the
  middle step, which reads nothing of the schedule) can run elsewhere, e.g. in a worker thread.
  ``commit`` refuses (``Superseded``) a plan made before the schedule last changed (``hold``,
  ``clear``, ``add``): its start state is no longer the one in force.

Limits: with ``limits`` set (an ``interpolation.JointLimits`` in model order, e.g. the URDF's), a
trajectory that leaves the joints' position or velocity limits, at a waypoint or between two
(``interpolation.check_limits``), is refused whole (``interpolation.LimitViolation``, a
ValueError naming the joint, the point and the limit) and the schedule is unchanged: what was in
force stays in force. The check is part of ``Plan.trajectory``, so it runs wherever the
interpolation runs.

Entries are a list, walked with loops: a long chain of future-stamped references costs time in
proportion to its length, never Python recursion depth. The chain is bounded: at most
``max_pending`` entries may wait for their start (``pending(now)``); a future-stamped reference
beyond that is refused (``TooManyPending``). A client stamping with wall time a controller that
runs on simulated time would otherwise add one forever-future entry per message.

Example:
    >>> import numpy as np
    >>> schedule = ReferenceSchedule()
    >>> schedule.hold(np.zeros(1), now_ns=0)
    >>> start = schedule.add_waypoints(0, 2_000_000_000, times=[1.0], positions=[[1.0]])
    >>> [float(schedule.sample(t)[0][0]) for t in (1_000_000_000, 2_500_000_000, 4_000_000_000)]
    [0.0, 0.5, 1.0]
"""

import collections

from robot_dynamics_ros.logic.interpolation import (
    LimitViolation,
    check_limits,
    from_waypoints,
    hold,
    stopping,
)

__all__ = ['ReferenceSchedule', 'Plan', 'TooManyPending', 'Superseded', 'LimitViolation',
           'DEFAULT_MAX_PENDING']

DEFAULT_MAX_PENDING = 100


class TooManyPending(ValueError):
    """A future-stamped reference refused: ``max_pending`` references already wait to start."""


class Superseded(ValueError):
    """A plan committed after the schedule changed (see ``ReferenceSchedule.commit``)."""


class Plan(collections.namedtuple('Plan', 'start_ns takeover_ns start generation limits',
                                  defaults=(None,))):
    """Where a new trajectory starts: at ``start_ns`` on the schedule's clock, leaving the desired
    state ``start`` = (q, q̇, q̈) in force at ``takeover_ns`` (its stamp, or now if that is past);
    ``generation``: the schedule's when planned; ``limits``: the schedule's ``JointLimits`` (None:
    not checked)."""

    def trajectory(self, times, positions, velocities=None, accelerations=None, columns=None):
        """The trajectory through the waypoints from ``start`` (``interpolation.from_waypoints``;
        ValueError on bad waypoints), checked against ``limits`` (LimitViolation). Reads nothing
        of the schedule: any thread may call it."""
        trajectory = from_waypoints(self.start, times, positions, velocities, accelerations,
                                    columns=columns,
                                    start_time=(self.takeover_ns - self.start_ns) * 1e-9)
        if self.limits is not None:
            check_limits(trajectory, self.limits)
        return trajectory


class ReferenceSchedule:
    """Trajectories scheduled by start time (see module docstring).

    ``max_pending`` (>= 1): how many entries may wait for their start at once. ``limits``: an
    ``interpolation.JointLimits`` (model order) every new trajectory must stay within, or None.
    """

    def __init__(self, max_pending=DEFAULT_MAX_PENDING, limits=None):
        # (start_ns, trajectory), oldest first. Entry k is in force from its start until a newer
        # entry has started; the oldest one also before its own start.
        self._entries = []
        self.max_pending = max_pending
        self.limits = limits
        self.generation = 0         # counts the changes of what is scheduled (not prune)

    @property
    def max_pending(self):
        return self._max_pending

    @max_pending.setter
    def max_pending(self, value):
        if int(value) < 1:
            raise ValueError(f'max_pending must be >= 1, got {value}')
        self._max_pending = int(value)

    def __len__(self):
        return len(self._entries)

    @property
    def empty(self):
        """True when no reference is scheduled (the caller then holds a measured position)."""
        return not self._entries

    def clear(self):
        """Discard every reference."""
        self._entries.clear()
        self.generation += 1

    def hold(self, q, now_ns):
        """Hold ``q`` (zero velocity and acceleration) from ``now_ns`` on, replacing everything."""
        self._entries = [(int(now_ns), hold(q))]
        self.generation += 1

    def stop(self, now_ns, deceleration, start=None):
        """Bring ``start`` = (q, q̇, q̈) (default: the desired state in force at ``now_ns``; a
        controller passes the measured state, so that a tracking error at that moment is not made
        up with a lunge) to rest (``interpolation.stopping`` at ``deceleration``, within
        ``limits``), replacing everything; return when it is at rest (ns). ValueError when nothing
        is scheduled and no ``start`` is given."""
        trajectory = stopping(self.sample(now_ns) if start is None else start, deceleration,
                              self.limits)
        self._entries = [(int(now_ns), trajectory)]
        self.generation += 1
        return int(now_ns) + round(trajectory.end_time * 1e9)

    def moving(self, now_ns):
        """True while the reference in force at ``now_ns`` has not reached its last knot, or a
        newer one waits to start (for a controller's mode: tracking rather than holding)."""
        if self.empty:
            return False
        k = self._index_in_force(now_ns)
        if k < len(self._entries) - 1:
            return True
        start_ns, trajectory = self._entries[k]
        return (now_ns - start_ns) * 1e-9 < trajectory.end_time

    def pending(self, now_ns):
        """Number of entries that wait for their start at ``now_ns`` (newer than the one in
        force)."""
        return max(len(self._entries) - 1 - self._index_in_force(now_ns), 0)

    def add(self, trajectory, start_ns, now_ns):
        """Schedule ``trajectory`` from ``start_ns``: after the current entries if it starts in
        the future, else in place of all of them. TooManyPending (nothing changed) when it starts
        in the future and ``max_pending`` entries already wait."""
        start_ns, now_ns = int(start_ns), int(now_ns)
        if start_ns > now_ns:
            self._check_room(now_ns)
            self._entries.append((start_ns, trajectory))
        else:
            self._entries = [(start_ns, trajectory)]
        self.generation += 1

    def plan(self, now_ns, stamp_ns):
        """The ``Plan`` of a trajectory stamped ``stamp_ns`` (0 = now) received at ``now_ns``.

        ValueError when nothing is scheduled to start from (``hold`` first); TooManyPending
        when it starts in the future and ``max_pending`` entries already wait.
        """
        if self.empty:
            raise ValueError('no reference to start from: hold a position first')
        now_ns = int(now_ns)
        start_ns = int(stamp_ns) if stamp_ns > 0 else now_ns
        if start_ns > now_ns:
            self._check_room(now_ns)        # before the (costly) interpolation
        takeover_ns = max(start_ns, now_ns)
        return Plan(start_ns, takeover_ns, self.sample(takeover_ns), self.generation, self.limits)

    def commit(self, plan, trajectory, now_ns):
        """Schedule ``trajectory`` made from ``plan``, at ``now_ns`` (``add``); Superseded
        (nothing changed) if the schedule changed since the plan was made."""
        if plan.generation != self.generation:
            raise Superseded('the reference changed while this one was prepared')
        self.add(trajectory, plan.start_ns, now_ns)

    def add_waypoints(self, now_ns, stamp_ns, times, positions, velocities=None,
                      accelerations=None, columns=None):
        """Schedule a trajectory through waypoints stamped ``stamp_ns`` (0 = now); return its
        start in ns. TooManyPending as ``add``.

        ``times`` (s after the start), ``positions`` (N, m), ``velocities``, ``accelerations``
        and ``columns`` (the m joints' indices in model order) as ``interpolation.from_waypoints``.
        The trajectory starts from the desired state in force when it takes over. ValueError on
        bad waypoints (or every waypoint already past), LimitViolation when it leaves ``limits``,
        or ValueError when nothing is scheduled to start from (``hold`` first); the schedule is
        then unchanged.
        """
        plan = self.plan(now_ns, stamp_ns)
        trajectory = plan.trajectory(times, positions, velocities, accelerations, columns)
        self.commit(plan, trajectory, now_ns)
        return plan.start_ns

    def _check_room(self, now_ns):
        if self.pending(now_ns) >= self._max_pending:
            raise TooManyPending(f'{self._max_pending} references already wait for their start '
                                 '(max_pending): a reference stamped in the future is refused')

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
