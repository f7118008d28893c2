"""The joint-space demo's recording and what is made of it (joint_space_demo.py runs the demo).

- ``Recording``: everything the demo records (the topics below), vectors in its joint order;
- ``analyse`` -> ``DemoReport``: the tracking errors over the trajectory (outside the push), the topic
  rates and what failed; ``report_text``: the table the demo prints;
- ``contact_summary`` / ``contact_text``: the push on the arm against the external torque estimator;
- ``plot`` (out/demo.png): desired vs actual positions, errors and torques per joint; ``plot_contact``
  (out/contact.png): the push, the estimate, ~/contact and the tracking error it caused.

Pure numpy and matplotlib: no ROS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robot_dynamics_ros.demos.recording import Series, save_figure

__all__ = ['DemoReport', 'Recording', 'analyse', 'contact_summary', 'contact_text', 'plot', 'plot_contact',
           'report_text']


TRACKING_ERROR_TOPIC = '/computed_torque_controller/tracking_error'
TRAJECTORY_TOPIC = '/computed_torque_controller/joint_trajectory'
TRAJECTORY_ACTION = '/computed_torque_controller/follow_joint_trajectory'
COMMANDS_TOPIC = '/effort_controller/commands'
JOINT_STATES_TOPIC = '/joint_states'
PUSH_TOPIC = '/simulator_node/external_wrench'
APPLIED_WRENCH_TOPIC = '/simulator_node/applied_wrench'
ESTIMATED_WRENCH_TOPIC = '/external_torque_estimator/external_wrench'
CONTACT_TOPIC = '/external_torque_estimator/contact'
#: The push on the arm during the trajectory: a wrench ON the robot at the simulator's tip frame
#: (tool0), in its coordinates, angular first [N m, N], from PUSH_SPAN[0] to PUSH_SPAN[1] of the
#: trajectory's duration.
#: Along the tool's axis, which passes through the two last wrist axes: the light wrists, whose
#: computed-torque stiffness M kp is small, are barely loaded.
PUSH = (0.0, 0.0, 0.0, 0.0, 0.0, -8.0)
PUSH_SPAN = (0.3, 0.65)
DYNAMICS_TOPICS = {
    'gravity_torques': '/dynamics_node/gravity_torques',
    'coriolis_torques': '/dynamics_node/coriolis_torques',
    'mass_matrix': '/dynamics_node/mass_matrix',
    'task_space_inertia': '/dynamics_node/task_space_inertia',
}


@dataclass
class Recording:
    """Everything the demo records. Vectors are stored in ``joint_names`` order."""

    joint_names: tuple = ()
    joint_states: Series = field(default_factory=Series)        # q
    joint_velocities: Series = field(default_factory=Series)    # q̇
    tracking_error: Series = field(default_factory=Series)      # e = q_d - q
    commands: Series = field(default_factory=Series)            # tau, controller order
    gravity: Series = field(default_factory=Series)             # g(q) from the dynamics node
    applied_wrench: Series = field(default_factory=Series)      # the push as the simulator applied it
    estimated_wrench: Series = field(default_factory=Series)    # the estimator's wrench at tool0
    contact: Series = field(default_factory=Series)             # the estimator's contact flag
    #: Receive times and "all finite" flags of every dynamics_node output.
    dynamics: dict = field(default_factory=lambda: {k: Series() for k in DYNAMICS_TOPICS})
    t_start: float = math.nan         # trajectory sent (monotonic s)
    t_end: float = math.nan           # recording window end
    duration: float = math.nan        # trajectory length [s]
    effort_limit: np.ndarray | None = None
    robot_name: str = 'robot'
    mode: str = ''
    #: The FollowJointTrajectory goal's end: (status name, error_code, error_string); None: topic.
    goal_result: tuple | None = None


# --- analysis ----------------------------------------------------------------------------------

@dataclass
class DemoReport:
    joint_names: tuple
    rms: np.ndarray            # per joint RMS tracking error [rad]
    max_abs: np.ndarray        # per joint max |e| [rad]
    max_torque: np.ndarray     # per joint max |tau| [N m]
    rates: dict                # topic -> Hz
    counts: dict               # topic -> messages in the window
    problems: list             # why the demo failed (empty: success)
    real_time_factor: float = math.nan  # simulated s per wall s (from the joint states' stamps)

    @property
    def ok(self) -> bool:
        return not self.problems


def _window(series: Series, t0: float, t1: float):
    t, stamp, values = series.arrays()
    keep = (t >= t0) & (t <= t1)
    return t[keep], stamp[keep], values[keep]


def _rate(t: np.ndarray) -> float:
    """Mean message rate [Hz] over the span of the receive times."""
    if t.size < 2 or t[-1] <= t[0]:
        return 0.0
    return (t.size - 1) / (t[-1] - t[0])


def analyse(rec: Recording, *, max_error: float = 0.05) -> DemoReport:
    """Tracking errors over [t_start, t_end], topic rates, and the list of failures."""
    names = rec.joint_names
    n = len(names)
    t0, t1 = rec.t_start, rec.t_end
    problems = []
    counts, rates = {}, {}
    topics = {JOINT_STATES_TOPIC: rec.joint_states, TRACKING_ERROR_TOPIC: rec.tracking_error,
              COMMANDS_TOPIC: rec.commands}
    topics.update({DYNAMICS_TOPICS[k]: s for k, s in rec.dynamics.items()})
    for topic, series in topics.items():
        t, _, values = _window(series, t0, t1)
        counts[topic] = int(t.size)
        rates[topic] = _rate(t)
    for topic in (JOINT_STATES_TOPIC, TRACKING_ERROR_TOPIC, COMMANDS_TOPIC):
        if counts[topic] == 0:
            problems.append(f'no {topic} messages during the trajectory')
    for key, topic in DYNAMICS_TOPICS.items():
        _, _, flags = _window(rec.dynamics[key], t0, t1)
        if flags.size and not np.all(flags):
            problems.append(f'{topic}: {int(np.sum(flags == 0))} messages with non-finite values')
    rms = np.full(n, np.nan)
    max_abs = np.full(n, np.nan)
    max_torque = np.full(n, np.nan)
    _, se, e = _window(rec.tracking_error, t0, t1)
    if e.size:
        if not np.all(np.isfinite(e)):
            problems.append('tracking error is not finite')
        # The push (if any) and the second after it are disturbed on purpose: the error it
        # causes is reported with the push (contact_summary), not held to --max-error.
        sa = np.asarray(rec.applied_wrench.stamp)
        calm = ~((se >= sa[0]) & (se <= sa[-1] + 1e9)) if sa.size >= 2 else np.ones(se.size, bool)
        rms = np.sqrt(np.mean(e[calm]**2, axis=0)) if calm.any() else rms
        max_abs = np.max(np.abs(e[calm]), axis=0) if calm.any() else max_abs
        worst = int(np.nanargmax(max_abs))
        if not max_abs[worst] <= max_error:
            problems.append(f'tracking error of {names[worst]} reached {max_abs[worst]:.4f} rad '
                            f'(> --max-error {max_error} rad)')
    _, _, q = _window(rec.joint_states, t0, t1)
    if q.size and not np.all(np.isfinite(q)):
        problems.append('joint positions are not finite')
    _, _, tau = _window(rec.commands, t0, t1)
    if tau.size:
        if tau.ndim != 2 or tau.shape[1] != n:
            problems.append(f'commands have {tau.shape[-1]} entries for {n} joints')
        elif not np.all(np.isfinite(tau)):
            problems.append('commanded torques are not finite')
        else:
            max_torque = np.max(np.abs(tau), axis=0)
    rtf = math.nan
    tq, sq, _ = _window(rec.joint_states, t0, t1)
    if tq.size > 1 and _stamp_ok(sq) and tq[-1] > tq[0]:
        rtf = float((sq[-1] - sq[0]) * 1e-9 / (tq[-1] - tq[0]))
    return DemoReport(names, rms, max_abs, max_torque, rates, counts, problems, rtf)


def report_text(rec: Recording, report: DemoReport) -> str:
    """The table the demo prints."""
    lines = [
        f'robot_dynamics_ros demo: {rec.robot_name}, computed-torque control, '
        f'{rec.duration:g} s trajectory ({rec.mode})',
        '',
        f'{"joint":<22}{"RMS error":>12}{"RMS error":>12}{"max |error|":>14}'
        f'{"max |torque|":>15}{"limit":>8}',
        f'{"":<22}{"[rad]":>12}{"[mrad]":>12}{"[mrad]":>14}{"[N m]":>15}{"[N m]":>8}',
    ]
    limits = rec.effort_limit if rec.effort_limit is not None else np.full(len(report.joint_names),
                                                                           np.inf)
    for j, name in enumerate(report.joint_names):
        lines.append(f'{name:<22}{report.rms[j]:>12.2e}{1e3 * report.rms[j]:>12.3f}'
                     f'{1e3 * report.max_abs[j]:>14.3f}{report.max_torque[j]:>15.2f}'
                     f'{limits[j]:>8.0f}')
    if report.rms.size:
        total = float(np.sqrt(np.mean(report.rms**2)))
        lines.append(f'{"all joints":<22}{total:>12.2e}{1e3 * total:>12.3f}'
                     f'{1e3 * float(np.nanmax(report.max_abs)):>14.3f}')
    lines += ['', 'achieved rates during the trajectory (messages per wall-clock second):']
    for topic, rate in report.rates.items():
        lines.append(f'  {topic:<46}{rate:>9.1f} Hz  ({report.counts[topic]} messages)')
    if math.isfinite(report.real_time_factor):
        lines.append(f'  simulated time ran at {report.real_time_factor:.2f} x real time'
                     + (' (the simulator slows down when the CPU cannot keep up)'
                        if report.real_time_factor < 0.95 else ''))
    return '\n'.join(lines)


def contact_summary(rec: Recording):
    """The estimator against the push, or None without a push: the largest error of the estimated
    wrench while the push is steady (from 0.2 s after it starts, five time constants of the
    default gain, to its end), and whether ~/contact was true then and false after it ended."""
    ta, sa, applied = rec.applied_wrench.arrays()
    te, se, estimated = rec.estimated_wrench.arrays()
    if sa.size < 2 or se.size == 0:
        return None
    steady = (se >= sa[0] + 0.2e9) & (se <= sa[1])
    after = se >= sa[1] + 0.2e9
    if not steady.any():
        return None
    error = np.abs(estimated[steady] - applied[0]).max(axis=0)
    _, st, e = rec.tracking_error.arrays()
    pushed = (st >= sa[0]) & (st <= sa[1] + 1e9)
    push_error = float(np.abs(e[pushed]).max()) if pushed.any() else math.nan
    tc, _, flags = rec.contact.arrays()
    during = [f for t, f in zip(tc, flags[:, 0] if flags.size else []) if t <= ta[1]]
    after_push = np.abs(estimated[after]).max(axis=0) if after.any() else np.full(6, np.nan)
    return {'applied': applied[0], 'error': error, 'after': after_push, 'push_error': push_error,
            'contact_during': bool(during and during[-1]),
            'contact_after': bool(flags.size and not flags[-1, 0])}


def contact_text(summary) -> str:
    if summary is None:
        return 'contact: no push recorded'
    labels = ('m_x', 'm_y', 'm_z', 'f_x', 'f_y', 'f_z')
    lines = ['', 'push on the arm (simulator ~/external_wrench at tool0) vs external_torque_estimator:',
             f'{"":<10}' + ''.join(f'{label:>10}' for label in labels),
             f'{"applied":<10}' + ''.join(f'{x:>10.3f}' for x in summary['applied']),
             f'{"|error|":<10}' + ''.join(f'{x:>10.1e}' for x in summary['error'])
             + '   (largest while the push is steady; N m, N)',
             f'{"after":<10}' + ''.join(f'{x:>10.1e}' for x in summary['after'])
             + '   (largest |estimate| 0.2 s after the push ended)',
             f'~/contact: {"true" if summary["contact_during"] else "FALSE"} during the push, '
             f'{"false" if summary["contact_after"] else "TRUE"} after it',
             f'the push moved the arm off the trajectory by up to {1e3 * summary["push_error"]:.1f} mrad '
             '(the computed-torque loop is a stiffness M kp: no force feedback)']
    return '\n'.join(lines)


def plot_contact(rec: Recording, path) -> Path:
    """Applied vs estimated wrench (force and torque components), the contact flag, and the tracking
    error the push caused; seconds from the trajectory's start."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    axis = _time_axis(rec)
    fig, axes = plt.subplots(4, 1, figsize=(10, 10), sharex=True)
    ta, sa, applied = rec.applied_wrench.arrays()
    te, se, estimated = rec.estimated_wrench.arrays()
    t_end = axis(np.array([rec.t_end]))[0] if math.isfinite(rec.t_end) else None
    colors = ('tab:red', 'tab:green', 'tab:blue')
    for row, (offset, what, unit) in enumerate(((3, 'force', 'N'), (0, 'torque', 'N m'))):
        ax = axes[row]
        for k in range(3):
            label = 'xyz'[k]
            if te.size:
                ax.plot(axis(te, se), estimated[:, offset + k], color=colors[k], lw=1.2,
                        label=f'estimated {what} {label}')
            if ta.size:
                times = np.concatenate([axis(ta, sa), [t_end if t_end is not None else axis(ta, sa)[-1]]])
                values = np.concatenate([applied[:, offset + k], applied[-1:, offset + k]])
                ax.step(times, values, where='post', color=colors[k], ls='--', lw=1.0,
                        label=f'applied {what} {label}')
        ax.set_ylabel(f'{what} at tool0 [{unit}]')
        ax.legend(loc='upper right', ncol=2, fontsize=7)
        ax.grid(alpha=0.3)
    tc, _, flags = rec.contact.arrays()
    if tc.size:
        times = np.concatenate([axis(tc), [t_end if t_end is not None else axis(tc)[-1]]])
        axes[2].step(times, np.concatenate([flags[:, 0], flags[-1:, 0]]), where='post', color='k')
    axes[2].set_ylabel('~/contact')
    axes[2].set_yticks([0, 1], ['false', 'true'])
    axes[2].grid(alpha=0.3)
    tt, st, e = rec.tracking_error.arrays()
    if tt.size:
        axes[3].plot(axis(tt, st), 1e3 * np.linalg.norm(e, axis=1), color='tab:purple')
    axes[3].set_ylabel('|tracking error| [mrad]')
    axes[3].set_xlabel('time from the trajectory start [s]')
    axes[3].grid(alpha=0.3)
    if t_end is not None:
        axes[3].set_xlim(min(-0.5, axes[3].get_xlim()[0]), t_end)
    fig.suptitle(f'{rec.robot_name}: a push on the arm during the trajectory, and what the '
                 'external_torque_estimator made of it')
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)


