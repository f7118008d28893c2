"""Entry points of time stepping: one integration step and a whole simulation (Euler, semi-implicit
Euler, RK4), with friction and a tip wrench."""
from numba import types

from ..layout import (
    all_finite,
    check_state,
    check_vector,
)
from ..time_step import (
    step as integration_step,
)
from .declare import (
    OVERFLOW_SIMULATION,
    OVERFLOW_STEP,
    _entry,
)
from .signatures import _D, _F, _I, _M, _MI, _V, _VI


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
    for i in range(n):
        q[0, i] = q0[i]
        qd[0, i] = qd0[i]
    for k in range(steps):
        integration_step(d, d, q[k], qd[k], tau[k], dt, method, frame, f_tip, viscous, coulomb,
                         q[k + 1], qd[k + 1], s)
        if not (all_finite(q[k + 1]) and all_finite(qd[k + 1])):     # stop at the first divergent step
            raise ValueError(OVERFLOW_SIMULATION)
