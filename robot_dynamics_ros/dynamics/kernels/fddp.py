"""One whole FDDP iteration (Mastalli et al., ICRA 2020; ddp.py has the problem, the passes and their
equations): the derivatives along the trajectory, the backward pass with its regularisation raised until
every Q_uu is positive definite, the stopping criterion, the line search on FDDP's expected improvement
and the step taken. Compiled as one call (entries/ddp_passes.ocp_iteration) that releases the GIL, so
that a solve in a thread (logic/model_predictive.py) holds the interpreter only between iterations;
dynamics/optimal_control.py runs the iterations (the iteration and time limits)."""
import numpy as np

from .ddp import (
    STATUS_DYNAMICS,
    STATUS_NOT_POSITIVE,
    STATUS_OK,
    backward_pass,
    derivatives,
    forward_pass,
)
from .jit import inline
from .layout import all_finite

# FDDP's constants (those of Crocoddyl's SolverFDDP, so that iteration counts compare)
REGULARIZATION_MIN = 1e-9
REGULARIZATION_MAX = 1e9
REGULARIZATION_FACTOR = 10.0
LINE_SEARCH_STEPS = 10      # the line search's α = 1, 1/2, ..., 1/2⁹
ACCEPT_STEP = 0.1           # a step is taken when the cost falls by this fraction of its expected fall
ACCEPT_NEGATIVE_STEP = 2.0  # ... or, closing gaps, rises by at most this multiple of its expected rise
GRADIENT_THRESHOLD = 1e-12  # an expected improvement below this: take the step
STEP_THRESHOLD = 0.5        # a step longer than this lowers the regularisation


@inline
def sum_of_products(a, b):
    """Σ_ti a_ti b_ti."""
    total = 0.0
    for t in range(a.shape[0]):
        for i in range(a.shape[1]):
            total += a[t, i] * b[t, i]
    return total


@inline
def gap_quadratic(fs, Vxx, ys, zs, difference):
    """Σ_t f̄_t^T V_xx,t y_t over the knots 0..N, y = ys - zs (difference) or ys."""
    total = 0.0
    for t in range(fs.shape[0]):
        for i in range(fs.shape[1]):
            row = 0.0
            for j in range(fs.shape[1]):
                row += Vxx[t, i, j] * (ys[t, j] - zs[t, j] if difference else ys[t, j])
            total += fs[t, i] * row
    return total


@inline
def line_search(mb, w, P, frame, x0, x_ref, limited, u_lo, u_hi, xs, us, fs, feasible, cost, Vx, Vxx, k, K,
                Qu, Quuk, xs_try, us_try, T, r, dx, s, zero):
    """(α, cost of the rollout at α) for the first α = 2^-i whose rollout (into xs_try, us_try) lowers the
    cost enough against FDDP's expected improvement d(α) = α (d_g + d_v) + ½ α² (d_q − 2 d_v) (d_v: the
    gaps' share; d_g = -Q_u·k (- V_x·f̄), d_q = -k·Q_uu k (+ f̄^T V_xx f̄), d_v = -f̄^T V_xx (x̄ - x̂));
    (0, NaN) when none does."""
    d_g = -sum_of_products(Qu, k)
    d_q = -sum_of_products(k, Quuk)
    if not feasible:
        d_g -= sum_of_products(Vx, fs)
        d_q += gap_quadratic(fs, Vxx, fs, fs, False)
    for i in range(LINE_SEARCH_STEPS):
        alpha = 0.5 ** i
        cost_try = forward_pass(mb, w, P, frame, x0, x_ref, limited, u_lo, u_hi, xs, us, fs, k, K, alpha,
                                feasible, xs_try, us_try, T, r, dx, s, zero)
        if not np.isfinite(cost_try):
            continue
        d_v = 0.0 if feasible else -gap_quadratic(fs, Vxx, xs, xs_try, True)
        expected = alpha * (d_g + d_v + 0.5 * alpha * (d_q - 2.0 * d_v))
        fall = cost - cost_try
        enough = fall > ACCEPT_STEP * expected if expected > 0.0 else fall > ACCEPT_NEGATIVE_STEP * expected
        if d_g + d_v < GRADIENT_THRESHOLD or enough:
            return alpha, cost_try
    return 0.0, np.nan


