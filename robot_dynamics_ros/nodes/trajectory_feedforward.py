"""trajectory_feedforward: a FollowJointTrajectory relay that fills every point's effort with the model's
inverse dynamics and hands the goal to ros2_control's JointTrajectoryController (JTC), so that the
real-time loop in controller_manager adds it to its PID output (an ``effort`` command interface;
ros2_controllers PR #1200) and no Python runs in that loop.

    MoveIt ──FollowJointTrajectory──> trajectory_feedforward ──(efforts filled)──> JTC ──> the arm

The efforts (``robot_dynamics_ros.logic.feedforward``): τ_k = M(q_k) q̈_k + c(q_k, q̇_k) + g(q_k)
(+ the URDF friction with ``friction_compensation``), by the model with its payload, less what the
hardware profile says the firmware adds (nodes/hardware_parameters.py); q̇_k and q̈_k as JTC's spline
sampler gives them at the point (linear, cubic or quintic by what the points carry; the last point as
given, else at rest). A point whose efforts are set keeps them unless ``overwrite_efforts``.

- action ``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory): every goal is
  accepted; a goal JTC would refuse (a joint the model does not have, one joint twice, only some
  joints without ``allow_partial_joints_goal``, no points, mismatched sizes, NaN, times that do not
  increase, a multi-DOF trajectory) is aborted at once with JTC's error code and the reason, and never
  reaches the downstream controller. Valid goals go to ``downstream_action`` with the efforts filled;
  its feedback is relayed, its result too (error code and string unchanged, the same terminal state);
  a cancel request is passed on (the result then comes from downstream); a new goal preempts the
  previous one downstream, whose result (aborted by JTC) comes back to its client. A downstream
  server that is not there, or that rejects the goal: aborted, with the reason.
- in ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory) → out ``downstream_topic``: the topic
  form, filled the same way (a bad trajectory is dropped with a warning).
- in ``joint_states`` (sensor_msgs/JointState): the positions of the joints a partial goal does not
  name (the model stands there, at rest, while the others move).
- out ``/diagnostics``: goals and trajectories relayed, the time to fill a goal (compute time), the
  largest effort filled against the URDF limit, the downstream server's state.

Parameters: the model parameters of model_source (the payload counts), the hardware parameters
(settable at run time: the next goal uses them), and ``downstream_action`` (string, read-only,
default ``/joint_trajectory_controller/follow_joint_trajectory``), ``downstream_topic`` (read-only,
default ``/joint_trajectory_controller/joint_trajectory``), ``friction_compensation`` (bool, false),
``overwrite_efforts`` (bool, false), ``allow_partial_joints_goal`` (bool, false, as JTC's).
"""

import time

import numpy as np
from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.limits import effort_limits
from robot_dynamics_ros.logic.diagnostics import ERROR, WARN, ComputeTimes, InputMeter, number
from robot_dynamics_ros.logic.feedforward import FeedforwardPlan
from robot_dynamics_ros.logic.input_guard import BadInput
from robot_dynamics_ros.logic.trajectory_goal import ErrorCode, GoalError, error_code_of, goal_joint_error
from robot_dynamics_ros.nodes.common import WarningThrottle, describe, run_node
from robot_dynamics_ros.nodes.conversions import float64_field, joint_trajectory_arrays
from robot_dynamics_ros.nodes.diagnostics_publisher import Details, NodeDiagnostics
from robot_dynamics_ros.nodes.hardware_parameters import HardwareParameters
from robot_dynamics_ros.nodes.joint_state_input import JointStateInput
from robot_dynamics_ros.nodes.model_source import ModelSource
from robot_dynamics_ros.nodes.trajectory_action import (
    FollowJointTrajectory,
    GoalRun,
    mark_executing,
    never_called,
)

__all__ = ['TrajectoryFeedforward', 'main']

DEFAULT_DOWNSTREAM_ACTION = '/joint_trajectory_controller/follow_joint_trajectory'
DEFAULT_DOWNSTREAM_TOPIC = '/joint_trajectory_controller/joint_trajectory'
#: the terminal state of the downstream goal -> GoalRun.finish's state for the client's goal
_TERMINAL = {GoalStatus.STATUS_SUCCEEDED: 'succeed', GoalStatus.STATUS_CANCELED: 'canceled',
             GoalStatus.STATUS_ABORTED: 'abort'}


class _Relay(GoalRun):
    """A client's goal on its way: ``downstream`` (the downstream goal handle once accepted) and
    whether the client asked to cancel before it was."""

    def __init__(self, server, handle):
        super().__init__(server, handle)
        self.downstream = None
        self.cancel_requested = False


