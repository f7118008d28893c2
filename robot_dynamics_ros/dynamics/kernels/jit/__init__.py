"""How the kernels are compiled: the one place that reaches into numba beyond its public API.

Every kernel function is declared with one of three decorators from here:

    inline       a helper that LLVM inlines into each kernel that calls it (the recursions and their
                 building blocks)
    subroutine   a helper its callers call (the four ABA passes of an RK4 step)
    entry        a compiled entry point with an explicit signature (entries/: what Python calls),
                 compiled on its first call (compile_on_first_call)

They compile in one of two ways, chosen once per process when this package is imported:

  linked   (numba WRITTEN_FOR, the default): helpers compile once each, to LLVM IR that their
           callers link in and optimise (linking.py, dispatch.py); no reference-counting runtime
           (numba's NRT) in kernels that allocate nothing; numba's on-disk cache keyed on the source
           of the whole kernel package (cache.py). This uses numba internals: code-library methods,
           compiler passes, the dispatcher's call template, the cache's locator list and the private
           njit options ``_nrt``, ``no_cpython_wrapper``, ``no_cfunc_wrapper``, ``pipeline_class``.
           In both modes the entry points use one more: the dispatcher's ``_compile_for_args`` hook
           (compile_on_first_call).
  plain    ``@njit(cache=True)`` with public options only, numba's own cache. The same results; the
           cold compile takes several times as long (each helper is compiled per constant it is
           called with, and again inside every caller), and numba's cache is keyed on each
           function's own file (an edit of a helper in another module is not seen: clear
           ``__pycache__`` after editing the kernels in this mode).

Plain is used when the environment variable ROBOT_DYNAMICS_ROS_PLAIN_JIT is 1, and when the installed
numba is not one the linked mode was written for or its internals fail to load (then a
RuntimeWarning says so, once): a numba release that renames an internal slows the first compile
instead of breaking ``import robot_dynamics_ros.dynamics``. The internals' modules are imported only
on the linked path, inside ``_linked()``.
"""
import os
import warnings

import numba
from numba import njit

#: numba versions (major, minor) whose internals the linked mode was written and tested against
#: (requirements/runtime.txt pins one of them).
WRITTEN_FOR = ((0, 68),)
#: Set to 1 to compile the plain way whatever numba is installed.
PLAIN_VARIABLE = "ROBOT_DYNAMICS_ROS_PLAIN_JIT"

# Compiler options of every kernel (public njit options): cached on disk; no ZeroDivisionError checks
# (ABA divides by D_i > 0); floating-point contraction and reassociation (FMA, vectorised sums), but
# not the no-NaN / no-inf assumptions, so the finiteness checks of the inputs stay. No `nogil` (but for
# the entries declared with it): a kernel holds the GIL for its whole call, so calls that share a Data
# (the model's default one) from several Python threads run one after the other.
OPTIONS = dict(cache=True, error_model="numpy", fastmath={"contract", "reassoc", "nsz", "arcp"})


def _numba_version():
    try:
        return tuple(int(part) for part in numba.__version__.split(".")[:2])
    except ValueError:          # a development version string
        return None


def _linked():
    """(options of the helpers, call-resolution hook of the helpers, None) in linked mode, or
    (None, None, why not)."""
    if os.environ.get(PLAIN_VARIABLE, "") == "1":
        return None, None, f"{PLAIN_VARIABLE}=1"
    if _numba_version() not in WRITTEN_FOR:
        return None, None, (f"numba {numba.__version__} is not a version its compile set-up was written for "
                            f"({', '.join('%d.%d' % v for v in WRITTEN_FOR)})")
    try:
        from . import cache, dispatch, linking
        cache.install()
    except (ImportError, AttributeError, TypeError) as error:
        return None, None, (f"numba {numba.__version__}'s internals did not load "
                            f"({type(error).__name__}: {error})")
    # Helpers are called from kernels only: no wrapper that would let Python call them (boxing a tuple
    # of 36 floats is more machine code than the function itself), compiled to IR that their callers
    # link in and optimise, not to machine code of their own (linking.py); no NRT (the kernels write
    # into arrays they are given, so neither their array arguments, a MemInfo malloc, incref and free
    # each, nor their views need counting: the caller owns every array for the whole call).
    helper_options = dict(_nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True,
                          pipeline_class=linking.PIPELINE)
    return helper_options, dispatch.compiled_once, None


_HELPER_OPTIONS, _compiled_once, PLAIN_REASON = _linked()
#: "linked" or "plain" (module docstring).
MODE = "plain" if _HELPER_OPTIONS is None else "linked"
if MODE == "plain" and os.environ.get(PLAIN_VARIABLE, "") != "1":
    warnings.warn(f"robot_dynamics_ros: {PLAIN_REASON}; the kernels compile the plain way "
                  "(@njit(cache=True)): the same results, a slower first compile", RuntimeWarning,
                  stacklevel=2)


def inline(fn):
    """Compile `fn` to be inlined into every kernel that calls it: the recursions and their helpers.
    Linked mode: compiled once, to IR of its own (linking.py), and LLVM inlines it into each caller
    (`forceinline`: LLVM's alwaysinline), where a caller's constant flags (use_qd=False in gravity)
    fold away the branches they switch off, and a batch loop makes no call per state. Inlining at
    LLVM's level rather than numba's (`inline="always"`, which copies and re-types the callee's IR
    at every call site, helpers within helpers) keeps the cold compile of every kernel an order of
    magnitude shorter at the same speed (doc/performance.md, "Start-up")."""
    if _HELPER_OPTIONS is None:
        return njit(**OPTIONS)(fn)
    return _compiled_once(njit(**OPTIONS, forceinline=True, **_HELPER_OPTIONS)(fn))


def subroutine(fn):
    """Compile `fn` as a function that its callers call (not inlined): used where one caller would
    otherwise inline the same algorithm several times (the four ABA passes of an RK4 step)."""
    if _HELPER_OPTIONS is None:
        return njit(**OPTIONS)(fn)
    return _compiled_once(njit(**OPTIONS, **_HELPER_OPTIONS)(fn))


def entry(signature, allocates=False, nogil=False):
    """The decorator compiling an entry point (called from Python) with its explicit `signature`;
    `allocates`: it creates arrays (linked mode turns numba's NRT on for those only); `nogil`: it
    releases the GIL for its call (its callers give it a workspace no other thread uses)."""
    options = dict(OPTIONS, nogil=True) if nogil else OPTIONS
    if _HELPER_OPTIONS is None:
        return njit(signature, **options)
    return njit(signature, **options, _nrt=allocates)


def compile_on_first_call(dispatcher, compile_declared):
    """Make `dispatcher` (an entry point's, made without a signature) compile on its first call:
    numba calls the dispatcher's private hook ``_compile_for_args`` for a call that no compiled
    signature matches; it is set to ``compile_declared()``, which compiles the declared signature,
    turns compiling off and returns the dispatcher, which numba then calls with the same arguments
    (they match the signature, or numba raises its TypeError "No matching definition"). The one
    numba internal the entry points use (entries/declare.py); `dispatcher`."""
    def compile_for_call(*args, **kws):
        return compile_declared()
    dispatcher._compile_for_args = compile_for_call
    return dispatcher
