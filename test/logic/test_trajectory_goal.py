"""trajectory_goal (FollowJointTrajectory checks and tolerances, JTC's semantics) and the stop of a
cancelled motion (interpolation.stopping, ReferenceSchedule.stop). ROS-free."""

import math

import numpy as np
import pytest

from robot_dynamics_ros.logic.input_guard import BadInput
from robot_dynamics_ros.logic.interpolation import JointLimits, LimitViolation, stopping
from robot_dynamics_ros.logic.reference_schedule import ReferenceSchedule
from robot_dynamics_ros.logic.trajectory_goal import (
    ErrorCode,
    GoalError,
    GoalMonitor,
    Tolerances,
    error_code_of,
    goal_joint_error,
    old_stamp_error,
)

JOINTS = ['a', 'b', 'c']
S = 1_000_000_000


@pytest.mark.parametrize('names, partial, fragment', [
    (['a', 'b', 'x'], False, "'x'"),
    (['a', 'b', 'a'], False, 'more than once'),
    (['a', 'b'], False, 'leaves out'),
    ([], True, 'no joints'),
])
def test_goal_joints_refused_with_invalid_joints(names, partial, fragment):
    error = goal_joint_error(names, JOINTS, partial)
    assert isinstance(error, GoalError) and error.code == ErrorCode.INVALID_JOINTS
    assert fragment in str(error)


def test_goal_joints_accepted():
    assert goal_joint_error(['c', 'a', 'b'], JOINTS, False) is None      # any order
    assert goal_joint_error(['b'], JOINTS, True) is None                # partial, allowed


def test_old_stamp():
    assert old_stamp_error(0, 1.0, 100 * S) is None                    # 0 = now
    assert old_stamp_error(99 * S, 2.0, 100 * S) is None               # still running
    error = old_stamp_error(97 * S, 2.0, 100 * S)
    assert error.code == ErrorCode.OLD_HEADER_TIMESTAMP and '1.000 s ago' in str(error)


def test_error_codes_of_refusals():
    assert error_code_of(BadInput('unknown_joints', 'x')) == ErrorCode.INVALID_JOINTS
    assert error_code_of(BadInput('duplicate', 'x')) == ErrorCode.INVALID_JOINTS
    assert error_code_of(BadInput('nonfinite', 'x')) == ErrorCode.INVALID_GOAL
    assert error_code_of(LimitViolation('x')) == ErrorCode.INVALID_GOAL
    assert error_code_of(ValueError('x')) == ErrorCode.INVALID_GOAL
    assert error_code_of(GoalError(ErrorCode.OLD_HEADER_TIMESTAMP, 'x')) == -3


def test_tolerances_goal_values_override_defaults_zero_keeps_minus_one_frees():
    defaults = Tolerances.defaults(JOINTS, path_position=[0.1, 0.2, 0.0], goal_position=[0.01],
                                   goal_time=0.5, stopped_velocity=0.02)
    assert defaults.path_position.tolist() == [0.1, 0.2, math.inf]       # 0 = no limit
    assert defaults.goal_velocity.tolist() == [0.02] * 3                # stopped_velocity
    tol = defaults.from_goal(JOINTS, [('a', 0.05, 0.0, 0.0), ('b', -1.0, 0.3, 0.0)],
                             [('c', 0.0, -1.0, 0.0)], 0.0)
    assert tol.path_position.tolist() == [0.05, math.inf, math.inf]
    assert tol.path_velocity.tolist() == [math.inf, 0.3, math.inf]
    assert tol.goal_position.tolist() == [0.01] * 3
    assert tol.goal_velocity.tolist() == [0.02, 0.02, math.inf]
    assert tol.goal_time == 0.5                                          # 0 = the default
    assert defaults.from_goal(JOINTS, [], [], -1.0).goal_time == 0.0     # -1: no limit
    assert defaults.from_goal(JOINTS, [], [], 2.0).goal_time == 2.0


@pytest.mark.parametrize('path, code', [
    ([('x', 0.1, 0.0, 0.0)], ErrorCode.INVALID_JOINTS),
    ([('a', -0.5, 0.0, 0.0)], ErrorCode.INVALID_GOAL),
    ([('a', 0.1, math.nan, 0.0)], ErrorCode.INVALID_GOAL),
    ([('a', 0.1, 0.0, -2.0)], ErrorCode.INVALID_GOAL),
])
def test_bad_tolerances_refused(path, code):
    with pytest.raises(GoalError) as info:
        Tolerances.defaults(JOINTS).from_goal(JOINTS, path, [], 0.0)
    assert info.value.code == code


def test_defaults_refuse_bad_parameters():
    with pytest.raises(ValueError, match='path_position'):
        Tolerances.defaults(JOINTS, path_position=[0.1, 0.2])
    with pytest.raises(ValueError, match='goal_time'):
        Tolerances.defaults(JOINTS, goal_time=-1.0)


def _monitor(goal_time=0.5, path=0.1, goal=0.01):
    tol = Tolerances.defaults(JOINTS, path_position=[path], goal_position=[goal], goal_time=goal_time)
    return GoalMonitor(JOINTS, tol, start_ns=1 * S, end_ns=3 * S, times=[0.5, 1.0, 2.0])


