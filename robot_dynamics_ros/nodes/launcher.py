"""The console scripts of the nodes (setup.py): SIGINT and SIGTERM handled from the first moment.

A node's module imports rclpy, numpy and numba (about a second). Python's default SIGINT handling
would print a KeyboardInterrupt traceback from inside those imports, so each script installs its
handlers before importing its node: a signal during the imports ends the process with exit 0. Then
``common.run_node`` takes over (start-up interrupted where it is, spinning stopped at its next turn).
"""
import importlib
import signal
import sys


def _stop_importing(signum, frame):
    raise KeyboardInterrupt


def _run(module):
    """Import the node's module and run its main(); a signal before main() installs its own
    handlers (common.run_node) ends the process with exit 0."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stop_importing)
    try:
        main = importlib.import_module(f'robot_dynamics_ros.nodes.{module}').main
        return main()
    except KeyboardInterrupt:
        return 0


def dynamics_node():
    sys.exit(_run('dynamics_node'))


def computed_torque_controller():
    sys.exit(_run('computed_torque_node'))


def simulator_node():
    sys.exit(_run('simulator_node'))


def external_torque_estimator():
    sys.exit(_run('external_torque_estimator'))


def task_space_controller():
    sys.exit(_run('task_space_controller'))
