"""The nodes' logic, without ROS: what each node does between its messages, in modules that import no
rclpy and are tested by test/logic (test_ros_free walks this package).

- ``input_guard``: bad input (plausibility of joint states, continuity, bounded warnings);
- ``cdr``: reading a serialized JointTrajectory's sizes and arrays before rclpy converts it;
- ``interpolation``, ``reference_schedule``, ``trajectory_goal``: the joint controller's reference
  (cubic/quintic interpolation, limit checks, the schedule over time, FollowJointTrajectory goals);
- ``pose_profile``, ``task_frame``: the task-space controller's target profile and tip frame;
- ``model_predictive``: re-planning a reaching problem from each measured state and the command between
  re-plans (the MPC controller's logic);
- ``contact_estimation``: the external torque estimator's momentum observer;
- ``payload_log``: the joint states kept for payload identification;
- ``simulation``: the simulator node's integration;
- ``diagnostics``: the /diagnostics statistics and levels.
"""
