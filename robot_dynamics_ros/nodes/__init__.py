"""The rclpy nodes around robot_dynamics_ros.dynamics: parameters, robot_description, joints matched
by name, messages in and out. No dynamics and no node logic here: the core they call is
robot_dynamics_ros.dynamics, what they do between messages is robot_dynamics_ros.logic.

The nodes (module.Class, 'executable and default node name'):

- dynamics_node.DynamicsNode ('dynamics_node'): g(q), c(q, q̇), M(q), Λ(q) of /joint_states, and
  payload identification (~/identify_payload).
- computed_torque_node.ComputedTorqueController ('computed_torque_controller'): joint-space
  computed-torque control; trajectories on ~/joint_trajectory or ~/follow_joint_trajectory
  (FollowJointTrajectory, trajectory_action.py), ~/controller_state.
- task_space_controller.TaskSpaceController ('task_space_controller'): task-space control of
  tip_link to a PoseStamped target.
- mpc_controller.MpcController ('mpc_controller'): model-predictive control of tip_link to a
  PoseStamped target (box-FDDP re-plans, feedback between them); ~/predicted_path.
- external_torque_estimator.ExternalTorqueEstimator ('external_torque_estimator'): external joint
  torques and tip wrench from the measured efforts; contact flag.
- simulator_node.SimulatorNode ('simulator_node'): the forward dynamics integrated; /joint_states,
  /clock.
- trajectory_feedforward.TrajectoryFeedforward ('trajectory_feedforward'): a FollowJointTrajectory
  relay that fills every point's effort with the model's inverse dynamics for ros2_control's
  JointTrajectoryController.

What they share: common.py (parameters, executor, spin, run_node), stop.py (SIGINT/SIGTERM from the
first moment), launcher.py (the executables), model_source.py (the model from parameters or
/robot_description), joint_state_input.py, controller.py (the controllers' base), effort_command.py,
conversions.py and serialized.py (messages), diagnostics_publisher.py (/diagnostics), pose_target.py
(the pose target of task_space_controller and mpc_controller), hardware_parameters.py (the hardware
profile's parameters: logic/hardware.py's conventions at every node's boundary).
"""
