"""The external_torque_estimator's logic, ROS-free: a MomentumObserver driven by stamped joint states,
a tare, a contact flag and the wrench at the tip.

Each joint state (q, q̇, the measured torque τ, its stamp) goes through `ContactEstimation.update`:

- the first state starts the observer (estimate zero); so does a state after `restart()` (a
  discontinuity the node detected), one whose stamp goes backwards (a simulator reset, a log
  replayed), and one that comes more than `state_timeout` seconds after the previous (the observer's
  integral would have missed what happened in between); a state with the previous one's stamp is
  skipped (dt = 0: nothing new);
- otherwise dt is the stamp difference and τ counts as applied over it (simulator_node publishes the
  effort it applied over the step that led to the state);
- the published estimate is r − offset, with offset the tare (`zero()`: the estimate at that
  moment, as with a force-torque sensor, for model errors at rest);
- contact is true while any |τ̂_ext,i| exceeds its threshold;
- the wrench ON the robot at `frame` (its own coordinates) is the least-squares F with Jᵀ F = τ̂_ext
  (dynamics.external_wrench); None without a frame.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_dynamics_ros import dynamics as rd

__all__ = ['ContactEstimation', 'Estimate']


@dataclass
class Estimate:
    """One estimate: τ̂_ext (n,) in model order, the wrench (6,) or None, the contact flag and why the
    observer (re)started at this state (None: it did not)."""
    tau_ext: np.ndarray
    wrench: np.ndarray | None
    contact: bool
    restarted: str | None


class ContactEstimation:
    """See the module docstring. gain (1/s), threshold (N·m): 1 or n values; friction: bool (the
    URDF's coefficients taken out of τ); state_timeout: s (> 0); frame: the wrench's frame or None."""

    def __init__(self, model, gain, threshold, friction=False, state_timeout=0.1, frame=None):
        self.model = model
        self.frame = frame
        self._observer = rd.MomentumObserver(model, _per_joint(model, gain, 'gain', positive=True),
                                             friction=True if friction else None)
        self._friction = bool(friction)
        self.threshold = threshold
        self.state_timeout = state_timeout
        self._offset = np.zeros(model.nq)
        self._last_stamp_ns = None
        self._restart_reason = 'first state'
        self._latest = None

    # -- settings ----------------------------------------------------------------------------
    @property
    def gain(self):
        return self._observer.gain

    @gain.setter
    def gain(self, value):
        self._observer.gain = _per_joint(self.model, value, 'gain', positive=True)

    @property
    def threshold(self):
        return self._threshold.copy()

    @threshold.setter
    def threshold(self, value):
        self._threshold = _per_joint(self.model, value, 'threshold', positive=False)

    @property
    def friction(self):
        return self._friction

    @friction.setter
    def friction(self, value):
        if bool(value) != self._friction:
            self._friction = bool(value)
            self._observer = rd.MomentumObserver(self.model, self._observer.gain,
                                                 friction=True if value else None)
            self.restart('friction changed')

    @property
    def state_timeout(self):
        return self._state_timeout

    @state_timeout.setter
    def state_timeout(self, value):
        if not (np.isfinite(value) and value > 0.0):
            raise ValueError(f'state_timeout must be > 0 s, got {value!r}')
        self._state_timeout = float(value)

    # -- states ------------------------------------------------------------------------------
    def restart(self, reason):
        """Start the observer again at the next state (the tare is kept)."""
        self._restart_reason = reason
        self._last_stamp_ns = None

    def update(self, q, qd, tau, stamp_ns, with_wrench=True):
        """The estimate at this state (Estimate), or None for a state with the previous one's stamp.
        with_wrench False leaves the wrench out (None: nobody listens to it). Raises ValueError for
        a state the observer cannot take (non-finite, wrong size): the node drops it; the observer
        is unchanged."""
        reason = self._restart_reason
        if reason is None:
            dt = (stamp_ns - self._last_stamp_ns) * 1e-9
            if dt == 0.0:
                return None
            if dt < 0.0:
                reason = f'the stamp went back by {-dt:.3g} s'
            elif dt > self._state_timeout:
                reason = f'{dt:.3g} s since the previous state (state_timeout {self._state_timeout:g} s)'
        if reason is None:
            r = self._observer.update(q, qd, tau, dt)
        else:
            self._observer.reset(q, qd)
            r = self._observer.tau_ext
        self._restart_reason = None
        self._last_stamp_ns = stamp_ns
        tau_ext = r - self._offset
        wrench = (rd.external_wrench(self.model, q, tau_ext, self.frame)
                  if with_wrench and self.frame is not None else None)
        self._latest = r
        return Estimate(tau_ext, wrench, bool(np.any(np.abs(tau_ext) > self._threshold)), reason)

    def zero(self):
        """Tare: the latest estimate becomes the zero. False when there is none yet."""
        if self._latest is None:
            return False
        self._offset = self._latest.copy()
        return True


def _per_joint(model, value, name, positive):
    """1 or n numbers as an (n,) array; each > 0 (positive) or >= 0; ValueError naming `name`."""
    values = np.asarray(value, dtype=np.float64).reshape(-1)
    if values.size == 1:
        values = np.full(model.nq, values[0])
    if values.size != model.nq:
        raise ValueError(f'{name} must have 1 or {model.nq} values (joints {list(model.joint_names)}), '
                         f'got {values.size}')
    bad = ~np.isfinite(values) | ((values <= 0.0) if positive else (values < 0.0))
    if bad.any():
        raise ValueError(f'{name} must be {"> 0" if positive else ">= 0"} and finite, got {values.tolist()}')
    return values
