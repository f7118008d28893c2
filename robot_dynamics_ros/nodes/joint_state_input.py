"""The ``joint_states`` subscription shared by dynamics_node and computed_torque_controller.

Subscribes to ``joint_states`` (sensor_msgs/JointState; /joint_states in the root namespace),
merges messages by joint name into a ``JointStateCache`` in model order, drops malformed messages
with a throttled warning, and calls ``on_state(msg)`` after every valid message once every model
joint has been heard of. While a joint is missing it warns (throttled) naming the missing joints.
"""

from sensor_msgs.msg import JointState

from robot_dynamics_ros.nodes.conversions import JointStateCache

__all__ = ['JointStateInput']


class JointStateInput:
    def __init__(self, node, throttle, on_state=None, topic='joint_states', qos=10):
        self._node = node
        self._throttle = throttle
        self._on_state = on_state
        self.cache = None
        self.last_msg = None
        self.last_ns = 0          # node-clock time at which last_msg was received
        self.subscription = node.create_subscription(JointState, topic, self._on_msg, qos)

    def reset(self, joint_names):
        """Track ``joint_names`` (model order), forgetting all heard so far; None = no model."""
        self.cache = JointStateCache(joint_names) if joint_names else None
        self.last_msg = None

    def now_ns(self):
        return self._node.get_clock().now().nanoseconds

    def _on_msg(self, msg):
        if self.cache is None:
            self._throttle.warn('joint_states/no_model',
                                'joint states received but there is no robot model yet: ignored')
            return
        now_ns = self.now_ns()
        try:
            self.cache.update(msg, now_ns)
        except ValueError as exc:
            self._throttle.warn(f'joint_states/bad/{exc}', f'dropping a JointState message: {exc}')
            return
        self.last_msg = msg
        self.last_ns = now_ns
        if not self.check_complete():
            return
        if self._on_state is not None:
            self._on_state(msg)

    @property
    def complete(self):
        return self.cache is not None and self.cache.complete

    def check_complete(self):
        """True when every model joint has been heard of; otherwise warn (throttled) and False."""
        if self.cache is None:
            return False
        if self.cache.complete:
            return True
        missing = self.cache.missing()
        self._throttle.warn('joint_states/missing',
                            f'no joint state received yet for joints {missing}: no output until '
                            'every joint of the model has been heard of')
        return False
