"""robot_dynamics_ros.logic.reference_schedule without ROS: which trajectory is in force when, stamps,
chaining of future-stamped references, pruning, and no recursion however long the chain."""

import sys

import numpy as np
import pytest

from robot_dynamics_ros.logic.interpolation import hold
from robot_dynamics_ros.logic.reference_schedule import (
    DEFAULT_MAX_PENDING,
    ReferenceSchedule,
    Superseded,
    TooManyPending,
)

S = 1_000_000_000      # ns per s
RNG = np.random.default_rng(20260611)


def _q(schedule, t_ns):
    return schedule.sample(t_ns)[0].tolist()


def _held(value, now_ns=0, n=2, **kwargs):
    schedule = ReferenceSchedule(**kwargs)
    schedule.hold(np.full(n, value), now_ns)
    return schedule


def test_hold_is_in_force_at_all_times():
    schedule = _held(0.3, now_ns=5 * S)
    for t in (0, 5 * S, 100 * S):
        q, qd, qdd = schedule.sample(t)
        assert q.tolist() == [0.3, 0.3] and not qd.any() and not qdd.any()


def test_zero_stamp_starts_now_from_the_desired_state():
    schedule = _held(0.0)
    start = schedule.add_waypoints(2 * S, 0, times=[1.0], positions=[[1.0, -1.0]])
    assert start == 2 * S
    assert _q(schedule, 2 * S) == [0.0, 0.0]
    assert _q(schedule, int(2.5 * S)) == [0.5, -0.5]     # mid-way along the rest-to-rest cubic
    assert _q(schedule, 3 * S) == [1.0, -1.0]
    assert len(schedule) == 1, 'a reference starting now replaces the one before'


