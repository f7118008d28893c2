"""Demo (``python -m robot_dynamics_ros.demos --payload``, ``make demo DEMO_ARGS=--payload``): the simulated
UR5e carries a payload the controller does not know of; the dynamics node identifies it from the joint
states, the controller is told, and the tracking error drops.

1. Starts the simulation graph (the joint-space demo's, config/simulation.yaml) and gives the simulator a
   payload at tool0 (``--payload-mass``, default 2 kg; centre of mass ``PAYLOAD_COM``, inertia
   ``PAYLOAD_INERTIA``): the simulator's payload parameters are the real payload; the controller and the
   dynamics node believe there is none.
2. Runs the joint-space demo's trajectory (every joint out and back, ``--duration`` s) under computed torque
   and records the tracking error (~/tracking_error).
3. Calls /dynamics_node/identify_payload (std_srvs/Trigger): the payload at tool0 from the last
   identification_window s of joint states with efforts (the simulator publishes the applied torques);
   the demo sets that window to the trajectory and the settling after it, so that no state from before
   the payload was put on is in it.
4. Sets the estimate as /computed_torque_controller's payload parameters (SetParametersAtomically, what
   ``ros2 param set`` does one at a time), and runs the same trajectory again.
5. Prints both runs' tracking errors and the true vs estimated payload; draws out/demo_payload.png.

Exit code 0 when the estimate is within 5 % in mass and 1 cm in centre of mass and the tracking error
(RMS over the run) fell by at least half; 1 otherwise or when something did not arrive.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_dynamics_ros.demos.recording import (
    GraphRun,
    Series,
    demo_knots,
    demo_main,
    record_positions,
    save_figure,
    simulation_graph,
    trajectory_message,
    urdf_robot_name,
    viewer_settings,
)
from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['PayloadRecording', 'run', 'run_errors', 'report_text', 'plot', 'main']

SIMULATOR = '/simulator_node'
CONTROLLER = '/computed_torque_controller'
DYNAMICS = '/dynamics_node'
TRAJECTORY_TOPIC = f'{CONTROLLER}/joint_trajectory'
TRACKING_ERROR_TOPIC = f'{CONTROLLER}/tracking_error'
JOINT_STATES_TOPIC = '/joint_states'
FRAME = 'tool0'
PAYLOAD_COM = (0.02, -0.01, 0.09)                       # m, in tool0 coordinates
PAYLOAD_INERTIA = (0.006, 0.0, 0.0, 0.006, 0.0, 0.004)  # kg m^2 about the com: ixx ixy ixz iyy iyz izz
SETTLE = 1.0                                            # s of simulated time after each run


@dataclass
class PayloadRecording:
    """What the payload demo records (stamps: simulated time, ns)."""

    joint_names: tuple = ()
    joint_states: Series = field(default_factory=Series)
    tracking_error: Series = field(default_factory=Series)
    runs: list = field(default_factory=list)        # (start stamp ns, end stamp ns) of each trajectory
    true_payload: dict = field(default_factory=dict)
    estimate: dict = field(default_factory=dict)    # ~/identify_payload's JSON
    robot_name: str = 'robot'
    mode: str = ''


def _parameter_messages(mass, com, inertia, frame):
    from rclpy.parameter import Parameter

    values = (('payload_mass', float(mass)), ('payload_com', [float(x) for x in com]),
              ('payload_inertia', [float(x) for x in inertia]), ('payload_frame', frame))
    return [Parameter(name, value=value).to_parameter_msg() for name, value in values]


class PayloadDemoRecorder:
    """The work of the demo's own node (``node``): records, sends the trajectories (``reference``), calls
    the services (``identify``, ``set_parameters[node]``)."""

    def __init__(self, rec, node):
        from rcl_interfaces.srv import SetParametersAtomically
        from rclpy.qos import QoSProfile
        from sensor_msgs.msg import JointState
        from std_srvs.srv import Trigger
        from trajectory_msgs.msg import JointTrajectory

        qos = QoSProfile(depth=500)
        self.rec, self.node = rec, node
        self.reference = node.create_publisher(JointTrajectory, TRAJECTORY_TOPIC, 10)
        node.create_subscription(JointState, JOINT_STATES_TOPIC, self.on_state, qos)
        node.create_subscription(JointState, TRACKING_ERROR_TOPIC, self.on_error, qos)
        self.identify = node.create_client(Trigger, f'{DYNAMICS}/identify_payload')
        self.set_parameters = {name: node.create_client(SetParametersAtomically,
                                                        f'{name}/set_parameters_atomically')
                               for name in (SIMULATOR, CONTROLLER, DYNAMICS)}

    def on_state(self, msg):
        record_positions(self.rec, msg)

    def on_error(self, msg):
        rec = self.rec
        if tuple(msg.name) == rec.joint_names and len(msg.position) == len(msg.name):
            rec.tracking_error.add(stamp_ns(msg.header.stamp), list(msg.position))

    @staticmethod
    def payload_request(mass, com, inertia, frame=FRAME):
        from rcl_interfaces.srv import SetParametersAtomically

        return SetParametersAtomically.Request(parameters=_parameter_messages(mass, com, inertia, frame))


def make_recorder(rec, context) -> PayloadDemoRecorder:
    """The demo's recorder, on a node of its own (imports rclpy)."""
    from rclpy.node import Node

    return PayloadDemoRecorder(rec, Node('demo_payload_recorder', context=context))


