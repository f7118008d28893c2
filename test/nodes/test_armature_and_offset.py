"""The identified robot's armature and effort offset in the nodes over real DDS (model_source's
``armature`` and ``effort_offset``, as ``identify_robot`` finds them): the simulator plays an arm whose
effort sensors add an offset, the estimator that knows it sees no phantom torque, ``armature`` set at
run time changes the model (and a wrong one is refused, the node running on), values that do not fit
at start-up leave the node without a model until they do, and ``~/identify_payload`` takes the offset
out of the efforts."""

import json

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
from robot_dynamics_ros.nodes.conversions import make_joint_state, multiarray_to_matrix
from robot_dynamics_ros.nodes.dynamics_node import DynamicsNode
from robot_dynamics_ros.nodes.external_torque_estimator import ExternalTorqueEstimator
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode

from _node_harness import UR5E_HOME, UR5E_JOINTS

pytestmark = pytest.mark.ros

Q0 = np.array(UR5E_HOME) + np.array([0.2, 0.3, -0.4, 0.3, 0.2, 0.1])
# a real arm's numbers (rotor inertias through ~100:1 gears; offsets of a torque-sensing arm)
ARMATURE = [0.33, 0.22, 0.38, 0.34, 0.24, 0.44]            # kg m^2, UR5E_JOINTS order
OFFSET = np.array([0.5, 1.2, -0.6, 0.2, -1.2, 2.0])         # N m, UR5E_JOINTS order


def _by_name(msg, field='effort'):
    values = getattr(msg, field)
    return np.array([values[list(msg.name).index(j)] for j in UR5E_JOINTS])


def _t(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def _set(ros, node, **values):
    """Set parameters as `ros2 param set` does (the parameter service); the results."""
    request = SetParameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg()
                                                for k, v in values.items()])
    return ros.call(SetParameters, f'/{node.get_name()}/set_parameters', request).results


def test_the_simulator_publishes_the_applied_torque_plus_the_effort_offset(graph, ur5e_xml, ur5e_model):
    """Standing still (held as by brakes), the sensors read g(q0) + offset; holding the arm with g(q0)
    (the core's), the same while the arm stays where it is: the torque applied is g(q0), not more."""
    ros = graph
    sim = ros.add(SimulatorNode, {'robot_description': ur5e_xml, 'initial_positions': list(Q0),
                                  'publish_rate': 200.0, 'friction': False, 'publish_clock': True,
                                  'armature': ARMATURE, 'effort_offset': list(OFFSET)})
    states = ros.collect(JointState, '/joint_states')
    assert ros.spin_until(lambda: states, 10.0)
    g = rd.gravity_torques(ur5e_model, Q0)               # the armature adds nothing at rest
    np.testing.assert_allclose(_by_name(states[-1]), g + OFFSET, rtol=0, atol=1e-12)   # still
    np.testing.assert_array_equal(sim.model.armature, ARMATURE)
    commands = ros.publisher(Float64MultiArray, '/effort_controller/commands')
    commands.publish(Float64MultiArray(data=list(g)))
    assert ros.spin_until(lambda: len(states) > 5 and _t(states[-1]) > 0.2, 10.0)
    np.testing.assert_allclose(_by_name(states[-1]), g + OFFSET, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.tau, g, rtol=0, atol=1e-12)
    np.testing.assert_allclose(_by_name(states[-1], 'position'), Q0, atol=1e-9)     # held: at rest
    # at run time: a new offset shows in the next state; one of the wrong length is refused
    assert all(r.successful for r in _set(ros, sim, effort_offset=list(-OFFSET)))
    n = len(states)
    assert ros.spin_until(lambda: len(states) > n + 2, 5.0)
    np.testing.assert_allclose(_by_name(states[-1]), g - OFFSET, rtol=0, atol=1e-12)
    refused = _set(ros, sim, effort_offset=[1.0, 2.0])[0]
    assert not refused.successful and 'effort_offset' in refused.reason and '6 values' in refused.reason


def _move(q_from, q_to, seconds):
    """A rest-to-rest move (cubic, zero end velocities), then back."""
    msg = JointTrajectory(joint_names=list(UR5E_JOINTS))
    for t, q in ((seconds, q_to), (2 * seconds, q_from)):
        msg.points.append(JointTrajectoryPoint(
            positions=list(q), velocities=[0.0] * 6,
            time_from_start=Duration(sec=int(t), nanosec=int(round(t % 1 * 1e9)))))
    return msg


