"""simulator_node on MuJoCo (engine:=mujoco) over real DDS: a table stops the arm, MuJoCo's contact torques
(~/contact_torques) are what the external torque estimator finds while the arm presses, ~/contacts
shows the contact; an MJCF arm (mjcf_path) with the URDF as the controllers' model; a URDF with mesh
files (example-robot-data's UR5: STL collisions, DAE visuals); bad world, MJCF and mesh files are
clear errors and the node stays up without a simulation; a robot with mimic joints has its contact topics.

The engine's equality with the rigid-body engine and its pause, reset, timeouts and lock-step run in
test_simulator_node.py (the tests there take the ``engine`` fixture)."""

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker, MarkerArray

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli.resources import world_file
from robot_dynamics_ros.logic.stamps import stamp_ns
from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
from robot_dynamics_ros.nodes.external_torque_estimator import ExternalTorqueEstimator
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode

from _node_harness import UR5E_HOME, UR5E_JOINTS

pytestmark = pytest.mark.ros

mujoco = pytest.importorskip('mujoco')

TABLE_TOP = 0.40            # m: worlds/table.xml
BALL_RADIUS = 0.025         # m: urdf/ur5e.urdf's tool ball, centred on tool0


def _efforts(msg):
    return np.array([msg.effort[list(msg.name).index(j)] for j in UR5E_JOINTS])


def _tool_lowered(model, q, dz, iterations=20):
    """Joint positions near ``q`` that put tool0 ``dz`` m lower, its orientation unchanged (Newton on
    the world-aligned Jacobian)."""
    target = rd.frame_pose(model, q, 'tool0').copy()
    target[2, 3] -= dz
    q = np.array(q, dtype=float)
    for _ in range(iterations):
        T = rd.frame_pose(model, q, 'tool0')
        rotation_error = 0.5 * np.cross(T[:3, :3], target[:3, :3], axis=0).sum(axis=1)
        error = np.concatenate([rotation_error, target[:3, 3] - T[:3, 3]])
        J = rd.jacobian(model, q, 'tool0', 'world_aligned')
        q = q + np.linalg.lstsq(J, error, rcond=None)[0]
    return q


def test_a_table_stops_the_arm_and_the_estimator_finds_the_contact_torques(graph, ur5e_xml):
    """The computed-torque controller drives the tool 20 mm into the table (worlds/table.xml): MuJoCo's
    table stops the ball on its surface; while it presses, the estimator's external torques equal the
    contact torques MuJoCo's solver applied (the observer's 20 ms lag aside: compared once pressing is
    steady), and ~/contacts shows the contact point and force."""
    ros = graph
    model = rd.load_urdf(ur5e_xml, tip_link='tool0')
    q0 = np.array(UR5E_HOME)
    height0 = rd.frame_pose(model, q0, 'tool0')[2, 3] - BALL_RADIUS - TABLE_TOP      # 63 mm above
    q_press = _tool_lowered(model, q0, height0 + 0.02)
    controller = ros.add(ComputedTorqueController, {'robot_description': ur5e_xml, 'kp': [400.0],
                                                    'kd': [40.0], 'use_sim_time': True})
    sim = ros.add(SimulatorNode, {'robot_description': ur5e_xml, 'engine': 'mujoco',
                                  'world_path': str(world_file('table.xml')), 'friction': False,
                                  'initial_positions': list(q0), 'tip_link': 'tool0', 'publish_rate': 500.0,
                                  'publish_clock': True, 'lockstep_timeout': 2.0})
    estimator = ros.add(ExternalTorqueEstimator, {'robot_description': ur5e_xml, 'tip_link': 'tool0',
                                                  'use_sim_time': True})
    states = ros.collect(JointState, '/joint_states', qos=5000)
    truth = ros.collect(JointState, f'/{sim.get_name()}/contact_torques', qos=5000)
    estimates = ros.collect(JointState, f'/{estimator.get_name()}/external_torques', qos=5000)
    markers = ros.collect(MarkerArray, f'/{sim.get_name()}/contacts', qos=100)
    assert ros.spin_until(lambda: len(estimates) > 50, 30.0), 'no estimate'
    assert not np.any(_efforts(truth[-1])), 'a contact before the arm moved'

    trajectory = JointTrajectory(joint_names=list(UR5E_JOINTS))
    trajectory.points = [JointTrajectoryPoint(positions=list(q_press), velocities=[0.0] * 6,
                                              time_from_start=Duration(sec=1))]
    publisher = ros.publisher(JointTrajectory, f'/{controller.get_name()}/joint_trajectory')
    publisher.publish(trajectory)
    start = stamp_ns(states[-1].header.stamp)
    assert ros.spin_until(lambda: stamp_ns(states[-1].header.stamp) > start + 1.8e9, 60.0), \
        'the simulation stalled'

    # The table stopped the ball: its lowest point on the surface (MuJoCo's soft contact: < 2 mm in).
    ball_bottom = rd.frame_pose(model, np.array(states[-1].position), 'tool0')[2, 3] - BALL_RADIUS
    assert TABLE_TOP - 0.002 < ball_bottom < TABLE_TOP + 0.001, ball_bottom
    # While pressing (the last 0.5 s, steady): the estimator's external torques = MuJoCo's.
    by_stamp = {stamp_ns(m.header.stamp): _efforts(m) for m in truth}
    pairs = [(by_stamp[stamp_ns(m.header.stamp)], _efforts(m)) for m in estimates
             if stamp_ns(m.header.stamp) > start + 1.3e9 and stamp_ns(m.header.stamp) in by_stamp]
    assert len(pairs) > 100, len(pairs)
    contact, estimated = (np.array(x) for x in zip(*pairs))
    scale = np.abs(contact).max()
    assert scale > 2.0, f'pressing with {scale:.2f} N m at most: no real contact'
    error = np.abs(estimated - contact).max()
    assert error < 0.02 * scale, (error, scale)      # (measured: 0.13 of 11.2 N m, the observer lag)
    # ~/contacts: one contact on tool0 with the table, the force pointing up (the table pushes).
    last = markers[-1].markers
    assert last[0].action == Marker.DELETEALL
    forces = [m for m in last if m.ns == 'contact_force']
    assert forces and all(m.header.frame_id == 'base_link' for m in forces)
    force = np.array([[p.x, p.y, p.z] for p in forces[0].points])
    assert force[1, 2] - force[0, 2] > 0.0 and abs(force[0, 2] - TABLE_TOP) < 0.003


