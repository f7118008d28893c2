"""logic.reference_intake without ROS: a reference refused by its size before it is read, the names
checked against the controlled joints, and prepare() interpolating the waypoints into the schedule's
plan in model order."""
import numpy as np
import pytest
from test_cdr import _cdr

from robot_dynamics_ros.logic.input_guard import BadInput
from robot_dynamics_ros.logic.reference_intake import (
    INLINE_POINTS,
    ReferenceJob,
    checked_names,
    prepare,
    size_refusal,
)
from robot_dynamics_ros.logic.reference_schedule import ReferenceSchedule


class _Model:
    joint_names = ('a', 'b', 'c')


def test_size_refusals():
    raw = _cdr('', ['a', 'b'], 5)
    assert size_refusal(raw, joints=3, max_points=10) == (None, 2, 5)
    refusal, names, _ = size_refusal(raw, joints=1, max_points=10)
    assert refusal[0] == 'reference/too_many_names' and 'names 2 joints' in refusal[1] and names == 2
    refusal, _, points = size_refusal(raw, joints=3, max_points=4)
    assert refusal == ('reference/too_long', '5 points, more than max_trajectory_points = 4')
    # an encapsulation the reader does not know: the points bounded by the byte count
    refusal, names, points = size_refusal(b'\x00\x07' + raw[2:], joints=3, max_points=10**6)
    assert refusal is None and names == 0 and points >= 0
    assert INLINE_POINTS == 200


def test_names_must_be_controlled_joints():
    assert checked_names(['b', 'a'], ('a', 'b', 'c')) == ['b', 'a']
    with pytest.raises(BadInput, match="names joints \\['x'\\]") as error:
        checked_names(['a', 'x'], ('a', 'b', 'c'))
    assert error.value.kind == 'unknown_joints'


def test_prepare_interpolates_in_model_order_and_raises_what_refuses_it():
    schedule = ReferenceSchedule()
    schedule.hold(np.zeros(3), 0)
    plan = schedule.plan(0, 0)
    times = np.array([1.0, 2.0])
    positions = np.array([[0.1, 0.2], [0.3, 0.4]])          # for joints c, a
    job = ReferenceJob(plan, lambda: (['c', 'a'], times, positions, [None, None], [None, None]),
                       _Model(), ('a', 'b', 'c'), 0)
    trajectory, names, got_times = prepare(job)
    assert names == ['c', 'a'] and got_times is times
    schedule.commit(plan, trajectory, 0)
    q_d, _, _ = schedule.sample(2_000_000_000)
    np.testing.assert_allclose(q_d, [0.4, 0.0, 0.3], atol=1e-12)   # model order a, b, c; b holds
    unknown = job._replace(read=lambda: (['x'], times, positions[:, :1], [None] * 2, [None] * 2))
    with pytest.raises(BadInput):
        prepare(unknown)
