"""Sphinx directives that read the site's facts from where they live, so that the pages cannot drift.

- ``{node-interfaces} NODE`` and ``{node-parameters} NODE``: the node's class is created in process with
  rclpy, once with ``urdf_path`` = the package's UR5e (so that per-joint parameters such as
  ``constraints.<joint>.goal`` exist) and once without (the declared defaults); the tables list what the
  node object holds: subscriptions, publishers, services and action servers, and every parameter with
  its type, default, range, constraints, read-only flag and description (``describe_parameters``).
- ``{benchmark-run} SECTION`` and ``{benchmark-table} SECTION``: the newest run in
  ``benchmarks/results/*.json`` (``benchmarks/run.py --json``) that has the section, as tables.
- ``{dynamics-api}``: one name of ``robot_dynamics_ros.dynamics.__all__`` per line, each documented from
  its docstring (autodoc); after reading, every name of ``__all__`` must be on some page (a warning
  names the ones missing, which ``make docs`` (``-W``) turns into an error).

The directives write Markdown (MyST) and parse it in place; the pages that use them are read again on
every build (``env-get-outdated``), so a new benchmark run or a new parameter shows without ``-E``.
"""
from __future__ import annotations

import datetime
import importlib
import inspect
import json
import math
import re
import time
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from plain_docstrings import docstring_to_rst
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

LOG = logging.getLogger(__name__)

NODES = {
    'dynamics_node': ('robot_dynamics_ros.nodes.dynamics_node', 'DynamicsNode'),
    'computed_torque_controller': ('robot_dynamics_ros.nodes.computed_torque_node',
                                   'ComputedTorqueController'),
    'task_space_controller': ('robot_dynamics_ros.nodes.task_space_controller', 'TaskSpaceController'),
    'mpc_controller': ('robot_dynamics_ros.nodes.mpc_controller', 'MpcController'),
    'external_torque_estimator': ('robot_dynamics_ros.nodes.external_torque_estimator',
                                  'ExternalTorqueEstimator'),
    'simulator_node': ('robot_dynamics_ros.nodes.simulator_node', 'SimulatorNode'),
    # name[variant]: the node with these parameters; its tables show what they add to the node's
    'simulator_node[mujoco]': ('robot_dynamics_ros.nodes.simulator_node', 'SimulatorNode',
                               {'engine': 'mujoco'}),
    'trajectory_feedforward': ('robot_dynamics_ros.nodes.trajectory_feedforward', 'TrajectoryFeedforward'),
    'state_publisher': ('robot_dynamics_ros.nodes.state_publisher', 'StatePublisher'),
    'viewer': ('robot_dynamics_ros.nodes.viewer', 'Viewer'),
}
_NAMESPACE = '/rdr_docs'
# rclpy's own interfaces on every node: not the node's.
_BUILTIN_TOPICS = {'/parameter_events', '/rosout'}
_BUILTIN_SERVICES = ('describe_parameters', 'get_parameters', 'get_parameter_types', 'list_parameters',
                     'set_parameters', 'set_parameters_atomically', 'get_type_description')


def repository_root(confdir):
    """The checkout: doc/'s parent when built in place (make docs), else the one the package is
    imported from (rosdoc2 builds from a copy of doc/). None when neither holds package.xml."""
    candidates = [Path(confdir).resolve().parent]
    try:
        import robot_dynamics_ros
        candidates.append(Path(robot_dynamics_ros.__file__).resolve().parents[1])
    except ImportError:
        pass
    for base in candidates:
        if (base / 'package.xml').is_file() and (base / 'robot_dynamics_ros').is_dir():
            return base
    return None


def _one_line(text):
    return ' '.join(str(text).split())


def cell(text):
    """Prose for one Markdown table cell: one line; pipes and angle brackets (HTML to Markdown)
    escaped."""
    return _one_line(text).replace('|', '\\|').replace('<', '\\<')


def code(value):
    """A value as inline code in a table cell (pipes escaped as tables need, backticks doubled)."""
    text = _one_line(value).replace('|', '\\|')
    return f'`` {text} ``' if '`' in text else f'`{text}`'


class MarkdownDirective(SphinxDirective):
    """A directive that renders Markdown it builds; its document is read again on every build."""

    def markdown(self):
        raise NotImplementedError

    def run(self):
        self.env.rdr_generated_docs = getattr(self.env, 'rdr_generated_docs', set())
        self.env.rdr_generated_docs.add(self.env.docname)
        try:
            text = self.markdown()
        except Exception as exc:    # say which directive failed, and where
            LOG.warning(f'{self.name} {" ".join(self.arguments)}: {type(exc).__name__}: {exc}',
                        location=self.get_location(), type='robot_dynamics_docs')
            text = f'*(not generated: {cell(exc)})*'
        container = nodes.container()
        self.state.nested_parse(StringList(text.splitlines()), self.content_offset, container,
                                match_titles=True)
        return container.children


