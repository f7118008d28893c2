"""simulator_node's wiring of engine 'mujoco': its parameters, its ground-truth topics and the factory of
its engine (logic/mujoco_engine.py). MuJoCo is imported here, when a simulator runs on it, and nowhere
else in the nodes.

Parameters (read-only): ``mjcf_path``, ``world_path``, ``package_paths``, ``keep_visuals``,
``self_collision`` (simulator_node's docstring). Topics: ``~/contact_torques`` (sensor_msgs/JointState)
and ``~/contacts`` (visualization_msgs/MarkerArray, nodes/contact_markers.py), published with each
joint state while something subscribes to them.
"""

from pathlib import Path

from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from robot_dynamics_ros.nodes.common import describe, string_list
from robot_dynamics_ros.nodes.contact_markers import contact_markers
from robot_dynamics_ros.nodes.conversions import make_joint_state

__all__ = ['MujocoWiring']


class MujocoWiring:
    """Engine 'mujoco' of ``node`` (a simulator_node): declares its parameters and publishers. It is the
    Simulation's engine type (the protocol of ``logic/rigid_body_engine.py``): ``integrators`` and
    ``warm_up_calls`` are MujocoEngine's; called, ``wiring(model, dt, integrator)`` makes the engine (it
    reads the URDF and the payload from ``source``, the node's ModelSource, set once the node made it).
    RuntimeError when MuJoCo is not installed."""

    def __init__(self, node):
        try:
            from robot_dynamics_ros.logic import mujoco_engine
        except ImportError as exc:
            raise RuntimeError(f"engine 'mujoco' needs MuJoCo ({exc}): pip install "
                               "'robot_dynamics_ros[mujoco]'") from None
        self._module, self._node, self.source = mujoco_engine, node, None
        self.integrators = mujoco_engine.MujocoEngine.integrators
        self.warm_up_calls = mujoco_engine.MujocoEngine.warm_up_calls
        for name, description in (
                ('mjcf_path', 'MJCF file of the arm (e.g. a MuJoCo Menagerie model); empty: MuJoCo compiles '
                              "the URDF. Its joints are matched by name with the URDF's."),
                ('world_path', 'MJCF file of the world (floor, tables, objects), attached to the scene; '
                               'empty: none.')):
            node.declare_parameter(name, '', describe(description, read_only=True))
        node.declare_parameter('package_paths', [], describe(
            'Folders where package:// meshes are looked up first (then the ament index and '
            'ROS_PACKAGE_PATH).', read_only=True, dynamic_typing=True))
        node.declare_parameter('keep_visuals', False, describe(
            "Keep the URDF's visual geometry in MuJoCo's model (it has no effect on the physics).",
            read_only=True))
        node.declare_parameter('self_collision', False, describe(
            "The arm's collision geometry touches itself (off: only the world).", read_only=True))
        self._pub_torques = node.create_publisher(JointState, '~/contact_torques', 10)
        self._pub_markers = node.create_publisher(MarkerArray, '~/contacts', 10)

    def __call__(self, model, dt, integrator):
        """MuJoCo's model of the URDF (or the MJCF) with the world, the payload parameters in force
        attached. ValueError naming what fails."""
        value = self._node.get_parameter
        urdf_path = value('urdf_path').value if self.source.origin == 'file' else ''
        engine = self._module.MujocoEngine(
            model, self.source.urdf_xml, dt, integrator, mjcf_path=value('mjcf_path').value,
            world_path=value('world_path').value, keep_visuals=value('keep_visuals').value,
            package_paths=[f for f in string_list('package_paths', value('package_paths').value) if f],
            base_dir=str(Path(urdf_path).resolve().parent) if urdf_path else None,
            self_collision=value('self_collision').value)
        self.set_payload(engine, model)
        return engine

    def set_payload(self, engine, model):
        """The payload parameters in force as a body of MuJoCo's model (frame '': the tip frame)."""
        payload = self.source.payload()
        engine.set_payload(payload['mass'], payload['com'], payload['inertia'],
                           payload['frame'] or model.tip_frame)

    def publish_contacts(self, engine, model, joint_order, to_order, stamp):
        """~/contact_torques and ~/contacts of the state just published (MuJoCo's contacts at it), when
        something subscribes to them; ``to_order`` maps model order to ``joint_order``."""
        want_torques = self._pub_torques.get_subscription_count() > 0
        want_markers = self._pub_markers.get_subscription_count() > 0
        if not (want_torques or want_markers):
            return
        contacts = engine.contacts()
        if want_torques:
            self._pub_torques.publish(make_joint_state(
                joint_order, stamp=stamp, effort=engine.contact_torques(contacts)[to_order]))
        if want_markers:
            root = engine.body_pose(model.root_link)
            self._pub_markers.publish(contact_markers(contacts, root, model.root_link, stamp))
