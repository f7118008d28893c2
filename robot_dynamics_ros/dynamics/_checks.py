"""Argument checking off the hot path: the compiled kernels reject anything that is not a finite
float64 vector of the right length; only then do these helpers find out what was wrong and say so.

Every public function that calls a kernel has the same shape, so that a call with right arguments
costs one kernel call and nothing else (no extra Python call, no conversion):

    out = np.empty(...)
    try:
        _k.kernel(model._data.buffer if data is None else _checks.buffer(model, data), q, ..., out)
    except _checks.KERNEL_ERRORS as error:
        return _checks.retry(error, function, model, (q, "q"), ..., frame=frame, data=data)
    return out

retry() converts each argument (or raises a ValueError naming it) and calls the function again.
The inline `model._data.buffer if data is None else` is buffer()'s None case spelled out: a call
to buffer() on that path costs about 45 ns (a UR5 mass matrix takes about 600 ns).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

#: What a kernel call raises for arguments it cannot take: TypeError (numba found no matching
#: signature), ValueError (the kernel's size/finiteness check), AttributeError (the same code run
#: as plain Python under NUMBA_DISABLE_JIT=1, e.g. a list has no .shape).
KERNEL_ERRORS = (TypeError, ValueError, AttributeError)


def vector(model, x, name, n=None):
    """x as a contiguous finite float64 vector of length n (default model.nq), or ValueError naming it.
    An argument that already is one is returned as is."""
    n = model.nq if n is None else n
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric vector of length {n}, got {type(x).__name__}") from None
    if a.shape != (n,):
        order = f" (joints in model.joint_names order: {list(model.joint_names)})" if n == model.nq else ""
        raise ValueError(f"{name} must have shape ({n},), got shape {a.shape}{order}")
    if not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a))
        where = ", ".join(f"{name}[{i}]" + (f" ({model.joint_names[i]})" if n == model.nq else "")
                          for i in bad[:4])
        raise ValueError(f"{name} must be finite: NaN or inf at {where}")
    return _writeable_contiguous(a)


def array(model, x, name, shape):
    """x as a contiguous finite float64 array of `shape` (None = any length), or ValueError naming it."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape {shape}, got {type(x).__name__}") from None
    if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
        expected = tuple("N" if s is None else s for s in shape)
        raise ValueError(f"{name} must have shape {expected}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite (contains NaN or inf)")
    return _writeable_contiguous(a)


def _writeable_contiguous(a):
    """A C-contiguous float64 array the caller may keep (a copy when `a` was read-only)."""
    flags = a.flags
    return a if flags.c_contiguous and flags.writeable else np.array(a, order="C")


def retry_args(model, error, *specs, optional=("f_tip",)):
    """The arguments of a failed kernel call, each spec (value, name[, length]) passed through
    vector(), so that a bad argument raises a ValueError naming it (None stays None for the
    `optional` names). When no argument had to change, the failure was not the input's: `error`
    (the kernel's exception) is raised again."""
    values = tuple(None if spec[0] is None and spec[1] in optional else vector(model, *spec)
                   for spec in specs)
    if all(v is spec[0] for v, spec in zip(values, specs)):
        raise error
    return values


def retry(error: BaseException, function: Callable[..., Any], model, *specs, **keywords) -> Any:
    """The error path of a public function whose kernel call raised `error` (one of KERNEL_ERRORS):
    function(model, *checked, **keywords), the spec arguments (value, name[, length]) converted to
    contiguous finite float64 vectors, in the order of the function's positional parameters after
    the model. An argument that cannot be converted raises a ValueError naming it; when every
    argument already was right, `error` is raised again (it was not the input's: an unknown frame,
    a Data of another model, a singular matrix). The second call takes the fast path."""
    return function(model, *retry_args(model, error, *specs), **keywords)


def buffer(model, data):
    """The kernels' buffer (packed model and workspace) of `data`, which must be a Data(model);
    None: the model's own default Data.

    Thread safety of the default Data: every kernel is compiled without nogil, so it holds the GIL
    for the whole call, and it uses the workspace only inside that one call (results go to arrays
    the caller allocated; nothing is read back from the workspace afterwards). Calls from several
    Python threads that share the model's default Data are therefore serialised and each returns
    what it would alone (test/dynamics/test_threads.py); a kernel compiled with nogil=True, or a
    result read from the workspace after its kernel returned, would need one Data per thread. So
    does NUMBA_DISABLE_JIT=1: the kernels then run as Python, and threads switch inside them.
    """
    if data is None:
        return model._data.buffer
    if getattr(data, "model", None) is not model:
        raise ValueError(f"data must be a Data made for this model (Data(model)), got {data!r}")
    return data.buffer


def choice(options, value, name):
    """options[value] for a named option, or ValueError listing the options."""
    try:
        return options[value]
    except (KeyError, TypeError):
        raise ValueError(f"{name} must be one of {list(options)}, got {value!r}") from None


def scalar(x, name, minimum=None):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {x!r}") from None
    if not np.isfinite(v) or (minimum is not None and v < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise ValueError(f"{name} must be a finite number{bound}, got {x!r}")
    return v
