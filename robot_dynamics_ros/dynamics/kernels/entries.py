"""The compiled entry points: the only kernels called from Python, one per public call.

Each checks its arguments (sizes, finiteness, and that each vector is an array object it reads
right: native.py; the Python layer then says which argument was wrong, _checks.py), calls one
algorithm, which is inlined into it (jit.inline), and checks that its results are finite: finite
arguments can still overflow (q̇ ~ 1e155 squares to inf in the Coriolis terms, and inf - inf is NaN;
a step too long for the integrator diverges), and a NaN must not be returned as an answer. That
raises a ValueError saying which quantity overflowed and from which arguments (OVERFLOW_*); a loop
over the n or n² results costs nanoseconds. Explicit signatures: anything but C-contiguous float64
arrays is refused with a TypeError instead of compiling a new specialisation. Results are written
into arrays the caller allocates: returning a fresh array from compiled code costs more (boxing) than
a 7-joint RNEA. `d` is a Data buffer, both the packed model (`mb`) and the workspace (`w`), see
layout.py. Vectors of joint values have one entry per coordinate (nq, n_coordinates; layout.py says
how mimic joints map them to bodies); forward dynamics of a model with mimic joints goes through M_r
(integrators.fd_mimic) instead of the ABA.
"""
import contextlib
import sys

import numpy as np
from numba import types
from numba.core import event

from .aba import aba as articulated_body
from .all_terms import STATUS_OK, all_terms as all_terms_of_state
from .coriolis import (
    coriolis_matrix as christoffel_coriolis_matrix,
    mass_matrix_derivatives as coriolis_mass_matrix_derivatives,
)
from .crba import crba as composite_rigid_body
from .derivatives import (
    forward_dynamics_derivatives as fd_derivatives_of_state,
    inverse_dynamics_derivatives as derivatives_of_state,
)
from .integrators import (  # noqa: F401  (codes the entries take)
    FD_NOT_POSITIVE_DEFINITE,
    METHOD_EULER,
    METHOD_RK4,
    METHOD_SEMI_IMPLICIT,
    fd_mimic,
    step as integration_step,
)
from .jacobians import jacobian as frame_jacobian, jacobian_derivative as frame_jacobian_derivative
from .jit import entry as compiled_entry, inline
from .kinematics import (  # noqa: F401  (codes the entries take)
    REF_BODY,
    REF_SPACE,
    REF_WORLD_ALIGNED,
    body_poses_in_base,
    frame_pose as pose_of_frame,
    urdf_body_poses,
)
from .layout import (
    all_finite,
    check_state,
    check_vector,
    has_mimic,
    n_bodies,
    n_coordinates,
    non_negative,
)
from .linalg import cholesky_in_place, cholesky_solve_in_place, task_space_inertia_from_cholesky
from .linearize import (  # noqa: F401  (codes the entries return)
    STATUS_NOT_POSITIVE_DEFINITE as LINEARIZE_NOT_POSITIVE_DEFINITE,
    STATUS_OVERFLOW as LINEARIZE_OVERFLOW,
    linearize_step,
)
from .momentum import momentum_balance as momentum_balance_of_state, observer_reset, observer_step
from .regressor import body_regressor, joint_torque_regressor as regressor_of_state
from .rnea import rnea as recursive_newton_euler
from .spatial import is_rigid_transform, log_transform as matrix_log
from .task_space_control import relative_pose, task_space_control as task_space_law

ENTRY_NAMES = []     # every entry point, in the order declared


def _entry(signature, allocates=False):
    """Declare a compiled entry point with an explicit signature, compiled (or loaded from numba's
    cache) on its first call, or by compile_entries(), rather than at import, so a process pays only
    for the kernels it uses. The first call rebinds the module attribute to the compiled dispatcher:
    later `entries.name` lookups reach it directly; a reference taken before (`f = entries.name`)
    keeps reaching the same dispatcher. `allocates`: the entry point creates arrays (needs numba's
    NRT)."""
    def declare(fn):
        compiled = None

        def compile_now():
            nonlocal compiled
            if compiled is None:
                with _compile_notice(fn.__name__):
                    compiled = compiled_entry(signature, allocates)(fn)
                globals()[fn.__name__] = compiled
            return compiled

        def first_call(*args):
            return (compiled if compiled is not None else compile_now())(*args)
        first_call.__name__, first_call.__doc__, first_call.py_func = fn.__name__, fn.__doc__, fn
        first_call.compile = compile_now
        ENTRY_NAMES.append(fn.__name__)
        return first_call
    return declare


