"""Entry points of derivatives: ∂τ/∂(q, q̇) and ∂q̈/∂(q, q̇, τ), the linearisation of a trajectory, and
the regressors (the derivatives of τ with respect to the inertial parameters)."""
from numba import types

from ..jit import inline
from ..layout import (
    all_finite,
    check_state,
    check_vector,
    n_bodies,
    n_coordinates,
)
from ..linearize import (
    linearize_step,
)
from ..regressor import body_regressor, joint_torque_regressor as regressor_of_state
from ..rnea_derivatives import (
    forward_dynamics_derivatives as fd_derivatives_of_state,
    inverse_dynamics_derivatives as derivatives_of_state,
)
from .declare import (
    NOT_POSITIVE_DEFINITE,
    OVERFLOW_DERIVATIVES,
    OVERFLOW_FD_DERIVATIVES,
    OVERFLOW_REGRESSOR,
    _entry,
)
from .signatures import _D, _F, _I, _M, _MI, _T, _V, _VI


# ---- derivatives (derivatives.py) -------------------------------------------------------------------
@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _V, _M, _M))
def rnea_derivatives(d, q, qd, qdd, frame, f_tip, tau, dtau_dq, dtau_dqd):
    """τ, ∂τ/∂q, ∂τ/∂q̇ (frame < 0: no tip wrench; f_tip then unread)."""
    n = check_state(d, q, qd)
    check_vector(d, qdd, n)
    if frame >= 0:
        check_vector(d, f_tip, 6)
    if (tau.shape[0] != n or dtau_dq.shape[0] != n or dtau_dq.shape[1] != n or dtau_dqd.shape[0] != n
            or dtau_dqd.shape[1] != n):
        raise ValueError("invalid derivative outputs")
    derivatives_of_state(d, d, q, qd, qdd, frame, f_tip, tau, dtau_dq, dtau_dqd, False)
    if not (all_finite(dtau_dq) and all_finite(dtau_dqd) and all_finite(tau)):
        raise ValueError(OVERFLOW_DERIVATIVES)


@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _M, _M, _M, _M))
def aba_derivatives(d, q, qd, tau, frame, f_tip, scratch, Minv, dqdd_dq, dqdd_dqd):
    """M⁻¹, ∂q̈/∂q, ∂q̈/∂q̇ (n, n each); scratch (3n + 1, 2n): [∂q̈/∂q  ∂q̈/∂q̇] (rows :n), [∂τ/∂q  ∂τ/∂q̇]^T
    at q̈ (rows n:3n, the first n columns), then q̈ and one more vector (row 3n); frame < 0: no tip
    wrench."""
    n = check_state(d, q, qd)
    check_vector(d, tau, n)
    if frame >= 0:
        check_vector(d, f_tip, 6)
    if (scratch.shape != (3 * n + 1, 2 * n) or Minv.shape != (n, n) or dqdd_dq.shape != (n, n)
            or dqdd_dqd.shape != (n, n)):
        raise ValueError("invalid derivative outputs")
    dqdd_dx, vectors = scratch[:n], scratch[3 * n]
    if not fd_derivatives_of_state(d, d, q, qd, tau, frame, f_tip, vectors[:n], vectors[n:], Minv, dqdd_dx,
                                   scratch[n:3 * n]):
        raise ValueError(NOT_POSITIVE_DEFINITE)
    for r in range(n):
        for c in range(n):
            dqdd_dq[r, c] = dqdd_dx[r, c]
            dqdd_dqd[r, c] = dqdd_dx[r, n + c]
    if not (all_finite(dqdd_dx) and all_finite(Minv) and all_finite(vectors[:n])):
        raise ValueError(OVERFLOW_FD_DERIVATIVES)


@inline
def linearize_rows(d, Q, QD, TAU, dt, method, A, B, vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next, B_T):
    """A[k] (2n, 2n), B[k] (2n, n) of the step from state k (rows of Q, QD, TAU); the rest scratch
    (linearize.linearize_step). Returns (status, step, stage): linearize.STATUS_* at that step and stage."""
    N, n = Q.shape[0], n_coordinates(d)
    check_states(d, Q, QD, TAU, n)
    width = X.shape[1]                  # >= 2n, zeros past 2n (and past n in Minv, dtau_dx_T)
    if (A.shape != (N, 2 * n, 2 * n) or B.shape != (N, 2 * n, n) or vectors.shape != (4, 2 * n)
            or Minv.shape[0] != n or Minv.shape[1] < n or dtau_dx_T.shape != (2 * n, Minv.shape[1])
            or X.shape[0] != n or width < 2 * n or D.shape != (2 * n, width) or D_next.shape != D.shape
            or E.shape != (n, width) or E_next.shape != E.shape or B_T.shape != (n, 2 * n)):
        raise ValueError("invalid linearization arrays")
    for M in (Minv, dtau_dx_T):
        M[:, n:] = 0.0
    for M in (X, D, D_next, E, E_next):
        M[:, 2 * n:] = 0.0
    for k in range(N):
        status, stage = linearize_step(d, d, Q[k], QD[k], TAU[k], dt, method, A[k], B[k], vectors, Minv, X,
                                       dtau_dx_T, D, D_next, E, E_next, B_T)
        if status != 0:
            return status, k, stage
    return 0, 0, 0


