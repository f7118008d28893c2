"""``python -m robot_dynamics_ros.identify``: the command users type, kept; the tool is
``robot_dynamics_ros.cli.identify``."""

import sys

from robot_dynamics_ros.cli.identify import main

if __name__ == '__main__':
    sys.exit(main())