# ------------------------------------------------------------------------------------------------
# nodes


class NodeFacts:
    """Parameters and interfaces of every node, from node objects created in process."""

    _cache = None

    @classmethod
    def get(cls, urdf):
        if cls._cache is None:
            cls._cache = cls._collect(urdf)
        return cls._cache

    @staticmethod
    def _collect(urdf):
        import rclpy
        from rclpy.context import Context
        from rclpy.parameter import Parameter

        from robot_dynamics_ros import dynamics

        joints = list(dynamics.load_urdf(str(urdf)).joint_names)
        facts = {}
        context = Context()
        rclpy.init(context=context, args=['--ros-args', '--log-level', 'warn'])
        try:
            for name, (module, cls_name, *given) in NODES.items():
                node_class = getattr(importlib.import_module(module), cls_name)
                # (the overrides a node takes in NODES, e.g. another engine)
                given = given[0] if given else {}
                overrides = [Parameter(key, value=value) for key, value in given.items()]
                bare = node_class(context=context, parameter_overrides=overrides)
                defaults = {p: bare.get_parameter(p).value for p in bare._parameters}
                bare.destroy_node()
                # In a namespace of its own, so that relative names show as relative.
                node = node_class(context=context, namespace=_NAMESPACE,
                                  parameter_overrides=overrides + [Parameter('urdf_path', value=str(urdf))])
                try:
                    facts[name] = NodeFacts._facts(node, defaults)
                    facts[name]['joints'] = joints
                finally:
                    node.destroy_node()
        finally:
            rclpy.shutdown(context=context)
        for name in [n for n in facts if '[' in n]:        # a variant: only what it adds
            base = facts[name.split('[')[0]]
            known = {p['name'] for p in base['parameters']}
            facts[name]['parameters'] = [p for p in facts[name]['parameters'] if p['name'] not in known]
            facts[name]['interfaces'] = [i for i in facts[name]['interfaces'] if i not in base['interfaces']]
        return facts

    @staticmethod
    def _facts(node, defaults):
        private = f'{_NAMESPACE}/{node.get_name()}/'

        def relative(topic):
            """As written in the node: ~/private, relative (to the namespace) or /absolute."""
            if topic.startswith(private):
                return '~/' + topic[len(private):]
            if topic.startswith(_NAMESPACE + '/'):
                return topic[len(_NAMESPACE) + 1:]
            return topic

        interfaces = []
        for sub in node.subscriptions:
            interfaces.append(('subscribes', relative(sub.topic_name), _type_name(sub.msg_type),
                               _qos_notes(sub.qos_profile)))
        for pub in node.publishers:
            if pub.topic_name not in _BUILTIN_TOPICS:
                interfaces.append(('publishes', relative(pub.topic_name), _type_name(pub.msg_type),
                                   _qos_notes(pub.qos_profile)))
        for srv in node.services:
            name = node.resolve_service_name(srv.srv_name)
            if not name.endswith(_BUILTIN_SERVICES):
                interfaces.append(('service', relative(name), _type_name(srv.srv_type), ''))
        for action, types in _action_servers(node):
            interfaces.append(('action', relative(action), ', '.join(types), ''))

        names = sorted(node._parameters)
        parameters = []
        for name, descriptor in zip(names, node.describe_parameters(names)):
            value = defaults.get(name, node.get_parameter(name).value)
            parameters.append(dict(name=name, type=_type_label(node.get_parameter(name), descriptor, value),
                                   default=value, descriptor=descriptor))
        return {'interfaces': interfaces, 'parameters': parameters}


def _qos_notes(profile):
    """What a topic's QoS profile has that differs from the default (reliable, volatile)."""
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    notes = []
    if profile.durability == DurabilityPolicy.TRANSIENT_LOCAL:
        notes.append('transient local')
    if profile.reliability == ReliabilityPolicy.BEST_EFFORT:
        notes.append('best effort')
    return ', '.join(notes)


def _type_name(t):
    """package/msg/Name (or srv) of a message or service class."""
    return t.__module__.split('.')[0] + '/' + ('srv' if hasattr(t, 'Request') else 'msg') + '/' + t.__name__


