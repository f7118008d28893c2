"""What the nodes do with bad input, ROS-free: bounded warnings and plausibility checks of states.

Bad input is dropped with a throttled warning, and neither the log nor the node's memory may grow
with what a sender puts in its messages:

- ``BadInput``: a ValueError with a ``kind``, one of a small fixed set of short strings written in
  the code ('nonfinite', 'length', ...), never message text. Nodes throttle per kind.
- ``WarningThrottle``: one warning per key and ``period``; at most ``MAX_KEYS`` keys are kept, and
  every line is cut to ``MAX_LOG_CHARS`` characters (``bounded``). It also counts every call per
  key, logged or not (``counts``: what /diagnostics reports as messages dropped, by reason).
- ``short_list``: a list of names for a log line: at most ``limit`` names, each cut short, then
  "… and N more".
- ``StateLimits``: a measured joint state is physically possible for the model: positions within
  the URDF limits plus a tolerance (continuous joints: finite and |q| < ``MAX_ABS_POSITION``),
  velocities finite and within ``velocity_factor`` × the URDF velocity limit (joints without one:
  |q̇| < ``MAX_ABS_VELOCITY``).
- ``StateContinuity``: a possible state that does not continue the previous one (its stamp goes
  backwards, or a joint jumped): a simulator reset, a replayed log, an encoder re-homed. The state
  is kept (it is where the arm now is); what was planned from the previous one is not.

Example:
    >>> import logging
    >>> throttle = WarningThrottle(logging.getLogger('doctest'), period=5.0)
    >>> throttle.warn('joint_states/length', 'dropped: ' + short_list([f'j{k}' for k in range(100)], 3))
    True
    >>> throttle.warn('joint_states/length', 'the same kind again within 5 s')
    False
    >>> short_list(['a', 'b', 'c', 'd'], limit=2)
    "['a', 'b', … and 2 more]"
"""

import math
import time

import numpy as np

__all__ = ['BadInput', 'WarningThrottle', 'StateLimits', 'StateContinuity', 'short_list', 'bounded',
           'duplicates', 'MAX_LOG_CHARS', 'MAX_KEYS', 'MAX_ABS_POSITION', 'MAX_ABS_VELOCITY', 'OTHER_KEYS']

MAX_LOG_CHARS = 1000        # characters of one warning line (the rest is cut, with a count)
MAX_KEYS = 256              # keys a WarningThrottle remembers (kinds are a fixed set: far fewer)
MAX_NAME_CHARS = 64         # characters of one name quoted in a warning
MAX_ABS_POSITION = 1e6      # rad or m: no joint, continuous or not, is measured beyond this
MAX_ABS_VELOCITY = 1e6      # rad/s or m/s: the same for joints without a URDF velocity limit
OTHER_KEYS = '(other kinds)'  # WarningThrottle.counts: where the calls of keys beyond max_keys go


