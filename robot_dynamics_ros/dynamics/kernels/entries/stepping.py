"""Entry points of time stepping: one integration step, a whole simulation and a batch of independent
rollouts (Euler, semi-implicit Euler, RK4), with friction and a tip wrench. A simulation and each
rollout of a batch are the one loop time_step.trajectory over the one step time_step.step."""
from numba import types

from ..layout import (
    all_finite,
    check_state,
    check_vector,
    n_coordinates,
)
from ..native import is_native_ndarray
from ..time_step import (
    step as integration_step,
    trajectory,
)
from .declare import (
    OVERFLOW_SIMULATION,
    OVERFLOW_STEP,
    _entry,
)
from .signatures import _D, _F, _I, _M, _MI, _T, _TI, _V, _VI


# ---- integration (integrators.py) --------------------------------------------------------------------
@_entry(types.none(_D, _VI, _VI, _VI, _F, _I, _I, _VI, _VI, _VI, _V, _V, _M))
def step(d, q, qd, tau, dt, method, frame, f_tip, viscous, coulomb, q_next, qd_next, s):
    """One integration step into (q_next, qd_next); s: scratch (8, n)."""
    n = check_state(d, q, qd)
    check_vector(d, tau, n)
    check_vector(d, f_tip, 6)
    integration_step(d, d, q, qd, tau, dt, method, frame, f_tip, viscous, coulomb, q_next, qd_next, s)
    if not (all_finite(q_next) and all_finite(qd_next)):
        raise ValueError(OVERFLOW_STEP)


@_entry(types.none(_D, _VI, _VI, _MI, _F, _I, _I, _VI, _VI, _VI, _M, _M, _M))
def simulate(d, q0, qd0, tau, dt, method, frame, f_tip, viscous, coulomb, q, qd, s):
    """(q, q̇) trajectories of shape (steps + 1, n) under tau[k] held over step k; s: scratch (8, n)."""
    n = check_state(d, q0, qd0)
    steps = tau.shape[0]
    if tau.shape[1] != n or not all_finite(tau):
        raise ValueError("invalid torque trajectory")
    if q.shape != (steps + 1, n) or qd.shape != q.shape:
        raise ValueError("invalid trajectory shape")
    if not trajectory(d, d, q0, qd0, tau, dt, method, frame, f_tip, viscous, coulomb, q, qd, s):
        raise ValueError(OVERFLOW_SIMULATION)


@_entry(types.int64(_D, _MI, _MI, _TI, _F, _I, _I, _MI, _VI, _VI, _T, _T, _M), nogil=True)
def simulate_batch(d, q0, qd0, tau, dt, method, frame, f_tip, viscous, coulomb, q, qd, s):
    """Rollouts b = 0..B-1, each simulate's loop (trajectory) from (q0[b], qd0[b]) under tau[b]
    (B, steps, n) with the wrench f_tip[b] (B, 6), into q[b], qd[b] of q, qd (B, steps + 1, n); s: scratch
    (8, n). Returns -1, or the first rollout whose state diverged (it stops at its first non-finite
    step and the later rollouts are not run). Releases the GIL (nogil): simulate_batch runs one call
    per thread on its own range of rollouts, each with its own Data buffer d and scratch s."""
    B, n = q0.shape
    steps = tau.shape[1]
    if n != n_coordinates(d) or qd0.shape != q0.shape or tau.shape[0] != B or tau.shape[2] != n:
        raise ValueError("invalid rollout shape")
    if q.shape != (B, steps + 1, n) or qd.shape != q.shape or f_tip.shape != (B, 6) or s.shape != (8, n):
        raise ValueError("invalid rollout shape")
    if not (is_native_ndarray(q0, d) and is_native_ndarray(qd0, d) and is_native_ndarray(tau, d)
            and is_native_ndarray(f_tip, d)):
        raise ValueError("invalid rollout arrays")
    if not (all_finite(q0) and all_finite(qd0) and all_finite(tau) and all_finite(f_tip)):
        raise ValueError("invalid rollout values")
    for b in range(B):
        if not trajectory(d, d, q0[b], qd0[b], tau[b], dt, method, frame, f_tip[b], viscous, coulomb, q[b],
                          qd[b], s):
            return b
    return -1
