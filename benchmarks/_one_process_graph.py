"""simulator_node and computed_torque_node in one process on one EventsExecutor, as bring-up runs a graph
(``python -m robot_dynamics_ros.cli.bringup``): the one-process setting of run.py's section
``mujoco_engine`` (benchmarks/_mujoco_engine.py).

    python benchmarks/_one_process_graph.py SIMULATOR_PARAMETERS_JSON CONTROLLER_PARAMETERS_JSON

Each JSON object maps parameter names to values written as on a ``-p name:=value`` command line (YAML
scalars and lists). Runs until SIGTERM or SIGINT, then destroys both nodes.
"""
import json
import signal
import sys

import rclpy
import yaml
from rclpy.parameter import Parameter

from robot_dynamics_ros.nodes.common import make_executor
from robot_dynamics_ros.nodes.computed_torque_node import ComputedTorqueController
from robot_dynamics_ros.nodes.simulator_node import SimulatorNode


def _overrides(text):
    return [Parameter(name, value=yaml.safe_load(value)) for name, value in json.loads(text).items()]


def main(simulator_json, controller_json):
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(True))
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    nodes = [SimulatorNode(parameter_overrides=_overrides(simulator_json)),
             ComputedTorqueController(parameter_overrides=_overrides(controller_json))]
    executor = make_executor()
    for node in nodes:
        executor.add_node(node)
    try:
        while not stop:
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.shutdown(timeout_sec=1.0)
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main(*sys.argv[1:3])
