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

Re-planning off the control path: ``start_replan`` hands a warm re-plan to the planning thread (a
logic.background_job.BackgroundJob: how work leaves and re-enters the node's executor is said there)
and returns at once; ``collect``, called at every control step, polls it and puts the plan it finished
in force (at the next state after it finished).
The solver's compiled loops release the GIL and work on the problem's own workspace, so the control
path (``command``, microseconds) runs beside a re-plan instead of after it. While a re-plan runs, the
previous plan stays in force with its gains, which is what they are for; its knot 0 is the state it was
planned from, so a plan put in force a solve time later is sampled at that time (the gains correct
for the state's drift since). A cold re-plan (no plan to warm-start from: at start-up, after a hold, or
after a failed re-plan) runs in the caller's thread (``replan``), after any re-plan still in the
planning thread has finished: commanding nothing better than gravity while it ran would let a moving
arm coast.
"""
import math
from typing import NamedTuple

import numpy as np

from robot_dynamics_ros.dynamics import ReachingProblem, frame_pose, solve_optimal_control
from robot_dynamics_ros.logic.background_job import BackgroundJob
from robot_dynamics_ros.logic.pose_profile import PoseReference


class _Job(NamedTuple):
    """A re-plan, prepared in the control thread: the planning thread reads nothing else that the
    control thread writes."""
    x: np.ndarray           # the measured state
    t: float                # its time
    T_goal: np.ndarray      # the reference's pose at t
    x_ref: np.ndarray       # the state cost's target
    xs_init: np.ndarray     # the warm start (None: cold)
    us_init: np.ndarray
    iterations: int


class ModelPredictiveController:
    """Re-planning and the command between re-plans (module docstring). Times in s on one clock (the
    node's); states x = (q, q̇) in model.joint_names order.

    problem: the ReachingProblem to re-solve (its horizon, dt, weights, frame and torque limits; its x0
    and T_goal are set at each re-plan); max_iterations, time_budget (s): the limits of one re-plan;
    cold_iterations: those of a re-plan without a previous plan to start from (at start-up and after a
    hold: from the quasi-static torques, further from the optimum); max_linear_velocity (m/s),
    max_angular_velocity (rad/s): the target profile's; planning_idle: the planning thread under
    Linux's SCHED_IDLE policy, so that a joint state's callback (and the DDS threads) preempt a
    re-plan at once: on a 2-core machine the states that arrived in the first milliseconds of a re-plan
    waited up to 2 ms for a core at niceness +10 (doc/performance.md, "Nodes"); on cores kept busy by
    other processes a re-plan then gets less time (mpc_controller turns it on; off by default here, for
    a caller whose re-plans must keep their pace on busy cores); planning_niceness: added to the planning
    thread's niceness instead, when planning_idle is False.
    """

    def __init__(self, problem: ReachingProblem, *, max_iterations=10, time_budget=None,
                 max_linear_velocity=0.1, max_angular_velocity=0.5, cold_iterations=50,
                 planning_niceness=10, planning_idle=False):
        self.problem = problem
        self.max_iterations = int(max_iterations)
        self.cold_iterations = int(cold_iterations)
        self.time_budget = time_budget
        self.reference = PoseReference(max_linear_velocity, max_angular_velocity)
        self.plan = None            # the OptimalControlSolution in force
        self.plan_time = None       # the time of its knot 0
        self.effort_limit = np.asarray(problem.model.effort_limit, dtype=float)
        self.goal_pose = None       # T_goal of the last re-plan begun (the profile's pose at its time)
        # the warm re-plans; hold() and drop() cancel it: a re-plan begun before comes back superseded
        self._planner = BackgroundJob('mpc-planning', niceness=planning_niceness, idle=planning_idle)

    # -- the target ------------------------------------------------------------------------------
    def hold(self, x, t):
        """Hold the frame where it is at state x (from time t on): the reference stops, the plan is
        dropped (the next re-plan starts from the quasi-static torques)."""
        n = self.problem.model.nq
        self.reference.hold(frame_pose(self.problem.model, x[:n], self.problem.frame), t)
        self.drop()

    def drop(self):
        """Drop the plan in force and any re-plan under way (the next re-plan is cold)."""
        self.plan = self.plan_time = None
        self._planner.cancel()

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
    def replan(self, x, t, x_ref=None):
        """Solve from state x at time t in this thread (module docstring), warm started from the plan in
        force if any, with x_ref (2n,) as the state cost's target (None: the problem's); returns the
        solution, now the plan in force. Waits first for a re-plan under way in the planning thread."""
        self._planner.wait()
        self._put_in_force(self._planner.poll())
        job = self._job(x, t, x_ref)
        plan = self._solve(job)
        self.plan, self.plan_time = plan, t
        return plan

    def start_replan(self, x, t, x_ref=None):
        """Begin a warm re-plan from x at t (as replan) in the planning thread and return at once: True
        if begun; False (nothing begun) while a re-plan is under way or without a plan in force to warm
        start from (then call replan)."""
        if self._planner.running:
            return False
        self._put_in_force(self._planner.poll())    # (a finished re-plan not collected yet: the newer start)
        if self.plan is None:
            return False
        job = self._job(x, t, x_ref)
        if job.xs_init is None:             # the plan in force is over: nothing to warm start from
            return False
        self._planner.submit(lambda: self._solve(job), tag=job)
        return True

    def collect(self):
        """The plan the planning thread has finished since the last call, now in force; None if none (or
        if it was begun before a hold or drop). Raises what the re-plan raised (the plan is then
        dropped)."""
        return self._put_in_force(self._planner.poll())

    @property
    def planning(self):
        """Whether a re-plan is under way in the planning thread."""
        return self._planner.running

    def close(self, timeout=None):
        """End the planning thread (after the re-plan under way; at most `timeout` s waited)."""
        self._planner.close(timeout)

    def _job(self, x, t, x_ref):
        problem = self.problem
        N, dt = problem.horizon, problem.dt
        T_goal, _, _ = self.reference.sample(t)
        x = np.array(x, dtype=float)
        x_ref = problem.x_ref if x_ref is None else np.array(x_ref, dtype=float)
        xs_init = us_init = None
        iterations = self.cold_iterations
        if self.plan is not None:
            shift = min(max(int(round((t - self.plan_time) / dt)), 0), N)
            if shift < N:
                plan = self.plan
                xs_init = np.vstack([plan.xs[shift:], np.repeat(plan.xs[-1:], shift, axis=0)])
                us_init = np.vstack([plan.us[shift:], np.repeat(plan.us[-1:], shift, axis=0)])
                iterations = self.max_iterations
        self.goal_pose = T_goal
        return _Job(x, t, T_goal, x_ref, xs_init, us_init, iterations)

    def _solve(self, job):
        """The re-plan of `job` (the only code that writes the problem)."""
        problem = self.problem
        problem.x0 = job.x
        problem.T_goal = job.T_goal
        problem.x_ref = job.x_ref
        return solve_optimal_control(problem, xs_init=job.xs_init, us_init=job.us_init,
                                     max_iterations=job.iterations, time_limit=self.time_budget)

    def _put_in_force(self, outcome):
        """A re-plan's outcome (BackgroundJob.poll) in force: None if none or superseded (begun before a
        hold or drop); what it raised is raised here, the plan dropped."""
        if outcome is None or outcome.superseded:
            return None
        if outcome.error is not None:
            self.drop()
        plan = outcome.result()
        self.plan, self.plan_time = plan, outcome.tag.t
        return plan

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
