"""external_torque_estimator over real DDS: a wrench applied in the simulator (simulator_node's
~/external_wrench, the controller holding the arm) comes back from the estimator's ~/external_wrench
and ~/external_torques; ~/contact goes true and false; ~/zero tares; bad states are dropped and
nothing non-finite is published."""

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.nodes.external_torque_estimator import ExternalTorqueEstimator

from _node_harness import UR5E_HOME, UR5E_JOINTS, held_arm_with_estimator

pytestmark = pytest.mark.ros

Q0 = np.array(UR5E_HOME) + np.array([0.2, 0.3, -0.4, 0.3, 0.2, 0.1])
WRENCH = np.array([0.6, -0.4, 0.3, 12.0, -8.0, 15.0])      # on the robot at tool0, angular first
CONTACT_QOS = 'contact'


def _wrench_msg(w, frame='tool0'):
    msg = WrenchStamped()
    msg.header.frame_id = frame
    (msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z,
     msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z) = map(float, w)
    return msg


def _as_array(msg):
    w = msg.wrench
    return np.array([w.torque.x, w.torque.y, w.torque.z, w.force.x, w.force.y, w.force.z])


def _efforts(msg):
    return np.array([msg.effort[list(msg.name).index(j)] for j in UR5E_JOINTS])


def _contact_list(ros, node):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
    return ros.collect(Bool, f'/{node.get_name()}/contact', qos=qos)


def test_a_wrench_applied_in_simulation_is_recovered(graph, ur5e_xml, ur5e_model):
    ros = graph
    sim, est = held_arm_with_estimator(ros, ur5e_xml, Q0, publish_rate=500.0)
    name = est.get_name()
    torques = ros.collect(JointState, f'/{name}/external_torques', qos=1000)
    wrenches = ros.collect(WrenchStamped, f'/{name}/external_wrench', qos=1000)
    contact = _contact_list(ros, est)
    assert ros.spin_until(lambda: len(torques) > 50, 30.0), 'no estimate'
    assert ros.spin_until(lambda: contact, 5.0) and contact[-1].data is False
    # at rest under the holding controller: no external torque
    assert np.abs(_efforts(torques[-1])).max() < 0.05
    push = ros.publisher(WrenchStamped, f'/{sim.get_name()}/external_wrench')
    push.publish(_wrench_msg(WRENCH))
    n = len(torques)
    assert ros.spin_until(lambda: len(torques) > n + 500, 30.0), 'the estimate stopped'  # > 1 s simulated
    assert contact[-1].data is True
    q = np.array(sim.q)
    expected = rd.jacobian(ur5e_model, q, 'tool0', 'body').T @ WRENCH
    estimated = _efforts(torques[-1])
    assert np.abs(estimated - expected).max() < 0.05 * np.abs(expected).max(), (estimated, expected)
    recovered = _as_array(wrenches[-1])
    assert wrenches[-1].header.frame_id == 'tool0'
    assert np.abs(recovered - WRENCH).max() < 0.05 * np.abs(WRENCH).max(), (recovered, WRENCH)
    # the push removed: back to zero, contact false
    push.publish(_wrench_msg(np.zeros(6)))
    n = len(torques)
    assert ros.spin_until(lambda: len(torques) > n + 500, 30.0)
    assert contact[-1].data is False
    assert np.abs(_efforts(torques[-1])).max() < 0.01 * np.abs(expected).max()
    # tare while pushed again: the estimate becomes zero; then the push removed reads as -J^T W
    push.publish(_wrench_msg(WRENCH))
    n = len(torques)
    assert ros.spin_until(lambda: len(torques) > n + 500, 30.0)
    at_tare = rd.jacobian(ur5e_model, np.array(sim.q), 'tool0', 'body').T @ WRENCH
    answer = ros.call(Trigger, f'/{name}/zero', Trigger.Request())
    assert answer.success
    n = len(torques)
    assert ros.spin_until(lambda: len(torques) > n + 20, 10.0)
    assert np.abs(_efforts(torques[-1])).max() < 0.05 * np.abs(expected).max()
    push.publish(_wrench_msg(np.zeros(6)))
    n = len(torques)
    assert ros.spin_until(lambda: len(torques) > n + 500, 30.0)
    assert np.abs(_efforts(torques[-1]) + at_tare).max() < 0.05 * np.abs(at_tare).max()
    assert all(np.isfinite(_efforts(m)).all() for m in torques)
    print(f'\nwrench recovered to {np.abs(recovered - WRENCH).max() / np.abs(WRENCH).max():.1e} of |W|max, '
          f'torques to {np.abs(estimated - expected).max() / np.abs(expected).max():.1e}')


