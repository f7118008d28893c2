"""What a node reports on /diagnostics, ROS-free: its bookkeeping and the level a supervisor acts on.

``nodes/diagnostics_publisher.py`` publishes it once per ``diagnostics_period`` as a
diagnostic_msgs/DiagnosticArray with diagnostic_updater's conventions (one DiagnosticStatus per node,
named ``"<node name>: <task>"``, ``hardware_id`` the robot's name, values as strings, units in the
keys). Here, without rclpy:

- ``ComputeTimes``: the time a node takes to handle one input message (callback to output
  published), ``time.perf_counter_ns``, in a window of the last ``WINDOW`` messages (a deque: bounded,
  its cost per message in doc/performance.md, section "Nodes"); median and 99th percentile on demand.
- ``InputMeter``: messages accepted, and when the last one was (a node whose input is not a
  JointStateInput: the simulator's effort commands).
- ``Periods``: what changed since the previous report: the input rate (accepted messages per
  second of steady time) and the messages dropped, by reason: the differences of
  ``input_guard.WarningThrottle.counts``, which counts every warning call per key, logged or throttled.
  Keys that are not dropped input (``NOT_DROPPED``: staleness, a saturated output, the tip frame,
  observer restarts, the simulator's pacing) are left out.
- ``Facts`` and ``assess``: the level and the message, worst first:

  ======  =================================================================================
  ERROR   no robot model; a controller's input older than its ``state_timeout`` (it then only
          holds against gravity)
  WARN    another node's input older than ``diagnostics_max_age``; no input yet; input rate
          over the last period below ``diagnostics_min_rate`` (0 = no check); messages dropped
          in the last period; a problem the node names (joints never heard of)
  OK      otherwise (the message: the node's summary, e.g. a controller's mode)
  ======  =================================================================================

  A node whose input is not expected (the simulator paused) skips the input checks (``idle``).
- ``make_status``: the whole status (level, name, message, hardware_id, key/value pairs).
- ``parameter_error``: why a value of ``diagnostics_period``, ``diagnostics_min_rate`` or
  ``diagnostics_max_age`` is refused (None: accepted).

Nothing here grows without bound (windows, counts and listed reasons are bounded) and no value is
NaN: an unknown number reads 'n/a'.

Example:
    >>> facts = Facts(has_model=True, input='joint states', received=500, age=0.002, rate=499.0,
    ...               stale_after=0.1, stale_level=ERROR, min_rate=400.0, dropped={})
    >>> assess(facts)
    (0, 'OK')
    >>> level, message = assess(facts._replace(rate=120.0, dropped={'joint_states/nonfinite': 3}))
    >>> LEVEL_NAMES[level]
    'WARN'
    >>> for problem in message.split('; '):
    ...     print(problem)
    joint states at 120 Hz, below diagnostics_min_rate 400 Hz
    3 dropped in the last period (joint_states/nonfinite: 3)
    >>> assess(facts._replace(age=0.5))[1]
    'joint states stale: the last is 0.5 s old (more than 0.1 s)'
"""

import collections
import math
import time

import numpy as np

from robot_dynamics_ros.logic.input_guard import OTHER_KEYS, bounded

__all__ = ['OK', 'WARN', 'ERROR', 'LEVEL_NAMES', 'WINDOW', 'MAX_LISTED', 'NOT_DROPPED', 'PARAMETERS',
           'MAX_VALUE', 'MIN_PERIOD',
           'ComputeTimes', 'InputMeter', 'Periods', 'Facts', 'Status', 'assess', 'is_dropped',
           'make_status', 'number', 'parameter_error']

OK, WARN, ERROR = 0, 1, 2           # diagnostic_msgs/DiagnosticStatus levels (bytes there)
LEVEL_NAMES = {OK: 'OK', WARN: 'WARN', ERROR: 'ERROR'}
WINDOW = 1000                       # messages whose compute time the median and p99 are of
MAX_LISTED = 8                      # drop reasons listed one by one; the others are summed
MAX_MESSAGE_CHARS = 300             # characters of a status message
#: Throttle keys that are not input dropped: conditions reported otherwise. Exact keys, or prefixes
#: ending in '/'.
NOT_DROPPED = ('stale', 'lag', 'lockstep', 'estimate/restart', 'joint_states/missing', 'saturated/',
               'tip_link/')

