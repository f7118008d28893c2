"""Excitation trajectories for identification: periodic Fourier series with a well-conditioned regressor.

Swevers, Ganseman, Tükel, De Schutter and Van Brussel (1997), "Optimal robot excitation and
identification", IEEE T-RA 13(5), the finite Fourier series: joint j follows

    q_j(t) = q0_j + Σ_{l=1..L} [ a_jl/(ω_f l) sin(ω_f l t) − b_jl/(ω_f l) cos(ω_f l t) ] + q_j,offset
    q̇_j(t) = Σ_l [ a_jl cos(ω_f l t) + b_jl sin(ω_f l t) ]
    q̈_j(t) = Σ_l ω_f l [ −a_jl sin(ω_f l t) + b_jl cos(ω_f l t) ]

with ω_f = 2π f (rad/s), f the base frequency (Hz), L harmonics, a_jl and b_jl in rad/s (m/s for a
prismatic joint). It is periodic with period 1/f, so the states repeat (the identification's regressor
rows average the noise over the periods) and the trajectory is smooth at every order.

Start and end at rest, exactly: q_j,offset = Σ_l b_jl/(ω_f l) gives q(0) = q0; Σ_l a_jl = 0 gives
q̇(0) = 0; Σ_l l b_jl = 0 gives q̈(0) = 0. The last two eliminate a_j1 and b_j1 (a_j1 = −Σ_{l≥2} a_jl,
b_j1 = −Σ_{l≥2} l b_jl), so every coefficient vector the optimiser sees is at rest at t = 0; and since
`duration` holds a whole number of periods, the state at t = duration is the state at t = 0. The
motion is then linear in the 2 (L − 1) free coefficients x_j of each joint: q_j(t) = q0_j + B_q(t) x_j,
q̇_j(t) = B_q̇(t) x_j, q̈_j(t) = B_q̈(t) x_j, so the limits are linear constraints on x.

What is optimised: the condition number κ of the base regressor stacked over the states of one
period, with unit-norm columns, through a smooth stand-in for log κ (excitation_objective.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .excitation_objective import BaseRegressor, Objective
from .model import Model

__all__ = ["ExcitationTrajectory", "JointTrajectoryPoints", "excitation_trajectory",
           "random_fourier_trajectory"]

DEFAULT_MARGINS = (0.1, 0.8, 0.8)   # (position: fraction of the range kept clear at each end,
#                                      velocity, acceleration: fraction of the limit used)
ACCELERATION_PER_VELOCITY = 2.0     # 1/s: default acceleration limit = 2 s⁻¹ × velocity limit (rad/s²)
DEFAULT_ACCELERATION = 5.0          # rad/s² (m/s²): default acceleration limit without a velocity limit
UNLIMITED_RANGE = np.pi             # rad (m): the range q0 ± UNLIMITED_RANGE where a joint has no limit
MIN_POINTS_PER_PERIOD = 10          # samples_per_second, rate: at least this many per highest-harmonic period
DEFAULT_RATE = 50.0                 # Hz: to_joint_trajectory's points
OBJECTIVE_STATES = 64               # states per period in the objective (the coarse grid)
CONSTRAINT_POINTS = 16              # constraint points per highest-harmonic period during optimisation
CHECK_POINTS = 200                  # points per highest-harmonic period of the final limit check
START_FRACTION = 0.95               # the optimiser starts inside the limits: this × a feasible random series
DEFAULT_MAX_ITERATIONS = 150        # SLSQP iterations per start
DEFAULT_RESTARTS = 2                # random starts


@dataclass(frozen=True)
class JointTrajectoryPoints:
    """The waypoints a trajectory_msgs/JointTrajectory carries, ROS-free: joint_names (nq,),
    time_from_start (K,) seconds from the start (the first 0: the start at rest at q0), positions (rad
    or m), velocities (rad/s or m/s), accelerations (rad/s² or m/s²), each (K, nq) in joint_names
    order. A joint_trajectory_controller given positions, velocities and accelerations interpolates
    each segment with a quintic polynomial, which reproduces the series between points."""

    joint_names: tuple
    time_from_start: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray


@dataclass(frozen=True)
class ExcitationTrajectory:
    """A periodic Fourier-series trajectory (module docstring) and its samples.

    t (K,) s: samples_per_second over [0, duration], both ends included (spacing duration / (K − 1));
    q, qd, qdd (K, nq): the series at t (rad, rad/s, rad/s²; m, m/s, m/s² for prismatic joints), in
    joint_names order; a, b (nq, L): the coefficients a_jl, b_jl (rad/s), harmonic l = 1..L along
    axis 1; q0 (nq,): the start and end; base_frequency f (Hz; ω_f = 2π f); duration (s, a whole
    number of periods); condition: κ of the base regressor along the K samples with unit-norm
    columns (excitation_objective.py; the rows of both ends are the same state at rest)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray
    base_frequency: float
    duration: float
    condition: float
    joint_names: tuple

    def sample(self, t: ArrayLike):
        """(q, q̇, q̈) at times t (s; any shape S): each S + (nq,), from the series (module docstring),
        exact at any time. Outside [0, duration] the robot is at rest at q0, as when the trajectory is
        executed (the series reaches that state at both ends with q̇ = q̈ = 0)."""
        t = _checks.real_array(t, "t", "times in seconds")
        if not np.isfinite(t).all():
            raise ValueError("t must be finite (contains NaN or inf)")
        inside = ((t >= 0.0) & (t <= self.duration))[..., None]
        q, qd, qdd = _series(self.a, self.b, 2.0 * np.pi * self.base_frequency, self.q0,
                             np.clip(t, 0.0, self.duration))
        return np.where(inside, q, self.q0), np.where(inside, qd, 0.0), np.where(inside, qdd, 0.0)

    def to_joint_trajectory(self, rate: float | None = None) -> JointTrajectoryPoints:
        """The series as waypoints at `rate` Hz (default DEFAULT_RATE = 50 Hz; at least
        MIN_POINTS_PER_PERIOD points per period of the highest harmonic, L f), both ends included:
        round(duration rate) + 1 points, spacing duration / round(duration rate). Each point carries
        the series' exact position, velocity and acceleration; a controller's quintic segments then
        deviate from the series by at most max|q⁽⁶⁾| Δt⁶ / 46080 between points (the quintic Hermite
        remainder, Δt the spacing; harmonic l contributes its amplitude × (ω_f l Δt)⁶ / 46080: about
        1e-12 rad for 5 harmonics of a 10 s period at 50 Hz)."""
        rate = DEFAULT_RATE if rate is None else _checks.scalar(rate, "rate", minimum=0.0)
        _check_rate(rate, "rate", self.a.shape[1], self.base_frequency)
        time = np.linspace(0.0, self.duration, int(round(self.duration * rate)) + 1)
        q, qd, qdd = self.sample(time)
        return JointTrajectoryPoints(self.joint_names, time, q, qd, qdd)


