"""Simulated arm under computed-torque control (joint space, or task space with controller:=task_space),
with the dynamics node and the external torque estimator.

    ros2 launch robot_dynamics_ros simulation.launch.py [controller:=computed_torque|task_space|mpc]
        [urdf:=FILE] [xacro_args:='name:=value ...'] [config:=FILE] [params_file:=FILE] [namespace:=]
        [joint_states_topic:=joint_states] [effort_command_topic:=effort_controller/commands]
        [use_sim_time:=true] [real_time_factor:=1.0] [processes:=false] [log_level:=info]
        [hardware:=ros2_control|franka|ur|kinova|kuka_fri] [feedforward:=false] [publish_tf:=true]
        [engine:=rigid_body|mujoco] [world:=FILE]

    simulator_node --/joint_states--+--> computed_torque_controller --+   (or task_space_, mpc_controller)
          ^                         |                                  |
          |                         +--> dynamics_node --> ~/gravity_torques, ~/mass_matrix, ...
          |                         +--> external_torque_estimator --> ~/external_torques,
          |                         |        ~/external_wrench, ~/contact
          +------------- effort_controller/commands -------------------+
                                    +--> state_publisher --> /tf, /tf_static (publish_tf:=true)

The same graph as `python -m robot_dynamics_ros.cli.bringup --graph simulation` (nodes listed in
robot_dynamics_ros/cli/node_graph.py, GRAPHS['simulation'] and CONTROLLERS), from the same parameter file,
config/simulation.yaml. Exactly one controller commands the simulator. Send a trajectory to
/computed_torque_controller/joint_trajectory (trajectory_msgs/JointTrajectory), or with
controller:=task_space a tool pose to /task_space_controller/target_pose (geometry_msgs/PoseStamped)
(controller:=mpc: to /mpc_controller/target_pose), or run `python -m robot_dynamics_ros.demos
[--task-space|--mpc]`. Topic names are relative: with
namespace:=arm every node is under /arm (/arm/joint_states, /arm/effort_controller/commands,
/arm/computed_torque_controller/joint_trajectory, ...) and the config file's /**/<node> sections
still apply; joint_states_topic:= and effort_command_topic:= remap the two topics the graph closes
its loop through. /clock stays global. urdf:= may be a vendor's xacro file (.xacro, .urdf.xacro),
which every node expands with xacro_args:= (urdf_path and xacro_args parameters), e.g.
urdf:=/path/ur.urdf.xacro xacro_args:="ur_type:=ur5e name:=ur"; the simulator publishes the expanded
URDF on /robot_description.

By default the four nodes run in ONE process (the `bringup` executable, one EventsExecutor: the same
graph as `python -m robot_dynamics_ros.cli.bringup`): one executor woken per state, where four
processes contend for the cores (doc/launch.md; the rates measured: doc/performance.md, section
"Launch"); processes:=true starts one process per node instead (each node its own launch action).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import (
    AndSubstitution,
    EqualsSubstitution,
    LaunchConfiguration,
    PathJoinSubstitution,
)
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'robot_dynamics_ros'


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    urdf = LaunchConfiguration('urdf')
    xacro_args = LaunchConfiguration('xacro_args')
    config = LaunchConfiguration('config')
    params_file = LaunchConfiguration('params_file')
    use_sim_time = LaunchConfiguration('use_sim_time')
    real_time_factor = LaunchConfiguration('real_time_factor')
    log_level = LaunchConfiguration('log_level')

    arguments = [
        DeclareLaunchArgument(
            'controller',
            default_value='computed_torque',
            choices=['computed_torque', 'task_space', 'mpc'],
            description='The controller that commands the simulator: computed_torque '
                        '(computed_torque_controller, joint trajectories), task_space '
                        '(task_space_controller, tool poses) or mpc (mpc_controller, tool poses).',
        ),
        DeclareLaunchArgument(
            'urdf',
            default_value=PathJoinSubstitution([share, 'urdf', 'ur5e.urdf']),
            description='URDF of the simulated robot, loaded by all four nodes (urdf_path); '
                        'the simulator also publishes it on /robot_description. A xacro file '
                        '(.xacro) is expanded with xacro_args. Another robot '
                        'needs its own config (initial positions, gains, tip link).',
        ),
        DeclareLaunchArgument(
            'xacro_args',
            default_value='',
            description='Arguments of a xacro urdf, as on xacro\'s command line: name:=value separated '
                        'by spaces, e.g. "ur_type:=ur5e name:=ur" (default: none, the file\'s defaults).',
        ),
        DeclareLaunchArgument(
            'config',
            default_value=PathJoinSubstitution([share, 'config', 'simulation.yaml']),
            description='Parameter file with simulator_node, computed_torque_controller, '
                        'task_space_controller, dynamics_node and external_torque_estimator sections '
                        '(<node_name>: ros__parameters: ...).',
        ),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([share, 'config', 'no_overrides.yaml']),
            description='A parameter file applied after config to every node, e.g. the armature and '
                        'effort_offset that `python -m robot_dynamics_ros.cli.identify robot` writes beside '
                        'the identified URDF (default: none).',
        ),
        DeclareLaunchArgument(
            'namespace',
            default_value='',
            description='Namespace of every node; their topics are relative, so the graph moves into it.',
        ),
        DeclareLaunchArgument(
            'joint_states_topic',
            default_value='joint_states',
            description='The joint states the simulator publishes and the others read (relative: in the '
                        'namespace).',
        ),
        DeclareLaunchArgument(
            'effort_command_topic',
            default_value='effort_controller/commands',
            description='The controller\'s effort commands to the simulator (std_msgs/Float64MultiArray).',
        ),
        DeclareLaunchArgument(
            'use_sim_time',
            default_value='true',
            choices=['true', 'false'],
            description='The simulator publishes /clock (publish_clock) and the controller and '
                        'dynamics node follow it, so the reference runs on simulated time; '
                        'needed when real_time_factor is not 1.',
        ),
        DeclareLaunchArgument(
            'real_time_factor',
            default_value='1.0',
            description='Simulated seconds per wall-clock second; 0 = as fast as possible. '
                        'Overrides the value in the config file.',
        ),
        DeclareLaunchArgument(
            'processes',
            default_value='false',
            choices=['true', 'false'],
            description='false: every node in one process (the bringup executable, one executor), which '
                        'keeps real time on small machines; true: one process per node.',
        ),
        DeclareLaunchArgument(
            'hardware',
            default_value='ros2_control',
            choices=['ros2_control', 'franka', 'ur', 'kinova', 'kuka_fri'],
            description="Every node's hardware_profile (doc/hardware.md): the simulator emulates that "
                        "arm's firmware (the gravity and friction it adds to every command, its efforts' "
                        'convention, its reaction to missing commands) and the controller, the '
                        'estimator and the dynamics node follow its conventions.',
        ),
        DeclareLaunchArgument(
            'engine',
            default_value='rigid_body',
            choices=['rigid_body', 'mujoco'],
            description="The simulator's physics: rigid_body (the package's forward dynamics) or mujoco "
                        '(MuJoCo compiled from the same URDF, with contacts: doc/tutorials/mujoco.md).',
        ),
        DeclareLaunchArgument(
            'world',
            default_value='',
            description='With engine:=mujoco: an MJCF world (floor, tables, objects) attached to the '
                        'scene, e.g. <share>/worlds/table.xml; empty: none.',
        ),
        DeclareLaunchArgument(
            'feedforward',
            default_value='false',
            choices=['true', 'false'],
            description='Also run trajectory_feedforward: a FollowJointTrajectory relay on '
                        "/trajectory_feedforward/follow_joint_trajectory that fills every point's effort "
                        "with the model's inverse dynamics and hands the goal to its downstream_action "
                        "(here computed_torque_controller's action, a stand-in for ros2_control's "
                        'JointTrajectoryController: it computes its own torque and ignores the efforts).',
        ),
        DeclareLaunchArgument(
            'publish_tf',
            default_value='true',
            choices=['true', 'false'],
            description='Run state_publisher: the links on /tf and /tf_static from the joint states, for '
                        'RViz (config/robot_dynamics.rviz) and tf2 (false where a robot_state_publisher '
                        'runs instead).',
        ),
        DeclareLaunchArgument(
            'log_level',
            default_value='info',
            choices=['debug', 'info', 'warn', 'error', 'fatal'],
            description='Log level of the four nodes.',
        ),
    ]

    urdf_path = {'urdf_path': ParameterValue(urdf, value_type=str),
                 'xacro_args': ParameterValue(xacro_args, value_type=str),
                 'hardware_profile': ParameterValue(LaunchConfiguration('hardware'), value_type=str)}
    # Every node: the namespace and the two loop topics (relative names, so they follow the namespace).
    placement = dict(namespace=LaunchConfiguration('namespace'),
                     remappings=[('joint_states', LaunchConfiguration('joint_states_topic')),
                                 ('effort_controller/commands', LaunchConfiguration('effort_command_topic'))])
    follows_clock = {'use_sim_time': ParameterValue(use_sim_time, value_type=bool)}
    ros_arguments = ['--log-level', log_level]

    processes = LaunchConfiguration('processes')
    # One process (the default): bringup starts the same nodes from the same files and arguments.
    one_process = Node(
        package=PACKAGE,
        executable='bringup',
        output='screen',
        arguments=['--graph', 'simulation', '--controller', LaunchConfiguration('controller'),
                   '--config', config, '--params-file', params_file, '--urdf', urdf,
                   '--xacro-args', xacro_args, '--hardware', LaunchConfiguration('hardware'),
                   '--engine', LaunchConfiguration('engine'), '--world', LaunchConfiguration('world'),
                   '--feedforward', LaunchConfiguration('feedforward'),
                   '--publish-tf', LaunchConfiguration('publish_tf'),
                   '--namespace', LaunchConfiguration('namespace'),
                   '--joint-states-topic', LaunchConfiguration('joint_states_topic'),
                   '--effort-command-topic', LaunchConfiguration('effort_command_topic'),
                   '--use-sim-time', use_sim_time, '--real-time-factor', real_time_factor,
                   '--ros-args', '--log-level', log_level],
        condition=UnlessCondition(processes),
    )
    # One process per node: same order as bringup, the simulator first (it makes /joint_states, /clock).
    simulator = Node(
        package=PACKAGE,
        executable='simulator_node',
        name='simulator_node',
        output='screen',
        parameters=[
            config,
            params_file,
            urdf_path,
            # The simulator makes /clock when the others follow it; it keeps the wall clock.
            {'use_sim_time': False,
             'publish_clock': ParameterValue(use_sim_time, value_type=bool)},
            {'real_time_factor': ParameterValue(real_time_factor, value_type=float),
             'engine': ParameterValue(LaunchConfiguration('engine'), value_type=str),
             'world_path': ParameterValue(LaunchConfiguration('world'), value_type=str)},
        ],
        ros_arguments=ros_arguments,
        condition=IfCondition(processes),
        **placement,
    )
    # The nodes that follow the simulator's clock take the same file, URDF, clock and log level.
    follower = dict(package=PACKAGE, output='screen',
                    parameters=[config, params_file, urdf_path, follows_clock], ros_arguments=ros_arguments,
                    **placement)
    def when(name):
        return IfCondition(AndSubstitution(processes,
                                           EqualsSubstitution(LaunchConfiguration('controller'), name)))
    controller = Node(executable='computed_torque_controller', name='computed_torque_controller',
                      condition=when('computed_torque'), **follower)
    task_space = Node(executable='task_space_controller', name='task_space_controller',
                      condition=when('task_space'), **follower)
    mpc = Node(executable='mpc_controller', name='mpc_controller', condition=when('mpc'), **follower)
    dynamics = Node(executable='dynamics_node', name='dynamics_node', condition=IfCondition(processes),
                    **follower)
    estimator = Node(executable='external_torque_estimator', name='external_torque_estimator',
                     condition=IfCondition(processes), **follower)
    feedforward = Node(executable='trajectory_feedforward', name='trajectory_feedforward',
                       condition=IfCondition(AndSubstitution(processes, LaunchConfiguration('feedforward'))),
                       **follower)
    publish_tf = IfCondition(AndSubstitution(processes, LaunchConfiguration('publish_tf')))
    state_publisher = Node(executable='state_publisher', name='state_publisher', condition=publish_tf,
                           **follower)
    return LaunchDescription(arguments + [one_process, simulator, controller, task_space, mpc,
                                          dynamics, estimator, feedforward, state_publisher])
