"""Unit tests of robot_dynamics_ros.dynamics.limits (no ROS): saturation and joint stops."""

from types import SimpleNamespace

import numpy as np
import pytest

from robot_dynamics_ros.dynamics.limits import (
    at_position_limit,
    clip_positions,
    effort_limits,
    enforce_position_limits,
    saturate_effort,
)

INF = np.inf
MODEL = SimpleNamespace(
    effort_limit=np.array([10.0, 5.0, INF, 0.0]),
    lower=np.array([-1.0, 0.0, -INF, -2.0]),
    upper=np.array([1.0, 0.5, INF, 2.0]),
)


def test_effort_limits_treat_unset_as_unlimited():
    np.testing.assert_array_equal(effort_limits(MODEL), [10.0, 5.0, INF, INF])


def test_saturate_effort_clamps_symmetrically_and_reports_joints():
    tau, sat = saturate_effort(MODEL, [-20.0, 4.0, 1e9, -1e9])
    np.testing.assert_array_equal(tau, [-10.0, 4.0, 1e9, -1e9])
    assert sat.tolist() == [True, False, False, False]


def test_saturate_effort_does_not_modify_input():
    tau_in = np.array([20.0, 0.0, 0.0, 0.0])
    saturate_effort(MODEL, tau_in)
    assert tau_in[0] == 20.0


def test_enforce_position_limits_clamps_and_stops_motion_into_the_limit():
    q, qd = enforce_position_limits(MODEL, [1.2, -0.1, 100.0, 0.0], [3.0, 2.0, 7.0, -1.0])
    np.testing.assert_array_equal(q, [1.0, 0.0, 100.0, 0.0])
    # Joint 0 beyond upper moving up: stopped. Joint 1 beyond lower moving back in: kept.
    np.testing.assert_array_equal(qd, [0.0, 2.0, 7.0, -1.0])


def test_enforce_position_limits_at_the_limit_moving_out_is_kept():
    q, qd = enforce_position_limits(MODEL, [-1.0, 0.5, 0.0, 2.0], [-1.0, -1.0, 0.0, 1.0])
    np.testing.assert_array_equal(q, [-1.0, 0.5, 0.0, 2.0])
    np.testing.assert_array_equal(qd, [0.0, -1.0, 0.0, 0.0])


def test_clip_and_at_limit():
    np.testing.assert_array_equal(clip_positions(MODEL, [5, 5, 5, 5]), [1.0, 0.5, 5.0, 2.0])
    lo, hi = at_position_limit(MODEL, [-1.0, 0.2, 0.0, 3.0])
    assert lo.tolist() == [True, False, False, False]
    assert hi.tolist() == [False, False, False, True]


@pytest.mark.parametrize('call', [
    lambda: saturate_effort(MODEL, [1.0, 2.0]),
    lambda: saturate_effort(MODEL, [np.nan, 0, 0, 0]),
    lambda: enforce_position_limits(MODEL, [0, 0, 0, 0], [0, 0, np.inf, 0]),
    lambda: clip_positions(MODEL, np.zeros(3)),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