def _action_servers(node):
    """[(action name, [types])] of the node's action servers. rclpy keeps no action server's name: the
    ROS graph has it (the node's own entities, there at once in practice; waited for a little in case
    the graph lags)."""
    from rclpy.action.graph import get_action_server_names_and_types_by_node

    servers = [w for w in node.waitables if type(w).__name__ == 'ActionServer']
    for _attempt in range(100):
        actions = get_action_server_names_and_types_by_node(node, node.get_name(), node.get_namespace())
        if len(actions) >= len(servers):
            return actions
        time.sleep(0.02)
    raise RuntimeError(f'{len(servers)} action server(s), {len(actions)} in the ROS graph')


def _type_label(parameter, descriptor, value):
    if descriptor.dynamic_typing:
        if isinstance(value, (list, tuple)) or hasattr(value, 'tolist'):
            return 'array (dynamic)'
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return 'number (dynamic)'
        return 'dynamic'
    return parameter.type_.name.lower().replace('_array', '[]')


def _range(descriptor):
    parts = []
    for r in list(descriptor.floating_point_range) + list(descriptor.integer_range):
        lo, hi = (float(r.from_value), float(r.to_value)) if isinstance(r.from_value, float) else \
            (r.from_value, r.to_value)
        if isinstance(lo, int):
            text = f'{lo} … {hi}'
        elif math.isinf(hi) and not math.isinf(lo):
            text = f'≥ {lo:g}'
        elif math.isinf(lo) and not math.isinf(hi):
            text = f'≤ {hi:g}'
        elif math.isinf(lo) and math.isinf(hi):
            text = 'any'
        else:
            text = f'{lo:g} … {hi:g}'
        if r.step and not (isinstance(lo, int) and r.step == 1):
            text += f', step {r.step:g}'
        parts.append(text)
    if descriptor.additional_constraints:
        parts.append(descriptor.additional_constraints)
    return '; '.join(parts)


def _default(value):
    if hasattr(value, 'tolist'):
        value = value.tolist()
    if isinstance(value, bool):
        return code(str(value).lower())
    if isinstance(value, str):
        return "`''`" if value == '' else code(value)
    if isinstance(value, float):
        return code(f'{value:g}')
    if isinstance(value, (list, tuple)):
        return code('[' + ', '.join(f'{v:g}' if isinstance(v, float) else repr(v) for v in value) + ']')
    return code(value)


def _merge_joints(parameters, joints):
    """Rows named after one joint (constraints.<joint>.goal, ...) as one row with <joint>."""
    if not joints:
        return parameters
    pattern = re.compile('|'.join(re.escape(j) for j in sorted(joints, key=len, reverse=True)))
    rows, seen = [], {}
    for p in parameters:
        if pattern.search(p['name']):
            key = pattern.sub('<joint>', p['name'])
            row = dict(p, name=key, per_joint=True)
            row['description'] = pattern.sub('<joint>', p['descriptor'].description)
            if key in seen:
                continue
            seen[key] = row
            rows.append(row)
        else:
            rows.append(dict(p, description=p['descriptor'].description))
    return rows


class NodeInterfaces(MarkdownDirective):
    """``{node-interfaces} NODE``: what the node subscribes to, publishes, serves."""

    required_arguments = 1

    def markdown(self):
        facts = NodeFacts.get(_urdf(self.env))[self.arguments[0]]
        lines = ['| kind | name | type | QoS |', '|---|---|---|---|']
        for kind, name, type_, qos in facts['interfaces']:
            lines.append(f'| {kind} | {code(name)} | {code(type_)} | {cell(qos) or "default"} |')
        return '\n'.join(lines)


class NodeParameters(MarkdownDirective):
    """``{node-parameters} NODE``: every parameter the node declares, as the node describes it."""

    required_arguments = 1

    def markdown(self):
        facts = NodeFacts.get(_urdf(self.env))[self.arguments[0]]
        lines = ['| parameter | type | default | range, constraints | description |', '|---|---|---|---|---|']
        per_joint = False
        for p in _merge_joints(facts['parameters'], facts['joints']):
            d = p['descriptor']
            name = code(p['name']) + (' (read-only)' if d.read_only else '')
            per_joint |= p.get('per_joint', False)
            lines.append(f"| {name} | {p['type']} | {_default(p['default'])} | {cell(_range(d))} "
                         f"| {cell(p['description'])} |")
        if per_joint:
            lines.append('')
            lines.append(f"`<joint>`: one parameter per joint of the model ({len(facts['joints'])} for the "
                         'UR5e: ' + ', '.join(code(j) for j in facts['joints']) + ').')
        return '\n'.join(lines)