def test_path_tolerance_during_the_trajectory_only():
    monitor, z = _monitor(), np.zeros(3)
    off = np.array([0.0, 0.15, 0.0])
    assert monitor.check(int(0.5 * S), off, z, z, z) is None            # before its start
    code, text = monitor.check(2 * S, off, z, z, z)
    assert code == ErrorCode.PATH_TOLERANCE_VIOLATED and 'joint b' in text and '0.1' in text
    assert monitor.check(2 * S, np.array([0.0, 0.05, 0.0]), z, z, z) is None


def test_goal_succeeds_within_tolerance_fails_after_goal_time_waits_without():
    z = np.zeros(3)
    near, far = np.array([0.005, 0, 0]), np.array([0.05, 0, 0])
    assert _monitor().check(3 * S, near, z, z, z)[0] == ErrorCode.SUCCESSFUL
    assert _monitor().check(int(3.4 * S), far, z, z, z) is None          # within goal_time
    code, text = _monitor().check(int(3.6 * S), far, z, z, z)
    assert code == ErrorCode.GOAL_TOLERANCE_VIOLATED and 'joint a' in text
    assert _monitor(goal_time=0.0).check(100 * S, far, z, z, z) is None  # 0: no time limit
    moving = np.array([0.0, 0.0, 0.05])                                  # stopped_velocity 0.01
    assert _monitor().check(3 * S, z, moving, z, z) is None


def test_index_is_the_point_under_way():
    monitor = _monitor()
    assert [monitor.index(int(t * S)) for t in (0.0, 1.2, 1.5, 1.9, 2.1, 5.0)] == [0, 0, 0, 0, 1, 2]


# -- stopping a cancelled motion ------------------------------------------------------------------

def test_stop_decelerates_uniformly_without_a_jump():
    q, v = np.array([0.0, 1.0]), np.array([2.0, -1.0])
    trajectory = stopping((q, v, np.array([3.0, 0.0])), deceleration=4.0)
    assert trajectory.end_time == pytest.approx(0.5)                     # max |v| / a
    q0, v0, _ = trajectory.sample(0.0)
    np.testing.assert_allclose(q0, q)
    np.testing.assert_allclose(v0, v)                                    # no velocity jump
    ts = np.linspace(0.0, 0.5, 51)
    speeds = np.array([np.abs(trajectory.sample(t)[1]) for t in ts])
    assert np.all(np.diff(speeds, axis=0) <= 1e-12)                      # only slows down
    accelerations = np.array([trajectory.sample(t)[2] for t in ts[:-1]])
    np.testing.assert_allclose(accelerations, np.tile(-v / 0.5, (50, 1)), atol=1e-9)
    end = trajectory.sample(10.0)
    np.testing.assert_allclose(end[0], q + v * 0.25)                     # q + v T/2
    np.testing.assert_allclose(end[1], 0.0)


def test_stop_shortened_before_a_position_limit():
    limits = JointLimits(['a'], [-1.0], [0.1], [10.0])
    trajectory = stopping((np.array([0.0]), np.array([1.0]), np.zeros(1)), 1.0, limits)
    assert trajectory.end_time == pytest.approx(0.2)                     # 2·0.1 / 1
    assert trajectory.sample(1.0)[0][0] == pytest.approx(0.1)
    at_rest = stopping((np.array([0.3]), np.zeros(1), np.zeros(1)), 1.0)
    assert at_rest.sample(1.0)[0][0] == 0.3
    with pytest.raises(ValueError, match='deceleration'):
        stopping((np.zeros(1), np.ones(1), np.zeros(1)), 0.0)


def test_schedule_stop_replaces_the_reference_from_the_desired_state():
    schedule = ReferenceSchedule()
    schedule.hold(np.zeros(1), 0)
    schedule.add_waypoints(0, 0, times=[2.0], positions=[[1.0]])
    mid = schedule.sample(1 * S)
    rest_ns = schedule.stop(1 * S, deceleration=10.0)
    np.testing.assert_allclose(schedule.sample(1 * S)[0], mid[0])        # continues from there
    np.testing.assert_allclose(schedule.sample(1 * S)[1], mid[1])
    assert rest_ns == 1 * S + round(abs(mid[1][0]) / 10.0 * S)
    final = schedule.sample(5 * S)
    assert final[1][0] == 0.0 and final[0][0] < 1.0                      # stopped short


def test_schedule_stop_from_the_measured_state():
    """A cancel while the arm lags its trajectory: the stop starts where the arm is, at its speed."""
    schedule = ReferenceSchedule()
    schedule.hold(np.zeros(1), 0)
    schedule.add_waypoints(0, 0, times=[2.0], positions=[[1.0]])
    measured = (np.array([0.1]), np.array([0.3]), np.zeros(1))      # behind the desired 0.5 rad
    schedule.stop(1 * S, deceleration=3.0, start=measured)
    q, qd, _ = schedule.sample(1 * S)
    assert q[0] == 0.1 and qd[0] == 0.3
    final = schedule.sample(5 * S)
    assert final[0][0] == pytest.approx(0.1 + 0.3 * 0.1 / 2) and final[1][0] == 0.0
