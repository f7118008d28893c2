"""``python -m robot_dynamics_ros.demo``: the command users type, kept; the demos are
``robot_dynamics_ros.demos`` (``python -m robot_dynamics_ros.demos``)."""

import sys

from robot_dynamics_ros.demos.__main__ import main

if __name__ == '__main__':
    sys.exit(main())
