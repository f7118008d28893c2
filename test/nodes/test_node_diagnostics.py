"""/diagnostics of every node over real DDS: a status about once a second named "<node>: <task>" with
the robot as hardware_id and the same keys everywhere; OK while the input flows; the stale level
when it stops (ERROR for a controller, WARN for the others); ERROR without a model; a bad message
counted under its reason, with WARN; WARN when the input is slower than diagnostics_min_rate; the
parameters refused with a reason. Most checks run at diagnostics_period 0.2 s to keep the test short."""

import math
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
from robot_dynamics_ros.nodes.conversions import make_joint_state
from robot_dynamics_ros.nodes.dynamics_node import DynamicsNode
from robot_dynamics_ros.nodes.external_torque_estimator import ExternalTorqueEstimator
from robot_dynamics_ros.nodes.mpc_controller import MpcController
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode
from robot_dynamics_ros.nodes.task_space_controller import TaskSpaceController

from _node_harness import UR5E_HOME, UR5E_JOINTS, UR5E_URDF

pytestmark = pytest.mark.ros

Q = np.array(UR5E_HOME) + np.array([0.2, 0.3, -0.4, 0.3, 0.2, 0.1])    # away from singularities
FAST = 0.2          # s: diagnostics_period of most tests
COMMON_KEYS = ('robot', 'joints', 'model source', 'input', 'input rate (Hz)', 'input age (s)',
               'inputs received', 'dropped (last period)', 'dropped (since start)',
               'compute time median (ms)', 'compute time p99 (ms)')
# node class, task, stale level, its own keys, parameters
JOINT_STATE_NODES = {
    'dynamics_node': (DynamicsNode, 'dynamics', DiagnosticStatus.WARN, (),
                      {'diagnostics_max_age': 0.3}),
    'external_torque_estimator': (ExternalTorqueEstimator, 'estimation', DiagnosticStatus.WARN,
                                  ('contact', 'external torque norm (N m)',
                                   'observer restarts (since start)'),
                                  {'diagnostics_max_age': 0.3}),
    'computed_torque_controller': (ComputedTorqueController, 'control', DiagnosticStatus.ERROR,
                                   ('mode', 'enabled', 'control_rate (Hz)', 'state_timeout (s)'),
                                   {'state_timeout': 0.3}),
    'task_space_controller': (TaskSpaceController, 'control', DiagnosticStatus.ERROR,
                              ('mode', 'enabled', 'control_rate (Hz)', 'state_timeout (s)'),
                              {'state_timeout': 0.3, 'tip_link': 'tool0', 'damping': 1e-4}),
    'mpc_controller': (MpcController, 'control', DiagnosticStatus.ERROR,
                       ('mode', 'enabled', 'control_rate (Hz)', 'state_timeout (s)', 'last solve (ms)',
                        'last iterations', 'last converged', 'solve median (ms)', 'solve p99 (ms)',
                        'replan rate (Hz)'),
                       {'state_timeout': 0.3, 'tip_link': 'tool0'}),
}
SIMULATOR_KEYS = ('state', 'simulated time (s)', 'simulated time dropped (s)', 'real_time_factor')


class Diagnostics:
    """The probe's end of /diagnostics: every status with its arrival time."""

    def __init__(self, ros):
        self.ros = ros
        self.statuses = []          # (monotonic s, DiagnosticStatus)
        ros.probe.create_subscription(DiagnosticArray, '/diagnostics', self._on, 100)

    def _on(self, msg):
        now = time.monotonic()
        self.statuses.extend((now, status) for status in msg.status)

    def of(self, name):
        return [s for _, s in self.statuses if s.name == name]

    def wait(self, name, predicate, feed=None, timeout=4.0):
        """The first status of ``name`` arriving from now on that satisfies ``predicate``, while
        ``feed()`` (called every 10 ms) keeps the input flowing; fails showing the last one."""
        start = len(self.statuses)
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            for _, status in self.statuses[start:]:
                if status.name == name:
                    last = status
                    if predicate(status):
                        return status
            start = len(self.statuses)
            if feed is not None:
                feed()
            self.ros.spin(0.01)
        pytest.fail(f'no matching status of {name!r} within {timeout} s; last: {_show(last)}')


def _show(status):
    if status is None:
        return 'none'
    return f'level {status.level!r}, {status.message!r}, {values(status)}'


def values(status):
    return {kv.key: kv.value for kv in status.values}


def level(wanted, text=''):
    return lambda s: s.level == wanted and text in s.message


@pytest.fixture(scope='module')
def diagnostics(ros):
    return Diagnostics(ros)


class StateStream:
    """Joint states at about 100 Hz from the probe (with efforts: the gravity torques, so that the
    estimator has what it needs)."""

    def __init__(self, ros, model):
        self.publisher = ros.publisher(JointState, '/joint_states')
        self.msg = make_joint_state(UR5E_JOINTS, position=Q, velocity=np.zeros(6),
                                    effort=rd.gravity_torques(model, Q))
        self._next = 0.0

    def __call__(self):
        now = time.monotonic()
        if now >= self._next:
            self._next = now + 0.01
            self.publisher.publish(self.msg)