class TrajectoryFeedforward(Node):
    """The relay (module docstring)."""

    def __init__(self, node_name='trajectory_feedforward', **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = WarningThrottle(self.get_logger())
        self.model = None
        self.joint_order = ()
        self._plans = {}                 # goal joint names -> FeedforwardPlan (for the model in use)
        self._relays = []                # the client goals not finished yet
        self._largest = None             # (|τ| / limit, joint) of the largest effort filled
        self._relayed = InputMeter()     # goals and trajectories sent downstream
        self._fill_times = ComputeTimes()
        self.declare_parameter('downstream_action', DEFAULT_DOWNSTREAM_ACTION, describe(
            "The FollowJointTrajectory server the filled goals go to (JointTrajectoryController's).",
            read_only=True))
        self.declare_parameter('downstream_topic', DEFAULT_DOWNSTREAM_TOPIC, describe(
            'The JointTrajectory topic the filled ~/joint_trajectory messages go to.', read_only=True))
        self.declare_parameter('friction_compensation', False, describe(
            "Add the URDF's joint friction of each point's velocity to its effort (none where the "
            'firmware compensates friction itself).'))
        self.declare_parameter('overwrite_efforts', False, describe(
            'Replace efforts a point already has (false: such a point keeps them).'))
        self.declare_parameter('allow_partial_joints_goal', False, describe(
            "Accept goals naming only some of the model's joints (the others stand at their measured "
            'positions in the model).'))
        self._input = JointStateInput(self, self._throttle)
        self._source = ModelSource(self, self._on_model, warm_up=self._warm_up_calls, throttle=self._throttle,
                                   on_payload=self._on_payload)
        self._hardware = HardwareParameters(self, self._source, runtime=True)
        self.add_post_set_parameters_callback(lambda _params: self._plans.clear())
        self._downstream = downstream = self.get_parameter('downstream_action').value
        self._client = ActionClient(self, FollowJointTrajectory, downstream)
        self._server = ActionServer(self, FollowJointTrajectory, '~/follow_joint_trajectory',
                                    execute_callback=never_called,
                                    goal_callback=lambda _goal: GoalResponse.ACCEPT,
                                    handle_accepted_callback=self._on_accepted,
                                    cancel_callback=self._on_cancel)
        self._publisher = self.create_publisher(JointTrajectory,
                                                self.get_parameter('downstream_topic').value, 10)
        self.create_subscription(JointTrajectory, '~/joint_trajectory',
                                 self._fill_times.timed(self._on_topic), 10)
        self._source.start()
        self._diagnostics = NodeDiagnostics(self, 'feed-forward', self._throttle, self._source, self._relayed,
                                            self._fill_times, downstream, 'goals', details=self._details)

    # -- model --------------------------------------------------------------------------------
    @staticmethod
    def _warm_up_calls(model):
        """The core call of a goal, to compile or load it before the first one."""
        zeros = np.zeros((2, model.nq))
        return (lambda q, qd: rd.inverse_dynamics_trajectory(model, zeros + q, zeros, zeros),)

    def _on_model(self, model, joint_order):
        self.model, self.joint_order = model, tuple(joint_order)
        self._plans.clear()
        self._input.reset(model)
        self._limit = None if model is None else effort_limits(model)

    def _on_payload(self, model):
        self.model = model
        self._plans.clear()

    # -- filling ------------------------------------------------------------------------------
    def _filled(self, trajectory, partial_allowed):
        """A copy of ``trajectory`` with its points' efforts filled; GoalError (JTC's code, the reason)
        for a trajectory JTC would refuse or this node cannot fill."""
        if self.model is None:
            raise GoalError(ErrorCode.INVALID_GOAL, 'no robot model yet')
        conventions = self._hardware.conventions()
        if conventions is None:
            raise GoalError(ErrorCode.INVALID_GOAL, f'no hardware conventions: {self._hardware.error}')
        error = goal_joint_error(trajectory.joint_names, self.joint_order, partial_allowed)
        if error:
            raise error
        try:
            names, times, positions, velocities, accelerations = joint_trajectory_arrays(trajectory)
        except BadInput as exc:
            raise GoalError(error_code_of(exc), str(exc)) from None
        if times.size == 0:
            raise GoalError(ErrorCode.INVALID_GOAL, 'the trajectory has no points')
        q_rest = np.zeros(self.model.nq)
        if len(names) < self.model.nq:
            state = self._input.latest()
            if state is None:
                raise GoalError(ErrorCode.INVALID_GOAL, 'a goal for some joints needs the others\' '
                                                        'positions: no complete joint state yet')
            q_rest = state.q
        key = tuple(names)
        plan = self._plans.get(key)
        if plan is None:
            friction = bool(self.get_parameter('friction_compensation').value)
            plan = self._plans[key] = FeedforwardPlan(self.model, self._source.base_model, conventions,
                                                      names, friction)
        tau = plan.fill(q_rest, times, positions, velocities, accelerations)
        if not np.isfinite(tau).all():
            raise GoalError(ErrorCode.INVALID_GOAL, 'the efforts of this trajectory are not finite')
        self._note_largest(tau, plan.columns)
        overwrite = bool(self.get_parameter('overwrite_efforts').value)
        out = JointTrajectory(header=trajectory.header, joint_names=list(trajectory.joint_names))
        out.points = list(trajectory.points)
        for k, point in enumerate(out.points):
            if overwrite or not len(point.effort):
                point.effort = float64_field(tau[k])
        return out

    def _note_largest(self, tau, columns):
        """The largest |effort| / URDF limit filled so far (/diagnostics)."""
        ratio = np.abs(tau) / self._limit[columns]
        k = np.unravel_index(np.argmax(ratio), ratio.shape)
        if self._largest is None or ratio[k] > self._largest[0]:
            self._largest = (float(ratio[k]), self.model.joint_names[columns[k[1]]])

    # -- the topic form -----------------------------------------------------------------------
    def _on_topic(self, msg):
        try:
            filled = self._filled(msg, partial_allowed=True)
        except GoalError as exc:
            self._throttle.warn('trajectory/refused', f'dropping a ~/joint_trajectory: {exc}')
            return
        self._publisher.publish(filled)
        self._relayed.add()

    # -- the action relay ---------------------------------------------------------------------
    def _on_accepted(self, handle):
        """A client's goal: filled and sent downstream, or aborted at once with the reason."""
        relay = _Relay(self._server, handle)
        mark_executing(handle)
        start = time.perf_counter_ns()
        try:
            goal = handle.request
            if goal.multi_dof_trajectory.points or goal.multi_dof_trajectory.joint_names:
                raise GoalError(ErrorCode.INVALID_JOINTS, 'multi_dof_trajectory is not supported')
            filled = self._filled(goal.trajectory,
                                  bool(self.get_parameter('allow_partial_joints_goal').value))
        except GoalError as exc:
            self._finish(relay, exc.code, str(exc))
            return
        self._fill_times.record(time.perf_counter_ns() - start)
        if not self._client.server_is_ready():
            self._finish(relay, ErrorCode.INVALID_GOAL,
                         f'the downstream action server {self._downstream!r} is not available: '
                         'the goal was not sent')
            return
        downstream = FollowJointTrajectory.Goal(
            trajectory=filled, path_tolerance=goal.path_tolerance, goal_tolerance=goal.goal_tolerance,
            goal_time_tolerance=goal.goal_time_tolerance)
        self._relays.append(relay)
        future = self._client.send_goal_async(
            downstream, feedback_callback=lambda msg: self._on_feedback(relay, msg))
        future.add_done_callback(lambda f: self._on_response(relay, f))
        self._relayed.add()

    def _on_feedback(self, relay, msg):
        if not relay.finished:
            relay.handle.publish_feedback(msg.feedback)

    def _on_response(self, relay, future):
        """The downstream server's answer to a goal: rejected (the client's goal aborts, saying so) or
        accepted (its result will be the client's; a cancel asked meanwhile is passed on)."""
        handle = future.result()
        if handle is None or not handle.accepted:
            self._finish(relay, ErrorCode.INVALID_GOAL,
                         f'the downstream action server {self._downstream!r} rejected the goal')
            return
        relay.downstream = handle
        if relay.cancel_requested:
            handle.cancel_goal_async()
        handle.get_result_async().add_done_callback(lambda f: self._on_result(relay, f))

    def _on_result(self, relay, future):
        """The downstream result, unchanged, in the same terminal state."""
        response = future.result()
        state = _TERMINAL.get(response.status, 'abort')
        self._finish(relay, response.result.error_code, response.result.error_string, state)

    def _on_cancel(self, handle):
        """A client's cancel request: passed on downstream (now, or when the goal is accepted there);
        the result comes from downstream."""
        relay = next((r for r in self._relays if r.handle is handle), None)
        if relay is None:
            return CancelResponse.REJECT
        relay.cancel_requested = True
        if relay.downstream is not None:
            relay.downstream.cancel_goal_async()
        return CancelResponse.ACCEPT

    def _finish(self, relay, code, message, state='abort'):
        if relay.finish(code, message, state) and relay in self._relays:
            self._relays.remove(relay)
        if state == 'abort' and code != ErrorCode.SUCCESSFUL:
            self._throttle.warn(f'goal/{code}', f'goal aborted ({code}): {message}')

    # -- /diagnostics ---------------------------------------------------------------------------
    def _details(self):
        ready = self._client.server_is_ready()
        values = [('downstream action', self._downstream),
                  ('downstream server', 'ready' if ready else 'not available'),
                  ('goals in flight', str(len(self._relays))),
                  ('largest effort filled / URDF limit',
                   'n/a' if self._largest is None else f'{number(self._largest[0], 3)} ({self._largest[1]})'),
                  *self._hardware.details()]
        problems = [] if ready else [(WARN, f'downstream action server {self._downstream} not '
                                            'available: goals are aborted')]
        if self._largest is not None and self._largest[0] > 1.0:
            problems.append((ERROR, f'an effort filled beyond its URDF limit ({self._largest[1]}: '
                                    f'{self._largest[0]:.2f} of it)'))
        return Details(values=tuple(values), summary='relaying' if ready else 'no downstream server',
                       idle='goals come when a client sends them', problems=tuple(problems))

    def destroy_node(self):
        for relay in list(self._relays):
            self._finish(relay, ErrorCode.INVALID_GOAL, 'the relay is shutting down')
        self._server.destroy()
        self._client.destroy()
        self._source.close()
        return super().destroy_node()


def main(args=None):
    run_node(TrajectoryFeedforward, args)


if __name__ == '__main__':
    main()
