"""The objective of the excitation design (excitation.py): how well a motion excites the base parameters.

What is optimised: the condition number κ(Y_s) of the base regressor (base_parameters.py) stacked over
the states of one period, Y_b (N n, r) = [Y_b(q(t_k), q̇(t_k), q̈(t_k))]_k, with its columns scaled to
unit norm (Y_s = Y_b C⁻¹, C = diag(‖Y_b[:, i]‖): a parameter's units do not count). A small κ means
every base parameter moves the torques in its own direction, so noise in τ reaches the least-squares
estimate the least (Swevers et al.'s criterion). log κ = log σ_max − log σ_min is not differentiable where
singular values cross, and near the optimum the smallest ones gather, so the optimiser minimises the
smooth

    f_p = (1/2p) [log Σ_i λ_i^p + log Σ_i λ_i^−p],   λ_i = σ_i(Y_s)²,   p = SMOOTHING = 32,

with log κ ≤ f_p ≤ log κ + (log r)/p (r base parameters; f_∞ = log κ): a factor of at most
r^(1/32) ≈ 1.12 on κ for r = 43. The condition reported is κ itself.
"""
from __future__ import annotations

import numpy as np

from .base_parameters import base_parameters, full_regressor

SMOOTHING = 32.0                    # p of the objective f_p (Objective): log κ ≤ f_p ≤ log κ + log(r)/p


class BaseRegressor:
    """The base regressor of a model (base_parameters) and κ of it stacked over states, columns scaled to
    unit norm."""

    def __init__(self, model, armature):
        self.model, self.armature = model, armature
        self.columns = base_parameters(model, armature=armature).columns

    def stacked(self, q, qd, qdd):
        """Y_b (..., K nq, r) of states (..., K, nq): one compiled loop over all of them."""
        shape = q.shape
        Y = full_regressor(self.model, q.reshape(-1, shape[-1]), qd.reshape(-1, shape[-1]),
                           qdd.reshape(-1, shape[-1]), armature=self.armature)[..., self.columns]
        return Y.reshape(shape[:-2] + (shape[-2] * shape[-1], len(self.columns)))

    def condition(self, q, qd, qdd):
        """κ(Y_s) of the states (K, nq), by the SVD of Y_s."""
        Ys = unit_columns(self.stacked(q, qd, qdd))[0]
        s = np.linalg.svd(Ys, compute_uv=False)
        return float(s[0] / s[-1]) if s[-1] > 0 else np.inf


def unit_columns(Y):
    """(Y_s, c): Y (R, r) with unit-norm columns, Y_s = Y / c (a zero column: c = 1)."""
    c = np.linalg.norm(Y, axis=0)
    c = np.where(c > 0, c, 1.0)
    return Y / c, c


