"""Identification of the whole robot from a recording: inertias, friction, torque offsets, armature.

The measured joint torques of an arm are linear in its unknowns (Khalil and Dombre, ch. 12; Gautier 1990):

    τ_j = Y_b,j(q, q̇, q̈) β + F_v,j q̇_j + F_c,j sgn(q̇_j) + o_j     (+ a_j q̈_j: in β when `armature`)

with β the base parameters (base_parameters.py: the combinations of the 10 n_bodies inertial parameters,
and with `armature` of the armatures, that torques reveal), F_v / F_c each joint's viscous and Coulomb
friction (the model's friction law, friction.py) and o_j a constant torque offset (sensor bias). Steps:

1. q̇, q̈ (and a filtered τ) from the recorded q and τ by identification.filtered_log (a zero-phase
   low-pass, central differences, the same filter on τ; samples near the ends and gaps dropped), unless
   q̇ and q̈ are given (exact data).
2. Rows (sample k, joint j) with |q̇_j| below STICTION_FRACTION of the joint's largest |q̇_j| are left out
   of the fit: there static friction holds the joint anywhere within ±F_s, which no sgn law describes.
3. Ordinary least squares with unit-norm columns; then weighted least squares with each joint's rows
   divided by its residual's standard deviation σ_j (joints measured with different noise, Gautier 1997).
4. consistent=True: the returned model must be a physical one (Wensing, Kim and Slotine, RA-L 2017): for
   each body the pseudo-inertia

        J_j = [[½ tr(I_o) 1 − I_o, h], [hᵀ, m]]  ⪰ 0   (I_o about the link frame's origin, h = m c),

   equivalently mass ≥ 0 and the principal moments about the CoM satisfying the triangle inequalities,
   and F_v, F_c, armature ≥ 0. The full parameters π behind β are chosen by the prior: as close to the
   URDF's own values as possible in the directions the data does not see (the null space of β = K π, in
   a metric that makes masses, first moments and inertias comparable). If the least-squares β and
   friction admit such a model, it is returned exactly (a convex program finds π with K π = β and
   J_j ⪰ ε 1, then K π = β is restored to rounding). Otherwise one convex program (a semidefinite
   program, cvxpy with the Clarabel interior-point solver) minimises the weighted squared residual
   + prior_weight · (the prior's distance) over the consistent models: no local minima, no start.
   Why cvxpy and an SDP, not a log-Cholesky parametrisation with scipy's least_squares: the problem is
   convex in π, so the SDP's answer is the global best fit, found in a fraction of a second for a
   7-joint arm, and cvxpy states the constraints as they read in the paper.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .base_parameters import BaseParameters, base_parameters, full_regressor
from .consistency import pseudo_inertia, pseudo_inertia_expression, solve
from .identification import (
    DEFAULT_CUTOFF,
    _states,
    filtered_log,
    inertial_parameters,
    with_inertial_parameters,
)
from .inverse_dynamics import inverse_dynamics_trajectory
from .model import Model

__all__ = ["identify_robot", "RobotEstimate", "consistent_parameters", "torque_prediction", "moving",
           "rms_where"]

STICTION_FRACTION = 0.02   # rows with |q̇_j| < 2 % of the joint's peak speed are left out (static friction)
MOVE_ATOL = 1e-3           # rad or m: a joint whose range of motion is below this never moved
BARELY_FRACTION = 0.05     # a joint whose RMS speed is below 5 % of the median joint's barely moved
MARGIN = 1e-6              # J_j ⪰ MARGIN (scaled): a consistent body stays strictly inside, rounding included
DEFAULT_PRIOR_WEIGHT = 1e-3


@dataclass(frozen=True)
class RobotEstimate:
    """identify_robot's answer.

    model: the identified Model (inertial parameters per body, friction in damping (F_v) and friction
    (F_c), armature); offset (n,): the torque offsets o (N·m or N) the measured efforts carry;
    base_parameters and base_values (r,): the identified β = K π; residual_rms (n,): the RMS of
    τ − predict on the samples used (N·m or N); condition: of the weighted regressor [Y_b, friction,
    offset] with unit-norm columns (above about 1e3 the motion did not excite the arm: see excited);
    samples: the number of samples used; cutoff (Hz, None for exact q̇, q̈); consistent: whether the
    model is physically consistent; method: how it was found ("least squares", "least squares, made
    consistent in the data's null space", "semidefinite program"); warnings: what in the motion makes
    the estimate less trustworthy (a joint that barely moved: its RMS speed below BARELY_FRACTION of the
    median joint's, so the parameters only it reveals rest on little signal, which the condition number
    of unit-norm columns does not see)."""

    model: Model
    offset: np.ndarray
    base_parameters: BaseParameters
    base_values: np.ndarray
    residual_rms: np.ndarray
    condition: float
    samples: int
    cutoff: float | None
    consistent: bool
    method: str
    warnings: tuple = ()

    def predict(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> np.ndarray:
        """τ (N, n) = inverse_dynamics(model, q, q̇, q̈, friction=True) + offset for N states ((N, n) each,
        model.joint_names order): the torques the sensors would read."""
        return inverse_dynamics_trajectory(self.model, q, qd, qdd, friction=True) + self.offset

    @property
    def excited(self) -> bool:
        """Whether the motion excited the arm well enough: condition < 1e3 and no joint barely moved."""
        return bool(self.condition < 1e3) and not self.warnings


def _body_scales(model: Model):
    """(mass scale (n_bodies,), length scale L (m)): the metric in which masses, first moments (/L) and
    inertias (/L²) are compared: each body's URDF mass (at least 1 % of the heaviest) and L = 0.1 m."""
    mass = np.maximum(model.mass, 0.01 * max(float(model.mass.max(initial=0.0)), 1e-3))
    return mass, 0.1


def _parameter_scale(model: Model, armature: bool) -> np.ndarray:
    """s (p,): π / s is dimensionless (m / m_s, h / (m_s L), I / (m_s L²), a / (m_s L²))."""
    mass, L = _body_scales(model)
    per_body = np.array([1.0, L, L, L] + [L * L] * 6)
    s = (mass[:, None] * per_body[None, :]).reshape(-1)
    if armature:
        s = np.concatenate([s, np.full(model.nq, float(np.median(mass)) * L * L)])
    return s


def _reference_parameters(model, armature):
    """The model's own full parameters: inertial_parameters, then with `armature` its armatures."""
    pi = inertial_parameters(model)
    return np.concatenate([pi, model.armature]) if armature else pi


def _is_consistent(model, pi, armature):
    """Whether every body's scaled pseudo-inertia is ⪰ MARGIN/2 and the armatures ≥ 0."""
    mass, L = _body_scales(model)
    D = np.array([1.0 / L, 1.0 / L, 1.0 / L, 1.0])
    for j in range(model.n_bodies):
        J = D[:, None] * pseudo_inertia(pi[10 * j:10 * j + 10]) * D[None, :] / mass[j]
        if np.linalg.eigvalsh(J)[0] < 0.5 * MARGIN:
            return False
    return not armature or bool(np.all(pi[10 * model.n_bodies:] >= 0.0))


def consistent_parameters(model: Model, K: np.ndarray, beta: np.ndarray, *, data_matrix=None,
                          data_target=None,
                          extra_nonnegative=0, armature=False, prior_weight=DEFAULT_PRIOR_WEIGHT):
    """The full parameters (π, then the extra unknowns) of a physically consistent model.

    Without data_matrix: π with K π = β exactly (to rounding), every J_j ⪰ MARGIN (scaled) and the
    armatures ≥ 0, nearest the model's own parameters in the scaled metric; None if there is none.
    With data_matrix R and data_target c (the least-squares problem ‖R (β, x) − c‖² in the base values β = K π
    and `extra_nonnegative` further unknowns x ≥ 0, then any free ones): the minimiser of
    ‖R (K π, x) − c‖² + prior_weight ‖P_N S⁻¹(π − π_URDF)‖² over consistent π (P_N: the projection onto
    the null space of K S); returns (π, x). cvxpy with Clarabel."""
    import cvxpy as cp  # here: cvxpy and scipy load only when a consistent fit is asked for

    pi_ref = _reference_parameters(model, armature)
    s = _parameter_scale(model, armature)
    p = pi_ref.size
    mass, L = _body_scales(model)
    KS = K * s[None, :]                                   # β = K π_ref + (K S) z,   π = π_ref + S z
    _, singular, Vt = np.linalg.svd(KS)
    rank = int(np.sum(singular > 1e-10 * singular[0])) if singular.size else 0
    N = Vt[rank:].T                                       # orthonormal basis of the null space of K S
    z = cp.Variable(p)
    pi = pi_ref + cp.multiply(s, z)
    constraints = []
    D = np.array([1.0 / L, 1.0 / L, 1.0 / L, 1.0])
    for j in range(model.n_bodies):
        J = pseudo_inertia_expression(pi[10 * j:10 * j + 10])
        J_scaled = cp.multiply(np.outer(D, D) / mass[j], J)
        constraints.append(0.5 * (J_scaled + J_scaled.T) - MARGIN * np.eye(4) >> 0)
    if armature:
        constraints.append(pi[10 * model.n_bodies:] >= 0)
    prior = cp.sum_squares(N.T @ z) if N.size else 0.0
    if data_matrix is None:
        constraints.append(KS @ z == beta - K @ pi_ref)
        problem = cp.Problem(cp.Minimize(prior), constraints)
        try:
            solve(problem)
        except cp.error.SolverError:
            return None
        if problem.status not in ("optimal", "optimal_inaccurate") or z.value is None:
            return None
        pi_value = pi_ref + s * z.value
        pi_value += np.linalg.lstsq(K, beta - K @ pi_value, rcond=None)[0]      # K π = β to rounding
        return pi_value if _is_consistent(model, pi_value, armature) else None
    R, c = np.asarray(data_matrix), np.asarray(data_target)
    extra = R.shape[1] - K.shape[0]
    x = cp.Variable(extra) if extra else None
    beta_expr = K @ pi_ref + KS @ z
    fit = R[:, :K.shape[0]] @ beta_expr - c
    if extra:
        fit = fit + R[:, K.shape[0]:] @ x
        if extra_nonnegative:
            constraints.append(x[:extra_nonnegative] >= 0)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(fit) + prior_weight * prior), constraints)
    solve(problem)
    if z.value is None:
        raise ValueError(f"the consistent fit failed: the solver reports {problem.status!r}")
    return pi_ref + s * z.value, (x.value if extra else np.zeros(0))


