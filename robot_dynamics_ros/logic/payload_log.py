"""The recent joint states with efforts, and the payload they show (dynamics_node's ``~/identify_payload``).

ROS-free. ``StateLog`` keeps the samples (t, q, τ) of the last ``window`` seconds in a ring buffer
sized to the window at the rate the stamps show (window × rate × CAPACITY_MARGIN samples, between
MIN_SAMPLES and ``max_samples``; then the oldest go first): memory stays bounded whatever the rate
and however long it runs. ``identify_recent`` runs ``dynamics.identify_payload_from_log`` on them and says,
in words, why an estimate is not to be trusted: too few samples, too little excitation (the scaled
regressor's condition number above ``MAX_CONDITION``), or parameters no rigid body has.
"""
from __future__ import annotations

import json
import math

import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.identification import DEFAULT_CUTOFF

__all__ = ['StateLog', 'identify_recent', 'estimate_problem', 'estimate_summary', 'inertia_entries',
           'inertia_matrix', 'payload_parameter_values', 'PAYLOAD_PARAMETERS', 'MAX_CONDITION', 'MAX_SAMPLES',
           'MIN_SAMPLES', 'CAPACITY_MARGIN']

#: The nodes' payload parameters (model_source declares them): kg; m; kg m² (ixx, ixy, ixz, iyy, iyz, izz
#: about the centre of mass); frame name.
PAYLOAD_PARAMETERS = ('payload_mass', 'payload_com', 'payload_inertia', 'payload_frame')
MAX_CONDITION = 1e3         # condition number of the scaled regressor above which the data is too poor
MAX_SAMPLES = 200_000       # ceiling of the storage: at most this many samples (200 s at 1 kHz)
MIN_SAMPLES = 256           # floor of the storage: the first allocation (and never less once shrunk)
CAPACITY_MARGIN = 2.0       # storage = window × rate × this: room for jitter, a rate that doubles
_MAX_GROWTH = 4             # one growth at most multiplies the storage by this (a burst of stamps at start)
_SHRINK_BELOW = 0.25        # shrink when the window holds less than this share of the storage (steady: 0.5)


class StateLog:
    """Samples (t s, q (n,), τ (n,)) in time order over the last ``window`` seconds (of their own
    stamps). A sample whose time is not after the last one's is a new recording when it goes back
    more than ``window`` (a simulator reset, a bag played again: the log starts over), and a repeat
    otherwise (dropped).

    Storage: a ring buffer of ``capacity`` samples sized from the window and the rate the stamps
    show. Samples older than ``window`` before the newest leave as new ones come. When the buffer is
    full of samples still inside the window it grows (nothing inside the window is lost) to

        capacity = clip(window · rate · CAPACITY_MARGIN, MIN_SAMPLES, max_samples),
        rate = count / (t_new − t_oldest)                                     (1)

    (the mean rate over the ``count`` samples held and the new one, Hz), but at least
    ``count · CAPACITY_MARGIN`` and at most ``_MAX_GROWTH ×`` the old capacity (a burst of stamps on a
    short log is not extrapolated to the whole window at once). When the window holds less than
    ``_SHRINK_BELOW`` of the storage and its
    samples span at least 0.9 window (the rate fell to less than half the one the storage was sized
    for, the window was made shorter) it shrinks to (1). The gap between 0.5 (the share held at a
    steady rate) and 0.25, and the margin of 2, keep a rate that wanders with the machine's load
    (stamps of the wall clock, a simulator catching up in bursts) from resizing the storage back and
    forth. So at a steady rate the storage settles between window · rate and window · rate ·
    CAPACITY_MARGIN samples (the first growth step that holds the window), whatever the duration; it
    never exceeds ``max_samples``: a window that needs more keeps the newest ``max_samples``
    (the oldest go first). Memory: capacity · (1 + 2 n) · 8 bytes."""

    def __init__(self, joint_count: int, window: float, max_samples: int = MAX_SAMPLES):
        self.joint_count = int(joint_count)
        self.window = float(window)
        self.max_samples = int(max_samples)
        self.clear()

    def clear(self):
        self._t = np.empty(0)
        self._q = self._tau = np.empty((0, self.joint_count))
        self._start = self._count = 0       # ring buffer: the oldest sample and how many there are

    def __len__(self):
        return self._count

    @property
    def capacity(self) -> int:
        """Samples the storage holds now (its arrays' length)."""
        return self._t.size

    def append(self, t: float, q, tau):
        if self._count:
            last = self._t[(self._start + self._count - 1) % self._t.size]
            if t <= last:
                if t < last - self.window:
                    self.clear()
                else:
                    return
        self._drop_older_than(t - self.window)
        self._fit(t)
        k = (self._start + self._count) % self._t.size
        self._t[k], self._q[k], self._tau[k] = t, q, tau
        self._count += 1

    def _drop_older_than(self, t_oldest):
        """Forget the samples stamped before t_oldest (s): they left the window."""
        size = self._t.size
        while self._count and self._t[self._start] < t_oldest:
            self._start = (self._start + 1) % size
            self._count -= 1

    def _fit(self, t):
        """Room for one more sample at time t: grow or shrink the storage as eq. (1) says, or (full
        at max_samples) let the oldest sample go."""
        capacity, count = self._t.size, self._count
        floor = min(MIN_SAMPLES, self.max_samples)
        if capacity == 0:
            self._resize(floor)
            return
        span = t - self._t[self._start] if count else 0.0           # s, > 0: stamps increase
        if count == capacity:
            if capacity >= self.max_samples:        # full at the ceiling: the oldest sample makes room
                self._start = (self._start + 1) % capacity
                self._count -= 1
                return
            wanted = max(self._for_rate(count / span), math.ceil(count * CAPACITY_MARGIN))
            self._resize(min(wanted, _MAX_GROWTH * capacity, self.max_samples))
        elif capacity > floor and count < _SHRINK_BELOW * capacity and span >= 0.9 * self.window:
            wanted = max(self._for_rate(count / span), math.ceil((count + 1) * CAPACITY_MARGIN))
            if wanted < capacity:
                self._resize(wanted)

    def _for_rate(self, rate):
        """Samples for the window at ``rate`` Hz: window · rate · CAPACITY_MARGIN within
        [MIN_SAMPLES, max_samples] (eq. 1)."""
        wanted = math.ceil(self.window * rate * CAPACITY_MARGIN)
        return int(min(max(wanted, min(MIN_SAMPLES, self.max_samples)), self.max_samples))

    def _resize(self, capacity):
        t, q, tau = self._ordered()
        self._t, self._q, self._tau = (np.empty((capacity,) + x.shape[1:]) for x in (t, q, tau))
        self._t[:self._count], self._q[:self._count], self._tau[:self._count] = t, q, tau
        self._start = 0

    def _ordered(self):
        index = (self._start + np.arange(self._count)) % max(self._t.size, 1)
        return self._t[index], self._q[index], self._tau[index]

    def recent(self):
        """(t (N,), q (N, n), τ (N, n)) of the samples within ``window`` of the newest, oldest first
        (copies)."""
        t, q, tau = self._ordered()
        keep = t >= t[-1] - self.window if t.size else slice(None)
        return t[keep], q[keep], tau[keep]


