"""numba's on-disk cache is keyed on the whole kernel package (kernels/jit/cache.py): a change to a helper
that the entry points inline recompiles them."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]

_GRAVITY = (
    "import numpy as np; from robot_dynamics_ros import dynamics as rd;"
    "m = rd.load_urdf({urdf!r}); print(repr(rd.gravity_torques(m, np.full(m.nq, 0.3)).tolist()))"
)


def _gravity_in_copy(root):
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("NUMBA_CACHE_DIR", None)        # the in-tree cache: __pycache__ beside the copied sources
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", _GRAVITY.format(urdf=str(REPO / "urdf" / "ur5e.urdf"))],
                         env=env, cwd=root, capture_output=True, text=True, timeout=600, check=True)
    return np.array(eval(out.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
def test_editing_an_inlined_helper_recompiles_the_entry_points(tmp_path):
    """Copy the package, fill its cache, double every body's mass and first moment inside
    spatial.inertia_times (a helper inlined into the gravity entry point, which lives in another
    module), and see g(q) double: the stale compiled entry point was not loaded from the cache."""
    shutil.copytree(REPO / "robot_dynamics_ros", tmp_path / "robot_dynamics_ros",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = _gravity_in_copy(tmp_path)
    kernels = tmp_path / "robot_dynamics_ros" / "dynamics" / "kernels"
    cached = list((kernels / "entries" / "__pycache__").glob("rigid_body.gravity*"))
    assert cached, "the first run should have written the gravity entry point to the cache"
    assert np.array_equal(_gravity_in_copy(tmp_path), before)        # loaded from the cache: the same

    spatial = kernels / "spatial_algebra.py"
    source = spatial.read_text()
    unpack = "def inertia_times(G, X):\n"
    assert source.count(unpack) == 1
    i = source.index("    m, hx, hy, hz, i00, i01, i02, i11, i12, i22 = G\n", source.index(unpack))
    i = source.index("\n", i) + 1
    doubled = "    m, hx, hy, hz = 2.0 * m, 2.0 * hx, 2.0 * hy, 2.0 * hz\n"
    spatial.write_text(source[:i] + doubled + source[i:])

    after = _gravity_in_copy(tmp_path)
    np.testing.assert_allclose(after, 2.0 * before, rtol=1e-12, atol=1e-12)
    assert np.abs(before).max() > 1.0
