"""rclpy nodes around robot_dynamics_ros.dynamics: parameters, robot_description, name mapping,
messages. No dynamics here (see docs/core-api.md for the core they call).

- dynamics_node.DynamicsNode ('dynamics_node'): g(q), c(q, q̇), M(q), Λ(q) of /joint_states.
- computed_torque_node.ComputedTorqueController ('computed_torque_controller').
- simulator_node.SimulatorNode ('simulator_node').
"""
