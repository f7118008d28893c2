"""Unusual forms of a float64 array with the same values, shared by the fuzz suite and the
fresh-process tests of kernels/native.py."""
import numpy as np


def misaligned(a, writeable=True):
    """``a``'s values in an array whose data starts one byte off 8-byte alignment."""
    a = np.asarray(a, dtype=np.float64)
    buffer = np.zeros(a.nbytes + 1, np.uint8)
    out = buffer[1:].view(np.float64).reshape(a.shape)
    out[...] = a
    out.setflags(write=writeable)
    return out


def read_only(a):
    """A read-only copy of ``a``."""
    a = np.array(a)
    a.setflags(write=False)
    return a