def _urdf(env):
    root = repository_root(env.app.confdir)
    if root is not None and (root / 'urdf' / 'ur5e.urdf').is_file():
        return root / 'urdf' / 'ur5e.urdf'
    from robot_dynamics_ros.cli import resources
    return resources.default_urdf()


# ------------------------------------------------------------------------------------------------
# benchmarks


def benchmark_runs(env):
    """Every benchmarks/results/*.json, oldest first (by the run's own date)."""
    root = repository_root(env.app.confdir)
    runs = []
    if root is None:
        return runs
    for path in sorted((root / 'benchmarks' / 'results').glob('*.json')):
        env.note_dependency(str(path))
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            LOG.warning(f'{path}: not a benchmark result: {exc}', type='robot_dynamics_docs')
            continue
        if isinstance(data, dict) and 'meta' in data:
            runs.append((data['meta'].get('date', ''), path, data))
    runs.sort(key=lambda r: r[0])
    return runs


def newest_with(env, section):
    """(path, run) of the newest run whose ``section`` (``ros.<key>`` for the ROS parts) has a result."""
    for _date, path, data in reversed(benchmark_runs(env)):
        value = data
        for key in section.split('.'):
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, dict) and value and 'error' not in value and 'skipped' not in value:
            return path, data
    return None, None


def _us(x):
    return '–' if x is None else f'{x * 1e6:.2f}'


def _ms(x):
    return '–' if x is None else f'{x * 1e3:.2f}'


def _ratio(x):
    return '–' if x is None else f'{x:.2f}'


def _pair(r):
    """'ours / Pinocchio µs = **ratio**'."""
    if r is None:
        return '–'
    if 'error' in r:
        return f"error: {cell(r['error'])}"
    ours, pin = r.get('ours_s'), r.get('pin_s')
    if max(ours or 0.0, pin or 0.0) >= 1e-3:          # a horizon, not a call: milliseconds
        return f"{_ms(ours)} / {_ms(pin)} ms = **{_ratio(r.get('ratio'))}**"
    return f"{_us(ours)} / {_us(pin)} = **{_ratio(r.get('ratio'))}**"


def _robot_table(section, label, unit_note):
    """Rows = functions, columns = robots, cells 'ours / pin = ratio'."""
    robots = section['robots']
    functions = []
    for rob in robots.values():
        for fn in rob['results']:
            if fn not in functions:
                functions.append(fn)
    head = [label] + [f"{name} ({rob.get('n', '?')} joints)" for name, rob in robots.items()]
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for fn in functions:
        cells = [code(fn)] + [_pair(rob['results'].get(fn)) for rob in robots.values()]
        lines.append('| ' + ' | '.join(cells) + ' |')
    lines += ['', unit_note]
    return lines


def _section_single(run):
    return _robot_table(run['single'], 'single call', 'µs per call, ours / Pinocchio = ratio (lower is '
                        'better; target ≤ 1).')


def _section_batch(run):
    b1, b2 = run['batch'], run.get('batch_2threads') or {}
    # runs before issue 40 measured a second BLAS thread; since, 2 of our threads (set_num_threads)
    second = '2 threads' if 'threads' in b2 else '2 BLAS threads'
    lines = [f"| N = {b1.get('N')} states | " + ' | '.join(f'{name} (ours / Pinocchio ms = ratio)'
                                                          for name in b1['robots']) + ' |',
             '|---|' + '---|' * len(b1['robots'])]
    functions = list(next(iter(b1['robots'].values()))['results'])
    for fn in functions:
        cells = []
        for name, rob in b1['robots'].items():
            r = rob['results'].get(fn, {})
            r2 = b2.get('robots', {}).get(name, {}).get('results', {}).get(fn, {})
            text = f"{_ms(r.get('ours_s'))} / {_ms(r.get('pin_s'))} = **{_ratio(r.get('ratio'))}**"
            if r2.get('ratio') is not None:
                text += f" ({second}: {_ratio(r2['ratio'])})"
            cells.append(text)
        lines.append(f'| {code(fn)} | ' + ' | '.join(cells) + ' |')
    lines += ['', 'Milliseconds for all N states, ours / Pinocchio in a Python loop = ratio (target ≤ 0.35); '
              f'one thread, and in brackets the ratio with {second}.']
    return lines


def _section_one_case(key, label):
    def render(run):
        targets = {r.get('target') for rob in run[key]['robots'].values() for r in rob['results'].values()}
        target = ', '.join(f'{t:g}' for t in sorted(t for t in targets if t is not None))
        return _robot_table(run[key], label, 'µs per call (ms where marked), ours / the same computation '
                            f'from Pinocchio calls in Python = ratio (target ≤ {target}).')
    return render