_LINEARIZE = types.UniTuple(types.int64, 3)(_D, _MI, _MI, _MI, _F, _I, _T, _T, _M, _M, _M, _M, _M, _M, _M, _M,
                                            _M)


@_entry(_LINEARIZE)
def linearize_trajectory(d, Q, QD, TAU, dt, method, A, B, vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next,
                         B_T):
    """linearize_rows, holding the GIL: one state's linearize, in the model's default Data."""
    return linearize_rows(d, Q, QD, TAU, dt, method, A, B, vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next,
                          B_T)


@_entry(_LINEARIZE, nogil=True)
def linearize_batch(d, Q, QD, TAU, dt, method, A, B, vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next, B_T):
    """linearize_rows with the GIL released: one range of linearize_trajectory's states, in its own
    workspace and scratch (threads.run_chunks)."""
    return linearize_rows(d, Q, QD, TAU, dt, method, A, B, vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next,
                          B_T)


# ---- identification (regressor.py) -------------------------------------------------------------------
@_entry(types.none(_D, _VI, _VI, _VI, _M, _V))
def joint_torque_regressor(d, q, qd, qdd, Y, tau):
    """Y (nq, 10 n_bodies) with τ = Y π; tau: scratch (nq)."""
    n = check_state(d, q, qd)
    check_vector(d, qdd, n)
    if Y.shape[0] != n or Y.shape[1] != 10 * n_bodies(d) or tau.shape[0] != n:
        raise ValueError("invalid regressor output")
    regressor_of_state(d, d, q, qd, qdd, Y, tau)
    if not all_finite(Y):
        raise ValueError(OVERFLOW_REGRESSOR)


@inline
def check_states(d, Q, QD, QDD, n):
    """Q, QD, QDD are finite (N, n) arrays of the same shape."""
    if (Q.shape[1] != n or QD.shape[0] != Q.shape[0] or QD.shape[1] != n or QDD.shape[0] != Q.shape[0]
            or QDD.shape[1] != n or not (all_finite(Q) and all_finite(QD) and all_finite(QDD))):
        raise ValueError("invalid trajectory")


@_entry(types.none(_D, _MI, _MI, _MI, types.float64[:, :, ::1], _V), nogil=True)
def joint_torque_regressor_batch(d, Q, QD, QDD, Y, tau):
    """Y[k] (nq, 10 n_bodies) of every state k; tau: scratch (nq)."""
    n = n_coordinates(d)
    check_states(d, Q, QD, QDD, n)
    if Y.shape[0] != Q.shape[0] or Y.shape[1] != n or Y.shape[2] != 10 * n_bodies(d) or tau.shape[0] != n:
        raise ValueError("invalid regressor output")
    for k in range(Q.shape[0]):
        regressor_of_state(d, d, Q[k], QD[k], QDD[k], Y[k], tau)
    if not all_finite(Y):
        raise ValueError(OVERFLOW_REGRESSOR)


@_entry(types.none(_D, _MI, _MI, _MI, _I, types.float64[:, :, ::1], _M), nogil=True)
def body_regressor_batch(d, Q, QD, QDD, body, Y, TAU):
    """Body `body`'s ten regressor columns Y[k] (nq, 10) and the model's τ TAU[k] at every state k."""
    n = n_coordinates(d)
    check_states(d, Q, QD, QDD, n)
    if (Y.shape[0] != Q.shape[0] or Y.shape[1] != n or Y.shape[2] != 10 or TAU.shape[0] != Q.shape[0]
            or TAU.shape[1] != n or not 0 <= body < n_bodies(d)):
        raise ValueError("invalid regressor output")
    for k in range(Q.shape[0]):
        body_regressor(d, d, Q[k], QD[k], QDD[k], body, Y[k], TAU[k])
    if not (all_finite(Y) and all_finite(TAU)):
        raise ValueError(OVERFLOW_REGRESSOR)
