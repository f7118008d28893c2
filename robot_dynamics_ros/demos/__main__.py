"""``python -m robot_dynamics_ros.demos`` (``make demo``; the ``demo`` console script too): picks the demo
from the options and runs it.

    python -m robot_dynamics_ros.demos                  the joint-space demo (joint_space_demo.py)
    python -m robot_dynamics_ros.demos --task-space     task_space_demo.py
    python -m robot_dynamics_ros.demos --mpc            mpc_demo.py
    python -m robot_dynamics_ros.demos --payload        payload_demo.py
    python -m robot_dynamics_ros.demos --lqr            lqr_demo.py
    python -m robot_dynamics_ros.demos --identify       identify_demo.py
    python -m robot_dynamics_ros.demos --hardware       hardware_demo.py
    python -m robot_dynamics_ros.demos --feedforward    feedforward_demo.py
    python -m robot_dynamics_ros.demos --mujoco         mujoco_demo.py
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from robot_dynamics_ros.cli import bringup
from robot_dynamics_ros.logic.robot_description import DescriptionError

__all__ = ['build_parser', 'main']


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='python -m robot_dynamics_ros.demos',
        description='Simulated UR5e under computed-torque control: tracking errors, topic rates '
                    'and a plot (out/demo.png).')
    parser.add_argument('--duration', type=float, default=8.0,
                        help='trajectory length [s] (default: 8)')
    parser.add_argument('--knot-step', type=float, default=0.5,
                        help='time between trajectory knots [s] (default: 0.5)')
    parser.add_argument('--settle', type=float, default=1.0,
                        help='recording time after the trajectory ends [s] (default: 1)')
    parser.add_argument('--output', default=os.path.join('out', 'demo.png'),
                        help='PNG file to write (default: out/demo.png)')
    parser.add_argument('--no-plot', action='store_true', help='do not draw the PNGs')
    parser.add_argument('--via', choices=('action', 'topic'), default='action',
                        help='send the trajectory as a FollowJointTrajectory goal (default, as MoveIt) '
                             'or on the joint_trajectory topic')
    parser.add_argument('--no-push', dest='push', action='store_false',
                        help='do not push on the arm during the trajectory')
    parser.add_argument('--mode', choices=('bringup', 'processes', 'in-process'),
                        default='bringup',
                        help='bringup: every node of the graph in one `python -m '
                             'robot_dynamics_ros.cli.bringup` process, the recorder here (default); '
                             'processes: one process per node; in-process: nodes and recorder in this '
                             'process')
    parser.add_argument('--no-viewer', action='store_true',
                        help='do not start the browser viewer beside the graph (default: it runs in a '
                             'process of its own and the demo prints its address)')
    parser.add_argument('--viewer-port', type=int, default=8080, metavar='PORT',
                        help='the viewer\'s port: http://localhost:PORT (default: 8080)')
    parser.add_argument('--viewer-wait', type=float, default=10.0, metavar='S',
                        help='wait up to S seconds for a browser to open the viewer before the arm moves '
                             '(default: 10; 0: no wait)')
    parser.add_argument('--executor', choices=('events', 'single', 'multi'), default='events',
                        help='executor of the node graph and of the recorder (default: events)')
    parser.add_argument('--config', metavar='FILE', help='parameter file '
                        '(default: the package\'s config/simulation.yaml)')
    parser.add_argument('--urdf', metavar='FILE', help='robot URDF (default: urdf/ur5e.urdf), or a xacro '
                        'file (.xacro) expanded with --xacro-args')
    parser.add_argument('--xacro-args', default='', metavar="'NAME:=VALUE ...'",
                        help="the arguments of a xacro --urdf, as on xacro's command line, e.g. "
                             "'ur_type:=ur5e name:=ur' (default: none, the file's defaults)")
    parser.add_argument('--startup-timeout', type=float, default=120.0,
                        help='wait this long for the graph to answer [s] (default: 120; the '
                             'first run compiles the dynamics kernels)')
    parser.add_argument('--settle-timeout', type=float, default=5.0,
                        help='wait this long for the arm to come to rest before the trajectory '
                             '[s] (default: 5)')
    parser.add_argument('--max-error', type=float, default=0.05,
                        help='fail if any joint\'s tracking error exceeds this [rad] '
                             '(default: 0.05)')
    task = parser.add_argument_group('task space (task_space_demo.py)')
    task.add_argument('--task-space', action='store_true',
                      help='instead: task_space_controller moves the tool to the corners of a square '
                           '(out/demo_task_space.png)')
    task.add_argument('--side', type=float, default=0.12, help='side of the square [m] (default: 0.12)')
    task.add_argument('--turn', type=float, default=0.3,
                      help='turn of the tool about its z axis at the corners [rad] (default: 0.3)')
    task.add_argument('--dwell', type=float, default=0.5,
                      help='simulated time at each corner after the desired pose reached it [s] '
                           '(default: 0.5)')
    task.add_argument('--max-position-error', type=float, default=1e-3,
                      help='fail if the tool is farther than this from a corner [m] (default: 0.001)')
    task.add_argument('--max-orientation-error', type=float, default=0.01,
                      help='fail if the tool is turned more than this from a corner [rad] '
                           '(default: 0.01)')
    mpc = parser.add_argument_group('model-predictive control (mpc_demo.py; also --side, --turn, --dwell, '
                                    '--max-position-error, --max-orientation-error)')
    mpc.add_argument('--mpc', action='store_true',
                     help='instead: mpc_controller moves the tool to the corners of a square with the torque '
                          'limits on (out/demo_mpc.png)')
    mpc.add_argument('--target-timeout', type=float, default=8.0,
                     help='simulated time to reach a target before the next is sent [s] (default: 8)')
    parser.add_argument('--lqr', action='store_true',
                        help='instead: an LQR designed from linearize holds the arm at a pose from a knocked '
                             'start, simulated without ROS (out/demo_lqr.png)')
    payload = parser.add_argument_group('payload (payload_demo.py)')
    payload.add_argument('--payload', action='store_true',
                         help='instead: the arm carries a payload the controller does not know; '
                              '/dynamics_node/identify_payload finds it, the controller is told, the error '
                              'drops (out/demo_payload.png)')
    payload.add_argument('--payload-mass', type=float, default=2.0,
                         help='mass of the simulated payload at tool0 [kg] (default: 2)')
    ident = parser.add_argument_group('identification (identify_demo.py)')
    ident.add_argument('--identify', action='store_true',
                       help='instead: the simulator plays a real arm the URDF describes only roughly; an '
                            'excitation trajectory is recorded to a bag, `identify robot` identifies the '
                            'arm, the controllers run on it (out/demo_identify.png)')
    ident.add_argument('--excitation-duration', type=float, default=20.0,
                       help='length of the recorded excitation trajectory [s] (default: 20)')
    parser.add_argument('--hardware', action='store_true',
                        help='instead: the simulator plays an arm whose firmware adds g(q) and reports '
                             'gravity-compensated efforts; the controller with the right hardware profile '
                             'tracks, with the wrong one and check_effort_convention false it drifts, with '
                             'the default check it refuses and commands nothing (out/demo_hardware.png)')
    parser.add_argument('--feedforward', action='store_true',
                        help='instead: the same goal twice on a stand-in for ros2_control\'s '
                             'JointTrajectoryController (PD on an effort interface): straight, efforts '
                             'empty, and through trajectory_feedforward, efforts filled with the inverse '
                             'dynamics; the tracking errors compared (out/demo_feedforward.png; the nodes '
                             'run in this process)')
    mujoco = parser.add_argument_group('MuJoCo (mujoco_demo.py; also --dwell)')
    mujoco.add_argument('--mujoco', action='store_true',
                        help='instead: MuJoCo simulates the arm and a table; task_space_controller presses '
                             'the tool on it, slides and lifts off; the external torque estimator against '
                             'MuJoCo\'s contact torques (out/demo_mujoco.png)')
    mujoco.add_argument('--depth', type=float, default=0.025,
                        help='target depth of the tool ball below the table top [m]: the press, about '
                             '600 N/m x depth (default: 0.025)')
    mujoco.add_argument('--slide', type=float, default=0.15,
                        help='slide along the base\'s y axis while pressing [m] (default: 0.15)')
    mujoco.add_argument('--max-relative-error', type=float, default=0.06,
                        help='fail if the estimate\'s RMS error over the contact exceeds this fraction of '
                             'the RMS contact torque (default: 0.06; measured 0.03-0.035, what the '
                             'observer\'s 20 ms lag alone gives)')
    mujoco.add_argument('--max-detection-delay', type=float, default=0.05,
                        help='fail if ~/contact turns true later than this after MuJoCo\'s first contact '
                             '[s] (default: 0.05)')
    mujoco.add_argument('--max-release-delay', type=float, default=0.1,
                        help='fail if ~/contact turns false later than this after the lift-off [s] '
                             '(default: 0.1)')
    return parser


def main(args: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if args is None else args)
    plain, ros_args = bringup.split_ros_args(argv)
    opts = build_parser().parse_args(plain)
    opts.ros_args = ros_args
    try:
        if opts.task_space:
            from robot_dynamics_ros.demos import task_space_demo
            return task_space_demo.main(opts)
        if opts.mpc:
            from robot_dynamics_ros.demos import mpc_demo
            return mpc_demo.main(opts)
        if opts.lqr:
            from robot_dynamics_ros.demos import lqr_demo
            return lqr_demo.main(opts)
        if opts.payload:
            from robot_dynamics_ros.demos import payload_demo
            return payload_demo.main(opts)
        if opts.identify:
            from robot_dynamics_ros.demos import identify_demo
            return identify_demo.main(opts)
        if opts.hardware:
            from robot_dynamics_ros.demos import hardware_demo
            return hardware_demo.main(opts)
        if opts.mujoco:
            from robot_dynamics_ros.demos import mujoco_demo
            return mujoco_demo.main(opts)
        if opts.feedforward:
            from robot_dynamics_ros.demos import feedforward_demo
            return feedforward_demo.main(opts)
        from robot_dynamics_ros.demos import joint_space_demo
        return joint_space_demo.main(opts)
    except KeyboardInterrupt:
        print('demo: interrupted', file=sys.stderr)
        return 130
    except (FileNotFoundError, DescriptionError) as exc:     # --config, --urdf, --xacro-args
        print(f'demo: {exc}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
