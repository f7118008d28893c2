"""rclpy nodes around robot_dynamics_ros.dynamics: parameters, robot_description, name mapping,
messages. No dynamics here (the core they call is robot_dynamics_ros.dynamics; see README.md).

- dynamics_node.DynamicsNode ('dynamics_node'): g(q), c(q, q̇), M(q), Λ(q) of /joint_states.
- computed_torque_node.ComputedTorqueController ('computed_torque_controller').
- simulator_node.SimulatorNode ('simulator_node').
"""
