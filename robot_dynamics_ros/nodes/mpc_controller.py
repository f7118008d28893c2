"""mpc_controller: the tool's pose under model-predictive control.

Re-plans the reaching problem (robot_dynamics_ros.dynamics.ReachingProblem: torques over ``horizon``
knots of ``dt`` s, symplectic Euler steps of the forward dynamics, the frame-placement, state and torque
costs, the URDF's effort limits as box constraints) from the measured state at ``replan_rate``, by
box-FDDP warm started from the previous plan shifted by the time elapsed (solve_optimal_control, at most
``max_iterations`` and ``time_budget`` per re-plan); between re-plans, at every joint state (or at
``control_rate``), τ = u_k + K_k (x − x̄_k) from the last plan, clamped to the effort limits
(robot_dynamics_ros.logic.model_predictive, ROS-free). The warm re-plans run in a planning thread
beside the control path (the solver releases the GIL): a joint state never waits for a solve; the plan
a re-plan finishes is put in force at the next joint state. A cold one (at start-up, after a hold or a
failed re-plan) runs at the joint state that asks for it.

A new target never makes the arm jump: the goal the cost sees moves along the task-space controller's
screw profile (the same ``~/target_pose`` handling: nodes/pose_target.py), within
``max_linear_velocity`` and ``max_angular_velocity``, and each re-plan aims at the profile's pose at
its time (logic/model_predictive.py says why).

Topics (joint vectors in the controller's joint order: ``joints`` parameter, else model order):

- in  ``joint_states`` (sensor_msgs/JointState); in ``~/target_pose`` (geometry_msgs/PoseStamped of
  ``tip_link`` in the root link's frame; refused: another frame, NaN, a zero quaternion, out of reach).
- out ``effort_controller/commands`` (std_msgs/Float64MultiArray), as the other controllers.
- out ``~/predicted_path`` (nav_msgs/Path): the tool's poses along the last plan, in the root link's
  frame, after each re-plan while anybody subscribes.
- out ``~/desired_pose`` (geometry_msgs/PoseStamped): the goal of each re-plan (the profile's pose at its
  time), in the root link's frame, while anybody subscribes.
- ``/diagnostics``: the controllers' status plus the last re-plan's solve time and iterations, the
  median and p99 solve time, and the achieved re-plan rate (WARN below ``diagnostics_min_replan_rate``).

Services ``~/enable`` and ``~/hold``, the stale-state gravity hold (``state_timeout``) and the state-jump
handling as task_space_controller. Disabled, the controller publishes g(q).

Parameters (validated at run time; a change of the problem's rebuilds it at the next step):

- ``horizon`` (knots, 2..1000, default 50), ``dt`` (s, > 0, default 0.01);
- ``goal_weight`` (100), ``state_weight`` (0.01), ``control_weight`` (1e-5), ``terminal_goal_weight``
  (1000), each >= 0: Crocoddyl's example's cost (1, 0.1, 0.1, 1000) lets the arm sag over a receding
  horizon, where its torques pay for holding it against gravity; the defaults weigh the goal well above
  the torques. The state cost pulls towards the measured posture at rest (x_ref = (q, 0) at each
  re-plan): it damps the motion;
- ``torque_limits`` (bool, default true): the effort limits as box constraints (a URDF without them:
  an error, and the plan unconstrained; the commands are clamped to the limits there are anyway);
- ``replan_rate`` (Hz, 1..1000, default 100), ``max_iterations`` (1..1000, default 1: the real-time
  iteration scheme, one FDDP iteration per warm re-plan, the next re-plan going on from its result; a
  cold re-plan runs up to 50), ``time_budget`` (s, >= 0; 0 = 80 % of a re-plan period). On the UR5e
  one iteration per warm re-plan gives the closed loop of converged re-plans (the torques within 1e-3 N·m
  of 34 N·m, test/logic/test_model_predictive.py) at 40 % of their CPU time (0.41 ms against 1.02 ms
  for three), which is what the 1 kHz round trip's tail pays for on two cores (doc/performance.md,
  "Nodes");
- ``max_linear_velocity``, ``max_angular_velocity``, ``control_rate``, ``state_timeout``,
  ``start_enabled``, ``armature``, the model parameters: as task_space_controller.
"""
import math
from collections import deque