def excitation_trajectory(model: Model, duration: float, *, harmonics: int = 5,
                          base_frequency: float | None = None, q0: ArrayLike | None = None,
                          margins=DEFAULT_MARGINS, acceleration_limit: ArrayLike | None = None,
                          samples_per_second: float = 200.0, seed: int = 0,
                          max_iterations: int = DEFAULT_MAX_ITERATIONS, restarts: int = DEFAULT_RESTARTS,
                          armature: bool = False) -> ExcitationTrajectory:
    """An exciting trajectory for identification: the Fourier series of the module docstring whose base
    regressor along one period has the smallest condition number found, within the limits, starting and
    ending at rest at q0.

    model: the robot (joint_names order throughout). duration (s > 0): the trajectory's length, a whole
    number of periods. harmonics L ≥ 2 (with the rest conditions eliminating a_j1 and b_j1, one harmonic
    cannot move). base_frequency f (Hz): default 1/duration (one period); a multiple k/duration repeats
    the period k times (the end must coincide with the start; a value within 1e-6 of one is rounded to
    it, else a ValueError). q0 (nq,): start and end, default the middle of the joint limits (0 where a
    joint has none); it must lie within the shrunk position limits below.

    Limits, for every t (not only at the samples: the final check bounds the series between its
    points):
      * position: within [lower + m0 (upper − lower), upper − m0 (upper − lower)], margins[0] = m0 a
        fraction of the range kept clear at each end (0 ≤ m0 < 0.5); where a limit is infinite (a
        continuous joint) the range is q0 ± π (rad, or m for a prismatic joint) before shrinking;
      * velocity: |q̇_j| ≤ margins[1] model.velocity_limit_j (0 < margins[1] ≤ 1; none where the
        model has none, q̇ is then bounded by the acceleration and position limits);
      * acceleration: |q̈_j| ≤ margins[2] acceleration_limit_j (0 < margins[2] ≤ 1), acceleration_limit
        (rad/s², a number or (nq,), > 0, finite) by default 2 s⁻¹ × velocity_limit, or 5 rad/s² where
        the model has no velocity limit (URDF gives no acceleration limits: pass the robot's).

    How: x_j (module docstring) from SLSQP (scipy.optimize.minimize), minimising f_p (≈ log κ(Y_s),
    excitation_objective.py) with Y_s over OBJECTIVE_STATES = 64 equally spaced states of one period
    (its gradient by the chain rule: the singular values' derivatives dσ_i = u_iᵀ dY_s v_i, and the
    regressor's derivatives in each state's q_j, q̇_j, q̈_j, from 5 nq perturbed copies of the states in
    one compiled regressor call: excitation_objective.Objective), subject to the limits as linear
    inequalities on a grid of CONSTRAINT_POINTS = 16 points per period of the highest harmonic, the
    velocity and acceleration bounds tightened by cos(π/16) and the position box about its centre
    likewise: a trigonometric polynomial of degree L that stays within cos(π L/N) M at N equally spaced
    points per period stays within M everywhere (Bernstein-Szegő: T'² + L² T² ≤ L² ‖T‖², in θ = ω_f t).
    `restarts` starts: start k is random_fourier_trajectory(..., seed=seed + k) scaled by
    START_FRACTION, each run for at most `max_iterations` SLSQP iterations (0: no optimisation). Each
    result is then checked on CHECK_POINTS = 200 points per highest-harmonic period with the same bound
    (positions: the grid's extremes widened by the velocity bound times half the spacing) and each
    joint's coefficients scaled down if needed, so the limits hold everywhere; the answer is the result
    or start with the smallest κ along the samples. SLSQP rarely converges within the default 150
    iterations (the objective is flat with many local minima); more iterations and restarts give
    somewhat lower κ. Deterministic for a seed.

    Its time and the κ it reaches on the UR5e and the Panda, against random feasible series of the
    same kind: doc/performance.md, "Design measurements" and "Identification".

    samples_per_second (Hz): of the returned samples, at least MIN_POINTS_PER_PERIOD L f. armature:
    include the joints' armatures among the identified parameters (base_parameters(armature=True)).
    ValueError naming the argument for bad input."""
    max_iterations = _checks.count(max_iterations, "max_iterations")
    restarts = _checks.count(restarts, "restarts")
    if restarts < 1:
        raise ValueError(f"restarts must be at least 1, got {restarts}")
    seed = _checks.count(seed, "seed")
    problem = _Problem(model, duration, harmonics, base_frequency, q0, margins, acceleration_limit,
                       samples_per_second, armature)
    best = None
    for k in range(restarts):
        start = START_FRACTION * problem.random_coefficients(seed + k)
        candidates = [start]
        if max_iterations > 0:
            optimised = problem.optimise(start, max_iterations)
            if np.isfinite(optimised).all():
                candidates.append(optimised * np.minimum(problem.largest_scale(optimised), 1.0)[:, None])
        for X in candidates:
            trajectory = problem.trajectory(X)
            if best is None or trajectory.condition < best.condition:
                best = trajectory
    return best