NOTICE = {"shown": False, "quiet": False}    # precompile sets quiet: it reports its own progress


@contextlib.contextmanager
def _compile_notice(name):
    """Around loading an entry point: if numba has to compile it instead (no machine code for it in
    the cache: the first use after an install without the set-up's precompile), say so once per
    process before the compile starts (numba's compile event), with how to compile everything ahead;
    never a silent pause of seconds."""
    if NOTICE["shown"] or NOTICE["quiet"]:
        yield
        return

    class Notice(event.Listener):
        def on_start(self, ev):
            if not NOTICE["shown"]:
                NOTICE["shown"] = True
                print(f"robot_dynamics_ros: compiling the dynamics kernels (first {name}): they are not in "
                      "numba's cache yet, the first use after installing; this takes seconds per kernel, "
                      "once. `python -m robot_dynamics_ros.cli.precompile` compiles all of them ahead "
                      "(about 20 s on 2 cores).", file=sys.stderr, flush=True)

        def on_end(self, ev):
            pass

    listener = Notice()
    event.register("numba:compile", listener)
    try:
        yield
    finally:
        event.unregister("numba:compile", listener)


def compile_entries(names=None):
    """Compile, or load from numba's on-disk cache, the entry points `names` (default: all), so
    that no call compiles later. Returns the names."""
    names = ENTRY_NAMES if names is None else names
    for name in names:
        entry = globals()[name]
        if hasattr(entry, "compile"):
            entry.compile()
    return list(names)


_D = types.float64[:, ::1]                                # a Data buffer: packed model | workspace
_V = types.float64[::1]                                   # a result vector
_M = types.float64[:, ::1]                                # a result matrix or a trajectory (N, n)
_VI = types.Array(types.float64, 1, "C", readonly=True)   # an input vector (writeable ones convert)
_MI = types.Array(types.float64, 2, "C", readonly=True)   # an input trajectory or matrix
_I = types.int64
_F = types.float64
_T = types.float64[:, :, ::1]                             # a stack of matrices (N, r, c)

NOT_POSITIVE_DEFINITE = "M(q) is not positive definite (numerically) at this q"
SINGULAR_TASK_SPACE = ("J M^-1 J^T is singular for this q and frame (a singular arm, or fewer than six "
                       "joints move the frame): pass damping > 0")
# Messages of the output checks: the quantity that overflowed and the arguments it came from.


def _overflowed(quantity, arguments):
    """ "<quantity> overflowed: not finite for these finite <arguments> (...)" """
    these = "this finite" if "," not in arguments else "these finite"
    return f"{quantity} overflowed: not finite for {these} {arguments} (values too large for float64)"


def _diverged(what, arguments):
    return (f"{what} diverged: the state after {'the step' if what == 'integration' else 'a step'} is not "
            f"finite for these finite {arguments} (dt too large for the integrator, or velocities, "
            "torques, f_tip or friction too large)")


OVERFLOW_TAU = _overflowed("inverse dynamics tau", "q, qd, qdd")
OVERFLOW_TAU_TIP = _overflowed("inverse dynamics tau", "q, qd, qdd, f_tip")
OVERFLOW_G = _overflowed("g(q)", "q")
OVERFLOW_C = _overflowed("c(q, qd)", "q, qd")
OVERFLOW_B = _overflowed("c(q, qd) + g(q)", "q, qd")
OVERFLOW_M = _overflowed("M(q)", "q")
OVERFLOW_P = _overflowed("momentum M(q) qd", "q, qd")
OVERFLOW_BETA = _overflowed("momentum M(q) qd or C(q, qd)^T qd - g(q)", "q, qd")
OVERFLOW_OBSERVER = _overflowed("external torque estimate", "q, qd, tau, dt")
OVERFLOW_QDD = _overflowed("forward dynamics qdd", "q, qd, tau")
OVERFLOW_QDD_TIP = _overflowed("forward dynamics qdd", "q, qd, tau, f_tip")
OVERFLOW_CM = _overflowed("C(q, qd)", "q, qd")
OVERFLOW_DM = _overflowed("dM/dq", "q")
OVERFLOW_POSE = _overflowed("frame pose T_0f", "q")
OVERFLOW_J = _overflowed("J(q)", "q")
OVERFLOW_DJ = _overflowed("dJ/dt", "q, qd")
OVERFLOW_LAMBDA = _overflowed("task-space inertia Lambda", "q")
OVERFLOW_TERMS = _overflowed("M, c, g, J, Lambda or eta", "q, qd")
OVERFLOW_POSE_ERROR = _overflowed("pose error X_e", "q, T_des")
OVERFLOW_REGRESSOR = _overflowed("joint-torque regressor Y", "q, qd, qdd")
OVERFLOW_DERIVATIVES = _overflowed("dtau/dq or dtau/dqd", "q, qd, qdd, f_tip")
OVERFLOW_FD_DERIVATIVES = _overflowed("dqdd/dq, dqdd/dqd or M^-1", "q, qd, tau, f_tip")
OVERFLOW_LOG = _overflowed("the matrix logarithm log(T)", "T")
OVERFLOW_TASK_CONTROL = _overflowed("task-space control torque", "q, qd, T_des, V_des, Vdot_des, kp, kd, "
                                    "nullspace_q, nullspace_kp, nullspace_kd and damping")
