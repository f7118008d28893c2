"""The wheel and `pip install` as a user meets them: built from a copy of this checkout (set up, numba's
cache included), installed into a clean virtual environment from PyPI, used at once.

The wheel must carry no numba cache (machine code for this CPU), declare every runtime dependency
the package imports (ROS itself comes from ROS, or the [jazzy] / [kilted] extras), put the node
executables where `ros2 run` looks (<prefix>/lib/robot_dynamics_ros) and the share files where
ament looks; the first use in the new environment compiles, and says so.
"""
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = 'robot_dynamics_ros'
EXECUTABLES = ('dynamics_node', 'computed_torque_controller', 'simulator_node', 'external_torque_estimator',
               'task_space_controller', 'mpc_controller', 'trajectory_feedforward', 'bringup', 'demo')
# what the package imports outside ROS and the standard library, by distribution name
RUNTIME = ('numpy', 'numba', 'scipy', 'cvxpy', 'rosbags', 'pyyaml', 'matplotlib')


@pytest.fixture(scope='module')
def wheel(tmp_path_factory):
    """The wheel `pip wheel` builds from a copy of this checkout (its kernels' numba cache included)."""
    source = tmp_path_factory.mktemp('source') / PACKAGE
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns('.venv*', '.git', 'out', 'build', 'install',
                                                                'log', '.pytest_cache', '.hypothesis'))
    cache = source / PACKAGE / 'dynamics' / 'kernels' / '__pycache__'
    assert cache.is_dir() and any(cache.glob('*.nbi')), 'the checkout is expected to be set up'
    folder = tmp_path_factory.mktemp('wheel')
    env = dict(os.environ)
    env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    run = subprocess.run([sys.executable, '-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '-w',
                          str(folder), str(source)], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    (path,) = folder.glob(f'{PACKAGE}-*.whl')
    return path


@pytest.mark.slow
def test_the_wheel_carries_code_data_and_executables_but_no_cache(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if '__pycache__' in n or n.endswith(('.nbi', '.nbc', '.pyc'))]
    assert f'{PACKAGE}/dynamics/kernels/rnea.py' in names
    data = f'{PACKAGE}-0.1.0.data/data/'
    for name in EXECUTABLES:
        assert f'{data}lib/{PACKAGE}/{name}' in names, name
    for name in ('package.xml', 'launch/simulation.launch.py', 'config/simulation.yaml', 'urdf/ur5e.urdf'):
        assert f'{data}share/{PACKAGE}/{name}' in names, name
    assert f'{data}share/ament_index/resource_index/packages/{PACKAGE}' in names
    metadata = Parser().parsestr(zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith('.dist-info/METADATA'))).decode())
    requires = metadata.get_all('Requires-Dist')
    plain = {r.split(';')[0].split('>')[0].split('=')[0].split('<')[0].strip().lower() for r in requires
             if 'extra ==' not in r}
    assert set(RUNTIME) <= plain, plain
    assert {'jazzy', 'kilted', 'test'} <= set(metadata.get_all('Provides-Extra'))
    assert any(r.startswith('ros-jazzy-rclpy') and 'extra == "jazzy"' in r for r in requires)


@pytest.mark.slow
def test_pip_install_into_a_clean_environment_works_at_once(wheel, tmp_path):
    """pip installs every dependency; the core computes right after; the first use compiles and says
    so; the executables are where ros2 run looks and run (--help of the bring-up)."""
    prefix = tmp_path / 'venv'
    venv.EnvBuilder(with_pip=True).create(prefix)
    python = prefix / 'bin' / 'python'
    env = {k: v for k, v in os.environ.items() if k not in ('_ROS_WHEELS_BOOTSTRAP_COMPLETE', 'PYTHONPATH',
                                                            'AMENT_PREFIX_PATH', 'NUMBA_CACHE_DIR')}
    install = subprocess.run([str(python), '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check',
                              str(wheel)], capture_output=True, text=True, env=env, timeout=900)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    use = subprocess.run([str(python), '-c', '''
import numpy as np
import robot_dynamics_ros.dynamics as rd
from robot_dynamics_ros.cli import resources
model = rd.load_urdf(resources.default_urdf())
q = np.array([0.0, -1.2, 1.5, -1.0, -1.57, 0.0])
print(resources.default_urdf())
print(float(rd.gravity_torques(model, q)[1]))
'''], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert use.returncode == 0, use.stdout + use.stderr
    where, lift = use.stdout.split()
    assert where.startswith(str(prefix)) and abs(float(lift)) > 10.0, use.stdout
    assert 'compiling the dynamics kernels' in use.stderr and 'precompile' in use.stderr, use.stderr
    for name in EXECUTABLES:
        assert os.access(prefix / 'lib' / PACKAGE / name, os.X_OK), name
    bringup = subprocess.run([str(prefix / 'lib' / PACKAGE / 'bringup'), '--help'], capture_output=True,
                             text=True, env=env, timeout=120)
    assert bringup.returncode == 0 and '--graph' in bringup.stdout, bringup.stdout + bringup.stderr
