"""robot_dynamics_ros.logic.diagnostics without ROS: the drop counts of WarningThrottle, the compute-time
window, the input meter, the per-period differences, the level decision and the status values."""

import logging
import math

import pytest

from robot_dynamics_ros.dynamics.urdf import robot_name
from robot_dynamics_ros.logic.diagnostics import (
    ERROR,
    MAX_LISTED,
    OK,
    PARAMETERS,
    WARN,
    ComputeTimes,
    Facts,
    InputMeter,
    Periods,
    assess,
    is_dropped,
    make_status,
    number,
    parameter_error,
)
from robot_dynamics_ros.logic.input_guard import OTHER_KEYS, WarningThrottle


class _Log:
    def __init__(self):
        self.lines = []

    def warning(self, message):
        self.lines.append(message)


def _facts(**changes):
    base = Facts(has_model=True, input='joint states', received=100, age=0.01, rate=100.0,
                 stale_after=0.1, stale_level=ERROR, min_rate=0.0, dropped={})
    return base._replace(**changes)


# -- WarningThrottle.counts -----------------------------------------------------------------
def test_throttle_counts_every_call_logged_or_not_and_reset_keeps_them():
    log = _Log()
    throttle = WarningThrottle(log, period=60.0)
    for _ in range(5):
        throttle.warn('joint_states/nonfinite', 'dropped')
    throttle.once('saturated/j1', 'saturated')
    throttle.once('saturated/j1', 'saturated')
    throttle.count('joint_states/empty')
    assert len(log.lines) == 2                  # one warning per key, one once: the rest throttled
    assert throttle.counts == {'joint_states/nonfinite': 5, 'saturated/j1': 2, 'joint_states/empty': 1}
    throttle.reset()
    throttle.warn('joint_states/nonfinite', 'again')
    assert throttle.counts['joint_states/nonfinite'] == 6 and len(log.lines) == 3


def test_throttle_counts_are_bounded_by_max_keys():
    throttle = WarningThrottle(logging.getLogger('test_diagnostics'), period=60.0, max_keys=4)
    for k in range(100):
        throttle.count(f'kind/{k}')
    assert len(throttle.counts) == 4
    assert sum(throttle.counts.values()) == 100
    assert throttle.counts[OTHER_KEYS] == 97
    throttle.count('kind/0')                     # a key already counted keeps its own count
    assert throttle.counts['kind/0'] == 2


def test_keys_that_are_not_drops():
    for key in ('stale', 'lag', 'lockstep', 'estimate/restart', 'saturated/wrist_3_joint',
                'tip_link/several_tips', 'joint_states/missing'):
        assert not is_dropped(key), key
    for key in ('joint_states/nonfinite', 'reference/too_long', 'state/discontinuity', 'compute/tau',
                'command/length', 'goal/invalid_joints', 'stale_thing', OTHER_KEYS):
        assert is_dropped(key), key


# -- ComputeTimes, InputMeter, Periods ------------------------------------------------------
def test_compute_times_window_is_bounded_and_gives_median_and_p99():
    times = ComputeTimes(size=100)
    assert times.stats() == (None, None)
    for ns in range(1, 1001):                   # 1 us .. 1 ms; only the last 100 are kept
        times.record(ns * 1000)
    assert len(times) == 100
    median, p99 = times.stats()
    assert median == pytest.approx(0.9505)     # ms: the median of 901 .. 1000 us
    assert p99 == pytest.approx(0.99901)


def test_timed_records_the_outermost_call_once_and_keeps_exceptions():
    times = ComputeTimes()
    inner = times.timed(lambda x: x + 1)
    outer = times.timed(lambda x: inner(x) * 2)
    assert outer(1) == 4
    assert len(times) == 1                      # the inner call is part of the outer one
    assert inner(1) == 2
    assert len(times) == 2

    def fails(_):
        raise ValueError('boom')
    with pytest.raises(ValueError, match='boom'):
        times.timed(fails)(0)
    assert len(times) == 3
    assert outer(0) == 2 and len(times) == 4    # not left "running" by the exception


def test_input_meter_age_on_its_clock():
    now = [5_000_000_000]
    meter = InputMeter(clock=lambda: now[0])
    assert meter.age() is None and meter.received == 0
    meter.add()
    now[0] += 250_000_000
    assert meter.age() == pytest.approx(0.25)
    assert meter.received == 1


def test_periods_rate_and_drops_by_reason():
    counts = {'joint_states/nonfinite': 2, 'stale': 40}
    periods = Periods(counts, now_s=10.0, received=5)
    rate, total, period = periods.update(11.0, 505)
    assert rate == pytest.approx(500.0)
    assert total == {'joint_states/nonfinite': 2} and period == {'joint_states/nonfinite': 2}
    counts['joint_states/nonfinite'] += 3
    counts['reference/too_long'] = 1
    counts['stale'] += 100
    rate, total, period = periods.update(11.5, 505)
    assert rate == 0.0
    assert total == {'joint_states/nonfinite': 5, 'reference/too_long': 1}
    assert period == {'joint_states/nonfinite': 3, 'reference/too_long': 1}
    assert periods.update(11.5, 505) == (0.0, total, {})     # no time elapsed: rate 0, not inf


# -- levels ---------------------------------------------------------------------------------
def test_ok_with_the_summary():
    assert assess(_facts(summary='tracking')) == (OK, 'tracking')


def test_no_model_is_an_error_and_hides_the_input_checks():
    level, message = assess(_facts(has_model=False, received=0, age=None))
    assert (level, message) == (ERROR, 'no robot model')