def _friction_columns(qd, sign, friction, offset):
    """Per joint, the columns of (F_v, F_c, o) for its rows: q̇_j, sgn(q̇_j) (as filtered), 1; (N, n, k)."""
    columns = []
    if friction:
        columns += [qd, sign]
    if offset:
        columns.append(np.ones_like(qd))
    return np.stack(columns, axis=2) if columns else np.zeros(qd.shape + (0,))


def identify_robot(model: Model, t: ArrayLike, q: ArrayLike, tau: ArrayLike, *, qd: ArrayLike | None = None,
                   qdd: ArrayLike | None = None, friction: bool = True, offset: bool = True,
                   armature: bool = False, cutoff: float = DEFAULT_CUTOFF, consistent: bool = True,
                   prior_weight: float = DEFAULT_PRIOR_WEIGHT) -> RobotEstimate:
    """The robot's inertial parameters, friction, torque offsets (and armature) from a recording (module
    docstring gives the method).

    t (N,) the samples' times (s; uneven stamps and gaps allowed), q (N, n) positions and tau (N, n) the
    measured joint torques (N·m, or N for prismatic joints), in model.joint_names order. qd and qdd
    (N, n): exact velocities and accelerations (no filtering; t is then only checked). friction: fit each
    joint's viscous F_v and Coulomb F_c (else the model's own friction is taken as known); offset: fit a
    constant torque offset per joint; armature: fit the armatures (else the model's are taken as known);
    cutoff (Hz): the low-pass of filtered_log; consistent: return a physically consistent model (module
    docstring); prior_weight: the weight of the URDF's values against the data where constraints make
    them compete (only where the data cannot tell: the null space).

    Needs motion that excites the arm: every joint moving (a joint that never moves is a ValueError
    naming it), at several speeds in both directions; RobotEstimate.condition says how well. ValueError
    naming the argument for bad input (shapes, non-finite values, too few samples)."""
    prior_weight = _checks.scalar(prior_weight, "prior_weight", minimum=0.0)
    q_fit, qd_fit, qdd_fit, tau_fit, sign_fit, used_cutoff = _samples(model, t, q, tau, qd, qdd, cutoff)
    n = model.nq
    bp = base_parameters(model, armature=armature)
    r = bp.count
    k_extra = 2 * bool(friction) + bool(offset)
    unknowns = r + k_extra * n
    N = q_fit.shape[0]
    if N * n < 2 * unknowns:
        raise ValueError(f"t: too few samples: {N} usable samples of {n} joints for {unknowns} unknowns (at "
                         f"least {-(-2 * unknowns // n)} samples after filtering)")
    Y_b = bp.base_regressor(full_regressor(model, q_fit, qd_fit, qdd_fit, armature=armature))    # (N, n, r)
    target = tau_fit.copy()
    if not friction:                                     # known: the model's own friction
        target -= model.damping * qd_fit + model.friction * sign_fit
    if not armature:                                     # known: the model's own armature
        target -= model.armature * qdd_fit
    extra = _friction_columns(qd_fit, sign_fit, friction, offset)                                  # (N, n, k)
    # the stacked system: rows (sample, joint); columns β, then per joint its k friction/offset unknowns
    A = np.zeros((N, n, unknowns))
    A[:, :, :r] = Y_b
    for j in range(n):
        A[:, j, r + k_extra * j:r + k_extra * (j + 1)] = extra[:, j]
    rows = moving(qd_fit) if friction else np.ones_like(qd_fit, dtype=bool)
    W_A, W_b = _weighted_rows(A[rows], target[rows], np.nonzero(rows)[1], target, n)
    x, condition = _least_squares(W_A, W_b, condition=True)
    beta, extras = x[:r], x[r:].reshape(n, k_extra)
    method = "least squares"
    if consistent:
        nonnegative = extras[:, :2].reshape(-1) if friction else np.zeros(0)
        pi_full = (consistent_parameters(model, bp.full_to_base, beta, armature=armature)
                   if bool(np.all(nonnegative >= 0.0)) else None)
        if pi_full is not None:
            method = "least squares, made consistent in the data's null space"
        else:
            pi_full, extras = _consistent_fit(model, bp, W_A, W_b, r, n, k_extra, friction, armature,
                                              prior_weight)
            beta = bp.full_to_base @ pi_full
            method = "semidefinite program"
    else:
        pi_ref = _reference_parameters(model, armature)
        pi_full = pi_ref + np.linalg.lstsq(bp.full_to_base, beta - bp.full_to_base @ pi_ref, rcond=None)[0]
    estimate_model = _build_model(model, pi_full, extras, friction, armature)
    prediction = _predict_base(bp, beta, Y_b, extras, qd_fit, sign_fit, friction, offset)
    if not friction:
        prediction += model.damping * qd_fit + model.friction * sign_fit
    if not armature:
        prediction += model.armature * qdd_fit
    return RobotEstimate(model=estimate_model, offset=extras[:, -1].copy() if offset else np.zeros(n),
                         base_parameters=bp, base_values=beta,
                         residual_rms=np.sqrt(np.mean((tau_fit - prediction) ** 2, axis=0)),
                         condition=condition, samples=N, cutoff=used_cutoff,
                         consistent=estimate_model is not None, method=method,
                         warnings=_motion_warnings(model, qd_fit))


