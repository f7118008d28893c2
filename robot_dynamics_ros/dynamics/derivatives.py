"""Analytical derivatives of the dynamics: ∂τ/∂q, ∂τ/∂q̇ of inverse dynamics and ∂q̈/∂(q, q̇, τ) of forward
dynamics, for linearisation (LQR, MPC).

Inverse dynamics τ = ID(q, q̇, q̈) is the RNEA (eqs. 9.53-9.57); its derivatives come from differentiating
its recursions written in the base frame: joint θ_j turns the screw axes and inertias of its subtree
about S_j (∂S_k/∂θ_j = [S_j, S_k]), so each ∂τ_i/∂θ_j is a product of joint i's composite inertias with
two six-vectors of joint j (kernels/rnea_derivatives.py states the derivation). ∂τ/∂q̈ = M(q) and
∂τ/∂q̇ = 2 C(q, q̇) (C Christoffel-consistent). Forward dynamics q̈ = FD(q, q̇, τ) satisfies
ID(q, q̇, FD(q, q̇, τ)) = τ, so ∂q̈/∂x = −M⁻¹ ∂τ/∂x at q̈ = FD (x = q, q̇) and ∂q̈/∂τ = M⁻¹.

Friction: viscous friction F_v q̇ adds diag(F_v) to ∂τ/∂q̇; Coulomb friction F_s sgn(q̇) is constant
away from q̇ = 0 and contributes zero there (at q̇_i = 0 it has no derivative; zero is used).
"""
from __future__ import annotations

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks, threads
from .forward_dynamics import _net_torque
from .friction import Friction, friction_coefficients
from .kernels import entries as _k
from .model import Data, Model

__all__ = ["inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearize",
           "linearize_trajectory"]

#: States per range at least when linearize_trajectory splits across threads (≥ 0.15 ms: threads.py) at
#: 12 µs per RK4 state on a 7-joint arm.
MIN_CHUNK = 12


def inverse_dynamics_derivatives(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                                 f_tip: ArrayLike | None = None, frame: str | None = None,
                                 friction: Friction = None, data: Data | None = None):
    """(∂τ/∂q, ∂τ/∂q̇), each (n, n), of τ = M(q) q̈ + c(q, q̇) + g(q) + Jᵀ F_tip (+ friction), at (q, q̇, q̈):
    the same arguments as inverse_dynamics (f_tip at `frame`, default model.tip_frame, in its
    coordinates). Row i, column j: ∂τ_i/∂q_j (N·m/rad; N/m, N·m/m, N/rad for prismatic joints), ∂τ_i/∂q̇_j
    (N·m·s/rad). One compiled pass: RNEA, the subtrees' composite inertias in the base frame, then six
    six-vector products per pair of joints on one branch (kernels/rnea_derivatives.py). ∂τ/∂q̈ is the mass
    matrix."""
    n = model.nq
    tau, dtau_dq, dtau_dqd = empty(n), empty((n, n)), empty((n, n))
    try:
        frame_index, wrench = (-1, q) if f_tip is None else (model.frame_index(frame), f_tip)
        _k.rnea_derivatives(_checks.buffer(model, data), q, qd, qdd, frame_index, wrench, tau, dtau_dq,
                            dtau_dqd)
    except _checks.KERNEL_ERRORS as error:
        q, qd, qdd, f_tip = _checks.retry_args(model, error, (q, "q"), (qd, "qd"), (qdd, "qdd"),
                                               (f_tip, "f_tip", 6))
        return inverse_dynamics_derivatives(model, q, qd, qdd, f_tip, frame, friction, data)
    coefficients = friction_coefficients(model, friction)
    if coefficients is not None:
        dtau_dqd[np.diag_indices(n)] += coefficients[0]          # ∂(F_v q̇)/∂q̇; Coulomb: 0 for q̇ ≠ 0
    return dtau_dq, dtau_dqd