def test_future_stamp_replaces_the_current_reference_only_from_its_stamp():
    schedule = _held(0.0)
    schedule.add_waypoints(0, 0, times=[2.0], positions=[[2.0, 2.0]])   # moving from t = 0
    start = schedule.add_waypoints(0, 1 * S, times=[1.0], positions=[[5.0, 5.0]])
    assert start == S and len(schedule) == 2
    first = ReferenceSchedule()
    first.hold(np.zeros(2), 0)
    first.add_waypoints(0, 0, times=[2.0], positions=[[2.0, 2.0]])
    # Before the stamp the first reference is in force; the new one leaves its state at 1 s.
    for t in (0, S // 4, S // 2, S - 1):
        np.testing.assert_array_equal(schedule.sample(t), first.sample(t))
    q1, qd1, _ = first.sample(S)
    q, qd, _ = schedule.sample(S)
    np.testing.assert_allclose(q, q1)
    np.testing.assert_allclose(qd, qd1)
    assert qd[0] > 0.0, 'the new trajectory starts from the moving desired state'
    assert _q(schedule, 2 * S) == [5.0, 5.0]


def test_past_stamp_skips_the_waypoints_already_past():
    schedule = _held(0.0, n=1)
    # Stamped 1.5 s ago: the waypoint at 1 s is past, the one at 2 s is 0.5 s ahead.
    schedule.add_waypoints(10 * S, int(8.5 * S), times=[1.0, 2.0], positions=[[7.0], [1.0]])
    assert _q(schedule, 10 * S) == [0.0]
    assert _q(schedule, int(10.5 * S)) == [1.0]


def test_a_reference_with_every_waypoint_past_is_refused_and_nothing_changes():
    schedule = _held(0.4, n=1)
    with pytest.raises(ValueError, match='before the start'):
        schedule.add_waypoints(10 * S, 1 * S, times=[1.0, 2.0], positions=[[7.0], [1.0]])
    assert len(schedule) == 1 and _q(schedule, 10 * S) == [0.4]


def test_columns_move_some_joints_and_the_others_hold():
    schedule = _held(0.2, n=3)
    schedule.add_waypoints(0, 0, times=[1.0], positions=[[0.9]], columns=[1])
    assert _q(schedule, 5 * S) == [0.2, 0.9, 0.2]


def test_an_empty_schedule_cannot_be_sampled_or_extended():
    schedule = ReferenceSchedule()
    assert schedule.empty
    with pytest.raises(ValueError):
        schedule.sample(0)
    with pytest.raises(ValueError, match='hold'):
        schedule.add_waypoints(0, 0, times=[1.0], positions=[[1.0]])
    schedule.hold(np.zeros(1), 0)
    schedule.clear()
    assert schedule.empty


def test_prune_forgets_only_what_can_no_longer_be_in_force():
    schedule = _held(0.0, n=1)
    for k in (1, 2, 3):
        schedule.add_waypoints(0, k * S, times=[0.0], positions=[[float(k)]])
    assert len(schedule) == 4
    schedule.prune(S // 2)              # nothing started since the hold
    assert len(schedule) == 4
    schedule.prune(int(2.5 * S))        # the second has started: the hold and the first go
    assert len(schedule) == 2
    assert _q(schedule, int(2.5 * S)) == [2.0] and _q(schedule, 3 * S) == [3.0]
    # A new reference starting now replaces the whole chain.
    schedule.hold(np.ones(1), 4 * S)
    assert len(schedule) == 1


def test_a_long_chain_of_future_references_never_recurses():
    """Thousands of future-stamped references, each chained behind the one before: the
    recursive predecessor of this class raised RecursionError on prune and sample."""
    n_refs = 3000
    assert n_refs > sys.getrecursionlimit()
    schedule = _held(0.0, n=1, max_pending=n_refs)
    for k in range(1, n_refs + 1):
        schedule.add_waypoints(0, k * 1_000_000, times=[0.0], positions=[[float(k)]])
    assert len(schedule) == n_refs + 1
    assert _q(schedule, 0) == [0.0]                  # nothing started: the hold, at the end
    assert _q(schedule, n_refs * 1_000_000) == [float(n_refs)]
    assert _q(schedule, 1_500_000) == [1.0]
    schedule.prune(0)
    assert len(schedule) == n_refs + 1
    schedule.prune(n_refs * 1_000_000 // 2)
    assert len(schedule) == n_refs // 2 + 1
    assert _q(schedule, n_refs * 1_000_000) == [float(n_refs)]


class _RecursiveReference:
    """The controller's former linked reference (kept here as the oracle of the schedule)."""

    def __init__(self, start_ns, trajectory, before=None):
        self.start_ns, self.trajectory, self.before = start_ns, trajectory, before

    def sample(self, now_ns):
        if self.before is not None and now_ns < self.start_ns:
            return self.before.sample(now_ns)
        return self.trajectory.sample((now_ns - self.start_ns) * 1e-9)

    def prune(self, now_ns):
        if now_ns >= self.start_ns:
            self.before = None
        elif self.before is not None:
            self.before.prune(now_ns)


@pytest.mark.parametrize('seed', range(5))
def test_same_references_in_force_as_the_recursive_chain(seed):
    rng = np.random.default_rng(seed)
    schedule = ReferenceSchedule()
    schedule.hold(np.zeros(1), 0)
    oracle = _RecursiveReference(0, hold(np.zeros(1)))
    now = 0
    for _ in range(60):
        now += int(rng.integers(0, 300)) * 1_000_000
        action = rng.integers(0, 4)
        if action == 0:                                     # a reference, any start
            start = now + int(rng.integers(-500, 1500)) * 1_000_000
            trajectory = hold(rng.normal(size=1))
            schedule.add(trajectory, start, now)
            oracle = _RecursiveReference(start, trajectory,
                                         before=oracle if start > now else None)
        elif action == 1:
            schedule.prune(now)
            oracle.prune(now)
        for t in (now, now + int(rng.integers(0, 2000)) * 1_000_000):
            np.testing.assert_array_equal(schedule.sample(t)[0], oracle.sample(t)[0])


def test_pending_references_are_bounded():
    """A client stamping with wall time a controller on simulated time: every reference lies in
    the future, forever. At most max_pending wait; the others are refused and nothing changes."""
    assert DEFAULT_MAX_PENDING == ReferenceSchedule().max_pending
    schedule = _held(0.0, n=1, max_pending=5)
    far = 10**9 * S                                     # "now" on the wall clock, ~30 years
    for k in range(5):
        schedule.add_waypoints(0, far + k, times=[0.0], positions=[[float(k)]])
    assert schedule.pending(0) == 5
    for add in (lambda: schedule.add_waypoints(0, far + 9, times=[0.0], positions=[[9.0]]),
                lambda: schedule.add(hold(np.ones(1)), far + 9, 0)):
        with pytest.raises(TooManyPending, match='max_pending'):
            add()
    assert len(schedule) == 6 and _q(schedule, far + 10) == [4.0]
    # Once some have started, room again; a reference starting now replaces everything.
    assert schedule.pending(far + 2) == 2
    schedule.add_waypoints(far + 2, far + 20, times=[0.0], positions=[[20.0]])
    assert schedule.pending(far + 2) == 3
    schedule.add_waypoints(far + 30, 0, times=[0.0], positions=[[30.0]])
    assert len(schedule) == 1 and schedule.pending(far + 30) == 0
    with pytest.raises(ValueError):
        ReferenceSchedule(max_pending=0)


def test_plan_trajectory_commit_is_add_waypoints_in_three_steps():
    """The interpolation in between may run elsewhere (a worker thread): the same trajectory as
    add_waypoints, and a plan made before the schedule changed is refused."""
    waypoints = dict(times=[0.5, 1.0], positions=[[0.4], [1.0]])
    one = _held(0.2, n=1)
    one.add_waypoints(S, 0, **waypoints)
    other = _held(0.2, n=1)
    plan = other.plan(S, 0)
    trajectory = plan.trajectory(**waypoints)
    other.commit(plan, trajectory, int(1.2 * S))          # committed a little later
    for t in (S, int(1.3 * S), 2 * S, 3 * S):
        assert _q(one, t) == _q(other, t)
    for change in (lambda s: s.hold(np.zeros(1), 2 * S), lambda s: s.clear(),
                   lambda s: s.add_waypoints(2 * S, 0, times=[1.0], positions=[[5.0]])):
        schedule = _held(0.2, n=1)
        plan = schedule.plan(S, 0)
        trajectory = plan.trajectory(**waypoints)
        change(schedule)
        before = len(schedule)
        with pytest.raises(Superseded):
            schedule.commit(plan, trajectory, 2 * S)
        assert len(schedule) == before
    # prune changes nothing that is in force: a plan survives it.
    schedule = _held(0.2, n=1)
    plan = schedule.plan(S, 0)
    schedule.prune(2 * S)
    schedule.commit(plan, plan.trajectory(**waypoints), 2 * S)
    assert _q(schedule, 3 * S) == [1.0]


def test_a_reference_beyond_the_limits_is_refused_whole_and_the_schedule_is_unchanged():
    """With limits, a trajectory with one point beyond them (or one that overshoots them
    between points) is refused before anything is scheduled: what was in force stays."""
    from robot_dynamics_ros.logic.interpolation import JointLimits
    from robot_dynamics_ros.logic.reference_schedule import LimitViolation
    limits = JointLimits(['a', 'b'], [-1.0, -1.0], [1.0, 1.0], [5.0, 5.0])
    schedule = _held(0.0, limits=limits)
    schedule.add_waypoints(0, 0, times=[1.0], positions=[[0.5, 0.5]])
    generation, before = schedule.generation, [schedule.sample(t * S) for t in (0.5, 1.0, 3.0)]
    for times, positions, velocities, where in (
            ([1.0, 2.0], [[0.9, 0.0], [1.3, 0.0]], None, 'point 1'),
            ([1.0, 2.0], [[0.8, 0.0], [0.9, 0.0]], [[1.5, 0.0], [0.0, 0.0]], 'between point 0')):
        with pytest.raises(LimitViolation, match=where):
            schedule.add_waypoints(S // 2, 0, times=times, positions=positions,
                                   velocities=velocities)
        assert schedule.generation == generation and len(schedule) == 1
        for (q, qd, _), t in zip(before, (0.5, 1.0, 3.0)):
            np.testing.assert_array_equal(schedule.sample(t * S)[0], q)
            np.testing.assert_array_equal(schedule.sample(t * S)[1], qd)
    # The plan carries the limits: a worker thread's interpolation refuses it the same way.
    plan = schedule.plan(S, 0)
    assert plan.limits is limits
    with pytest.raises(LimitViolation):
        plan.trajectory([1.0], [[2.0, 0.0]])
    schedule.limits = None
    schedule.add_waypoints(S, 0, times=[1.0], positions=[[2.0, 0.0]])      # unchecked
