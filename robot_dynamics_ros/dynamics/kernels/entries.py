"""The compiled entry points: the only kernels called from Python, one per public call.

Each checks its arguments (sizes and finiteness; the Python layer then says which argument was
wrong, _checks.py) and calls one algorithm, which is inlined into it (layout.inline). Explicit
signatures: anything but C-contiguous float64 arrays is refused with a TypeError instead of
compiling a new specialisation. Results are written into arrays the caller allocates: returning a
fresh array from compiled code costs more (boxing) than a 7-joint RNEA. `d` is a Data buffer, both
the packed model (`mb`) and the workspace (`w`), see layout.py.
"""
import numpy as np
from numba import njit, types

from .aba import aba as articulated_body
from .all_terms import all_terms as all_terms_of_state
from .coriolis import (
    coriolis_matrix as christoffel_coriolis_matrix,
    mass_matrix_derivatives as coriolis_mass_matrix_derivatives,
)
from .crba import crba as composite_rigid_body
from .integrators import METHOD_EULER, METHOD_RK4, METHOD_SEMI_IMPLICIT, step as integration_step  # noqa: F401  (codes the entries take)
from .jacobians import jacobian as frame_jacobian, jacobian_derivative as frame_jacobian_derivative
from .kinematics import (  # noqa: F401  (codes the entries take)
    REF_BODY,
    REF_SPACE,
    REF_WORLD_ALIGNED,
    body_poses_in_base,
    frame_pose as pose_of_frame,
    urdf_body_poses,
)
from .layout import OPTIONS, all_finite, check_state, check_vector, n_bodies
from .linalg import cholesky_in_place, cholesky_solve_in_place, task_space_inertia_from_cholesky
from .rnea import rnea as recursive_newton_euler


def _entry(signature, allocates=False):
    """Declare a compiled entry point with an explicit signature, compiled (or loaded from numba's
    cache) on its first call rather than at import, so a process pays only for the kernels it uses.
    The first call rebinds the module attribute to the compiled dispatcher: later `entries.name`
    lookups reach it directly; a reference taken before (`f = entries.name`) keeps reaching the
    same dispatcher. `allocates`: the entry point creates arrays (needs numba's NRT)."""
    def declare(fn):
        compiled = None

        def first_call(*args):
            nonlocal compiled
            if compiled is None:
                compiled = njit(signature, **dict(OPTIONS, _nrt=allocates))(fn)
                globals()[fn.__name__] = compiled
            return compiled(*args)
        first_call.__name__, first_call.__doc__, first_call.py_func = fn.__name__, fn.__doc__, fn
        return first_call
    return declare


_D = types.float64[:, ::1]                                # a Data buffer: packed model | workspace
_V = types.float64[::1]                                   # a result vector
_M = types.float64[:, ::1]                                # a result matrix or a trajectory (N, n)
_VI = types.Array(types.float64, 1, "C", readonly=True)   # an input vector (writeable ones convert)
_MI = types.Array(types.float64, 2, "C", readonly=True)   # an input trajectory or matrix
_I = types.int64
_F = types.float64


# ---- inverse dynamics (rnea.py) ---------------------------------------------------------------------
@_entry(types.none(_D, _VI, _VI, _VI, _V))
def rnea(d, q, qd, qdd, tau):
    """τ = M q̈ + c + g."""
    n = check_state(d, q, qd)
    check_vector(qdd, n)
    recursive_newton_euler(d, d, q, qd, qdd, True, True, True, -1, q, tau)


@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _V))
def rnea_tip(d, q, qd, qdd, frame, f_tip, tau):
    """τ = M q̈ + c + g + J^T F_tip with F_tip at `frame`."""
    n = check_state(d, q, qd)
    check_vector(qdd, n)
    check_vector(f_tip, 6)
    recursive_newton_euler(d, d, q, qd, qdd, True, True, True, frame, f_tip, tau)


@_entry(types.none(_D, _VI, _V))
def gravity(d, q, tau):
    """g(q): RNEA with q̇ = q̈ = 0."""
    check_vector(q, n_bodies(d))
    recursive_newton_euler(d, d, q, q, q, False, False, True, -1, q, tau)


@_entry(types.none(_D, _VI, _VI, _V))
def coriolis(d, q, qd, tau):
    """c(q, q̇): RNEA with q̈ = 0 and no gravity."""
    check_state(d, q, qd)
    recursive_newton_euler(d, d, q, qd, qd, True, False, False, -1, q, tau)


