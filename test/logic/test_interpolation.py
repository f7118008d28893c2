"""Unit tests of robot_dynamics_ros.interpolation (no ROS): boundary conditions and holding."""

import numpy as np
import pytest

from robot_dynamics_ros.interpolation import PiecewisePolynomial, hold

RNG = np.random.default_rng(20261121)


def _fd(traj, t, h=1e-6):
    """Central finite differences of position and velocity at t."""
    qp, qdp, _ = traj.sample(t + h)
    qm, qdm, _ = traj.sample(t - h)
    return (qp - qm) / (2 * h), (qdp - qdm) / (2 * h)


def _limit(traj, t, side, eps=1e-9):
    return traj.sample(t + side * eps)


def test_quintic_matches_position_velocity_acceleration_at_every_knot():
    n, N = 3, 4
    times = np.cumsum(RNG.uniform(0.3, 1.5, N)) - 0.2
    q = RNG.normal(size=(N, n))
    v = RNG.normal(size=(N, n))
    a = RNG.normal(size=(N, n))
    traj = PiecewisePolynomial(times, q, v, a)
    assert traj.quintic.all()
    for k in range(N):
        # Interior knots are matched from both sides; the end knots from inside the range.
        sides = [s for s in (-1, +1) if (s < 0 and k > 0) or (s > 0 and k < N - 1)]
        for side in sides:
            qs, qds, qdds = _limit(traj, times[k], side)
            np.testing.assert_allclose(qs, q[k], atol=1e-7)
            np.testing.assert_allclose(qds, v[k], atol=1e-6)
            np.testing.assert_allclose(qdds, a[k], atol=1e-5)


def test_cubic_matches_position_and_velocity_and_defaults_velocity_to_zero():
    n = 2
    times = [0.0, 1.0, 2.5]
    q = RNG.normal(size=(3, n))
    v = [RNG.normal(size=n), None, RNG.normal(size=n)]  # the middle knot: velocity zero
    traj = PiecewisePolynomial(times, q, v)
    assert not traj.quintic.any()
    expected_v = [v[0], np.zeros(n), v[2]]
    for k, t in enumerate(times):
        for side in (-1, +1):
            if (side < 0 and k == 0) or (side > 0 and k == 2):
                continue
            qs, qds, _ = _limit(traj, t, side)
            np.testing.assert_allclose(qs, q[k], atol=1e-7)
            np.testing.assert_allclose(qds, expected_v[k], atol=1e-6)


def test_position_only_waypoints_stop_at_each_waypoint():
    traj = PiecewisePolynomial([0.0, 1.0, 3.0], [[0.0], [1.0], [-1.0]])
    for t in (0.0, 1.0):
        _, qd, _ = traj.sample(t)
        assert abs(qd[0]) < 1e-12
    _, qd_end, _ = _limit(traj, 3.0, -1)
    assert abs(qd_end[0]) < 1e-6


def test_mixed_segments_quintic_only_where_both_knots_give_accelerations():
    q = [[0.0], [1.0], [2.0]]
    traj = PiecewisePolynomial([0, 1, 2], q, accelerations=[[0.0], [1.0], None])
    assert traj.quintic.tolist() == [True, False]


def test_velocity_and_acceleration_are_derivatives_of_position():
    times = [0.0, 0.7, 2.0]
    q = RNG.normal(size=(3, 4))
    v = RNG.normal(size=(3, 4))
    a = RNG.normal(size=(3, 4))
    for traj in (PiecewisePolynomial(times, q, v, a), PiecewisePolynomial(times, q, v)):
        for t in np.linspace(0.05, 1.95, 17):
            _, qd, qdd = traj.sample(t)
            dq, dqd = _fd(traj, t)
            np.testing.assert_allclose(dq, qd, atol=1e-5)
            np.testing.assert_allclose(dqd, qdd, atol=1e-4)


