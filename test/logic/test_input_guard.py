"""robot_dynamics_ros.logic.input_guard without ROS: warnings throttled per kind with bounded lines and
bounded memory, short name lists, and which joint states are physically possible."""

import logging
import math

import numpy as np
import pytest

from robot_dynamics_ros.logic.input_guard import (
    MAX_ABS_POSITION,
    MAX_LOG_CHARS,
    BadInput,
    StateLimits,
    WarningThrottle,
    bounded,
    short_list,
)


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@pytest.fixture
def logger():
    logger = logging.getLogger('test_input_guard')
    handler = _Lines()
    logger.addHandler(handler)
    logger.propagate = False
    yield logger, handler.lines
    logger.removeHandler(handler)


def test_one_warning_per_kind_and_period(logger):
    log, lines = logger
    throttle = WarningThrottle(log, period=60.0)
    for k in range(1000):       # a flood of messages, each malformed differently
        throttle.warn('joint_states/length', f'message {k}: ' + 'x' * k)
        throttle.warn('joint_states/nonfinite', f'message {k}')
    assert lines == ['message 0: ', 'message 0'] and len(throttle) == 2
    throttle.reset('joint_states/length')
    assert throttle.warn('joint_states/length', 'again')
    assert throttle.once('saturated/a', 'once') and not throttle.once('saturated/a', '')


def test_lines_and_memory_are_bounded(logger):
    log, lines = logger
    throttle = WarningThrottle(log, period=60.0, max_keys=16)
    throttle.warn('big', 'n' * 500_000)
    assert len(lines[0]) <= MAX_LOG_CHARS and lines[0].endswith('more characters)')
    # Even keys that differ every time (a caller's mistake) keep the memory bounded.
    for k in range(10_000):
        throttle.warn(f'key {k}', 'w')
        throttle.once(f'key {k}', 'o')
    assert len(throttle) <= 2 * 16


def test_bounded_and_short_list():
    assert bounded('short') == 'short'
    text = bounded('y' * 5000, limit=100)
    assert len(text) <= 100 and '4940 more characters' in text
    names = [f'joint_{k}' for k in range(100_000)] + ['z' * 10_000]
    line = short_list(names)
    assert line.startswith("['joint_0', 'joint_1',") and line.endswith('… and 99993 more]')
    assert len(short_list(['z' * 10_000] * 8)) < 8 * 80
    assert short_list(()) == '[]'


TYPES = ('revolute', 'continuous', 'prismatic', 'revolute')
LOWER = np.array([-1.0, -np.inf, 0.0, -np.inf])       # the last: revolute without limits
UPPER = np.array([1.0, np.inf, 0.5, np.inf])
VMAX = np.array([2.0, 3.0, 0.1, 0.0])                  # the last: no velocity limit given


def _limits(**kwargs):
    return StateLimits(('r', 'c', 'p', 'free'), TYPES, LOWER, UPPER, VMAX, **kwargs)


def test_state_limits_positions():
    limits = _limits(position_tolerance=0.1, prismatic_tolerance=0.01)
    everything = np.arange(4)
    limits.check(everything, np.array([1.1, 9e5, 0.51, -9e5]))      # on the bounds: possible
    for joint, value, text in ((0, 1.1001, "joint 'r'"), (0, -1e300, '[-1.1, 1.1]'),
                               (1, 1.5 * MAX_ABS_POSITION, "joint 'c'"), (2, -0.0101, '[-0.01, 0.51]'),
                               (3, -2e6, "joint 'free'")):
        with pytest.raises(BadInput, match=text.replace('[', r'\[').replace(']', r'\]')) as error:
            limits.check([joint], np.array([value]))
        assert error.value.kind == 'position_limit'
    # A subset of the joints, in any order: the index says which.
    limits.check([3, 0], np.array([5.0, 0.5]))
    with pytest.raises(BadInput, match='and 1 other joints'):
        limits.check([3, 0, 2], np.array([5e6, 0.5, 0.7]))