def _call(graph, client, request, what, timeout=30.0):
    """The service's answer, or None (and why) when it is not there or does not answer."""
    if not graph.spin_until(client.service_is_ready, timeout):
        return None, f'{what}: service {client.srv_name} not available'
    future = client.call_async(request)
    if not graph.spin_until(future.done, timeout):
        return None, f'{what}: no answer from {client.srv_name} within {timeout:g} s'
    return future.result(), None


def _run_trajectory(graph, recorder, rec, knots, duration):
    """Send the trajectory; spin until the simulated time passes its end plus SETTLE. Problem or None."""
    start = rec.joint_states.stamp[-1]
    recorder.reference.publish(trajectory_message(rec.joint_names, *knots))
    end = start + int((duration + SETTLE) * 1e9)
    if not graph.spin_until(lambda: rec.joint_states.stamp[-1] >= end, 3.0 * (duration + SETTLE) + 60.0):
        return 'the simulation did not reach the end of the trajectory' + graph.exit_note()
    rec.runs.append((start, end))
    return None


def run(opts):
    """Bring the graph up, give the simulator the payload, run, identify, tell the controller, run
    again. Returns (recording, problems)."""
    gc = simulation_graph(opts)
    urdf = gc.robot_description()
    rec = PayloadRecording(robot_name=urdf_robot_name(urdf),
                           true_payload=dict(mass=opts.payload_mass, com=list(PAYLOAD_COM),
                                             inertia=list(PAYLOAD_INERTIA), frame=FRAME))
    with GraphRun(gc, opts.mode, opts.executor, viewer_settings(opts)) as graph:
        from rclpy.parameter import Parameter

        recorder = make_recorder(rec, graph.context)
        graph.add(recorder.node)
        rec.mode = graph.description
        if not graph.spin_until(lambda: rec.joint_states.values and rec.tracking_error.values
                                and recorder.reference.get_subscription_count() > 0, opts.startup_timeout):
            return rec, [f'no joint states, tracking errors or {TRAJECTORY_TOPIC} subscriber within '
                         f'{opts.startup_timeout:g} s' + graph.exit_note()]
        # the real payload (the simulator's); the dynamics node identifies at the same frame
        # identified from the states since the payload is on: the trajectory and the settling after
        window = Parameter('identification_window', value=float(opts.duration + SETTLE)).to_parameter_msg()
        for node, payload in ((SIMULATOR, (opts.payload_mass, PAYLOAD_COM, PAYLOAD_INERTIA)),
                              (DYNAMICS, (0.0, (0.0, 0.0, 0.0), (0.0,) * 6))):
            request = recorder.payload_request(*payload)
            if node == DYNAMICS:
                request.parameters.append(window)
            answer, problem = _call(graph, recorder.set_parameters[node], request,
                                    f'setting the payload on {node}')
            if problem or not answer.result.successful:
                return rec, [problem or f'{node} refused the payload: {answer.result.reason}']
        print(f'demo: the simulated arm carries {opts.payload_mass:g} kg at {FRAME}; the controller does '
              'not know', file=sys.stderr, flush=True)
        graph.wait_simulated(rec.joint_states, SETTLE)      # the arm takes the weight: it sags, it is held
        knots, _ = demo_knots(opts, urdf, rec.joint_names, np.asarray(rec.joint_states.values[-1]))
        problem = _run_trajectory(graph, recorder, rec, knots, opts.duration)
        if problem:
            return rec, [problem]
        answer, problem = _call(graph, recorder.identify, _trigger_request(), 'identifying the payload')
        if problem:
            return rec, [problem]
        rec.estimate = json.loads(answer.message)
        print(f'demo: /dynamics_node/identify_payload: {answer.message}', file=sys.stderr, flush=True)
        if not answer.success:
            return rec, [f'identification failed: {rec.estimate.get("reason")}']
        e = rec.estimate
        answer, problem = _call(graph, recorder.set_parameters[CONTROLLER],
                                recorder.payload_request(e['mass'], e['com'], e['inertia'], e['frame']),
                                'telling the controller')
        if problem or not answer.result.successful:
            return rec, [problem or f'the controller refused the estimate: {answer.result.reason}']
        print('demo: the controller now knows the payload; the same trajectory again', file=sys.stderr,
              flush=True)
        graph.wait_simulated(rec.joint_states, SETTLE)      # the hold after the first run converges first
        problem = _run_trajectory(graph, recorder, rec, knots, opts.duration)
        if problem:
            return rec, [problem]
    return rec, []