def test_holds_first_point_before_start_and_last_point_after_end():
    q = [[0.1, 0.2], [1.0, -1.0]]
    traj = PiecewisePolynomial([1.0, 2.0], q, [[0.5, 0.5], [0.3, 0.3]], [[1, 1], [2, 2]])
    for t, expected in ((0.0, q[0]), (0.999, q[0]), (2.0, q[1]), (10.0, q[1])):
        qs, qds, qdds = traj.sample(t)
        np.testing.assert_allclose(qs, expected)
        np.testing.assert_array_equal(qds, 0.0)
        np.testing.assert_array_equal(qdds, 0.0)
    assert traj.start_time == 1.0 and traj.end_time == 2.0


def test_hold_is_constant():
    traj = hold([1.0, 2.0, 3.0])
    for t in (-5.0, 0.0, 1e6):
        q, qd, qdd = traj.sample(t)
        np.testing.assert_array_equal(q, [1.0, 2.0, 3.0])
        assert not qd.any() and not qdd.any()


def test_sample_returns_fresh_arrays():
    traj = hold([1.0])
    q, _, _ = traj.sample(0.0)
    q[0] = 99.0
    assert traj.sample(0.0)[0][0] == 1.0


@pytest.mark.parametrize('kwargs, match', [
    (dict(times=[0.0, 0.0], positions=[[0.0], [1.0]]), 'strictly increasing'),
    (dict(times=[0.0, 1.0], positions=[[0.0], [np.nan]]), 'finite'),
    (dict(times=[0.0, 1.0], positions=[[0.0, 1.0]]), 'shape'),
    (dict(times=[0.0, 1.0], positions=[[0.0], [1.0]], velocities=[[0.0]]), 'one entry'),
    (dict(times=[0.0, 1.0], positions=[[0.0], [1.0]], velocities=[[0.0], [0.0, 1.0]]), 'shape'),
    (dict(times=[], positions=np.zeros((0, 1))), 'at least one'),
])
def test_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PiecewisePolynomial(**kwargs)


def test_from_waypoints_starts_from_the_start_state_when_first_point_is_later():
    from robot_dynamics_ros.interpolation import from_waypoints
    start = (np.array([0.0, 1.0]), np.array([0.5, 0.0]), np.array([0.1, 0.0]))
    traj = from_waypoints(start, [1.0], [[1.0, 2.0]], velocities=[[0.0, 0.0]])
    q, qd, _ = traj.sample(0.0)
    np.testing.assert_allclose(q, start[0])
    np.testing.assert_allclose(qd, start[1])
    np.testing.assert_allclose(traj.sample(1.0)[0], [1.0, 2.0])
    # With accelerations on the waypoint the start acceleration is matched as well (quintic).
    traj = from_waypoints(start, [1.0], [[1.0, 2.0]], accelerations=[[0.0, 0.0]])
    np.testing.assert_allclose(traj.sample(0.0)[2], start[2], atol=1e-12)


def test_from_waypoints_partial_columns_hold_the_other_joints():
    from robot_dynamics_ros.interpolation import from_waypoints
    start = (np.array([0.3, 0.4, 0.5]), np.zeros(3), np.zeros(3))
    traj = from_waypoints(start, [0.0, 2.0], [[0.0], [1.0]], columns=[1])
    for t in (0.0, 1.0, 3.0):
        q, _, _ = traj.sample(t)
        assert q[0] == 0.3 and q[2] == 0.5
    assert traj.sample(0.0)[0][1] == 0.0   # a waypoint at time 0 replaces the start state
    assert traj.sample(3.0)[0][1] == 1.0


def test_from_waypoints_start_time_skips_past_waypoints():
    from robot_dynamics_ros.interpolation import from_waypoints
    start = (np.array([5.0]), np.zeros(1), np.zeros(1))
    traj = from_waypoints(start, [1.0, 2.0, 3.0], [[1.0], [2.0], [3.0]], start_time=1.5)
    assert traj.start_time == 1.5
    np.testing.assert_allclose(traj.sample(1.5)[0], [5.0])
    np.testing.assert_allclose(traj.sample(2.0)[0], [2.0])
    with pytest.raises(ValueError, match='before the start'):
        from_waypoints(start, [1.0], [[1.0]], start_time=1.5)
