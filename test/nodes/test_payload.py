"""Payloads in the nodes over real DDS: every node takes payload_mass/com/inertia/frame at run time
(checked, refused with a reason, the model rebuilt with dynamics.with_payload and used from the next
message on, the node's state kept); dynamics_node's ~/identify_payload estimates a payload the
simulator carries from the joint states of a closed-loop motion and applies it."""

import json

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
from robot_dynamics_ros.nodes.dynamics_node import DynamicsNode
from robot_dynamics_ros.nodes.external_torque_estimator import ExternalTorqueEstimator
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode
from robot_dynamics_ros.nodes.task_space_controller import TaskSpaceController

from _node_harness import UR5E_HOME, UR5E_JOINTS

pytestmark = pytest.mark.ros

Q0 = np.array(UR5E_HOME)
MASS, COM, INERTIA = 2.0, [0.01, -0.02, 0.08], [0.010, 0.0, 0.0, 0.012, 0.0, 0.008]
NODES = (DynamicsNode, ComputedTorqueController, SimulatorNode, ExternalTorqueEstimator, TaskSpaceController)


def _payload(mass=MASS, com=COM, inertia=INERTIA, frame='tool0'):
    return [Parameter('payload_mass', value=mass), Parameter('payload_com', value=com),
            Parameter('payload_inertia', value=inertia), Parameter('payload_frame', value=frame)]


def _carried(model, mass=MASS, com=COM, inertia=INERTIA):
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    return rd.with_payload(model, mass, com, np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]),
                           frame='tool0')


@pytest.mark.parametrize('node_class', NODES, ids=lambda c: c.__name__)
def test_every_node_takes_a_payload_at_run_time_and_refuses_impossible_ones(graph, ur5e_xml, node_class):
    ros = graph
    node = ros.add(node_class, {'robot_description': ur5e_xml, 'tip_link': 'tool0'})
    base = node.model
    q = Q0 + 0.3
    # as a user would: through the parameter service (what `ros2 param set` calls)
    client = ros.probe.create_client(SetParameters, f'/{node.get_name()}/set_parameters')
    assert ros.spin_until(client.service_is_ready, 10.0)
    future = client.call_async(SetParameters.Request(parameters=[p.to_parameter_msg() for p in _payload()]))
    assert ros.spin_until(future.done, 5.0)
    assert all(r.successful for r in future.result().results), future.result()
    expected = rd.gravity_torques(_carried(base), q)
    np.testing.assert_allclose(rd.gravity_torques(node.model, q), expected, rtol=0, atol=1e-12)
    assert np.abs(expected - rd.gravity_torques(base, q)).max() > 1.0     # 2 kg shows
    # refused, with the reason; the model stays the one with the payload
    for name, value, words in (('payload_mass', -1.0, 'payload_mass'),
                               ('payload_com', [0.0, 0.1], 'payload_com'),
                               ('payload_inertia', [-1.0, 0.0, 0.0, 1.0, 0.0, 1.0], 'inertia'),
                               ('payload_inertia', [0.01, 0.0, 0.0, 0.01, 0.0, 0.05], 'triangle'),
                               ('payload_frame', 'nowhere', 'nowhere'),
                               ('payload_frame', 'base_link', 'on the base')):
        result = node.set_parameters([Parameter(name, value=value)])[0]
        assert not result.successful and words in result.reason, (name, result.reason)
    np.testing.assert_allclose(rd.gravity_torques(node.model, q), expected, rtol=0, atol=1e-12)
    # an integer mass is a mass; 0 removes the payload: the model without it again
    assert node.set_parameters([Parameter('payload_mass', value=1)])[0].successful
    assert node.set_parameters([Parameter('payload_mass', value=0.0)])[0].successful
    np.testing.assert_array_equal(rd.gravity_torques(node.model, q), rd.gravity_torques(base, q))


def test_the_simulator_keeps_its_state_and_the_dynamics_node_its_outputs_in_step(graph, ur5e_xml):
    """A payload set on the simulator mid-run changes what it integrates, not where the arm is; the
    dynamics node's g(q) is the carried model's from the next state on."""
    ros = graph
    sim = ros.add(SimulatorNode, {'robot_description': ur5e_xml, 'initial_positions': list(Q0),
                                  'wait_for_command': False, 'publish_rate': 200.0})
    dyn = ros.add(DynamicsNode, {'robot_description': ur5e_xml, 'tip_link': 'tool0',
                                 'publish_task_space_inertia': False})
    gravity = ros.collect(JointState, f'/{dyn.get_name()}/gravity_torques')
    states = ros.collect(JointState, '/joint_states')
    assert ros.spin_until(lambda: len(gravity) > 5, 10.0)
    steps = sim.steps
    assert dyn.set_parameters(_payload())[0].successful
    assert sim.set_parameters(_payload())[0].successful
    assert sim.steps >= steps and sim.steps > 0 and np.isfinite(sim.q).all()     # no reset: time runs on
    n = len(gravity)
    assert ros.spin_until(lambda: len(gravity) > n + 3, 5.0)
    last, state = gravity[-1], states[-1]
    q = np.array([state.position[list(state.name).index(j)] for j in UR5E_JOINTS])
    # the message matching that state: same stamp
    match = [m for m in gravity if m.header.stamp == state.header.stamp]
    if match:
        last = match[-1]
    np.testing.assert_allclose(np.array(last.effort), rd.gravity_torques(_carried(dyn._source.base_model), q),
                               rtol=0, atol=1e-9)


