"""Contact sensing without a force sensor: the generalized-momentum observer of the external joint
torques, and the external wrench at a frame that explains them.

The equation of motion with an unknown external torque (eq. 9.81, the Lagrangian notes' contact term
τ_ext = Jᵀ(q) F_ext for a wrench F_ext exerted on the robot at a frame):

    M(q) q̈ + C(q, q̇) q̇ + g(q) + τ_f(q̇) = τ + τ_ext

With the generalized momentum p = M(q) q̇ and Ṁ = C + Cᵀ (the skew symmetry of Ṁ − 2C, eq. 9.87):

    ṗ = τ + τ_ext + β(q, q̇),       β = C(q, q̇)ᵀ q̇ − g(q) − τ_f(q̇)

The observer (De Luca and Mattone, ICRA 2003; Haddadin, De Luca and Albu-Schäffer, IEEE T-RO 2017)

    r(t) = K ( p(t) − p(0) − ∫₀ᵗ (τ + β + r) ds )

satisfies ṙ = K (τ_ext − r): each r_i is τ_ext,i seen through a first-order low-pass filter of
bandwidth K_i (1/s), with no joint acceleration needed. p and β come from recursions over the
tree (kernels/momentum.py, two RNEA passes): neither M nor C is formed.
"""
from __future__ import annotations

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks
from .friction import Friction, friction_coefficients
from .jacobians import jacobian
from .kernels import entries as _k
from .model import Data, Model