def _section_identification(run):
    s = run['identification']
    lines = ['| function | ours ms | Pinocchio ms | ratio | target |', '|---|---|---|---|---|']
    for fn, r in s['results'].items():
        lines.append(f"| {code(fn)} | {_ms(r.get('ours_s'))} | {_ms(r.get('pin_s'))} | "
                     f"{_ratio(r.get('ratio'))} | ≤ {r.get('target_s', 0) * 1e3:g} ms |")
    lines += ['', f"{s.get('robot')}, {s.get('samples')} samples; Pinocchio: a Python loop of "
              '`computeJointTorqueRegressor` + `rnea`, then the same least squares.']
    return lines


def _section_robot_identification(run):
    s = run['robot_identification']
    res = s['results']
    theirs = res.get('pin_loop_lstsq', {}).get('seconds')
    lines = ['| step | seconds | note |', '|---|---|---|']
    for name, r in res.items():
        note = ''
        if name.startswith('identify_robot'):
            note = f"method {r.get('method', '?')}; target ≤ {s.get('target_s', 5):g} s"
            if theirs:
                note += f"; {r['seconds'] / theirs:.1f}× the Pinocchio loop"
        elif name == 'pin_loop_lstsq':
            note = 'Pinocchio: a Python loop of `computeJointTorqueRegressor` + one numpy `lstsq`'
        lines.append(f"| {code(name)} | {r['seconds']:.3f} | {note} |")
    lines += ['', f"{s.get('robot')}, {s.get('samples')} samples at 1 kHz, {s.get('base_parameters')} "
              f"base parameters, condition {s.get('condition', float('nan')):.3g}; torque RMS against the "
              f"noise-free truth {s.get('rms_error', float('nan')):.3g} N·m."]
    return lines


def _section_scaling(run):
    s = run['scaling']
    algos = list(s['ratio'])
    head = ['n'] + [f'{a} ours / Pinocchio µs = ratio' for a in algos]
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for i, n in enumerate(s['n']):
        cells = [str(n)]
        for a in algos:
            o, p = s['per_call_s'][f'{a}/ours'][i], s['per_call_s'][f'{a}/pin'][i]
            cells.append(f"{_us(o)} / {_us(p)} = **{_ratio(s['ratio'][a][i])}**")
        lines.append('| ' + ' | '.join(cells) + ' |')
    lines += ['', '| fitted exponent k of t ~ n^k | all n | n ≥ 15 | t(n) − t(1), n ≥ 15 |',
              '|---|---|---|---|']
    for key, e in s.get('exponent', {}).items():
        lines.append(f"| {key} | {_ratio(e.get('all'))} | {_ratio(e.get('n>=15'))} | "
                     f"{_ratio(e.get('marginal n>=15'))} |")
    lines += ['', 'Random chains of n joints; the exponent is the slope of log t against log n.']
    return lines


def _section_startup(run):
    s = run['startup']
    cold, warm = s.get('cold', {}), s.get('warm', {})
    phases = [('interpreter start (incl. the ROS wheels\' re-exec)', 'interpreter_s'),
              ('import numpy', 'import_numpy_s'), ('import robot_dynamics_ros.dynamics', 'import_dynamics_s'),
              ('load_urdf (Panda)', 'load_urdf_s'), ('first call of every function', 'first_calls_s'),
              ('process start → last first call', 'to_last_first_call_s')]
    lines = ['| phase | cold numba cache, s | warm cache, s |', '|---|---|---|']
    for label, key in phases:
        c = f'{cold[key]:.3f}' if key in cold else '–'
        w = f'{warm[key]:.3f}' if key in warm else '–'
        lines.append(f'| {label} | {c} | {w} |')
    if s.get('cold_all_kernels_s'):
        lines += ['', "Every kernel compiled cold (`python -m robot_dynamics_ros.cli.precompile`, one worker "
                  f"per core): {s['cold_all_kernels_s']:.1f} s."]
    if 'skipped' in cold:
        lines += ['', f"Cold cache: {cell(cold['skipped'])}."]
    return lines


def _section_sim(run):
    lines = ['| simulation | x real time | Pinocchio RK4 loop, x real time |', '|---|---|---|']
    for name, r in run.get('sim', {}).get('results', {}).items():
        x, xp = r.get('x_real_time'), r.get('pin_x_real_time')
        lines.append(f"| {code(name)} | {x:.0f}× | {xp:.0f}× |" if x and xp else f'| {code(name)} | – | – |')
    sim = run.get('ros', {}).get('simulator')
    if sim and 'error' not in sim:
        lines.append(f"| `simulator_node` (real_time_factor 0, /joint_states at 1 kHz) | "
                     f"{sim['speed_x_real_time']:.1f}× | |")
    lines += ['', 'Panda, RK4, dt = 1 ms (target: `simulate` ≥ 50×, `simulator_node` ≥ 5×).']
    return lines


