"""Demo: a simulated UR5e follows a smooth trajectory under computed-torque control.

    python -m robot_dynamics_ros.demos [--duration 8] [--output out/demo.png]
        [--mode bringup|processes|in-process] [--via action|topic] [--ros-args ...]
    make demo

(The other demos: ``demos/__main__.py``.)

1. Starts the simulation graph (simulator_node + computed_torque_controller + dynamics_node +
   external_torque_estimator, from config/simulation.yaml) with
   ``python -m robot_dynamics_ros.cli.bringup --graph simulation`` in one child process, while this
   process records (two processes: the graph and the recorder each get a core).
   ``--mode processes``: one process per node; ``--mode in-process``: everything here.
2. Waits for /joint_states, then sends a JointTrajectory as a FollowJointTrajectory goal to
   /computed_torque_controller/follow_joint_trajectory, as MoveIt does (``--via topic``: published on
   /computed_torque_controller/joint_trajectory instead), and reports the goal's result:
   every joint leaves its current position and comes back, q_j(t) = q0_j + A_j sin^4(pi k_j t / T)
   (zero velocity and acceleration at both ends), as knots every 0.5 s with positions, velocities
   and accelerations.
3. From PUSH_SPAN[0] to PUSH_SPAN[1] of the trajectory, pushes on the tool through the simulator's
   ~/external_wrench (PUSH; --no-push: not).
4. Records /joint_states, the controller's ~/tracking_error and effort_controller/commands, the
   dynamics node's outputs and the external torque estimator's wrench and contact flag; prints
   per-joint RMS and maximum tracking error (outside the push) and the rate of every topic, and the
   applied vs estimated wrench; draws desired vs actual positions, errors and torques to
   out/demo.png, and the push to out/contact.png.

Exit code 0 when the arm tracked the trajectory; 1 when something did not arrive, was not finite,
or the tracking error outside the push exceeded --max-error. (The recording and what is made of it:
joint_space_report.py.)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from robot_dynamics_ros.demos.joint_space_report import (
    APPLIED_WRENCH_TOPIC,
    COMMANDS_TOPIC,
    CONTACT_TOPIC,
    DYNAMICS_TOPICS,
    ESTIMATED_WRENCH_TOPIC,
    JOINT_STATES_TOPIC,
    PUSH,
    PUSH_SPAN,
    PUSH_TOPIC,
    TRACKING_ERROR_TOPIC,
    TRAJECTORY_ACTION,
    TRAJECTORY_TOPIC,
    DemoReport,
    Recording,
    analyse,
    contact_summary,
    contact_text,
    plot,
    plot_contact,
    report_text,
)
from robot_dynamics_ros.demos.recording import (
    GraphRun,
    demo_knots,
    demo_main,
    goal_result,
    simulation_graph,
    spin_for,
    spin_until,
    trajectory_message,
    urdf_robot_name,
    values_by_name,
    viewer_settings,
)
from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['Recorder', 'main', 'make_recorder', 'run_demo']


class Recorder:
    """The work of the demo's own node (``node``): fills ``recording`` from the demo's topics while
    ``active``; sends the trajectory on ``reference`` or as a goal through ``follow`` (a FollowJointTrajectory
    client; None without control_msgs) and pushes on the arm (``apply``)."""

    def __init__(self, recording: Recording, node):
        from geometry_msgs.msg import WrenchStamped
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool, Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        qos = QoSProfile(depth=200)
        latched = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.recording, self.node, self.active = recording, node, True
        self.reference = node.create_publisher(JointTrajectory, TRAJECTORY_TOPIC, 10)
        self.follow = _follow_client(node)
        self.push = node.create_publisher(WrenchStamped, PUSH_TOPIC, 10)
        node.create_subscription(WrenchStamped, ESTIMATED_WRENCH_TOPIC, self.on_wrench, qos)
        node.create_subscription(WrenchStamped, APPLIED_WRENCH_TOPIC, self.on_applied_wrench, latched)
        node.create_subscription(Bool, CONTACT_TOPIC, self.on_contact, latched)
        node.create_subscription(JointState, JOINT_STATES_TOPIC, self.on_state, qos)
        node.create_subscription(JointState, TRACKING_ERROR_TOPIC, self.on_error, qos)
        node.create_subscription(Float64MultiArray, COMMANDS_TOPIC, self.on_command, qos)
        for key, topic in DYNAMICS_TOPICS.items():
            msg_type = JointState if key.endswith('torques') else Float64MultiArray
            node.create_subscription(msg_type, topic, lambda msg, key=key: self.on_dynamics(key, msg), qos)

    def _by_name(self, msg, field_name):
        """The message's ``field_name`` values in the recording's joint order, or None."""
        return values_by_name(msg.name, getattr(msg, field_name), self.recording.joint_names)

    def on_state(self, msg):
        """/joint_states: q and q̇ (the first message names the joints)."""
        rec = self.recording
        if not self.active:
            return
        if not rec.joint_names:
            rec.joint_names = tuple(msg.name)
        q, qd = self._by_name(msg, 'position'), self._by_name(msg, 'velocity')
        if q is None:
            return
        rec.joint_states.add(stamp_ns(msg.header.stamp), q)
        if qd is not None:
            rec.joint_velocities.add(stamp_ns(msg.header.stamp), qd)

    def apply(self, wrench):
        """Push (or stop pushing: zeros) through the simulator (recorded when it says it applied it:
        ``on_applied_wrench``)."""
        from geometry_msgs.msg import WrenchStamped

        from robot_dynamics_ros.nodes.conversions import set_wrench

        msg = WrenchStamped()
        set_wrench(msg.wrench, wrench)
        self.push.publish(msg)

    def on_applied_wrench(self, msg):
        """The simulator's ~/applied_wrench: a change of the push, at the simulated time it took effect
        (the simulator's zero wrench before any push is not one)."""
        from robot_dynamics_ros.nodes.conversions import wrench_vector

        applied = self.recording.applied_wrench
        wrench = wrench_vector(msg.wrench)
        if self.active and not np.array_equal(wrench, applied.values[-1] if applied.values else np.zeros(6)):
            applied.add(stamp_ns(msg.header.stamp), wrench.tolist())

    def on_wrench(self, msg):
        """The estimator's wrench at tool0: (m, f)."""
        if self.active:
            m, f = msg.wrench.torque, msg.wrench.force
            self.recording.estimated_wrench.add(stamp_ns(msg.header.stamp), [m.x, m.y, m.z, f.x, f.y, f.z])

    def on_contact(self, msg):
        """The estimator's ~/contact flag (no stamp)."""
        if self.active:
            self.recording.contact.add(-1, [float(msg.data)])

    def on_error(self, msg):
        """The controller's ~/tracking_error: e = q_d - q."""
        if not self.active or not self.recording.joint_names:
            return
        e = self._by_name(msg, 'position')
        if e is not None:
            self.recording.tracking_error.add(stamp_ns(msg.header.stamp), e)

    def on_command(self, msg):
        """effort_controller/commands (no stamp; the controller's joint order)."""
        if self.active:
            self.recording.commands.add(-1, list(msg.data))

    def on_dynamics(self, key, msg):
        """A dynamics_node output: whether it is all finite; of the gravity torques, g(q)."""
        if not self.active:
            return
        rec = self.recording
        values = msg.effort if key.endswith('torques') else msg.data
        rec.dynamics[key].add(-1, bool(np.all(np.isfinite(values))) and len(values) > 0)
        if key == 'gravity_torques' and rec.joint_names:
            g = self._by_name(msg, 'effort')
            if g is not None:
                rec.gravity.add(stamp_ns(msg.header.stamp), g)


def _follow_client(node):
    """A FollowJointTrajectory client of TRAJECTORY_ACTION on ``node``; None without control_msgs."""
    try:
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionClient
    except ImportError:                 # no control_msgs: the topic only
        return None
    return ActionClient(node, FollowJointTrajectory, TRAJECTORY_ACTION)


def make_recorder(recording: Recording, *, context=None) -> Recorder:
    """The demo's Recorder of ``recording`` on a node 'demo_recorder' of its own (imports rclpy)."""
    from rclpy.node import Node

    return Recorder(recording, Node('demo_recorder', context=context))


# --- running it --------------------------------------------------------------------------------


def _settled(rec: Recording, start: int, samples: int = 100, tolerance: float = 1e-3) -> bool:
    """The last ``samples`` tracking errors since index ``start`` are all below ``tolerance``."""
    errors = rec.tracking_error.values
    if len(errors) - start < samples:
        return False
    return bool(np.max(np.abs(np.asarray(errors[-samples:]))) < tolerance)


def _reference_ready(recorder: Recorder, via_action: bool) -> bool:
    """The action server (``via_action``) or a subscriber of the trajectory topic is there."""
    if via_action:
        return recorder.follow.server_is_ready()
    return recorder.reference.get_subscription_count() > 0


def _start(run: GraphRun, recorder: Recorder, opts, via_action: bool):
    """Step 1: the graph is up (joint states, a controller that answers them, a reference to send to)
    and the arm settled at its initial pose; None, or what did not come."""
    rec = recorder.recording
    ready = spin_until(run.executor, lambda: (
        not run.alive()
        or (rec.joint_states.values and rec.tracking_error.values and rec.commands.values
            and _reference_ready(recorder, via_action))), opts.startup_timeout)
    if not run.alive():
        return f'during start-up: {run.exited()}'
    if not ready:
        missing = [topic for topic, s in ((JOINT_STATES_TOPIC, rec.joint_states),
                                          (TRACKING_ERROR_TOPIC, rec.tracking_error),
                                          (COMMANDS_TOPIC, rec.commands)) if not s.values]
        if not _reference_ready(recorder, via_action):
            missing.append(f'the action server {TRAJECTORY_ACTION}' if via_action
                           else f'a subscriber on {TRAJECTORY_TOPIC}')
        return f'no {", ".join(missing)} within {opts.startup_timeout:g} s'
    # The arm is at its initial pose, at rest, held there by the controller: the simulator
    # waited for the controller's first command before integrating (wait_for_command).
    settled_from = len(rec.tracking_error.values)
    if not spin_until(run.executor, lambda: _settled(rec, settled_from), opts.settle_timeout):
        print(f'demo: the arm did not settle within {opts.settle_timeout:g} s '
              '(|e| < 1 mrad); sending the trajectory anyway', file=sys.stderr)
    spin_for(run.executor, 0.5)  # a moment of the hold, for the plot
    return None


def _send(recorder: Recorder, opts, urdf, via_action: bool):
    """Step 2: the trajectory from where the arm is now, sent; the goal's future (None: on the topic)."""
    rec = recorder.recording
    names = rec.joint_names
    knots, limits = demo_knots(opts, urdf, names, np.asarray(rec.joint_states.values[-1]))
    rec.effort_limit = limits[3]
    rec.t_start = time.monotonic()
    trajectory = trajectory_message(names, *knots)
    goal_sent = None
    if via_action:
        from control_msgs.action import FollowJointTrajectory
        goal_sent = recorder.follow.send_goal_async(FollowJointTrajectory.Goal(trajectory=trajectory))
    else:
        recorder.reference.publish(trajectory)
    print(f'demo: sent a {opts.duration:g} s trajectory with {knots[0].size} knots to '
          f'{TRAJECTORY_ACTION if via_action else TRAJECTORY_TOPIC}', file=sys.stderr, flush=True)
    return goal_sent


def _follow(run: GraphRun, recorder: Recorder, opts):
    """Step 3: follow the trajectory, then hold for a moment: on the simulated clock when the states carry
    it (an overloaded CPU makes the simulation slower than real time), else on the wall clock. A push on
    the arm from PUSH_SPAN[0] to PUSH_SPAN[1] of the trajectory (simulator_node's ~/external_wrench),
    which the external torque estimator should see. Returns (finished, the wall-clock limit)."""
    rec = recorder.recording
    span = opts.duration + opts.settle
    wall_limit = 3.0 * span + 30.0
    stamp0 = rec.joint_states.stamp[-1]
    phases = [(PUSH_SPAN[0] * opts.duration, PUSH if opts.push else None),
              (PUSH_SPAN[1] * opts.duration, np.zeros(6) if opts.push else None), (span, None)]
    finished = True
    for until, then in phases:
        if stamp0 > 0:
            finished = spin_until(run.executor, lambda: (
                not run.alive() or rec.joint_states.stamp[-1] >= stamp0 + until * 1e9), wall_limit)
        else:
            spin_for(run.executor, until - (time.monotonic() - rec.t_start))
        if not finished or not run.alive():
            break
        if then is not None:
            recorder.apply(then)
    rec.t_end = time.monotonic()
    recorder.active = False
    return finished, wall_limit


def run_demo(opts) -> tuple[Recording, DemoReport | None, list[str]]:
    """Bring the graph up, drive it, record. Returns (recording, report or None, early failures)."""
    gc = simulation_graph(opts)
    rec = Recording(duration=opts.duration)
    urdf = gc.robot_description()
    rec.robot_name = urdf_robot_name(urdf)
    with GraphRun(gc, opts.mode, opts.executor, viewer_settings(opts)) as run:
        recorder = make_recorder(rec, context=run.context)
        run.add(recorder.node)
        rec.mode = run.description
        via_action = opts.via == 'action'
        if via_action and recorder.follow is None:
            return rec, None, ['--via action needs control_msgs (tools/build_interfaces.sh builds it)']
        problem = _start(run, recorder, opts, via_action)
        if problem:
            return rec, None, [problem]
        goal_sent = _send(recorder, opts, urdf, via_action)
        finished, wall_limit = _follow(run, recorder, opts)
        if via_action and run.alive():
            rec.goal_result = goal_result(run.executor, goal_sent)
        if not run.alive():
            return rec, None, [f'during the trajectory: {run.exited()}']
        if not finished:
            return rec, None, [f'the simulation did not reach the end of the trajectory within '
                               f'{wall_limit:g} s']
    return rec, analyse(rec, max_error=opts.max_error), []


def main(opts) -> int:
    """Run the joint-space demo with the dispatcher's options (demos/__main__.py); the exit code."""
    return demo_main(opts, run_demo, _report)


def _report(opts, rec: Recording, report: DemoReport) -> list[str]:
    """The report, the goal's result and the contact summary printed, the figures drawn; the failed
    checks."""
    print(report_text(rec, report))
    problems = list(report.problems)
    if rec.goal_result is not None:
        status, code, text = rec.goal_result
        print(f'\nFollowJointTrajectory goal: {status}, error_code {code}'
              f"{f' ({text})' if text else ''}")
        if status != 'SUCCEEDED':
            problems.append(f'the FollowJointTrajectory goal ended {status}: {text}')
    summary = contact_summary(rec) if opts.push else None
    if opts.push:
        print(contact_text(summary))
    if not opts.no_plot and rec.joint_names:
        path = plot(rec, report, opts.output)
        print(f'\nplot: {path}')
        if opts.push:
            path = plot_contact(rec, Path(opts.output).with_name('contact.png'))
            print(f'plot: {path}')
    return problems

