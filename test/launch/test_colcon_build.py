"""`colcon build` of the package installs the executables (the nodes, the tools, the demos) and the share
files, and leaves the installed kernels compiled.

Skipped where colcon is not installed (`make colcon` installs it: requirements/colcon.txt).
Builds a copy of the package in a temporary directory, against the ROS 2 in this environment.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip('colcon_core')

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = 'robot_dynamics_ros'
EXECUTABLES = ['dynamics_node', 'computed_torque_controller', 'simulator_node', 'external_torque_estimator',
               'task_space_controller', 'mpc_controller', 'trajectory_feedforward',
               'state_publisher', 'viewer', 'bringup', 'identify', 'precompile', 'view', 'demo']
SOURCES = ['package.xml', 'setup.py', 'setup.cfg', 'resource', PACKAGE, 'launch', 'config',
           'urdf']


def _colcon():
    beside = Path(sys.executable).parent / 'colcon'
    return str(beside) if beside.exists() else shutil.which('colcon')


@pytest.mark.slow
def test_colcon_build_installs_the_executables(tmp_path):
    colcon = _colcon()
    if colcon is None:
        pytest.skip('colcon_core is importable but there is no colcon command')
    src = tmp_path / 'src' / PACKAGE
    src.mkdir(parents=True)
    # numba's compiled kernels come along (kernels/__pycache__): the install step copies them
    ignore = shutil.ignore_patterns('*.pyc')
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    env = dict(os.environ)
    # The ROS 2 packages of this environment (pip wheels) are the underlay.
    env['AMENT_PREFIX_PATH'] = os.pathsep.join(
        p for p in (sys.prefix, env.get('AMENT_PREFIX_PATH')) if p)
    env.pop('COLCON_PREFIX_PATH', None)
    env.pop('NUMBA_CACHE_DIR', None)        # numba's cache beside the installed kernels
    result = subprocess.run(
        [colcon, '--log-base', str(tmp_path / 'log'), 'build',
         '--base-paths', str(tmp_path / 'src'),
         '--build-base', str(tmp_path / 'build'), '--install-base', str(tmp_path / 'install'),
         '--event-handlers', 'console_direct-'],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]

    prefix = tmp_path / 'install' / PACKAGE
    lib = prefix / 'lib' / PACKAGE
    for name in EXECUTABLES:
        exe = lib / name
        assert exe.is_file(), f'{exe} missing; lib has {sorted(os.listdir(lib))}'
        assert os.access(exe, os.X_OK)
    share = prefix / 'share' / PACKAGE
    for rel in ('package.xml', 'launch/simulation.launch.py', 'launch/dynamics.launch.py',
                'config/simulation.yaml', 'config/dynamics.yaml', 'urdf/ur5e.urdf'):
        assert (share / rel).is_file(), rel
    assert (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / PACKAGE).is_file()

    # The installed package finds its share files through the ament index, not the source tree.
    site = next((prefix / 'lib').glob('python3*/site-packages'))
    env['AMENT_PREFIX_PATH'] = os.pathsep.join((str(prefix), env['AMENT_PREFIX_PATH']))
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(site), env.get('PYTHONPATH')) if p)
    found = subprocess.run(
        [sys.executable, '-c', 'from robot_dynamics_ros.cli import resources; '
         'print(resources.default_urdf()); print(resources.config_file("simulation.yaml"))'],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == [str(share / 'urdf' / 'ur5e.urdf'),
                                    str(share / 'config' / 'simulation.yaml')]

    # The build compiled the installed copy's kernels (setup.py's install step runs
    # robot_dynamics_ros.cli.precompile): a fresh process loads every entry point from the cache beside
    # the installed sources and compiles none.
    loaded = subprocess.run(
        [sys.executable, '-c', 'from robot_dynamics_ros.dynamics.kernels import entries; '
         'entries.compile_entries(); print(entries.__file__); '
         'print([n for n in entries.ENTRY_NAMES '
         'if sum(getattr(entries, n).stats.cache_misses.values())])'],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    where, missed = loaded.stdout.splitlines()
    assert where.startswith(str(site)), where
    assert missed == '[]', f'compiled at run time: {missed}'
    entries_cache = site / PACKAGE / 'dynamics' / 'kernels' / 'entries' / '__pycache__'
    assert list(entries_cache.glob('rigid_body.*.nbi'))
