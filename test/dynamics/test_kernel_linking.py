"""Helpers are compiled to IR that their callers link in (kernels/jit/linking.py): no machine code of their
own, and an entry point compiled in a later process, from helpers it loads from numba's cache, computes
what one compiled with every helper fresh computes."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

REPO = Path(__file__).resolve().parents[2]
UR5E = str(REPO / "urdf" / "ur5e.urdf")


_SCRIPT = (
    "import numpy as np; from robot_dynamics_ros import dynamics as rd;"
    "m = rd.load_urdf({urdf!r}); q = np.linspace(-1.0, 1.0, m.nq);"
    "out = rd.{call};"
    "print(repr(np.asarray(out).ravel().tolist()));"
)

# Run after compiling gravity in a fresh cache: each overload of a helper it inlines, and its entry point:
# (class of the library, functions the JIT compiled from it, functions its callers link in)
_LIBRARIES = (
    "from robot_dynamics_ros.dynamics.kernels import entries, spatial_algebra as spatial;"
    "defined = lambda module: sum(not f.is_declaration for f in module.functions);"
    "libraries = [r.library for r in spatial.inertia_times.overloads.values()]"
    " + [entries.gravity.overloads[entries.gravity.signatures[0]].library];"
    "print([(type(lib).__name__, defined(lib._final_module), defined(lib._get_module_for_linking()))"
    " for lib in libraries])"
)


def _run(cache, call, then=""):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", _SCRIPT.format(urdf=UR5E, call=call) + then], env=env,
                         capture_output=True, text=True, timeout=600, check=True)
    lines = out.stdout.strip().splitlines()
    return (np.array(eval(lines[0])), eval(lines[1])) if then else np.array(eval(lines[-1]))


@pytest.mark.slow
def test_entry_compiled_from_cached_helpers(tmp_path):
    """Process 1 compiles gravity: its helpers' libraries hold linked IR and no compiled function, its
    entry point's the compiled code, and all go to the cache. Process 2 compiles forward dynamics,
    loading the helpers it shares with gravity from there. Both agree with this process."""
    model = rd.load_urdf(UR5E)
    q = np.linspace(-1.0, 1.0, model.nq)
    g, libraries = _run(tmp_path, "gravity_torques(m, q)", then=_LIBRARIES)
    *helpers, entry = libraries
    assert helpers and all(kind == "LinkOnlyLibrary" and compiled == 0 and linked >= 1
                           for kind, compiled, linked in helpers), helpers
    assert entry[0] == "JITCodeLibrary" and entry[1] >= 1, entry
    assert any(tmp_path.rglob("spatial_algebra.*.nbc")), "helpers should be in the cache"
    qdd = _run(tmp_path, "forward_dynamics(m, q, 0.5 * q, np.ones(m.nq))")
    np.testing.assert_allclose(g, rd.gravity_torques(model, q), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(qdd, rd.forward_dynamics(model, q, 0.5 * q, np.ones(model.nq)),
                               rtol=1e-12, atol=1e-12)
    assert np.abs(qdd).max() > 0.1
