"""Entry points of joint-space dynamics: inverse dynamics (RNEA), the mass matrix (CRBA), forward dynamics
(ABA, or M and a Cholesky solve), the momentum and its observer, the Coriolis matrix and ∂M/∂q."""
import numpy as np
from numba import types

from ..aba import aba as articulated_body
from ..christoffel import (
    coriolis_matrix as christoffel_coriolis_matrix,
    mass_matrix_derivatives as coriolis_mass_matrix_derivatives,
)
from ..crba import crba as composite_rigid_body
from ..jit import inline
from ..layout import (
    all_finite,
    check_state,
    check_vector,
    has_mimic,
    n_coordinates,
)
from ..linalg import cholesky_in_place, cholesky_solve_in_place
from ..momentum import momentum_balance as momentum_balance_of_state, observer_reset, observer_step
from ..rnea import rnea as recursive_newton_euler
from ..time_step import (
    FD_NOT_POSITIVE_DEFINITE,
    fd_mimic,
)
from .declare import (
    NOT_POSITIVE_DEFINITE,
    OVERFLOW_B,
    OVERFLOW_BETA,
    OVERFLOW_C,
    OVERFLOW_CM,
    OVERFLOW_DM,
    OVERFLOW_G,
    OVERFLOW_M,
    OVERFLOW_OBSERVER,
    OVERFLOW_P,
    OVERFLOW_QDD,
    OVERFLOW_QDD_TIP,
    OVERFLOW_TAU,
    OVERFLOW_TAU_TIP,
    _entry,
)
from .signatures import _D, _F, _I, _M, _MI, _V, _VI


# ---- inverse and forward dynamics of one state (rnea.py; aba.py, or M_r with mimic joints) ---------------
@inline
def one_state_dynamics(d, q, qd, x, forward, tip, frame, f_tip, out):
    """out = τ = M q̈ + c + g for q̈ = x (RNEA), or, when forward, out = q̈ = FD(q, q̇, τ) for τ = x (ABA, or
    through M_r with mimic joints); with the tip wrench F_tip at `frame` (+ J^T F_tip) when tip. forward
    and tip are constants of the caller: their branches fold away."""
    check_vector(d, x, check_state(d, q, qd))
    if tip:
        check_vector(d, f_tip, 6)
    if not forward:
        recursive_newton_euler(d, d, q, qd, x, True, True, True, frame, f_tip, out)
    elif has_mimic(d):
        if fd_mimic(d, d, q, qd, x, frame, f_tip, out) == FD_NOT_POSITIVE_DEFINITE:
            raise ValueError(NOT_POSITIVE_DEFINITE)     # (FD_OVERFLOW: q̈ not finite, checked below)
    else:
        articulated_body(d, d, q, qd, x, frame, f_tip, out)
    if not all_finite(out):     # (a constant message per raise: a computed one would need numba's NRT)
        if forward and tip:
            raise ValueError(OVERFLOW_QDD_TIP)
        if forward:
            raise ValueError(OVERFLOW_QDD)
        if tip:
            raise ValueError(OVERFLOW_TAU_TIP)
        raise ValueError(OVERFLOW_TAU)


@_entry(types.none(_D, _VI, _VI, _VI, _V))
def rnea(d, q, qd, qdd, tau):
    """τ = M q̈ + c + g."""
    one_state_dynamics(d, q, qd, qdd, False, False, -1, q, tau)


@_entry(types.none(_D, _VI, _VI, _VI, _V))
def aba(d, q, qd, tau, qdd):
    """q̈ = FD(q, q̇, τ)."""
    one_state_dynamics(d, q, qd, tau, True, False, -1, q, qdd)


@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _V))
def rnea_tip(d, q, qd, qdd, frame, f_tip, tau):
    """τ = M q̈ + c + g + J^T F_tip with F_tip at `frame`."""
    one_state_dynamics(d, q, qd, qdd, False, True, frame, f_tip, tau)


@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _V))
def aba_tip(d, q, qd, tau, frame, f_tip, qdd):
    """q̈ = FD(q, q̇, τ) with F_tip at `frame`."""
    one_state_dynamics(d, q, qd, tau, True, True, frame, f_tip, qdd)


# ---- gravity and the bias terms (rnea.py) ------------------------------------------------------------
@_entry(types.none(_D, _VI, _V))
def gravity(d, q, tau):
    """g(q): RNEA with q̇ = q̈ = 0."""
    check_vector(d, q, n_coordinates(d))
    recursive_newton_euler(d, d, q, q, q, False, False, True, -1, q, tau)
    if not all_finite(tau):
        raise ValueError(OVERFLOW_G)