def forward_dynamics_derivatives(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike,
                                 f_tip: ArrayLike | None = None, frame: str | None = None,
                                 friction: Friction = None, data: Data | None = None):
    """(∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ), each (n, n), of q̈ = FD(q, q̇, τ) (forward_dynamics' arguments): with
    q̈ = FD(q, q̇, τ), ∂q̈/∂τ = M⁻¹ (symmetric) and ∂q̈/∂x = −M⁻¹ ∂τ/∂x at that q̈ (x = q, q̇), from
    inverse_dynamics_derivatives (ID(q, q̇, FD(q, q̇, τ)) = τ differentiated), all in one compiled pass:
    q̈ = M⁻¹ (τ − b) by M's Cholesky factor, M⁻¹ from it, the differentiated RNEA at q̈, the products.
    Friction: τ − F_v q̇ − F_s sgn(q̇) drives the arm, so ∂q̈/∂q̇ gains −M⁻¹ diag(F_v)."""
    coefficients = friction_coefficients(model, friction)
    if coefficients is not None:
        tau = _net_torque(model, qd, tau, friction)           # τ − F_v q̇ − F_s sgn(q̇) drives the arm
    dqdd_dq, dqdd_dqd, Minv = _forward_dynamics_derivatives(model, q, qd, tau, f_tip, frame, data)
    if coefficients is not None:                              # ∂q̈/∂q̇ −= M⁻¹ diag(F_v)
        dqdd_dqd -= Minv * coefficients[0]
    return dqdd_dq, dqdd_dqd, Minv


def _forward_dynamics_derivatives(model, q, qd, tau, f_tip, frame, data):
    """The compiled pass (kernels/rnea_derivatives.py) for a torque τ that already has friction taken out:
    (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹)."""
    n = model.nq
    dqdd_dq, dqdd_dqd, Minv = empty((n, n)), empty((n, n)), empty((n, n))
    try:
        buf = _checks.buffer(model, data)
        frame_index, wrench = (-1, q) if f_tip is None else (model.frame_index(frame), f_tip)
        _k.aba_derivatives(buf, q, qd, tau, frame_index, wrench, _derivative_scratch(model, data), Minv,
                           dqdd_dq, dqdd_dqd)
    except _checks.KERNEL_ERRORS as error:
        q, qd, tau, f_tip = _checks.retry_args(model, error, (q, "q"), (qd, "qd"), (tau, "tau"),
                                               (f_tip, "f_tip", 6))
        return _forward_dynamics_derivatives(model, q, qd, tau, f_tip, frame, data)
    return dqdd_dq, dqdd_dqd, Minv


def _derivative_scratch(model, data):
    """The derivative pass's intermediate arrays as one (3n + 1, 2n) array (entries.aba_derivatives),
    kept in `data` (default: the model's Data) and refilled by every call: never returned, and a call
    holds the GIL throughout (Data's docstring)."""
    data = _checks.workspace(model, data)
    scratch = data.derivative_scratch
    if scratch is None:
        scratch = np.zeros((3 * model.nq + 1, 2 * model.nq))
        object.__setattr__(data, "derivative_scratch", scratch)
    return scratch


METHODS = {"euler": _k.METHOD_EULER, "semi_implicit_euler": _k.METHOD_SEMI_IMPLICIT, "rk4": _k.METHOD_RK4}