def _check_common(status, node, task):
    v = values(status)
    assert status.name == f'{node.get_name()}: {task}'
    assert status.hardware_id == 'ur5e' and v['robot'] == 'ur5e'
    assert all(key in v for key in COMMON_KEYS), sorted(v)
    assert v['joints'] == '6' and v['model source'] == 'robot_description parameter'
    assert all(isinstance(kv.value, str) and 'nan' not in kv.value.lower() for kv in status.values)


@pytest.mark.parametrize('kind', sorted(JOINT_STATE_NODES))
def test_joint_state_node(graph, diagnostics, ur5e_xml, ur5e_model, kind):
    node_class, task, stale_level, own_keys, parameters = JOINT_STATE_NODES[kind]
    node = graph.add(node_class, {'robot_description': ur5e_xml, 'diagnostics_period': FAST, **parameters})
    name = f'{node.get_name()}: {task}'
    # before any state: WARN, nothing received yet
    status = diagnostics.wait(name, lambda s: True)
    assert status.level == DiagnosticStatus.WARN and status.message == 'no joint states received yet'
    assert values(status)['input age (s)'] == 'n/a' and values(status)['inputs received'] == '0'

    # states flowing: OK, with the rate, the age and the compute time
    stream = StateStream(graph, ur5e_model)
    status = diagnostics.wait(name, lambda s: s.level == DiagnosticStatus.OK and float(
        values(s)['inputs received']) > 20, stream)
    _check_common(status, node, task)
    v = values(status)
    assert all(key in v for key in own_keys), sorted(v)
    assert v['input'] == '/joint_states'
    assert 20.0 < float(v['input rate (Hz)']) < 150.0
    assert 0.0 <= float(v['input age (s)']) < 0.3
    assert 0.0 < float(v['compute time median (ms)']) <= float(v['compute time p99 (ms)']) < 1000.0
    assert v['dropped (since start)'] == '0'
    if 'mode' in v:
        assert status.message == v['mode'] and v['mode'] in ('holding', 'enabled', 'tracking')
    if kind == 'external_torque_estimator':
        assert v['contact'] == 'false' and math.isfinite(float(v['external torque norm (N m)']))

    # a bad message: counted under its reason, WARN for the period it was dropped in
    bad = make_joint_state(UR5E_JOINTS, position=[math.nan] * 6, velocity=np.zeros(6))
    stream.publisher.publish(bad)
    status = diagnostics.wait(name, lambda s: values(s)['dropped (since start)'] != '0', stream)
    v = values(status)
    assert status.level == DiagnosticStatus.WARN and 'joint_states/nonfinite: 1' in status.message
    assert v['dropped joint_states/nonfinite (last period)'] == '1'
    assert v['dropped joint_states/nonfinite (since start)'] == '1'
    # the next period without drops: OK again, the count since start stays
    status = diagnostics.wait(name, level(DiagnosticStatus.OK), stream)
    assert values(status)['dropped joint_states/nonfinite (since start)'] == '1'
    assert values(status)['dropped joint_states/nonfinite (last period)'] == '0'

    # the input slower than diagnostics_min_rate: WARN
    for value, reason in ((-1.0, 'out of range'), (math.nan, 'out of range')):
        result = node.set_parameters([Parameter('diagnostics_min_rate', value=value)])[0]
        assert not result.successful and reason in result.reason, result.reason
    assert node.set_parameters([Parameter('diagnostics_min_rate', value=1000.0)])[0].successful
    diagnostics.wait(name, level(DiagnosticStatus.WARN, 'below diagnostics_min_rate 1000 Hz'), stream)
    assert node.set_parameters([Parameter('diagnostics_min_rate', value=0.0)])[0].successful
    diagnostics.wait(name, level(DiagnosticStatus.OK), stream)

    # the states stop: stale (a controller: ERROR, and once its watchdog has seen it, its mode)
    status = diagnostics.wait(name, lambda s: 'stale' in s.message
                              and values(s).get('mode', 'stale-hold') == 'stale-hold')
    assert status.level == stale_level
    assert float(values(status)['input age (s)']) > 0.3


def test_controller_mode_disabled(graph, diagnostics, ur5e_xml, ur5e_model):
    node = graph.add(TaskSpaceController, {'robot_description': ur5e_xml, 'diagnostics_period': FAST,
                                           'state_timeout': 0.3, 'tip_link': 'tool0', 'damping': 1e-4})
    name = f'{node.get_name()}: control'
    stream = StateStream(graph, ur5e_model)
    diagnostics.wait(name, lambda s: values(s)['mode'] == 'holding', stream)
    assert graph.call(SetBool, f'/{node.get_name()}/enable', SetBool.Request(data=False)).success
    status = diagnostics.wait(name, lambda s: values(s)['mode'] == 'disabled', stream)
    assert status.level == DiagnosticStatus.OK and status.message == 'disabled'
    assert values(status)['enabled'] == 'false'