def _trigger_request():
    from std_srvs.srv import Trigger
    return Trigger.Request()


def run_errors(rec):
    """Per run: (time since its start s (N,), tracking errors (N, n) rad) over the trajectory and SETTLE."""
    _, stamps, E = rec.tracking_error.arrays()
    out = []
    for start, end in rec.runs:
        inside = (stamps >= start) & (stamps <= end)
        out.append(((stamps[inside] - start) * 1e-9, E[inside]))
    return out


def _payload_errors(rec):
    """(|mass error| relative, |com error| m) of the estimate."""
    true, e = rec.true_payload, rec.estimate
    return (abs(e['mass'] - true['mass']) / true['mass'],
            float(np.linalg.norm(np.subtract(e['com'], true['com']))))


def report_text(rec) -> str:
    true, e = rec.true_payload, rec.estimate
    lines = ['', f'{rec.robot_name}: a payload at {FRAME} the controller did not know ({rec.mode})',
             '                 mass [kg]   centre of mass [m]']
    lines.append(f'true             {true["mass"]:9.4f}   {np.round(true["com"], 4).tolist()}')
    lines.append(f'identified       {e["mass"]:9.4f}   {np.round(e["com"], 4).tolist()}   (residual '
                 f'{e["residual_rms"]:.3g} N m, condition {e["condition"]:.3g}, {e["samples"]} states over '
                 f'{e["seconds"]:.1f} s)')
    lines.append('inertia about the com [kg m^2] (ixx ixy ixz iyy iyz izz):')
    lines.append(f'  true       {np.round(true["inertia"], 5).tolist()}')
    lines.append(f'  identified {np.round(e["inertia"], 5).tolist()}')
    lines.append('tracking error        RMS [mrad]   max [mrad]')
    for label, (_, E) in zip(('payload unknown', 'payload applied'), run_errors(rec)):
        lines.append(f'{label:<20}  {1e3 * np.sqrt(np.mean(E ** 2)):10.4g}   {1e3 * np.abs(E).max():10.4g}')
    lines.append('(computed torque is as stiff as M(q) kp: least at the light wrists, which an unknown '
                 'payload turns most)')
    return '\n'.join(lines)


