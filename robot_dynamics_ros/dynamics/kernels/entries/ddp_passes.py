"""Entry points of optimal control (kernels/ddp.py, kernels/fddp.py): the cost and gaps of a trajectory, the
derivatives along it, and a whole FDDP iteration in one call (ocp_iteration, what solve_optimal_control
calls: the GIL is let go once per iteration). The arrays are the solver's own
(dynamics/optimal_control.py makes and checks them); each entry checks the sizes it relies on. They
release the GIL (nogil): a solve in a thread beside a control loop (logic/model_predictive.py) leaves
that loop the interpreter; the Data they take is the problem's own (ReachingProblem.data), not the
model's default one that GIL-holding kernels share."""
from numba import types

from ..ddp import (
    P_SIZE,
    cost_and_gaps,
    derivatives,
)
from ..fddp import fddp_iteration
from ..layout import all_finite, n_coordinates
from .declare import _entry
from .signatures import _D, _F, _I, _M, _MI, _T, _V, _VI

_B2 = types.boolean[:, ::1]          # the free set of each knot's control step (N, n)


@_entry(_F(_D, _VI, _I, _VI, _VI, _MI, _MI, _M, _M, _V, _V, _M, _VI), nogil=True)
def ocp_cost(d, P, frame, x0, x_ref, xs, us, fs, T, r, x_next, s, zero):
    """The cost of (xs, us) and its gaps into fs; NaN when a step diverges."""
    n = n_coordinates(d)
    N = us.shape[0]
    if (P.shape[0] != P_SIZE or us.shape[1] != n or xs.shape[0] != N + 1 or xs.shape[1] != 2 * n
            or fs.shape[0] != N + 1 or fs.shape[1] != 2 * n or x0.shape[0] != 2 * n
            or x_ref.shape[0] != 2 * n):
        raise ValueError("invalid trajectory shape")
    if not (all_finite(xs) and all_finite(us) and all_finite(x0)):
        raise ValueError("invalid trajectory values")
    return cost_and_gaps(d, d, P, frame, x0, x_ref, xs, us, fs, T, r, x_next, s, zero)


@_entry(_I(_D, _VI, _I, _VI, _MI, _MI, _T, _T, _M, _M, _T, _M, _V, _M, _M, _M, _M, _M, _M, _M, _M, _M, _M, _M,
           _M), nogil=True)
def ocp_derivatives(d, P, frame, x_ref, xs, us, A, B, Lx, Lu, Lqq, T, r, Jb, Jlog, Jr, vectors, Minv, X,
                    dtau_dx_T, D, D_next, E, E_next, B_T):
    """A_t, B_t, l_x, l_u and the goal's block of l_xx along (xs, us); STATUS_OK or STATUS_DYNAMICS."""
    return derivatives(d, d, P, frame, x_ref, xs, us, A, B, Lx, Lu, Lqq, T, r, Jb, Jlog, Jr, vectors, Minv,
                       X, dtau_dx_T, D, D_next, E, E_next, B_T)


@_entry(types.Tuple((_I, _F, _F, types.boolean, _F, types.boolean))(
    _D, _VI, _I, _VI, _VI, types.boolean, _VI, _VI, _M, _M, _M, types.boolean, _F, _F, _F,
    _T, _T, _M, _M, _T, _M, _V, _M, _M, _M,
    _M, _M, _M, _M, _M, _M, _M, _M, _M,
    _M, _T, _M, _T, _M, _M, _B2, _V, _M, _M, _M, _M, _M, _M, _V, _V, _V, _V, _V, _V,
    _M, _M, _V, _M, _VI), nogil=True)
def ocp_iteration(d, P, frame, x0, x_ref, limited, u_lo, u_hi, xs, us, fs, feasible, reg, cost, tolerance,
                  A, B, Lx, Lu, Lqq, T, r, Jb, Jlog, Jr,
                  vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next, B_T,
                  Vx, Vxx, k, K, Qu, Quuk, free, Qx, Qxx, Quu, Qux, VA, VB, L, lo, hi, grad, step_, trial,
                  rhs, xs_try, us_try, dx, s, zero):
    """One whole FDDP iteration (ddp.fddp_iteration: derivatives, backward pass, stopping criterion, line
    search, the step taken into xs, us, fs), in one call without the GIL: a re-plan in a thread holds the
    interpreter only between iterations; (status, reg, cost, feasible, stop, converged)."""
    n = n_coordinates(d)
    N = us.shape[0]
    if (P.shape[0] != P_SIZE or us.shape[1] != n or xs.shape[0] != N + 1 or xs.shape[1] != 2 * n
            or fs.shape[0] != N + 1 or fs.shape[1] != 2 * n or x0.shape[0] != 2 * n
            or x_ref.shape[0] != 2 * n or A.shape[0] != N or Vxx.shape[0] != N + 1 or xs_try.shape[0] != N + 1
            or us_try.shape[0] != N or k.shape[0] != N or K.shape[0] != N or free.shape[0] != N):
        raise ValueError("invalid trajectory shape")
    return fddp_iteration(d, d, P, frame, x0, x_ref, limited, u_lo, u_hi, xs, us, fs, feasible, reg, cost,
                          tolerance, A, B, Lx, Lu, Lqq, T, r, Jb, Jlog, Jr,
                          (vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next, B_T),
                          (Vx, Vxx, k, K, Qu, Quuk, free, Qx, Qxx, Quu, Qux, VA, VB, L, lo, hi, grad, step_,
                           trial, rhs), xs_try, us_try, dx, s, zero)
