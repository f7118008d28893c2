"""Build script for the robot_dynamics_ros ament_python package."""

import os
import shutil
import subprocess
import sys
from glob import glob

from setuptools import find_packages, setup
from setuptools.command.install import install

package_name = 'robot_dynamics_ros'


class InstallAndPrecompile(install):
    """install, then compile the installed copy's kernels into numba's cache beside them
    (``python -m robot_dynamics_ros.precompile``), so that the installed nodes start at once:
    numba keeps its cache beside the sources (kernels/__pycache__): the source tree's is copied
    first, then whatever it lacks is compiled. ROBOT_DYNAMICS_ROS_NO_PRECOMPILE=1 skips this (the
    nodes then compile on their first start). A failure is reported and does not fail the install.
    """

    def run(self):
        super().run()
        if os.environ.get('ROBOT_DYNAMICS_ROS_NO_PRECOMPILE'):
            return
        lib = os.path.abspath(self.install_lib)
        # The source tree's compiled kernels, if any: numba's cache is keyed on a hash of the
        # kernel sources (kernels/cache.py), not on their location, so the installed copy loads
        # what matches and compiles only the rest.
        cache = os.path.join('dynamics', 'kernels', '__pycache__')
        source_cache = os.path.join(os.path.dirname(os.path.abspath(__file__)), package_name, cache)
        installed_cache = os.path.join(lib, package_name, cache)
        if os.path.isdir(source_cache):
            os.makedirs(installed_cache, exist_ok=True)
            for name in os.listdir(source_cache):
                if name.endswith(('.nbi', '.nbc')):
                    shutil.copy2(os.path.join(source_cache, name), installed_cache)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (lib, os.environ.get('PYTHONPATH')) if p))
        # cwd: the installed copy, so that `-m` does not import the source tree instead
        result = subprocess.run([sys.executable, '-m', f'{package_name}.precompile', '--quiet'],
                                cwd=lib, env=env)
        if result.returncode != 0:
            print(f'{package_name}: precompiling the kernels failed (exit {result.returncode}); '
                  'the nodes will compile them on first start', file=sys.stderr)

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'tests', 'tests.*']),
    # Globs, so files added to these directories are installed without editing this file.
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', sorted(glob('launch/*.launch.py'))),
        ('share/' + package_name + '/config', sorted(glob('config/*.yaml'))),
        ('share/' + package_name + '/urdf', sorted(glob('urdf/*.urdf'))),
    ],
    install_requires=['setuptools'],
    cmdclass={'install': InstallAndPrecompile},
    zip_safe=True,
    maintainer='robot_dynamics_ros maintainers',
    maintainer_email='maintainer@example.com',
    description='Rigid-body dynamics (Modern Robotics ch. 9) with ROS 2 nodes.',
    license='Apache-2.0',
    # setuptools >= 72 ignores tests_require; colcon reads the 'test' extra.
    extras_require={
        'test': ['pytest<9', 'pin', 'example-robot-data', 'hypothesis', 'modern-robotics'],
    },
    entry_points={
        'console_scripts': [
            'dynamics_node = robot_dynamics_ros.nodes.launcher:dynamics_node',
            'computed_torque_controller = robot_dynamics_ros.nodes.launcher:computed_torque_controller',
            'simulator_node = robot_dynamics_ros.nodes.launcher:simulator_node',
            'external_torque_estimator = robot_dynamics_ros.nodes.launcher:external_torque_estimator',
            'task_space_controller = robot_dynamics_ros.nodes.launcher:task_space_controller',
            'bringup = robot_dynamics_ros.bringup:main',
            'demo = robot_dynamics_ros.demo:main',
        ],
    },
)
