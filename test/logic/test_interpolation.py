"""Unit tests of robot_dynamics_ros.logic.interpolation (no ROS): boundary conditions and holding."""

import numpy as np
import pytest

from robot_dynamics_ros.logic.interpolation import PiecewisePolynomial, hold

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
    from robot_dynamics_ros.logic.interpolation import from_waypoints
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
    from robot_dynamics_ros.logic.interpolation import from_waypoints
    start = (np.array([0.3, 0.4, 0.5]), np.zeros(3), np.zeros(3))
    traj = from_waypoints(start, [0.0, 2.0], [[0.0], [1.0]], columns=[1])
    for t in (0.0, 1.0, 3.0):
        q, _, _ = traj.sample(t)
        assert q[0] == 0.3 and q[2] == 0.5
    assert traj.sample(0.0)[0][1] == 0.0   # a waypoint at time 0 replaces the start state
    assert traj.sample(3.0)[0][1] == 1.0


def test_from_waypoints_start_time_skips_past_waypoints():
    from robot_dynamics_ros.logic.interpolation import from_waypoints
    start = (np.array([5.0]), np.zeros(1), np.zeros(1))
    traj = from_waypoints(start, [1.0, 2.0, 3.0], [[1.0], [2.0], [3.0]], start_time=1.5)
    assert traj.start_time == 1.5
    np.testing.assert_allclose(traj.sample(1.5)[0], [5.0])
    np.testing.assert_allclose(traj.sample(2.0)[0], [2.0])
    with pytest.raises(ValueError, match='before the start'):
        from_waypoints(start, [1.0], [[1.0]], start_time=1.5)


# -- limits: points, and the extrema between them -------------------------------------------------

def _limits(n=2, lower=-1.0, upper=1.0, velocity=2.0, types=None):
    from robot_dynamics_ros.logic.interpolation import JointLimits
    return JointLimits([f'j{k}' for k in range(n)], np.full(n, lower), np.full(n, upper),
                       np.full(n, velocity), types)


def _refused(trajectory, limits, *fragments):
    from robot_dynamics_ros.logic.interpolation import LimitViolation, check_limits
    with pytest.raises(LimitViolation) as error:
        check_limits(trajectory, limits)
    assert error.value.kind == 'limits'
    for fragment in fragments:
        assert fragment in str(error.value), str(error.value)
    return str(error.value)