def random_fourier_trajectory(model: Model, duration: float, *, harmonics: int = 5,
                              base_frequency: float | None = None, q0: ArrayLike | None = None,
                              margins=DEFAULT_MARGINS, acceleration_limit: ArrayLike | None = None,
                              samples_per_second: float = 200.0, seed: int = 0,
                              armature: bool = False) -> ExcitationTrajectory:
    """A random feasible trajectory of excitation_trajectory's kind (same arguments and limits), not
    optimised: the free coefficients x_j (module docstring) standard normal (numpy default_rng(seed)),
    then each joint's scaled so that its tightest limit is reached (the largest motion of that shape
    within the limits). The comparison for excitation_trajectory, and its starting points."""
    seed = _checks.count(seed, "seed")
    problem = _Problem(model, duration, harmonics, base_frequency, q0, margins, acceleration_limit,
                       samples_per_second, armature)
    return problem.trajectory(problem.random_coefficients(seed))


# ---------------------------------------------------------------------------------------------
# The series
# ---------------------------------------------------------------------------------------------

def _harmonic_basis(t, L, omega):
    """The series' basis at times t (K,): (S_q, S_q̇, S_q̈), each (K, 2L), with q − q0 = S_q [a; b],
    q̇ = S_q̇ [a; b], q̈ = S_q̈ [a; b] for one joint's coefficients [a_1..a_L, b_1..b_L] (the offset
    folded in: −cos/(ω l) + 1/(ω l))."""
    w = omega * np.arange(1, L + 1)                          # ω_f l (rad/s)
    theta = np.multiply.outer(t, w)
    s, c = np.sin(theta), np.cos(theta)
    return (np.concatenate([s / w, (1.0 - c) / w], axis=-1),
            np.concatenate([c, s], axis=-1),
            np.concatenate([-w * s, w * c], axis=-1))


