"""Build script for the robot_dynamics_ros ament_python package."""

import os
import shutil
import subprocess
import sys
from glob import glob

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.install import install

package_name = 'robot_dynamics_ros'

# What the package imports, for `pip install` (ROS itself comes from ROS: a sourced installation, or
# the PyPI wheels of the extras below). requirements/*.txt pin the versions the tests run with.
RUNTIME = [
    'numpy>=1.24',
    'numba>=0.60',              # the kernels; llvmlite comes with it
    'scipy>=1.10',              # identification: base parameters, excitation
    'cvxpy>=1.4',               # identification: the consistent fit (with its Clarabel solver)
    'rosbags>=0.9.20',          # reading and writing bags without ROS
    'pyyaml>=5.4',              # bring-up --set, identify's parameter file
    'matplotlib>=3.5',          # the demos' figures
    'viser>=1.0',               # the viewer's web page and 3D scene
    'trimesh>=4.0',             # the viewer's meshes and primitives
    'pycollada>=0.7',           # trimesh's reader of COLLADA (.dae) meshes
]
# The ROS 2 wheels on PyPI, one distribution per environment: pip install '.[jazzy]' or '.[kilted]'.
ROS_PACKAGES = ('rclpy', 'rmw-fastrtps-cpp', 'sensor-msgs', 'std-msgs', 'geometry-msgs', 'std-srvs',
                'trajectory-msgs', 'rosgraph-msgs', 'diagnostic-msgs', 'nav-msgs', 'visualization-msgs')
# control_msgs (FollowJointTrajectory, JointTrajectoryControllerState) has no wheel: a system ROS
# installation has it, tools/build_interfaces.sh builds it into a virtual environment; without it
# computed_torque_controller runs without its action and controller state (and says so).


class BuildWithoutCaches(build_py):
    """build_py without numba's and Python's caches: a checkout that ran the set-up has hundreds of
    CPU-specific numba cache files in kernels/__pycache__, which must not travel in a wheel (the
    installation compiles its own: precompile, or the first use)."""

    def run(self):
        super().run()
        for root, dirs, _ in os.walk(self.build_lib):
            for name in [d for d in dirs if d == '__pycache__']:
                shutil.rmtree(os.path.join(root, name))
                dirs.remove(name)


class InstallAndPrecompile(install):
    """install, then compile the installed copy's kernels into numba's cache beside them
    (``python -m robot_dynamics_ros.cli.precompile``), so that the installed nodes start at once:
    numba keeps its cache beside the sources (kernels/__pycache__): the source tree's is copied
    first, then whatever it lacks is compiled. ROBOT_DYNAMICS_ROS_NO_PRECOMPILE=1 skips this (the
    nodes then compile on their first start). A failure is reported and does not fail the install.
    Not while building a wheel (`pip install .` and `pip wheel` do): a wheel carries no numba cache
    (CPU-specific), and the installation compiles on first use, saying so (kernels/entries.py), or
    ahead with `python -m robot_dynamics_ros.cli.precompile`.
    """

    def run(self):
        super().run()
        if os.environ.get('ROBOT_DYNAMICS_ROS_NO_PRECOMPILE'):
            return
        if any(command.startswith('bdist') for command in self.distribution.commands):
            return      # building a wheel (pip install ., pip wheel): machine code never travels in it
        lib = os.path.abspath(self.install_lib)
        # The source tree's compiled kernels, if any: numba's cache is keyed on a hash of the
        # kernel sources (kernels/jit/cache.py), not on their location, so the installed copy loads
        # what matches and compiles only the rest.
        kernels = os.path.join(package_name, 'dynamics', 'kernels')
        source_kernels = os.path.join(os.path.dirname(os.path.abspath(__file__)), kernels)
        for directory, _, files in os.walk(source_kernels):
            if os.path.basename(directory) != '__pycache__':
                continue
            installed_cache = os.path.join(lib, kernels, os.path.relpath(directory, source_kernels))
            os.makedirs(installed_cache, exist_ok=True)
            for name in files:
                if name.endswith(('.nbi', '.nbc')):
                    shutil.copy2(os.path.join(directory, name), installed_cache)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (lib, os.environ.get('PYTHONPATH')) if p))
        # cwd: the installed copy, so that `-m` does not import the source tree instead
        result = subprocess.run([sys.executable, '-m', f'{package_name}.cli.precompile', '--quiet'],
                                cwd=lib, env=env)
        if result.returncode != 0:
            print(f'{package_name}: precompiling the kernels failed (exit {result.returncode}); '
                  'the nodes will compile them on first start', file=sys.stderr)

