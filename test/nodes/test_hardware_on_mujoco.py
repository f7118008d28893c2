"""Issue 35's proof on a plant this package did not write: MuJoCo's arm with a firmware that adds g(q) to
every command (MuJoCo's gravcomp through the actuators) and reports gravity-compensated efforts
(test/plants/mujoco_firmware_plant.py), over real DDS.

- computed_torque_controller with the matching conventions holds still at start-up and tracks a
  FollowJointTrajectory goal as well as on the same MuJoCo arm without firmware at the default profile;
- external_torque_estimator with them shows no phantom torque at rest and recovers a force at the tool;
- the same controller at the default profile commands nothing and says why (the plant never starts).
"""

import gc
import sys
from pathlib import Path

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from control_msgs.msg import JointTrajectoryControllerState
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.trajectory_goal import ErrorCode
from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
from robot_dynamics_ros.nodes.external_torque_estimator import ExternalTorqueEstimator

pytest.importorskip('mujoco')
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'plants'))
from mujoco_firmware_plant import MujocoFirmwarePlant

from _node_harness import UR5E_HOME, UR5E_JOINTS
from _trajectory_client import MoveItLikeClient, _trajectory

pytestmark = pytest.mark.ros

Q0 = np.array(UR5E_HOME) + np.array([0.2, 0.3, -0.4, 0.3, 0.2, 0.1])
TARGET = Q0 + np.array([0.3, -0.2, 0.25, 0.2, -0.3, 0.4])
GAINS = {'kp': [400.0], 'kd': [40.0]}
#: the conventions of the plant: a firmware that adds gravity, efforts without it
FIRMWARE = {'hardware_profile': 'kuka_fri', 'measured_effort': 'gravity_compensated'}
HOLD_BOUND = 1e-3           # rad; measured 0 (the firmware holds exactly, the command is 0)
# Real time against MuJoCo at 500 Hz (no /clock): measured max |e| 0.7-5e-4 rad on both arms; the
# bound allows a loaded machine's late commands.
TRACKING_BOUND = 2e-2
MAX_DROPPED = 0.02          # s of MuJoCo time a run may drop (a stalled machine) and still be judged


def _positions(msg):
    return np.array([msg.position[list(msg.name).index(j)] for j in UR5E_JOINTS])


def _efforts(msg):
    return np.array([msg.effort[list(msg.name).index(j)] for j in UR5E_JOINTS])


def _plant(ros, firmware):
    return ros.add(MujocoFirmwarePlant, {
        'initial_positions': list(Q0), 'firmware_gravity': firmware,
        'reported_effort': 'gravity_compensated' if firmware else 'full'})


def _hold_and_track(ros, ctrl):
    """Hold 0.5 s, then a 2 s goal through the action: (hold error, max |e|, RMS e) in rad, and the
    largest |command| at start-up (N m). The messages are dropped on return: a second run in the same
    test would otherwise pay for the first one's in the garbage collector's pauses."""
    states = ros.collect(JointState, '/joint_states', qos=10000)
    controller_state = ros.collect(JointTrajectoryControllerState, f'/{ctrl.get_name()}/controller_state',
                                   qos=10000)
    commands = ros.collect(Float64MultiArray, '/effort_controller/commands', qos=10000)
    assert ros.spin_until(lambda: len(commands) > 100, 10.0), 'no closed loop'
    ros.spin(0.5)
    hold = np.abs(_positions(states[-1]) - Q0).max()
    client = MoveItLikeClient(ros, ctrl.get_name())
    n = len(controller_state)
    status, code, text = client.execute(_trajectory([(1.0, (Q0 + TARGET) / 2), (2.0, TARGET)]))
    assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, ErrorCode.SUCCESSFUL), text
    errors = np.array([m.error.positions for m in controller_state[n:]])
    assert len(errors) > 20
    return hold, np.abs(errors).max(), np.sqrt((errors ** 2).mean()), np.abs(commands[5].data).max()