class BadInput(ValueError):
    """A malformed or implausible input message; ``kind`` keys its throttled warning."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def bounded(text, limit=MAX_LOG_CHARS):
    """``text`` cut to about ``limit`` characters, saying how many were cut.

    >>> bounded('x' * 50, limit=45)
    'xxxxx… (45 more characters)'
    """
    text = str(text)
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 0)       # room for the suffix, whatever the count
    return f'{text[:keep]}… ({len(text) - keep} more characters)'


def _short_name(name):
    name = str(name)
    return name if len(name) <= MAX_NAME_CHARS else name[:MAX_NAME_CHARS] + '…'


def duplicates(names):
    """The names that occur more than once in ``names``, each once, in the order of their second
    occurrence."""
    seen, twice = set(), []
    for name in names:
        if name in seen and name not in twice:
            twice.append(name)
        seen.add(name)
    return twice


def short_list(items, limit=8):
    """``items`` (a sequence) as a list literal of at most ``limit`` quoted names, then the count
    of the others: the length of a log line does not depend on the message that caused it."""
    n = len(items)
    shown = ', '.join(repr(_short_name(items[k])) for k in range(min(n, limit)))
    if n <= limit:
        return f'[{shown}]'
    return f'[{shown}, … and {n - limit} more]'


class WarningThrottle:
    """Warnings throttled per key (steady time), so distinct kinds of problem are each reported.

    rclpy's own ``throttle_duration_sec`` throttles per call site; one call site here reports
    several kinds of problem, keyed explicitly. Keys must come from a fixed set (a kind, or a
    model joint's name), never from message text; the throttle keeps at most ``max_keys`` of
    them anyway (the expired ones are forgotten first, then the oldest), and every message is
    cut to ``max_chars`` characters.

    ``counts`` (key -> calls of ``warn``, ``once`` and ``count`` since the throttle was made, logged
    or not; ``reset`` leaves it) is what /diagnostics reports as messages dropped, by reason. It
    holds at most ``max_keys`` keys: the calls of keys beyond them are counted under OTHER_KEYS.
    """

    def __init__(self, logger, period=5.0, max_keys=MAX_KEYS, max_chars=MAX_LOG_CHARS):
        self._logger = logger
        self.period = period
        self.max_keys = max_keys
        self.max_chars = max_chars
        self._last = {}          # key -> time of its last warning, oldest first
        self._once = {}          # key -> None (an insertion-ordered set)
        self.counts = {}         # key -> calls since start (never forgotten: bounded by max_keys)

    def __len__(self):
        """Number of keys remembered."""
        return len(self._last) + len(self._once)

    def count(self, key):
        """Count a call of ``key`` without logging anything (input ignored silently, by design)."""
        counts = self.counts
        if key in counts:
            counts[key] += 1
        elif len(counts) < self.max_keys - 1:       # (room for OTHER_KEYS)
            counts[key] = 1
        else:
            counts[OTHER_KEYS] = counts.get(OTHER_KEYS, 0) + 1

    def warn(self, key, message):
        """Log ``message`` unless ``key`` was reported within the last ``period`` seconds."""
        self.count(key)
        now = time.monotonic()
        if now - self._last.get(key, -math.inf) < self.period:
            return False
        self._last.pop(key, None)
        if len(self._last) >= self.max_keys:
            self._last = {k: t for k, t in self._last.items() if now - t < self.period}
            while len(self._last) >= self.max_keys:
                del self._last[next(iter(self._last))]
        self._last[key] = now
        self._logger.warning(bounded(message, self.max_chars))
        return True

    def once(self, key, message):
        """Log ``message`` the first time ``key`` is seen (until ``reset(key)``)."""
        self.count(key)
        if key in self._once:
            return False
        while len(self._once) >= self.max_keys:
            del self._once[next(iter(self._once))]
        self._once[key] = None
        self._logger.warning(bounded(message, self.max_chars))
        return True

    def reset(self, key=None):
        """Forget ``key`` (or everything): its next warning is logged immediately (``counts``
        keeps counting)."""
        if key is None:
            self._last.clear()
            self._once.clear()
        else:
            self._last.pop(key, None)
            self._once.pop(key, None)


class StateLimits:
    """Which measured joint states are physically possible for a model (see module docstring).

    Args:
        joint_names, joint_types ('revolute' | 'continuous' | 'prismatic'), lower, upper
            (position limits, ±inf where none), velocity_limit (URDF, <= 0 or inf = none):
            per joint, in one order (the model's).
        position_tolerance: rad a revolute joint may be measured beyond its limits (encoder
            offsets, a joint pushed past its soft limit); ``prismatic_tolerance`` the same in m.
        velocity_factor: a measured |q̇| above this × the URDF velocity limit is a sensor or
            driver error, not motion (> 0); 0 disables the per-joint bound (only |q̇| <
            MAX_ABS_VELOCITY remains).

    ``check(index, position, velocity)`` raises BadInput ('position_limit' or 'velocity_limit')
    naming the first offending joint, its value and the bound; ``index`` gives the joint of each
    entry of the arrays (either may be None).
    """

    def __init__(self, joint_names, joint_types, lower, upper, velocity_limit,
                 position_tolerance=0.1, prismatic_tolerance=0.01, velocity_factor=10.0):
        for name, value in (('position_tolerance', position_tolerance),
                            ('prismatic_tolerance', prismatic_tolerance),
                            ('velocity_factor', velocity_factor)):
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f'{name} must be finite and >= 0, got {value}')
        self.joint_names = tuple(joint_names)
        types = tuple(joint_types)
        lower = np.asarray(lower, dtype=np.float64)
        upper = np.asarray(upper, dtype=np.float64)
        tolerance = np.array([prismatic_tolerance if t == 'prismatic' else position_tolerance
                              for t in types])
        bounded_joint = np.array([t != 'continuous' for t in types], dtype=bool)
        # Continuous joints (and limits a URDF leaves infinite) get only the absolute bound.
        self.lower = np.where(bounded_joint & np.isfinite(lower), lower - tolerance,
                              -MAX_ABS_POSITION)
        self.upper = np.where(bounded_joint & np.isfinite(upper), upper + tolerance,
                              MAX_ABS_POSITION)
        limit = np.asarray(velocity_limit, dtype=np.float64)
        given = (limit > 0.0) & np.isfinite(limit) & (velocity_factor > 0.0)
        self.max_velocity = np.where(given, velocity_factor * np.where(given, limit, 0.0),
                                     MAX_ABS_VELOCITY)

    @classmethod
    def from_model(cls, model, **tolerances):
        """The limits of a ``dynamics.Model`` (model joint order)."""
        return cls(model.joint_names, model.joint_types, model.lower, model.upper,
                   model.velocity_limit, **tolerances)

    def check(self, index, position=None, velocity=None):
        """Raise BadInput if a position or velocity (finite, aligned with ``index``) is
        implausible; ``index`` (int array) gives each entry's joint in ``joint_names``."""
        index = np.asarray(index, dtype=np.intp)
        if position is not None:
            lo, hi = self.lower[index], self.upper[index]
            bad = np.flatnonzero((position < lo) | (position > hi))
            if bad.size:
                k = bad[0]
                raise BadInput('position_limit', self._describe(
                    bad.size, index[k], 'position', position[k], f'[{lo[k]:.6g}, {hi[k]:.6g}]',
                    'the URDF limits plus position_tolerance'))
        if velocity is not None:
            vmax = self.max_velocity[index]
            bad = np.flatnonzero(np.abs(velocity) > vmax)
            if bad.size:
                k = bad[0]
                raise BadInput('velocity_limit', self._describe(
                    bad.size, index[k], 'velocity', velocity[k], f'±{vmax[k]:.6g}',
                    'velocity_limit_factor × the URDF velocity limit'))

    def _describe(self, count, joint, field, value, allowed, rule):
        others = f' (and {count - 1} other joints)' if count > 1 else ''
        return (f'implausible {field} {value:.6g} of joint {_short_name(self.joint_names[joint])!r}'
                f'{others}: outside {allowed} ({rule})')


class StateContinuity:
    """Whether each measured joint state continues the previous one (joints by index).

    A state is a discontinuity when

    - its stamp (ns, 0 = unstamped: not compared) is earlier than the last stamp of a joint it
      updates: time went backwards (a log replayed, a simulation restarted, a clock reset); or
    - a joint's position differs from its previous one by more than ``max_jump`` AND from where
      its measured velocities put it, q_prev + ½ (q̇_prev + q̇) Δt (Δt from the two stamps; 0
      when one is unstamped), by more than ``max_jump``: a jump that no motion explains (a
      simulator reset, an encoder re-homed). The second condition keeps a fast joint on a slow
      state stream from looking like a jump; the first keeps stamps from another clock (a
      simulator stamping wall time while it lags) from making one.

    Every joint is compared with its own previous state, so partial messages from several
    publishers (each with its own joints and clock) are compared each with its own.

    Args:
        joint_names: (n,) names, for the messages.
        max_jump: (n,) per joint (rad or m); 0 or inf = that joint is never a jump.

    ``check(joints, position, velocity, stamp_ns)`` records the state (the positions and
    velocities of ``joints``, an index array; either may be None) and returns None, or a
    description of the discontinuity (the state is recorded all the same: it is where the arm
    is now). ``forget()`` starts over (no previous state).

    >>> import numpy as np
    >>> c = StateContinuity(['a'], [0.05])
    >>> c.check([0], np.array([0.0]), np.array([1.0]), 1_000_000_000) is None
    True
    >>> c.check([0], np.array([0.1]), np.array([1.0]), 1_100_000_000) is None   # moved at 1 rad/s
    True
    >>> print(c.check([0], np.array([1.0]), np.array([0.0]), 1_110_000_000))
    joint 'a' jumped from 0.1 to 1 (by 0.9, more than max_state_jump 0.05) between consecutive states
    """

    def __init__(self, joint_names, max_jump):
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        max_jump = np.asarray(max_jump, dtype=np.float64).reshape(n)
        if np.any(np.isnan(max_jump) | (max_jump < 0.0)):
            raise ValueError(f'max_jump must be >= 0, got {max_jump.tolist()}')
        self.max_jump = np.where(max_jump > 0.0, max_jump, np.inf)
        self.forget()

    def forget(self):
        n = len(self.joint_names)
        self._q = np.full(n, np.nan)            # NaN: no previous position
        self._qd = np.zeros(n)
        self._stamp = np.zeros(n, dtype=np.int64)
        self._joints = None                     # the last index array seen, and its indexer
        self._index = None

    def _indexer(self, joints):
        """A slice over all joints when ``joints`` is 0..n-1 (the usual message: views, no
        copies), else the index array. Cached per array object: a node passes the same array for
        messages with the same names."""
        if joints is not self._joints:
            array = np.asarray(joints, dtype=np.intp)
            n = len(self.joint_names)
            everything = array.size == n and bool((array == np.arange(n)).all())
            self._joints, self._index = joints, (slice(None) if everything else array)
        return self._index

    def check(self, joints, position=None, velocity=None, stamp_ns=0):
        index = self._indexer(joints)
        stamp_ns = int(stamp_ns)
        found = None
        last = self._stamp[index]
        if stamp_ns > 0 and stamp_ns < last.max(initial=0):
            k = int(np.argmax(last))
            found = (f'the stamp went back {(int(last[k]) - stamp_ns) * 1e-9:.6g} s (joint '
                     f'{_short_name(self.joint_names[np.arange(len(self.joint_names))[index][k]])!r}: '
                     f'from {int(last[k]) * 1e-9:.9g} s to {stamp_ns * 1e-9:.9g} s)')
        if position is not None:
            q_prev = self._q[index]
            limit = self.max_jump[index]
            moved = np.abs(position - q_prev)
            if found is None and (moved > limit).any():           # NaN (no previous): never
                qd_prev = self._qd[index]
                qd = qd_prev if velocity is None else velocity
                dt = np.where((last > 0) & (stamp_ns > 0), (stamp_ns - last) * 1e-9, 0.0)
                unexplained = np.abs(position - (q_prev + 0.5 * (qd_prev + qd) * dt))
                jumped = np.flatnonzero((moved > limit) & (unexplained > limit))
                if jumped.size:
                    k = jumped[np.argmax(moved[jumped] / limit[jumped])]
                    name = self.joint_names[np.arange(len(self.joint_names))[index][k]]
                    others = f' (and {jumped.size - 1} other joints)' if jumped.size > 1 else ''
                    found = (f'joint {_short_name(name)!r} jumped from {q_prev[k]:.6g} to '
                             f'{position[k]:.6g} (by {moved[k]:.6g}, more than max_state_jump '
                             f'{limit[k]:.6g}){others} between consecutive states')
            self._q[index] = position
        if velocity is not None:
            self._qd[index] = velocity
        if stamp_ns > 0:
            self._stamp[index] = stamp_ns
        return found