@inline
def velocity_terms(d, q, qd, tau, use_gravity):
    """c(q, q̇), plus g(q) when use_gravity (a constant of the caller): RNEA with q̈ = 0."""
    check_state(d, q, qd)
    recursive_newton_euler(d, d, q, qd, qd, True, False, use_gravity, -1, q, tau)
    if not all_finite(tau):
        if use_gravity:
            raise ValueError(OVERFLOW_B)
        raise ValueError(OVERFLOW_C)


@_entry(types.none(_D, _VI, _VI, _V))
def coriolis(d, q, qd, tau):
    """c(q, q̇): RNEA with q̈ = 0 and no gravity."""
    velocity_terms(d, q, qd, tau, False)


@_entry(types.none(_D, _VI, _VI, _V))
def bias(d, q, qd, tau):
    """c(q, q̇) + g(q): RNEA with q̈ = 0."""
    velocity_terms(d, q, qd, tau, True)


@_entry(types.none(_D, _MI, _MI, _MI, _I, _MI, _M), nogil=True)
def rnea_batch(d, q, qd, qdd, frame, f_tip, tau):
    """RNEA over N states (rows) into tau (N, n); f_tip (N, 6) applied at `frame` when frame >= 0."""
    N, n = q.shape
    if n != n_coordinates(d) or qd.shape != q.shape or qdd.shape != q.shape or tau.shape != q.shape:
        raise ValueError("invalid trajectory shape")
    if frame >= 0 and (f_tip.shape[0] != N or f_tip.shape[1] != 6 or not all_finite(f_tip)):
        raise ValueError("invalid tip wrench trajectory")
    if not (all_finite(q) and all_finite(qd) and all_finite(qdd)):
        raise ValueError("invalid trajectory values")
    for k in range(N):
        f_tip_k = f_tip[k if frame >= 0 else 0]
        recursive_newton_euler(d, d, q[k], qd[k], qdd[k], True, True, True, frame, f_tip_k,
                               tau[k])
    if not all_finite(tau):
        if frame >= 0:      # (a constant message per raise: a computed one would need numba's NRT)
            raise ValueError(OVERFLOW_TAU_TIP)
        raise ValueError(OVERFLOW_TAU)


# ---- mass matrix (crba.py) ---------------------------------------------------------------------------
@_entry(types.none(_D, _VI, _M))
def crba(d, q, M):
    """M(q)."""
    check_vector(d, q, n_coordinates(d))
    composite_rigid_body(d, d, q, M)
    if not all_finite(M):
        raise ValueError(OVERFLOW_M)


@_entry(types.none(_D, _VI, _VI, _V))
def momentum(d, q, qd, p):
    """The generalized momentum p = M(q) q̇ without forming M: RNEA with q̇ = 0, q̈ = q̇ and no gravity
    (momentum.py), O(n) time and memory."""
    check_state(d, q, qd)
    momentum_balance_of_state(d, d, q, qd, p, p, False)
    if not all_finite(p):
        raise ValueError(OVERFLOW_P)


# ---- momentum observer (momentum.py) -----------------------------------------------------------------
@inline
def check_observer_arrays(n, gain, viscous, coulomb, state, r):
    """The observer's own arrays (MomentumObserver makes them): gain, friction coefficients and r of
    length n, state (5, n)."""
    if (gain.shape[0] != n or viscous.shape[0] != n or coulomb.shape[0] != n or r.shape[0] != n
            or state.shape[0] != 5 or state.shape[1] != n):
        raise ValueError("invalid observer arrays")


@_entry(types.none(_D, _VI, _VI, _V, _V))
def momentum_balance(d, q, qd, p, beta):
    """p = M(q) q̇ and β = C(q, q̇)^T q̇ - g(q)."""
    check_state(d, q, qd)
    momentum_balance_of_state(d, d, q, qd, p, beta, True)
    if not (all_finite(p) and all_finite(beta)):
        raise ValueError(OVERFLOW_BETA)


@_entry(types.none(_D, _VI, _VI, _VI, _F, _VI, _VI, _VI, _M, _V))
def observer_update(d, q, qd, tau, dt, gain, viscous, coulomb, state, r):
    """One sample of the momentum observer: r (in: the previous estimate, out: this one); state (5, nq)
    (momentum.observer_step). Nothing changes when the estimate would overflow."""
    n = check_state(d, q, qd)
    check_vector(d, tau, n)
    if not (dt > 0.0 and np.isfinite(dt)):
        raise ValueError("invalid time step")
    check_observer_arrays(n, gain, viscous, coulomb, state, r)
    if not observer_step(d, d, q, qd, tau, dt, gain, viscous, coulomb, state, r):
        raise ValueError(OVERFLOW_OBSERVER)


