"""The logic the nodes use imports no ROS: every module of robot_dynamics_ros.logic (found by walking
the package), the identify command line, and the tests of test/logic run without rclpy."""

import os
import pathlib
import pkgutil
import subprocess
import sys
import textwrap

import robot_dynamics_ros
import robot_dynamics_ros.logic

HERE = pathlib.Path(__file__).parent
MODULES = tuple(sorted(f'robot_dynamics_ros.logic.{m.name}'
                       for m in pkgutil.iter_modules(robot_dynamics_ros.logic.__path__))) + (
    'robot_dynamics_ros.cli.identify',)
ROS_PACKAGES = ('rclpy', 'rcl_interfaces', 'rosidl_runtime_py', 'builtin_interfaces',
                'sensor_msgs', 'std_msgs', 'trajectory_msgs', 'geometry_msgs', 'diagnostic_msgs')


def test_the_logic_package_is_found_whole():
    assert len(MODULES) >= 12 and 'robot_dynamics_ros.logic.interpolation' in MODULES


def test_logic_modules_and_their_tests_import_no_ros():
    tests = sorted(p.stem for p in HERE.glob('test_*.py'))
    code = textwrap.dedent(f"""
        import importlib, sys
        for name in {MODULES!r} + {tuple(tests)!r}:
            importlib.import_module(name)
        ros = sorted(m for m in sys.modules if m.split('.')[0] in {ROS_PACKAGES!r})
        print(ros)
        sys.exit(1 if ros else 0)
        """)
    package_parent = pathlib.Path(robot_dynamics_ros.__file__).resolve().parents[1]
    path = os.pathsep.join([str(package_parent), str(HERE), os.environ.get('PYTHONPATH', '')])
    result = subprocess.run([sys.executable, '-c', code], cwd=HERE, capture_output=True,
                            text=True, env={**os.environ, 'PYTHONPATH': path}, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