OVERFLOW_STEP = _diverged("integration", "q, qd, tau, dt, f_tip, friction")
OVERFLOW_SIMULATION = _diverged("simulation", "q0, qd0, tau, dt, f_tip, friction")


# ---- inverse dynamics (rnea.py) ---------------------------------------------------------------------
@_entry(types.none(_D, _VI, _VI, _VI, _V))
def rnea(d, q, qd, qdd, tau):
    """τ = M q̈ + c + g."""
    n = check_state(d, q, qd)
    check_vector(d, qdd, n)
    recursive_newton_euler(d, d, q, qd, qdd, True, True, True, -1, q, tau)
    if not all_finite(tau):
        raise ValueError(OVERFLOW_TAU)


@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _V))
def rnea_tip(d, q, qd, qdd, frame, f_tip, tau):
    """τ = M q̈ + c + g + J^T F_tip with F_tip at `frame`."""
    n = check_state(d, q, qd)
    check_vector(d, qdd, n)
    check_vector(d, f_tip, 6)
    recursive_newton_euler(d, d, q, qd, qdd, True, True, True, frame, f_tip, tau)
    if not all_finite(tau):
        raise ValueError(OVERFLOW_TAU_TIP)


@_entry(types.none(_D, _VI, _V))
def gravity(d, q, tau):
    """g(q): RNEA with q̇ = q̈ = 0."""
    check_vector(d, q, n_coordinates(d))
    recursive_newton_euler(d, d, q, q, q, False, False, True, -1, q, tau)
    if not all_finite(tau):
        raise ValueError(OVERFLOW_G)


@_entry(types.none(_D, _VI, _VI, _V))
def coriolis(d, q, qd, tau):
    """c(q, q̇): RNEA with q̈ = 0 and no gravity."""
    check_state(d, q, qd)
    recursive_newton_euler(d, d, q, qd, qd, True, False, False, -1, q, tau)
    if not all_finite(tau):
        raise ValueError(OVERFLOW_C)


@_entry(types.none(_D, _VI, _VI, _V))
def bias(d, q, qd, tau):
    """c(q, q̇) + g(q): RNEA with q̈ = 0."""
    check_state(d, q, qd)
    recursive_newton_euler(d, d, q, qd, qd, True, False, True, -1, q, tau)
    if not all_finite(tau):
        raise ValueError(OVERFLOW_B)


@_entry(types.none(_D, _MI, _MI, _MI, _I, _MI, _M))
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


@_entry(types.none(_D, _MI, types.float64[:, :, ::1]))
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


# ---- forward dynamics (aba.py; crba.py + rnea.py + linalg.py) --------------------------------------------
@_entry(types.none(_D, _VI, _VI, _VI, _V))
def aba(d, q, qd, tau, qdd):
    """q̈ = FD(q, q̇, τ)."""
    n = check_state(d, q, qd)
    check_vector(d, tau, n)
    if has_mimic(d):
        if fd_mimic(d, d, q, qd, tau, -1, q, qdd) == FD_NOT_POSITIVE_DEFINITE:
            raise ValueError(NOT_POSITIVE_DEFINITE)     # (FD_OVERFLOW: qdd not finite, checked below)
    else:
        articulated_body(d, d, q, qd, tau, -1, q, qdd)
    if not all_finite(qdd):
        raise ValueError(OVERFLOW_QDD)