@_entry(types.none(_D, _VI, _VI, _VI, _VI, _M, _V))
def observer_start(d, q, qd, viscous, coulomb, state, r):
    """Start the momentum observer at (q, q̇): state (5, nq), r = 0 (momentum.observer_reset)."""
    n = check_state(d, q, qd)
    check_observer_arrays(n, viscous, viscous, coulomb, state, r)
    observer_reset(d, d, q, qd, viscous, coulomb, state, r)
    if not all_finite(state[0]) or not all_finite(state[1]):
        raise ValueError(OVERFLOW_BETA)


@_entry(types.none(_D, _MI, types.float64[:, :, ::1]), nogil=True)
def crba_batch(d, q, M):
    """CRBA over N configurations (rows) into M (N, n, n)."""
    N, n = q.shape
    if n != n_coordinates(d) or M.shape != (N, n, n):
        raise ValueError("invalid trajectory shape")
    if not all_finite(q):
        raise ValueError("invalid trajectory values")
    for k in range(N):
        composite_rigid_body(d, d, q[k], M[k])
    if not all_finite(M):
        raise ValueError(OVERFLOW_M)


# ---- forward dynamics of many states, or through M (aba.py; crba.py + rnea.py + linalg.py) ------------
@_entry(types.none(_D, _MI, _MI, _MI, _M), nogil=True)
def aba_batch(d, q, qd, tau, qdd):
    """ABA over N states (rows) into qdd (N, n)."""
    N, n = q.shape
    if n != n_coordinates(d) or qd.shape != q.shape or tau.shape != q.shape or qdd.shape != q.shape:
        raise ValueError("invalid trajectory shape")
    if not (all_finite(q) and all_finite(qd) and all_finite(tau)):
        raise ValueError("invalid trajectory values")
    mimic = has_mimic(d)
    for k in range(N):
        if mimic:
            if fd_mimic(d, d, q[k], qd[k], tau[k], -1, q[k], qdd[k]) == FD_NOT_POSITIVE_DEFINITE:
                raise ValueError(NOT_POSITIVE_DEFINITE)
        else:
            articulated_body(d, d, q[k], qd[k], tau[k], -1, q[k], qdd[k])
    if not all_finite(qdd):
        raise ValueError(OVERFLOW_QDD)


@_entry(_V(_D, _VI, _VI, _VI, _I, _VI), allocates=True)
def fd_via_mass_matrix(d, q, qd, tau, frame, f_tip):
    """q̈ = M^-1 (τ - b - J^T F_tip) with M = L L^T (the textbook's GetJointAccel, no explicit inverse)."""
    n = check_state(d, q, qd)
    check_vector(d, tau, n)
    check_vector(d, f_tip, 6)
    M = np.empty((n, n))
    composite_rigid_body(d, d, q, M)
    b = np.empty(n)
    recursive_newton_euler(d, d, q, qd, qd, True, False, True, frame, f_tip, b, poses_known=True)
    for i in range(n):
        b[i] = tau[i] - b[i]
    if all_finite(M) and all_finite(b):     # checked before the factorisation: NaN is no pivot
        if not cholesky_in_place(M, n):
            raise ValueError(NOT_POSITIVE_DEFINITE)
        cholesky_solve_in_place(M, n, b)
        if all_finite(b):
            return b
    if frame >= 0:
        raise ValueError(OVERFLOW_QDD_TIP)
    raise ValueError(OVERFLOW_QDD)


# ---- Coriolis matrix and ∂M/∂q (coriolis.py) ---------------------------------------------------------------
@_entry(types.none(_D, _VI, _VI, _M))
def coriolis_matrix(d, q, qd, C):
    """C(q, q̇), Christoffel-consistent."""
    check_state(d, q, qd)
    christoffel_coriolis_matrix(d, d, q, qd, C)
    if not all_finite(C):
        raise ValueError(OVERFLOW_CM)


@_entry(types.float64[:, :, ::1](_D, _VI), allocates=True)
def mass_matrix_derivatives(d, q):
    """∂M/∂q_k in [:, :, k], shape (n, n, n) (n = nq)."""
    n = n_coordinates(d)
    check_vector(d, q, n)
    dM = np.empty((n, n, n))
    coriolis_mass_matrix_derivatives(d, d, q, np.empty(n), np.empty((n, n)), dM)
    if not all_finite(dM):
        raise ValueError(OVERFLOW_DM)
    return dM
