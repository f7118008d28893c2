"""Where a node's robot description (URDF text) comes from: the ``robot_description`` parameter, a URDF
or xacro file (``urdf_path``, ``xacro_args``), or the transient-local ``robot_description`` topic.

``DescriptionSource`` declares these parameters and hands every description it gets to
``on_description(text, origin)``, origin 'parameter', 'file' or 'topic', on the executor thread:

- ``robot_description`` (string): URDF XML. Used when non-empty.
- ``urdf_path`` (string): URDF file, used when ``robot_description`` is empty; a xacro file
  (``.xacro``, ``.urdf.xacro``) is expanded with ``xacro_args`` (``logic.robot_description``).
- ``xacro_args`` (string, '' = none): the xacro file's arguments, ``name:=value`` separated by spaces.
- neither set: subscribe to ``robot_description`` (std_msgs/String, reliable, TRANSIENT_LOCAL, depth 1,
  as robot_state_publisher publishes it; /robot_description in the root namespace): every description
  that arrives.
- ``max_description_bytes`` (integer, default 10 MiB; settable at run time): a larger description (the
  parameter's or file's UTF-8 bytes, a xacro file's after expansion; on the topic the serialized
  message, checked before it is deserialized) is refused with a warning and changes nothing.

ModelSource builds the dynamics model from it; state_publisher and the viewer build the whole
kinematic tree (dynamics.kinematic_tree).
"""

from rclpy.serialization import deserialize_message
from std_msgs.msg import String

from robot_dynamics_ros.logic.input_guard import WarningThrottle, bounded
from robot_dynamics_ros.logic.robot_description import DescriptionTooLarge, is_xacro, read_description
from robot_dynamics_ros.nodes.common import LATCHED_QOS, describe

__all__ = ['DescriptionSource', 'ROBOT_DESCRIPTION_QOS', 'DEFAULT_MAX_DESCRIPTION_BYTES', 'looks_like_xml']

DEFAULT_MAX_DESCRIPTION_BYTES = 10 * 1024 * 1024

# As robot_state_publisher publishes it: late joiners get the last description.
ROBOT_DESCRIPTION_QOS = LATCHED_QOS


def looks_like_xml(text):
    return text.lstrip().startswith('<')


class DescriptionSource:
    """The description parameters on ``node`` (module docstring); ``start()`` reads the parameter or
    the file now, or subscribes to the topic. ``kept()``: what the node keeps when a description is
    refused, in words ('keeping the current model'). ``subscription``: the topic's, or None."""

    def __init__(self, node, on_description, throttle=None, kept=lambda: 'keeping the current one'):
        self._node = node
        self._on_description = on_description
        self._throttle = throttle or WarningThrottle(node.get_logger())
        self._kept = kept
        self.subscription = None
        node.declare_parameter('robot_description', '', describe(
            'URDF XML of the robot. Empty: use urdf_path, else the robot_description topic.',
            read_only=True))
        node.declare_parameter('urdf_path', '', describe(
            'Path of a URDF file, used when robot_description is empty. A xacro file (.xacro, '
            '.urdf.xacro, as vendors ship their arms) is expanded with xacro_args by the xacro package '
            '(pip install xacro; $(find pkg) through the ament index), and the URDF it gives is used.',
            read_only=True))
        node.declare_parameter('xacro_args', '', describe(
            "Arguments of a xacro urdf_path, as on xacro's command line: name:=value separated by "
            "spaces, e.g. 'ur_type:=ur5e name:=ur' (a value with spaces in quotes). '' = none: the "
            "file's defaults. Unused for a URDF file.", read_only=True))
        node.declare_parameter('max_description_bytes', DEFAULT_MAX_DESCRIPTION_BYTES, describe(
            'Largest robot description accepted, bytes; a larger one is refused (the current '
            'model is kept).', integer=True, min_value=1, max_value=2**31 - 1))

    def _param(self, name):
        return self._node.get_parameter(name).value

    @property
    def where(self):
        """Where the description comes from, in words (/diagnostics): 'robot_description parameter',
        'urdf_path <path>' or '<topic> topic' (the parameters are read-only: fixed at start-up)."""
        if self._param('robot_description'):
            return 'robot_description parameter'
        if self._param('urdf_path'):
            return f"urdf_path {bounded(self._param('urdf_path'), 200)}"
        topic = self.subscription.topic_name if self.subscription is not None else 'robot_description'
        return f'{topic} topic'

    def too_large(self, size, origin):
        """True (and a warning) when ``size`` bytes exceed max_description_bytes."""
        limit = int(self._param('max_description_bytes'))
        if size <= limit:
            return False
        self._throttle.warn('description/too_large',
                            f'robot description from the {origin} refused: {size} bytes, more '
                            f'than max_description_bytes = {limit}; {self._kept()}')
        return True

    def start(self):
        """Hand over the parameter's or the file's description now, or subscribe to the topic."""
        description = self._param('robot_description')
        path = self._param('urdf_path')
        if description:
            if not self.too_large(len(description.encode('utf-8')), 'parameter'):
                self._on_description(description, 'parameter')
        elif path:
            xacro_args = self._param('xacro_args')
            if xacro_args and not is_xacro(path):
                self._node.get_logger().warning(
                    f"xacro_args {bounded(repr(xacro_args), 200)} unused: urdf_path "
                    f"'{bounded(path, 300)}' is not a xacro file (.xacro)")
            try:
                text = read_description(path, xacro_args,
                                        max_bytes=int(self._param('max_description_bytes')))
            except DescriptionTooLarge as exc:
                self.too_large(exc.size, 'file')
                return
            except (OSError, ValueError) as exc:    # ValueError: a xacro file that cannot be expanded
                self._node.get_logger().error(
                    f"cannot read urdf_path '{bounded(path, 300)}': {bounded(exc, 600)}; "
                    'running without a robot model')
                return
            self._on_description(text, 'file')
        else:
            self._node.get_logger().info(
                'no robot_description/urdf_path parameter: '
                'waiting for the robot_description topic')
            # raw: the size is checked before rclpy converts the message
            self.subscription = self._node.create_subscription(
                String, 'robot_description', self._on_message, ROBOT_DESCRIPTION_QOS, raw=True)

    def _on_message(self, raw):
        if self.too_large(len(raw), 'topic'):
            return
        try:
            text = deserialize_message(raw, String).data
        except Exception as exc:  # a message the middleware delivered but rclpy cannot read
            self._throttle.warn('description/malformed',
                                f'unreadable robot_description message: {bounded(exc, 300)}')
            return
        self._on_description(text, 'topic')
