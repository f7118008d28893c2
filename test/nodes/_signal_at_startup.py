"""A node's console script that sends itself a signal at a chosen instant of its start-up, for the
start-up signal tests (test_startup.py): a chosen, repeatable instant instead of after a sleep.

    python test/nodes/_signal_at_startup.py SIGNUM K [node arguments ...]

Runs the dynamics_node console script (robot_dynamics_ros.nodes.launcher) and sends itself SIGNUM
when the K-th module is loaded after the stop handler is installed (a finder on sys.meta_path counts
them; those loaded inside main(), building the model and compiling, count too), or right before
main() when the node's import loaded fewer.
"""
import os
import sys

from robot_dynamics_ros.nodes import launcher, stop


class SignalAtLoad:
    """A meta-path finder that counts module loads and sends the signal at the at-th; finds nothing
    itself (the other finders load the module)."""

    def __init__(self, signum, at):
        self.signum, self.at = signum, at
        self.count, self.sent = 0, False

    def send(self):
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), self.signum)

    def find_spec(self, name, path=None, target=None):
        self.count += 1
        if self.count == self.at:
            self.send()
        return None


def main():
    signum, at = int(sys.argv[1]), int(sys.argv[2])
    sys.argv[1:] = sys.argv[3:]
    stop.install()              # as the console script does first; launcher.run keeps this handler
    finder = SignalAtLoad(signum, at)
    sys.meta_path.insert(0, finder)

    def import_main():
        main = launcher._import_dynamics_node()
        if finder.count < at:   # the import loaded fewer modules: right before main()
            finder.send()
        return main

    sys.exit(launcher.run(import_main))


if __name__ == '__main__':
    main()