@inline
def take_step(alpha, feasible, xs, us, fs, xs_try, us_try):
    """(xs, us) = the rollout at α; the gaps closed (feasible, or α = 1) or shrunk by (1 - α); returns
    whether the trajectory is now feasible."""
    close = feasible or alpha == 1.0
    for t in range(fs.shape[0]):
        for i in range(fs.shape[1]):
            xs[t, i] = xs_try[t, i]
            fs[t, i] = 0.0 if close else fs[t, i] * (1.0 - alpha)
    for t in range(us.shape[0]):
        for i in range(us.shape[1]):
            us[t, i] = us_try[t, i]
    return close


@inline
def fddp_iteration(mb, w, P, frame, x0, x_ref, limited, u_lo, u_hi, xs, us, fs, feasible, reg, cost,
                   tolerance, A, B, Lx, Lu, Lqq, T, r, Jb, Jlog, Jr, lin, backward, xs_try, us_try, dx, s,
                   zero):
    """One FDDP iteration from (xs, us, fs) at regularisation reg (dynamics/optimal_control.py's loop):
    the derivatives, the backward pass (reg raised tenfold until every Q_uu is positive definite), the
    stopping criterion Σ |Q_u|² over the free controls, and unless converged the line search, whose step
    is taken into (xs, us, fs). lin: the linearisation's scratch (vectors, Minv, X, dtau_dx_T, D, D_next,
    E, E_next, B_T); backward: the backward pass's arrays from Vx to rhs.
    Returns (status, reg, cost, feasible, stop, converged): status STATUS_DYNAMICS (M(q) not positive
    definite along xs: nothing else done), STATUS_NOT_POSITIVE (not even REGULARIZATION_MAX was enough:
    the iteration does not count) or STATUS_OK."""
    (Vx, Vxx, k, K, Qu, Quuk, free, Qx, Qxx, Quu, Qux, VA, VB, L, lo, hi, grad, step_, trial, rhs) = backward
    vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next, B_T = lin
    if derivatives(mb, w, P, frame, x_ref, xs, us, A, B, Lx, Lu, Lqq, T, r, Jb, Jlog, Jr, vectors, Minv, X,
                   dtau_dx_T, D, D_next, E, E_next, B_T) != STATUS_OK:
        return STATUS_DYNAMICS, reg, cost, feasible, np.inf, False
    while True:
        status, _ = backward_pass(P, limited, u_lo, u_hi, us, A, B, Lx, Lu, Lqq, fs, feasible, reg, Vx, Vxx,
                                  k, K, Qu, Quuk, free, Qx, Qxx, Quu, Qux, VA, VB, L, lo, hi, grad, step_,
                                  trial, rhs)
        if status == STATUS_OK:
            break
        if reg >= REGULARIZATION_MAX:
            return STATUS_NOT_POSITIVE, reg, cost, feasible, np.inf, False
        reg = min(reg * REGULARIZATION_FACTOR, REGULARIZATION_MAX)
    if not (all_finite(k) and all_finite(K)):
        raise ValueError("the backward pass overflowed (gains not finite)")
    stop = 0.0
    for t in range(Qu.shape[0]):
        for i in range(Qu.shape[1]):
            if free[t, i]:
                stop += Qu[t, i] * Qu[t, i]
    if feasible and stop < tolerance:
        return STATUS_OK, reg, cost, feasible, stop, True
    alpha, cost_try = line_search(mb, w, P, frame, x0, x_ref, limited, u_lo, u_hi, xs, us, fs, feasible, cost,
                                  Vx, Vxx, k, K, Qu, Quuk, xs_try, us_try, T, r, dx, s, zero)
    if alpha > 0.0:
        cost = cost_try
        feasible = take_step(alpha, feasible, xs, us, fs, xs_try, us_try)
    if alpha > STEP_THRESHOLD:
        reg = max(reg / REGULARIZATION_FACTOR, REGULARIZATION_MIN)
    elif alpha == 0.0 or alpha == 0.5 ** (LINE_SEARCH_STEPS - 1):
        reg = min(reg * REGULARIZATION_FACTOR, REGULARIZATION_MAX)
    return STATUS_OK, reg, cost, feasible, stop, False
