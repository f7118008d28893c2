"""Helpers of the tests in test/launch: wait for messages with rclpy, finite timeouts only."""

import time

import numpy as np


def message_values(msg):
    """The numbers a message carries (JointState: position, velocity, effort; else .data)."""
    if hasattr(msg, 'data'):
        return np.asarray(msg.data, dtype=np.float64)
    return np.concatenate([np.asarray(getattr(msg, f), dtype=np.float64)
                           for f in ('position', 'velocity', 'effort')])


def node_executor(node):
    """A SingleThreadedExecutor on ``node``'s context with ``node`` added (the global
    rclpy.spin_once works only for nodes of the default context)."""
    from rclpy.executors import SingleThreadedExecutor

    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    return executor


def wait_for_messages(node, topics, *, timeout, count=3, executor=None):
    """Subscribe ``node`` to ``topics`` ({name: msg type}) and spin until each delivered ``count``
    messages or ``timeout`` s passed. Returns {name: [messages]}.

    Spins with spin_once(timeout_sec=...) only (EventsExecutor hangs without a timeout).
    """
    received = {topic: [] for topic in topics}
    subscriptions = [
        node.create_subscription(msg_type, topic, lambda msg, t=topic: received[t].append(msg), 10)
        for topic, msg_type in topics.items()
    ]
    own_executor = executor is None
    if own_executor:
        executor = node_executor(node)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(len(msgs) >= count for msgs in received.values()):
                break
            executor.spin_once(timeout_sec=0.05)
    finally:
        if own_executor:
            executor.remove_node(node)
            executor.shutdown(timeout_sec=1.0)
        for subscription in subscriptions:
            node.destroy_subscription(subscription)
    return received