@pytest.mark.parametrize('degree', [3, 5])
def test_polynomial_extrema_are_those_of_the_polynomial_on_the_unit_interval(degree):
    """The roots of p' give the extrema: never below a dense sampling's, never beyond it by
    more than the sampling's own resolution, and attained where they are reported."""
    from robot_dynamics_ros.logic.interpolation import _horner, polynomial_extrema
    a = RNG.normal(size=(500, degree + 1)) * RNG.uniform(0.01, 100.0, size=(500, 1))
    low, u_low, high, u_high = polynomial_extrema(a)
    u = np.linspace(0.0, 1.0, 20001)
    values = _horner(a, np.broadcast_to(u, (500, u.size)))
    scale = np.abs(a).sum(axis=1)
    assert np.all(high >= values.max(axis=1) - 1e-12 * scale)
    assert np.all(low <= values.min(axis=1) + 1e-12 * scale)
    assert np.all(high <= values.max(axis=1) + 1e-7 * scale)      # 1/20000 of a step: flat top
    assert np.all(low >= values.min(axis=1) - 1e-7 * scale)
    np.testing.assert_allclose(_horner(a, u_high[:, None])[:, 0], high, rtol=0, atol=1e-12 * scale.max())
    assert np.all((u_low >= 0.0) & (u_low <= 1.0) & (u_high >= 0.0) & (u_high <= 1.0))
    # Degenerate leading coefficients (a cubic stored as a quintic, a constant) are handled.
    low, _, high, _ = polynomial_extrema(np.array([[0.0, 3.0, -3.0, 0.0, 0.0, 0.0],
                                                   [2.0, 0.0, 0.0, 0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(high, [0.75, 2.0])
    np.testing.assert_allclose(low, [0.0, 2.0])
    assert np.isnan(polynomial_extrema(np.array([[0.0, np.inf, 1.0]]))[2][0])


def test_points_beyond_the_position_or_velocity_limits_are_named():
    from robot_dynamics_ros.logic.interpolation import check_limits, from_waypoints
    start = (np.zeros(2), np.zeros(2), np.zeros(2))
    limits = _limits()
    ok = from_waypoints(start, [1.0, 2.0], [[0.5, -0.5], [1.0, -1.0]])     # at the limits: fine
    assert check_limits(ok, limits) is None
    far = from_waypoints(start, [1.0, 2.0, 3.0], [[0.5, 0.0], [0.9, 0.0], [1.2, 0.0]])
    _refused(far, limits, 'point 2', "joint 'j0'", '1.2 rad', 'upper position limit 1 rad')
    low = from_waypoints(start, [1.0], [[-1.5]], columns=[1])
    _refused(low, limits, 'point 0', "joint 'j1'", 'lower position limit -1 rad')
    fast = from_waypoints(start, [1.0, 2.0], [[0.2, 0.0], [0.4, 0.0]],
                          velocities=[[2.5, 0.0], [0.0, 0.0]])
    _refused(fast, limits, 'point 0', 'velocity 2.5 rad/s', 'velocity limit 2 rad/s')
    # prismatic joints in metres
    metres = _limits(types=['prismatic', 'revolute'])
    _refused(far, metres, '1.2 m', 'limit 1 m')


def test_a_cubic_between_points_within_the_limits_that_overshoots_is_refused():
    """Both points inside [-1, 1]; the cubic Hermite through them with the given velocities
    bulges to about 1.07 between them (found analytically, not by sampling)."""
    start = (np.zeros(1), np.zeros(1), np.zeros(1))
    limits = _limits(n=1, velocity=10.0)
    traj = from_waypoints_1d(start, [1.0, 2.0], [0.8, 0.9], velocities=[1.5, 0.0])
    q_max = max(traj.sample(t)[0][0] for t in np.linspace(1.0, 2.0, 1001))
    assert q_max > 1.0, q_max
    message = _refused(traj, limits, 'between point 0 and point 1', "joint 'j0'",
                       'upper position limit 1 rad')
    assert f'{q_max:.4f}'[:5] in message, (q_max, message)


def test_a_quintic_that_overshoots_or_dives_below_is_refused():
    start = (np.zeros(1), np.zeros(1), np.zeros(1))
    limits = _limits(n=1, velocity=10.0)
    # at rest at both points, but leaving -0.9 with a large downward acceleration: dives below
    # -1 on the way to -0.5
    traj = from_waypoints_1d(start, [0.0, 0.5], [-0.9, -0.5], velocities=[0.0, 0.0],
                             accelerations=[-60.0, 0.0])
    assert traj.quintic.tolist() == [True]
    assert min(traj.sample(t)[0][0] for t in np.linspace(0.0, 0.5, 1001)) < -1.0
    _refused(traj, limits, 'between point 0 and point 1', 'lower position limit -1 rad')


def test_an_interpolated_velocity_beyond_the_limit_is_refused():
    start = (np.zeros(1), np.zeros(1), np.zeros(1))
    # 0.9 rad from rest to rest in 0.5 s: a cubic peaks at 1.5 * 0.9 / 0.5 = 2.7 rad/s mid-way
    traj = from_waypoints_1d(start, [0.5], [0.9])
    _refused(traj, _limits(n=1, velocity=2.0), 'between the start state and point 0 (at 0.250 s)',
             'would move at 2.7 rad/s', 'velocity limit 2 rad/s')
    from robot_dynamics_ros.logic.interpolation import check_limits
    assert check_limits(traj, _limits(n=1, velocity=2.7 + 1e-6)) is None


def test_continuous_joints_and_unlimited_velocities_are_not_checked():
    from robot_dynamics_ros.logic.interpolation import JointLimits, check_limits
    start = (np.zeros(1), np.zeros(1), np.zeros(1))
    limits = JointLimits(['c'], [-np.inf], [np.inf], [0.0], ['continuous'])
    assert check_limits(from_waypoints_1d(start, [0.1], [100.0]), limits) is None


def test_the_start_state_may_be_beyond_a_limit_the_trajectory_may_not_go_further():
    """A measured position held slightly beyond a limit: leaving it inwards, or holding it for a
    joint the trajectory does not name, is fine; a waypoint beyond the limit is not."""
    from robot_dynamics_ros.logic.interpolation import check_limits, from_waypoints
    start = (np.array([1.05, 1.05]), np.zeros(2), np.zeros(2))
    limits = _limits(velocity=10.0)
    assert check_limits(from_waypoints(start, [1.0], [[0.5]], columns=[0]), limits) is None
    _refused(from_waypoints(start, [1.0], [[1.02]], columns=[0]), limits, 'point 0')
    # moving at the start towards the limit: the braking overshoots beyond the start itself
    moving = (np.array([1.05, 0.0]), np.array([1.0, 0.0]), np.zeros(2))
    _refused(from_waypoints(moving, [1.0], [[0.5]], columns=[1]), limits,
             'between the start state and point 0', "joint 'j0'")


def test_the_first_violation_is_reported_with_a_count_of_the_others():
    from robot_dynamics_ros.logic.interpolation import from_waypoints
    start = (np.zeros(2), np.zeros(2), np.zeros(2))
    traj = from_waypoints(start, [1.0, 2.0, 3.0], [[0.1, 0.0], [1.5, 0.0], [1.6, -1.5]])
    message = _refused(traj, _limits(velocity=100.0), 'point 1', "joint 'j0'")
    assert message.endswith('(and 2 more violations)'), message


def from_waypoints_1d(start, times, positions, velocities=None, accelerations=None):
    from robot_dynamics_ros.logic.interpolation import from_waypoints

    def column(values):
        return None if values is None else [[v] for v in values]
    return from_waypoints(start, times, column(positions), column(velocities), column(accelerations))