_NODE_ROWS = (('echo', "rclpy's floor (`_echo_node`: republishes the state)"),
              ('controller', '`computed_torque_controller`'),
              ('controller_goal', '`computed_torque_controller`, FollowJointTrajectory goal active'),
              ('task_space', '`task_space_controller`'),
              ('dynamics', '`dynamics_node` (four outputs per state)'),
              ('estimator', '`external_torque_estimator`'))


def _section_node(run):
    ros = run['ros']
    lines = ['| node | p99 ms | median ms | max ms | lost of sent | node CPU |', '|---|---|---|---|---|---|']
    for key, label in _NODE_ROWS:
        r = ros.get(key)
        if not r:
            continue
        if 'error' in r:
            lines.append(f"| {label} | error: {cell(r['error'].splitlines()[0])} | | | | |")
            continue
        lines.append(f"| {label} | {r['p99_ms']:.2f} | {r['median_ms']:.2f} | {r['max_ms']:.2f} | "
                     f"{r['lost']} of {r['sent']} | {r['cpu_percent']:.0f} % |")
    mpc = ros.get('mpc')
    if mpc and 'error' not in mpc and mpc.get('replan_rate_hz') is not None:
        lines += ['', f"`mpc_controller` (UR5e, {mpc.get('horizon')} knots, /joint_states at 1 kHz, "
                  f"moving to a target): re-plans at {mpc['replan_rate_hz']:.1f} Hz (target 100), solve "
                  f"time median {mpc['solve_median_ms']:.2f} ms, p99 {mpc['solve_p99_ms']:.2f} ms; compute "
                  f"per joint state median {mpc['step_median_ms']:.3f} ms, p99 {mpc['step_p99_ms']:.3f} ms"
                  + (" (a re-plan included when one falls due)" if 'method' not in mpc else
                     " (the re-plans run in a planning thread beside it)")
                  + f"; {mpc['answered']} commands for {mpc['sent']} states"
                  + (f"; round trip median {mpc['median_ms']:.3f} ms, p99 {mpc['p99_ms']:.3f} ms, max "
                     f"{mpc['max_ms']:.2f} ms (commands paired with states by order)"
                     if 'p99_ms' in mpc else '')
                  + f"; node CPU {mpc['cpu_percent']:.0f} %."]
    ready = ros.get('ready')
    if ready and ready.get('median_s'):
        lines += ['', f"`dynamics_node` ready (process start → first output, warm cache, median of "
                  f"{len(ready.get('runs_s', []))}): {ready['median_s']:.2f} s (target < 1 s)."]
    cb = run.get('node_callback')
    if cb and 'error' not in cb:
        lines += ['', f"`dynamics_node`'s callback in process (a JointState in → {cb.get('outputs')} "
                  f"published): {cb['callback_us']:.1f} µs median."]
    return lines


def summary_rows(env):
    """Every target of every stored run, the newest run's value where several have it."""
    rows = {}
    for date, path, data in benchmark_runs(env):
        for r in data.get('summary') or []:
            rows[(r['section'], r['item'])] = dict(r, run=path.name, date=date[:10])
    return list(rows.values())


def _summary_table(rows):
    lines = ['| section | item | value | target | met | run |', '|---|---|---|---|---|---|']
    for r in rows:
        lines.append(f"| {r['section']} | {cell(r['item'])} | {cell(r['value'])} | {cell(r['target'])} | "
                     f"{r['met']} | {code(r['run'])}, {r['date']} |")
    met = sum(r['met'] == 'yes' for r in rows)
    return lines + ['', f'{met} of {len(rows)} targets met.']


