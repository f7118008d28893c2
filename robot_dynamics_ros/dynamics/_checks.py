"""Argument checking off the hot path: the compiled kernels reject anything that is not a finite
float64 vector of the right length in the one array object they read right (exactly a numpy.ndarray,
C-contiguous, aligned, native byte order: kernels/native.py); only then do these helpers find out
what was wrong and say so, or convert what numpy converts without changing the values.

Every public function that calls a kernel is written as its fast path inside one try statement, and
its handler names the arguments to convert when the kernel refuses them:

    def coriolis_forces(model, q, qd, data=None):
        tau = empty(model.nq)
        try:
            _k.coriolis(_checks.buffer(model, data), q, qd, tau)
        except _checks.KERNEL_ERRORS as error:
            q, qd = _checks.retry_args(model, error, (q, "q"), (qd, "qd"))
            return coriolis_forces(model, q, qd, data)
        return tau

so that a call with right arguments costs the kernel call and nothing else (no wrapper frame, no
conversion: Python's exceptions cost nothing until raised). A refused call passes each named argument
through vector(), which raises a ValueError naming the first that cannot be used, and calls the
function again with the converted ones; when every argument already was right, retry_args raises the
kernel's error again (not the input's: an unknown frame, a Data of another model, an overflow), so
the second call cannot loop. buffer() is the workspace the kernels take, the one spelling of
"`data`, or the model's default Data" (workspace() gives the Data itself); its call costs about 25 ns
(doc/performance.md, "Design measurements").

Every numeric argument goes through one conversion, real_array(): which forms are accepted and
which refused is decided there (complex, text, booleans and masked entries are refused). Results:
the kernels check theirs for overflow (kernels/entries/); finite() checks those computed here in
Python. Together: any input either raises a ValueError naming an argument, or gives finite results
equal to those of the same values as float64 arrays (test/dynamics/test_fuzz_core.py).
"""
from __future__ import annotations

import numbers

import numpy as np
from numba.core.errors import NumbaError

#: What a kernel call raises for arguments it cannot take: TypeError (numba found no matching
#: signature), ValueError (the kernel's size/finiteness/array-object check, kernels/native.py),
#: AttributeError (the same code run as plain Python under NUMBA_DISABLE_JIT=1, e.g. a list has no
#: .shape), NumbaError (numba's typing of an argument it cannot type, before any signature is
#: tried: a masked array in the process's first call with a vector raises NumbaTypeError, which is
#: not a TypeError).
KERNEL_ERRORS = (TypeError, ValueError, AttributeError, NumbaError)


def real_array(x, name, expected):
    """x as a float64 array (any shape), or a ValueError naming it: the one conversion of every
    numeric argument, so that no form of input is converted in a way that changes its values.

    Accepted: arrays and (nested) lists or tuples of real numbers, whatever their integer or float
    dtype, byte order, alignment, strides or writeability; numpy converts them to float64. Refused,
    because numpy would convert them silently to something else: complex values (numpy keeps the
    real part; refused even with a zero imaginary part, so that whether a value passes does not
    depend on its imaginary part happening to be zero), text ('1.0' parses as 1.0), booleans (True
    as 1.0: a mask passed by mistake), and objects that are not real numbers. A masked array's mask
    is respected: a masked entry is a missing value and refused like NaN; with nothing masked, its
    data is used. `expected` says what the argument should be ("a numeric vector of length 6").
    """
    if isinstance(x, np.ma.MaskedArray):
        masked = np.ma.getmaskarray(x)
        if masked.any():
            where = f" at {_positions(name, masked)}" if masked.ndim else ""
            raise ValueError(f"{name} is masked (missing values){where}")
        x = x.data
    try:
        a = np.asarray(x)
    except (TypeError, ValueError, OverflowError):      # e.g. ragged nested lists
        raise ValueError(f"{name} must be {expected}, got {type(x).__name__}") from None
    kind = a.dtype.kind
    if kind in "iu" or (kind == "f" and a.dtype.itemsize <= 8):     # exact in float64, never overflows
        return a.astype(np.float64, copy=False)
    if kind not in "f" and not (kind == "O" and all(map(_is_real, a.flat))):
        got = _REFUSED.get(kind, "values that are not real numbers")
        raise ValueError(f"{name} must be {expected}, got {got} ({type(x).__name__} of dtype {a.dtype})")
    try:
        with np.errstate(over="ignore"):     # a long double beyond float64's range: inf, refused later
            return a.astype(np.float64)
    except (TypeError, ValueError, OverflowError):      # a Python int beyond float64's range
        raise ValueError(f"{name} must be {expected} within float64's range") from None


#: What the refused dtype kinds hold, for the messages.
_REFUSED = {"c": "complex values", "b": "booleans", "U": "text", "S": "text",
            "O": "objects that are not real numbers"}