#: name -> (default, unit, what 0 means, description): the parameters every node declares (but
#: ``diagnostics_max_age``: only the nodes without a ``state_timeout`` of their own).
PARAMETERS = {
    'diagnostics_period': (1.0, 's', 'no diagnostics',
                           'Seconds between two statuses of this node on /diagnostics.'),
    'diagnostics_min_rate': (0.0, 'Hz', 'no check',
                             'Input messages accepted per second below which the status is WARN.'),
    'diagnostics_max_age': (0.5, 's', 'no check',
                            'Seconds after the last input message beyond which the status is WARN '
                            '(the input is stale).'),
}
MIN_PERIOD = 0.05                   # s: a status at most 20 times a second
MAX_VALUE = {'diagnostics_period': 3600.0, 'diagnostics_min_rate': 1e5, 'diagnostics_max_age': 3600.0}


def parameter_error(name, value):
    """Why ``value`` of the diagnostics parameter ``name`` is refused, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f'{name} must be a finite number, got {bounded(repr(value), 100)}'
    top = MAX_VALUE[name]
    if name == 'diagnostics_period':
        if not (value == 0.0 or MIN_PERIOD <= value <= top):
            return f'{name} must be 0 (no diagnostics) or {MIN_PERIOD} to {top:g} s, got {value}'
    elif not 0.0 <= value <= top:
        return f'{name} must be 0 (no check) to {top:g} {PARAMETERS[name][1]}, got {value}'
    return None


def number(value, digits=3):
    """``value`` as a status value: fixed point with ``digits`` decimals, 'n/a' when None or not
    finite (no NaN on /diagnostics)."""
    if value is None or not math.isfinite(value):
        return 'n/a'
    return f'{value:.{digits}f}'


def is_dropped(key):
    """Whether a WarningThrottle key counts input dropped (not one of NOT_DROPPED)."""
    for kind in NOT_DROPPED:
        if key == kind or (kind.endswith('/') and key.startswith(kind)):
            return False
    return True


class ComputeTimes:
    """The handling time of the last ``size`` input messages, in ns (a bounded window).

    ``timed(callback)`` returns ``callback`` timed: a call inside another timed call (the control
    step a joint-state callback makes) is part of the outer one and not recorded apart. Not for a
    timer callback (rclpy would hand the wrapper a TimerInfo): ``record`` a duration there.
    ``stats()``: (median, p99) in ms over the window, (None, None) while empty.
    """

    def __init__(self, size=WINDOW):
        self.window = collections.deque(maxlen=size)
        self.record = self.window.append
        self._running = False

    def timed(self, callback):
        clock, record = time.perf_counter_ns, self.window.append

        def timed_callback(*args):
            if self._running:
                return callback(*args)
            self._running = True
            start = clock()
            try:
                return callback(*args)
            finally:
                record(clock() - start)
                self._running = False
        return timed_callback

    def __len__(self):
        return len(self.window)

    def stats(self):
        samples = np.array(tuple(self.window), dtype=np.float64)
        if samples.size == 0:
            return None, None
        median, p99 = np.percentile(samples, [50.0, 99.0])
        return float(median) * 1e-6, float(p99) * 1e-6


class InputMeter:
    """Accepted input messages: ``received`` since start, ``last_ns`` (``clock`` ns) of the last."""

    def __init__(self, clock=time.monotonic_ns):
        self.clock = clock
        self.received = 0
        self.last_ns = None

    def add(self):
        self.received += 1
        self.last_ns = self.clock()

    def age(self):
        """Seconds since the last accepted message; None before the first."""
        return None if self.last_ns is None else (self.clock() - self.last_ns) * 1e-9


class Periods:
    """What changed between two reports (``update``): the input rate and the drops per reason.

    ``counts`` is a live mapping key -> calls since start (``WarningThrottle.counts``); only the
    keys ``is_dropped`` are kept, at most as many as it holds.
    """

    def __init__(self, counts, now_s, received=0):
        self._counts = counts
        self._last_s = now_s
        self._received = received
        self._dropped = {}

    def update(self, now_s, received):
        """(rate in messages per second since the previous update, dropped since start by reason,
        dropped since the previous update by reason)."""
        elapsed = now_s - self._last_s
        rate = (received - self._received) / elapsed if elapsed > 0.0 else 0.0
        self._last_s, self._received = now_s, received
        total = {key: n for key, n in dict(self._counts).items() if is_dropped(key)}
        period = {key: n - self._dropped.get(key, 0) for key, n in total.items()
                  if n != self._dropped.get(key, 0)}
        self._dropped = total
        return max(rate, 0.0), total, period


class Facts(collections.namedtuple('Facts', 'has_model input received age rate stale_after '
                                            'stale_level min_rate dropped idle problems summary',
                                   defaults=(None, (), 'OK'))):
    """What the level of a status is decided from.

    has_model; input (what the input is, for the message: 'joint states'); received (accepted
    since start); age (s since the last, None: none yet); rate (Hz over the last period);
    stale_after (s, 0 = no check) and stale_level (ERROR for a controller, else WARN); min_rate (Hz,
    0 = no check); dropped (reason -> count in the last period); idle (why no input is expected
    now, e.g. 'paused': the input checks are skipped; None); problems ((level, text) the node adds);
    summary (the message when nothing is wrong).
    """


Status = collections.namedtuple('Status', 'level name message hardware_id values')


def assess(facts):
    """(level, message) of ``facts``: the worst level found, the message naming every problem,
    worst first (the node's summary when there is none)."""
    f = facts
    problems = []
    if not f.has_model:
        problems.append((ERROR, 'no robot model'))
    elif f.idle is None:
        if not f.received:
            problems.append((WARN, f'no {f.input} received yet'))
        elif f.stale_after > 0.0 and f.age is not None and f.age > f.stale_after:
            problems.append((f.stale_level, f'{f.input} stale: the last is {f.age:.3g} s old (more '
                                            f'than {f.stale_after:g} s)'))
        elif f.min_rate > 0.0 and f.rate < f.min_rate:
            problems.append((WARN, f'{f.input} at {f.rate:.3g} Hz, below diagnostics_min_rate '
                                   f'{f.min_rate:g} Hz'))
    problems.extend(f.problems)
    dropped = sum(f.dropped.values())
    if dropped:
        reasons = sorted(f.dropped.items(), key=lambda item: -item[1])
        listed = ', '.join(f'{key}: {n}' for key, n in reasons[:2])
        more = f', and {len(reasons) - 2} other reasons' if len(reasons) > 2 else ''
        problems.append((WARN, f'{dropped} dropped in the last period ({listed}{more})'))
    if not problems:
        return OK, bounded(f.summary, MAX_MESSAGE_CHARS)
    problems.sort(key=lambda p: -p[0])      # (stable: the order above within a level)
    return problems[0][0], bounded('; '.join(text for _, text in problems), MAX_MESSAGE_CHARS)


def _drop_values(total, period):
    """Key/value pairs of the drops: the totals, then per reason (at most MAX_LISTED: those of the
    last period first, then the most frequent; the rest summed)."""
    values = [('dropped (last period)', str(sum(period.values()))),
              ('dropped (since start)', str(sum(total.values())))]
    reasons = sorted(total, key=lambda key: (-period.get(key, 0), -total[key], key))
    for key in reasons[:MAX_LISTED]:
        name = 'other reasons' if key == OTHER_KEYS else key
        values.append((f'dropped {name} (last period)', str(period.get(key, 0))))
        values.append((f'dropped {name} (since start)', str(total[key])))
    rest = reasons[MAX_LISTED:]
    if rest:
        values.append(('dropped, reasons not listed (last period)', str(sum(period.get(k, 0) for k in rest))))
        values.append(('dropped, reasons not listed (since start)', str(sum(total[k] for k in rest))))
    return values


def make_status(name, robot, facts, model_values, input_name, total, compute, details=()):
    """The whole status of a node.

    name: '<node name>: <task>'; robot: its name ('' before a model: the hardware_id);
    facts: Facts; model_values: ((key, value), ...) of the model (joints, source); input_name: the
    input topic; total: dropped since start by reason; compute: ComputeTimes.stats() (ms);
    details: the node's own (key, value) pairs, values converted with str.
    """
    level, message = assess(facts)
    median, p99 = compute
    values = [('robot', robot), *model_values,
              ('input', input_name),
              ('input rate (Hz)', number(facts.rate, 1)),
              ('input age (s)', number(facts.age, 3)),
              ('inputs received', str(facts.received)),
              *_drop_values(total, facts.dropped),
              ('compute time median (ms)', number(median, 3)),
              ('compute time p99 (ms)', number(p99, 3)),
              *((key, value if isinstance(value, str) else str(value)) for key, value in details)]
    return Status(level, name, message, robot, values)
