"""trajectory_feedforward over real DDS: a MoveIt-like client sends goals to the relay, which hands them,
efforts filled, to a downstream FollowJointTrajectory server written here (a stand-in for ros2_control's
JointTrajectoryController: it records each goal, sends feedback, and ends it as told). The efforts equal
Pinocchio's inverse dynamics at every point (to 1e-9); feedback, results (codes and strings), cancel and
preemption pass through; goals JTC would refuse never reach the downstream server; a missing or
rejecting server is answered with the reason; the topic form; a partial goal; a hardware profile."""

import time

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_ros.logic.feedforward import knot_derivatives
from robot_dynamics_ros.logic.trajectory_goal import ErrorCode
from robot_dynamics_ros.nodes.trajectory_action import (
    FollowJointTrajectory,
    GoalRun,
    mark_executing,
    never_called,
)
from robot_dynamics_ros.nodes.trajectory_feedforward import TrajectoryFeedforward

from _node_harness import UR5E_HOME, UR5E_JOINTS, UR5E_URDF
from _trajectory_client import MoveItLikeClient, _duration

pytestmark = pytest.mark.ros
pin = pytest.importorskip('pinocchio')

Q0 = np.array(UR5E_HOME)
DOWNSTREAM = '/stand_in_jtc/follow_joint_trajectory'


class StandInJTC(Node):
    """The downstream server: records every goal's trajectory and its arrival (monotonic s), sends one
    feedback, and ends the goal ``after`` s later as ``outcome`` says: (state, code, string); a cancel
    ends it canceled at once; a new goal preempts (aborts) the one executing, as JTC does;
    ``reject`` refuses goals."""

    def __init__(self, node_name='stand_in_jtc', **kwargs):
        super().__init__(node_name, **kwargs)
        self.goals, self.arrivals, self.cancels = [], [], 0
        self.outcome = ('succeed', ErrorCode.SUCCESSFUL, 'stand-in: reached the goal')
        self.after, self.reject = 0.3, False
        self._runs = []
        self._server = ActionServer(self, FollowJointTrajectory, DOWNSTREAM, execute_callback=never_called,
                                    goal_callback=lambda _g: GoalResponse.REJECT if self.reject
                                    else GoalResponse.ACCEPT,
                                    handle_accepted_callback=self._accepted, cancel_callback=self._cancel)
        self.create_timer(0.02, self._tick)

    def _accepted(self, handle):
        for run, _ in self._runs:           # preemption
            run.finish(ErrorCode.INVALID_GOAL, 'stand-in: preempted by a new goal', 'abort')
        self._runs = [(GoalRun(self._server, handle), time.monotonic() + self.after)]
        mark_executing(handle)
        self.goals.append(handle.request.trajectory)
        self.arrivals.append(time.monotonic())
        handle.publish_feedback(FollowJointTrajectory.Feedback(joint_names=list(UR5E_JOINTS)))

    def _cancel(self, handle):
        self.cancels += 1
        for run, _ in self._runs:
            if run.handle is handle:
                run.finish(ErrorCode.SUCCESSFUL, 'stand-in: cancelled', 'canceled')
        return CancelResponse.ACCEPT

    def _tick(self):
        now = time.monotonic()
        for run, due in self._runs:
            if now >= due:
                state, code, text = self.outcome
                run.finish(code, text, state)
        self._runs = [(r, d) for r, d in self._runs if not r.finished]


def _trajectory(points, joints=UR5E_JOINTS, velocities=False):
    msg = JointTrajectory(joint_names=list(joints))
    for t, q in points:
        point = JointTrajectoryPoint(positions=[float(x) for x in q], time_from_start=_duration(t))
        if velocities:
            point.velocities = [0.1] * len(joints)
        msg.points.append(point)
    return msg


@pytest.fixture
def relay(graph, ur5e_xml):
    ros = graph
    jtc = ros.add(StandInJTC)
    node = ros.add(TrajectoryFeedforward, {'robot_description': ur5e_xml, 'downstream_action': DOWNSTREAM,
                                           'downstream_topic': '/stand_in_jtc/joint_trajectory',
                                           'allow_partial_joints_goal': True})
    client = MoveItLikeClient(ros, node.get_name())
    return ros, node, jtc, client


