"""The command-line tools: ``bringup`` (a node graph in one process, or one per node: the graphs in
``node_graph``, the processes in ``node_processes``), ``identify`` (payload and whole-robot
identification from a bag; the bag's joint states read by ``joint_bag``), ``precompile`` (every
kernel into numba's cache), ``view`` (the viewer node from the command line) and ``resources`` (the
package's URDF, config and launch files, installed or in a checkout). Each tool runs as ``python -m
robot_dynamics_ros.cli.<tool>`` and as the console script of its name (setup.py)."""
