"""Argument checking off the hot path: the compiled kernels reject anything that is not a finite
float64 vector of the right length; only then do these helpers find out what was wrong and say so."""
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
        raise ValueError(f"{name} must have shape ({n},), got shape {a.shape}"
                         + (f" (joints in model.joint_names order: {list(model.joint_names)})" if n == model.nq else ""))
    if not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a))
        where = ", ".join(f"{name}[{i}]" + (f" ({model.joint_names[i]})" if n == model.nq else "") for i in bad[:4])
        raise ValueError(f"{name} must be finite: NaN or inf at {where}")
    return _writeable_contiguous(a)


def array(model, x, name, shape):
    """x as a contiguous finite float64 array of `shape` (None = any length), or ValueError naming it."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape {shape}, got {type(x).__name__}") from None
    if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
        raise ValueError(f"{name} must have shape {tuple('N' if s is None else s for s in shape)}, got {a.shape}")
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
    values = tuple(None if spec[0] is None and spec[1] in optional else vector(model, *spec) for spec in specs)
    if all(v is spec[0] for v, spec in zip(values, specs)):
        raise error
    return values


def buffer(model, data):
    """The kernels' buffer (packed model and workspace) of `data`, which must be a Data(model)."""
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
        raise ValueError(f"{name} must be a finite number" + (f" >= {minimum}" if minimum is not None else "") + f", got {x!r}")
    return v
