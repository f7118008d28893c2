"""The command-line tools: ``bringup`` (a node graph in one process, or one per node), ``identify``
(payload and whole-robot identification from a bag), ``precompile`` (every kernel into numba's
cache) and ``resources`` (the package's URDF, config and launch files, installed or in a checkout).
``python -m robot_dynamics_ros.bringup`` and ``python -m robot_dynamics_ros.identify`` still work."""