def _section_ocp(run):
    s = run['ocp']
    lines = ["| problem | ours ms (iterations) | ours to Crocoddyl's cost | Crocoddyl 1 thread "
             "| Crocoddyl 2 threads | ratio | per iteration | cost ours / Crocoddyl |",
             '|---|---|---|---|---|---|---|---|']

    def ms_it(r):
        return '–' if not r else f"{r['solve_s'] * 1e3:.1f} ({r['iterations']})"
    for robot, d in s['robots'].items():
        for case, r in d['results'].items():
            cells = [f'{robot}, {case}', ms_it(r['ours']), ms_it(r.get('ours_to_crocoddyls_cost')),
                     ms_it(r['crocoddyl_1']), ms_it(r['crocoddyl_2']), f"**{_ratio(r['ratio'])}**",
                     _ratio(r['ratio_per_iteration']),
                     f"{r['ours']['cost']:.7f} / {r['crocoddyl_1']['cost']:.7f}"]
            lines.append('| ' + ' | '.join(cells) + ' |')
    lines += ['', f"Fastest of {s.get('repeats')} solves each, {s.get('horizon')} knots of {s.get('dt')} s; "
              "ratio: ours / Crocoddyl's best of 1 and 2 threads (target ≤ 1), against ours to Crocoddyl's "
              'final cost where Crocoddyl stops short of the tolerance; per iteration: the same with each '
              "solve's time divided by its iterations."]
    return lines


def _section_viewer(run):
    v = run['viewer']
    return ['| robot | viewer CPU, % of one core | frames/s | joint states/s received | newest-state lag ms '
            '| render ms (median) |', '|---|---|---|---|---|---|',
            f"| UR5e | {v['cpu_percent_of_core']:.1f} | {v['frames_per_second']:.1f} | "
            f"{v['joint_states_rate']:.0f} | {v['latest_state_lag_ms']:.1f} | "
            f"{v['render_time_median_ms']:.2f} |",
            '', f"{v['seconds']:g} s at /joint_states {v['publish_rate_set']:.0f} Hz (what the viewer "
            f"received is the publisher's real rate), frame_rate {v['frame_rate_set']:g}; "
            f"{v.get('machine', '')}."]


SECTIONS = {
    'single': ('single', _section_single),
    'batch': ('batch', _section_batch),
    'contact': ('contact', _section_one_case('contact', 'contact sensing')),
    'task_space': ('task_space', _section_one_case('task_space', 'task-space control')),
    'feedforward': ('feedforward', _section_one_case('feedforward', 'trajectory feed-forward')),
    'derivatives': ('derivatives', _section_one_case('derivatives', 'derivatives')),
    'ocp': ('ocp', _section_ocp),
    'identification': ('identification', _section_identification),
    'robot_identification': ('robot_identification', _section_robot_identification),
    'scaling': ('scaling', _section_scaling),
    'startup': ('startup', _section_startup),
    'sim': ('sim', _section_sim),
    'node': ('ros.controller', _section_node),
    'viewer': ('viewer', _section_viewer),
}


def describe_run(path, run):
    meta = run['meta']
    options = meta.get('options', {})
    only = options.get('only') or []
    kind = 'quick run' if options.get('quick') else 'run'
    load = meta.get('loadavg_start') or [None]
    head = (meta.get('git_head') or '')[:7]
    dirty = ' with local changes' if meta.get('git_dirty_package') else ''
    date = meta.get('date', '?')
    try:
        date = datetime.datetime.fromisoformat(date).strftime('%Y-%m-%d %H:%M')
    except ValueError:
        pass
    text = (f"`benchmarks/results/{path.name}`: {kind} of {date} (`--only {','.join(only)}`), "
            f"commit `{head}`{dirty}; {meta.get('cpus')} × {meta.get('cpu')}, Python {meta.get('python')}, "
            f"numba {meta.get('numba')}, Pinocchio {meta.get('pinocchio')}, "
            f"{meta.get('blas_threads')} BLAS thread(s)")
    if load[0] is not None:
        text += f', load average {load[0]:.2f} at the start'
    return text + '.'


class BenchmarkRun(MarkdownDirective):
    """``{benchmark-run} SECTION``: which run the section's figures come from (``summary``: the runs
    the summary draws on)."""

    required_arguments = 1

    def markdown(self):
        section = self.arguments[0]
        if section == 'summary':
            runs = benchmark_runs(self.env)
            if not runs:
                return '*No run in `benchmarks/results/`: `make bench` writes one.*'
            return '\n'.join(f'- {describe_run(path, run)}' for _date, path, run in runs)
        path, run = newest_with(self.env, SECTIONS[section][0])
        if run is None:
            return ('*No run in `benchmarks/results/` has this section: '
                    f'`make bench BENCH_ARGS="--only {section}"` writes one.*')
        return 'From ' + describe_run(path, run)


class BenchmarkTable(MarkdownDirective):
    """``{benchmark-table} SECTION``: the section's figures from the newest run that has them
    (``summary``: every target of every run, the newest value of each)."""

    required_arguments = 1

    def markdown(self):
        if self.arguments[0] == 'summary':
            rows = summary_rows(self.env)
            return '\n'.join(_summary_table(rows)) if rows else ''
        key, render = SECTIONS[self.arguments[0]]
        _path, run = newest_with(self.env, key)
        if run is None:
            return ''
        return '\n'.join(render(run))


