"""``python -m robot_dynamics_ros.precompile``: the command users type, kept; the tool is
``robot_dynamics_ros.cli.precompile``."""

import sys

from robot_dynamics_ros.cli.precompile import main

if __name__ == '__main__':
    sys.exit(main())