def _samples(model, t, q, tau, qd, qdd, cutoff):
    """(q, q̇, q̈, τ, sgn q̇, cutoff) to fit, checked: filtered from the recording (filtered_log at
    `cutoff`), or the exact qd and qdd as given (cutoff None); a ValueError naming a bad argument or a
    joint that never moves."""
    q_all = _states(model, q, "q")
    tau_all = _states(model, tau, "tau")
    t = _checks.real_array(t, "t", "an (N,) array of times in seconds")
    if t.shape != (q_all.shape[0],) or tau_all.shape[0] != q_all.shape[0]:
        raise ValueError(f"t, q and tau must have the same number of samples, got {t.shape}, "
                         f"{q_all.shape[0]} and {tau_all.shape[0]}")
    if (qd is None) != (qdd is None):
        raise ValueError("qd and qdd must be given together (exact data) or both left out (filtered from q)")
    if qd is None:
        q_fit, qd_fit, qdd_fit, tau_fit, sign_fit = filtered_log(model, t, q_all, tau_all, cutoff,
                                                                 coulomb=True)
        used_cutoff = float(cutoff)
    else:
        if not np.all(np.isfinite(t)) or not np.all(np.diff(t) > 0):
            raise ValueError("t must be finite, strictly increasing times (s)")
        qd_fit, qdd_fit = _states(model, qd, "qd"), _states(model, qdd, "qdd")
        if not qd_fit.shape[0] == qdd_fit.shape[0] == q_all.shape[0]:
            raise ValueError("qd and qdd must have as many samples as q")
        q_fit, tau_fit, used_cutoff = q_all, tau_all, None
        sign_fit = np.sign(qd_fit)
    span = q_fit.max(axis=0) - q_fit.min(axis=0)
    still = np.flatnonzero(span < MOVE_ATOL)
    if still.size:
        name = model.joint_names[still[0]]
        raise ValueError(f"q: joint {name!r} never moves (range {span[still[0]]:.3g} rad or m): its "
                         "friction, offset and the inertia only it moves cannot be identified. Record a "
                         "motion that moves every joint, or lock it (load_urdf's locked_joints)")
    return q_fit, qd_fit, qdd_fit, tau_fit, sign_fit, used_cutoff


