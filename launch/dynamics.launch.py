"""The dynamics node and the external torque estimator, for a real robot (or any source of
/joint_states).

    ros2 launch robot_dynamics_ros dynamics.launch.py [urdf:=FILE] [xacro_args:='name:=value ...']
        [config:=FILE] [params_file:=FILE] [namespace:=] [joint_states_topic:=joint_states]
        [use_sim_time:=false] [log_level:=info] [hardware:=ros2_control|franka|ur|kinova|kuka_fri]
        [feedforward:=false] [publish_tf:=true]

    /joint_states --> dynamics_node --> ~/gravity_torques, ~/coriolis_torques (JointState effort),
                  |                     ~/mass_matrix, ~/task_space_inertia (Float64MultiArray)
                  +-> external_torque_estimator --> ~/external_torques (JointState effort),
                                        ~/external_wrench (WrenchStamped), ~/contact (Bool)
                  +-> state_publisher --> /tf, /tf_static (publish_tf:=true; robot_state_publisher's job)

Without `urdf` the nodes take the robot model from the robot_description topic (transient local,
as robot_state_publisher publishes it on a ros2_control robot); a xacro urdf (.xacro, a vendor's
description) is expanded with xacro_args:=, e.g. urdf:=/path/ur.urdf.xacro
xacro_args:="ur_type:=ur5e name:=ur". Topic names are relative: with
namespace:=arm the nodes are /arm/dynamics_node and /arm/external_torque_estimator and read
/arm/joint_states and /arm/robot_description (remap the joint states with joint_states_topic:=,
e.g. /joint_states); the config file's sections are keyed /**/<node> and apply under any
namespace. The same graph as `python -m robot_dynamics_ros.cli.bringup --graph dynamics [--urdf FILE]`,
from the same parameter file, config/dynamics.yaml.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'robot_dynamics_ros'


def generate_launch_description():
    share = FindPackageShare(PACKAGE)

    arguments = [
        DeclareLaunchArgument(
            'urdf',
            default_value='',
            description='URDF file of the robot, or a xacro file (.xacro) expanded with xacro_args; '
                        'empty: take the URDF from the /robot_description topic.',
        ),
        DeclareLaunchArgument(
            'xacro_args',
            default_value='',
            description='Arguments of a xacro urdf, as on xacro\'s command line: name:=value separated '
                        'by spaces, e.g. "ur_type:=ur5e name:=ur" (default: none, the file\'s defaults).',
        ),
        DeclareLaunchArgument(
            'config',
            default_value=PathJoinSubstitution([share, 'config', 'dynamics.yaml']),
            description='Parameter file with dynamics_node and external_torque_estimator sections '
                        '(chain, gravity, which quantities to publish).',
        ),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([share, 'config', 'no_overrides.yaml']),
            description='A parameter file applied after config, e.g. the armature and effort_offset '
                        'that `python -m robot_dynamics_ros.cli.identify robot` writes beside the '
                        'identified URDF (default: none).',
        ),
        DeclareLaunchArgument(
            'joint_states_topic',
            default_value='joint_states',
            description='Topic the robot\'s joint states arrive on (sensor_msgs/JointState); relative '
                        'names are in the namespace.',
        ),
        DeclareLaunchArgument(
            'namespace',
            default_value='',
            description='Namespace of the two nodes (their outputs are ~/ topics; their inputs relative '
                        'topics in it).',
        ),
        DeclareLaunchArgument(
            'use_sim_time',
            default_value='false',
            choices=['true', 'false'],
            description='Follow /clock (when the joint states come from a simulator).',
        ),
        DeclareLaunchArgument(
            'hardware',
            default_value='ros2_control',
            choices=['ros2_control', 'franka', 'ur', 'kinova', 'kuka_fri'],
            description="The robot's hardware_profile (doc/hardware.md): how its /joint_states efforts "
                        'are turned into joint torques (the estimator, the payload identification) and '
                        "what ~/feedforward_command leaves to the firmware.",
        ),
        DeclareLaunchArgument(
            'feedforward',
            default_value='false',
            choices=['true', 'false'],
            description='Also run trajectory_feedforward: a FollowJointTrajectory relay on '
                        "/trajectory_feedforward/follow_joint_trajectory that fills every point's effort "
                        "with the model's inverse dynamics and hands the goal to its downstream_action "
                        "(ros2_control's JointTrajectoryController, /joint_trajectory_controller/"
                        'follow_joint_trajectory, unless the config says otherwise).',
        ),
        DeclareLaunchArgument(
            'publish_tf',
            default_value='true',
            choices=['true', 'false'],
            description='Run state_publisher: the links on /tf and /tf_static from the joint states '
                        "(robot_state_publisher's semantics; false where the arm's bring-up runs "
                        'robot_state_publisher already).',
        ),
        DeclareLaunchArgument(
            'log_level',
            default_value='info',
            choices=['debug', 'info', 'warn', 'error', 'fatal'],
            description='Log level of the two nodes.',
        ),
    ]

    # The two nodes take the same file, URDF, clock, topic and log level.
    common = dict(
        package=PACKAGE,
        namespace=LaunchConfiguration('namespace'),
        output='screen',
        parameters=[
            LaunchConfiguration('config'),
            LaunchConfiguration('params_file'),
            {
                'urdf_path': ParameterValue(LaunchConfiguration('urdf'), value_type=str),
                'xacro_args': ParameterValue(LaunchConfiguration('xacro_args'), value_type=str),
                'hardware_profile': ParameterValue(LaunchConfiguration('hardware'), value_type=str),
                'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'),
                                               value_type=bool),
            },
        ],
        remappings=[('joint_states', LaunchConfiguration('joint_states_topic'))],
        ros_arguments=['--log-level', LaunchConfiguration('log_level')],
    )
    dynamics = Node(executable='dynamics_node', name='dynamics_node', **common)
    estimator = Node(executable='external_torque_estimator', name='external_torque_estimator', **common)
    feedforward = Node(executable='trajectory_feedforward', name='trajectory_feedforward',
                       condition=IfCondition(LaunchConfiguration('feedforward')), **common)
    state_publisher = Node(executable='state_publisher', name='state_publisher',
                           condition=IfCondition(LaunchConfiguration('publish_tf')), **common)
    return LaunchDescription(arguments + [dynamics, estimator, feedforward, state_publisher])
