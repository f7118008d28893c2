"""The logic the nodes use imports no ROS: these modules and their tests run without rclpy."""

import os
import pathlib
import subprocess
import sys
import textwrap

import robot_dynamics_ros

HERE = pathlib.Path(__file__).parent
MODULES = ('robot_dynamics_ros.simulation', 'robot_dynamics_ros.reference_schedule',
           'robot_dynamics_ros.interpolation', 'robot_dynamics_ros.input_guard', 'robot_dynamics_ros.cdr',
           'robot_dynamics_ros.task_frame', 'robot_dynamics_ros.contact_estimation',
           'robot_dynamics_ros.pose_profile', 'robot_dynamics_ros.payload_log', 'robot_dynamics_ros.identify',
           'robot_dynamics_ros.trajectory_goal', 'robot_dynamics_ros.diagnostics')
ROS_PACKAGES = ('rclpy', 'rcl_interfaces', 'rosidl_runtime_py', 'builtin_interfaces',
                'sensor_msgs', 'std_msgs', 'trajectory_msgs', 'geometry_msgs', 'diagnostic_msgs')


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