class Objective:
    """The objective over the objective grid as a function of the scaled coefficients z (x_j = σ_j z_j),
    and its gradient, by the chain rule through the states. problem: excitation's problem (its nq, m
    free coefficients per joint, basis: a BaseRegressor, states(X, B) and the grid's bases B_objective).

    Objective: log κ(Y_s) = log σ_max − log σ_min is not differentiable where singular values cross,
    which they do near the optimum (the smallest ones gather); with p = SMOOTHING it is replaced by
    f_p = (1/2p) [log Σ λ_i^p + log Σ λ_i^−p], λ_i = σ_i² (log κ ≤ f_p ≤ log κ + log(r)/p; f_∞ = log κ).
    Its derivative: ∂f_p/∂σ_i = (w⁺_i − w⁻_i)/σ_i, w± = λ^±p / Σ λ^±p; so with
    Γ = (M − Y_s diag(1ᵀ(M ⊙ Y_s))) C⁻¹, M = U diag(∂f_p/∂σ) Vᵀ (dσ_i = u_iᵀ dY_s v_i, dY_s = (dY_b −
    Y_s dC) C⁻¹, dc_r = Y_s[:, r]ᵀ dY_b[:, r]):

        df_p = Σ Γ ⊙ dY_b,   ∂Y_b(t)/∂x_jk = B_q(t)_k ∂Y_b/∂q_j + B_q̇(t)_k ∂Y_b/∂q̇_j + B_q̈(t)_k ∂Y_b/∂q̈_j

    Y_b is linear in q̈ and quadratic in q̇, so ∂Y_b/∂q̈_j (a forward difference) and ∂Y_b/∂q̇_j (a
    central one) are exact; ∂Y_b/∂q_j is a central difference. 5 nq perturbed copies of each state and
    the state itself, in one regressor call."""

    Q_STEP = 1e-5      # rad (m): ∂Y_b/∂q_j's central difference (truncation ~ Q_STEP², rounding ~ ε/Q_STEP)

    def __init__(self, problem, sigma, p=None):
        self.problem, self.sigma = problem, sigma
        self.p = SMOOTHING if p is None else p

    def _X(self, z):
        return z.reshape(self.problem.nq, self.problem.m) * self.sigma[:, None]

    def _f(self, Ys, gradient):
        """f_p of Y_s (R, r) and, when asked, ∂f_p/∂σ_i with the singular vectors."""
        lam, W = np.linalg.eigh(Ys.T @ Ys)                                   # ascending
        lam = np.maximum(lam, 1e-16 * lam[-1])                              # a rank-deficient motion
        log_lam = np.log(lam)
        if np.isinf(self.p):
            f = 0.5 * (log_lam[-1] - log_lam[0])
            w = np.zeros_like(lam)
            w[-1], w[0] = 1.0, -1.0
        else:
            up, down = self.p * log_lam, -self.p * log_lam
            top, bottom = up.max(), down.max()                              # log-sum-exp, shifted
            e_up, e_down = np.exp(up - top), np.exp(down - bottom)
            f = (top + np.log(e_up.sum()) + bottom + np.log(e_down.sum())) / (2.0 * self.p)
            w = e_up / e_up.sum() - e_down / e_down.sum()                  # w⁺ − w⁻
        if not gradient:
            return f
        s = np.sqrt(lam)
        U = (Ys @ W) / s                                                    # u_i = Y_s v_i / σ_i
        return f, (U * (w / s)) @ W.T                                        # M = U diag(∂f/∂σ) Vᵀ

    def value(self, z):
        p = self.problem
        return self._f(unit_columns(p.basis.stacked(*p.states(self._X(z), p.B_objective)))[0], False)

    def gradient(self, z):
        p = self.problem
        nq = p.nq
        q, qd, qdd = p.states(self._X(z), p.B_objective)                   # (K, nq)
        K = q.shape[0]
        e = np.eye(nq)[:, None, :]                                          # e_j, broadcast over t
        h = self.Q_STEP
        copies = [(q + h * e, qd, qdd), (q - h * e, qd, qdd),             # ∂/∂q_j
                  (q, qd + e, qdd), (q, qd - e, qdd),                     # ∂/∂q̇_j (quadratic: exact)
                  (q, qd, qdd + e)]                                        # ∂/∂q̈_j (linear: exact)
        batch = [np.concatenate([np.broadcast_to(c[d], (nq, K, nq)) for c in copies]
                                + [(q, qd, qdd)[d][None]]) for d in range(3)]
        Y = p.basis.stacked(*batch)                                         # (5 nq + 1, K nq, r)
        Y0 = Y[-1]
        Ys, c = unit_columns(Y0)
        _, M = self._f(Ys, True)
        Gamma = (M - Ys * np.sum(M * Ys, axis=0)) / c                       # df = Σ Γ ⊙ dY_b
        r = Ys.shape[1]
        Y = Y[:5 * nq].reshape(5, nq, K, nq, r)
        D = np.stack([(Y[0] - Y[1]) / (2.0 * h), 0.5 * (Y[2] - Y[3]), Y[4] - Y0.reshape(K, nq, r)])
        B = np.stack(p.B_objective)                                         # (3, K, m): d = q, q̇, q̈
        grad = np.einsum("dti,tpr,djtpr->ji", B, Gamma.reshape(K, nq, r), D, optimize=True)
        return (grad * self.sigma[:, None]).ravel()
