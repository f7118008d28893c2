"""Helpers of the tests in test/launch: wait for messages with rclpy, finite timeouts only."""

import time

import numpy as np


def message_values(msg):
    """The numbers a message carries (JointState: position, velocity, effort; else .data)."""
    if hasattr(msg, 'data'):
        return np.asarray(msg.data, dtype=np.float64)
    return np.concatenate([np.asarray(getattr(msg, f), dtype=np.float64)
                           for f in ('position', 'velocity', 'effort')])


def wait_for_messages(node, topics, *, timeout, count=3, executor=None):
    """Subscribe ``node`` to ``topics`` ({name: msg type}) and spin until each delivered ``count``
    messages or ``timeout`` s passed. Returns {name: [messages]}.

    Spins with spin_once(timeout_sec=...) only (EventsExecutor hangs without a timeout).
    """
    import rclpy

    received = {topic: [] for topic in topics}
    subscriptions = [
        node.create_subscription(msg_type, topic, lambda msg, t=topic: received[t].append(msg), 10)
        for topic, msg_type in topics.items()
    ]
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(len(msgs) >= count for msgs in received.values()):
                break
            if executor is None:
                rclpy.spin_once(node, timeout_sec=0.05)
            else:
                executor.spin_once(timeout_sec=0.05)
    finally:
        for subscription in subscriptions:
            node.destroy_subscription(subscription)
    return received
