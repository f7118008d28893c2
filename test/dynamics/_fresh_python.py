"""Run a snippet in a fresh interpreter: for tests whose failure mode is a crash (it would take the
whole session down) or that need kernels not yet called in this process."""
import os
import pathlib
import subprocess
import sys
import textwrap

from robot_dynamics_ros import dynamics as rd

HERE = pathlib.Path(__file__).parent


def run_python(code, timeout=300):
    """Run ``code`` (dedented) with this test directory and the same robot_dynamics_ros importable;
    returns the CompletedProcess (text output captured)."""
    package_parent = pathlib.Path(rd.__file__).resolve().parents[2]
    path = os.pathsep.join([str(package_parent), str(HERE), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=HERE,
                          env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True,
                          timeout=timeout)
