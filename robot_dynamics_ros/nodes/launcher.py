"""The console scripts of the nodes (setup.py): SIGINT and SIGTERM handled from the first moment.

A node's module imports rclpy, numpy and numba (about a second). Python's default SIGINT handling
would print a KeyboardInterrupt traceback from inside those imports, so each script installs the
process's stop handler (stop.py, standard library only) before importing its node: a signal during
the imports ends the process with exit 0, also where the KeyboardInterrupt would be swallowed (the
request is kept, checked before main(), and the deadline ends the process). Then ``common.run_node``
takes over the same handler (start-up interrupted where it is, spinning stopped at its next turn).
"""
import importlib
import os
import sys

from robot_dynamics_ros.nodes import stop


def _run(module):
    """Import the node's module and run its main(); a stop requested before main() ends the process
    with exit 0. After a stop, once main()'s clean-up is done, the process ends at once: the
    interpreter's own finalisation (freeing numba's and LLVM's state, half a second to two on a loaded
    machine) would run where the deadline's thread can no longer end it."""
    request = stop.install()
    before_main = _test_signal_hook()
    try:
        main = importlib.import_module(f'robot_dynamics_ros.nodes.{module}').main
        before_main()
        if request.requested:       # raised where it was swallowed: the import went on
            code = 0
        else:
            code = main()
    except KeyboardInterrupt:
        code = 0
    if request.requested:
        stop.exit_now()
    return code


def _test_signal_hook():
    """For the start-up signal tests only: ROBOT_DYNAMICS_ROS_TEST_SIGNAL=<signal number>:<k> makes the
    process send itself that signal when the k-th module is loaded (a finder on sys.meta_path counts
    them; those loaded inside main(), building the model and compiling, count too), or right before
    main() when the import had fewer: a signal at a chosen, repeatable instant of the start-up instead
    of after a sleep. Returns the before-main() call (nothing without the variable)."""
    spec = os.environ.get('ROBOT_DYNAMICS_ROS_TEST_SIGNAL')
    if not spec:
        return lambda: None
    signum, at = (int(x) for x in spec.split(':'))
    state = {'count': 0, 'sent': False}

    def send():
        if not state['sent']:
            state['sent'] = True
            os.kill(os.getpid(), signum)

    class SignalAtLoad:
        def find_spec(self, name, path=None, target=None):
            state['count'] += 1
            if state['count'] == at:
                send()
            return None             # the other finders load it

    sys.meta_path.insert(0, SignalAtLoad())
    return lambda: None if state['count'] >= at else send()


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


def mpc_controller():
    sys.exit(_run('mpc_controller'))


def trajectory_feedforward():
    sys.exit(_run('trajectory_feedforward'))


def state_publisher():
    sys.exit(_run('state_publisher'))


def viewer():
    sys.exit(_run('viewer'))


EXECUTABLES = {'dynamics_node': 'dynamics_node', 'computed_torque_controller': 'computed_torque_node',
               'simulator_node': 'simulator_node', 'external_torque_estimator': 'external_torque_estimator',
               'task_space_controller': 'task_space_controller', 'mpc_controller': 'mpc_controller',
               'trajectory_feedforward': 'trajectory_feedforward', 'state_publisher': 'state_publisher',
               'viewer': 'viewer'}
# the other executables: their modules
TOOLS = {'bringup': 'robot_dynamics_ros.cli.bringup', 'demo': 'robot_dynamics_ros.demos.__main__'}


def main(argv=None):
    """``python -m robot_dynamics_ros.nodes.launcher EXECUTABLE [args]``: what the executables in
    <prefix>/lib/robot_dynamics_ros run after a wheel install (setup.py writes them; a wheel cannot put
    console scripts there): a node, or bringup / demo."""
    argv = list(sys.argv[1:] if argv is None else argv)
    names = (*EXECUTABLES, *TOOLS)
    if not argv or argv[0] not in names:
        print(f'usage: python -m robot_dynamics_ros.nodes.launcher {{{",".join(names)}}} [arguments]',
              file=sys.stderr)
        return 2
    name, sys.argv[1:] = argv[0], argv[1:]
    sys.argv[0] = name
    if name in EXECUTABLES:
        return _run(EXECUTABLES[name])
    return importlib.import_module(TOOLS[name]).main()


if __name__ == '__main__':
    sys.exit(main())