def identify_recent(model, log: StateLog, frame=None, cutoff=DEFAULT_CUTOFF, effort_offset=None):
    """(estimate, reason): the payload at ``frame`` from the log's recent samples
    (identify_payload_from_log, q and τ in model.joint_names order), and None, or why it is not to be
    used (then the estimate may be None): too short a log for the filter, a condition number above
    MAX_CONDITION, not a rigid body. ``effort_offset`` (n,) (N·m or N, model order; None = zeros):
    what the effort sensors add to the joint torque, taken out of the logged efforts first
    (τ = measured effort − effort_offset)."""
    t, q, tau = log.recent()
    if effort_offset is not None:
        tau = tau - np.asarray(effort_offset, dtype=float)
    if t.size < 3:
        return None, f'too few joint states with efforts: {t.size} in the last {log.window:g} s'
    try:
        estimate = rd.identify_payload_from_log(model, t, q, tau, frame=frame, cutoff=cutoff)
    except ValueError as exc:
        return None, str(exc)
    return estimate, estimate_problem(estimate)


def estimate_problem(estimate):
    """Why a PayloadEstimate is not to be used, or None: a condition number above MAX_CONDITION (the
    motion did not excite the payload), parameters no rigid body has."""
    if not estimate.condition < MAX_CONDITION:
        return (f'too little excitation: condition number {estimate.condition:.3g} > {MAX_CONDITION:g} '
                '(move more joints, faster, with more variety)')
    if not estimate.consistent:
        return ('the estimate is no rigid body (mass <= 0, or an inertia about the centre of mass that is '
                'not positive definite or breaks the triangle inequality): record a longer, more exciting '
                'motion, or check that the efforts are joint torques')
    return None


def inertia_entries(inertia):
    """[ixx, ixy, ixz, iyy, iyz, izz] of a symmetric 3x3 rotational inertia (kg m²): the nodes'
    payload_inertia, URDF's order."""
    I = np.asarray(inertia, dtype=float)
    return [float(I[0, 0]), float(I[0, 1]), float(I[0, 2]), float(I[1, 1]), float(I[1, 2]), float(I[2, 2])]


def payload_parameter_values(mass, com, inertia, frame):
    """The values of PAYLOAD_PARAMETERS for a payload (an identify_payload estimate's mass, com, 3x3
    inertia; the frame's name)."""
    return float(mass), [float(x) for x in com], inertia_entries(inertia), frame or ''


def inertia_matrix(entries):
    """The 3x3 rotational inertia of [ixx, ixy, ixz, iyy, iyz, izz] (inertia_entries' inverse)."""
    ixx, ixy, ixz, iyy, iyz, izz = entries
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def estimate_summary(estimate, frame, samples, seconds, reason=None, **extra) -> str:
    """One line of JSON: mass (kg), com (m, frame coordinates), inertia (ixx, ixy, ixz, iyy, iyz, izz
    about the com, frame axes, kg m²), residual_rms (N m), condition, consistent, projected (least
    squares gave no rigid body: the nearest one instead), frame, samples, seconds, the reason it is not
    to be used (if any) and ``extra``. A number that is not finite (the
    condition number of data without motion) is null."""
    summary = {'frame': frame, 'samples': int(samples), 'seconds': round(float(seconds), 6), **extra}
    if estimate is not None:
        numbers = dict(mass=estimate.mass, com=estimate.com.tolist(),
                       inertia=inertia_entries(estimate.inertia), residual_rms=estimate.residual_rms,
                       condition=estimate.condition)
        summary.update({key: _finite_or_none(value) for key, value in numbers.items()},
                       consistent=bool(estimate.consistent),
                       projected=bool(getattr(estimate, 'projected', False)))
    if reason is not None:
        summary['reason'] = reason
    return json.dumps(summary)


def _finite_or_none(value):
    """A number or a list of numbers for JSON: floats, None where not finite."""
    if isinstance(value, list):
        return [_finite_or_none(v) for v in value]
    value = float(value)
    return value if np.isfinite(value) else None