def _weighted_rows(A_rows, b_rows, joint_of_row, target, n):
    """(W A, W b): each row divided by its joint's residual RMS σ_j after an unweighted fit (so that
    joints with noisier torques count less), σ_j at least 1e-9 of the joint's torque RMS."""
    x = _least_squares(A_rows, b_rows)
    residual = b_rows - A_rows @ x
    sigma = np.array([np.sqrt(np.mean(residual[joint_of_row == j] ** 2)) if np.any(joint_of_row == j) else 1.0
                      for j in range(n)])
    scale_tau = np.sqrt(np.mean(target ** 2, axis=0)) + 1e-12
    sigma = np.maximum(sigma, 1e-9 * scale_tau)
    weights = 1.0 / sigma[joint_of_row]
    return A_rows * weights[:, None], b_rows * weights


def _motion_warnings(model, qd):
    """Warnings for the joints that barely moved (RobotEstimate.warnings)."""
    speed = np.sqrt(np.mean(np.asarray(qd) ** 2, axis=0))
    typical = float(np.median(speed))
    return tuple(f"joint {name!r} barely moved (RMS speed {v:.3g}, the median joint's {typical:.3g}): the "
                 "parameters only it reveals (its friction, offset, the inertia about its axis) rest on "
                 "little signal; record a motion that moves it more"
                 for name, v in zip(model.joint_names, speed) if v < BARELY_FRACTION * typical)


