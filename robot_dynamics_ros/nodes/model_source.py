"""Where a node's robot model comes from: parameters, a URDF file, or the robot_description topic.

Parameters (declared on the node by ``ModelSource``; all read-only after start-up):

- ``robot_description`` (string): URDF XML. Used when non-empty.
- ``urdf_path`` (string): URDF file, used when ``robot_description`` is empty.
- neither set: subscribe to ``robot_description`` (std_msgs/String, reliable, TRANSIENT_LOCAL,
  depth 1; resolves to /robot_description in the root namespace) and rebuild the model from every
  description that arrives.
- ``root_link``, ``tip_link`` (string, '' = the URDF's root link / its last link): the chain.
- ``joints`` (string array, [] = all joints of the chain in model order): the joints the node
  works with, in this order. Joints of the chain not listed are locked at 0.
- ``gravity`` (double array of 3, m/s², root frame; default [0, 0, -9.81]).
"""

import numpy as np
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.nodes.common import describe, float_array, string_list

__all__ = ['build_model', 'ModelSource', 'ROBOT_DESCRIPTION_QOS']

# As robot_state_publisher publishes it: late joiners get the last description.
ROBOT_DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                   durability=DurabilityPolicy.TRANSIENT_LOCAL)


def build_model(urdf, *, root_link='', tip_link='', joints=(), gravity=(0.0, 0.0, -9.81)):
    """Build the Model a node uses; return ``(model, joint_order)``.

    ``urdf``: XML string or file path. ``joints``: explicit subset/order (empty = model order);
    the chain's other joints are locked at 0 via ``load_urdf(locked_joints=...)``.
    Raises ValueError (from the core, or for unknown / duplicate joints, bad gravity).
    """
    gravity = float_array('gravity', gravity)
    if gravity.shape != (3,):
        raise ValueError(f"parameter 'gravity' must have 3 entries, got {gravity.tolist()}")
    joints = list(joints)
    if len(set(joints)) != len(joints):
        raise ValueError(f"parameter 'joints' lists a joint twice: {joints}")
    kwargs = dict(root_link=root_link or None, tip_link=tip_link or None, gravity=tuple(gravity))
    model = rd.load_urdf(urdf, **kwargs)
    if not joints:
        return model, tuple(model.joint_names)
    unknown = [j for j in joints if j not in model.joint_names]
    if unknown:
        raise ValueError(f"parameter 'joints' names {unknown}, not movable joints of the chain "
                         f'{list(model.joint_names)}')
    locked = {j: 0.0 for j in model.joint_names if j not in joints}
    if locked:
        model = rd.load_urdf(urdf, locked_joints=locked, **kwargs)
    if sorted(model.joint_names) != sorted(joints):
        raise ValueError(f'model joints {list(model.joint_names)} after locking {sorted(locked)} '
                         f'do not match parameter joints {joints}')
    return model, tuple(joints)


def _looks_like_xml(text):
    return text.lstrip().startswith('<')


class ModelSource:
    """Declares the model parameters on ``node`` and calls ``on_model(model, joint_order)``.

    Called once per successfully built model; ``on_model(None, ())`` when a description that
    arrives on the topic cannot be built (the node then runs without a model rather than with a
    model of a different robot). After ``start()``: ``model``, ``joint_order``, ``urdf_xml`` (the
    text of the description in use) and ``origin`` ('parameter', 'file' or 'topic').
    """

    def __init__(self, node, on_model):
        self._node = node
        self._on_model = on_model
        self.model = None
        self.joint_order = ()
        self.urdf_xml = None
        self.origin = None
        self._subscription = None
        node.declare_parameter('robot_description', '', describe(
            'URDF XML of the robot. Empty: use urdf_path, else the robot_description topic.',
            read_only=True))
        node.declare_parameter('urdf_path', '', describe(
            'Path of a URDF file, used when robot_description is empty.', read_only=True))
        node.declare_parameter('root_link', '', describe(
            "Root link of the chain ('' = the URDF's root link).", read_only=True))
        node.declare_parameter('tip_link', '', describe(
            "Tip link of the chain, frame of task-space quantities and of external wrenches "
            "('' = the model's default tip frame, the last link).", read_only=True))
        node.declare_parameter('joints', [], describe(
            'Joints to use, in this order (the order of every joint vector the node publishes or '
            'expects). [] = every joint of the chain in model order. Joints of the chain not '
            'listed are locked at 0.', read_only=True, dynamic_typing=True,
            additional_constraints='list of strings, each a movable joint of the chain'))
        node.declare_parameter('gravity', [0.0, 0.0, -9.81], describe(
            'Gravitational acceleration in the root frame, m/s^2.', read_only=True,
            dynamic_typing=True, additional_constraints='3 finite numbers'))

    def _param(self, name):
        return self._node.get_parameter(name).value

    def start(self):
        """Build from the parameter or file now, or subscribe to the robot_description topic."""
        description = self._param('robot_description')
        path = self._param('urdf_path')
        if description:
            self.load(description, 'parameter')
        elif path:
            try:
                with open(path, encoding='utf-8') as f:
                    text = f.read()
            except OSError as exc:
                self._node.get_logger().error(
                    f"cannot read urdf_path '{path}': {exc}; running without a robot model")
                return
            self.load(text, 'file')
        else:
            self._node.get_logger().info(
                'no robot_description/urdf_path parameter: '
                'waiting for the robot_description topic')
            self._subscription = self._node.create_subscription(
                String, 'robot_description', self._on_description, ROBOT_DESCRIPTION_QOS)

    def _on_description(self, msg):
        if self.urdf_xml is not None and msg.data == self.urdf_xml:
            return  # same robot: keep the model (and the node's state)
        self.load(msg.data, 'topic')

    def load(self, urdf_xml, origin):
        """Build the model from ``urdf_xml``; log an error and return None on failure."""
        logger = self._node.get_logger()
        if not _looks_like_xml(urdf_xml):
            logger.error(f'robot description from the {origin} is not URDF XML '
                         f'(starts with {urdf_xml[:40]!r}); running without a robot model')
            return self._set(None, (), None, origin)
        try:
            model, joint_order = build_model(
                urdf_xml, root_link=self._param('root_link'), tip_link=self._param('tip_link'),
                joints=string_list('joints', self._param('joints')),
                gravity=self._param('gravity'))
        except Exception as exc:  # any failure to build leaves the node running
            logger.error(f'cannot build the robot model from the {origin} robot description: '
                         f'{type(exc).__name__}: {exc}; running without a robot model')
            return self._set(None, (), None, origin)
        logger.info(f'robot model from the {origin}: {model.nq} joints {list(joint_order)}, '
                    f'root {model.root_link!r}, tip {model.tip_frame!r}, '
                    f'gravity {np.asarray(model.gravity).tolist()}')
        return self._set(model, joint_order, urdf_xml, origin)

    def _set(self, model, joint_order, urdf_xml, origin):
        had_model = self.model is not None
        self.model, self.joint_order, self.urdf_xml, self.origin = (
            model, tuple(joint_order), urdf_xml, origin)
        if model is not None or had_model:
            self._on_model(model, self.joint_order)
        return model
