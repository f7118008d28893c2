"""The robot in a web browser: the ``viewer`` node (robot_dynamics_ros.nodes.viewer) from the command line.

    python -m robot_dynamics_ros.cli.view [--urdf PATH] [--xacro-args 'name:=value ...'] [--port N]
        [--host H] [--package-path DIR ...] [--show-collisions] [--ros-args ...]

Starts the viewer node in this process with those parameters and prints its URL; open it in a
browser. Without --urdf the robot comes from the /robot_description topic (as a running graph, or
robot_state_publisher, publishes it). Whatever follows ``--ros-args`` is passed to the node after
these (``-r __ns:=/arm``, ``-p frame_rate:=60.0``, ``--params-file config.yaml``). Exit status 1 when
the port is in use; 0 after Ctrl-C.
"""

import argparse
import json
import os
import sys

__all__ = ['main', 'parser', 'ros_arguments']


def parser():
    p = argparse.ArgumentParser(
        prog='python -m robot_dynamics_ros.cli.view',
        description='Show the robot live in a web browser (the viewer node): the arm from /joint_states, '
                    'its targets, paths, wrenches and the nodes\' /diagnostics.',
        epilog='Arguments after --ros-args go to the node (remappings, -p name:=value, --params-file).')
    p.add_argument('--urdf', metavar='PATH', help='URDF or xacro file of the robot (default: the '
                   '/robot_description topic)')
    p.add_argument('--xacro-args', default='', metavar='ARGS',
                   help="arguments of a xacro --urdf, 'name:=value ...'")
    p.add_argument('--port', type=int, default=8080,
                   help='TCP port of the page (default 8080; 0 = any free port)')
    p.add_argument('--host', default='localhost',
                   help="address to serve on (default localhost; 0.0.0.0 for other machines)")
    p.add_argument('--package-path', action='append', default=[], metavar='DIR',
                   help='folder where package:// meshes are looked for (repeatable)')
    p.add_argument('--show-collisions', action='store_true', help='draw the collision geometry too')
    return p


def ros_arguments(options, extra=()):
    """The node's ROS arguments for parsed ``options``, then ``extra`` (what followed --ros-args)."""
    args = ['--ros-args', '-p', f'port:={options.port}', '-p', f'host:={json.dumps(options.host)}']
    if options.urdf:
        args += ['-p', f'urdf_path:={json.dumps(os.path.abspath(options.urdf))}']
    if options.xacro_args:
        args += ['-p', f'xacro_args:={json.dumps(options.xacro_args)}']
    if options.package_path:
        args += ['-p', f'package_paths:={json.dumps([os.path.abspath(p) for p in options.package_path])}']
    if options.show_collisions:
        args += ['-p', 'show_collisions:=true']
    extra = list(extra)
    if extra and extra[0] == '--ros-args':
        extra = extra[1:]
    return args + extra


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    cut = argv.index('--ros-args') if '--ros-args' in argv else len(argv)
    options = parser().parse_args(argv[:cut])
    if options.urdf and not os.path.isfile(options.urdf):
        print(f'view: --urdf {options.urdf}: no such file', file=sys.stderr)
        return 2
    from robot_dynamics_ros.nodes import stop
    stop.install()                      # Ctrl-C while importing rclpy ends the process quietly
    from robot_dynamics_ros.nodes.viewer import main as viewer_main
    return viewer_main(['view'] + ros_arguments(options, argv[cut:]))


if __name__ == '__main__':
    sys.exit(main())