@_entry(types.none(_D, _VI, _VI, _V))
def bias(d, q, qd, tau):
    """c(q, q̇) + g(q): RNEA with q̈ = 0."""
    check_state(d, q, qd)
    recursive_newton_euler(d, d, q, qd, qd, True, False, True, -1, q, tau)


@_entry(types.none(_D, _MI, _MI, _MI, _I, _MI, _M))
def rnea_batch(d, q, qd, qdd, frame, f_tip, tau):
    """RNEA over N states (rows) into tau (N, n); f_tip (N, 6) applied at `frame` when frame >= 0."""
    N, n = q.shape
    if n != n_bodies(d) or qd.shape != q.shape or qdd.shape != q.shape or tau.shape != q.shape:
        raise ValueError("invalid trajectory shape")
    if frame >= 0 and (f_tip.shape[0] != N or f_tip.shape[1] != 6 or not all_finite(f_tip)):
        raise ValueError("invalid tip wrench trajectory")
    if not (all_finite(q) and all_finite(qd) and all_finite(qdd)):
        raise ValueError("invalid trajectory values")
    for k in range(N):
        f_tip_k = f_tip[k if frame >= 0 else 0]
        recursive_newton_euler(d, d, q[k], qd[k], qdd[k], True, True, True, frame, f_tip_k,
                               tau[k])


# ---- mass matrix (crba.py) ---------------------------------------------------------------------------
@_entry(types.none(_D, _VI, _M))
def crba(d, q, M):
    """M(q)."""
    check_vector(q, n_bodies(d))
    composite_rigid_body(d, d, q, M)


@_entry(types.none(_D, _MI, types.float64[:, :, ::1]))
def crba_batch(d, q, M):
    """CRBA over N configurations (rows) into M (N, n, n)."""
    N, n = q.shape
    if n != n_bodies(d) or M.shape != (N, n, n):
        raise ValueError("invalid trajectory shape")
    if not all_finite(q):
        raise ValueError("invalid trajectory values")
    for k in range(N):
        composite_rigid_body(d, d, q[k], M[k])


# ---- forward dynamics (aba.py; crba.py + rnea.py + linalg.py) --------------------------------------------
@_entry(types.none(_D, _VI, _VI, _VI, _V))
def aba(d, q, qd, tau, qdd):
    """q̈ = FD(q, q̇, τ)."""
    n = check_state(d, q, qd)
    check_vector(tau, n)
    articulated_body(d, d, q, qd, tau, -1, q, qdd)


@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _V))
def aba_tip(d, q, qd, tau, frame, f_tip, qdd):
    """q̈ = FD(q, q̇, τ) with F_tip at `frame`."""
    n = check_state(d, q, qd)
    check_vector(tau, n)
    check_vector(f_tip, 6)
    articulated_body(d, d, q, qd, tau, frame, f_tip, qdd)


@_entry(types.none(_D, _MI, _MI, _MI, _M))
def aba_batch(d, q, qd, tau, qdd):
    """ABA over N states (rows) into qdd (N, n)."""
    N, n = q.shape
    if n != n_bodies(d) or qd.shape != q.shape or tau.shape != q.shape or qdd.shape != q.shape:
        raise ValueError("invalid trajectory shape")
    if not (all_finite(q) and all_finite(qd) and all_finite(tau)):
        raise ValueError("invalid trajectory values")
    for k in range(N):
        articulated_body(d, d, q[k], qd[k], tau[k], -1, q[k], qdd[k])


@_entry(_V(_D, _VI, _VI, _VI, _I, _VI), allocates=True)
def fd_via_mass_matrix(d, q, qd, tau, frame, f_tip):
    """q̈ = M^-1 (τ - b - J^T F_tip) with M = L L^T (the textbook's GetJointAccel, no explicit inverse)."""
    n = check_state(d, q, qd)
    check_vector(tau, n)
    check_vector(f_tip, 6)
    M = np.empty((n, n))
    composite_rigid_body(d, d, q, M)
    b = np.empty(n)
    recursive_newton_euler(d, d, q, qd, qd, True, False, True, frame, f_tip, b, poses_known=True)
    for i in range(n):
        b[i] = tau[i] - b[i]
    if not cholesky_in_place(M, n):
        raise ValueError("mass matrix is not positive definite")
    cholesky_solve_in_place(M, n, b)
    return b


