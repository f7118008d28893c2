"""Identify the robot, or the payload it carries, from a ROS 2 bag of its joint states.

    python -m robot_dynamics_ros.cli.identify robot --bag PATH --urdf FILE --output OUT.urdf [--armature]
        [--xacro-args 'name:=value ...'] [--hardware PROFILE] [--measured-effort M] [--validation 0.3]
        [--topic /joint_states] [--cutoff 5.0] [--start S] [--end S] [--root-link L] [--tip-link L] [--json]
    python -m robot_dynamics_ros.cli.identify payload --bag PATH --urdf FILE [--frame tool0]
        [--xacro-args 'name:=value ...'] [--hardware PROFILE] [--measured-effort M] [--topic /joint_states]
        [--cutoff 5.0] [--start S] [--end S] [--root-link L] [--tip-link L] [--node NAME ...] [--json]

(`identify --bag ...` without a subcommand is `identify payload --bag ...`.)

robot: the whole arm (dynamics.identify_robot): every link's inertial parameters (physically
consistent), each joint's viscous and Coulomb friction and effort offset, with --armature the rotor
inertias. It fits on the first 1 - VALIDATION of the samples and reports, on the held-out rest, each
joint's RMS torque error of the URDF as given and of the identified model: the measured efforts and the
models' torques through the same low-pass, over the samples where the joint moves (static friction at
rest holds any torque within ±F_c, which no model predicts). It writes OUT.urdf (the source URDF with
the identified inertials and <dynamics damping friction>: dynamics.write_urdf) and OUT.yaml (beside
it: `armature` and `effort_offset` for every node, as `/**: ros__parameters:`, which applies under any
namespace): run the nodes with urdf_path:=OUT.urdf (or publish it as /robot_description) and
--params-file OUT.yaml. --json prints one line: rms_before, rms_after (per joint, held out), offset,
armature, condition, samples, output, joint_names, method.

Reads the sensor_msgs/msg/JointState messages of --topic from the bag at PATH (a rosbag2 directory with
its metadata.yaml, storage sqlite3 or mcap, or a single .db3 / .mcap file) with the pure-Python
`rosbags` package (``pip install rosbags``; no ROS installation needed). Each message's joints are
matched by name to the model's (any order; other joints are ignored); a message lacking one of the
model's joints, or the position or effort of one, or with a non-finite one, is skipped and counted.
A sample's time is its header stamp (sec + nanosec 1e-9 s), or the time the bag received it when every
stamp is zero; samples are sorted by time and of equal times the first kept. --start / --end (s, from
the first sample) cut a window.

The model is the URDF's chain (--root-link / --tip-link as in dynamics.load_urdf); a xacro --urdf (a
vendor's .xacro description) is expanded with --xacro-args first (logic.robot_description), and
identify robot's OUT.urdf is the expanded URDF with the identified values. The payload is
estimated at --frame (default: the model's tip frame) by dynamics.identify_payload_from_log: q and τ
resampled onto a uniform grid, low-passed by a zero-phase order-4 Butterworth filter applied in the
frequency domain (--cutoff, Hz, default 5: above an exciting trajectory's frequencies, below the
noise), q̇ and q̈ by central differences; its docstring states the filter. The efforts must be the
joint torques (N m; N for prismatic joints): a drive's motor current must be converted first. An arm
whose firmware reports them without gravity (--hardware, --measured-effort gravity_compensated:
doc/hardware.md) gets the URDF's g(q) added back first, so the URDF's gravity model is then part of
the data (the firmware's own model of it is not known here).

Prints the samples used, the time span and rate, the estimate (mass in kg; centre of mass in m in the
frame's coordinates; inertia in kg m² about the centre of mass in the frame's axes, as ixx ixy ixz iyy
iyz izz), the fit's residual and condition number with warnings, and the ``ros2 param set`` commands
that give the estimate to the running nodes (--node, repeatable; default computed_torque_controller,
dynamics_node and external_torque_estimator). --json prints one line of JSON instead.

Exit codes: 0 the robot or payload was estimated (check the warnings); 2 an error (bad arguments,
unreadable bag,
missing topic, unknown frame, no usable message, a log too short for the cutoff), reported on stderr as
``identify: error: ...``.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import numpy as np

from robot_dynamics_ros.cli.joint_bag import (
    IdentifyError,
    JointLog,
    import_rosbags,
    joint_log,
    read_joint_states,
)
from robot_dynamics_ros.dynamics.identification import DEFAULT_CUTOFF
from robot_dynamics_ros.logic.hardware import DEFAULT_PROFILE, MEASURED_EFFORTS, PROFILES, resolve
from robot_dynamics_ros.logic.payload_log import (
    PAYLOAD_PARAMETERS,
    estimate_problem,
    estimate_summary,
    inertia_entries,
    payload_parameter_values,
)
from robot_dynamics_ros.logic.robot_description import read_description

__all__ = ['IdentifyError', 'JointLog', 'joint_log', 'read_joint_states', 'param_commands', 'main']

DEFAULT_NODES = ('computed_torque_controller', 'dynamics_node', 'external_torque_estimator')


def _number(x: float) -> str:
    """x with 6 significant digits, always as a float ROS 2's parameter YAML reads as a double: '2.0' not
    '2', '1.5e-05' and '1.0e-05' not '1e-05' (YAML 1.1 reads that as a string)."""
    text = f'{x:.6g}'
    if not math.isfinite(x):
        return {'nan': '.nan', 'inf': '.inf', '-inf': '-.inf'}[text]
    mantissa, e, exponent = text.partition('e')
    if '.' not in mantissa:
        mantissa += '.0'
    return mantissa + e + exponent


def _vector(values) -> str:
    return '[' + ', '.join(_number(float(x)) for x in values) + ']'


def param_commands(nodes: Sequence[str], estimate, frame: str) -> list[str]:
    """The `ros2 param set` command lines that give `estimate` (a PayloadEstimate) at `frame` to each
    node of `nodes` (a leading / added where missing): payload_mass (kg), payload_com (m, in the frame's
    coordinates), payload_inertia (kg m² about the com in the frame's axes: ixx ixy ixz iyy iyz izz) and
    payload_frame."""
    values = payload_parameter_values(estimate.mass, estimate.com, estimate.inertia, frame)
    arguments = [value if isinstance(value, str) else f'"{_vector(value)}"' if isinstance(value, list)
                 else _number(value) for value in values]
    return [f'ros2 param set {node if node.startswith("/") else "/" + node} {name} {argument}'
            for node in nodes for name, argument in zip(PAYLOAD_PARAMETERS, arguments)]


def report_json(estimate, log: JointLog, frame: str) -> str:
    """One line of JSON (payload_log.estimate_summary, as dynamics_node's ~/identify_payload answers):
    the estimate (mass kg, com m, inertia kg m² as ixx ixy ixz iyy iyz izz, residual_rms N m, condition,
    consistent), the frame, samples used and their seconds, the reason not to use it (if any), and the
    messages skipped and duplicates dropped; non-finite numbers as null."""
    seconds = float(log.t[-1] - log.t[0]) if log.t.size else 0.0
    return estimate_summary(estimate, frame, log.t.size, seconds, estimate_problem(estimate),
                            skipped=log.skipped, duplicates=log.duplicates)


def report_text(args, model, log: JointLog, estimate, frame: str) -> str:
    """The readable report (module docstring)."""
    span = float(log.t[-1] - log.t[0]) if log.t.size else 0.0
    rate = 1.0 / float(np.median(np.diff(log.t))) if log.t.size > 1 else float('nan')
    clock = ('header stamps' if log.clock == 'header'
             else "the bag's receive times: the header stamps are zero")
    window = ''
    if args.start is not None or args.end is not None:
        window = (f', window {args.start if args.start is not None else 0:g} .. '
                  f'{args.end if args.end is not None else float("inf"):g} s from the first sample')
    inertia = '  '.join(f'{name} {_number(value)}' for name, value in
                        zip(('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'), inertia_entries(estimate.inertia)))
    lines = [
        f'bag:      {args.bag}',
        f'topic:    {args.topic} ({log.messages} messages)',
        f'samples:  {log.t.size} used{window}; {log.skipped} skipped (a model joint, its position or effort '
        f'missing or not finite), {log.duplicates} dropped for a repeated time',
        f'time:     {span:.3f} s at a median {rate:.4g} Hz ({clock})',
        f'model:    {args.urdf}: {model.nq} joints ({", ".join(model.joint_names)}); low-pass cutoff '
        f'{args.cutoff:g} Hz',
        '',
        f'payload at {frame} (centre of mass in {frame} coordinates, inertia about it in {frame} axes):',
        f'  mass          {_number(estimate.mass)} kg',
        f'  com           {_vector(estimate.com)} m',
        f'  inertia       {inertia} kg m^2',
        f'  residual rms  {estimate.residual_rms:.4g} N m',
        f'  condition     {estimate.condition:.4g}',
    ]
    problem = estimate_problem(estimate)
    if problem is not None:
        lines.append(f'warning: {problem}')
    lines += ['', '# give the estimate to the running nodes:']
    lines += param_commands(args.node or DEFAULT_NODES, estimate, frame)
    return '\n'.join(lines)


def _recording_arguments(parser, urdf_help):
    """The arguments both modes take: the bag, its topic and window, the URDF and its chain, the filter."""
    parser.add_argument('--bag', required=True, help='the rosbag2 directory (sqlite3 or mcap), or a '
                        '.db3 / .mcap file')
    parser.add_argument('--urdf', required=True, help=f'{urdf_help}; a xacro file (.xacro) is expanded with '
                        '--xacro-args')
    parser.add_argument('--xacro-args', default='', metavar="'NAME:=VALUE ...'",
                        help="the arguments of a xacro --urdf, as on xacro's command line, e.g. "
                             "'ur_type:=ur5e name:=ur' (default: none, the file's defaults)")
    parser.add_argument('--topic', default='/joint_states', help='sensor_msgs/msg/JointState topic '
                        '(default: %(default)s)')
    parser.add_argument('--cutoff', type=float, default=DEFAULT_CUTOFF,
                        help='low-pass cutoff, Hz (default: %(default)s)')
    parser.add_argument('--start', type=float, help='window start, s from the first sample')
    parser.add_argument('--end', type=float, help='window end, s from the first sample')
    parser.add_argument('--root-link', help='root link of the chain (default: the URDF root)')
    parser.add_argument('--tip-link', help='tip link of the chain (default: every joint below the root)')
    parser.add_argument('--hardware', default=DEFAULT_PROFILE, choices=sorted(PROFILES), metavar='PROFILE',
                        help="the arm's hardware_profile (doc/hardware.md): what its recorded efforts "
                             f'contain (default: %(default)s; one of {", ".join(sorted(PROFILES))})')
    parser.add_argument('--measured-effort', default='', choices=('', *MEASURED_EFFORTS),
                        help="what the recorded efforts are, overriding the profile's: full (joint "
                             'torques), gravity_compensated (the torque less g(q): the URDF\'s g is '
                             'added back) or current (not torques: refused)')


def _read_torques(args, model):
    """The JointLog of --bag's --topic in ``model``'s joint order, its efforts turned into joint torques
    by the hardware conventions (--hardware, --measured-effort: logic.hardware, eqs. 2-3): efforts
    reported without gravity get the URDF's g(q) back, sample by sample. IdentifyError for currents."""
    conventions = resolve(args.hardware, measured_effort=args.measured_effort)
    if not conventions.efforts_are_torques:
        raise IdentifyError(f"the recorded efforts of hardware '{args.hardware}' are motor currents, not "
                            'joint torques: identification needs torques (--measured-effort, '
                            'doc/hardware.md)')
    log = read_joint_states(args.bag, args.topic, model.joint_names)
    if conventions.measured_effort == 'full':
        return log
    tau = np.array([conventions.full_torque(model, effort, q) for q, effort in zip(log.q, log.tau)])
    return replace(log, tau=tau.reshape(log.tau.shape))


def _model(args):
    """(URDF XML, model of its chain) of --urdf: a xacro file expanded with --xacro-args."""
    from robot_dynamics_ros import dynamics as rd

    if not Path(args.urdf).is_file():
        raise IdentifyError(f'URDF file not found: {args.urdf!r}')
    urdf = read_description(args.urdf, args.xacro_args)
    return urdf, rd.load_urdf(urdf, root_link=args.root_link, tip_link=args.tip_link)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='python -m robot_dynamics_ros.cli.identify payload',
        description='Estimate the payload at a frame of the arm from a ROS 2 bag of its joint states '
                    '(positions and efforts): mass, centre of mass, inertia, and the ros2 param set '
                    'commands that apply it.')
    _recording_arguments(parser, 'the URDF file of the arm (without the payload)')
    parser.add_argument('--frame', help='frame the payload is fixed to (default: the model\'s tip frame)')
    parser.add_argument('--node', action='append', help='node to print the ros2 param set commands for '
                        f'(repeatable; default: {", ".join(DEFAULT_NODES)})')
    parser.add_argument('--json', action='store_true', help='print one line of JSON instead of the report')
    return parser


def run(args: argparse.Namespace) -> str:
    """The output of the tool for parsed `args`; IdentifyError / ValueError for what main reports."""
    if args.start is not None and args.end is not None and not args.end > args.start:
        raise IdentifyError(f'--end ({args.end:g} s) must be after --start ({args.start:g} s)')
    import_rosbags()      # before loading the model: the missing package first
    from robot_dynamics_ros import dynamics as rd

    _, model = _model(args)
    frame = args.frame if args.frame is not None else model.tip_frame
    model.frame_index(frame)        # ValueError naming the model's frames
    log = _read_torques(args, model)
    used = log.window(args.start, args.end)
    if used.t.size < 3:
        raise IdentifyError(f'the window --start {args.start} --end {args.end} holds {used.t.size} of the '
                            f'{log.t.size} samples ({log.t[-1]:.3f} s)')
    estimate = rd.identify_payload_from_log(model, used.t, used.q, used.tau, frame=frame, cutoff=args.cutoff)
    if args.json:
        return report_json(estimate, used, frame)
    return report_text(args, model, used, estimate, frame)


ROBOT_USAGE = 'python -m robot_dynamics_ros.cli.identify robot'
CONDITION_WARNING = 1e3     # above this the motion did not excite every base parameter


def build_robot_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=ROBOT_USAGE,
        description='Identify the whole arm from a ROS 2 bag of its joint states (positions and efforts): '
                    'inertial parameters, friction, effort offsets (and armature); write the identified '
                    'URDF and a parameter file for the nodes.')
    _recording_arguments(parser, 'the URDF file of the arm')
    parser.add_argument('--output', required=True, help='the identified URDF to write (OUT.urdf); the '
                        'parameters go to OUT.yaml beside it')
    parser.add_argument('--armature', action='store_true', help='identify the rotor inertias too')
    parser.add_argument('--validation', type=float, default=0.3,
                        help='fraction of the samples, at the end, held out to validate '
                             '(default: %(default)s)')
    parser.add_argument('--json', action='store_true', help='print one line of JSON instead of the report')
    return parser