def _series(a, b, omega, q0, t):
    """(q, q̇, q̈) of the series with coefficients a, b (nq, L) at times t (any shape S): S + (nq,)."""
    S_q, S_qd, S_qdd = _harmonic_basis(np.asarray(t, dtype=float), a.shape[1], omega)
    coefficients = np.concatenate([a, b], axis=1).T          # (2L, nq)
    return q0 + S_q @ coefficients, S_qd @ coefficients, S_qdd @ coefficients


def _rest_elimination(L):
    """E (2L, 2(L − 1)): [a; b] = E x for the free coefficients x = [a_2..a_L, b_2..b_L], with
    a_1 = −Σ_{l≥2} a_l (q̇(0) = 0) and b_1 = −Σ_{l≥2} l b_l (q̈(0) = 0)."""
    m = L - 1
    E = np.zeros((2 * L, 2 * m))
    E[0, :m] = -1.0                                          # a_1 = −Σ a_l
    E[1:L, :m] = np.eye(m)
    E[L, m:] = -np.arange(2, L + 1)                          # b_1 = −Σ l b_l
    E[L + 1:, m:] = np.eye(m)
    return E


def _check_rate(rate, name, L, f):
    if not rate >= MIN_POINTS_PER_PERIOD * L * f:
        raise ValueError(f"{name} must be at least {MIN_POINTS_PER_PERIOD} points per period of the highest "
                         f"harmonic ({MIN_POINTS_PER_PERIOD} x {L} x {f:g} Hz = "
                         f"{MIN_POINTS_PER_PERIOD * L * f:g} Hz), got {rate:g}")


# ---------------------------------------------------------------------------------------------
# The problem: limits, grids, objective
# ---------------------------------------------------------------------------------------------