def moving(qd: np.ndarray) -> np.ndarray:
    """(N, n) bool: where each joint moves, |q̇_j| >= STICTION_FRACTION of its largest |q̇_j| in qd (N, n);
    elsewhere static friction may hold it with any torque within ±F_c, which no F_c sgn(q̇) describes."""
    qd = np.asarray(qd, dtype=float)
    return np.abs(qd) >= STICTION_FRACTION * np.abs(qd).max(axis=0, initial=0.0)


def torque_prediction(model: Model, t: ArrayLike, q: ArrayLike, tau: ArrayLike, *, offset: ArrayLike = 0.0,
                      cutoff: float = DEFAULT_CUTOFF):
    """How well `model` (with friction, plus the effort `offset`) predicts a recording it may not have
    been fitted on: (times (M,), measured τ (M, n), predicted τ (M, n), moving (M, n)) on the fit's grid:
    the recording through identify_robot's filter (filtered_log, t, q, tau as identify_robot takes them),
    predicted = inverse_dynamics(model, q, q̇, q̈, friction=True) + offset at the filtered states, and
    `moving` where each joint moves (the samples identify_robot fits: moving()). The RMS over the moving
    samples, per joint, is what identify robot reports as the held-out error."""
    q_f, qd, qdd, tau_f, times = filtered_log(model, t, q, tau, cutoff, times=True)
    offset = np.asarray(offset, dtype=float)
    predicted = inverse_dynamics_trajectory(model, q_f, qd, qdd, friction=True) + offset
    return times, tau_f, predicted, moving(qd)