def test_state_limits_velocities():
    limits = _limits(velocity_factor=10.0)
    limits.check(np.arange(4), velocity=np.array([-20.0, 30.0, 1.0, 9e5]))
    for joint, value in ((0, 20.01), (2, -1.01), (3, 2e6)):
        with pytest.raises(BadInput) as error:
            limits.check([joint], velocity=np.array([value]))
        assert error.value.kind == 'velocity_limit'
    # velocity_factor 0: only the absolute bound.
    _limits(velocity_factor=0.0).check([0], velocity=np.array([9e5]))
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError):
            _limits(position_tolerance=bad)


def _states(continuity, *states):
    """Feed (joints, q, qd, stamp_s) states; return what check said for each."""
    return [continuity.check(joints, None if q is None else np.array(q, dtype=float),
                             None if qd is None else np.array(qd, dtype=float),
                             int(round(stamp * 1e9)))
            for joints, q, qd, stamp in states]


def test_state_continuity_a_jump_no_motion_explains():
    from robot_dynamics_ros.logic.input_guard import StateContinuity
    c = StateContinuity(['a', 'b'], [0.05, 0.05])
    said = _states(c, ([0, 1], [0.0, 0.0], [0.0, 0.0], 1.0),       # first state: nothing to compare
                   ([0, 1], [0.04, 0.0], [0.0, 0.0], 1.01),          # 0.04: within max_jump
                   ([0, 1], [0.54, 0.0], [0.0, 0.0], 1.02))          # a reset: 0.5 at rest
    assert said[:2] == [None, None]
    assert "joint 'a' jumped from 0.04 to 0.54" in said[2] and 'max_state_jump 0.05' in said[2]
    # Fast motion on a slow stream (3 rad/s, 10 Hz: 0.3 rad between states) is no jump...
    c = StateContinuity(['a'], [0.05])
    assert _states(c, ([0], [0.0], [3.0], 1.0), ([0], [0.3], [3.0], 1.1), ([0], [0.6], [3.0], 1.2)) \
        == [None] * 3
    # ...nor a small step stamped with a clock that does not match the motion (a lagging
    # simulator stamping wall time: 0.5 s between stamps, 2 ms of motion)
    assert _states(c, ([0], [0.606], [3.0], 1.7)) == [None]
    # unstamped states: only the plain difference counts
    c = StateContinuity(['a'], [0.05])
    said = _states(c, ([0], [0.0], [3.0], 0.0), ([0], [0.3], [3.0], 0.0))
    assert said[0] is None and 'jumped' in said[1]


def test_state_continuity_stamps_going_backwards_per_joint():
    from robot_dynamics_ros.logic.input_guard import StateContinuity
    c = StateContinuity(['a', 'b'], [0.05, 0.05])
    # two publishers, each with its own joints and its own clock: compared each with its own
    said = _states(c, ([0], [0.0], None, 100.0), ([1], [0.0], None, 5.0),
                   ([0], [0.0], None, 100.01), ([1], [0.0], None, 5.01),
                   ([1], [0.0], None, 4.0))
    assert said[:4] == [None] * 4
    assert 'stamp went back 1.01 s' in said[4] and "joint 'b'" in said[4]
    assert _states(c, ([1], [0.0], None, 4.01)) == [None], 'compared with the new stamp'


def test_state_continuity_off_and_partial_messages():
    from robot_dynamics_ros.logic.input_guard import StateContinuity
    c = StateContinuity(['a', 'b'], [0.0, 0.05])        # 0: joint a is never a jump
    said = _states(c, ([0, 1], [0.0, 0.0], None, 1.0), ([0], [3.0], None, 1.01),
                   ([1], None, [0.0], 1.02),            # velocities only
                   ([1], [1.0], None, 1.03))
    assert said[:3] == [None] * 3 and "joint 'b'" in said[3]
    c.forget()
    assert _states(c, ([0, 1], [5.0, 5.0], None, 0.5)) == [None]
    with pytest.raises(ValueError):
        StateContinuity(['a'], [-1.0])