def ament_executables():
    """For a wheel: (lib/robot_dynamics_ros, [the executables]), small shell scripts that run each
    console script with the prefix's Python as pip's console scripts do (import the entry point's
    function, exit with what it returns), since a wheel can put console scripts only in bin/, where
    `ros2 run`, `ros2 pkg executables` and launch_ros do not look. A colcon or `setup.py install` build
    puts the console scripts there itself (setup.cfg), and gets none of these."""
    if not any(arg.startswith('bdist') for arg in sys.argv[1:]):
        return []
    folder = os.path.join('build', 'ament_executables')
    os.makedirs(folder, exist_ok=True)
    paths = []
    for spec in ENTRY_POINTS:
        name, target = (part.strip() for part in spec.split('='))
        module, function = target.split(':')
        path = os.path.join(folder, name)
        with open(path, 'w') as script:
            script.write('#!/bin/sh\n'
                         f'# {name} of {package_name}, installed from a wheel (setup.py: ament_executables)\n'
                         'python="$(dirname "$0")/../../bin/python3"\n'
                         '[ -x "$python" ] || python=python3\n'
                         f'exec "$python" -c \'import sys; sys.argv[0] = "{name}"; '
                         f'from {module} import {function}; sys.exit({function}())\' "$@"\n')
        os.chmod(path, 0o755)
        paths.append(path)
    return [('lib/' + package_name, paths)]


ENTRY_POINTS = [
    'dynamics_node = robot_dynamics_ros.nodes.launcher:dynamics_node',
    'computed_torque_controller = robot_dynamics_ros.nodes.launcher:computed_torque_controller',
    'simulator_node = robot_dynamics_ros.nodes.launcher:simulator_node',
    'external_torque_estimator = robot_dynamics_ros.nodes.launcher:external_torque_estimator',
    'task_space_controller = robot_dynamics_ros.nodes.launcher:task_space_controller',
    'mpc_controller = robot_dynamics_ros.nodes.launcher:mpc_controller',
    'trajectory_feedforward = robot_dynamics_ros.nodes.launcher:trajectory_feedforward',
    'state_publisher = robot_dynamics_ros.nodes.launcher:state_publisher',
    'viewer = robot_dynamics_ros.nodes.launcher:viewer',
    'bringup = robot_dynamics_ros.cli.bringup:main',
    'identify = robot_dynamics_ros.cli.identify:main',
    'precompile = robot_dynamics_ros.cli.precompile:main',
    'view = robot_dynamics_ros.cli.view:main',
    'demo = robot_dynamics_ros.demos.__main__:main',
]

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'tests', 'tests.*']),
    # Globs, so files added to these directories are installed without editing this file.
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', sorted(glob('launch/*.launch.py'))),
        ('share/' + package_name + '/config', sorted(glob('config/*.yaml') + glob('config/*.rviz'))),
        ('share/' + package_name + '/urdf', sorted(glob('urdf/*.urdf'))),
        ('share/' + package_name + '/worlds', sorted(glob('worlds/*.xml'))),
    ] + ament_executables(),
    install_requires=RUNTIME,
    python_requires='>=3.10',
    cmdclass={'install': InstallAndPrecompile, 'build_py': BuildWithoutCaches},
    zip_safe=True,
    maintainer='robot_dynamics_ros maintainers',
    maintainer_email='maintainer@example.com',
    description='Rigid-body dynamics (Modern Robotics ch. 9) with ROS 2 nodes.',
    license='Apache-2.0',
    # setuptools >= 72 ignores tests_require; colcon reads the 'test' extra.
    extras_require={
        'test': ['pytest<9', 'pin', 'example-robot-data', 'hypothesis', 'modern-robotics', 'urdfdom-py',
                 'xacro>=2.0'],
        # A .xacro robot description (urdf_path, urdf:=, --urdf) is expanded with the ROS xacro (2.x:
        # $(find pkg) through the ament index), imported only then: pip install '.[xacro]'.
        'xacro': ['xacro>=2.0'],
        # simulator_node engine:=mujoco (contacts, worlds, meshes), imported only then:
        # pip install '.[mujoco]'.
        'mujoco': ['mujoco>=3.3'],
        'jazzy': [f'ros-jazzy-{name}' for name in ROS_PACKAGES],
        'kilted': [f'ros-kilted-{name}' for name in ROS_PACKAGES],
    },
    entry_points={'console_scripts': ENTRY_POINTS},
)
