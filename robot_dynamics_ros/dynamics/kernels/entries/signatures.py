"""The argument types of the entry points' explicit signatures: anything else is refused with a
TypeError instead of compiling another specialisation."""
from numba import types

_D = types.float64[:, ::1]                                # a Data buffer: packed model | workspace
_V = types.float64[::1]                                   # a result vector
_M = types.float64[:, ::1]                                # a result matrix or a trajectory (N, n)
_VI = types.Array(types.float64, 1, "C", readonly=True)   # an input vector (writeable ones convert)
_MI = types.Array(types.float64, 2, "C", readonly=True)   # an input trajectory or matrix
_I = types.int64
_F = types.float64
_T = types.float64[:, :, ::1]                             # a stack of matrices (N, r, c)
_TI = types.Array(types.float64, 3, "C", readonly=True)   # an input stack (B, steps, n) of torques