@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _V))
def aba_tip(d, q, qd, tau, frame, f_tip, qdd):
    """q̈ = FD(q, q̇, τ) with F_tip at `frame`."""
    n = check_state(d, q, qd)
    check_vector(d, tau, n)
    check_vector(d, f_tip, 6)
    if has_mimic(d):
        if fd_mimic(d, d, q, qd, tau, frame, f_tip, qdd) == FD_NOT_POSITIVE_DEFINITE:
            raise ValueError(NOT_POSITIVE_DEFINITE)
    else:
        articulated_body(d, d, q, qd, tau, frame, f_tip, qdd)
    if not all_finite(qdd):
        raise ValueError(OVERFLOW_QDD_TIP)


@_entry(types.none(_D, _MI, _MI, _MI, _M))
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


# ---- kinematics, Jacobians (kinematics.py, jacobians.py) -------------------------------------------------
@_entry(types.none(_D, _VI, _I, _M))
def frame_pose(d, q, frame, T):
    """T_{0f} (4 x 4)."""
    check_vector(d, q, n_coordinates(d))
    body_poses_in_base(d, d, q)
    pose_of_frame(d, d, frame, T)
    if not all_finite(T):
        raise ValueError(OVERFLOW_POSE)


@_entry(types.float64[:, :, ::1](_D, _VI), allocates=True)
def body_poses(d, q):
    """The pose in {0} of every body's URDF frame, (n bodies, 4, 4)."""
    n = n_bodies(d)
    check_vector(d, q, n_coordinates(d))
    T = np.empty((n, 4, 4))
    urdf_body_poses(d, d, q, T)
    if not all_finite(T):
        raise ValueError(OVERFLOW_POSE)
    return T


@_entry(types.none(_D, _VI, _I, _I, _M), allocates=True)
def jacobian(d, q, frame, reference, J):
    """J (6 x n) of a frame in a reference (kinematics.REF_*)."""
    check_vector(d, q, n_coordinates(d))
    frame_jacobian(d, d, q, frame, reference, np.empty((4, 4)), J)
    if not all_finite(J):
        raise ValueError(OVERFLOW_J)


@_entry(types.none(_D, _VI, _VI, _I, _I, _M), allocates=True)
def jacobian_derivative(d, q, qd, frame, reference, dJ):
    """dJ/dt (6 x n) of a frame in a reference."""
    check_state(d, q, qd)
    frame_jacobian_derivative(d, d, q, qd, frame, reference, np.empty((4, 4)), dJ)
    if not all_finite(dJ):
        raise ValueError(OVERFLOW_DJ)


# ---- task space (linalg.py, all_terms.py) --------------------------------------------------------------
@_entry(types.none(_D, _VI, _I, _I, _F, _M), allocates=True)
def task_space_inertia(d, q, frame, reference, damping, Lam):
    """Λ = (J M^-1 J^T + damping 1)^-1 (eq. 9.98 when J is square and invertible)."""
    n = n_coordinates(d)
    check_vector(d, q, n)
    L = np.empty((n, n))
    composite_rigid_body(d, d, q, L)
    J = np.empty((6, n))
    frame_jacobian(d, d, q, frame, reference, np.empty((4, 4)), J, poses_known=True)
    if not (all_finite(L) and all_finite(J)):      # before the factorisations: NaN is no pivot
        raise ValueError(OVERFLOW_LAMBDA)
    if not cholesky_in_place(L, n):
        raise ValueError(NOT_POSITIVE_DEFINITE)
    if not task_space_inertia_from_cholesky(L, n, J, damping, np.empty((n, 6)), np.empty((6, 6)), np.empty(6),
                                            Lam):
        raise ValueError(SINGULAR_TASK_SPACE)
    if not all_finite(Lam):
        raise ValueError(OVERFLOW_LAMBDA)


