"""Argument checking off the hot path: the compiled kernels reject anything that is not a finite
float64 vector of the right length; only then do these helpers find out what was wrong and say so."""
import numpy as np


def vector(model, x, name, n=None):
    """x as a contiguous finite float64 vector of length n (default model.nq), or ValueError naming it."""
    n = model.nq if n is None else n
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric vector of length {n}, got {type(x).__name__}") from None
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got shape {a.shape}"
                         + (f" (joints in model.joint_names order: {list(model.joint_names)})" if n == model.nq else ""))
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
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
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (contains NaN or inf)")
    return _writeable_contiguous(a)


def _writeable_contiguous(a):
    """The kernels take C-contiguous, writeable float64 arrays (read-only ones are typed apart)."""
    a = np.ascontiguousarray(a)
    return a if a.flags.writeable else a.copy()


def is_clean(*arrays):
    """True when every argument already is a finite 1-D contiguous float64 vector, i.e. what the
    kernels accept, so that a failure was not the input's fault."""
    return all(a is None or (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.strides == (8,)
                             and bool(np.all(np.isfinite(a)))) for a in arrays)


def scalar(x, name, minimum=None):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {x!r}") from None
    if not np.isfinite(v) or (minimum is not None and v < minimum):
        raise ValueError(f"{name} must be a finite number" + (f" >= {minimum}" if minimum is not None else "") + f", got {x!r}")
    return v
