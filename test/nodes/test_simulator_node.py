"""simulator_node over real DDS: the published states are the core's integrator steps, commands,
external wrenches, joint stops, pause/reset, /clock and /robot_description.

The tests that take the ``engine`` fixture run on both engines, the rigid-body one and MuJoCo's
(``engine:=mujoco``, compiled from the same URDF): with the friction off (MuJoCo's friction loss is not
the package's Coulomb model) and away from the joint limits the MuJoCo engine's states equal the core's
integrator steps, and pause, reset, timeouts and lock-step behave the same. The MuJoCo engine's own
tests (worlds, contacts, bad files) are in test_simulator_mujoco.py."""

import math
import time
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.limits import enforce_position_limits, saturate_effort
from robot_dynamics_ros.nodes.common import LATCHED_QOS
from robot_dynamics_ros.nodes.conversions import wrench_vector
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode

from _node_harness import PANDA_URDF, UR5E_HOME, UR5E_JOINTS, UR5E_URDF

pytestmark = pytest.mark.ros

DT = 0.001
PENDULUM = (Path(__file__).resolve().parents[1] / "data" / "pendulum.urdf").read_text()


def _t(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def _replay(model, q, qd, steps, tau=None, f_tip=None, method='rk4_step', friction=True):
    """The simulator's loop, offline: integrator step + joint stops, ``steps`` times."""
    tau = np.zeros(model.nq) if tau is None else saturate_effort(model, tau)[0]
    step = getattr(rd, method)
    for _ in range(steps):
        q, qd = step(model, q, qd, tau, DT, f_tip=f_tip,
                     frame=None if f_tip is None else model.tip_frame,
                     friction=True if friction else None)
        q, qd = enforce_position_limits(model, q, qd)
    return q, qd


@pytest.fixture(params=['rigid_body', 'mujoco'])
def engine(request):
    """The simulator's engine (parameter ``engine``)."""
    return request.param


def _sim(ros, engine='rigid_body', **parameters):
    """A simulator of the UR5e; it integrates from the start (wait_for_command false) unless the
    test asks otherwise: most tests here watch the arm move without a controller. On MuJoCo the
    friction is off unless asked for."""
    params = {'urdf_path': str(UR5E_URDF), 'publish_clock': True, 'dt': DT,
              'initial_positions': list(UR5E_HOME), 'publish_rate': 100.0,
              'wait_for_command': False, 'engine': engine, 'friction': engine == 'rigid_body'}
    params.update(parameters)
    node = ros.add(SimulatorNode, params)
    states = ros.collect(JointState, '/joint_states')
    return node, states


@pytest.mark.parametrize('engine, friction', [('rigid_body', True), ('rigid_body', False),
                                              ('mujoco', False)])
def test_states_are_the_core_integrator_steps(graph, ur5e_model, engine, friction):
    ros = graph
    node, states = _sim(ros, engine, friction=friction)
    assert ros.spin_until(lambda: len(states) >= 40, 5.0), len(states)
    assert not ros.warnings(node.get_name(), 'integration step failed'), ros.warnings(
        node.get_name())
    q0 = np.array(UR5E_HOME)
    for msg in (states[0], states[9], states[39]):
        assert tuple(msg.name) == UR5E_JOINTS
        steps = round(_t(msg) / DT)
        q, qd = _replay(ur5e_model, q0, np.zeros(6), steps, friction=friction)
        np.testing.assert_allclose(msg.position, q, atol=1e-9, err_msg=f'step {steps}')
        np.testing.assert_allclose(msg.velocity, qd, atol=1e-9)
        assert list(msg.effort) == [0.0] * 6
    # publish_rate 100 Hz of simulated time: 10 ms between stamps.
    np.testing.assert_allclose(np.diff([_t(m) for m in states[:40]]), 0.01, atol=1.5e-3)


def test_rate_clock_and_robot_description(graph, ur5e_xml):
    ros = graph
    start = time.monotonic()
    node, states = _sim(ros, publish_rate=50.0)
    clock = ros.collect(Clock, '/clock')
    ros.spin(1.0)
    assert ros.spin_until(lambda: states, 5.0)
    wall = time.monotonic() - start
    t_end = _t(states[-1])
    # real_time_factor 1: simulated time never runs ahead of the wall clock (a busy machine can
    # only slow it down; the pacing itself is tested with a fake clock in test/logic), and 50
    # states per simulated second.
    assert 0.0 < t_end <= wall, (t_end, wall)
    assert abs(len(states) - 50 * t_end) <= 3, (t_end, len(states))
    assert clock and clock[-1].clock.sec + clock[-1].clock.nanosec * 1e-9 >= t_end
    # /robot_description is transient local: a late subscriber gets the simulator's URDF.
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
    descriptions = ros.collect(String, '/robot_description', qos)
    assert ros.spin_until(lambda: descriptions, 5.0)
    assert descriptions[-1].data == ur5e_xml
    # Parameter validation.
    bad = node.set_parameters([Parameter('integrator', value='verlet')])[0]
    assert not bad.successful and 'integrator' in bad.reason
    bad = node.set_parameters([Parameter('initial_positions', value=[0.0, 1.0])])[0]
    assert not bad.successful and '0 or 6' in bad.reason
    ok = node.set_parameters([Parameter('integrator', value='semi_implicit_euler')])[0]
    assert ok.successful


def test_commands_saturation_timeout_and_bad_commands(graph, ur5e_model, engine):
    ros = graph
    node, states = _sim(ros, engine, command_timeout=0.2)
    name = node.get_name()
    commands = ros.publisher(Float64MultiArray, '/effort_controller/commands')
    tau = np.array([10.0, 500.0, -500.0, 1.0, -2.0, 3.0])  # two joints above their 150 N·m limit
    commands.publish(Float64MultiArray(data=list(tau)))
    assert ros.spin_until(lambda: states and np.any(states[-1].effort), 2.0)
    np.testing.assert_allclose(states[-1].effort, saturate_effort(ur5e_model, tau)[0])
    assert max(abs(e) for e in states[-1].effort) == 150.0
    # Wrong size and NaN: dropped with a warning, the last good command stays in force.
    commands.publish(Float64MultiArray(data=[1.0, 2.0]))
    commands.publish(Float64MultiArray(data=[math.nan] * 6))
    assert ros.spin_until(lambda: ros.warnings(name, 'expected 6 values, got 2')
                          and ros.warnings(name, 'not finite'), 2.0)
    np.testing.assert_allclose(states[-1].effort, saturate_effort(ur5e_model, tau)[0])
    # No command for command_timeout: zero effort.
    assert ros.spin_until(lambda: not np.any(states[-1].effort), 2.0)
    assert ros.logged(name, 'applying zero effort')
    assert all(math.isfinite(v) for m in states for v in (*m.position, *m.velocity, *m.effort))


def test_pause_publishes_nothing_and_resumes_from_the_same_state(graph, ur5e_model, engine):
    """Paused: no /joint_states and no /clock for 1 s (nothing downstream computes on a frozen
    state); resumed: the states go on from the frozen one, as if there had been no pause."""
    ros = graph
    node, states = _sim(ros, engine, friction=False)
    clock = ros.collect(Clock, '/clock')
    name = node.get_name()
    ros.spin_until(lambda: len(states) > 20)
    assert ros.call(SetBool, f'/{name}/pause', SetBool.Request(data=True)).success
    ros.spin(0.1)       # what was published before the answer arrives
    n, n_clock = len(states), len(clock)
    frozen = states[-1]
    ros.spin(1.0)
    assert len(states) == n, f'{len(states) - n} joint states while paused'
    assert len(clock) == n_clock, f'{len(clock) - n_clock} /clock messages while paused'
    assert ros.call(SetBool, f'/{name}/pause', SetBool.Request(data=False)).success
    assert ros.spin_until(lambda: len(states) > n + 10, 5.0)
    msg = states[n + 10]
    q, qd = _replay(ur5e_model, np.array(frozen.position), np.array(frozen.velocity),
                    round((_t(msg) - _t(frozen)) / DT), friction=False)
    np.testing.assert_allclose(msg.position, q, atol=1e-9)
    np.testing.assert_allclose(msg.velocity, qd, atol=1e-9)
    assert _t(states[n]) == pytest.approx(_t(frozen) + 0.01, abs=1.5e-3), 'simulated time jumped'


def test_reset_and_external_wrench(graph, ur5e_model, engine):
    """On MuJoCo the wrench acts through ``xfrc_applied``, fixed in the world during each step at the
    tip's mid-step orientation (the core's f_tip turns with the tip within the step): second order in
    dt, 4e-5 rad and 2e-3 rad/s here after 60 ms with the wrists spinning at 6 rad/s (the core's
    RK4: 3e-11)."""
    ros = graph
    node, states = _sim(ros, engine)
    friction, atol, atol_velocity = (True, 1e-9, 1e-9) if engine == 'rigid_body' else (False, 2e-4, 5e-3)
    name = node.get_name()
    q0 = np.array(UR5E_HOME)
    ros.spin_until(lambda: len(states) > 20)
    assert ros.call(SetBool, f'/{name}/pause', SetBool.Request(data=True)).success
    ros.spin(0.1)
    t_paused = _t(states[-1])
    assert np.max(np.abs(np.array(states[-1].position) - q0)) > 1e-3, 'the arm did not fall'
    # Reset while paused: back to the initial state, simulated time unchanged; nothing is
    # published until it resumes.
    n = len(states)
    assert ros.call(Trigger, f'/{name}/reset', Trigger.Request()).success
    np.testing.assert_array_equal(node.q, q0)       # (the UR5e's joint order is model order)
    # The simulation may have stepped past its last publication before the pause arrived (by less
    # than one publication period, 10 ms); reset leaves the simulated time where it was.
    t_reset = node.steps * DT
    assert t_paused - 1e-9 <= t_reset < t_paused + 0.01
    ros.spin(0.2)
    assert len(states) == n, 'published while paused'

    # An external wrench in a wrong frame is dropped; one at the tip is applied as -F_tip.
    wrench_pub = ros.publisher(WrenchStamped, f'/{name}/external_wrench')
    wrong = WrenchStamped()
    wrong.header.frame_id = 'base_link'
    wrong.wrench.force.x = 100.0
    wrench_pub.publish(wrong)
    assert ros.spin_until(lambda: ros.warnings(name, "frame 'base_link'"), 2.0)
    huge = WrenchStamped()
    huge.wrench.force.z = 1e300                 # finite, but the integration would diverge
    wrench_pub.publish(huge)
    assert ros.spin_until(lambda: ros.warnings(name, 'component beyond'), 2.0)
    w = WrenchStamped()
    w.header.frame_id = ur5e_model.tip_frame
    w.wrench.force.x, w.wrench.force.y, w.wrench.force.z = 20.0, -10.0, 30.0
    # (a moment about the tip's z of 0.02 N m: the last wrist, 2.6e-4 kg m², stays clear of its
    # limits, hard stops in the rigid-body engine and soft constraints in MuJoCo)
    w.wrench.torque.x, w.wrench.torque.z = 1.0, -0.02
    wrench_pub.publish(w)
    ros.spin(0.1)
    # ~/applied_wrench (latched: this late subscriber gets it): the wrench in force, in the tip frame,
    # from the simulated time it arrived at (paused there), once it has acted on a published state
    applied = ros.collect(WrenchStamped, f'/{name}/applied_wrench', LATCHED_QOS)
    n = len(states)
    assert ros.call(SetBool, f'/{name}/pause', SetBool.Request(data=False)).success
    assert ros.spin_until(lambda: len(states) > n + 10 and _t(states[-1]) > t_reset + 0.05)
    msg = next(m for m in states[n:] if _t(m) > t_reset + 0.05)
    f_tip = -np.array([1.0, 0.0, -0.02, 20.0, -10.0, 30.0])  # on the environment = -(m, f)
    assert applied, 'no ~/applied_wrench'
    np.testing.assert_array_equal(wrench_vector(applied[-1].wrench), -f_tip)
    assert _t(applied[-1]) == pytest.approx(t_reset, abs=1e-9)
    assert applied[-1].header.frame_id == ur5e_model.tip_frame
    q, qd = _replay(ur5e_model, q0, np.zeros(6), round((_t(msg) - t_reset) / DT), f_tip=f_tip,
                    friction=friction)
    np.testing.assert_allclose(msg.position, q, atol=atol)
    np.testing.assert_allclose(msg.velocity, qd, atol=atol_velocity)
    q_no_wrench, _ = _replay(ur5e_model, q0, np.zeros(6), round((_t(msg) - t_reset) / DT),
                             friction=friction)
    assert np.max(np.abs(q_no_wrench - q)) > 1e-4, 'the wrench made no difference'


def test_joint_stops(graph):
    ros = graph
    node = ros.add(SimulatorNode, {'robot_description': PENDULUM, 'publish_clock': True,
                                   'initial_positions': [0.0], 'friction': False,
                                   'wait_for_command': False})
    states = ros.collect(JointState, '/joint_states')
    # Gravity swings the arm to its upper stop (0.5 rad) in about 0.5 s; it must stay there.
    assert ros.spin_until(lambda: states and states[-1].position[0] == 0.5, 5.0)
    ros.spin(0.3)
    assert max(m.position[0] for m in states) == 0.5
    assert states[-1].velocity[0] == 0.0
    assert node.get_name().startswith('simulator_node')


@pytest.mark.parametrize('timeout', [0.0, 60.0])
def test_lockstep_timeout_bounds_the_wait_for_the_answer(graph, timeout, engine):
    """real_time_factor 0 with a command publisher present: after each state the simulator waits
    (at most lockstep_timeout of wall time) for the command answering it. One command, then
    silence: with 60 s it holds still after the state that applies it; with 0 it never waits
    and simulated time runs on."""
    ros = graph
    node, states = _sim(ros, engine, real_time_factor=0.0, lockstep_timeout=timeout)
    commands = ros.publisher(Float64MultiArray, '/effort_controller/commands')
    commands.publish(Float64MultiArray(data=[0.1] * 6))
    assert ros.spin_until(lambda: any(m.effort[0] == 0.1 for m in states), 5.0), \
        'no state applying the command'
    steps = node.steps
    ros.spin(0.5)
    if timeout > 0.0:
        assert node.steps == steps, f'{node.steps - steps} steps without an answer'
    else:
        assert node.steps > steps, 'the simulation waited with lockstep_timeout 0'


def test_as_fast_as_possible(graph):
    """real_time_factor 0: stepping is bounded by the CPU only (no timer period, no simulated time
    owed or dropped), states still every 10 ms of simulated time. How fast it runs is measured
    by the benchmarks; that a tick steps for FAST_BUDGET of wall time, with a fake clock, in
    test/logic/test_simulation.py."""
    ros = graph
    node, states = _sim(ros, real_time_factor=0.0, publish_rate=100.0)
    assert ros.spin_until(lambda: len(states) >= 20, 10.0)
    assert node.sim.tick_period() == 0.0 and node._timer.timer_period_ns == 0
    assert node.sim.dropped == 0.0
    assert not ros.warnings(node.get_name(), 'slower than real_time_factor')
    np.testing.assert_allclose(np.diff([_t(m) for m in states]), 0.01, atol=1.5e-3)


def test_a_new_publish_rate_takes_effect_at_once(graph):
    """publish_rate 0.1 Hz, then back to 100 Hz: /joint_states resumed only ~10 s later (the
    next publication time set by the slow rate was kept)."""
    ros = graph
    node, states = _sim(ros)
    assert ros.spin_until(lambda: len(states) > 5, 5.0)
    assert node.set_parameters([Parameter('publish_rate', value=0.1)])[0].successful
    ros.spin(0.3)
    n = len(states)
    assert node.set_parameters([Parameter('publish_rate', value=100.0)])[0].successful
    assert ros.spin_until(lambda: len(states) > n + 10, 2.0), 'no states after the rate change'


def test_numeric_parameters_at_their_extremes_keep_it_running(graph):
    """Every numeric parameter at the ends of its declared range (and a tiny positive value where
    0 is allowed): the timer derived from them never overflows, states keep coming, and values
    outside the range are refused."""
    ros = graph
    node, states = _sim(ros)
    for name, values in (('publish_rate', (0.1, 10000.0, 100.0)),
                         ('real_time_factor', (1e-300, 1000.0, 0.0, 1.0)),
                         ('command_timeout', (1e-6, 1e300, 0.5)),
                         ('external_wrench_timeout', (1e-300, 1e300, 0.0)),
                         ('lockstep_timeout', (1e-300, 60.0, 0.05))):
        for value in values:
            result = node.set_parameters([Parameter(name, value=value)])[0]
            assert result.successful, (name, value, result.reason)
            ros.spin(0.05)
    n = len(states)
    assert ros.spin_until(lambda: len(states) > n + 5, 5.0), 'no states after the changes'
    for name, value in (('publish_rate', 0.01), ('publish_rate', 1e-300), ('real_time_factor', 1e4),
                        ('command_timeout', 0.0), ('lockstep_timeout', math.inf),
                        ('initial_positions', [1e300] * 6)):
        assert not node.set_parameters([Parameter(name, value=value)])[0].successful, (name, value)
    assert all(math.isfinite(v) for m in states for v in (*m.position, *m.velocity, *m.effort))


def test_still_until_the_first_command_and_after_reset(graph, ur5e_model, engine):
    """wait_for_command (the default): no integration until an effort command arrives; the
    initial state is published meanwhile (publish_rate per wall second, one stamp), exactly
    initial_positions at rest, with the effort g(q0) that holds it there (as brakes would). ~/reset
    makes it still again until the next command."""
    ros = graph
    q0 = np.array([0.0, -1.0, 1.0, -1.0, -1.0, 0.0])
    g0 = rd.gravity_torques(ur5e_model, q0)
    node, states = _sim(ros, engine, wait_for_command=True, initial_positions=list(q0))
    clock = ros.collect(Clock, '/clock')
    name = node.get_name()
    assert ros.spin_until(lambda: len(states) >= 20, 5.0)
    ros.spin(0.3)
    assert node.steps == 0 and node.sim.still
    for m in states:
        assert list(m.position) == list(q0) and list(m.velocity) == [0.0] * 6
        np.testing.assert_allclose(m.effort, g0, atol=1e-12)      # (MuJoCo's g(q): to 1e-15)
        assert _t(m) == 0.0
    assert all(c.clock.sec == 0 and c.clock.nanosec == 0 for c in clock)
    # The first command sets it going.
    commands = ros.publisher(Float64MultiArray, '/effort_controller/commands')
    g = Float64MultiArray(data=list(rd.gravity_torques(ur5e_model, q0)))
    commands.publish(g)
    assert ros.spin_until(lambda: _t(states[-1]) > 0.05, 5.0), 'no integration after a command'
    assert not node.sim.still
    # Reset: still again, at the initial state; the next command sets it going again.
    assert ros.call(Trigger, f'/{name}/reset', Trigger.Request()).success
    ros.spin(0.1)
    n, t_reset = len(states), _t(states[-1])
    ros.spin(0.3)
    assert len(states) > n + 10 and all(list(m.position) == list(q0) and _t(m) == t_reset
                                        for m in states[n:])
    commands.publish(g)
    assert ros.spin_until(lambda: _t(states[-1]) > t_reset + 0.05, 5.0)


def test_a_payload_set_while_still_is_in_the_efforts_at_once(graph, ur5e_model, engine):
    """Still, nothing steps: a payload attached then is in the efforts published at once (the torque
    that holds the arm carrying it, g(q0) with the payload), not from the next command or reset on."""
    ros = graph
    q0 = np.array([0.0, -1.0, 1.0, -1.0, -1.0, 0.0])
    node, states = _sim(ros, engine, wait_for_command=True, initial_positions=list(q0))
    assert ros.spin_until(lambda: len(states) >= 5, 5.0)
    np.testing.assert_allclose(states[-1].effort, rd.gravity_torques(ur5e_model, q0), atol=1e-12)
    payload = {'mass': 2.0, 'com': [0.0, 0.0, 0.05], 'frame': 'tool0'}
    g_carried = rd.gravity_torques(rd.with_payload(ur5e_model, **payload), q0)
    assert np.abs(g_carried - rd.gravity_torques(ur5e_model, q0)).max() > 1.0
    node.set_parameters([Parameter('payload_mass', value=payload['mass']),
                         Parameter('payload_com', value=payload['com']),
                         Parameter('payload_frame', value=payload['frame'])])
    n = len(states)
    assert ros.spin_until(lambda: len(states) > n + 3 and np.allclose(states[-1].effort, g_carried,
                                                                       atol=1e-9), 5.0), \
        (states[-1].effort, g_carried, ros.warnings(node.get_name()))
    assert node.steps == 0 and node.sim.still


def test_a_tree_without_tip_link_drops_external_wrenches(graph):
    """The full Panda (two fingers: two tips) without tip_link: no tip frame to apply a wrench
    at; warned once at start-up, naming the tips, and every wrench is dropped with a warning."""
    ros = graph
    node = ros.add(SimulatorNode, {'urdf_path': str(PANDA_URDF)})
    name = node.get_name()
    assert ros.spin_until(lambda: ros.warnings(name, 'tip_link'), 5.0)
    warning = ros.warnings(name, 'tip_link')[0]
    assert "2 tips ['panda_leftfinger', 'panda_rightfinger']" in warning, warning
    wrench = WrenchStamped()
    wrench.wrench.force.z = 10.0
    ros.publisher(WrenchStamped, f'/{name}/external_wrench').publish(wrench)
    assert ros.spin_until(lambda: ros.warnings(name, 'dropping an external wrench'), 5.0)
    assert node.sim.forces.f_tip(node.sim.steps, 0.0) is None
    assert len(ros.warnings(name, 'External wrenches are dropped until then')) == 1
    # With tip_link the chain to it is the model, and wrenches are applied there.
    ros.remove_all()
    ros.logs.clear()
    node = ros.add(SimulatorNode, {'urdf_path': str(PANDA_URDF), 'tip_link': 'panda_hand_tcp'})
    ros.publisher(WrenchStamped, f'/{node.get_name()}/external_wrench').publish(wrench)
    assert ros.spin_until(lambda: node.sim.forces.f_tip(node.sim.steps, 0.0) is not None, 5.0)
    assert not ros.warnings(node.get_name(), 'tip_link')
