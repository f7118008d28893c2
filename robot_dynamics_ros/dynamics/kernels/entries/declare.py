"""Declaring the compiled entry points (jit.entry, compiled for an explicit signature on first use), their
argument types and the messages of their checks; the package docstring says what an entry point does."""
import contextlib
import sys
import threading

from numba.core import event

from ..jit import compile_on_first_call, entry as compiled_entry

ENTRY_NAMES = []     # every entry point, in the order declared
_SIGNATURES = {}     # name -> (its dispatcher, its declared signature), for compile_entries()


def _entry(signature, allocates=False, nogil=False):
    """Declare a compiled entry point with an explicit signature, compiled (or loaded from numba's
    cache) on its first call, or by compile_entries(), rather than at import, so a process pays only
    for the kernels it uses. The name is bound once, at import, to numba's dispatcher, the object
    every call reaches: made without a signature (nothing compiled yet), its first call compiling the
    declared signature alone and turning compiling off (jit.compile_on_first_call), so that any other
    argument types raise numba's TypeError ("No matching definition") instead of compiling another
    specialisation.
    `allocates`: the entry point creates arrays (needs numba's NRT); `nogil`: it releases the GIL while
    it runs (for work in a thread beside the control loop; its callers give it arrays and a Data no
    other thread uses). Under NUMBA_DISABLE_JIT=1 the name is the Python function itself."""
    def declare(fn):
        dispatcher = compiled_entry(None, allocates, nogil)(fn)
        ENTRY_NAMES.append(fn.__name__)
        if dispatcher is fn:            # NUMBA_DISABLE_JIT=1
            return fn

        compile_on_first_call(dispatcher, lambda: _compile_declared(dispatcher, signature))
        _SIGNATURES[fn.__name__] = dispatcher, signature
        return dispatcher
    return declare


_COMPILING = threading.Lock()      # two threads' first calls: one compiles, the other waits for it


def _compile_declared(dispatcher, signature):
    """Compile (or load from the cache) `dispatcher` for `signature` unless it has been, and refuse
    any other signature from then on; the dispatcher."""
    with _COMPILING:
        if not dispatcher.signatures:
            with _compile_notice(dispatcher.py_func.__name__):
                dispatcher.compile(signature)
            dispatcher.disable_compile()
    return dispatcher


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
                      "(seconds to a minute, once).", file=sys.stderr, flush=True)

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
        if name in _SIGNATURES:         # (not under NUMBA_DISABLE_JIT=1: nothing to compile)
            _compile_declared(*_SIGNATURES[name])
    return list(names)


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


