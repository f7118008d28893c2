"""The console scripts of the nodes (setup.py): SIGINT and SIGTERM handled from the first moment.

A node's module imports rclpy, numpy and numba (about a second). Python's default SIGINT handling
would print a KeyboardInterrupt traceback from inside those imports, so each script installs the
process's stop handler (stop.py, standard library only) before importing its node: a signal during
the imports ends the process with exit 0, also where the KeyboardInterrupt would be swallowed (the
request is kept, checked before main(), and the deadline ends the process). Then ``common.run_node``
takes over the same handler (start-up interrupted where it is, spinning stopped at its next turn).

Each node's module is imported inside its function (``_import_<node>``), not at the top of this file:
a script must import only its own node (the viewer alone pulls in viser and trimesh), and only after
the stop handler is in place (a node's start-up time is benchmarked: benchmarks/_ros.py, process
start to its first output).
"""
import sys

from robot_dynamics_ros.nodes import stop


def run(import_main):
    """Install the stop handler, call ``import_main()`` (imports the node's module, returns its main)
    and run that main(); a stop requested before main() ends the process with exit 0. After a stop,
    once main()'s clean-up is done, the process ends at once: the interpreter's own finalisation
    (freeing numba's and LLVM's state, half a second to two on a loaded machine) would run where the
    deadline's thread can no longer end it."""
    request = stop.install()
    try:
        main = import_main()
        if request.requested:       # raised where it was swallowed: the import went on
            code = 0
        else:
            code = main()
    except KeyboardInterrupt:
        code = 0
    if request.requested:
        stop.exit_now()
    return code


def _import_dynamics_node():
    from robot_dynamics_ros.nodes.dynamics_node import main
    return main


def _import_computed_torque_node():
    from robot_dynamics_ros.nodes.computed_torque_node import main
    return main


def _import_simulator_node():
    from robot_dynamics_ros.nodes.simulator_node import main
    return main


def _import_external_torque_estimator():
    from robot_dynamics_ros.nodes.external_torque_estimator import main
    return main


def _import_task_space_controller():
    from robot_dynamics_ros.nodes.task_space_controller import main
    return main


def _import_mpc_controller():
    from robot_dynamics_ros.nodes.mpc_controller import main
    return main


def _import_trajectory_feedforward():
    from robot_dynamics_ros.nodes.trajectory_feedforward import main
    return main


def _import_state_publisher():
    from robot_dynamics_ros.nodes.state_publisher import main
    return main


def _import_viewer():
    from robot_dynamics_ros.nodes.viewer import main
    return main


def dynamics_node():
    sys.exit(run(_import_dynamics_node))


def computed_torque_controller():
    sys.exit(run(_import_computed_torque_node))


def simulator_node():
    sys.exit(run(_import_simulator_node))


def external_torque_estimator():
    sys.exit(run(_import_external_torque_estimator))


def task_space_controller():
    sys.exit(run(_import_task_space_controller))


def mpc_controller():
    sys.exit(run(_import_mpc_controller))


def trajectory_feedforward():
    sys.exit(run(_import_trajectory_feedforward))


def state_publisher():
    sys.exit(run(_import_state_publisher))


def viewer():
    sys.exit(run(_import_viewer))
