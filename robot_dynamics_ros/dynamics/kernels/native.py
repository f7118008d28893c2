"""The array objects the entry points read: exact numpy.ndarray, aligned, native byte order.

The explicit signatures (entries/) ask for C-contiguous float64 arrays, but numba's dispatcher
cannot be trusted to hold an argument to them. It gives each argument a type code: for an aligned,
writeable, native-byte-order array from a table keyed on (ndim, layout, dtype number); for any other
array (misaligned, big-endian, read-only) from one process-wide cache keyed on a fingerprint of
(ndim, layout, writeable, dtype number), which records neither alignment nor byte order. The first
such array that any jitted function in the process sees fixes the code of all the others: after a
misaligned float64 vector (numba types it as an aligned one) or a read-only native one, a big-endian
vector of the same writeability gets the same type code, matches the signature and is read as
native bytes (wrong torques; an all-NaN big-endian q reads as finite numbers). After a big-endian one
first, every misaligned vector is typed `pyobject` and refused. A masked array is typed as its data:
its mask would be ignored (and in a process's first call, numba's typing raises NumbaTypeError).
numba's types hold neither byte order nor the alignment of an argument (numba issues #2593, #2937).

So every entry point also checks the array object itself (is_native_ndarray: five loads and three
compares per argument; with the result checks of the entry points, under one percent of a call's
instructions: doc/performance.md, "Design measurements"): anything else fails the kernel's argument
check, and the Python layer converts it with numpy or says what is wrong (_checks.py). Under
NUMBA_DISABLE_JIT=1 the same test runs as the Python function below.

The compiled test reads numpy's C structs (PyArrayObject: ob_type, descr, flags; PyArray_Descr:
byteorder) at fixed offsets, the ones numpy's ABI fixes for every compiled extension; they are
checked against the running numpy and Python when this module is imported.
"""
import ctypes
import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

_POINTER = ctypes.sizeof(ctypes.c_void_p)
_HEAD = object.__basicsize__            # PyObject_HEAD; ob_type is its last field
_OB_TYPE = _HEAD - _POINTER
_DESCR = _HEAD + 5 * _POINTER           # after data, nd (padded), dimensions, strides, base
_FLAGS = _HEAD + 6 * _POINTER
_BYTEORDER = _HEAD + _POINTER + 2       # PyArray_Descr: typeobj, kind, type, byteorder
NPY_ARRAY_ALIGNED = 0x0100
_SWAPPED = ">" if sys.byteorder == "little" else "<"


def is_native_ndarray(x, like):
    """True when x is of the exact type of `like` (numpy.ndarray: the Data buffer), aligned, and in
    native byte order. This Python version (NUMBA_DISABLE_JIT=1) also asks what the signatures ask
    of compiled calls: float64, C-contiguous."""
    return (type(x) is type(like) and x.dtype == np.float64 and x.flags.c_contiguous and x.flags.aligned
            and x.dtype.isnative)


def _field(builder, obj, offset, ty):
    """The `ty` at byte `offset` of the C struct at `obj` (an i8*)."""
    address = builder.gep(obj, [ir.Constant(ir.IntType(64), offset)])
    return builder.load(builder.bitcast(address, ty.as_pointer()))


@intrinsic
def _is_native_ndarray(typingctx, x, like):
    if not (isinstance(x, types.Array) and isinstance(like, types.Array)):
        return None

    def codegen(context, builder, signature, args):
        obj = context.make_array(signature.args[0])(context, builder, args[0]).parent
        ref = context.make_array(signature.args[1])(context, builder, args[1]).parent
        result = cgutils.alloca_once_value(builder, cgutils.true_bit)
        # No Python object behind an array: compiled code made it, so it is numba's own (native).
        from_python = builder.and_(cgutils.is_not_null(builder, obj), cgutils.is_not_null(builder, ref))
        with builder.if_then(from_python, likely=True):
            byte, word, pointer = ir.IntType(8), ir.IntType(32), ir.IntType(8).as_pointer()
            same_type = builder.icmp_unsigned("==", _field(builder, obj, _OB_TYPE, pointer),
                                              _field(builder, ref, _OB_TYPE, pointer))
            flags = _field(builder, obj, _FLAGS, word)
            aligned = builder.icmp_unsigned("!=", builder.and_(flags, ir.Constant(word, NPY_ARRAY_ALIGNED)),
                                            ir.Constant(word, 0))
            byteorder = _field(builder, _field(builder, obj, _DESCR, pointer), _BYTEORDER, byte)
            native = builder.icmp_unsigned("!=", byteorder, ir.Constant(byte, ord(_SWAPPED)))
            builder.store(builder.and_(same_type, builder.and_(aligned, native)), result)
        return builder.load(result)
    return types.boolean(x, like), codegen


@overload(is_native_ndarray, inline="always")
def _is_native_ndarray_overload(x, like):
    return lambda x, like: _is_native_ndarray(x, like)


def _check_offsets():
    """The offsets above, read back from two arrays of the running numpy (one byte-swapped)."""
    for a in (np.zeros(2), np.zeros(2, dtype=np.dtype(float).newbyteorder(_SWAPPED))):
        read = lambda ctype, address: ctype.from_address(address).value   # noqa: E731
        descr = read(ctypes.c_void_p, id(a) + _DESCR)
        if (read(ctypes.c_void_p, id(a) + _HEAD) != a.ctypes.data or read(ctypes.c_void_p, id(a) + _OB_TYPE)
                != id(np.ndarray) or descr != id(a.dtype) or read(ctypes.c_int, id(a) + _FLAGS) != a.flags.num
                or read(ctypes.c_char, descr + _BYTEORDER) != a.dtype.byteorder.encode()):
            raise ImportError(f"numpy {np.__version__}'s array struct is not laid out as "
                              f"robot_dynamics_ros.dynamics.kernels.native reads it")


_check_offsets()
