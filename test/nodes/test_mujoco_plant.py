"""The MuJoCo plant with a gravity-compensating firmware (test/plants/mujoco_firmware_plant.py) over
real DDS: the stand-in for a real arm's driver that the hardware profiles' closed-loop tests run on.

With the firmware a zero command holds the arm (MuJoCo's gravcomp), and the efforts it reports are
the applied torque ('full' = g(q) at rest) or that minus the firmware's gravity ('gravity_compensated'
= 0 at rest); without it, the package's own gravity_torques as the command hold it (the two engines'
dynamics agree), and a zero command drops it. A wrench exerted on the tool moves the joints along
M⁻¹ J_bᵀ w, as the package's dynamics predict. Each test runs 1-3 s of wall time.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics_ros import dynamics as rd

pytest.importorskip('mujoco')
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'plants'))
from mujoco_firmware_plant import MujocoFirmwarePlant

from _node_harness import UR5E_JOINTS

pytestmark = pytest.mark.ros

BENT = [0.3, -1.0, 1.2, -0.8, -1.4, 0.5]     # rad, UR5E_JOINTS order: gravity loads every joint but wrist 3


def add_plant(graph, namespace, **parameters):
    """A plant in its own namespace (several plants publish /<namespace>/joint_states side by side)."""
    parameters = {'initial_positions': BENT, **parameters}
    plant = graph.add(MujocoFirmwarePlant, parameters=parameters, namespace=namespace)
    return plant, graph.collect(JointState, f'/{namespace}/joint_states', qos=1000)


def positions(msgs):
    return np.array([m.position for m in msgs])


def test_the_firmware_holds_the_arm_and_reports_full_or_gravity_compensated_efforts(graph, ur5e_model):
    full, full_states = add_plant(graph, 'full', wait_for_command=False, reported_effort='full')
    comp, comp_states = add_plant(graph, 'comp', wait_for_command=False,
                                  reported_effort='gravity_compensated')
    free, free_states = add_plant(graph, 'free', wait_for_command=False, firmware_gravity=False)
    graph.spin(2.0)
    g = rd.gravity_torques(ur5e_model, BENT)
    for plant, states in ((full, full_states), (comp, comp_states)):
        assert plant.arm.time > 1.5, f'{plant.arm.time:.3f} s simulated, {plant.dropped:.3f} s dropped'
        assert len(states) > 300 and states[-1].name == list(UR5E_JOINTS)
        assert np.abs(positions(states) - BENT).max() < 1e-4            # no command, 2 s: held
        stamps = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in states]
        assert stamps[0] > 0 and np.all(np.diff(stamps) >= 0)
    full_efforts = np.array([m.effort for m in full_states])
    np.testing.assert_allclose(full_efforts, np.broadcast_to(g, full_efforts.shape), atol=1e-6)
    np.testing.assert_allclose(full_efforts[-1], full.arm.gravity_compensation(), atol=1e-9)  # MuJoCo's g
    assert np.abs([m.effort for m in comp_states]).max() < 1e-9
    # No firmware, no command: the arm falls (the hold above is the firmware's doing).
    assert np.abs(positions(free_states[-1:]) - BENT).max() > 0.1
    np.testing.assert_array_equal(free_states[-1].effort, 0.0)


def test_without_firmware_the_packages_gravity_torques_hold_the_arm(graph, ur5e_model):
    """Joint order reversed on purpose: the plant maps by the names it was given."""
    order = list(reversed(UR5E_JOINTS))
    plant, states = add_plant(graph, 'plain', firmware_gravity=False, joints=order,
                              initial_positions=BENT[::-1], command_timeout=0.3)
    pub = graph.publisher(Float64MultiArray, '/plain/effort_controller/commands')
    pub.publish(Float64MultiArray(data=[1.0, 2.0]))                     # wrong size: dropped
    graph.spin(0.2)
    assert graph.logged(plant.get_logger().name, 'dropping an effort command')
    assert plant.arm.time == 0.0 and not plant.running and len(states) > 10     # waiting, publishing
    np.testing.assert_array_equal(positions(states), np.broadcast_to(BENT[::-1], (len(states), 6)))

    g = rd.gravity_torques(ur5e_model, BENT)[::-1]
    for _ in range(20):                                                 # 2 s, a command every 0.1 s
        pub.publish(Float64MultiArray(data=g.tolist()))
        graph.spin(0.1)
    assert plant.arm.time > 1.5
    assert states[-1].name == order
    assert np.abs(positions(states[-50:]) - BENT[::-1]).max() < 1e-4
    np.testing.assert_allclose(states[-1].effort, g, atol=1e-12)        # no firmware: full = command


def test_an_external_wrench_moves_the_joints_as_the_packages_dynamics_predict(graph, ur5e_model):
    plant, states = add_plant(graph, 'push', wait_for_command=False)
    pub = graph.publisher(WrenchStamped, f'/push/{plant.get_name()}/external_wrench')
    # The wrench ON the robot at tool0, in tool0's axes: a force along tool0's x and y, a torque about
    # its z; scaled so that the joints accelerate at 0.5 rad/s² (M⁻¹ J_bᵀ w, the firmware cancels g).
    w = np.array([0.0, 0.0, 0.2, 10.0, -6.0, 0.0])
    J_b = rd.jacobian(ur5e_model, BENT, 'tool0', reference='body')
    qdd = np.linalg.solve(rd.mass_matrix(ur5e_model, BENT), J_b.T @ w)
    w, qdd = w * 0.5 / np.linalg.norm(qdd), qdd * 0.5 / np.linalg.norm(qdd)
    msg = WrenchStamped()
    msg.header.frame_id = 'base_link'                                   # another frame: dropped
    (msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z,
     msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z) = w.tolist()
    pub.publish(msg)
    graph.spin(0.3)
    assert graph.logged(plant.get_logger().name, "must be in the tip frame 'tool0'")
    assert np.abs(positions(states) - BENT).max() < 1e-6

    msg.header.frame_id = 'tool0'
    pub.publish(msg)
    start = len(states)
    graph.spin(0.4)
    dq = positions(states[-1:])[0] - BENT
    assert len(states) > start and np.linalg.norm(dq) > 5e-3            # ½ 0.5 t² = 0.04 rad at 0.4 s
    cosine = dq @ qdd / (np.linalg.norm(dq) * np.linalg.norm(qdd))
    assert cosine > 0.95, f'moved along {dq}, the package predicts {qdd} (cosine {cosine:.3f})'

    msg.wrench = WrenchStamped().wrench                                 # a zero wrench removes it
    pub.publish(msg)
    graph.spin_until(lambda: not plant.arm.data.xfrc_applied.any(), 2.0)
    assert not plant.arm.data.xfrc_applied.any()
