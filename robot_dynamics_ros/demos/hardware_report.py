"""What the hardware demo (hardware_demo.py) makes of its three runs: ``summary`` (the numbers),
``report_text`` (the report it prints) and ``plot`` (out/demo_hardware.png). Pure numpy and matplotlib.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from robot_dynamics_ros.demos.joint_space_report import COMMANDS_TOPIC
from robot_dynamics_ros.demos.recording import save_figure

__all__ = ['FIRMWARE', 'PLOT_JOINTS', 'TRAJECTORY', 'plot', 'report_text', 'summary']

#: The emulated firmware: adds g(q) to every command (kuka_fri), reports τ − g(q) as effort.
FIRMWARE = {'hardware_profile': 'kuka_fri', 'measured_effort': 'gravity_compensated'}
TRAJECTORY = 3.0            # s, the demo trajectory's length
#: The joints drawn (those the robot has; else its first three): the shoulder and elbow carry the arm's
#: weight, wrist_1 has the smallest inertia against its share of g(q) and moves most under double gravity.
PLOT_JOINTS = ('shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint')


# --- analysis ----------------------------------------------------------------------------------

def _plot_joints(names):
    """Indices of PLOT_JOINTS in ``names`` (else of the first three joints)."""
    found = [names.index(j) for j in PLOT_JOINTS if j in names]
    return found or list(range(min(3, len(names))))


def summary(recordings):
    """The numbers of the three runs: a dict per case key."""
    right, off, refused = recordings
    out = {}
    _, stamps, e = right.tracking_error.arrays()
    hold = e[stamps < right.sent] if right.sent is not None else e[:0]
    worst = np.abs(e).max(axis=0) if e.size else np.full(len(right.joint_names), np.nan)
    out['right'] = dict(max_error=float(np.nanmax(worst)),
                        worst_joint=right.joint_names[int(np.nanargmax(worst))],
                        rms=float(np.sqrt(np.mean(e ** 2))) if e.size else np.nan,
                        hold_error=float(np.abs(hold).max()) if hold.size else np.nan,
                        commands=len(right.commands.values), goal=right.goal_result)
    _, _, q = off.joint_states.arrays()
    offset = q[-1] - q[0]
    j = int(np.argmax(np.abs(offset)))
    _, _, e = off.tracking_error.arrays()
    out['check_off'] = dict(offset=offset, drift=float(abs(offset[j])), drift_joint=off.joint_names[j],
                            max_drift=float(np.abs(q - q[0]).max()), max_error=float(np.abs(e).max()),
                            commands=len(off.commands.values),
                            seconds=(off.joint_states.stamp[-1] - off.sent) * 1e-9)
    t, stamps, q = refused.joint_states.arrays()
    diagnostic = refused.diagnostic_refusal()
    out['refused'] = dict(commands=len(refused.commands.values), states=int(t.size),
                          seconds=float(t[-1] - t[0]) if t.size else 0.0,
                          moved=float(np.abs(q - q[0]).max()) if q.size else np.nan,
                          simulated=float(stamps.max() * 1e-9) if stamps.size else np.nan,
                          error=refused.refusal(), diagnostic=diagnostic)
    return out


def _short(name):
    return name.replace('_joint', '')


def report_text(recordings, numbers) -> str:
    right, off, refused = (numbers[k] for k in ('right', 'check_off', 'refused'))
    names = recordings[0].joint_names
    status, code, text = right['goal'] or ('NONE', None, '')
    lines = ['', f'{recordings[0].robot_name}: the simulator emulates a firmware that adds '
             f"g(q) to every command and reports gravity-compensated efforts (hardware_profile "
             f"'{FIRMWARE['hardware_profile']}', measured_effort '{FIRMWARE['measured_effort']}'); "
             f'{recordings[0].mode}',
             f'1. right profile:  hold error {right["hold_error"]:.2g} rad; a {TRAJECTORY:g} s '
             f'FollowJointTrajectory goal {status} (error_code {code}); tracking error max '
             f'{1e3 * right["max_error"]:.3f} mrad ({right["worst_joint"]}), RMS {1e3 * right["rms"]:.3f} '
             f'mrad; {right["commands"]} commands',
             f'2. wrong profile, check off:  after {off["seconds"]:.1f} s the arm is '
             f'{off["drift"]:.4f} rad off its hold at {off["drift_joint"]} (q - q0: '
             + ', '.join(f'{_short(names[j])} {off["offset"][j]:+.4f}' for j in range(len(names)))
             + f' rad); tracking error max {1e3 * off["max_error"]:.1f} mrad; {off["commands"]} commands',
             f'3. wrong profile, check on (default):  {refused["commands"]} commands in '
             f'{refused["seconds"]:.1f} s ({refused["states"]} joint states); the arm moved '
             f'{refused["moved"]:.3g} rad; simulated time stood at {refused["simulated"]:.3f} s',
             f'   ERROR: {refused["error"]}']
    if refused['diagnostic']:
        message, mode = refused['diagnostic']
        lines.append(f'   /diagnostics ERROR: {message} (mode: {mode})')
    if text:
        lines.insert(3, f'   goal: {text}')
    return '\n'.join(lines)


# --- plot --------------------------------------------------------------------------------------

def _axis(series, origin):
    """(seconds, values) of a Series: simulated time from its stamps since the stamp ``origin`` (ns), or
    with ``origin`` None wall time since its first message."""
    t, stamps, values = series.arrays()
    if origin is not None:
        return (stamps - origin) * 1e-9, values
    return t - t[0] if t.size else t, values


def plot(recordings, numbers, path) -> Path:
    """A row per run: joint positions (measured, desired) of the PLOT_JOINTS from the start pose, the
    tracking error, the commanded torques; the refused run's row with its ERROR in words."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    names = recordings[0].joint_names
    joints = _plot_joints(list(names))
    colors = ('tab:blue', 'tab:orange', 'tab:green')
    right, off, refused = (numbers[k] for k in ('right', 'check_off', 'refused'))
    titles = {
        'right': f'1. right profile: holds, then tracks a {TRAJECTORY:g} s goal to '
                 f'{1e3 * right["max_error"]:.2f} mrad, the largest error of any joint '
                 f'(goal {(right["goal"] or ("no result",))[0].lower()})',
        'check_off': f'2. wrong profile, check off: double gravity lifts the arm by {off["drift"]:.2f} rad '
                     f'({_short(off["drift_joint"])}) against the hold',
        'refused': f'3. wrong profile, default: refused, nothing commanded ({refused["commands"]} commands, '
                   f'the arm moved {refused["moved"]:.0f} rad)',
    }
    subtitles = {
        'right': "every node: hardware_profile 'kuka_fri', measured_effort 'gravity_compensated', the "
                 'conventions of the simulated firmware: the commands leave g(q) to it',
        'check_off': "controller: hardware_profile 'ros2_control' (it sends g(q) itself), "
                     'check_effort_convention false; the firmware adds g(q) again. Started disabled, enabled '
                     '(~/enable) at t = 0 with the arm at rest',
        'refused': "controller: hardware_profile 'ros2_control', check_effort_convention true (the "
                   'default): the efforts at rest hold none of g(q); the simulator waits for a first command',
    }
    fig = plt.figure(figsize=(16, 13))
    head, *rows = fig.subfigures(4, 1, height_ratios=(0.35, 4, 4, 4))
    head.suptitle(f'{recordings[0].robot_name}, simulated with a firmware that adds g(q) to every command '
                  'and reports gravity-compensated efforts', fontsize=13, fontweight='bold', y=0.8)
    for row, rec in zip(rows, recordings):
        key = rec.case.key
        row.text(0.01, 0.985, titles[key], fontsize=12, fontweight='bold', ha='left', va='top')
        row.text(0.01, 0.915, subtitles[key], fontsize=9, color='0.3', ha='left', va='top')
        axes = row.subplots(1, 3)
        row.subplots_adjust(left=0.06, right=0.985, top=0.78, bottom=0.15, wspace=0.22)
        ax_q, ax_e, ax_tau = axes
        origin = (None if key == 'refused' or not rec.joint_states.stamp
                  else rec.sent if key == 'check_off' else rec.joint_states.stamp[0])
        tq, q = _axis(rec.joint_states, origin)
        q0 = q[0] if q.size else np.zeros(len(names))
        td, q_d = _axis(rec.desired, origin)
        for c, j in enumerate(joints):
            ax_q.plot(tq, q[:, j] - q0[j], color=colors[c], lw=1.8, label=_short(names[j]))
            if q_d.size:
                ax_q.plot(td, q_d[:, j] - q0[j], color='k', lw=0.9, ls=(0, (4, 3)),
                          label='desired' if c == len(joints) - 1 else None)
        ax_q.set_ylabel('position − start pose [rad]')
        ax_q.set_title('joint positions' + (' (dashed: desired)' if q_d.size else ''), loc='left',
                       fontsize=10)
        ax_q.legend(fontsize=8, loc='center right' if key == 'check_off' else 'best')
        ax_q.grid(True, alpha=0.3)
        if key == 'refused':
            ax_q.set_ylim(-0.05, 0.05)
            ax_q.set_xlabel('wall-clock time [s] (simulated time stands still)')
            _refusal_panel(ax_e, refused)
            ax_tau.axis('off')
            ax_tau.text(0.5, 0.5, f'{COMMANDS_TOPIC}\n\n{refused["commands"]} messages\nin '
                                  f'{refused["seconds"]:.1f} s', ha='center', va='center', fontsize=15,
                        transform=ax_tau.transAxes,
                        bbox=dict(boxstyle='round', facecolor='#eef6ee', edgecolor='#2ca02c'))
            continue
        te, e = _axis(rec.tracking_error, origin)
        tt, tau = _axis(rec.commands, origin)
        for c, j in enumerate(joints):
            ax_e.plot(te, 1e3 * e[:, j], color=colors[c], lw=1.2, label=_short(names[j]))
            if tau.ndim == 2 and tau.shape[1] == len(names):
                ax_tau.plot(tt, tau[:, j], color=colors[c], lw=1.2, label=_short(names[j]))
        ax_e.axhline(0.0, color='k', lw=0.5)
        ax_e.set_ylabel('e = q_d − q [mrad]')
        ax_e.set_title('tracking error (~/tracking_error)', loc='left', fontsize=10)
        ax_tau.axhline(0.0, color='k', lw=0.5)
        ax_tau.set_ylabel('commanded τ [N m]')
        ax_tau.set_title(f'commands ({COMMANDS_TOPIC})', loc='left', fontsize=10)
        ax_tau.legend(fontsize=8, loc='best')
        if key == 'right' and rec.sent is not None:
            sent = (rec.sent - origin) * 1e-9
            for ax in axes:
                ax.axvspan(sent, sent + TRAJECTORY, color='0.92', zorder=0)
            ax_q.text(sent + 0.05, 0.03, 'goal', transform=ax_q.get_xaxis_transform(), fontsize=8,
                      color='0.4')
        if key == 'check_off':
            for ax in axes:
                ax.axvline(0.0, color='0.4', lw=0.8, ls=':')
            ax_q.text(0.03, 0.03, '~/enable', transform=ax_q.get_xaxis_transform(), fontsize=8, color='0.4')
            ax_tau.text(0.98, 0.5, 'sent: g(q) + the PD term\napplied: that + g(q) (firmware)\n'
                                   'at rest: PD = −g(q), sent = 0', transform=ax_tau.transAxes, ha='right',
                        va='center', fontsize=8.5, color='0.3')
        for ax in axes:
            ax.grid(True, alpha=0.3)
            ax.set_xlabel('simulated time [s]')
    return save_figure(fig, path, dpi=90)


def _refusal_panel(ax, numbers):
    """The refused run's ERROR line and /diagnostics status, in words."""
    ax.axis('off')
    error = numbers['error'] or '(no ERROR line received)'
    text = 'ERROR on /rosout:\n' + textwrap.fill(error, 62)
    if numbers['diagnostic']:
        message, mode = numbers['diagnostic']
        text += '\n\n/diagnostics ERROR, mode:\n' + textwrap.fill(mode, 62)
    ax.text(0.0, 1.0, text, ha='left', va='top', fontsize=8.5, family='monospace', transform=ax.transAxes,
            bbox=dict(boxstyle='round', facecolor='#fdecea', edgecolor='#d62728'))