class _Problem:
    """One robot's excitation problem: the checked arguments, the limits, the grids' bases B (K, m)
    (m = 2 (L − 1) free coefficients per joint; joint j moves by B x_j), and the objective."""

    def __init__(self, model, duration, harmonics, base_frequency, q0, margins, acceleration_limit,
                 samples_per_second, armature):
        if not isinstance(model, Model):
            raise ValueError(f"model must be a Model, got {type(model).__name__}")
        if model.nq == 0:
            raise ValueError("model has no joints to excite")
        self.model = model
        self.nq = model.nq
        self.duration = _checks.scalar(duration, "duration", minimum=0.0)
        if not self.duration > 0.0:
            raise ValueError(f"duration must be > 0 s, got {duration!r}")
        self.L = L = _checks.count(harmonics, "harmonics")
        if L < 2:
            raise ValueError(f"harmonics must be at least 2 (starting and ending at rest leaves one harmonic "
                             f"no motion), got {harmonics!r}")
        self.f = self._base_frequency(base_frequency)
        self.omega = 2.0 * np.pi * self.f
        self.samples_per_second = _checks.scalar(samples_per_second, "samples_per_second", minimum=0.0)
        _check_rate(self.samples_per_second, "samples_per_second", L, self.f)
        margins = _checks.real_array(margins, "margins", "3 numbers (position, velocity, acceleration)")
        if margins.shape != (3,) or not np.isfinite(margins).all():
            raise ValueError(f"margins must be 3 finite numbers (position, velocity, acceleration), got "
                             f"shape {margins.shape}")
        if not (0.0 <= margins[0] < 0.5 and 0.0 < margins[1] <= 1.0 and 0.0 < margins[2] <= 1.0):
            raise ValueError(f"margins must be (position in [0, 0.5): the fraction of the range kept clear "
                             f"at each end; velocity and acceleration in (0, 1]: the fraction of the limit "
                             f"used), got {margins.tolist()}")
        self.margins = margins
        if not isinstance(armature, (bool, np.bool_)):
            raise ValueError(f"armature must be True or False, got {armature!r}")
        self.lower, self.upper, self.q0 = self._positions(q0)
        velocity = np.asarray(model.velocity_limit, dtype=float)
        velocity = np.where(velocity > 0.0, velocity, np.inf)       # 0: not given (as the URDF loader)
        self.velocity = margins[1] * velocity                       # rad/s, inf where none
        self.acceleration = margins[2] * self._acceleration_limit(acceleration_limit, velocity)
        self.basis = BaseRegressor(model, armature)
        E = _rest_elimination(L)
        self.m = 2 * (L - 1)
        period = 1.0 / self.f

        def grid(points):
            t = np.arange(points) * (period / points)
            return t, tuple(B @ E for B in _harmonic_basis(t, L, self.omega))

        _, self.B_objective = grid(OBJECTIVE_STATES)
        self.N_constraint = CONSTRAINT_POINTS * L
        _, self.B_constraint = grid(self.N_constraint)
        self.N_check = CHECK_POINTS * L
        _, self.B_check = grid(self.N_check)
        self.E = E

    def _base_frequency(self, base_frequency):
        if base_frequency is None:
            return 1.0 / self.duration
        f = _checks.scalar(base_frequency, "base_frequency", minimum=0.0)
        periods = f * self.duration
        k = round(periods)
        if k < 1 or abs(periods - k) > 1e-6 * periods:
            raise ValueError(f"base_frequency must give a whole number of periods in duration (to end at "
                             f"rest at q0): base_frequency x duration = {periods:g}")
        return k / self.duration

    def _positions(self, q0):
        """(lower, upper, q0): the shrunk position box (nq,) each and the checked start."""
        model = self.model
        lower, upper = np.asarray(model.lower, dtype=float), np.asarray(model.upper, dtype=float)
        if q0 is None:
            limited = np.isfinite(lower) & np.isfinite(upper)
            q0 = np.where(limited, 0.5 * (np.where(limited, lower, 0.0) + np.where(limited, upper, 0.0)),
                          np.clip(0.0, lower + UNLIMITED_RANGE, upper - UNLIMITED_RANGE))
            q0 = np.where(np.isfinite(q0), q0, 0.0)
        else:
            q0 = np.array(_checks.vector(model, q0, "q0"))
        lo = np.where(np.isfinite(lower), lower, q0 - UNLIMITED_RANGE)
        hi = np.where(np.isfinite(upper), upper, q0 + UNLIMITED_RANGE)
        clear = self.margins[0] * (hi - lo)
        lo, hi = lo + clear, hi - clear
        outside = (q0 < lo) | (q0 > hi)
        if outside.any():
            j = int(np.argmax(outside))
            raise ValueError(f"q0 must lie within the joint limits shrunk by margins[0] = "
                             f"{self.margins[0]:g} of the range at each end: q0[{j}] "
                             f"({model.joint_names[j]}) = {q0[j]:g} is outside [{lo[j]:g}, {hi[j]:g}]")
        return lo, hi, q0

    def _acceleration_limit(self, acceleration_limit, velocity):
        if acceleration_limit is None:
            return np.where(np.isfinite(velocity), ACCELERATION_PER_VELOCITY * velocity, DEFAULT_ACCELERATION)
        limit = _checks.real_array(acceleration_limit, "acceleration_limit",
                                   f"a number or {self.nq} numbers (rad/s^2)")
        if limit.ndim > 1 or limit.size not in (1, self.nq) or not (np.isfinite(limit) & (limit > 0)).all():
            raise ValueError(f"acceleration_limit must be a positive finite number or {self.nq} of them "
                             f"(rad/s^2, joint_names order), got {limit.tolist()!r}")
        return np.broadcast_to(limit, (self.nq,)).astype(float)

    # -- limits ---------------------------------------------------------------------------------

    def largest_scale(self, X):
        """s (nq,): the largest factor of each joint's coefficients X (nq, m) with every limit held at
        every time (q0 + s (q − q0) stays in the box, s q̇ and s q̈ within their bounds); 1 for a joint
        that does not move. Bounds between the CHECK_POINTS grid points: |T| ≤ max_grid |T| / cos(π/200)
        for q̇ and q̈ (degree-L trigonometric polynomials; Bernstein-Szegő), and q − q0 within the grid's
        extremes ± (that velocity bound) × half the spacing."""
        B_q, B_qd, B_qdd = self.B_check
        kappa = np.cos(np.pi * self.L / self.N_check)
        D, V, A = B_q @ X.T, B_qd @ X.T, B_qdd @ X.T                       # (N, nq)
        v_peak = np.abs(V).max(axis=0) / kappa
        a_peak = np.abs(A).max(axis=0) / kappa
        slack = v_peak * np.pi / (self.N_check * self.omega)               # |q̇| Δt/2, Δt = 2π/(N ω_f)
        d_hi, d_lo = D.max(axis=0) + slack, D.min(axis=0) - slack
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.stack([self.velocity / v_peak, self.acceleration / a_peak,
                               np.where(d_hi > 0, (self.upper - self.q0) / d_hi, np.inf),
                               np.where(d_lo < 0, (self.lower - self.q0) / d_lo, np.inf)])
        ratios = np.where(np.isnan(ratios), np.inf, ratios)
        scale = ratios.min(axis=0)
        return np.where(np.isfinite(scale), scale, 1.0)

    def linear_constraints(self, sigma):
        """(A, u): the limits on the optimisation grid as A z ≤ u for the scaled coefficients z (x_j =
        σ_j z_j), tightened by κ = cos(π/CONSTRAINT_POINTS) (largest_scale's bound: then they hold
        between the points too; the position box about its centre, widened to contain q0)."""
        B_q, B_qd, B_qdd = self.B_constraint
        kappa = np.cos(np.pi * self.L / self.N_constraint)
        centre, half = 0.5 * (self.upper + self.lower), 0.5 * (self.upper - self.lower)
        top = np.maximum(centre + kappa * half - self.q0, 0.0)             # q − q0 ≤ top
        bottom = np.minimum(centre - kappa * half - self.q0, 0.0)          # q − q0 ≥ bottom
        rows, bounds = [], []
        N, m = self.N_constraint, self.m
        for j in range(self.nq):
            for B, upper, lower in ((B_q, top[j], bottom[j]),
                                    (B_qd, kappa * self.velocity[j], -kappa * self.velocity[j]),
                                    (B_qdd, kappa * self.acceleration[j], -kappa * self.acceleration[j])):
                if not np.isfinite(upper):
                    continue
                block = np.zeros((2 * N, self.nq * m))
                block[:N, j * m:(j + 1) * m] = sigma[j] * B                # B x_j ≤ upper
                block[N:, j * m:(j + 1) * m] = -sigma[j] * B               # −B x_j ≤ −lower
                rows.append(block)
                bounds.append(np.concatenate([np.full(N, upper), np.full(N, -lower)]))
        return np.concatenate(rows), np.concatenate(bounds)

    # -- trajectories ---------------------------------------------------------------------------

    def random_coefficients(self, seed):
        """X (nq, m): standard normal free coefficients, each joint's scaled to reach its tightest limit."""
        X = np.random.default_rng(seed).standard_normal((self.nq, self.m))
        return X * self.largest_scale(X)[:, None]

    def states(self, X, B):
        """(q, q̇, q̈) (K, nq) of coefficients X (nq, m) on a grid's bases B."""
        B_q, B_qd, B_qdd = B
        return self.q0 + B_q @ X.T, B_qd @ X.T, B_qdd @ X.T

    def trajectory(self, X):
        """The ExcitationTrajectory of coefficients X, sampled at samples_per_second."""
        ab = (self.E @ X.T).T                                               # (nq, 2L): [a, b]
        a, b = ab[:, :self.L].copy(), ab[:, self.L:].copy()
        t = np.linspace(0.0, self.duration, int(round(self.duration * self.samples_per_second)) + 1)
        q, qd, qdd = _series(a, b, self.omega, self.q0, t)
        condition = self.basis.condition(q, qd, qdd)
        return ExcitationTrajectory(t=t, q=q, qd=qd, qdd=qdd, a=a, b=b, q0=self.q0.copy(),
                                    base_frequency=self.f, duration=self.duration, condition=condition,
                                    joint_names=tuple(self.model.joint_names))

    def optimise(self, X0, max_iterations):
        """SLSQP from X0 (nq, m) (excitation_trajectory's docstring); the coefficients it ends at."""
        import scipy.optimize  # here, not at import: the nodes start without scipy

        sigma = np.sqrt(np.mean(X0 ** 2, axis=1))                           # z of order 1
        sigma = np.where(sigma > 0, sigma, 1.0)
        A, u = self.linear_constraints(sigma)
        objective = Objective(self, sigma)
        result = scipy.optimize.minimize(
            objective.value, (X0 / sigma[:, None]).ravel(), jac=objective.gradient, method="SLSQP",
            constraints=[{"type": "ineq", "fun": lambda z: u - A @ z, "jac": lambda z: -A}],
            options={"maxiter": max_iterations, "ftol": 1e-6})
        return result.x.reshape(self.nq, self.m) * sigma[:, None]