# --- plot --------------------------------------------------------------------------------------

def _stamp_ok(stamps) -> bool:
    """Stamped messages (-1: no stamp); the simulation's first state is stamped 0."""
    return stamps.size > 0 and bool(np.all(stamps >= 0)) and bool(stamps.max() > 0)


def _time_axis(rec: Recording):
    """A function (receive times, stamps) -> seconds since the trajectory started, on the clock
    the nodes run on.

    The simulator stamps /joint_states with the simulated time (publish_clock) and the controller
    runs its reference on it (use_sim_time): after a stall the simulation lags the wall clock,
    and on a wall-clock axis the trajectory would look stretched. Messages with header stamps use
    them; the rest (commands) are mapped from receive time to stamp time through the joint
    states. Without stamps it falls back to receive times.
    """
    tq, sq, _ = rec.joint_states.arrays()
    if not _stamp_ok(sq):
        return lambda t, stamps=None: np.asarray(t) - rec.t_start
    # np.interp needs increasing abscissae: a burst of states shares one receive time.
    order = np.argsort(tq, kind='stable')
    tq, sq = tq[order], np.maximum.accumulate(sq[order]) * 1e-9
    keep = np.concatenate(([True], np.diff(tq) > 0))
    tq, sq = tq[keep], sq[keep]
    origin = float(np.interp(rec.t_start, tq, sq))

    def axis(t, stamps=None):
        if stamps is not None and _stamp_ok(np.asarray(stamps)):
            return np.asarray(stamps) * 1e-9 - origin
        return np.interp(t, tq, sq) - origin
    return axis