import numpy as np
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Path

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.diagnostics import WARN
from robot_dynamics_ros.logic.input_guard import bounded
from robot_dynamics_ros.logic.model_predictive import ModelPredictiveController
from robot_dynamics_ros.nodes.common import describe, run_node
from robot_dynamics_ros.nodes.controller import COMPUTE_ERRORS, Controller, stamp
from robot_dynamics_ros.nodes.conversions import set_pose
from robot_dynamics_ros.nodes.diagnostics_publisher import Details
from robot_dynamics_ros.nodes.pose_target import PoseTarget

__all__ = ['MpcController', 'main']

# name: (default, description, minimum, maximum); the problem's and the solver's parameters
PROBLEM_PARAMETERS = {
    'horizon': (50, 'Knots of the plan.', 2, 1000),
    'dt': (0.01, 'Seconds per knot.', 1e-4, 1.0),
    'goal_weight': (100.0, 'Weight of the frame-placement cost at every knot.', 0.0, math.inf),
    'state_weight': (0.01, 'Weight of the state cost |x - x_ref|^2 (x_ref: the measured posture at '
                     'rest).', 0.0, math.inf),
    'control_weight': (1e-5, 'Weight of the torque cost |u|^2.', 0.0, math.inf),
    'terminal_goal_weight': (1000.0, 'Weight of the frame-placement cost at the last knot.', 0.0, math.inf),
}
SOLVER_PARAMETERS = {
    'replan_rate': (100.0, 'Re-plans per second (Hz).', 1.0, 1000.0),
    'max_iterations': (1, 'FDDP iterations per warm re-plan at most (1: the real-time iteration).', 1, 1000),
    'time_budget': (0.0, 'Seconds per re-plan at most (0 = 80 % of a re-plan period).', 0.0, 10.0),
}
SOLVE_WINDOW = 200           # re-plans the solve-time statistics of /diagnostics cover