def _state(q, qd, tau, sec, nanosec=0):
    msg = JointState()
    msg.header.stamp = Time(sec=sec, nanosec=nanosec)
    msg.name = list(UR5E_JOINTS)
    msg.position, msg.velocity = [float(x) for x in q], [float(x) for x in qd]
    msg.effort = [] if tau is None else [float(x) for x in tau]
    return msg


def test_bad_states_are_dropped_and_contact_follows_the_threshold(graph, ur5e_xml, ur5e_model):
    """A still arm whose measured torques are g(q) − τ_ext: the estimate converges to τ_ext; states
    with NaN efforts, without efforts, or with a stamp going back are handled as the docstring says;
    parameters are validated."""
    ros = graph
    est = ros.add(ExternalTorqueEstimator, {'robot_description': ur5e_xml, 'contact_threshold': [3.0],
                                            'observer_gain': [50.0]})
    name = est.get_name()
    torques = ros.collect(JointState, f'/{name}/external_torques', qos=1000)
    contact = _contact_list(ros, est)
    states = ros.publisher(JointState, '/joint_states')
    q, qd = Q0, np.zeros(6)
    tau_ext = rd.jacobian(ur5e_model, q, 'tool0', 'body').T @ WRENCH
    tau = rd.gravity_torques(ur5e_model, q) - tau_ext
    for k in range(200):                             # 2 s at 100 Hz of stamps
        states.publish(_state(q, qd, tau, k // 100, (k % 100) * 10_000_000))
        ros.spin(0.002)
    assert ros.spin_until(lambda: len(torques) >= 195, 10.0), len(torques)
    np.testing.assert_allclose(_efforts(torques[-1]), tau_ext, atol=1e-3 * np.abs(tau_ext).max())
    assert contact and contact[-1].data is True
    n = len(torques)
    states.publish(_state(q, qd, np.r_[np.nan, tau[1:]], 2))
    states.publish(_state(q, qd, None, 2, 10_000_000))
    ros.spin(0.5)
    assert len(torques) == n, 'a state with NaN or no efforts must not be estimated'
    assert ros.logged(name, 'effort'), 'a warning must say why'
    states.publish(_state(q, qd, tau, 1))             # the stamp went back: the observer restarts
    assert ros.spin_until(lambda: len(torques) > n, 5.0)
    assert np.abs(_efforts(torques[-1])).max() == 0.0
    assert ros.spin_until(lambda: contact[-1].data is False, 5.0)
    assert ros.logged(name, 'started again')
    assert all(np.isfinite(_efforts(m)).all() for m in torques)
    # parameters: validated, settable at run time
    client_name = f'/{name}/set_parameters'
    for value in ([1.0, 2.0], [-1.0], [0.0]):
        result = ros.call(SetParameters, client_name, SetParameters.Request(
            parameters=[Parameter('observer_gain', value=value).to_parameter_msg()]))
        assert not result.results[0].successful
    result = ros.call(SetParameters, client_name, SetParameters.Request(
        parameters=[Parameter('observer_gain', value=list(np.linspace(10.0, 60.0, 6))).to_parameter_msg(),
                    Parameter('contact_threshold', value=0.5).to_parameter_msg()]))
    assert all(r.successful for r in result.results)
    np.testing.assert_allclose(est._estimation.gain, np.linspace(10.0, 60.0, 6))
    np.testing.assert_allclose(est._estimation.threshold, np.full(6, 0.5))