def rms_where(error: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per column, the RMS of error (M, n) over the rows where mask (M, n) holds (NaN where none)."""
    error, mask = np.asarray(error, dtype=float), np.asarray(mask, dtype=bool)
    count = mask.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(np.where(mask, error ** 2, 0.0).sum(axis=0) / count)


def _least_squares(A, b, condition=False):
    """argmin ‖A x − b‖ with A's columns scaled to unit norm (and, with condition, the scaled A's
    condition number)."""
    scale = np.linalg.norm(A, axis=0)
    scale[scale == 0.0] = 1.0
    x, _, _, singular = np.linalg.lstsq(A / scale, b, rcond=None)
    x = x / scale
    if not condition:
        return x
    return x, float(singular[0] / singular[-1]) if singular[-1] > 0 else np.inf


def _consistent_fit(model, bp, W_A, W_b, r, n, k_extra, friction, armature, prior_weight):
    """consistent_parameters on the weighted system, compressed by QR to its (r + k n) square factor and
    normalised by the number of rows (a mean squared residual in units of each joint's noise)."""
    R = np.linalg.qr(np.column_stack([W_A, W_b]), mode="r")
    rows = W_A.shape[0]
    R = R / np.sqrt(rows)
    data_matrix, data_target = R[:, :-1], R[:, -1]
    # the extras come in per joint blocks (F_v, F_c, o); order them as (all F_v, F_c), then the offsets
    order = []
    if friction:
        order += [r + k_extra * j for j in range(n)] + [r + k_extra * j + 1 for j in range(n)]
    order += [r + k_extra * j + k_extra - 1 for j in range(n)] if k_extra % 2 else []
    permuted = np.concatenate([data_matrix[:, :r], data_matrix[:, order]], axis=1)
    pi_full, x = consistent_parameters(model, bp.full_to_base, None, data_matrix=permuted,
                                       data_target=data_target,
                                       extra_nonnegative=2 * n if friction else 0, armature=armature,
                                       prior_weight=prior_weight)
    extras = np.zeros((n, k_extra))
    for value, column in zip(x, order):
        j, which = divmod(column - r, k_extra)
        extras[j, which] = value
    if friction:
        extras[:, :2] = np.maximum(extras[:, :2], 0.0)    # the solver's ≥ 0 to rounding
    return pi_full, extras


def _predict_base(bp, beta, Y_b, extras, qd, sign, friction, offset):
    """τ (N, n) = Y_b β + F_v q̇ + F_c sgn(q̇) + o from the base values and the per-joint extras (sgn(q̇)
    as the fit saw it: filtered with τ)."""
    tau = Y_b @ beta
    column = 0
    if friction:
        tau += extras[:, 0] * qd + extras[:, 1] * sign
        column = 2
    if offset:
        tau += extras[:, column]
    return tau


def _build_model(model, pi_full, extras, friction, armature):
    """The Model of the identified parameters: with_inertial_parameters, friction per coordinate (on each
    independent joint's body; 0 on mimicking ones), armature."""
    nb = model.n_bodies
    try:
        new = with_inertial_parameters(model, pi_full[:10 * nb])
    except ValueError:
        return None                     # consistent=False: least squares gave no rigid body
    changes = {}
    independent = np.array([name not in model.mimic for name in model.body_joint_names])
    if friction:
        viscous, coulomb = extras[:, 0], extras[:, 1]
        if np.any(viscous < 0) or np.any(coulomb < 0):
            return None
        changes["damping"] = np.where(independent, viscous[model.body_coordinate], 0.0)
        changes["friction"] = np.where(independent, coulomb[model.body_coordinate], 0.0)
    if armature:
        values = np.maximum(pi_full[10 * nb:], 0.0) if np.all(pi_full[10 * nb:] > -1e-12) else None
        if values is None:
            return None
        changes["armature"] = np.where(independent, values[model.body_coordinate], 0.0)
    return new.replace(**changes) if changes else new
