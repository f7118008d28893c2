"""Does the launched simulation hold real time? `ros2 launch robot_dynamics_ros simulation.launch.py`
(one process, the default, and processes:=true) for a stretch of wall time at real_time_factor 1:
the /joint_states messages received against the configured rate, and the simulator's "simulation
slower than real_time_factor" warnings (simulated time it dropped).

    .venv-jazzy/bin/python benchmarks/launch_rate.py [--seconds 60] [--warm-up 10] [--busy 1] [--json FILE]

--busy N runs N processes that keep one core each busy (a plain Python loop) for the whole launch: a
machine doing something else, as the ones the nodes share with the rest of a robot's software.

Needs `ros2` on the PATH of the environment (the set-up installs it where the launch wheels are) and
AMENT_PREFIX_PATH on that environment (make bench sets it). Each run has a ROS domain of its own
(localhost only); this process counts the messages with an rclpy subscription (EventsExecutor,
finite timeouts). A benchmark, not a test: the figures depend on what else the machine does.
"""
import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / 'config' / 'simulation.yaml'


def configured_rate():
    """/joint_states per second the config file asks for: the simulator's publish_rate (Hz)."""
    sys.path.insert(0, str(ROOT))
    from robot_dynamics_ros.cli import bringup

    return float(bringup.config_parameters(CONFIG)['simulator_node']['publish_rate'])


BUSY = 'import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end:\n    pass\n'


def measure(processes, seconds, warm_up, busy=0):
    """One launch: {'rate_hz', 'messages', 'expected', 'fraction', 'dropped_s', 'warnings'}."""
    import rclpy
    from rclpy.qos import QoSProfile
    from sensor_msgs.msg import JointState

    domain = random.randint(1, 101)
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               PYTHONUNBUFFERED='1')
    env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    hogs = [subprocess.Popen([sys.executable, '-c', BUSY]) for _ in range(busy)]
    ros2 = Path(sys.executable).with_name('ros2')
    launch = subprocess.Popen([str(ros2), 'launch', 'robot_dynamics_ros', 'simulation.launch.py',
                               f'processes:={"true" if processes else "false"}'],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node('launch_rate_probe', context=context)
    from rclpy.experimental import EventsExecutor
    executor = EventsExecutor(context=context)
    executor.add_node(node)
    stamps = []
    node.create_subscription(JointState, '/joint_states', lambda msg: stamps.append(time.monotonic()),
                             QoSProfile(depth=1000))
    try:
        deadline = time.monotonic() + 120.0
        while not stamps and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        start = time.monotonic() + warm_up
        end = start + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.shutdown(context=context)
        os.killpg(launch.pid, signal.SIGINT)
        try:
            output, _ = launch.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(launch.pid, signal.SIGKILL)
            output, _ = launch.communicate()
        for hog in hogs:
            hog.kill()
            hog.wait()
    inside = [t for t in stamps if start <= t <= end]
    rate = configured_rate()
    dropped = [float(x) for x in re.findall(r'([0-9.]+) s of simulated time dropped', output)]
    return dict(rate_hz=len(inside) / seconds, messages=len(inside), expected=rate * seconds,
                fraction=len(inside) / (rate * seconds), dropped_s=max(dropped, default=0.0),
                warnings=output.count('simulation slower than real_time_factor'))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--seconds', type=float, default=60.0, help='measured wall time per launch')
    parser.add_argument('--warm-up', type=float, default=10.0, help='seconds after the first message')
    parser.add_argument('--busy', type=int, default=0, help='processes keeping a core busy meanwhile')
    parser.add_argument('--json', help='write the results here')
    opts = parser.parse_args(argv)
    results = {}
    for label, processes in (('one process (default)', False), ('processes:=true', True)):
        r = measure(processes, opts.seconds, opts.warm_up, opts.busy)
        results[label] = r
        print(f'{label:<22} busy {opts.busy}: {r["rate_hz"]:7.1f} Hz of {r["expected"] / opts.seconds:.0f}: '
              f'{100 * r["fraction"]:.1f} % of the messages over {opts.seconds:g} s; '
              f'{r["warnings"]} "simulation slower" warnings, {r["dropped_s"]:.3f} s of simulated time '
              'dropped', flush=True)
    if opts.json:
        Path(opts.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