def _expected_efforts(model, trajectory, q_rest=None, subtract_gravity=False):
    """Pinocchio's inverse dynamics (rnea; less computeGeneralizedGravity with ``subtract_gravity``) at
    each point, q̇, q̈ as JTC samples them; joints by name (``model``: ours, for its joint names)."""
    pm = pin.buildModelFromUrdf(str(UR5E_URDF))
    pd = pm.createData()
    pin_names = list(pm.names)[1:]
    order = [pin_names.index(n) for n in model.joint_names]      # ours -> Pinocchio's velocity index
    names = list(trajectory.joint_names)
    columns = [model.joint_names.index(n) for n in names]
    times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in trajectory.points])
    q = np.array([p.positions for p in trajectory.points])
    v = [np.array(p.velocities) if len(p.velocities) else None for p in trajectory.points]
    qd, qdd = knot_derivatives(times, q, v, [None] * len(v))
    out = []
    for k in range(times.size):
        Q = np.zeros(model.nq) if q_rest is None else q_rest.copy()
        QD, QDD = np.zeros(model.nq), np.zeros(model.nq)
        Q[columns], QD[columns], QDD[columns] = q[k], qd[k], qdd[k]
        to_pin = np.argsort(order)       # Pinocchio index -> ours
        args = [x[to_pin] for x in (Q, QD, QDD)]
        tau = pin.rnea(pm, pd, *args)
        if subtract_gravity:
            tau = tau - pin.computeGeneralizedGravity(pm, pd, args[0])
        out.append(np.asarray(tau)[order][columns])
    return np.array(out)


def test_a_goal_arrives_filled_and_its_feedback_and_result_come_back(relay, ur5e_model):
    ros, node, jtc, client = relay
    trajectory = _trajectory([(0.5, Q0 + 0.1), (1.0, Q0 + 0.3), (1.5, Q0 + 0.2)], velocities=True)
    status, code, text = client.execute(trajectory)
    assert (status, code, text) == (GoalStatus.STATUS_SUCCEEDED, 0, 'stand-in: reached the goal')
    assert len(jtc.goals) == 1 and client.feedback, 'no goal downstream, or no feedback relayed'
    received = jtc.goals[0]
    assert list(received.joint_names) == list(UR5E_JOINTS)
    np.testing.assert_array_equal([p.positions for p in received.points],
                                  [p.positions for p in trajectory.points])
    efforts = np.array([p.effort for p in received.points])
    np.testing.assert_allclose(efforts, _expected_efforts(ur5e_model, trajectory), rtol=0, atol=1e-9)
    # the latency the relay adds: a goal's arrival downstream through it, and sent there directly
    direct = MoveItLikeClient(ros, 'stand_in_jtc')
    jtc.after = 0.0
    delays = {'relay': [], 'direct': []}
    for _ in range(5):
        for way, sender in (('relay', client), ('direct', direct)):
            sent = time.monotonic()
            assert sender.execute(trajectory)[0] == GoalStatus.STATUS_SUCCEEDED
            delays[way].append(jtc.arrivals[-1] - sent)
    relay_ms, direct_ms = (1e3 * np.median(delays[w]) for w in ('relay', 'direct'))
    print(f'\nrelay: a goal reaches the downstream server {relay_ms:.1f} ms after it is sent (directly: '
          f'{direct_ms:.1f} ms; added {relay_ms - direct_ms:.1f} ms, median of 5); filling '
          f'{node._fill_times.stats()[0]:.3f} ms median')


def test_results_cancel_and_preemption_pass_through(relay):
    ros, _, jtc, client = relay
    jtc.outcome = ('abort', ErrorCode.PATH_TOLERANCE_VIOLATED, 'stand-in: path tolerance of elbow_joint')
    status, code, text = client.execute(_trajectory([(0.5, Q0 + 0.1)]))
    assert (status, code, text) == (GoalStatus.STATUS_ABORTED, ErrorCode.PATH_TOLERANCE_VIOLATED,
                                    'stand-in: path tolerance of elbow_joint')
    # cancel: passed on; the result (canceled) comes from downstream
    jtc.after = 10.0
    handle = client.send(_trajectory([(0.5, Q0 + 0.1)]))
    assert ros.spin_until(lambda: len(jtc.goals) == 2, 5.0)
    future = handle.cancel_goal_async()
    assert ros.spin_until(future.done, 5.0)
    status, code, text = client.result(handle)
    assert (status, text) == (GoalStatus.STATUS_CANCELED, 'stand-in: cancelled') and jtc.cancels == 1
    # preemption: a second goal makes downstream abort the first, whose client hears it
    first = client.send(_trajectory([(0.5, Q0 + 0.1)]))
    assert ros.spin_until(lambda: len(jtc.goals) == 3, 5.0)
    jtc.after = 0.2
    jtc.outcome = ('succeed', ErrorCode.SUCCESSFUL, 'stand-in: reached the goal')
    second = client.send(_trajectory([(0.5, Q0 + 0.2)]))
    assert client.result(first)[:3] == (GoalStatus.STATUS_ABORTED, ErrorCode.INVALID_GOAL,
                                        'stand-in: preempted by a new goal')
    assert client.result(second)[0] == GoalStatus.STATUS_SUCCEEDED


