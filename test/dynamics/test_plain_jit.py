"""numba's internals behind one gate (kernels/jit/): with ROBOT_DYNAMICS_ROS_PLAIN_JIT=1, or on a numba
the linked mode was not written for, the kernels compile as plain @njit(cache=True) with public options
only, and compute the same results."""
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

REPO = Path(__file__).resolve().parents[2]
UR5E = str(REPO / "urdf" / "ur5e.urdf")
INTERNALS = ("cache", "dispatch", "linking")


def _env(tmp_path, **extra):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), **extra)
    env.pop("NUMBA_DISABLE_JIT", None)
    env.pop("ROBOT_DYNAMICS_ROS_PLAIN_JIT", None)
    env.update(extra)
    return env


_PROBE = """
import sys, warnings
warnings.simplefilter("always")
{before}
with warnings.catch_warnings(record=True) as caught:
    import numpy as np
    from robot_dynamics_ros import dynamics as rd
    from robot_dynamics_ros.dynamics.kernels import jit
    m = rd.load_urdf({urdf!r})
    g = rd.gravity_torques(m, np.linspace(-1.0, 1.0, m.nq))
    rd.gravity_torques(m, np.zeros(m.nq))
mine = [str(w.message) for w in caught if "robot_dynamics_ros" in str(w.message)]
loaded = [name for name in {internals!r} if "robot_dynamics_ros.dynamics.kernels.jit." + name in sys.modules]
print(jit.MODE, len(mine), loaded)
print(mine)
print(repr(g.tolist()))
"""


def _probe(tmp_path, before="", **extra):
    run = subprocess.run([sys.executable, "-c", _PROBE.format(before=before, urdf=UR5E, internals=INTERNALS)],
                         env=_env(tmp_path, **extra), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    head, messages, values = run.stdout.strip().splitlines()[-3:]
    mode, count, loaded = head.split(maxsplit=2)
    return mode, int(count), eval(loaded), eval(messages), np.array(eval(values))


def test_this_numba_compiles_linked():
    """The pinned numba is one the linked mode was written for (requirements/runtime.txt)."""
    from robot_dynamics_ros.dynamics.kernels import jit
    assert jit.MODE == "linked", jit.PLAIN_REASON


@pytest.mark.slow
def test_the_variable_forces_plain_compilation_quietly(tmp_path):
    """ROBOT_DYNAMICS_ROS_PLAIN_JIT=1: plain mode, none of the internals' modules imported, no warning
    (the user asked for it), g(q) equal to this process's linked kernels'."""
    model = rd.load_urdf(UR5E)
    mode, warned, loaded, _, g = _probe(tmp_path, ROBOT_DYNAMICS_ROS_PLAIN_JIT="1")
    assert (mode, warned, loaded) == ("plain", 0, [])
    np.testing.assert_allclose(g, rd.gravity_torques(model, np.linspace(-1.0, 1.0, model.nq)),
                               rtol=1e-13, atol=1e-12)


@pytest.mark.slow
def test_an_unknown_numba_falls_back_and_says_so_once(tmp_path):
    """A numba version the linked mode was not written for (as rosdep's Debian 12 numba 0.56 would be):
    the package still imports, compiles the plain way, and says so in one RuntimeWarning."""
    mode, warned, loaded, messages, g = _probe(tmp_path, before="import numba; numba.__version__ = '0.56.4'")
    assert (mode, warned, loaded) == ("plain", 1, []), messages
    assert "numba 0.56.4" in messages[0] and "plain" in messages[0]
    assert np.abs(g).max() > 1.0


@pytest.mark.slow
def test_the_reference_checks_pass_compiled_plain(tmp_path):
    """Every reference test (Pinocchio, the textbook) with ROBOT_DYNAMICS_ROS_PLAIN_JIT=1 in a fresh
    numba cache: the fallback computes what the references say."""
    env = _env(tmp_path, ROBOT_DYNAMICS_ROS_PLAIN_JIT="1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          "-o", "addopts=", str(REPO / "test" / "reference")],
                         env=env, cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failed" not in run.stdout, run.stdout[-2000:]
    assert list((tmp_path / "numba").rglob("*.nbi")), "the plain kernels should have used the fresh cache"


def test_no_module_outside_the_gate_reaches_into_numba_internals():
    """numba.core is imported only in kernels/jit/ (and numba.core.errors, event, cgutils: public
    extension API) — the modules that a numba release could break stay behind the gate."""
    allowed = {"numba.core.errors", "numba.core.event", "numba.core.cgutils"}
    offenders = []
    for path in (REPO / "robot_dynamics_ros").rglob("*.py"):
        if "jit" in path.relative_to(REPO).parts:
            continue
        for line in path.read_text().splitlines():
            words = line.split()
            if line.startswith(("import ", "from ")) and len(words) > 1 and words[1].startswith("numba.core"):
                module = words[1] if words[0] == "import" else words[1]
                imported = words[3:] if words[0] == "from" else []
                if module == "numba.core" and imported:
                    module = "numba.core." + imported[0].rstrip(",")
                if module not in allowed:
                    offenders.append(f"{path.relative_to(REPO)}: {line}")
    assert not offenders, offenders
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from robot_dynamics_ros.dynamics.kernels import layout
    assert not hasattr(layout, "OPTIONS") and not hasattr(layout, "_compiled_once")
