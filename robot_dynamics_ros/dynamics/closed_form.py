"""Closed-form dynamics of an open chain (or tree) from stacked matrices (eqs. 9.62–9.84)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .inertia import spatial_inertia
from .kernels import entries as _k
from .model import Data, Model
from .spatial import ad, adjoint, inverse_transform


@dataclass(frozen=True)
class ClosedFormDynamics:
    """M, c, g assembled from the stacked matrices (units as mass_matrix, coriolis_forces and
    gravity_torques), and the stacked matrices themselves.

    A (6n, n) 𝒜, G (6n, 6n) 𝒢, Gamma (6n, 6n) Γ(θ), L (6n, 6n) ℒ(θ) = (1 − Γ)⁻¹, V (6n,) the link twists,
    Vdot_base (6n,), ad_A_qd (6n, 6n) [ad_{𝒜θ̇}], ad_V (6n, 6n) [ad_𝒱].
    """
    M: np.ndarray
    c: np.ndarray
    g: np.ndarray
    A: np.ndarray
    G: np.ndarray
    Gamma: np.ndarray
    L: np.ndarray
    V: np.ndarray
    Vdot_base: np.ndarray
    ad_A_qd: np.ndarray
    ad_V: np.ndarray


def _blocks(n):
    return [slice(6 * i, 6 * i + 6) for i in range(n)]


def closed_form_dynamics(model: Model, q: ArrayLike, qd: ArrayLike,
                         data: Data | None = None) -> ClosedFormDynamics:
    """M(θ), c(θ, θ̇), g(θ) from the stacked link quantities (eqs. 9.62–9.84), link frames {i} = the
    model's body frames, fixed base (𝒱_base = 0):

        𝒱 = ℒ 𝒜 θ̇  (9.77),   ℒ = (1 − Γ)⁻¹  (9.76),   Γ's block (i, λ(i)) = [Ad_{T_{i,λ(i)}}]  (9.68),
        M = 𝒜ᵀ ℒᵀ 𝒢 ℒ 𝒜 + diag(armature)  (9.82; the rotors' reflected inertia added),
        c = −𝒜ᵀ ℒᵀ (𝒢 ℒ [ad_{𝒜θ̇}] Γ + [ad_𝒱]ᵀ 𝒢) ℒ 𝒜 θ̇,
        g = 𝒜ᵀ ℒᵀ 𝒢 ℒ 𝒱̇_base  (9.84),  𝒱̇_base's block i = Ad_{T_{i0}}(0, −g) for bodies on the base.

    The sign of the [ad_{𝒜θ̇}] term follows eq. 9.55
    ([𝒱_i, A_i] θ̇_i = −[ad_{A_i θ̇_i}] Ad_{T_{i,i−1}} 𝒱_{i−1}); this draft prints eqs. 9.73, 9.78 and 9.83
    with the opposite sign. For trees, Γ has one block per parent–child pair and ℒ's block (i, j) is
    [Ad_{T_ij}] when j supports i. O(n³): a cross-check of the recursive algorithms, not a fast path.
    q (rad or m), qd (rad/s or m/s): (nq,). data: the workspace for the forward kinematics.
    With mimic joints (n bodies, nq coordinates, body joint values G q + o: Model.coordinate_map) 𝒜 is
    the bodies' screws times G, (6n, nq), so that M, c and g come out in the coordinates (Gᵀ M G, ...).
    """
    q = _checks.vector(model, q, "q")
    qd = _checks.vector(model, qd, "qd")
    n = model.n_bodies
    T0 = _k.body_poses(_checks.buffer(model, data), q)
    Gmap, _ = model.coordinate_map()
    qd_body = Gmap @ qd if model.mimic else qd                                 # the bodies' joint rates
    B = _blocks(n)
    A = np.zeros((6 * n, n))
    G = np.zeros((6 * n, 6 * n))
    Gamma = np.zeros((6 * n, 6 * n))
    Vdot_base = np.zeros(6 * n)
    Vdot_0 = np.concatenate([np.zeros(3), -model.gravity])
    for i in range(n):
        r = 6 * i + (3 if model.body_joint_types[i] == "prismatic" else 0)
        A[r:r + 3, i] = model.axis[i]                                            # A_i = (a, 0) or (0, a)
        G[B[i], B[i]] = spatial_inertia(model.mass[i], model.com[i], model.inertia_com[i])
        p = model.parent[i]
        if p >= 0:
            Gamma[B[i], B[p]] = adjoint(inverse_transform(T0[i]) @ T0[p])         # [Ad_{T_{i,i-1}}]
        else:
            Vdot_base[B[i]] = adjoint(inverse_transform(T0[i])) @ Vdot_0         # Ad_{T_{i0}}(𝒱̇_0)
    try:
        L = np.linalg.solve(np.eye(6 * n) - Gamma, np.eye(6 * n))              # (9.76)
    except np.linalg.LinAlgError:       # 1 − Γ is unit lower triangular: only values past float64 get here
        raise ValueError("the stacked L = (1 - Gamma)^-1 overflowed: not finite for these finite q "
                         "(values too large for float64)") from None
    ad_A_qd = np.zeros((6 * n, 6 * n))
    ad_V = np.zeros((6 * n, 6 * n))
    for i in range(n):
        ad_A_qd[B[i], B[i]] = ad(A[B[i], i] * qd_body[i])
    if model.mimic:
        A = A @ Gmap                                                           # the coordinates' 𝒜
    V = L @ A @ qd                                                             # (9.77)
    for i in range(n):
        ad_V[B[i], B[i]] = ad(V[B[i]])
    LA = L @ A
    M = LA.T @ G @ LA + np.diag(model.armature)                                # (9.82), + the armature
    c = -LA.T @ (G @ L @ ad_A_qd @ Gamma + ad_V.T @ G) @ LA @ qd               # (9.83), sign of (9.55)
    g = LA.T @ G @ L @ Vdot_base                                               # (9.84)
    result = ClosedFormDynamics(M=M, c=c, g=g, A=A, G=G, Gamma=Gamma, L=L, V=V, Vdot_base=Vdot_base,
                                ad_A_qd=ad_A_qd, ad_V=ad_V)
    for field in dataclasses.fields(result):
        _checks.finite(getattr(result, field.name), f"the stacked {field.name}", "q, qd")
    return result
