"""Demo (``python -m robot_dynamics_ros.demos --mujoco``, ``make demo DEMO_ARGS=--mujoco``): the UR5e
simulated by MuJoCo presses its tool on a table, slides along it and lifts off; the external torque
estimator, which knows nothing of the table, is judged against MuJoCo's contact torques.

1. The simulation graph with task_space_controller (config/simulation.yaml), simulator_node on MuJoCo
   (MuJoCo's model of the same URDF) in ``worlds/table.xml`` (a table top at z = 0.40 m under the tool, a
   free cube beyond the slide's end). Joint friction off: MuJoCo's ``frictionloss`` is dry friction held
   by its solver, not the package's smoothed Coulomb model, and the estimator runs with friction false.
2. Targets (/task_space_controller/target_pose, base frame, tool z pointing down): the 25 mm ball on
   tool0 ``--depth`` below the table top, which stops it, so the pose error presses with F ≈ k Δz, k
   between kp / (Λ⁻¹)_zz (other directions free) and kp Λ_zz (held): 460-1010 N/m at kp = 225 1/s², 15 N
   at 25 mm; along y by ``--slide`` m (MuJoCo's friction, μ = 1, drags); up to the start's height. Each
   goes when the desired pose reached the previous one plus ``--dwell`` s of simulated time.
3. Records /joint_states, /simulator_node/contact_torques (Σ Jᵀ f of MuJoCo's contacts: the truth) and
   ~/contacts (the forces), /external_torque_estimator/external_torques, ~/external_wrench, ~/contact.
4. Prints the contact force, the estimate's error per joint over the contact from
   ``SETTLE_TIME_CONSTANTS`` observer time constants after the touch (raw, and against MuJoCo's torque
   through the observer's own K/(s + K): what a perfect observer would give), when the estimate crossed
   contact_threshold against MuJoCo's first and last contact; draws out/demo_mujoco.png.

Exit code 0 when the press reached ``MIN_FORCE``, the estimate crossed the threshold within
``--max-detection-delay`` s after the first contact (never before) and fell below it for good within
``--max-release-delay`` s of the last, ~/contact went false, true, ..., false, and the RMS error over
all joints is within ``--max-relative-error`` (raw) and ``LAGGED_LIMIT`` (through the lag) of the RMS
contact torque; 1 otherwise or when something did not arrive.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_dynamics_ros.cli import bringup
from robot_dynamics_ros.cli.resources import world_file
from robot_dynamics_ros.demos import pose_targets
from robot_dynamics_ros.demos.pose_targets import TOOL, model_order
from robot_dynamics_ros.demos.recording import (
    GraphRun,
    Series,
    at_common_stamps,
    demo_main,
    save_figure,
    simulation_graph,
    urdf_robot_name,
    values_by_name,
    viewer_settings,
)
from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['MujocoRecording', 'Comparison', 'Findings', 'press_slide_lift_targets', 'table_top', 'tool_ball',
           'observer_lag', 'compare', 'detection', 'analyse', 'run', 'report_text', 'plot', 'main']

SIMULATOR, ESTIMATOR, CONTROLLER = '/simulator_node', '/external_torque_estimator', '/task_space_controller'
WORLD = 'table.xml'            # the world, worlds/table.xml
#: The raw comparison starts this many observer time constants 1/K after the touch: the estimate of a
#: step has then e^-5 = 0.7 % of it left to go.
SETTLE_TIME_CONSTANTS = 5.0
#: Newtons MuJoCo's contact must press with at least for the demo to count as a press.
MIN_FORCE = 5.0
#: The estimate against MuJoCo's torque through the observer's K/(s + K) leaves the two models'
#: difference and the sampling (MuJoCo's torque at each state, the observer's over each 2 ms step):
#: measured 0.6 % of the RMS contact torque; the limit leaves three times that.
LAGGED_LIMIT = 0.02


@dataclass
class MujocoRecording:
    """What the MuJoCo demo records (stamps: the simulated time, ns; joint vectors in joint_names order)."""

    joint_names: tuple = ()
    joint_states: Series = field(default_factory=Series)       # q, rad
    commands: Series = field(default_factory=Series)           # τ, N m (pose_target_recorder's)
    desired: Series = field(default_factory=Series)            # T_des (4, 4) flattened, base frame
    contact_torques: Series = field(default_factory=Series)    # MuJoCo's Σ Jᵀ f, N m
    external_torques: Series = field(default_factory=Series)   # the estimate τ̂_ext, N m
    wrench: Series = field(default_factory=Series)             # (m, f) on the robot at tool0, tool0 axes
    contact_force: Series = field(default_factory=Series)      # Σ f of MuJoCo's contacts, base axes, N
    contact_flag: list = field(default_factory=list)           # the ~/contact values, in order
    targets: list = field(default_factory=list)                # (stamp when sent, T (4, 4))
    labels: list = field(default_factory=list)                 # what each target does
    phases: list = field(default_factory=list)                 # (stamp sent, stamp the desired got there)
    surface_z: float = 0.40                                    # the table top, m, base frame
    ball_radius: float = 0.025                                 # the tool ball's, m
    observer_gain: float = 50.0                                # K, 1/s
    contact_threshold: float = 1.0                             # ~/contact's, N m
    kp: float = 225.0                                          # the task-space PD's (translation), 1/s²
    robot_name: str = 'robot'
    mode: str = ''
    effort_limit: np.ndarray | None = None


def table_top(world_path, geom='table_top'):
    """z (m, world = base frame) of the top of the box ``geom`` of a world MJCF: its body's pos plus its
    own, plus its half height (no rotations)."""
    for body in ET.parse(world_path).getroot().iter('body'):
        for g in body.findall('geom'):
            if g.get('name') == geom:
                z = float(body.get('pos', '0 0 0').split()[2]) + float(g.get('pos', '0 0 0').split()[2])
                return z + float(g.get('size').split()[2])
    raise ValueError(f'{world_path} has no box geom {geom!r}')


def tool_ball(urdf_xml, link=TOOL):
    """(radius m, centre (3,) m in the link's frame) of the sphere collision of ``link`` in a URDF's XML."""
    for element in ET.fromstring(urdf_xml).iter('link'):
        for collision in element.findall('collision') if element.get('name') == link else ():
            sphere, origin = collision.find('geometry/sphere'), collision.find('origin')
            if sphere is not None:
                xyz = (origin.get('xyz') if origin is not None else None) or '0 0 0'
                return float(sphere.get('radius')), np.array(xyz.split(), dtype=np.float64)
    raise ValueError(f'the URDF has no sphere collision on {link}')


def press_slide_lift_targets(T_start, touch_z, depth=0.025, slide=0.15):
    """The demo's targets [(label, T (4, 4))], all in the start's orientation: tool0 ``depth`` below
    ``touch_z`` (where the ball touches the table); then ``slide`` m along the base's y; then up to the
    start's height."""
    targets = [np.array(T_start, dtype=np.float64) for _ in range(3)]
    for T, dy, z in zip(targets, (0.0, slide, slide), (touch_z - depth, touch_z - depth, T_start[2, 3])):
        T[1:3, 3] = T_start[1, 3] + dy, z
    return list(zip(('press', 'slide', 'lift'), targets))


def make_recorder(rec, context):
    """The demo's node's recorder: records, and publishes the targets (imports rclpy)."""
    from geometry_msgs.msg import PoseStamped, WrenchStamped
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool
    from visualization_msgs.msg import MarkerArray

    from robot_dynamics_ros.nodes.contact_markers import FORCE_SCALE
    from robot_dynamics_ros.nodes.conversions import pose_to_matrix

    recorder = pose_targets.pose_target_recorder(rec, context, 'demo_mujoco_recorder',
                                                 f'{CONTROLLER}/target_pose')

    def efforts(series):
        def on_message(msg):
            values = values_by_name(msg.name, msg.effort, rec.joint_names) if rec.joint_names else None
            if values is not None:
                series.add(stamp_ns(msg.header.stamp), values)
        return on_message

    def on_wrench(msg):
        m, f = msg.wrench.torque, msg.wrench.force
        rec.wrench.add(stamp_ns(msg.header.stamp), [m.x, m.y, m.z, f.x, f.y, f.z])

    def on_contacts(msg):      # force arrows from p to p + FORCE_SCALE f; no contact: a DELETEALL only
        arrows = [m for m in msg.markers if m.ns == 'contact_force' and len(m.points) == 2]
        f = sum(([b.x - a.x, b.y - a.y, b.z - a.z] for a, b in (m.points for m in arrows)), np.zeros(3))
        stamp = stamp_ns(arrows[0].header.stamp) if arrows else (rec.contact_torques.stamp or [-1])[-1]
        rec.contact_force.add(stamp, list(f / FORCE_SCALE))

    sub = recorder.node.create_subscription
    sub(PoseStamped, f'{CONTROLLER}/desired_pose', lambda m: rec.desired.add(
        stamp_ns(m.header.stamp), pose_to_matrix(m.pose).ravel().tolist()), recorder.qos)
    sub(JointState, f'{SIMULATOR}/contact_torques', efforts(rec.contact_torques), recorder.qos)
    sub(JointState, f'{ESTIMATOR}/external_torques', efforts(rec.external_torques), recorder.qos)
    sub(WrenchStamped, f'{ESTIMATOR}/external_wrench', on_wrench, recorder.qos)
    sub(MarkerArray, f'{SIMULATOR}/contacts', on_contacts, recorder.qos)
    sub(Bool, f'{ESTIMATOR}/contact', lambda m: rec.contact_flag.append(bool(m.data)), QoSProfile(
        depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    return recorder


def _graph_settings(gc, rec):
    """The estimator's gain and threshold, the controller's kp (translation) from the parameter file (else
    the nodes' defaults); the ball and the table from the URDF and the world. Returns the ball's centre."""
    parameters = bringup.config_parameters(gc.config)
    estimator = parameters.get('external_torque_estimator', {})
    rec.observer_gain = float(np.min(estimator.get('observer_gain', 50.0)))
    rec.contact_threshold = float(np.min(estimator.get('contact_threshold', 5.0)))
    rec.kp = float(np.atleast_1d(parameters.get('task_space_controller', {}).get('kp', [225.0]))[-1])
    rec.ball_radius, centre = tool_ball(gc.robot_description())
    rec.surface_z = table_top(world_file(WORLD))
    return centre


def run(opts):
    """Bring the graph up on MuJoCo with the task-space controller, press, slide, lift, record. Returns
    (recording, model, problems)."""
    from robot_dynamics_ros import dynamics as rd

    gc = simulation_graph(opts, controller='task_space', node_parameters={'simulator_node': {
        'engine': 'mujoco', 'world_path': str(world_file(WORLD)), 'friction': False}})
    urdf = gc.robot_description()
    model = rd.load_urdf(urdf, tip_link=TOOL)
    rec = MujocoRecording(robot_name=urdf_robot_name(urdf))
    try:
        centre = _graph_settings(gc, rec)
    except ValueError as exc:      # a robot without the tool ball
        return rec, model, [str(exc)]
    with GraphRun(gc, opts.mode, opts.executor, viewer_settings(opts)) as graph:
        recorder = make_recorder(rec, graph.context)
        graph.add(recorder.node)
        demo = pose_targets.PoseDemo(graph, model, rec, recorder)
        T_start, problem = pose_targets.start_at_rest(demo, rec.desired, 'desired poses',
                                                      opts.startup_timeout)
        if problem:
            return rec, model, [problem]
        # the ball's lowest point on the table: tool0 at the surface + radius − the centre's height
        touch_z = rec.surface_z + rec.ball_radius - (T_start[:3, :3] @ centre)[2]
        for label, T in press_slide_lift_targets(T_start, touch_z, opts.depth, opts.slide):
            recorder.send(T)
            rec.labels.append(label)
            print(f'demo: {label}: tool0 to {np.round(T[:3, 3], 3).tolist()} m', file=sys.stderr, flush=True)
            if not graph.spin_until(lambda: pose_targets.desired_pose_at(rec, T), 60.0):
                return rec, model, [f'the desired pose did not reach the {label} target' + graph.exit_note()]
            rec.phases.append((rec.targets[-1][0], rec.desired.stamp[-1]))
            if not graph.wait_simulated(rec.joint_states, opts.dwell):
                return rec, model, ['the simulation stalled' + graph.exit_note()]
    return rec, model, []


def observer_lag(stamps, tau, gain):
    """τ seen through K/(s + K), by Tustin's rule as the observer (dynamics/contact.py), from y = 0:
    y_k = ((2 − K dt) y_{k−1} + K dt (u_k + u_{k−1})) / (2 + K dt)."""
    y = np.zeros_like(tau)
    kdt = gain * np.diff(stamps) * 1e-9
    for k in range(1, len(tau)):
        y[k] = ((2.0 - kdt[k - 1]) * y[k - 1] + kdt[k - 1] * (tau[k] + tau[k - 1])) / (2.0 + kdt[k - 1])
    return y


@dataclass
class Comparison:
    """The estimate against MuJoCo's contact torques over ``window`` (stamps ns) at the ``states`` where
    MuJoCo has the contact (not the ``bounces``: its ball off the table for a step): per joint the RMS τ
    (``scale``), the RMS and largest |error| (N m); ``lagged_rms`` against τ through the observer's lag,
    at every state; ``relative``: RMS |error| / RMS |τ|, all joints (``lag_only``: a perfect observer's)."""

    window: tuple
    states: int
    bounces: int
    scale: np.ndarray
    rms: np.ndarray
    max: np.ndarray
    lagged_rms: np.ndarray
    relative: float
    lagged_relative: float
    lag_only: float


def compare(rec, span):
    """The Comparison over the contact ``span`` (first, last stamp) from SETTLE_TIME_CONSTANTS / K on."""
    stamps, truth, estimate = at_common_stamps(rec.contact_torques, rec.external_torques)
    lagged = observer_lag(stamps, truth, rec.observer_gain)
    start = span[0] + int(SETTLE_TIME_CONSTANTS / rec.observer_gain * 1e9)
    window = (stamps >= start) & (stamps <= span[1])
    inside = window & np.any(truth != 0.0, axis=1)
    T, E, L = truth[inside], estimate[inside] - truth[inside], estimate[window] - lagged[window]

    def rms(X, joints=False):         # per joint, or of |X| over all joints
        return np.sqrt(np.mean(X ** 2, axis=0)) if joints else float(np.sqrt(np.mean(np.sum(X ** 2, axis=1))))
    return Comparison((start, span[1]), int(inside.sum()), int(window.sum() - inside.sum()), rms(T, True),
                      rms(E, True), np.abs(E).max(axis=0), rms(L, True), rms(E) / rms(T), rms(L) / rms(T),
                      rms(lagged[inside] - T) / rms(T))


def detection(rec, span):
    """The estimator's rule for ~/contact (any |τ̂_ext,i| > contact_threshold) on the recorded estimates,
    whose stamps are exact where ~/contact has none: (s from MuJoCo's first contact to the first estimate
    above, s from its last to the last above (None: none), whether one before the contact was above)."""
    _, stamps, E = rec.external_torques.arrays()
    above = stamps[np.any(np.abs(E) > rec.contact_threshold, axis=1)] if E.size else stamps
    after = above[above >= span[0]]
    if after.size == 0:
        return None, None, bool(above.size)
    return (after[0] - span[0]) * 1e-9, (after[-1] - span[1]) * 1e-9, bool((above < span[0]).any())


def forces(rec):
    """MuJoCo's contact force (N, base axes): (mean normal while the press is held, largest normal before
    the slide (the touch), mean normal and mean |tangential| while the desired pose slides)."""
    _, s, F = rec.contact_force.arrays()
    (_, held), (slide, slid) = rec.phases[:2]

    def mean(a, b, values):
        return float(np.mean(values[(s >= a) & (s <= b)])) if ((s >= a) & (s <= b)).any() else float('nan')
    return (mean(held, slide, F[:, 2]), float(F[s < slide, 2].max(initial=0.0)), mean(slide, slid, F[:, 2]),
            mean(slide, slid, np.linalg.norm(F[:, :2], axis=1)))


def press_stiffness(model, q, kp):
    """The task-space PD's stiffness along the base's z at q (N/m): kp / (Λ⁻¹)_zz with the other directions
    free, kp Λ_zz with them held; Λ⁻¹ = J M⁻¹ Jᵀ, J the world-aligned Jacobian of the tool."""
    from robot_dynamics_ros import dynamics as rd

    J = rd.jacobian(model, q, TOOL, reference='world_aligned')
    inverse = J @ np.linalg.solve(rd.mass_matrix(model, q), J.T)
    return kp / inverse[5, 5], kp * np.linalg.inv(inverse)[5, 5]


@dataclass
class Findings:
    """MuJoCo's contact ``span`` (first, last stamp), the ``comparison``, the ``delays`` (``detection``),
    the ``flags`` ~/contact took (repeats dropped), the ``force`` (``forces``), the ``stiffness``."""

    span: tuple
    comparison: Comparison
    delays: tuple
    flags: list
    force: tuple
    stiffness: tuple


def analyse(rec, model):
    """The Findings of a recording, or None when MuJoCo saw no contact."""
    stamps, truth, _ = at_common_stamps(rec.contact_torques, rec.external_torques)
    touching = stamps[np.any(truth != 0.0, axis=1)] if truth.size else stamps
    if touching.size == 0:
        return None
    span = (int(touching[0]), int(touching[-1]))
    _, sq, Q = rec.joint_states.arrays()
    q = Q[min(np.searchsorted(sq, rec.phases[0][1]), len(sq) - 1)][model_order(model, rec.joint_names)]
    flags = [v for k, v in enumerate(rec.contact_flag) if k == 0 or v != rec.contact_flag[k - 1]]
    return Findings(span, compare(rec, span), detection(rec, span), flags, forces(rec),
                    press_stiffness(model, q, rec.kp))


def report_text(rec, found, opts) -> str:
    held, peak, normal, friction = found.force
    c, (on, off, early) = found.comparison, found.delays
    lag = 1e3 / rec.observer_gain
    lines = ['', f'{rec.robot_name} on MuJoCo ({WORLD}): the {1e3 * rec.ball_radius:g} mm ball on {TOOL} '
                 f'sent {1e3 * opts.depth:g} mm below the table top (z = {rec.surface_z:.3f} m), along y by '
                 f'{opts.slide:g} m, up again ({rec.mode})',
             f'contact force (MuJoCo): {held:.1f} N pressing (kp = {rec.kp:g}/s²: {found.stiffness[0]:.0f}-'
             f'{found.stiffness[1]:.0f} N/m along z; peak {peak:.1f} N at the touch); sliding {normal:.1f} N '
             f'normal, {friction:.1f} N friction',
             f'the estimate above contact_threshold {rec.contact_threshold:g} N m from MuJoCo\'s first '
             f'contact {1e3 * on:+.0f} ms to its last {1e3 * off:+.0f} ms (MuJoCo\'s contact: '
             f'{1e-9 * (found.span[1] - found.span[0]):.2f} s)'
             if on is not None else 'the estimate never exceeded contact_threshold',
             '~/contact: ' + ' -> '.join(str(v).lower() for v in found.flags) + ' (again: the lift-off '
             'unloads the ball slowly)' * (len(found.flags) > 3) + '; ABOVE THE THRESHOLD BEFORE IT' * early,
             f'external torques vs MuJoCo\'s contact torques over {1e-9 * (c.window[1] - c.window[0]):.2f} s '
             f'of contact from {SETTLE_TIME_CONSTANTS * lag:.0f} ms after the touch: {c.states} states (and '
             f'{c.bounces} where MuJoCo\'s ball was off the table for a step: in the last column only)',
             'joint                  RMS τ [N m]  RMS error [N m]  max error [N m]  relative  '
             'lag-matched [N m]']
    for j, name in enumerate(rec.joint_names):
        lines.append(f'{name:<22} {c.scale[j]:11.3f}  {c.rms[j]:15.4f}  {c.max[j]:15.4f}  '
                     f'{100 * c.rms[j] / max(c.scale[j], 1e-12):6.2f} %  {c.lagged_rms[j]:17.5f}')
    lines.append(f'all joints: RMS error {100 * c.relative:.2f} % of the RMS contact torque (a perfect '
                 f'observer\'s {lag:.0f} ms lag alone: {100 * c.lag_only:.2f} %); '
                 f'{100 * c.lagged_relative:.2f} % against MuJoCo\'s torque through its K/(s + K)')
    return '\n'.join(lines)


def main(opts) -> int:
    """The MuJoCo demo with the demos' parsed options (demos/__main__.py: ``--mujoco`` and the ones it
    shares)."""
    return demo_main(opts, run, _report)


def _report(opts, rec, model):
    """The report printed, the figure drawn; the failed checks."""
    found = analyse(rec, model)
    if found is None:
        return ['MuJoCo found no contact between the tool and the table']
    print(report_text(rec, found, opts))
    if not opts.no_plot:
        path = plot(rec, model, found, opts, Path(opts.output).with_name('demo_mujoco.png'))
        print(f'\nplot: {path}')
    return _failures(opts, found)


def _failures(opts, found):
    (on, off, early), c = found.delays, found.comparison
    checks = [(found.force[0] >= MIN_FORCE, f'the tool pressed with {found.force[0]:.3g} N, < {MIN_FORCE:g}'),
              (not early, 'the estimate exceeded contact_threshold before MuJoCo\'s first contact'),
              (on is not None and on <= opts.max_detection_delay,
               f'the contact was not detected within {1e3 * opts.max_detection_delay:g} ms'),
              (off is not None and abs(off) <= opts.max_release_delay, 'the estimate did not fall below '
               f'contact_threshold within {1e3 * opts.max_release_delay:g} ms of the lift-off'),
              (found.flags[:1] == [False] and True in found.flags and found.flags[-1] is False,
               f'~/contact took the values {found.flags}, not false, true, ..., false'),
              (c.relative <= opts.max_relative_error, f'the estimate is off by {100 * c.relative:.3g} % of '
               f'the contact torque (limit {100 * opts.max_relative_error:g} %)'),
              (c.lagged_relative <= LAGGED_LIMIT, f'the estimate is off by {100 * c.lagged_relative:.3g} % '
               f'of the contact torque through the observer\'s lag (limit {100 * LAGGED_LIMIT:g} %)')]
    return [message for ok, message in checks if not ok]


def _decorate(ax, rec, found, origin, title, ylabel, labels=False, fontsize=12):
    """Title, y label, MuJoCo's contact span as a band, the targets as dotted lines (named: ``labels``)."""
    ax.set_title(title, loc='left', fontweight='bold', fontsize=fontsize)
    ax.set_ylabel(ylabel)
    ax.axvspan(*((np.asarray(found.span) - origin) * 1e-9), color='#ffd54f', alpha=0.18, lw=0,
               label='MuJoCo: in contact' if labels else None)
    for (sent, _), label in zip(rec.phases, rec.labels):
        ax.axvline((sent - origin) * 1e-9, color='0.5', lw=0.8, ls=':')
        if labels:
            ax.annotate(label, ((sent - origin) * 1e-9, 1.0), xycoords=('data', 'axes fraction'),
                        xytext=(3, -12), textcoords='offset points', fontsize=9, color='0.3')
    ax.grid(True, alpha=0.3)


def _bounces(stamps, values, found):
    """The states in the contact span at which MuJoCo's ball is off the table (all of ``values`` zero)."""
    return (stamps >= found.span[0]) & (stamps <= found.span[1]) & ~np.any(values != 0.0, axis=1)


def _without_bounces(ax, t, values, bounce):
    """``values`` with NaN at the bounces, which are drawn as dots at zero instead."""
    ax.plot(t[bounce], np.zeros(bounce.sum()), '.', color='0.3', ms=3, alpha=0.6)
    return np.where(bounce[:, None], np.nan, values)


def _plot_height(ax, rec, model, found, origin):
    from robot_dynamics_ros import dynamics as rd

    _, sq, Q = rec.joint_states.arrays()
    _, sd, D = rec.desired.arrays()
    z = np.array([rd.frame_pose(model, q, TOOL)[2, 3] for q in Q[:, model_order(model, rec.joint_names)]])
    _decorate(ax, rec, found, origin, 'Height of the tool ball\'s lowest point', '[m]', labels=True)
    ax.axhline(rec.surface_z, color='#8d6e63', lw=3, label=f'table top (z = {rec.surface_z:.2f} m)')
    ax.plot((sd - origin) * 1e-9, D[:, 11] - rec.ball_radius, color='#1f77b4', lw=1.2, ls='--',
            label='desired (task_space_controller)')
    ax.plot((sq - origin) * 1e-9, z - rec.ball_radius, color='k', lw=1.6, label='actual')
    ax.margins(y=0.12)          # room for the targets' names
    ax.legend(fontsize=8, loc='center')


def _plot_force(ax, rec, model, found, origin):
    """MuJoCo's contact force against the estimator's ~/external_wrench force in base axes, R f_tool."""
    from robot_dynamics_ros import dynamics as rd

    _, sf, F = rec.contact_force.arrays()
    se, Q, W = at_common_stamps(rec.joint_states, rec.wrench)
    order = model_order(model, rec.joint_names)
    E = np.array([rd.frame_pose(model, q[order], TOOL)[:3, :3] @ w[3:] for q, w in zip(Q, W)])
    t, te = (sf - origin) * 1e-9, (se - origin) * 1e-9
    _decorate(ax, rec, found, origin, 'Force of the table on the tool (base axes)', '[N]')
    F = _without_bounces(ax, t, F, _bounces(sf, F, found))
    ax.plot(t, F[:, 2], color='#ef9a9a', lw=3.0, label='normal f_z: MuJoCo')
    ax.plot(te, E[:, 2], color='#b71c1c', lw=1.1, ls='--', label='estimator (~/external_wrench)')
    ax.plot(t, np.linalg.norm(F[:, :2], axis=1), color='#a5d6a7', lw=3.0, label='friction |f_xy|: MuJoCo')
    ax.plot(te, np.linalg.norm(E[:, :2], axis=1), color='#1b5e20', lw=1.1, ls='--', label='estimator')
    ax.legend(fontsize=8, ncol=2, loc='upper right')


def _plot_torques(axes, rec, found, origin):
    """The error norm (raw and lag-matched, log), then the three joints the contact loads most."""
    stamps, truth, estimate = at_common_stamps(rec.contact_torques, rec.external_torques)
    lagged = observer_lag(stamps, truth, rec.observer_gain)
    t, bounce, c = (stamps - origin) * 1e-9, _bounces(stamps, truth, found), found.comparison
    ax = axes[0]
    _decorate(ax, rec, found, origin, 'Estimate error (norm over the joints)', '[N m]')
    for values, masked, color, label in (
            (truth, True, '0.6', '|τ| MuJoCo\'s contact torques'),
            (estimate - truth, True, '#d62728', '|τ̂ − τ| estimate − MuJoCo'),
            (estimate - lagged, False, '#9467bd', f'|τ̂ − τ through K/(s+K)|: after the '
                                                   f'{1e3 / rec.observer_gain:.0f} ms lag')):
        norm = np.maximum(np.linalg.norm(values, axis=1), 1e-6)
        ax.semilogy(t, np.where(bounce & masked, np.nan, norm), color=color, lw=1.0, label=label)
    ax.set_ylim(1e-4, 1e3)
    ax.legend(fontsize=8, loc='upper right')
    for ax, j in zip(axes[1:], np.argsort(c.scale)[::-1]):
        _decorate(ax, rec, found, origin, f'{rec.joint_names[j]}: RMS error {c.rms[j]:.3f} N m '
                  f'({100 * c.rms[j] / c.scale[j]:.1f} %)', 'contact torque [N m]', fontsize=10)
        ax.plot(t, _without_bounces(ax, t, truth, bounce)[:, j], color='k', lw=1.8,
                label='MuJoCo: Σ Jᵀf of its contacts\n(dots: the ball off the table for a step)')
        ax.plot(t, estimate[:, j], color='#ff7f0e', lw=1.2, ls='--', label='external_torque_estimator')
        ax.set_xlabel('simulated time [s]')
    axes[2].legend(fontsize=8, loc='lower right')


def plot(rec, model, found, opts, path) -> Path:
    """The tool's height over the table, the contact force, the estimate's error, and the contact torques
    of the three joints the contact loads most: MuJoCo's against the estimate."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    origin = rec.joint_states.stamp[0]
    fig, axes = plt.subplots(2, 3, figsize=(17, 9.5), sharex=True)
    _plot_height(axes[0, 0], rec, model, found, origin)
    _plot_force(axes[0, 1], rec, model, found, origin)
    _plot_torques([axes[0, 2], *axes[1]], rec, found, origin)
    c, on = found.comparison, found.delays[0]
    fig.suptitle(f'{rec.robot_name} on MuJoCo: the tool presses on a table ({found.force[0]:.0f} N), slides '
                 f'{opts.slide:g} m, lifts off. The external torque estimator, from the joint states alone, '
                 f'against MuJoCo\'s contact torques:\nRMS error {100 * c.relative:.1f} % of the contact '
                 f'torque ({100 * c.lagged_relative:.1f} % after its {1e3 / rec.observer_gain:.0f} ms lag); '
                 f'contact seen {1e3 * on:.0f} ms after the touch; {rec.mode}', fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.955))
    return save_figure(fig, path)
