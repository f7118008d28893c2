"""Model-predictive control of a frame pose (ROS-free): what the mpc_controller node does between its
messages.

Every re-plan solves the reaching problem (dynamics.ReachingProblem) from the measured state x, warm
started from the previous plan shifted by the time elapsed (a gap at its first knot when the arm did not
follow the plan exactly, which FDDP closes), within `max_iterations` and a time budget. Between
re-plans, at every joint state, the command is the plan's torque at the knot in force plus its feedback,

    τ = u_k + K_k (x - x̄_k),    k = ⌊(t - t_plan) / dt⌋  (clamped to the horizon),

clamped to the effort limits: the gains of the last Riccati recursion keep the arm on the plan between
re-plans.

A new target never makes the arm jump: the goal the cost sees moves along the task-space controller's
screw profile (pose_profile.PoseReference: a straight line in SE(3) with a minimum-jerk time scaling
under the speed limits, starting from the reference's current pose, twist and acceleration), and each
re-plan targets the profile's pose at the re-plan's time, so the goal moves by a small step from one
re-plan to the next instead of jumping to a far pose. (Aiming at the profile's pose a horizon ahead
would lead the arm better along the profile, but at a new target that pose is already a third of the
way there, and the torques step by tens of N·m.) Before any target the reference holds the frame's pose
at start-up (or after a hold).
"""
import math

import numpy as np

from robot_dynamics_ros.dynamics import ReachingProblem, frame_pose, solve_optimal_control
from robot_dynamics_ros.logic.pose_profile import PoseReference


class ModelPredictiveController:
    """Re-planning and the command between re-plans (module docstring). Times in s on one clock (the
    node's); states x = (q, q̇) in model.joint_names order.

    problem: the ReachingProblem to re-solve (its horizon, dt, weights, frame and torque limits; its x0
    and T_goal are set at each re-plan); max_iterations, time_budget (s): the limits of one re-plan;
    cold_iterations: those of a re-plan without a previous plan to start from (at start-up and after a
    hold: from the quasi-static torques, further from the optimum); max_linear_velocity (m/s),
    max_angular_velocity (rad/s): the target profile's.
    """

    def __init__(self, problem: ReachingProblem, *, max_iterations=10, time_budget=None,
                 max_linear_velocity=0.1, max_angular_velocity=0.5, cold_iterations=50):
        self.problem = problem
        self.max_iterations = int(max_iterations)
        self.cold_iterations = int(cold_iterations)
        self.time_budget = time_budget
        self.reference = PoseReference(max_linear_velocity, max_angular_velocity)
        self.plan = None            # the last OptimalControlSolution
        self.plan_time = None       # the time of its knot 0
        self.effort_limit = np.asarray(problem.model.effort_limit, dtype=float)

    # -- the target ------------------------------------------------------------------------------
    def hold(self, x, t):
        """Hold the frame where it is at state x (from time t on): the reference stops, the plan is
        dropped (the next re-plan starts from the quasi-static torques)."""
        n = self.problem.model.nq
        self.reference.hold(frame_pose(self.problem.model, x[:n], self.problem.frame), t)
        self.plan = self.plan_time = None

    def set_target(self, T_goal, x, t):
        """Move the frame's reference to T_goal (4 x 4, root frame) from time t; returns the profile's
        duration (s). From the pose at state x when nothing is held yet."""
        if self.reference.empty:
            self.hold(x, t)
        return self.reference.move_to(np.asarray(T_goal, dtype=float), t)

    @property
    def has_reference(self):
        return not self.reference.empty

    # -- re-planning -----------------------------------------------------------------------------
    def replan(self, x, t):
        """Solve from state x at time t (module docstring); returns the solution (also kept as the plan)."""
        problem = self.problem
        N, dt = problem.horizon, problem.dt
        T_goal, _, _ = self.reference.sample(t)
        problem.x0 = x
        problem.T_goal = T_goal
        xs_init = us_init = None
        iterations = self.cold_iterations
        if self.plan is not None:
            shift = min(max(int(round((t - self.plan_time) / dt)), 0), N)
            if shift < N:
                xs_init = np.vstack([self.plan.xs[shift:], np.repeat(self.plan.xs[-1:], shift, axis=0)])
                us_init = np.vstack([self.plan.us[shift:], np.repeat(self.plan.us[-1:], shift, axis=0)])
                iterations = self.max_iterations
        self.plan = solve_optimal_control(problem, xs_init=xs_init, us_init=us_init,
                                          max_iterations=iterations, time_limit=self.time_budget)
        self.plan_time = t
        return self.plan

    def command(self, x, t):
        """τ = u_k + K_k (x - x̄_k) of the plan in force at time t, clamped to the effort limits; None
        without a plan."""
        if self.plan is None:
            return None
        N, dt = self.problem.horizon, self.problem.dt
        k = min(max(int(math.floor((t - self.plan_time) / dt)), 0), N - 1)
        tau = self.plan.us[k] + self.plan.K[k] @ (x - self.plan.xs[k])
        return np.clip(tau, -self.effort_limit, self.effort_limit)

    def predicted_poses(self):
        """The frame's poses along the plan (N + 1, 4, 4), for ~/predicted_path."""
        n = self.problem.model.nq
        return np.array([frame_pose(self.problem.model, x[:n], self.problem.frame) for x in self.plan.xs])