class MpcController(PoseTarget, Controller):
    """Model-predictive controller of the tip frame's pose (module docstring)."""

    UNFIT_GAINS = ('parameters', 'the MPC parameters do not fit the model: gravity torques only', True)

    def __init__(self, node_name='mpc_controller', **kwargs):
        super().__init__(node_name, 'pose', **kwargs)
        self._mpc = None
        self._next_replan_ns = None     # the re-plans' grid (replan_rate) on the node clock
        for name, (default, text, low, high) in {**PROBLEM_PARAMETERS, **SOLVER_PARAMETERS}.items():
            bounds = '' if math.isinf(high) else f', at most {high:g}'
            self.declare_parameter(name, default, describe(
                text, additional_constraints=f'at least {low:g}{bounds}'))
        self.declare_parameter('torque_limits', True, describe(
            'The URDF effort limits as box constraints on the planned torques.'))
        self.declare_parameter('diagnostics_min_replan_rate', 0.0, describe(
            'Re-plans per second below which /diagnostics warns (0 = no check).', min_value=0.0))
        self._declare_pose_target()
        self._path_pub = self.create_publisher(Path, '~/predicted_path', 10)
        self._solve_times = deque(maxlen=SOLVE_WINDOW)
        self._replans = deque(maxlen=SOLVE_WINDOW)          # node-clock times of the re-plans (s)
        self._last = None               # the last plan's (solve s, iterations, converged)
        self.replan_count = 0           # the plans put in force since start-up
        self._start('drops the target and holds the pose of the new state')

    # -- parameters -------------------------------------------------------------------------
    def _check_parameter(self, p):
        table = {**PROBLEM_PARAMETERS, **SOLVER_PARAMETERS}
        if p.name in table:
            _, _, low, high = table[p.name]
            integer = isinstance(table[p.name][0], int)
            value = p.value
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or (integer and value != int(value))):
                raise ValueError(f"parameter '{p.name}' must be {'an integer' if integer else 'a number'}, "
                                 f'got {value!r}')
            if not math.isfinite(value) or not low <= value <= high:
                raise ValueError(f"parameter '{p.name}' must be finite, from {low:g} to {high:g}, "
                                 f'got {value!r}')
        elif p.name == 'torque_limits':
            if not isinstance(p.value, bool):
                raise ValueError(f"parameter 'torque_limits' must be true or false, got {p.value!r}")
        elif p.name == 'diagnostics_min_replan_rate':
            if not (math.isfinite(p.value) and p.value >= 0.0):
                raise ValueError(f'diagnostics_min_replan_rate must be finite and >= 0, got {p.value}')
        elif not self._check_pose_target(p):
            super()._check_parameter(p)

    def _apply_parameters(self, params):
        names = {p.name for p in params}
        if names & (set(PROBLEM_PARAMETERS) | set(SOLVER_PARAMETERS) | {'torque_limits'}):
            self._build()
        if names & {'max_linear_velocity', 'max_angular_velocity'}:
            self._read_speeds()
        self._apply_timing(names)

    def _value(self, name):
        return self.get_parameter(name).value

    def _build(self):
        """The reaching problem and its MPC for the model and the parameters; None (``_gains`` too:
        gravity torques only) without a model or frame, or when they do not fit."""
        self._close_planner()
        self._mpc = self._gains = None
        if self.model is None or self.frame is None:
            return
        model, frame = self.model, self.frame
        q = np.zeros(model.nq)
        arguments = dict(horizon=int(self._value('horizon')), dt=float(self._value('dt')),
                         **{name: float(self._value(name)) for name in PROBLEM_PARAMETERS
                            if name.endswith('weight')})
        limits = bool(self._value('torque_limits'))
        try:
            try:
                problem = rd.ReachingProblem(model, frame, rd.frame_pose(model, q, frame), q,
                                             torque_limits=limits, **arguments)
            except ValueError as exc:
                if not limits:
                    raise
                self.get_logger().error(bounded(f'{exc}: planning without torque limits (the commands are '
                                                'still clamped to the limits the URDF has)'))
                problem = rd.ReachingProblem(model, frame, rd.frame_pose(model, q, frame), q, **arguments)
        except ValueError as exc:
            self.get_logger().error(bounded(f'{exc}: gravity torques only until the parameters fit'))
            return
        rate = float(self._value('replan_rate'))
        budget = float(self._value('time_budget')) or 0.8 / rate
        # the planning thread under SCHED_IDLE: a joint state's callback preempts a re-plan at once
        self._mpc = ModelPredictiveController(problem, max_iterations=int(self._value('max_iterations')),
                                              time_budget=budget, planning_idle=True)
        self._mpc.reference = self._reference           # the target's profile (pose_target.py)
        self._replan_period_ns = int(round(1e9 / rate))
        self._next_replan_ns = None
        self._gains = self._mpc                          # (Controller: not None while the plan can run)

    def _close_planner(self):
        """End the planning thread of the MPC being replaced (after its re-plan under way, which is
        discarded; not waited for here)."""
        if self._mpc is not None:
            self._mpc.close(timeout=0.0)

    def destroy_node(self):
        if self._mpc is not None:
            self._mpc.close(timeout=1.0)
        super().destroy_node()

    # -- model ------------------------------------------------------------------------------
    @staticmethod
    def _warm_up_calls(model):
        """A short solve, to compile (or load) the solver's kernels before the first step."""
        def solve(q, qd):
            problem = rd.ReachingProblem(model, None, rd.frame_pose(model, q), q, horizon=2)
            return rd.solve_optimal_control(problem, max_iterations=1).us
        return solve, lambda q, qd: rd.gravity_torques(model, q)

    def _use_model(self, model):
        if model is None:
            self._reference.clear()
            self._close_planner()
            self.frame, self._controllable, self._mpc = None, False, None
            return
        self._set_frame(model, 'model-predictive control')
        self._build()

    def _on_payload(self, model):
        super()._on_payload(model)
        self._build()

    # -- control ----------------------------------------------------------------------------
    def _drop_reference(self, reason=None):
        super()._drop_reference(reason)
        if self._mpc is not None:
            self._mpc.drop()

    def _control(self, state, now_ns):
        """Put a finished re-plan in force, publish τ = u_k + K_k (x − x̄_k) of the plan in force at the
        measured ``state`` (after Controller._step's opening), then begin the next re-plan when due and
        do the bookkeeping: the command goes out first, so the 1 in 10 states that begin a re-plan (at
        100 Hz) answer as fast as the others. Warm re-plans run in the planning thread
        (logic/model_predictive.py); a cold one (no plan in force) runs here, before the command."""
        mpc, t, q, qd = self._mpc, now_ns * 1e-9, state.q, state.qd
        x = np.concatenate([q, qd])
        x_ref = np.concatenate([q, np.zeros(q.size)])   # the state cost: the measured posture at rest
        try:
            plan = mpc.collect()
            if mpc.plan is not None and t < mpc.plan_time:     # the clock went back (a simulator reset)
                mpc.drop()
            if mpc.plan is None:
                # a cold re-plan, here (a re-plan under way was begun before a hold: dropped)
                plan = mpc.replan(x, t, x_ref)
                self._next_replan_ns = now_ns + self._replan_period_ns
                started = True
            else:
                started = False
            self._command.publish(mpc.command(x, t), q, qd)
            if plan is not None:
                self._record(plan, mpc.plan_time, now_ns)
            due = self._next_replan_ns
            if not started and (due is None or now_ns >= due) and not mpc.planning:
                # on a grid of replan_rate: a re-plan late by part of a state period keeps the next one's
                # time; one due while the previous still runs begins at the first state after it ended
                period = self._replan_period_ns
                on_grid = due is not None and 0 <= now_ns - due < period
                self._next_replan_ns = due + period if on_grid else now_ns + period
                if not mpc.start_replan(x, t, x_ref):
                    # nothing to warm-start from (the plan in force is over): cold, for the next state
                    self._record(mpc.replan(x, t, x_ref), t, now_ns)
                started = True
            if started:
                self._publish_desired(now_ns, mpc.goal_pose)
        except COMPUTE_ERRORS as exc:
            self._throttle.warn('compute/plan', f'cannot plan ({exc}): publishing the gravity torques')
            mpc.drop()
            self._publish_gravity(state)

    def _record(self, plan, plan_time, now_ns):
        """Bookkeeping of a plan put in force: /diagnostics' figures, ~/predicted_path."""
        self._solve_times.append(plan.solve_time)
        self._replans.append(plan_time)
        self._last = (plan.solve_time, plan.iterations, plan.converged)
        self.replan_count += 1
        if self._path_pub.get_subscription_count():
            self._publish_path(now_ns)

    def _publish_path(self, now_ns):
        msg = Path()
        msg.header.stamp = stamp(now_ns)
        msg.header.frame_id = self.model.root_link
        for T in self._mpc.predicted_poses():
            pose = PoseStamped()
            pose.header = msg.header
            set_pose(pose.pose, T)
            msg.poses.append(pose)
        self._path_pub.publish(msg)

    # -- /diagnostics -----------------------------------------------------------------------
    def _replan_rate(self):
        """Re-plans per second over the last ones (None before two)."""
        if len(self._replans) < 2 or self._replans[-1] <= self._replans[0]:
            return None
        return (len(self._replans) - 1) / (self._replans[-1] - self._replans[0])

    def _diagnostic_details(self):
        details = super()._diagnostic_details()
        values = list(details.values)
        problems = list(details.problems)
        rate = self._replan_rate()
        if self._last is not None:
            times = np.array(self._solve_times)
            values += [('last solve (ms)', f'{self._last[0] * 1e3:.2f}'),
                       ('last iterations', str(self._last[1])),
                       ('last converged', str(self._last[2]).lower()),
                       ('solve median (ms)', f'{np.median(times) * 1e3:.2f}'),
                       ('solve p99 (ms)', f'{np.percentile(times, 99) * 1e3:.2f}')]
        values.append(('replan rate (Hz)', '-' if rate is None else f'{rate:.1f}'))
        minimum = float(self._value('diagnostics_min_replan_rate'))
        if minimum > 0.0 and rate is not None and rate < minimum and self.enabled and not self._stale:
            problems.append((WARN, f're-plan rate {rate:.1f} Hz below {minimum:g} Hz'))
        return Details(values=values, summary=details.summary, idle=details.idle, problems=problems)


def main(args=None):
    run_node(MpcController, args)


if __name__ == '__main__':
    main()