def _desired_positions(rec: Recording, t0: float, t1: float):
    """(receive times, stamps, q_d) at every tracking-error message in [t0, t1]: q_d = q + e,
    with q the joint state received last before the error (the one the controller answered)."""
    te, se, e = _window(rec.tracking_error, t0, t1)
    tq, _, q = rec.joint_states.arrays()
    if e.size == 0 or q.size == 0:
        return te, se, np.zeros((te.size, len(rec.joint_names)))
    rows = np.clip(np.searchsorted(tq, te, side='right') - 1, 0, tq.size - 1)
    return te, se, q[rows] + e


def plot(rec: Recording, report: DemoReport, path) -> Path:
    """Per joint: desired vs actual position, tracking error, commanded torque (and g(q)).

    One row per joint, one shared time axis (seconds from the trajectory's start).
    """
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    names = rec.joint_names
    n = len(names)
    t0 = rec.t_start
    before = 0.5  # s of the hold before the trajectory
    t_from, t_to = t0 - before, rec.t_end
    axis = _time_axis(rec)
    tq, sq, q = _window(rec.joint_states, t_from, t_to)
    td, sd, qd = _desired_positions(rec, t_from, t_to)
    te, se, e = _window(rec.tracking_error, t_from, t_to)
    tt, _, tau = _window(rec.commands, t_from, t_to)
    tg, sg, g = _window(rec.gravity, t_from, t_to)
    tq, td, te, tt, tg = axis(tq, sq), axis(td, sd), axis(te, se), axis(tt), axis(tg, sg)
    if tau.ndim != 2 or tau.shape[1] != n:
        tau = np.zeros((0, n))
    limits = rec.effort_limit if rec.effort_limit is not None else np.full(n, np.inf)

    height = 2.3 * n + 1.5  # inches: 2.3 per joint, 1.5 for the title and legend
    fig, axes = plt.subplots(n, 3, figsize=(16, height), sharex=True, squeeze=False)
    colors = {'desired': '#1f77b4', 'actual': '#ff7f0e', 'error': '#d62728',
              'tau': '#2ca02c', 'gravity': '#7f7f7f'}
    for j, name in enumerate(names):
        ax_q, ax_e, ax_tau = axes[j]
        ax_q.plot(td, qd[:, j], color=colors['desired'], lw=2.2, label='desired $q_d$')
        ax_q.plot(tq, q[:, j], color=colors['actual'], lw=1.2, ls='--', label='actual $q$')
        ax_q.set_ylabel(f'{name}\n[rad]', fontsize=9)
        ax_e.plot(te, 1e3 * e[:, j], color=colors['error'], lw=1.0,
                  label='$e = q_d - q$')
        ax_e.axhline(0.0, color='black', lw=0.5)
        ax_e.set_ylabel('[mrad]', fontsize=9)
        ax_e.set_title(f'RMS {1e3 * report.rms[j]:.3f} mrad, max {1e3 * report.max_abs[j]:.3f} mrad',
                       loc='right', fontsize=8, color='0.3')
        ax_tau.plot(tt, tau[:, j], color=colors['tau'], lw=1.2, label=r'commanded $\tau$')
        if g.size:
            ax_tau.plot(tg, g[:, j], color=colors['gravity'], lw=1.0, ls=':',
                        label='gravity $g(q)$ (dynamics_node)')
        ax_tau.set_ylabel('[N m]', fontsize=9)
        if np.isfinite(limits[j]):
            ax_tau.set_title(f'max |τ| {report.max_torque[j]:.3g} N m, limit ±{limits[j]:.0f} N m',
                             loc='right', fontsize=8, color='0.3')
        for ax in axes[j]:
            ax.grid(True, alpha=0.3)
            ax.axvspan(0.0, rec.duration, color='0.93', zorder=0)
            ax.tick_params(labelsize=8)
    for ax, title in zip(axes[0], ('Joint position', 'Tracking error', 'Joint torque')):
        ax.set_title(title, loc='left', fontsize=11, fontweight='bold')
    handles, labels = [], []
    for ax in axes[0]:
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += lab
    fig.legend(handles, labels, loc='upper center', bbox_to_anchor=(0.5, 1 - 0.62 / height),
               ncol=len(labels), fontsize=9, frameon=False)
    xlabel = ('time since the trajectory started [s], simulated time'
              if _stamp_ok(rec.joint_states.arrays()[1])
              else 'time since the trajectory was sent [s]')
    for ax in axes[-1]:
        ax.set_xlabel(xlabel, fontsize=9)
    total = float(np.sqrt(np.mean(report.rms**2))) if report.rms.size else math.nan
    js_rate = report.rates.get(JOINT_STATES_TOPIC, 0.0)
    rtf = report.real_time_factor
    if rec.goal_result is not None:
        status, code, _ = rec.goal_result
        sent = f'sent as a FollowJointTrajectory goal: {status}, error_code {code}'
    else:
        sent = 'sent on ~/joint_trajectory'
    fig.suptitle(
        f'{rec.robot_name}: computed-torque tracking of the {rec.duration:g} s demo trajectory ({sent}) — '
        f'RMS error {1e3 * total:.3f} mrad over all joints\n'
        f'/joint_states {js_rate:.0f} Hz'
        + (f', simulation at {rtf:.2f}× real time' if math.isfinite(rtf) else '')
        + f'; {rec.mode}', fontsize=12, y=1 - 0.08 / height, va='top')
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.8 / height))
    return save_figure(fig, path, dpi=110)