def test_the_estimator_with_the_sensors_offset_sees_no_phantom_torque(graph, ur5e_xml):
    """The simulated arm has rotors and offset sensors, nothing touches it. The estimator given both
    (one parameter set for every node) reads ~0 at rest and while the arm moves; without the offset it
    reads −offset, a phantom external torque; without the armature, a phantom while it accelerates."""
    ros = graph
    identified = {'armature': ARMATURE, 'effort_offset': list(OFFSET)}
    common = {'robot_description': ur5e_xml, 'tip_link': 'tool0', 'use_sim_time': True}
    ctrl = ros.add(ComputedTorqueController, {**common, **identified, 'kp': [400.0], 'kd': [40.0],
                                              'state_timeout': 0.5})
    ros.add(SimulatorNode, {**common, **identified, 'use_sim_time': False, 'initial_positions': list(Q0),
                            'publish_rate': 500.0, 'friction': False, 'publish_clock': True,
                            'lockstep_timeout': 2.0})
    knows = ros.add(ExternalTorqueEstimator, {**common, **identified})
    no_offset = ros.add(ExternalTorqueEstimator, {**common, 'armature': ARMATURE})
    no_armature = ros.add(ExternalTorqueEstimator, {**common, 'effort_offset': list(OFFSET)})
    torques = {node: ros.collect(JointState, f'/{node.get_name()}/external_torques', qos=1000)
               for node in (knows, no_offset, no_armature)}
    assert ros.spin_until(lambda: all(len(m) > 100 for m in torques.values()), 30.0), 'no estimates'
    # at rest, held by the controller
    assert np.abs(_by_name(torques[knows][-1])).max() < 0.02
    np.testing.assert_allclose(_by_name(torques[no_offset][-1]), -OFFSET, atol=0.02)
    assert np.abs(_by_name(torques[no_armature][-1])).max() < 0.02
    # moving: 0.4 rad on every joint in 0.6 s and back
    start = _t(torques[knows][-1])
    ros.publisher(JointTrajectory, f'/{ctrl.get_name()}/joint_trajectory').publish(
        _move(Q0, Q0 + 0.4, 0.6))
    assert ros.spin_until(lambda: all(_t(m[-1]) > start + 1.4 for m in torques.values()), 30.0)

    def worst(node):
        moving = [_by_name(m) for m in torques[node] if _t(m) > start]
        return np.abs(np.array(moving)).max(axis=0)
    print(f'\nmax |external torque| while moving, with the model: {worst(knows).max():.3g} N m; '
          f'without the armature: {worst(no_armature).max():.3g} N m')
    assert worst(knows).max() < 0.1, worst(knows)
    assert worst(no_armature).max() > 10 * worst(knows).max(), worst(no_armature)


def test_armature_at_run_time_changes_the_model_and_a_wrong_one_is_refused(graph, ur5e_xml, ur5e_model):
    """dynamics_node in another joint order: the armature, given in that order, is the diagonal
    ~/mass_matrix gains; wrong values are refused with the reason and the node publishes on."""
    ros = graph
    order = list(reversed(UR5E_JOINTS))
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml, 'joints': order,
                                  'publish_task_space_inertia': False})
    masses = ros.collect(Float64MultiArray, f'/{node.get_name()}/mass_matrix')
    states = ros.publisher(JointState, '/joint_states')
    k = 0

    def mass_matrix():
        nonlocal k
        n = len(masses)
        k += 1
        states.publish(make_joint_state(UR5E_JOINTS, stamp=Time(sec=k), position=Q0, velocity=np.zeros(6)))
        assert ros.spin_until(lambda: len(masses) > n, 5.0), 'no ~/mass_matrix'
        return multiarray_to_matrix(masses[-1])

    M0 = mass_matrix()
    armature = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]          # in the node's joint order
    assert all(r.successful for r in _set(ros, node, armature=armature))
    np.testing.assert_allclose(mass_matrix() - M0, np.diag(armature), rtol=0, atol=1e-12)
    for value, words in (([0.1] * 5, '6 values'), ([0.1] * 5 + [-0.1], '>= 0'),
                         ([0.1] * 5 + [float('nan')], 'finite'), (['x'], 'numbers')):
        result = _set(ros, node, armature=value)[0]
        assert not result.successful and 'armature' in result.reason and words in result.reason, result
    result = _set(ros, node, effort_offset=[1.0] * 7)[0]
    assert not result.successful and 'effort_offset' in result.reason and '6 values' in result.reason
    np.testing.assert_allclose(mass_matrix() - M0, np.diag(armature), rtol=0, atol=1e-12)   # still on
    # [] = the model's own (the URDF's: none)
    assert all(r.successful for r in _set(ros, node, armature=[]))
    np.testing.assert_allclose(mass_matrix(), M0, rtol=0, atol=1e-12)