# ---- Coriolis matrix and ∂M/∂q (coriolis.py) ---------------------------------------------------------------
@_entry(types.none(_D, _VI, _VI, _M))
def coriolis_matrix(d, q, qd, C):
    """C(q, q̇), Christoffel-consistent."""
    check_state(d, q, qd)
    christoffel_coriolis_matrix(d, d, q, qd, C)


@_entry(types.float64[:, :, ::1](_D, _VI), allocates=True)
def mass_matrix_derivatives(d, q):
    """∂M/∂q_k in [:, :, k], shape (n, n, n)."""
    n = n_bodies(d)
    check_vector(q, n)
    dM = np.empty((n, n, n))
    coriolis_mass_matrix_derivatives(d, d, q, np.empty(n), np.empty((n, n)), dM)
    return dM


# ---- kinematics, Jacobians (kinematics.py, jacobians.py) -------------------------------------------------
@_entry(types.none(_D, _VI, _I, _M))
def frame_pose(d, q, frame, T):
    """T_{0f} (4 x 4)."""
    check_vector(q, n_bodies(d))
    body_poses_in_base(d, d, q)
    pose_of_frame(d, d, frame, T)


@_entry(types.float64[:, :, ::1](_D, _VI), allocates=True)
def body_poses(d, q):
    """The pose in {0} of every body's URDF frame, (n, 4, 4)."""
    n = n_bodies(d)
    check_vector(q, n)
    T = np.empty((n, 4, 4))
    urdf_body_poses(d, d, q, T)
    return T


@_entry(types.none(_D, _VI, _I, _I, _M), allocates=True)
def jacobian(d, q, frame, reference, J):
    """J (6 x n) of a frame in a reference (kinematics.REF_*)."""
    check_vector(q, n_bodies(d))
    frame_jacobian(d, d, q, frame, reference, np.empty((4, 4)), J)


@_entry(types.none(_D, _VI, _VI, _I, _I, _M), allocates=True)
def jacobian_derivative(d, q, qd, frame, reference, dJ):
    """dJ/dt (6 x n) of a frame in a reference."""
    check_state(d, q, qd)
    frame_jacobian_derivative(d, d, q, qd, frame, reference, np.empty((4, 4)), dJ)


# ---- task space (linalg.py, all_terms.py) --------------------------------------------------------------
@_entry(types.none(_D, _VI, _I, _I, _F, _M), allocates=True)
def task_space_inertia(d, q, frame, reference, damping, Lam):
    """Λ = (J M^-1 J^T + damping 1)^-1 (eq. 9.98 when J is square and invertible)."""
    n = n_bodies(d)
    check_vector(q, n)
    L = np.empty((n, n))
    composite_rigid_body(d, d, q, L)
    J = np.empty((6, n))
    frame_jacobian(d, d, q, frame, reference, np.empty((4, 4)), J, poses_known=True)
    if not cholesky_in_place(L, n):
        raise ValueError("mass matrix is not positive definite")
    if not task_space_inertia_from_cholesky(L, n, J, damping, np.empty((n, 6)), np.empty((6, 6)), np.empty(6),
                                            Lam):
        raise ValueError("J M^-1 J^T is singular at this configuration (redundant or singular arm): "
                         "pass damping > 0")


@_entry(_I(_D, _VI, _VI, _I, _I, _F, _M, _V, _V, _M, _M, _V, _M, _M))
def all_terms(d, q, qd, frame, reference, damping, M, c, g, J, Lam, eta, T, scratch):
    """M, c, g and (frame >= 0) J, Λ, η, T_{0f} of one state; returns all_terms.STATUS_*."""
    check_state(d, q, qd)
    return all_terms_of_state(d, d, q, qd, frame, reference, damping, M, c, g, J, Lam, eta, T, scratch)


# ---- integration (integrators.py) --------------------------------------------------------------------
@_entry(types.none(_D, _VI, _VI, _VI, _F, _I, _I, _VI, _VI, _VI, _V, _V, _M))
def step(d, q, qd, tau, dt, method, frame, f_tip, viscous, coulomb, q_next, qd_next, s):
    """One integration step into (q_next, qd_next); s: scratch (8, n)."""
    n = check_state(d, q, qd)
    check_vector(tau, n)
    check_vector(f_tip, 6)
    integration_step(d, d, q, qd, tau, dt, method, frame, f_tip, viscous, coulomb, q_next, qd_next, s)


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