@_entry(_I(_D, _VI, _VI, _I, _I, _F, _M, _V, _V, _M, _M, _V, _M, _M))
def all_terms(d, q, qd, frame, reference, damping, M, c, g, J, Lam, eta, T, scratch):
    """M, c, g and (frame >= 0) J, Λ, η, T_{0f} of one state; returns all_terms.STATUS_*."""
    check_state(d, q, qd)
    status = all_terms_of_state(d, d, q, qd, frame, reference, damping, M, c, g, J, Lam, eta, T, scratch)
    # NaN fails the factorisations too: an overflow is reported as one, whatever the status says.
    if not (all_finite(M) and all_finite(c) and all_finite(g)):
        raise ValueError(OVERFLOW_TERMS)
    if frame >= 0 and not (all_finite(J) and all_finite(T)
                           and (status != STATUS_OK or (all_finite(Lam) and all_finite(eta)))):
        raise ValueError(OVERFLOW_TERMS)
    return status


# ---- task-space control (task_space_control.py) ------------------------------------------------------
@_entry(_I(_D, _VI, _VI, _I, _F, _MI, _VI, _VI, _MI, _MI, types.boolean, _VI, _VI, _VI, _V, _M, _V, _V, _M,
           _M, _V, _M, _M, _M))
def task_space_control(d, q, qd, frame, damping, T_des, V_des, Vdot_des, Kp, Kd, posture, q0, kp0, kd0,
                       tau, M, c, g, J, Lam, eta, T, scratch, work):
    """τ of the task-space law; returns all_terms.STATUS_* (tau unset unless STATUS_OK)."""
    n = check_state(d, q, qd)
    check_vector(d, V_des, 6)
    check_vector(d, Vdot_des, 6)
    if posture:
        check_vector(d, q0, n)
        check_vector(d, kp0, n)
        check_vector(d, kd0, n)
    if not (T_des.shape == (4, 4) and Kp.shape == (6, 6) and Kd.shape == (6, 6) and all_finite(T_des)
            and all_finite(Kp) and all_finite(Kd) and is_rigid_transform(T_des) and non_negative(kp0)
            and non_negative(kd0)):
        raise ValueError("invalid task-space target or gains")
    status = task_space_law(d, d, q, qd, frame, damping, T_des, V_des, Vdot_des, Kp, Kd, posture, q0, kp0,
                            kd0, tau, M, c, g, J, Lam, eta, T, scratch, work)
    if status == STATUS_OK and not all_finite(tau):
        raise ValueError(OVERFLOW_TASK_CONTROL)
    return status


@_entry(types.none(_D, _VI, _I, _MI, _V, _M))
def pose_error(d, q, frame, T_des, X, T):
    """X (6) = log(T_0f(q)^-1 T_des), the frame's pose error in its body coordinates; T: its pose."""
    check_vector(d, q, n_coordinates(d))
    if not (T_des.shape == (4, 4) and all_finite(T_des) and is_rigid_transform(T_des)):
        raise ValueError("invalid task-space target")
    body_poses_in_base(d, d, q)
    pose_of_frame(d, d, frame, T)
    if not all_finite(T):
        raise ValueError(OVERFLOW_POSE)
    R_bd, p_bd = relative_pose(T, T_des)
    X_e = matrix_log(R_bd, p_bd)
    for i in range(6):
        X[i] = X_e[i]
    if not all_finite(X):
        raise ValueError(OVERFLOW_POSE_ERROR)


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


@_entry(types.UniTuple(types.int64, 3)(_D, _MI, _MI, _MI, _F, _I, _T, _T, _M, _M, _M, _M, _M, _M, _M, _M, _M))
def linearize_trajectory(d, Q, QD, TAU, dt, method, A, B, vectors, Minv, X, dtau_dx_T, D, D_next, E, E_next,
                         B_T):
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


@_entry(types.none(_D, _MI, _MI, _MI, types.float64[:, :, ::1], _V))
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


@_entry(types.none(_D, _MI, _MI, _MI, _I, types.float64[:, :, ::1], _M))
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


# ---- the matrix logarithm of a rigid transform (spatial.py) ------------------------------------------
@_entry(types.none(_MI, _V))
def log_transform(T, X):
    """X (6) = S θ with e^{[S] θ} = T (4 x 4 rigid transform); ValueError when T is not one."""
    if not (T.shape == (4, 4) and X.shape[0] == 6 and all_finite(T) and is_rigid_transform(T)):
        raise ValueError("invalid rigid transform")
    R = (T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2])
    S = matrix_log(R, (T[0, 3], T[1, 3], T[2, 3]))
    for i in range(6):
        X[i] = S[i]
    if not all_finite(X):
        raise ValueError(OVERFLOW_LOG)


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