def linearize(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, dt: float, method: str = "rk4",
              data: Data | None = None):
    """(A, B): the Jacobians of one integration step x⁺ = f(x, τ), x = (q, q̇) (2n), τ held over the
    step (rk4_step, semi_implicit_euler_step or euler_step, as `method`): A = ∂x⁺/∂x (2n, 2n),
    B = ∂x⁺/∂τ (2n, n); x⁺ ≈ f(x̄, τ̄) + A (x − x̄) + B (τ − τ̄), for an LQR or MPC.

    By the chain rule through the stages, with the analytical Jacobians of ẋ = (q̇, FD(q, q̇, τ)) at each
    stage state x_s: ∂ẋ/∂x = [[0, 1], [∂q̈/∂q, ∂q̈/∂q̇]], ∂ẋ/∂τ = [[0], [M⁻¹]]
    (forward_dynamics_derivatives). RK4: k_s = ẋ(x + c_s dt k_{s−1}),
    ∂k_s/∂x = ∂ẋ_s/∂x (1 + c_s dt ∂k_{s−1}/∂x), ∂k_s/∂τ = ∂ẋ_s/∂x c_s dt ∂k_{s−1}/∂τ + ∂ẋ_s/∂τ,
    A = 1 + dt/6 (∂k_1 + 2 ∂k_2 + 2 ∂k_3 + ∂k_4) (B alike).
    Euler: A = 1 + dt ∂ẋ/∂x, B = dt ∂ẋ/∂τ. Semi-implicit Euler (q̇⁺ = q̇ + dt q̈, q⁺ = q + dt q̇⁺): its
    two rows differentiated the same way. One compiled pass (kernels/linearize.py)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}")
    n = model.nq
    q, qd, tau = (_checks.vector(model, x, name) for x, name in ((q, "q"), (qd, "qd"), (tau, "tau")))
    dt = _checks.scalar(dt, "dt", minimum=0.0)
    A, B = _jacobians(1, n)
    status = _k.linearize_trajectory(_checks.buffer(model, data), q[None], qd[None], tau[None], dt,
                                     METHODS[method], A, B, *_scratch(n))
    _raise_for(status, dt, "q, qd, tau")
    return A.reshape(2 * n, 2 * n), B.reshape(2 * n, n)


def linearize_trajectory(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, dt: float,
                         method: str = "rk4", data: Data | None = None):
    """(A (N, 2n, 2n), B (N, 2n, n)): linearize at each of N states and torques (rows of q, qd, tau:
    (N, n)), a horizon for MPC, in one compiled loop per range of states (threads.py:
    get_num_threads() ranges at most, none under MIN_CHUNK states); the same A, B for any thread
    count, and for a state that cannot be linearized the same error (the first such state's)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}")
    n = model.nq
    q = _checks.array(model, q, "q", (None, n))
    N = q.shape[0]
    qd, tau = _checks.array(model, qd, "qd", (N, n)), _checks.array(model, tau, "tau", (N, n))
    dt = _checks.scalar(dt, "dt", minimum=0.0)
    A, B = _jacobians(N, n)
    buf = _checks.buffer(model, data)
    statuses = {}       # a range's first state -> the kernel's (status, step, stage) for that range

    def rows(start, stop, workspace):   # one range of states, in its own copy of the workspace, scratch
        status, k, stage = _k.linearize_batch(workspace, q[start:stop], qd[start:stop], tau[start:stop], dt,
                                              METHODS[method], A[start:stop], B[start:stop], *_scratch(n))
        statuses[start] = (status, start + k, stage)
    threads.run_chunks(N, rows, MIN_CHUNK, buf)
    failed = [statuses[start] for start in sorted(statuses) if statuses[start][0] != 0]
    state = "q[{k}], qd[{k}], tau[{k}]" if N > 1 else "q[k], qd[k], tau[k]"
    _raise_for(failed[0] if failed else (0, 0, 0), dt, state)
    return A, B


def _jacobians(N, n):
    """Uninitialised A (N, 2n, 2n) and B (N, 2n, n) in one block: one allocation, and one large enough
    for numpy to ask for huge pages (it does for 4 MiB and up), which a long horizon fills with a few
    page faults instead of one per 4 KiB."""
    block = empty(N * 2 * n * 3 * n)
    return block[:N * 4 * n * n].reshape(N, 2 * n, 2 * n), block[N * 4 * n * n:].reshape(N, 2 * n, n)


def _scratch(n):
    """The compiled loop's scratch (kernels/linearize.py); the products' widths padded to a multiple of
    8 (zeros past the data, written by the kernel)."""
    w1, w2 = -(-n // 8) * 8, -(-2 * n // 8) * 8
    return (empty((4, 2 * n)), empty((n, w1)), empty((n, w2)), empty((2 * n, w1)),
            empty((2 * n, w2)), empty((2 * n, w2)), empty((n, w2)), empty((n, w2)),
            empty((n, 2 * n)))


def _raise_for(status, dt, state):
    """The ValueError for the compiled loop's (status, step, stage) when a state could not be
    linearized, else nothing; `state` names the state in the message ("{k}" in it: the step k)."""
    code, k, stage = status
    where = state.format(k=k)
    if code == _k.LINEARIZE_NOT_POSITIVE_DEFINITE:
        if stage == 0:
            raise ValueError(f"{_k.NOT_POSITIVE_DEFINITE} ({where.split(',')[0]})")
        raise ValueError(f"an RK4 stage of the step from {where} over dt = {dt:g} s has no dynamics "
                         f"({_k.NOT_POSITIVE_DEFINITE} of the stage): a smaller dt")
    if code == _k.LINEARIZE_OVERFLOW:
        raise ValueError(f"A or B overflowed: not finite for these finite {where} and dt "
                         "(values too large for float64)")