def _held_out_rms(model, log, cutoff, offset=0.0):
    """Per joint RMS of (measured − predicted) efforts on `log` (N·m or N), both through the fit's
    low-pass, over the samples where the joint moves (dynamics.robot_identification.torque_prediction)."""
    from robot_dynamics_ros.dynamics.robot_identification import rms_where, torque_prediction

    _, measured, predicted, moving = torque_prediction(model, log.t, log.q, log.tau, offset=offset,
                                                       cutoff=cutoff)
    return rms_where(predicted - measured, moving)


def parameter_yaml(model, estimate, command: str) -> str:
    """OUT.yaml: armature and effort_offset of every node (/**), in model.joint_names order."""
    return '\n'.join([
        f'# Written by: {command}',
        f'# Joint order: {", ".join(model.joint_names)}',
        '# armature: rotor inertia through the gearbox (kg m^2, or kg for a prismatic joint);',
        '# effort_offset: what the effort sensors add to the joint torque (N m, or N).',
        '/**:',
        '  ros__parameters:',
        f'    armature: {_vector(estimate.model.armature)}',
        f'    effort_offset: {_vector(estimate.offset)}',
        ''])


def run_robot(args: argparse.Namespace, argv: Sequence[str]) -> str:
    """identify robot: the report (or JSON line) after writing OUT.urdf and OUT.yaml."""
    import json

    if args.start is not None and args.end is not None and not args.end > args.start:
        raise IdentifyError(f'--end ({args.end:g} s) must be after --start ({args.start:g} s)')
    if not 0.0 < args.validation < 0.9:
        raise IdentifyError(f'--validation must be a fraction in (0, 0.9), got {args.validation:g}')
    output = Path(args.output)
    if output.suffix.lower() != '.urdf':
        raise IdentifyError(f'--output must name a .urdf file, got {args.output!r}')
    if not output.parent.is_dir():
        raise IdentifyError(f'--output: the folder {str(output.parent)!r} does not exist')
    import_rosbags()
    from robot_dynamics_ros import dynamics as rd

    urdf, model = _model(args)
    log = _read_torques(args, model).window(args.start, args.end)
    if log.t.size < 10:
        raise IdentifyError(f'the window holds {log.t.size} samples: too few to identify anything')
    split = log.t[0] + (1.0 - args.validation) * (log.t[-1] - log.t[0])
    fit, held_out = log.window(None, split), log.window(split, None)
    estimate = rd.identify_robot(model, fit.t, fit.q, fit.tau, armature=args.armature, cutoff=args.cutoff)
    try:
        before = _held_out_rms(model, held_out, args.cutoff)
        after = _held_out_rms(estimate.model, held_out, args.cutoff, estimate.offset)
    except ValueError as error:
        raise IdentifyError(f'the held-out part ({args.validation:g} of {log.t[-1] - log.t[0]:.3g} s) is '
                            f'too short to validate: {error}') from None
    rd.write_urdf(estimate.model, urdf, output)
    yaml_path = output.with_suffix('.yaml')
    command = ' '.join(['python -m robot_dynamics_ros.cli.identify', *argv])
    yaml_path.write_text(parameter_yaml(model, estimate, command))
    if args.json:
        def numbers(values):
            return [float(v) if math.isfinite(v) else None for v in np.asarray(values, dtype=float)]
        return json.dumps(dict(
            joint_names=list(model.joint_names), rms_before=numbers(before), rms_after=numbers(after),
            offset=numbers(estimate.offset), armature=numbers(estimate.model.armature),
            damping=numbers(estimate.model.damping), friction=numbers(estimate.model.friction),
            residual_rms=numbers(estimate.residual_rms),
            condition=float(estimate.condition) if math.isfinite(estimate.condition) else None,
            samples=int(estimate.samples), held_out_samples=int(held_out.t.size), method=estimate.method,
            warnings=list(estimate.warnings),
            base_parameters=estimate.base_parameters.count, output=str(output), parameters=str(yaml_path),
            skipped=log.skipped, duplicates=log.duplicates))
    span = float(log.t[-1] - log.t[0])
    rate = 1.0 / float(np.median(np.diff(log.t)))
    width = max(len(name) for name in model.joint_names)
    lines = [
        f'bag:       {args.bag}',
        f'topic:     {args.topic} ({log.messages} messages; {log.skipped} skipped, '
        f'{log.duplicates} repeated)',
        f'time:      {span:.3f} s at a median {rate:.4g} Hz; fit on the first {fit.t[-1] - fit.t[0]:.3f} s '
        f'({estimate.samples} samples after filtering), validated on the last '
        f'{held_out.t[-1] - held_out.t[0]:.3f} s',
        f'model:     {args.urdf}: {model.nq} joints, {estimate.base_parameters.count} base parameters; '
        f'low-pass cutoff {args.cutoff:g} Hz',
        f'fit:       {estimate.method}; condition {estimate.condition:.4g}',
        '',
        f'{"joint":<{width}}  {"RMS URDF":>9}  {"RMS ident.":>10}  {"offset":>9}  {"F_v":>8}  {"F_c":>8}'
        f'  {"armature":>9}',
    ]
    for k, name in enumerate(model.joint_names):
        lines.append(f'{name:<{width}}  {before[k]:9.4g}  {after[k]:10.4g}  {estimate.offset[k]:9.4g}  '
                     f'{estimate.model.damping[k]:8.4g}  {estimate.model.friction[k]:8.4g}  '
                     f'{estimate.model.armature[k]:9.4g}')
    lines.append('(held-out RMS torque errors in N m; F_v N m s/rad, F_c N m, armature kg m^2)')
    if estimate.condition > CONDITION_WARNING:
        lines.append(f'warning: condition {estimate.condition:.3g} > {CONDITION_WARNING:g}: the motion did '
                     'not excite every parameter; record an exciting trajectory '
                     '(dynamics.excitation_trajectory)')
    lines += [f'warning: {warning}' for warning in estimate.warnings]
    worse = [name for name, b, a in zip(model.joint_names, before, after) if a > b]
    if worse:
        lines.append(f'warning: the identified model predicts the held-out torques worse than the URDF on '
                     f'{", ".join(worse)}')
    lines += ['', f'wrote {output} and {yaml_path}; run a node on them:',
              f'  ros2 run robot_dynamics_ros dynamics_node --ros-args -p urdf_path:={output.resolve()} '
              f'--params-file {yaml_path.resolve()}']
    return '\n'.join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == 'robot':
        args = build_robot_parser().parse_args(argv[1:])
        try:
            output = run_robot(args, argv)
        except (ValueError, OSError) as error:
            print(f'identify: error: {error}', file=sys.stderr)
            return 2
        print(output)
        return 0
    if argv and argv[0] == 'payload':
        argv = argv[1:]
    args = build_parser().parse_args(argv)
    try:
        output = run(args)
    except ValueError as error:     # IdentifyError and the dynamics' ValueErrors naming the bad argument
        print(f'identify: error: {error}', file=sys.stderr)
        return 2
    print(output)
    return 0


if __name__ == '__main__':
    sys.exit(main())
