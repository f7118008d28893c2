#!/usr/bin/env python3
"""dynamics_node's joint-state callback, timed in process: the time from a JointState arriving at the
subscription callback to its four outputs published (g, c, M, Λ at the tip), without DDS delivery.

    .venv-jazzy/bin/python benchmarks/_node_callback.py [--messages 3000] [--rounds 7]

Prints one JSON object: per-message callback time (median over rounds of the per-round mean, µs),
quartiles of the rounds, and the settings. The node is the real DynamicsNode (rclpy initialised,
publishers real, nobody subscribed); the Panda of the node benchmark (7 arm joints, fingers locked).
Run by run.py's node section; also runs against another checkout (PYTHONPATH=<checkout>) for a
before/after comparison, since it uses only the node's subscription callback.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rclpy
from sensor_msgs.msg import JointState

from _robots import PANDA_ARM_JOINTS, PANDA_READY, PANDA_URDF


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=3000)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args()
    from rclpy.parameter import Parameter

    from robot_dynamics_ros.nodes.dynamics_node import DynamicsNode
    rclpy.init(args=["--ros-args", "--disable-rosout-logs", "--log-level", "error"])
    node = DynamicsNode(parameter_overrides=[
        Parameter("urdf_path", value=str(PANDA_URDF)), Parameter("joints", value=list(PANDA_ARM_JOINTS)),
        Parameter("task_space_damping", value=1e-6)])
    try:
        deadline = time.monotonic() + 120.0
        while node.model is None and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        assert node.model is not None, "dynamics_node loaded no model"
        on_message = node._input.subscription.callback     # what the executor calls (timing for /diagnostics)
        msgs = []
        for k in range(64):
            msg = JointState(name=list(PANDA_ARM_JOINTS), position=[float(x) for x in PANDA_READY + 1e-3 * k],
                             velocity=[0.1] * 7, effort=[0.0] * 7)
            msg.header.stamp.sec = 1000 + k
            msgs.append(msg)
        for msg in msgs * 20:                      # warm-up: kernels loaded, messages built
            on_message(msg)
        per_message = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            for k in range(args.messages):
                on_message(msgs[k % 64])
            per_message.append((time.perf_counter() - start) / args.messages * 1e6)
        q = statistics.quantiles(per_message, n=4)
        print(json.dumps({"callback_us": statistics.median(per_message), "q1_us": q[0], "q3_us": q[2],
                          "min_us": min(per_message), "messages": args.messages, "rounds": args.rounds,
                          "outputs": "g, c, M, Lambda (tip, world_aligned)"}))
    finally:
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    main()