def test_simulator(graph, diagnostics):
    node = graph.add(SimulatorNode, {'urdf_path': str(UR5E_URDF), 'diagnostics_period': FAST,
                                     'diagnostics_max_age': 0.3, 'publish_rate': 100.0,
                                     'lockstep_timeout': 0.0, 'initial_positions': Q.tolist()})
    name = f'{node.get_name()}: simulation'
    # still, waiting for the first command: WARN, none received yet
    status = diagnostics.wait(name, lambda s: True)
    v = values(status)
    assert status.level == DiagnosticStatus.WARN and status.message == 'no effort commands received yet'
    assert status.hardware_id == 'ur5e' and v['model source'] == f'urdf_path {UR5E_URDF}'
    assert v['state'] == 'still: waiting for an effort command' and v['simulated time (s)'] == '0.000'
    assert all(key in v for key in COMMON_KEYS + SIMULATOR_KEYS), sorted(v)

    publisher = graph.publisher(Float64MultiArray, '/effort_controller/commands')
    command = Float64MultiArray(data=[0.0] * 6)
    next_time = [0.0]

    def feed():
        if time.monotonic() >= next_time[0]:
            next_time[0] = time.monotonic() + 0.01
            publisher.publish(command)

    status = diagnostics.wait(name, lambda s: s.level == DiagnosticStatus.OK and float(
        values(s)['inputs received']) > 20, feed)
    v = values(status)
    assert status.message == 'running' and v['input'] == '/effort_controller/commands'
    assert 20.0 < float(v['input rate (Hz)']) < 150.0 and float(v['simulated time (s)']) > 0.0
    assert 0.0 < float(v['compute time median (ms)']) <= float(v['compute time p99 (ms)'])

    publisher.publish(Float64MultiArray(data=[0.0] * 3))        # the wrong size: dropped
    status = diagnostics.wait(name, lambda s: values(s)['dropped (since start)'] != '0', feed)
    assert status.level == DiagnosticStatus.WARN
    assert values(status)['dropped command/length (last period)'] == '1'
    diagnostics.wait(name, level(DiagnosticStatus.OK), feed)

    assert node.set_parameters([Parameter('diagnostics_min_rate', value=1000.0)])[0].successful
    diagnostics.wait(name, level(DiagnosticStatus.WARN, 'below diagnostics_min_rate'), feed)
    assert node.set_parameters([Parameter('diagnostics_min_rate', value=0.0)])[0].successful

    # the commands stop: WARN (stale); paused, no command is expected: OK
    status = diagnostics.wait(name, lambda s: 'stale' in s.message)
    assert status.level == DiagnosticStatus.WARN
    assert graph.call(SetBool, f'/{node.get_name()}/pause', SetBool.Request(data=True)).success
    status = diagnostics.wait(name, level(DiagnosticStatus.OK))
    assert status.message == 'paused' and values(status)['state'] == 'paused'


def test_every_node_without_a_model_is_an_error(graph, diagnostics, tmp_path):
    missing = str(tmp_path / 'no_such.urdf')
    nodes = {task: graph.add(node_class, {'urdf_path': missing, 'diagnostics_period': FAST})
             for node_class, task in ((DynamicsNode, 'dynamics'), (ExternalTorqueEstimator, 'estimation'),
                                      (ComputedTorqueController, 'control'), (SimulatorNode, 'simulation'))}
    for task, node in nodes.items():
        status = diagnostics.wait(f'{node.get_name()}: {task}', lambda s: True)
        assert status.level == DiagnosticStatus.ERROR and status.message == 'no robot model'
        v = values(status)
        assert status.hardware_id == '' and v['robot'] == '' and v['joints'] == '0'
        assert v['model source'] == f'urdf_path {missing}'


def test_about_once_a_second_and_period_zero_stops_it(graph, diagnostics, ur5e_xml):
    nodes = {task: graph.add(node_class, {'robot_description': ur5e_xml})
             for node_class, task in ((DynamicsNode, 'dynamics'), (ExternalTorqueEstimator, 'estimation'),
                                      (ComputedTorqueController, 'control'), (SimulatorNode, 'simulation'))}
    names = [f'{node.get_name()}: {task}' for task, node in nodes.items()]
    graph.spin(0.5)         # (a status due while the others started comes at once)
    start = len(diagnostics.statuses)
    graph.spin(3.2)
    for name in names:
        times = [t for t, s in diagnostics.statuses[start:] if s.name == name]
        assert len(times) in (3, 4), (name, len(times))
        assert all(0.6 < b - a < 1.5 for a, b in zip(times, times[1:])), (name, np.diff(times))
    node = nodes['dynamics']
    result = node.set_parameters([Parameter('diagnostics_period', value=0.01)])[0]
    assert not result.successful and 'no diagnostics' in result.reason
    assert node.set_parameters([Parameter('diagnostics_period', value=0.0)])[0].successful
    graph.spin(0.1)
    count = len(diagnostics.of(names[0]))
    graph.spin(1.3)
    assert len(diagnostics.of(names[0])) == count