def plot(rec, path) -> Path:
    """Tracking error before/after (norm over time, log scale; per joint RMS), true vs estimated payload."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    (t1, E1), (t2, E2) = run_errors(rec)
    true, e = rec.true_payload, rec.estimate
    fig = plt.figure(figsize=(14, 9))
    grid = fig.add_gridspec(2, 3)
    ax = fig.add_subplot(grid[0, :])
    ax.semilogy(t1, np.maximum(np.linalg.norm(E1, axis=1), 1e-12), color='#d62728', lw=1.2,
                label='payload unknown to the controller')
    ax.semilogy(t2, np.maximum(np.linalg.norm(E2, axis=1), 1e-12), color='#2ca02c', lw=1.2,
                label='identified payload applied')
    ax.set_xlabel('time since the trajectory was sent (simulated) [s]')
    ax.set_ylabel('|joint tracking error| [rad]')
    ax.set_title('Computed-torque tracking of the same trajectory, before and after identification',
                 loc='left', fontweight='bold')
    ax.legend()
    ax = fig.add_subplot(grid[1, 0])
    x = np.arange(len(rec.joint_names))
    ax.bar(x - 0.2, 1e3 * np.sqrt(np.mean(E1 ** 2, axis=0)), 0.4, color='#d62728', label='unknown')
    ax.bar(x + 0.2, 1e3 * np.sqrt(np.mean(E2 ** 2, axis=0)), 0.4, color='#2ca02c', label='applied')
    ax.set_yscale('log')
    ax.set_xticks(x, [name.replace('_joint', '') for name in rec.joint_names], rotation=30, fontsize=8)
    ax.set_ylabel('RMS tracking error [mrad]')
    ax.set_title('Per joint', loc='left', fontweight='bold')
    ax.legend(fontsize=8)
    ax = fig.add_subplot(grid[1, 1])
    labels = ['mass [kg]', 'c_x [cm]', 'c_y [cm]', 'c_z [cm]']
    true_values = [true['mass']] + [100 * c for c in true['com']]
    estimated = [e['mass']] + [100 * c for c in e['com']]
    x = np.arange(4)
    ax.bar(x - 0.2, true_values, 0.4, color='0.6', label='true (simulator)')
    ax.bar(x + 0.2, estimated, 0.4, color='#1f77b4', label='identified')
    ax.set_xticks(x, labels)
    ax.axhline(0.0, color='k', lw=0.6)
    ax.set_title(f'Payload at {FRAME}', loc='left', fontweight='bold')
    ax.legend(fontsize=8)
    ax = fig.add_subplot(grid[1, 2])
    names = ['ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz']
    x = np.arange(6)
    ax.bar(x - 0.2, 1e3 * np.asarray(true['inertia']), 0.4, color='0.6', label='true')
    ax.bar(x + 0.2, 1e3 * np.asarray(e['inertia']), 0.4, color='#1f77b4', label='identified')
    ax.set_xticks(x, names)
    ax.axhline(0.0, color='k', lw=0.6)
    ax.set_ylabel('[g m^2]')
    ax.set_title('Inertia about the centre of mass', loc='left', fontweight='bold')
    ax.legend(fontsize=8)
    for a in fig.axes:
        a.grid(True, alpha=0.3)
    mass_error, com_error = _payload_errors(rec)
    fig.suptitle(f'{rec.robot_name}: {true["mass"]:g} kg payload identified by '
                 f'/dynamics_node/identify_payload (mass {100 * mass_error:.2g} %, centre of mass '
                 f'{1e3 * com_error:.2g} mm off); {rec.mode}', fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return save_figure(fig, path)


def main(opts) -> int:
    """The payload demo with the demos' parsed options (demos/__main__.py: ``--payload`` and the ones it
    shares)."""
    return demo_main(opts, run, _report)


def _report(opts, rec):
    """The report printed, the figure drawn; the failed checks."""
    print(report_text(rec))
    if not opts.no_plot:
        path = plot(rec, Path(opts.output).with_name('demo_payload.png'))
        print(f'\nplot: {path}')
    mass_error, com_error = _payload_errors(rec)
    (_, before), (_, after) = run_errors(rec)
    failures = []
    if not (mass_error < 0.05 and com_error < 0.01):
        failures.append(f'the estimate is off by {100 * mass_error:.3g} % in mass, {1e3 * com_error:.3g} mm '
                        'in centre of mass (limits 5 %, 10 mm)')
    rms_before, rms_after = (float(np.sqrt(np.mean(E ** 2))) for E in (before, after))
    if not rms_after < 0.5 * rms_before:
        failures.append(f'the tracking error did not drop by half: RMS {rms_before:.3g} -> '
                        f'{rms_after:.3g} rad')
    return failures

