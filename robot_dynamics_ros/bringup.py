"""``python -m robot_dynamics_ros.bringup``: the command users type, kept; the tool is
``robot_dynamics_ros.cli.bringup``."""

import sys

from robot_dynamics_ros.cli.bringup import main

if __name__ == '__main__':
    sys.exit(main())
