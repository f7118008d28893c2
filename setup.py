"""Build script for the robot_dynamics_ros ament_python package."""

from glob import glob

from setuptools import find_packages, setup

package_name = 'robot_dynamics_ros'

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
            'dynamics_node = robot_dynamics_ros.nodes.dynamics_node:main',
            'computed_torque_controller = robot_dynamics_ros.nodes.computed_torque_node:main',
            'simulator_node = robot_dynamics_ros.nodes.simulator_node:main',
            'bringup = robot_dynamics_ros.bringup:main',
            'demo = robot_dynamics_ros.demo:main',
        ],
    },
)