def _duration(t):
    return Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))


def _exciting_reference(q_start, duration=6.0, step=0.1):
    """q(t) = q_start + Σ_k A_k (1 − cos(ω_k t)) per joint (three frequencies, 0.35-0.9 Hz), knots every
    ``step`` s with exact velocities and accelerations; starts at rest."""
    rng = np.random.default_rng(3)
    w = 2 * np.pi * np.array([0.35, 0.6, 0.9])[:, None]
    A = rng.uniform(0.08, 0.18, (3, 6)) * rng.choice([-1.0, 1.0], (3, 6))
    msg = JointTrajectory(joint_names=list(UR5E_JOINTS))
    for t in np.arange(0.0, duration + 1e-9, step):
        msg.points.append(JointTrajectoryPoint(
            positions=list(q_start + (A * (1 - np.cos(w * t))).sum(0)),
            velocities=list((A * w * np.sin(w * t)).sum(0)),
            accelerations=list((A * w * w * np.cos(w * t)).sum(0)),
            time_from_start=_duration(t)))
    return msg


def test_identify_payload_finds_what_the_simulated_arm_carries_and_applies_it(graph, ur5e_xml):
    """The simulator carries 2 kg the controller and the dynamics node do not know of; after 6 s of an
    exciting motion (lock-step, as fast as possible, simulated time) ~/identify_payload finds it and,
    with apply_identified_payload, sets it on the dynamics node."""
    ros = graph
    ctrl = ros.add(ComputedTorqueController, {'robot_description': ur5e_xml, 'kp': [400.0], 'kd': [40.0],
                                              'state_timeout': 0.5, 'use_sim_time': True})
    dyn = ros.add(DynamicsNode, {'robot_description': ur5e_xml, 'tip_link': 'tool0', 'use_sim_time': True,
                                 'publish_task_space_inertia': False, 'apply_identified_payload': True})
    sim = ros.add(SimulatorNode, {'robot_description': ur5e_xml, 'initial_positions': list(Q0),
                                  'publish_rate': 200.0, 'friction': False, 'publish_clock': True,
                                  'real_time_factor': 0.0, 'lockstep_timeout': 2.0, 'tip_link': 'tool0'})
    assert sim.set_parameters(_payload())[0].successful
    errors = ros.collect(JointState, f'/{ctrl.get_name()}/tracking_error')
    assert ros.spin_until(lambda: errors, 10.0)
    # too little yet (standing still): refused with the reason
    poor = ros.call(Trigger, f'/{dyn.get_name()}/identify_payload', Trigger.Request())
    assert not poor.success and json.loads(poor.message)['reason'], poor.message
    reference = ros.publisher(JointTrajectory, f'/{ctrl.get_name()}/joint_trajectory')
    reference.publish(_exciting_reference(Q0))
    n = len(errors)
    assert ros.spin_until(lambda: len(errors) > n and _stamp(errors[-1]) > _stamp(errors[n]) + 6.0, 60.0)
    answer = ros.call(Trigger, f'/{dyn.get_name()}/identify_payload', Trigger.Request())
    estimate = json.loads(answer.message)
    print(f'\nidentified in the loop: {answer.message}')
    assert answer.success, answer.message
    assert abs(estimate['mass'] - MASS) < 0.02 * MASS, estimate
    assert np.abs(np.array(estimate['com']) - COM).max() < 0.005, estimate
    assert estimate['frame'] == 'tool0' and estimate['samples'] > 1000
    # applied: the dynamics node's belief is the estimate now
    assert dyn.get_parameter('payload_mass').value == pytest.approx(estimate['mass'])
    np.testing.assert_allclose(dyn.get_parameter('payload_com').value, estimate['com'])
    assert dyn.model is not dyn._source.base_model


def _stamp(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def test_a_payload_given_at_start_up_goes_with_a_model_from_the_topic(graph, ur5e_xml):
    """The payload parameters set before the model exists (launch files, YAML) are attached to the model
    built from /robot_description, when the worker thread hands the built model over."""
    from std_msgs.msg import String

    from robot_dynamics_ros.nodes.description_source import ROBOT_DESCRIPTION_QOS

    ros = graph
    node = ros.add(DynamicsNode, {'payload_mass': MASS, 'payload_com': COM, 'payload_frame': 'tool0',
                                  'tip_link': 'tool0'})
    assert node.model is None
    publisher = ros.probe.create_publisher(String, 'robot_description', ROBOT_DESCRIPTION_QOS)
    publisher.publish(String(data=ur5e_xml))
    assert ros.spin_until(lambda: node.model is not None, 60.0)
    q = Q0 + 0.2
    base = node._source.base_model
    np.testing.assert_allclose(rd.gravity_torques(node.model, q),
                               rd.gravity_torques(_carried(base, inertia=[0.0] * 6), q), rtol=0, atol=1e-12)
    ros.probe.destroy_publisher(publisher)
