"""robot_dynamics_ros.dynamics: rigid-body dynamics of fixed-base kinematic trees (Modern Robotics ch. 9).

ROS-free. Every function takes the Model first, then numpy arrays in model.joint_names order: the
independent coordinates (a URDF mimic joint has none of its own; results are the projections of the
full-body quantities onto the coordinates, M_r = Gᵀ M G, τ_r = Gᵀ τ, J_r = J G: see Model).
Spatial vectors are angular first: twist V = (ω, v), wrench F = (m, f). Equation of motion:
τ = M(q) q̈ + c(q, q̇) + g(q) + Jᵀ(q) F_tip (eq. 9.81). Units SI: rad or m, rad/s or m/s, N·m or N, kg.

Equation numbers (eq. 9.x) are those of the chapter text this package was built from, "Chapter 9,
Dynamics of Open Chains" (a draft of Modern Robotics, eqs. 9.1–9.99). In the published book (Lynch
and Park, *Modern Robotics*, 2017) this chapter is Chapter 8, so eq. 9.x corresponds to an eq. 8.x
there; the numbering within the chapter was not checked against the book and may differ slightly.
Type hints: array inputs are numpy.typing.ArrayLike (converted to float64, or a ValueError naming
the argument); results are new numpy arrays that the caller owns.
"""
from __future__ import annotations

from .all_terms import AllTerms, compute_all_terms
from .base_parameters import BaseParameters, base_parameters
from .closed_form import ClosedFormDynamics, closed_form_dynamics
from .contact import MomentumObserver, external_wrench, momentum_balance
from .control import computed_torque
from .coriolis import christoffel_symbols, coriolis_matrix, mass_matrix_derivatives
from .derivatives import (
    forward_dynamics_derivatives,
    inverse_dynamics_derivatives,
    linearize,
    linearize_trajectory,
)
from .energy import kinetic_energy, potential_energy
from .excitation import ExcitationTrajectory, JointTrajectoryPoints, excitation_trajectory
from .forward_dynamics import forward_dynamics, forward_dynamics_trajectory, forward_dynamics_via_mass_matrix
from .friction import friction_torques
from .identification import (
    PayloadEstimate,
    identify_payload,
    identify_payload_from_log,
    inertial_parameters,
    joint_torque_regressor,
    joint_torque_regressor_trajectory,
    with_inertial_parameters,
    with_payload,
)
from .integrators import (
    SimulationResult,
    euler_step,
    rk4_step,
    semi_implicit_euler_step,
    simulate,
    simulate_batch,
)
from .inverse_dynamics import (
    bias_forces,
    coriolis_forces,
    gravity_torques,
    inverse_dynamics,
    inverse_dynamics_trajectory,
)
from .jacobians import frame_pose, jacobian, jacobian_derivative
from .limits import effort_limits, enforce_position_limits, saturate_effort
from .mass_matrix import mass_matrix, mass_matrix_trajectory, mass_matrix_via_jacobians
from .model import Data, Model, with_armature
from .modern_robotics import from_modern_robotics, to_modern_robotics
from .optimal_control import OptimalControlSolution, ReachingProblem, solve_optimal_control
from .robot_identification import RobotEstimate, identify_robot
from .task_space import task_space_bias, task_space_inertia
from .task_space_control import pose_error, task_space_control
from .threads import get_num_threads, set_num_threads
from .urdf import load_urdf
from .urdf_writer import write_urdf

__all__ = [
    "Model", "Data", "load_urdf", "write_urdf", "with_armature", "from_modern_robotics", "to_modern_robotics",
    "compute_all_terms", "AllTerms",
    "inverse_dynamics", "inverse_dynamics_trajectory", "gravity_torques", "coriolis_forces", "bias_forces",
    "mass_matrix", "mass_matrix_via_jacobians", "mass_matrix_trajectory",
    "coriolis_matrix", "christoffel_symbols", "mass_matrix_derivatives",
    "closed_form_dynamics", "ClosedFormDynamics", "kinetic_energy", "potential_energy",
    "forward_dynamics", "forward_dynamics_via_mass_matrix", "forward_dynamics_trajectory",
    "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearize", "linearize_trajectory",
    "friction_torques", "frame_pose", "jacobian", "jacobian_derivative",
    "task_space_inertia", "task_space_bias", "computed_torque", "task_space_control", "pose_error",
    "joint_torque_regressor", "joint_torque_regressor_trajectory", "inertial_parameters",
    "with_inertial_parameters", "with_payload",
    "identify_payload", "identify_payload_from_log", "PayloadEstimate",
    "base_parameters", "BaseParameters", "identify_robot", "RobotEstimate",
    "excitation_trajectory", "ExcitationTrajectory", "JointTrajectoryPoints",
    "MomentumObserver", "external_wrench", "momentum_balance",
    "euler_step", "semi_implicit_euler_step", "rk4_step", "simulate", "simulate_batch", "SimulationResult",
    "effort_limits", "saturate_effort", "enforce_position_limits",
    "ReachingProblem", "OptimalControlSolution", "solve_optimal_control",
    "set_num_threads", "get_num_threads",
]