# ------------------------------------------------------------------------------------------------
# Python API


class DynamicsApi(SphinxDirective):
    """``{dynamics-api}``: one public name of robot_dynamics_ros.dynamics per line, autodoc'ed."""

    has_content = True

    def run(self):
        from robot_dynamics_ros import dynamics

        documented = self.env.rdr_api_names = getattr(self.env, 'rdr_api_names', {})
        rst = []
        for name in (line.strip() for line in self.content):
            if not name:
                continue
            if name not in dynamics.__all__:
                LOG.warning(f'{name} is not in robot_dynamics_ros.dynamics.__all__',
                            location=self.get_location(), type='robot_dynamics_docs')
                continue
            documented[name] = self.env.docname
            kind = 'autoclass' if isinstance(getattr(dynamics, name), type) else 'autofunction'
            rst += [f'.. {kind}:: robot_dynamics_ros.dynamics.{name}']
            if kind == 'autoclass':
                rst += ['   :members:']
            rst.append('')
        text = '```{eval-rst}\n' + '\n'.join(rst) + '\n```'
        container = nodes.container()
        self.state.nested_parse(StringList(text.splitlines()), self.content_offset, container)
        return container.children


class _Text:
    """An annotation shown as written in the source (numpy.typing.ArrayLike stays one word, not the
    union it stands for)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _source_signature(app, what, name, obj, options, signature, return_annotation):
    """The signature with its annotations as the source writes them (the package uses
    ``from __future__ import annotations``, so they are strings there)."""
    if not name.startswith('robot_dynamics_ros') or what not in ('function', 'class', 'method'):
        return None
    try:
        sig = inspect.signature(obj, eval_str=False)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if what == 'method' and params and params[0].name in ('self', 'cls'):
        params = params[1:]

    def text(annotation):
        if annotation is inspect.Parameter.empty:
            return annotation
        return _Text(annotation if isinstance(annotation, str) else inspect.formatannotation(annotation))

    params = [p.replace(annotation=text(p.annotation)) for p in params]
    shown = sig.replace(parameters=params, return_annotation=inspect.Signature.empty)
    returns = text(sig.return_annotation)
    if what == 'class' or returns is inspect.Parameter.empty:
        return str(shown), None
    return str(shown), repr(returns)


def _process_docstring(app, what, name, obj, options, lines):
    if name.startswith('robot_dynamics_ros'):
        lines[:] = docstring_to_rst(list(lines))


def _check_api_complete(app, env):
    from robot_dynamics_ros import dynamics

    documented = getattr(env, 'rdr_api_names', {})
    missing = [name for name in dynamics.__all__ if name not in documented]
    if missing and documented:
        LOG.warning('robot_dynamics_ros.dynamics.__all__ names on no page (add them to a {dynamics-api} '
                    f'block): {", ".join(missing)}', type='robot_dynamics_docs')


# ------------------------------------------------------------------------------------------------


def _outdated(app, env, added, changed, removed):
    return sorted(getattr(env, 'rdr_generated_docs', set()) - set(removed))


def _purge(app, env, docname):
    getattr(env, 'rdr_generated_docs', set()).discard(docname)
    names = getattr(env, 'rdr_api_names', {})
    for name in [n for n, d in names.items() if d == docname]:
        del names[name]


def _merge(app, env, docnames, other):
    env.rdr_generated_docs = getattr(env, 'rdr_generated_docs', set()) | getattr(other, 'rdr_generated_docs',
                                                                                 set())
    env.rdr_api_names = {**getattr(env, 'rdr_api_names', {}), **getattr(other, 'rdr_api_names', {})}


def setup(app):
    app.add_directive('node-interfaces', NodeInterfaces)
    app.add_directive('node-parameters', NodeParameters)
    app.add_directive('benchmark-run', BenchmarkRun)
    app.add_directive('benchmark-table', BenchmarkTable)
    app.add_directive('dynamics-api', DynamicsApi)
    app.connect('env-get-outdated', _outdated)
    app.connect('env-purge-doc', _purge)
    app.connect('env-merge-info', _merge)
    app.connect('env-check-consistency', _check_api_complete)
    app.connect('autodoc-process-docstring', _process_docstring)
    app.connect('autodoc-process-signature', _source_signature)
    return {'version': '1', 'parallel_read_safe': True, 'parallel_write_safe': True}
