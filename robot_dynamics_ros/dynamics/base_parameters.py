"""Base parameters: the combinations of the inertial parameters that joint torques can reveal.

τ = Y(q, q̇, q̈) π is linear in the 10 n_bodies inertial parameters π (identification.py's layout),
optionally followed by the nq armatures a (τ_i += a_i q̈_i: the columns diag(q̈)). Many columns of Y are
zero for every motion (a base joint's link moves about one axis only) or combinations of others (a
link's mass and its child's move the same way), so π itself cannot be identified, only the r
*base parameters* β = K π, with

    Y(q, q̇, q̈) π = Y_b(q, q̇, q̈) β   for every state,   Y_b = Y E   (E: r of Y's columns).

They are found numerically, for any tree (Gautier 1990's numerical method): Y stacked over random states
(q uniform within the joint limits, q̇ and q̈ normal), QR with column pivoting, Y P = Q [R_11 R_12],
rank r by the pivots; the independent columns are the first r pivots, and the others are their
combinations Y_2 = Y_1 R_11⁻¹ R_12, so β = π_1 + R_11⁻¹ R_12 π_2. The count r is the rank of the
stacked regressor (a property of the robot's kinematics, not of the random states).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .identification import joint_torque_regressor_trajectory
from .model import Model

__all__ = ["BaseParameters", "base_parameters", "PARAMETER_NAMES"]

#: The ten inertial parameters of a body, in π's order: mass (kg), first moment m c (kg m), rotational
#: inertia about the link frame's origin (kg m²).
PARAMETER_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")

RANK_RTOL = 1e-9       # a pivot |R_kk| <= RANK_RTOL |R_00| ends the independent columns
DROP_ATOL = 1e-10      # entries of R_11⁻¹ R_12 below this are rounding of exact zeros


@dataclass(frozen=True)
class BaseParameters:
    """The base parameters of a model (base_parameters): r combinations β = K π of the p full parameters
    (10 per body, model.link_names order, PARAMETER_NAMES within a body; then the nq armatures when
    `armature`).

    names (r,): each base parameter is named for its independent full parameter ("<link>.Izz",
    "<joint>.armature"), expressions (r,) its combination as text ("upper_arm_link.Izz + 0.425 forearm_link.mx
    + ..."); columns (r,): the independent columns of Y (indices into the full parameters);
    full_to_base K (r, p): β = K π; regressor_to_base E (p, r): Y_b = Y E (a column selection);
    parameter_names (p,)."""

    names: tuple
    expressions: tuple
    columns: np.ndarray
    full_to_base: np.ndarray
    regressor_to_base: np.ndarray
    parameter_names: tuple
    armature: bool

    @property
    def count(self) -> int:
        """r, the number of base parameters."""
        return len(self.columns)

    def base_values(self, full: np.ndarray) -> np.ndarray:
        """β = K π of full parameters π (p,) (inertial_parameters(model), then the armature)."""
        return self.full_to_base @ np.asarray(full, dtype=float)

    def base_regressor(self, Y: np.ndarray) -> np.ndarray:
        """Y_b = Y E: the independent columns of a regressor (..., p) (with the armature's columns when
        `armature`: full_regressor)."""
        return np.asarray(Y)[..., self.columns]


def full_regressor(model: Model, q, qd, qdd, *, armature: bool = False) -> np.ndarray:
    """Y (N, nq, p) over N states: joint_torque_regressor_trajectory, with `armature` the nq columns
    diag(q̈) of the armatures appended (τ_i += a_i q̈_i)."""
    Y = joint_torque_regressor_trajectory(model, q, qd, qdd)
    if not armature:
        return Y
    qdd = np.asarray(qdd, dtype=float)
    D = np.zeros(qdd.shape + (model.nq,))
    i = np.arange(model.nq)
    D[:, i, i] = qdd
    return np.concatenate([Y, D], axis=2)


def parameter_names(model: Model, armature: bool = False) -> tuple:
    """Names of the full parameters: "<link>.<m|mx|...|Izz>" per body, then "<joint>.armature"."""
    names = [f"{link}.{p}" for link in model.link_names for p in PARAMETER_NAMES]
    if armature:
        names += [f"{joint}.armature" for joint in model.joint_names]
    return tuple(names)


def random_states(model: Model, count: int, seed: int = 0):
    """(q, q̇, q̈) of `count` random states (count, nq): q uniform within the joint limits (±π where
    there are none), q̇ and q̈ standard normal (rad/s, rad/s²)."""
    rng = np.random.default_rng(seed)
    lower = np.maximum(model.lower, -np.pi)
    upper = np.minimum(model.upper, np.pi)
    q = rng.uniform(lower, upper, size=(count, model.nq))
    return q, rng.normal(size=(count, model.nq)), rng.normal(size=(count, model.nq))


def base_parameters(model: Model, *, armature: bool = False, states: int | None = None,
                    seed: int = 0) -> BaseParameters:
    """The base parameters of `model` (module docstring): QR with column pivoting of the regressor
    stacked over `states` random states (default: enough for 8 rows per parameter, at least 50
    states). armature: include the nq armatures as parameters (a first joint's armature and its link's
    inertia about the axis then form one base parameter). Deterministic for a seed."""
    import scipy.linalg  # here, not at import: numba and the nodes start without scipy's linalg

    p = 10 * model.n_bodies + (model.nq if armature else 0)
    names = parameter_names(model, armature)
    count = states if states is not None else max(50, -(-8 * p // max(model.nq, 1)))
    if model.nq == 0:
        return BaseParameters((), (), np.zeros(0, dtype=np.int64), np.zeros((0, p)), np.zeros((p, 0)),
                              names, armature)
    q, qd, qdd = random_states(model, count, seed)
    Y = full_regressor(model, q, qd, qdd, armature=armature).reshape(-1, p)
    scale = np.linalg.norm(Y, axis=0)
    structural = scale <= 1e-12 * max(scale.max(), 1.0)        # a column zero for every motion
    scale[structural] = 1.0
    Ys = np.where(structural, 0.0, Y / scale)                  # unit columns: the pivots compare shapes
    R, pivots = scipy.linalg.qr(Ys, mode="r", pivoting=True)
    diagonal = np.abs(np.diag(R))
    r = int(np.sum(diagonal > RANK_RTOL * diagonal[0])) if diagonal.size and diagonal[0] > 0 else 0
    independent, dependent = pivots[:r], pivots[r:]
    # Y_2 = Y_1 R_11⁻¹ R_12 (scaled columns): β = π_1 + diag(1/s_1) R_11⁻¹ R_12 diag(s_2) π_2
    combination = scipy.linalg.solve_triangular(R[:r, :r], R[:r, r:])
    combination = combination * scale[dependent][None, :] / scale[independent][:, None]
    combination[np.abs(combination) < DROP_ATOL] = 0.0
    order = np.argsort(independent)                            # base parameters in the full order
    independent = independent[order]
    combination = combination[order]
    K = np.zeros((r, p))
    K[np.arange(r), independent] = 1.0
    K[:, dependent] = combination
    E = np.zeros((p, r))
    E[independent, np.arange(r)] = 1.0
    expressions = []
    for k in range(r):
        terms = [names[independent[k]]]
        for j in np.flatnonzero(K[k]):
            if j != independent[k]:
                terms.append(f"{'-' if K[k, j] < 0 else '+'} {abs(K[k, j]):.6g} {names[j]}")
        expressions.append(" ".join(terms))
    return BaseParameters(tuple(names[j] for j in independent), tuple(expressions), independent, K, E, names,
                          armature)
