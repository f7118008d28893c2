"""One compilation of a helper for all its callers (numba's dispatcher internals: the gate, __init__.py).

numba compiles a called function once per tuple of argument types, and types a constant argument by
its value (a column number, W_V_BODY, is Literal[int](58)): row6(w, i, W_V_BODY) and
row6(w, i, W_F_BODY) would be two compilations, rnea(..., use_qd=False, ...) a third, a call that
leaves out an argument with a default a fourth. ``compiled_once`` types constants as what they are
(int64, bool; after inlining, LLVM folds them all the same), and reuses a compilation whose argument
types the call's convert to safely (a writable array where a read-only one was compiled) instead of
compiling another. It replaces the dispatcher's ``get_call_template`` and calls its compiler's
``fold_argument_types``: neither is numba's public API.
"""
from numba import typeof, types
from numba.core import typing
from numba.core.typeconv import Conversion


def compiled_once(dispatcher):
    """`dispatcher` (an njit dispatcher), resolving every call to one compilation (module docstring)."""
    if not hasattr(dispatcher, "get_call_template"):       # NUMBA_DISABLE_JIT=1: a Python function
        return dispatcher
    resolve = dispatcher.get_call_template

    def get_call_template(args, kws):
        signature_of_call, args = dispatcher._compiler.fold_argument_types(args, kws)
        args = tuple(_as_variable(a) for a in args)
        for signature in dispatcher.nopython_signatures:
            if _accepts(dispatcher.typingctx, signature.args, args):
                template = typing.make_concrete_template(
                    f"CallTemplate({dispatcher.py_func.__name__})", key=dispatcher.py_func.__name__,
                    signatures=dispatcher.nopython_signatures)
                return template, signature_of_call, args, {}
        return resolve(args, {})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def _as_variable(argument_type):
    """The type of a variable holding the argument: a constant's (a literal, or an omitted argument's
    default, which the call then passes as that constant) without its value."""
    if isinstance(argument_type, types.Omitted):
        return types.unliteral(typeof(argument_type.value))
    return types.unliteral(argument_type)


def _accepts(typingctx, parameters, arguments):
    """Whether every argument type converts to its parameter's exactly, by promotion or safely."""
    if len(parameters) != len(arguments):
        return False
    for parameter, argument in zip(parameters, arguments):
        conversion = typingctx.can_convert(argument, parameter)
        if conversion is None or conversion > Conversion.safe:
            return False
    return True
