"""The newest message of every topic of given types and names, found by discovery: what a viewer needs
of a graph it was not configured for, without queueing a 1 kHz stream.

``LatestMessages(node, streams, throttle)``: ``streams`` is {kind: (type as the graph names it, e.g.
'sensor_msgs/msg/JointState', the topic's last name, module, class)}. ``discover()`` (the node calls it
every second) subscribes to every topic whose last name and type match a stream, under any namespace
and node name, with depth 1: best effort for joint states, else the reliability and durability its
publishers offer (all reliable: reliable; all transient local: transient local, as rosbag2 does), and
raw (``raw=True``): the callback keeps the message's bytes and arrival time, nothing else, so the
newest one replaces the one before and none is converted that is never read. ``read(topic)``
converts the newest message once (the same message read again returns the value read before).
``applied``: the wrench topics that are a node's input (a topic under a node's name that the node
subscribes to: the push simulator_node applies), as opposed to an output (an estimate).
"""

import time

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message

from robot_dynamics_ros.logic.input_guard import bounded

__all__ = ['LatestMessages']


class LatestMessages:
    """The newest message of each discovered topic (module docstring). ``topics``: {topic: kind};
    ``on_arrival(kind)``: called in the subscription callback (e.g. a rate meter), optional."""

    def __init__(self, node, streams, throttle, on_arrival=None):
        self._node = node
        self._streams = streams
        self._throttle = throttle
        self._on_arrival = on_arrival
        self.topics = {}
        self.applied = set()
        self._subscriptions = {}
        self._latest = {}               # topic -> (raw bytes, arrival s, monotonic)
        self._read = {}                 # topic -> (the raw bytes read last, their value, arrival)
        self._classes = {}

    def message_class(self, kind):
        """The message class of a stream (None, and a warning, when it is not importable)."""
        if kind not in self._classes:
            _, _, module, name = self._streams[kind]
            try:
                self._classes[kind] = getattr(__import__(module, fromlist=[name]), name)
            except (ImportError, AttributeError) as exc:
                self._node.get_logger().warning(f'{module}.{name} is not importable ({exc}): no {kind} shown')
                self._classes[kind] = None
        return self._classes[kind]

    def _qos(self, topic, kind):
        if kind == 'joint_states':
            return QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        infos = self._node.get_publishers_info_by_topic(topic)
        reliable = bool(infos) and all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
        latched = bool(infos) and all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                                      for i in infos)
        return QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE if reliable
                          else ReliabilityPolicy.BEST_EFFORT,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                          else DurabilityPolicy.VOLATILE)

    def discover(self):
        """Subscribe to the new topics of the streams' types and names; classify the wrench topics."""
        node = self._node
        for topic, types in node.get_topic_names_and_types():
            last = topic.rsplit('/', 1)[-1]
            for kind, (type_name, suffix, _, _) in self._streams.items():
                if last != suffix or type_name not in types or topic in self.topics:
                    continue
                if kind != 'joint_states' and not node.get_publishers_info_by_topic(topic):
                    continue                # (the QoS comes from the publishers: wait for one)
                cls = self.message_class(kind)
                if cls is None:
                    continue
                self._subscriptions[topic] = node.create_subscription(
                    cls, topic, self._keeper(topic, kind), self._qos(topic, kind), raw=True)
                self.topics[topic] = kind
                node.get_logger().info(f'showing {topic} ({kind})')
            if last == 'external_wrench' and topic in self.topics:
                owner = topic.rsplit('/', 1)[0]
                applied = any(f"{i.node_namespace.rstrip('/')}/{i.node_name}" == owner
                              for i in node.get_subscriptions_info_by_topic(topic))
                (self.applied.add if applied else self.applied.discard)(topic)

    def _keeper(self, topic, kind):
        """The subscription callback: keep the message's bytes and its arrival, nothing else."""
        latest, clock, on_arrival = self._latest, time.monotonic, self._on_arrival
        if on_arrival is None:
            def keep(raw):
                latest[topic] = (raw, clock())
        else:
            def keep(raw):
                latest[topic] = (raw, clock())
                on_arrival(kind)
        return keep

    def has_new(self, topic):
        """A message of ``topic`` arrived that ``read`` has not converted."""
        newest = self._latest.get(topic)
        return newest is not None and (topic not in self._read or self._read[topic][0] is not newest[0])

    def read(self, topic):
        """(value, arrival s) of the newest message of ``topic``, converted once; (None, None) before
        one arrived, (None, arrival) for one rclpy cannot read (a throttled warning)."""
        newest = self._latest.get(topic)
        if newest is None:
            return None, None
        raw, arrived = newest
        last = self._read.get(topic)
        if last is not None and last[0] is raw:
            return last[1], last[2]
        kind = self.topics[topic]
        try:
            value = deserialize_message(raw, self.message_class(kind))
        except Exception as exc:  # a message the middleware delivered but rclpy cannot read
            self._throttle.warn(f'{kind}/malformed', f'unreadable {topic} message: {bounded(exc, 300)}')
            value = None
        self._read[topic] = (raw, value, arrived)
        return value, arrived

    def forget_reads(self):
        """Convert every newest message again at its next read (a new model: read them for it)."""
        self._read.clear()