def _is_real(v):
    """An element of an object array that converts to float64 as the number it is."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _positions(name, bad, joint_names=None):
    """'name[i] (joint), ...' for the first four True entries of the boolean array `bad`."""
    where = [f"{name}[{', '.join(map(str, i))}]" + (f" ({joint_names[i[0]]})" if joint_names else "")
             for i in np.argwhere(bad)[:4]]
    return ", ".join(where) + (", ..." if np.count_nonzero(bad) > 4 else "")


def _joint_names(model, n):
    """The model's joint names when a vector of length n is one value per joint, else None."""
    return model.joint_names if getattr(model, "nq", None) == n and hasattr(model, "joint_names") else None


def vector(model, x, name, n=None):
    """x as a finite float64 vector of length n (default model.nq) that the kernels take, or a
    ValueError naming it (real_array says which forms are accepted). An argument that already is
    one is returned as is."""
    n = model.nq if n is None else n
    a = real_array(x, name, f"a numeric vector of length {n}")
    if a.shape != (n,):
        joints = _joint_names(model, n)
        order = f" (joints in model.joint_names order: {list(joints)})" if joints is not None else ""
        raise ValueError(f"{name} must have shape ({n},), got shape {a.shape}{order}")
    if not np.isfinite(a).all():
        where = _positions(name, ~np.isfinite(a), _joint_names(model, n))
        raise ValueError(f"{name} must be finite: NaN or inf at {where}")
    return _kernel_ready(a)


def array(model, x, name, shape):
    """x as a finite float64 array of `shape` (None = any length) that the kernels take, or a
    ValueError naming it."""
    a = real_array(x, name, f"a numeric array of shape {tuple('N' if s is None else s for s in shape)}")
    if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
        expected = tuple("N" if s is None else s for s in shape)
        raise ValueError(f"{name} must have shape {expected}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite (contains NaN or inf)")
    return _kernel_ready(a)


def _kernel_ready(a):
    """`a` (float64) as the one array object the kernels take (kernels/native.py): exactly a
    numpy.ndarray, C-contiguous, aligned, native byte order; also writeable, so that the caller may
    keep it. A copy when `a` is not all of these."""
    flags = a.flags
    if (a.__class__ is np.ndarray and flags.c_contiguous and flags.aligned and flags.writeable
            and a.dtype.isnative):
        return a
    return np.array(a, dtype=np.float64, order="C")


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


def workspace(model, data=None):
    """The Data the kernels work in: `data`, which must be a Data(model), or the model's own default
    Data when None.

    Thread safety of the default Data: every single-state kernel is compiled without nogil, so it
    holds the GIL for the whole call, and it uses the workspace only inside that one call (results go
    to arrays the caller allocated; nothing is read back from the workspace afterwards). Calls from
    several Python threads that share the model's default Data are therefore serialised and each
    returns what it would alone. The batch calls (the *_trajectory calls, the regressor stacks,
    linearize_trajectory) release the GIL (their entries are nogil) and so never work in a Data that
    another thread may be using: each range of states (threads.run_chunks) works in its own copy of
    buffer(model, data), made in Python when the range starts (about 1 µs), with one range too and
    with `data` given; they run beside other threads' single-state calls, which keep the default Data
    (test/dynamics/test_threads.py). The optimal-control passes release the GIL as well and work in
    the problem's own Data (ReachingProblem.data). A result read from the workspace after its kernel
    returned would need one Data per thread; so does NUMBA_DISABLE_JIT=1: the kernels then run as
    Python, and threads switch inside them.
    """
    if data is None:
        return model._data
    if getattr(data, "model", None) is not model:
        raise ValueError(f"data must be a Data made for this model (Data(model)), got {data!r}")
    return data


def buffer(model, data=None):
    """workspace(model, data).buffer: the one array a kernel takes for its Data (the packed model and
    the workspace, kernels/layout.py). The default's case first, without a second call: this runs on
    every call of a public function."""
    if data is None:
        return model._data.buffer
    return workspace(model, data).buffer


def choice(options, value, name):
    """options[value] for a named option, or ValueError listing the options."""
    try:
        return options[value]
    except (KeyError, TypeError):
        raise ValueError(f"{name} must be one of {list(options)}, got {value!r}") from None


def scalar(x, name, minimum=None, expected="a number"):
    """x as a finite float (>= minimum), or a ValueError naming it; the forms real_array accepts."""
    if x.__class__ is float:
        v = x
    else:
        a = real_array(x, name, expected)
        if a.ndim:
            raise ValueError(f"{name} must be {expected}, got shape {a.shape}")
        v = float(a)
    if not np.isfinite(v) or (minimum is not None and v < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise ValueError(f"{name} must be a finite number{bound}, got {x!r}")
    return v


def count(x, name):
    """x as a non-negative int (an integral float such as 3.0 too), or a ValueError naming it."""
    v = scalar(x, name, minimum=0, expected="a non-negative integer")     # no bools, no text
    if v != int(v):
        raise ValueError(f"{name} must be a non-negative integer, got {x!r}")
    return int(v)


def finite(value, what, arguments):
    """value, or a ValueError when finite arguments gave a non-finite result (an overflow): the check
    of results computed in Python; the kernels check theirs (kernels/entries/)."""
    if not np.isfinite(value).all():
        raise ValueError(f"{what} overflowed: not finite for these finite {arguments} "
                         "(values too large for float64)")
    return value