def momentum_balance(model: Model, q: ArrayLike, qd: ArrayLike,
                     data: Data | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(p, β): the generalized momentum p = M(q) q̇ (n,), in N·m·s (N·s for prismatic joints), and
    β = C(q, q̇)ᵀ q̇ − g(q) (n,), in N·m, so that ṗ = τ + τ_ext + β along any motion (no friction
    here). C is the Christoffel-consistent Coriolis matrix (coriolis_matrix). O(n), two RNEA passes:
    p_i = S_iᵀ h_i and (Cᵀ q̇)_i = Ṡ_iᵀ h_i with h_i the composite momentum of the subtree at body i,
    which RNEA with q̇ = 0, q̈ = q̇ leaves in its wrench recursion (kernels/momentum.py derives it)."""
    p, beta = empty(model.nq), empty(model.nq)
    try:
        _k.momentum_balance(_checks.buffer(model, data), q, qd, p, beta)
    except _checks.KERNEL_ERRORS as error:
        q, qd = _checks.retry_args(model, error, (q, "q"), (qd, "qd"))
        return momentum_balance(model, q, qd, data)
    return p, beta


class MomentumObserver:
    """Estimate of the external joint torques τ_ext from the joint states and the applied torques
    (module docstring): r → τ_ext through K/(s + K) per joint.

        observer = MomentumObserver(model, gain=50.0)
        for q, qd, tau in samples:                 # tau: applied over the last dt
            tau_ext = observer.update(q, qd, tau, dt)

    gain: K in 1/s, a scalar or one value per joint (model.joint_names order), each > 0; settable
    (`observer.gain = ...`). friction: None, True (the URDF's damping and friction) or (viscous,
    coulomb), as in the dynamics calls: the model's friction torques τ_f(q̇) are taken out of the
    applied torque, so that τ_ext does not contain them. data: the workspace (default: a Data of its
    own, so that observers of one model do not share scratch with other calls).

    Discretisation (kernels/momentum.py, observer_step): τ held over each step, β(q, q̇) integrated by
    the trapezoid rule between samples, r by the trapezoid rule too (Tustin's discretisation of the
    filter, stable for any K dt). With exact samples, a swinging arm with no contact gives |r| of the
    order of dt² (1e-5 N·m at 1 ms), not the dt-order error a rectangle rule leaves.
    """

    def __init__(self, model: Model, gain: ArrayLike, friction: Friction = None, data: Data | None = None):
        self.model = model
        self._data = Data(model) if data is None else data
        self._buffer = _checks.buffer(model, self._data)
        coefficients = friction_coefficients(model, friction)
        zeros = np.zeros(model.nq)
        self._viscous, self._coulomb = (zeros, zeros.copy()) if coefficients is None else coefficients
        self._gain = empty(model.nq)
        self.gain = gain
        self._state = np.zeros((5, model.nq))      # kernels/momentum.py: observer_step's rows
        self._r = np.zeros(model.nq)
        self._started = False

    @property
    def gain(self) -> np.ndarray:
        """K (n,), in 1/s."""
        return self._gain.copy()

    @gain.setter
    def gain(self, value: ArrayLike) -> None:
        gain = _checks.real_array(value, "gain", f"a number or a vector of length {self.model.nq}")
        gain = _checks.vector(self.model, np.full(self.model.nq, gain) if gain.ndim == 0 else gain, "gain")
        if np.any(gain <= 0.0):
            raise ValueError(f"gain must be > 0 (1/s), got {value!r}")
        self._gain[:] = gain

    @property
    def tau_ext(self) -> np.ndarray:
        """The latest estimate of τ_ext (n,), in N·m (N for prismatic joints); zeros before the first
        update and after reset."""
        return self._r.copy()

    @property
    def started(self) -> bool:
        """Whether the observer has a starting state (reset, or a first update)."""
        return self._started

    def reset(self, q: ArrayLike, qd: ArrayLike) -> None:
        """Start again at the state (q, q̇): p(0) = M(q) q̇, the estimate zero."""
        try:
            _k.observer_start(self._buffer, q, qd, self._viscous, self._coulomb, self._state, self._r)
        except _checks.KERNEL_ERRORS as error:
            self._started = False
            self._r[:] = 0.0
            return self.reset(*_checks.retry_args(self.model, error, (q, "q"), (qd, "qd")))
        self._started = True

    def update(self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, dt: float) -> np.ndarray:
        """The estimate of τ_ext (n,) at the state (q, q̇) now, with `tau` the joint torque applied
        over the last `dt` seconds (measured or commanded; N·m or N). The first update without a
        reset starts the observer at this state and returns zeros. Defined by
        M q̈ + c + g (+ friction) = τ + τ_ext. A bad argument raises a ValueError naming it and leaves
        the observer as it was."""
        if not self._started:
            self.reset(q, qd)
            return self._r.copy()
        try:
            _k.observer_update(self._buffer, q, qd, tau, dt, self._gain, self._viscous, self._coulomb,
                               self._state, self._r)
        except _checks.KERNEL_ERRORS as error:
            checked = (_checks.vector(self.model, q, "q"), _checks.vector(self.model, qd, "qd"),
                       _checks.vector(self.model, tau, "tau"), _time_step(dt))
            if all(a is b for a, b in zip(checked, (q, qd, tau, dt))):
                raise error          # not the arguments' fault: an overflow
            return self.update(*checked)
        return self._r.copy()


def _time_step(dt):
    """dt as a float > 0, or a ValueError naming it; a float that already is one is returned as is."""
    value = _checks.scalar(dt, "dt", expected="a time step in s")
    if not value > 0.0:
        raise ValueError(f"dt must be > 0 (s), got {dt!r}")
    return dt if dt.__class__ is float else value


def external_wrench(model: Model, q: ArrayLike, tau_ext: ArrayLike, frame: str | None = None,
                    reference: str = "body", damping: float = 0.0, data: Data | None = None) -> np.ndarray:
    """The wrench F = (m, f) (6,) exerted ON the robot by its environment at `frame` (default
    model.tip_frame) that explains the external joint torques: Jᵀ(q) F = τ_ext, with J =
    jacobian(model, q, frame, reference). Angular first; N·m and N.

    reference: "body" (the frame's axes, moment about its origin), "world_aligned" (the root frame's
    axes, moment about the frame's origin) or "space" (root axes, moment about the root's origin:
    the wrench dual to the space twist). Least squares: with n > 6 the best fit; with fewer than six
    joints, or a singular J, the minimum-norm F (the components the joints cannot feel are zero).
    damping λ > 0: the damped least squares min |Jᵀ F − τ_ext|² + λ |F|², i.e. F = (J Jᵀ + λ 1)⁻¹ J τ_ext.
    Both by numpy's SVD least squares (of Jᵀ F = τ_ext, or of the stacked system [Jᵀ; √λ 1] F =
    [τ_ext; 0] with damping). Sign: this is
    the wrench on the robot, −F_tip of eq. 9.81 (the wrench the robot exerts).
    """
    tau_ext = _checks.vector(model, tau_ext, "tau_ext")
    damping = _checks.scalar(damping, "damping", minimum=0.0)
    J = jacobian(model, q, frame, reference, data=data)
    if damping == 0.0:
        F = np.linalg.lstsq(J.T, tau_ext, rcond=None)[0]
    else:
        A = np.vstack([J.T, np.sqrt(damping) * np.eye(6)])
        F = np.linalg.lstsq(A, np.concatenate([tau_ext, np.zeros(6)]), rcond=None)[0]
    return _checks.finite(F, "external wrench", "q, tau_ext and damping")