def _mjcf_of(urdf_xml, tmp_path, rename=None):
    """An MJCF file of the arm, as MuJoCo writes it from the URDF (MuJoCo's own MJCF, not ours), without
    geometry, with a position servo on every joint (simulator_node must remove them) and ``rename`` =
    {old: new} joint names."""
    urdf_xml = urdf_xml.replace('<robot name="ur5e">', '<robot name="ur5e"><mujoco><compiler '
                                'fusestatic="false" discardvisual="true" balanceinertia="false"/></mujoco>')
    spec = mujoco.MjSpec.from_string(urdf_xml)
    for geom in list(spec.geoms):       # (the MJCF's compiler would give the tool ball a mass)
        spec.delete(geom)
    for joint in spec.joints:
        joint.damping, joint.frictionloss = 0 * joint.damping, 0.0
        joint.name = (rename or {}).get(joint.name, joint.name)
        actuator = spec.add_actuator(name=joint.name, target=joint.name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        actuator.set_to_position(kp=1000.0)
    path = tmp_path / 'ur5e_mjcf.xml'
    spec.compile()
    path.write_text(spec.to_xml())
    return path


def test_an_mjcf_arm_with_the_urdf_as_the_controllers_model(graph, ur5e_xml, ur5e_model, tmp_path):
    """mjcf_path: MuJoCo's MJCF of the arm (servos and all) simulates, the URDF stays the controllers'
    model: joints matched by name, the MJCF's servos removed (the arm falls as the rigid-body engine's
    does, under zero effort); an MJCF without a joint of the URDF is an error naming it."""
    ros = graph
    params = {'robot_description': ur5e_xml, 'engine': 'mujoco', 'friction': False,
              'initial_positions': list(UR5E_HOME), 'publish_rate': 100.0, 'wait_for_command': False,
              'publish_clock': True}
    sim = ros.add(SimulatorNode, {**params, 'mjcf_path': str(_mjcf_of(ur5e_xml, tmp_path))})
    states = ros.collect(JointState, '/joint_states')
    assert ros.spin_until(lambda: len(states) > 20, 10.0), ros.warnings(sim.get_name())
    msg = states[20]
    q, qd = np.array(UR5E_HOME), np.zeros(6)
    for _ in range(round(stamp_ns(msg.header.stamp) / 1e6)):
        q, qd = rd.rk4_step(ur5e_model, q, qd, np.zeros(6), 0.001)
    np.testing.assert_allclose(_efforts(msg), 0.0)
    # (MuJoCo writes the MJCF's numbers with 9 significant digits: 2e-9 here after 0.2 s)
    np.testing.assert_allclose([msg.position[list(msg.name).index(j)] for j in UR5E_JOINTS], q, atol=1e-7)

    bad = ros.add(SimulatorNode, {**params, 'mjcf_path': str(_mjcf_of(
        ur5e_xml, tmp_path, rename={'elbow_joint': 'elbow'}))})
    assert ros.logged(bad.get_name(), "has no joints ['elbow_joint']")
    assert bad.model is None


@pytest.mark.parametrize('parameters, message', [
    ({'world_path': '/nonexistent/world.xml'}, "world_path '/nonexistent/world.xml' is not a file"),
    ({'world_path': __file__}, 'is not an MJCF MuJoCo can read'),
    ({'mjcf_path': '/nonexistent/arm.xml'}, "mjcf_path '/nonexistent/arm.xml' is not a file"),
])
def test_bad_world_and_mjcf_files_are_clear_errors(graph, ur5e_xml, parameters, message):
    """A world or MJCF that cannot be used: an error naming the file, no simulation (nothing published,
    commands dropped with a warning), and the node stays up (its services answer)."""
    from std_srvs.srv import Trigger

    ros = graph
    sim = ros.add(SimulatorNode, {'robot_description': ur5e_xml, 'engine': 'mujoco', **parameters})
    states = ros.collect(JointState, '/joint_states')
    assert ros.logged(sim.get_name(), message), ros.warnings(sim.get_name())
    ros.spin(0.3)
    assert not states and sim.model is None
    answer = ros.call(Trigger, f'/{sim.get_name()}/reset', Trigger.Request())
    assert not answer.success and answer.message == 'no robot model'


def test_a_urdf_with_meshes_and_a_missing_mesh(graph, tmp_path):
    """example-robot-data's UR5 (package:// meshes: STL collisions, DAE visuals): MuJoCo gets the
    collision meshes (package_paths), and with keep_visuals the DAE visuals too (handed over as
    triangles); a mesh that is nowhere is an error naming it."""
    from _node_harness import EXAMPLE_ROBOT_DATA

    ros = graph
    urdf = EXAMPLE_ROBOT_DATA / 'robots' / 'ur_description' / 'urdf' / 'ur5_robot.urdf'
    params = {'urdf_path': str(urdf), 'engine': 'mujoco', 'package_paths': [str(EXAMPLE_ROBOT_DATA.parent)],
              'friction': False}
    sim = ros.add(SimulatorNode, {**params, 'keep_visuals': True})
    states = ros.collect(JointState, '/joint_states')
    assert ros.spin_until(lambda: states, 20.0), ros.warnings(sim.get_name())
    meshes = sim.sim.engine.mj.nmesh
    assert meshes == 14, meshes     # 7 collision STLs + 7 visual DAEs

    broken = tmp_path / 'ur5_broken.urdf'
    broken.write_text(urdf.read_text().replace('collision/forearm.stl', 'collision/nowhere.stl'))
    bad = ros.add(SimulatorNode, {**params, 'urdf_path': str(broken)})
    assert ros.logged(bad.get_name(), 'nowhere.stl'), ros.warnings(bad.get_name())
    assert bad.model is None


def test_a_robot_with_mimic_joints_has_its_contact_topics(graph):
    """Mimic joints (published beside the coordinates in joint_states) do not silence ~/contact_torques
    and ~/contacts: a two-finger gripper whose right finger mimics the left, nothing touching."""
    link = ('<link name="{}"><inertial><mass value="0.1"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" '
            'iyz="0" izz="1e-4"/></inertial></link>')
    finger = ('<joint name="{}" type="prismatic"><parent link="hand"/><child link="{}"/><axis xyz="0 1 0"/>'
              '<limit lower="-0.1" upper="0.1" effort="10" velocity="1"/>{}</joint>')
    gripper = ('<robot name="gripper">' + link.format('hand') + link.format('left') + link.format('right')
               + finger.format('left_finger', 'left', '') + finger.format(
                   'right_finger', 'right', '<mimic joint="left_finger" multiplier="-1" offset="0"/>')
               + '</robot>')
    ros = graph
    sim = ros.add(SimulatorNode, {'robot_description': gripper, 'engine': 'mujoco', 'friction': False,
                                  'wait_for_command': False})
    states = ros.collect(JointState, '/joint_states')
    torques = ros.collect(JointState, f'/{sim.get_name()}/contact_torques')
    markers = ros.collect(MarkerArray, f'/{sim.get_name()}/contacts')
    assert ros.spin_until(lambda: len(torques) > 5 and len(markers) > 5, 10.0), (
        len(states), len(torques), len(markers), ros.warnings(sim.get_name()))
    assert list(states[-1].name) == ['left_finger', 'right_finger']
    assert list(torques[-1].name) == ['left_finger'] and list(torques[-1].effort) == [0.0]
