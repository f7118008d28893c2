"""What the viewer costs beside a 1 kHz joint-state stream (a measurement, not a test).

    python benchmarks/_viewer_cost.py [--seconds 20] [--rate 1000] [--frame-rate 30]

(benchmarks/run.py's section ``viewer`` runs it: ``make bench BENCH_ARGS="--only viewer"``.)

Starts, each as its own process: the viewer node on urdf/ur5e.urdf (``python -m
robot_dynamics_ros.nodes.viewer``, a free port), a publisher of real sensor_msgs/JointState messages on
/joint_states at ``--rate`` Hz (this script with ``--publish``), and a headless Chromium page connected
to the viewer (Playwright; so the frames are really sent to a client). After a warm-up it measures over
``--seconds``:

- the viewer process's CPU time (utime + stime of /proc/<pid>/stat) as % of one core;
- the frames per second it sent and the latest state's lag (from its arrival to the frame that shows
  it), and the joint-state rate it received: the values of its own /diagnostics status (read here).

Prints them as JSON, on the last line of its output.
"""

import argparse
import datetime
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / 'urdf' / 'ur5e.urdf'
JOINTS = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint', 'wrist_2_joint',
          'wrist_3_joint')
CHROMIUM_ARGS = ['--no-sandbox', '--enable-unsafe-swiftshader', '--use-gl=angle', '--use-angle=swiftshader',
                 '--disable-gpu-sandbox', '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--no-first-run']


def publish(rate, seconds):
    """The joint-state publisher process: a slow swing of the shoulder at ``rate`` Hz."""
    import rclpy
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = rclpy.create_node('joint_state_source')
    pub = node.create_publisher(JointState, 'joint_states', 10)
    msg = JointState(name=list(JOINTS))
    start, k = time.monotonic(), 0
    try:
        while time.monotonic() - start < seconds:
            t = time.monotonic() - start
            msg.header.stamp = node.get_clock().now().to_msg()
            msg.position = [0.6 * math.sin(0.5 * t), -1.57 + 0.4 * math.sin(0.7 * t), 1.57, -1.57, -1.57, 0.0]
            pub.publish(msg)
            k += 1
            delay = start + k / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    except Exception:  # SIGTERM from the benchmark: rclpy's handler shut the context down
        pass
    print(f'published {k} joint states in {time.monotonic() - start:.1f} s', file=sys.stderr)
    node.destroy_node()
    rclpy.try_shutdown()


def cpu_seconds(pid):
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')     # utime + stime


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _open_page(browser, port):
    """The viewer's page in a new tab of ``browser``, once its server answers (30 s at most) and its
    3D canvas is there."""
    page = browser.new_page(viewport={'width': 1000, 'height': 700})
    deadline = time.monotonic() + 30.0
    while True:
        try:
            page.goto(f'http://127.0.0.1:{port}/')
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    page.wait_for_selector('canvas', timeout=30000)
    return page


def _mean_of(window, key):
    """The mean of the numeric values of ``key`` in the diagnostic statuses of ``window`` (None:
    none)."""
    values = []
    for status in window:
        for kv in status.values:
            if kv.key == key:
                try:
                    values.append(float(kv.value))
                except ValueError:
                    pass
    return sum(values) / len(values) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=20.0)
    parser.add_argument('--warm-up', type=float, default=6.0)
    parser.add_argument('--rate', type=float, default=1000.0)
    parser.add_argument('--frame-rate', type=float, default=30.0)
    parser.add_argument('--publish', action='store_true', help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.publish:
        publish(options.rate, options.seconds)
        return 0

    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from playwright.sync_api import sync_playwright

    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get('PYTHONPATH'))
                                                       if p))
    viewer = subprocess.Popen([sys.executable, '-m', 'robot_dynamics_ros.nodes.viewer', '--ros-args',
                               '-p', f'urdf_path:={URDF}', '-p', f'port:={port}', '-p', 'host:=127.0.0.1',
                               '-p', f'frame_rate:={options.frame_rate}'], env=env)
    total = options.warm_up + options.seconds + 3.0
    source = subprocess.Popen([sys.executable, __file__, '--publish', '--rate', str(options.rate),
                               '--seconds', str(total)], env=env)
    statuses = []
    rclpy.init()
    probe = rclpy.create_node('viewer_cost_probe')
    probe.create_subscription(DiagnosticArray, '/diagnostics',
                              lambda m: statuses.extend((time.monotonic(), s) for s in m.status
                                                        if s.name.endswith(': viewer')), 50)
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [rclpy.spin_once(probe, timeout_sec=0.1)
                                               for _ in iter(stop.is_set, True)], daemon=True)
    spinner.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path='/usr/bin/chromium', headless=True,
                                                 args=CHROMIUM_ARGS)
            _open_page(browser, port)
            time.sleep(options.warm_up)
            cpu0, t0, n0 = cpu_seconds(viewer.pid), time.monotonic(), len(statuses)
            time.sleep(options.seconds)
            cpu1, t1 = cpu_seconds(viewer.pid), time.monotonic()
            window = [s for t, s in statuses[n0:] if t0 <= t <= t1]
            browser.close()
    finally:
        stop.set()
        spinner.join(2.0)
        for process in (source, viewer):
            process.terminate()
        for process in (source, viewer):
            try:
                process.wait(10.0)
            except subprocess.TimeoutExpired:
                process.kill()
        probe.destroy_node()
        rclpy.shutdown()

    result = {
        'cpu_percent_of_core': round(100.0 * (cpu1 - cpu0) / (t1 - t0), 1),
        'frames_per_second': _mean_of(window, 'frame rate (Hz)'),
        'joint_states_rate': _mean_of(window, 'input rate (Hz)'),
        'latest_state_lag_ms': _mean_of(window, 'latest state lag (ms)'),
        'render_time_median_ms': _mean_of(window, 'compute time median (ms)'),
        'frame_rate_set': options.frame_rate,
        'publish_rate_set': options.rate,
        'seconds': options.seconds,
        'statuses': len(window),
        'date': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        'machine': f'{os.cpu_count()} cores, {os.uname().machine}',
    }
    print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