def test_the_controller_holds_and_tracks_on_the_firmware_arm_as_on_a_full_torque_one(graph, ur5e_xml):
    ros = graph
    results = {}
    for name, firmware, conventions in (('firmware arm, matching profile', True, FIRMWARE),
                                        ('full-torque arm, default profile', False, {})):
        # The plant runs in real time: a run in which the machine stalled it (MuJoCo time dropped, the
        # loop open for that long) says nothing about the controller, and is run again (twice at most).
        for _attempt in range(3):
            ctrl = ros.add(ComputedTorqueController, {'robot_description': ur5e_xml, **GAINS,
                                                      'state_timeout': 1.0, **conventions})
            plant = _plant(ros, firmware)
            hold, worst, rms, first = _hold_and_track(ros, ctrl)
            assert ctrl._command.verdict.status == 'consistent', ctrl._command.verdict.message
            if name not in results or plant.dropped < results[name][4]:
                results[name] = (hold, worst, rms, first, plant.dropped)
            ros.remove_all()
            gc.collect()
            if plant.dropped <= MAX_DROPPED:
                break
    for name, (hold, worst, rms, first, dropped) in results.items():
        print(f'\n{name}: hold {hold:.1e} rad, goal max |e| {worst:.2e} rad, RMS {rms:.1e} rad; '
              f'|first commands| {first:.2f} N m; {dropped:.3f} s of MuJoCo time dropped')
        assert hold < HOLD_BOUND and worst < TRACKING_BOUND, (name, hold, worst)
    # as well as on the full-torque arm (the same gains, the same goal; real time, so within a margin),
    # when neither run was stalled by the machine (three stalled runs in a row, as on a machine busy with
    # other tests, leave the absolute bound above as the judge)
    firmware, full = results['firmware arm, matching profile'], results['full-torque arm, default profile']
    if max(firmware[4], full[4]) <= MAX_DROPPED:
        assert firmware[1] < 5.0 * full[1] + 1e-3, (firmware[1], full[1])
    # the firmware arm's commands at start-up are what is left of g(q): nothing
    assert results['firmware arm, matching profile'][3] < 1e-6
    assert results['full-torque arm, default profile'][3] > 10.0


def test_the_estimator_sees_no_phantom_and_recovers_a_push(graph, ur5e_xml, ur5e_model):
    ros = graph
    ros.add(ComputedTorqueController, {'robot_description': ur5e_xml, **GAINS, 'state_timeout': 1.0,
                                       **FIRMWARE})
    plant = _plant(ros, True)
    est = ros.add(ExternalTorqueEstimator, {'robot_description': ur5e_xml, 'tip_link': 'tool0', **FIRMWARE})
    torques = ros.collect(JointState, f'/{est.get_name()}/external_torques', qos=1000)
    wrenches = ros.collect(WrenchStamped, f'/{est.get_name()}/external_wrench', qos=1000)
    assert ros.spin_until(lambda: len(torques) > 300, 10.0), 'no estimate'
    phantom = np.abs(_efforts(torques[-1])).max()
    g = rd.gravity_torques(ur5e_model, Q0)
    wrench = np.array([0.0, 0.0, 0.0, 12.0, -8.0, 15.0])       # on the tool, tool0 coordinates
    push = WrenchStamped()
    push.header.frame_id = 'tool0'
    push.wrench.force.x, push.wrench.force.y, push.wrench.force.z = map(float, wrench[3:])
    ros.publisher(WrenchStamped, f'/{plant.get_name()}/external_wrench').publish(push)
    n = len(wrenches)
    assert ros.spin_until(lambda: len(wrenches) > n + 500, 10.0)       # 1 s: the observer has settled
    w = wrenches[-1].wrench
    recovered = np.array([w.torque.x, w.torque.y, w.torque.z, w.force.x, w.force.y, w.force.z])
    error = np.abs(recovered - wrench).max()
    print(f'\nMuJoCo firmware arm at rest: |tau_ext| {phantom:.1e} N m '
          f'(|g| up to {np.abs(g).max():.1f} N m); '
          f'a {np.linalg.norm(wrench[3:]):.1f} N push recovered to {error:.2f} N')
    assert phantom < 0.2, f'phantom torque {phantom:.3f} N m at rest'
    assert error < 0.1 * np.abs(wrench).max(), recovered


def test_the_default_profile_moves_nothing_and_says_why(graph, ur5e_xml):
    ros = graph
    ctrl = ros.add(ComputedTorqueController, {'robot_description': ur5e_xml, **GAINS, 'state_timeout': 1.0})
    plant = _plant(ros, True)
    commands = ros.collect(Float64MultiArray, '/effort_controller/commands')
    assert ros.logged(ctrl.get_name(), 'contradict', timeout=5.0)
    error = [m for m in ros.logs if m.name == ctrl.get_name() and 'contradict' in m.msg][0]
    print(f'\n{error.msg}')
    assert "fits measured_effort 'gravity_compensated'" in error.msg
    ros.spin(1.0)
    assert not commands and not plant.running and np.abs(plant.arm.q - Q0).max() == 0.0