@pytest.mark.parametrize('trajectory, code, says', [
    (_trajectory([(0.5, Q0)], joints=UR5E_JOINTS[:5] + ('gripper_joint',)), ErrorCode.INVALID_JOINTS,
     'gripper'),
    (_trajectory([(1.0, Q0), (0.5, Q0)]), ErrorCode.INVALID_GOAL, 'increasing'),
    (_trajectory([(0.5, Q0 + np.array([np.nan, 0, 0, 0, 0, 0]))]), ErrorCode.INVALID_GOAL, 'non-finite'),
    (_trajectory([]), ErrorCode.INVALID_GOAL, 'no points'),
])
def test_goals_jtc_would_refuse_never_go_downstream(relay, trajectory, code, says):
    ros, _, jtc, client = relay
    status, got, text = client.execute(trajectory)
    assert (status, got) == (GoalStatus.STATUS_ABORTED, code) and says in text, text
    assert not jtc.goals


def test_a_missing_or_rejecting_downstream_server_is_answered(graph, ur5e_xml):
    ros = graph
    node = ros.add(TrajectoryFeedforward, {'robot_description': ur5e_xml,
                                           'downstream_action': '/nowhere/fjt'})
    client = MoveItLikeClient(ros, node.get_name())
    status, code, text = client.execute(_trajectory([(0.5, Q0)]))
    assert status == GoalStatus.STATUS_ABORTED and 'not available' in text and '/nowhere/fjt' in text
    jtc = ros.add(StandInJTC)
    jtc.reject = True
    other = ros.add(TrajectoryFeedforward, {'robot_description': ur5e_xml, 'downstream_action': DOWNSTREAM})
    client = MoveItLikeClient(ros, other.get_name())
    assert ros.spin_until(other._client.server_is_ready, 5.0)
    status, code, text = client.execute(_trajectory([(0.5, Q0)]))
    assert status == GoalStatus.STATUS_ABORTED and 'rejected' in text, text


def test_the_topic_form_a_partial_goal_and_a_hardware_profile(relay, ur5e_model):
    """~/joint_trajectory reaches downstream_topic filled; a goal for three joints is filled with the
    others at their measured positions; under 'franka' the efforts leave g(q) to the firmware."""
    ros, node, jtc, client = relay
    out = ros.collect(JointTrajectory, '/stand_in_jtc/joint_trajectory')
    topic = ros.publisher(JointTrajectory, f'/{node.get_name()}/joint_trajectory')
    trajectory = _trajectory([(0.5, Q0 + 0.1), (1.0, Q0 + 0.2)])
    topic.publish(trajectory)
    assert ros.spin_until(lambda: out, 5.0)
    np.testing.assert_allclose(np.array([p.effort for p in out[0].points]),
                               _expected_efforts(ur5e_model, trajectory), atol=1e-9)
    # a partial goal: the others from /joint_states
    q_rest = Q0 + np.array([0.0, 0.2, -0.3, 0.1, 0.0, 0.4])
    states = ros.publisher(JointState, '/joint_states')
    states.publish(JointState(name=list(UR5E_JOINTS), position=list(q_rest), velocity=[0.0] * 6))
    assert ros.spin_until(lambda: node._input.complete, 5.0)
    partial = _trajectory([(0.5, q_rest[:3] + 0.1), (1.0, q_rest[:3] + 0.2)], joints=UR5E_JOINTS[:3])
    assert client.execute(partial)[0] == GoalStatus.STATUS_SUCCEEDED
    np.testing.assert_allclose(np.array([p.effort for p in jtc.goals[-1].points]),
                               _expected_efforts(ur5e_model, partial, q_rest), atol=1e-9)
    assert node.set_parameters([Parameter('hardware_profile', value='kuka_fri')])[0].successful
    assert client.execute(trajectory)[0] == GoalStatus.STATUS_SUCCEEDED
    np.testing.assert_allclose(np.array([p.effort for p in jtc.goals[-1].points]),
                               _expected_efforts(ur5e_model, trajectory, subtract_gravity=True), atol=1e-9)
    # a point with efforts keeps them (overwrite_efforts false)
    given = _trajectory([(0.5, Q0 + 0.1)])
    given.points[0].effort = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert client.execute(given)[0] == GoalStatus.STATUS_SUCCEEDED
    assert list(jtc.goals[-1].points[0].effort) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
