"""Helpers compiled to LLVM IR for their callers only: each kernel optimised once, in its entry point.

numba compiles every function into a library of its own and finalizes it as if Python were to call
it: it links in the IR of the functions it calls, runs LLVM's module pipeline over the whole linked
module (twice: a cheap pass for reference-count pruning, then the full O3 one) and generates its
machine code. An entry point then links in the IR of the helpers it calls (jit.inline,
jit.subroutine) and does all of that again for its own module, inlining them. For a helper those
steps are wasted: its machine code is never called (each caller carries its own linked copy), and its
optimised IR is optimised again inside every caller. Down a stack of helpers (linearize_step →
forward_dynamics_derivatives → inverse_dynamics_derivatives → composites_in_base → ...) every level
repeated the work of all the levels below.

A helper's library here (LinkOnlyLibrary) only links its callees' IR into its own, after the
function-level passes numba runs on each function as it is lowered, and hands the JIT one symbol:
the environment pointer that numba writes for every compiled function (numba's Environment, which
these kernels never read). Each entry point's library is optimised and compiled once, as a whole,
as before. The cold compile of all entry points is a fifth to a third shorter; the kernels' speed is
unchanged (doc/performance.md, "Design measurements" and "Start-up").

The helper's library is cached like any other (object code: the environment pointer's; bitcode:
the linked IR its callers link in), so a process that compiles a caller later loads it.

This reaches into numba's code library (requirements/runtime.txt pins numba 0.68.1): with a numba whose
library lacks the methods used here, helpers compile the ordinary way (`PIPELINE`), only slower.
"""
from llvmlite import binding as llvm
from numba.core.codegen import JITCodeLibrary, JITCPUCodegen
from numba.core.compiler import Compiler, DefaultPassBuilder
from numba.core.compiler_lock import require_global_compiler_lock
from numba.core.compiler_machinery import LoweringPass, register_pass
from numba.core.typed_passes import AnnotateTypes

_ENVIRONMENT_PREFIX = "_ZN08NumbaEnv"    # numba's mangled name of a function's environment pointer


class LinkOnlyLibrary(JITCodeLibrary):
    """A library whose finalize links and verifies the IR, optimises nothing and generates only the
    environment pointers' storage."""

    def finalize(self):
        require_global_compiler_lock()
        self._raise_if_finalized()
        environments = [g.name for g in self._final_module.global_variables
                        if g.name.startswith(_ENVIRONMENT_PREFIX)]
        seen = set()
        for library in self._linking_libraries:
            if library not in seen:
                seen.add(library)
                self._reload_init.update(library._reload_init)
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._final_module.verify()
        self._finalized = True                  # what _get_module_for_linking requires
        self._get_module_for_linking()          # the linked IR, kept as the library's shared module
        module = str(self._codegen._create_empty_module(self.name))
        module += "".join(f'@"{name}" = common global ptr null\n' for name in environments)
        self._final_module = llvm.parse_assembly(module)
        self._finalize_final_module()           # the JIT holds the environment pointers only


@register_pass(mutates_CFG=False, analysis_only=False)
class LinkOnlyLowering(LoweringPass):
    """Give the lowering that follows a LinkOnlyLibrary to lower into."""
    _name = "robot_dynamics_ros_link_only_library"

    def __init__(self):
        LoweringPass.__init__(self)

    def run_pass(self, state):
        if state.library is None:
            state.library = LinkOnlyLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
            state.library.enable_object_caching()
        return False                            # the function's IR is unchanged


class LinkOnlyCompiler(Compiler):
    """numba's nopython pipeline, lowering into a LinkOnlyLibrary (njit's pipeline_class)."""

    def define_pipelines(self):
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline.add_pass_after(LinkOnlyLowering, AnnotateTypes)
        pipeline.finalize()
        return [pipeline]


# The compiler of the helpers: LinkOnlyCompiler where numba's code library and code generator have what
# LinkOnlyLibrary.finalize uses.
_LIBRARY_METHODS = ("_raise_if_finalized", "_get_module_for_linking", "_finalize_final_module")
PIPELINE = (LinkOnlyCompiler
            if all(hasattr(JITCodeLibrary, name) for name in _LIBRARY_METHODS)
            and hasattr(JITCPUCodegen, "_create_empty_module") else Compiler)