def test_stale_input_error_for_a_controller_warn_for_others():
    level, message = assess(_facts(age=0.5))
    assert level == ERROR and message.startswith('joint states stale')
    assert assess(_facts(age=0.5, stale_level=WARN))[0] == WARN
    assert assess(_facts(age=0.5, stale_after=0.0))[0] == OK         # 0 = no check


def test_no_input_yet_and_rate_below_minimum_warn():
    level, message = assess(_facts(received=0, age=None))
    assert (level, message) == (WARN, 'no joint states received yet')
    level, message = assess(_facts(rate=90.0, min_rate=100.0))
    assert level == WARN and 'below diagnostics_min_rate 100 Hz' in message
    assert assess(_facts(rate=90.0, min_rate=0.0))[0] == OK


def test_idle_skips_the_input_checks():
    facts = _facts(received=0, age=None, min_rate=100.0, rate=0.0, idle='paused', summary='paused')
    assert assess(facts) == (OK, 'paused')
    assert assess(facts._replace(has_model=False))[0] == ERROR


def test_drops_in_the_last_period_warn_naming_the_most_frequent_first():
    level, message = assess(_facts(dropped={'a/x': 1, 'b/y': 7, 'c/z': 2}))
    assert level == WARN
    assert message == '10 dropped in the last period (b/y: 7, c/z: 2, and 1 other reasons)'


def test_worst_problem_first_and_message_bounded():
    facts = _facts(age=3.0, dropped={'joint_states/nonfinite': 1},
                   problems=((WARN, 'x' * 1000),))
    level, message = assess(facts)
    assert level == ERROR and message.startswith('joint states stale')
    assert len(message) <= 300


# -- the status -----------------------------------------------------------------------------
def test_status_values_are_strings_with_no_nan_and_bounded_reasons():
    total = {f'kind/{k}': k + 1 for k in range(20)}
    total[OTHER_KEYS] = 4
    period = {'kind/3': 2}
    status = make_status('dynamics_node: dynamics', 'ur5e', _facts(dropped=period, age=None, rate=math.nan),
                         (('joints', '6'), ('model source', 'robot_description topic')), '/joint_states',
                         total, (None, math.inf), (('contact', False), ('norm (N m)', 1.5)))
    values = dict(status.values)
    assert len(values) == len(status.values)                   # no key twice
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in status.values)
    assert not any('nan' in v.lower() or 'inf' in v.lower() for v in values.values())
    assert status.name == 'dynamics_node: dynamics' and status.hardware_id == 'ur5e'
    assert values['robot'] == 'ur5e' and values['input'] == '/joint_states'
    assert values['input rate (Hz)'] == 'n/a' and values['input age (s)'] == 'n/a'
    assert values['compute time median (ms)'] == 'n/a' and values['compute time p99 (ms)'] == 'n/a'
    assert values['dropped (last period)'] == '2'
    assert values['dropped (since start)'] == str(sum(total.values()))
    # the reason of the last period first, then the most frequent; the rest summed
    listed = [k for k in values if k.startswith('dropped ') and k.endswith('(since start)')
              and k not in ('dropped (since start)', 'dropped, reasons not listed (since start)')]
    assert len(listed) == MAX_LISTED
    assert listed[0] == 'dropped kind/3 (since start)' and values['dropped kind/3 (last period)'] == '2'
    assert listed[1] == 'dropped kind/19 (since start)'
    shown = sum(int(values[k]) for k in listed)
    assert shown + int(values['dropped, reasons not listed (since start)']) == sum(total.values())
    assert values['contact'] == 'False' and values['norm (N m)'] == '1.5'


def test_status_keys_are_fixed():
    status = make_status('n: t', '', _facts(), (('joints', '0'), ('model source', 's')), '/joint_states',
                         {}, (0.25, 0.5), ())
    assert [k for k, _ in status.values] == [
        'robot', 'joints', 'model source', 'input', 'input rate (Hz)', 'input age (s)', 'inputs received',
        'dropped (last period)', 'dropped (since start)', 'compute time median (ms)', 'compute time p99 (ms)']
    assert dict(status.values)['compute time p99 (ms)'] == '0.500'


def test_number():
    assert number(0.0123456) == '0.012' and number(12.0, 1) == '12.0'
    assert number(None) == number(math.nan) == number(-math.inf) == 'n/a'


# -- parameters, robot name -----------------------------------------------------------------
def test_parameter_errors():
    assert all(parameter_error(name, default) is None for name, (default, *_) in PARAMETERS.items())
    assert parameter_error('diagnostics_period', 0.0) is None
    assert 'no diagnostics' in parameter_error('diagnostics_period', 0.01)
    assert parameter_error('diagnostics_period', 10000.0) is not None
    assert parameter_error('diagnostics_min_rate', -1.0) is not None
    assert 'finite' in parameter_error('diagnostics_max_age', math.nan)
    assert parameter_error('diagnostics_max_age', True) is not None


def test_robot_name():
    assert robot_name('<?xml version="1.0"?>\n<!-- a comment <robot name="no"> -->\n'
                      '<robot name="ur5e"><link name="base"/></robot>') == 'ur5e'
    assert robot_name('<robot><link name="a"/></robot>') == ''
    assert robot_name('not xml at all') == ''
    assert robot_name(None) == '' and robot_name('') == ''
    assert len(robot_name(f'<robot name="{"r" * 10000}"/>')) < 100
    # only the root's start tag is read: text after it, even malformed, does not matter
    assert robot_name('<robot name="big">' + '<link name="l"/>' * 1000 + '<unclosed') == 'big'