def test_values_that_do_not_fit_at_start_up_mean_no_model_until_they_do(graph, ur5e_xml):
    ros = graph
    node = ros.add(DynamicsNode, {'robot_description': ur5e_xml, 'armature': [0.1, 0.2],
                                  'publish_task_space_inertia': False})
    assert node.model is None
    assert ros.spin_until(lambda: ros.warnings(node.get_name(), "parameter 'armature' must have 6 values"),
                          3.0), [m.msg for m in ros.logs]
    assert ros.logged(node.get_name(), 'running without a robot model')
    masses = ros.collect(Float64MultiArray, f'/{node.get_name()}/mass_matrix')
    assert all(r.successful for r in _set(ros, node, armature=ARMATURE))
    assert node.model is not None
    np.testing.assert_array_equal(node.model.armature, ARMATURE)
    states = ros.publisher(JointState, '/joint_states')
    states.publish(make_joint_state(UR5E_JOINTS, position=Q0, velocity=np.zeros(6)))
    assert ros.spin_until(lambda: masses, 5.0)


def _exciting_states(carried, seconds, rate):
    """(t, q, qd, joint torque) of a motion that excites a payload, at ``rate`` Hz."""
    rng = np.random.default_rng(1)
    w = 2 * np.pi * np.array([0.3, 0.55, 0.8])[:, None]
    A, phase = rng.uniform(-0.3, 0.3, (3, 6)), rng.uniform(0, 6, (3, 6))
    for t in np.arange(0.0, seconds, 1.0 / rate):
        angle = w * t + phase
        q, qd, qdd = (Q0 + (A * np.sin(angle)).sum(0), (A * w * np.cos(angle)).sum(0),
                      (-A * w ** 2 * np.sin(angle)).sum(0))
        yield t, q, qd, rd.inverse_dynamics(carried, q, qd, qdd)


MASS, COM = 1.5, [0.0, 0.02, 0.06]


def test_identify_payload_takes_the_offset_out_of_the_efforts(graph, ur5e_xml):
    """Joint states of an arm carrying 1.5 kg whose sensors add OFFSET: the dynamics node given the
    offset finds the payload; the one without it does not."""
    ros = graph
    common = {'robot_description': ur5e_xml, 'tip_link': 'tool0', 'publish_task_space_inertia': False,
              'publish_mass_matrix': False, 'publish_coriolis': False}
    knows = ros.add(DynamicsNode, {**common, 'effort_offset': list(OFFSET)})
    ignores = ros.add(DynamicsNode, common)
    gravity = ros.collect(JointState, f'/{knows.get_name()}/gravity_torques', qos=1000)
    model = rd.load_urdf(ur5e_xml, tip_link='tool0')
    carried = rd.with_payload(model, MASS, COM, np.diag([0.004, 0.004, 0.002]), frame='tool0')
    states = ros.publisher(JointState, '/joint_states', wait_for=2)
    for t, q, qd, tau in _exciting_states(carried, 8.0, 100.0):
        stamp = Time(sec=1 + int(t), nanosec=int(round(t % 1 * 1e9)))
        states.publish(make_joint_state(UR5E_JOINTS, stamp=stamp, position=q, velocity=qd,
                                        effort=tau + OFFSET))
        ros.spin(0.001)
    assert ros.spin_until(lambda: len(gravity) > 700, 10.0), len(gravity)

    def identify(node):
        answer = ros.call(Trigger, f'/{node.get_name()}/identify_payload', Trigger.Request())
        return json.loads(answer.message)
    found, fooled = identify(knows), identify(ignores)
    print(f'\nidentified with the offset: {found}\nwithout: {fooled}')
    assert abs(found['mass'] - MASS) < 0.02 * MASS, found
    assert np.abs(np.array(found['com']) - COM).max() < 0.005, found
    assert fooled['residual_rms'] > 100 * found['residual_rms'], (fooled, found)
