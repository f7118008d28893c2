#!/usr/bin/env python3
"""Soak: the three nodes in one closed loop at 1 kHz for a long time, with bad input mixed in.

    make soak                                    # 10 minutes
    make soak SOAK_ARGS='--minutes 2'
    .venv-jazzy/bin/python benchmarks/soak.py --minutes 10 --json benchmarks/results/soak.json

A benchmark, not a test: it measures and reports, it asserts nothing. The graph is the one of
`ros2 launch robot_dynamics_ros simulation.launch.py`, started as three processes on an isolated
ROS domain (localhost discovery): simulator_node (rk4, dt 1 ms, real time, /joint_states at
1 kHz), computed_torque_controller (a command on every joint state) and dynamics_node (all four
outputs on every joint state), on the Panda with its fingers locked. This process holds a probe
node that

- sends the controller a good reference every 5 s (a swing between two poses), so the arm moves;
- once a second sends one bad message, cycling through the kinds below (to the topic the nodes
  listen on), so every node's rejection path runs about once every 10-20 s all along;
- subscribes to /joint_states, the controller's commands and dynamics_node's gravity torques,
  counts them per window and checks every value is finite.

Reported per node: RSS at the end of the warm-up and at the end, the RSS slope (least-squares fit
of the RSS sampled every 5 s, MB/min) over the whole measured time and over its second half (the
settled slope: first-minute effects, a log filling its window, the allocator's first arenas, are
over by then), the verdict "flat" or "grows" of the settled slope against FLAT_THRESHOLD, CPU (% of
one core), and alive at the end; per output: messages received and their rate; lost = joint states
received by the probe minus the outputs that answer them (gravity torques: matched by header stamp;
commands: counted, as the command carries no stamp); and the number of non-finite values seen
anywhere. The JSON keeps every RSS sample; ``--plot`` draws them (RSS minus its value after the
warm-up, per node, with the settled fit) into a PNG.

Flat threshold: the allocator moves RSS in steps without any leak (glibc's malloc returns the top of
its heap only above M_TRIM_THRESHOLD, 128 kB by default and raised dynamically up to 32 MB by the
blocks it frees; DDS and Python grow their pools in chunks), so a single step of ALLOCATOR_STEP_MB
inside the fit is noise. A step h at the middle of a fit over T minutes gives a least-squares slope
of 1.5 h / T (x uniform on [0, T], y = h·[x > T/2]: cov = hT/8, var = T²/12), so the verdict is
"flat" when |slope| < max(1.5 · ALLOCATOR_STEP_MB / T, FLAT_FLOOR_MB_PER_MIN): 0.15 MB/min for the
5-minute second half of a 10-minute soak. A leak of one 7-joint JointState-sized object (~0.3 kB)
per message at 1 kHz is ~18 MB/min, 100 times more; the payload log of issue 40 (a ring of 200 000
samples filling up) grew 4 MB/min.
"""
import argparse
import datetime
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _robots import PANDA_ARM_JOINTS, PANDA_READY, PANDA_URDF  # noqa: E402
from _ros import NodeProcess, cpu_seconds, ros_env  # noqa: E402

NODES = {
    "simulator": "robot_dynamics_ros.nodes.simulator_node",
    "controller": "robot_dynamics_ros.nodes.computed_torque_node",
    "dynamics": "robot_dynamics_ros.nodes.dynamics_node",
}
START_TIMEOUT_S = 600.0
RSS_PERIOD_S = 5                # RSS sampled every this many seconds
ALLOCATOR_STEP_MB = 0.5         # one allocator step of RSS that is no leak (module docstring)
FLAT_FLOOR_MB_PER_MIN = 0.05    # the flat threshold never below this, however long the soak
# A second pose for the reference swing: joints 1, 2 and 4 moved by about 0.3 rad.
SWING = PANDA_READY + np.array([0.3, 0.3, 0.0, 0.3, 0.0, 0.0, 0.0])


def rss_mb(pid):
    """Resident set size of a process in MB (VmRSS of /proc/<pid>/status), None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def slope_per_minute(samples):
    """Least-squares slope of [(t_s, value)] in value per minute (None with fewer than 3 samples)."""
    if len(samples) < 3:
        return None
    t, v = np.asarray(samples, dtype=float).T
    return float(np.polyfit(t / 60.0, v, 1)[0])


def settled(samples):
    """The second half (in time) of [(t_s, value)]: the samples the settled slope is fitted to."""
    if not samples:
        return []
    t_half = 0.5 * (samples[0][0] + samples[-1][0])
    return [s for s in samples if s[0] >= t_half]


def flat_threshold(samples):
    """MB/min below which a settled slope is "flat": max(1.5 · ALLOCATOR_STEP_MB / T, floor), T the
    minutes the settled fit spans (module docstring)."""
    half = settled(samples)
    minutes = (half[-1][0] - half[0][0]) / 60.0 if len(half) > 1 else 0.0
    return max(1.5 * ALLOCATOR_STEP_MB / minutes, FLAT_FLOOR_MB_PER_MIN) if minutes > 0 else None


def memory_summary(samples, rss_after_warmup, rss_at_end):
    """RSS figures of one node: MB after warm-up and at the end, slopes (MB/min) over all the samples
    and over their second half, the flat threshold and the verdict on the settled slope."""
    whole, late = slope_per_minute(samples), slope_per_minute(settled(samples))
    threshold = flat_threshold(samples)
    verdict = None if late is None or threshold is None else ("flat" if abs(late) < threshold else "grows")
    return {"rss_mb_after_warmup": rss_after_warmup, "rss_mb_at_end": rss_at_end,
            "rss_growth_mb_per_min": whole, "rss_settled_slope_mb_per_min": late,
            "flat_threshold_mb_per_min": threshold, "memory": verdict, "rss_samples": samples}


class SoakProbe:
    """The probe node: good references, one bad message a second, counts and finiteness checks."""

    def __init__(self, domain_id):
        import rclpy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        from robot_dynamics_ros.nodes.common import make_executor

        self.rclpy = rclpy
        self.JointState, self.Float64MultiArray, self.JointTrajectory = (
            JointState, Float64MultiArray, JointTrajectory)
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node("soak_probe", context=self.context)
        self.executor = make_executor(context=self.context)
        self.executor.add_node(self.node)
        self.counts = {"joint_states": 0, "commands": 0, "gravity": 0}
        self.nonfinite = {"joint_states": 0, "commands": 0, "gravity": 0}
        self.state_stamps = set()       # stamps of the simulator's joint states, this window
        self.gravity_stamps = set()
        self.counting = False
        self.node.create_subscription(JointState, "/joint_states", self._on_state, 1000)
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands", self._on_command,
                                      1000)
        self.node.create_subscription(JointState, "/dynamics_node/gravity_torques", self._on_gravity, 1000)
        self.pub_state = self.node.create_publisher(JointState, "/joint_states", 10)
        self.pub_command = self.node.create_publisher(Float64MultiArray, "/effort_controller/commands", 10)
        self.pub_reference = self.node.create_publisher(
            JointTrajectory, "/computed_torque_controller/joint_trajectory", 10)
        self.bad_sent = {}
        self.own_state_stamps = set()   # the probe's own bad joint states: not the simulator's
        self.own_nonfinite_commands = 0
        self._bad_index = 0
        self._swing_up = True

    # -- outputs ---------------------------------------------------------------------------------
    @staticmethod
    def _stamp(msg):
        return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec

    def _on_state(self, msg):
        if self._stamp(msg) in self.own_state_stamps:
            return
        if not all(math.isfinite(x) for x in (*msg.position, *msg.velocity, *msg.effort)):
            self.nonfinite["joint_states"] += 1
        if self.counting and len(msg.name) == len(PANDA_ARM_JOINTS) and msg.name[0] == PANDA_ARM_JOINTS[0]:
            self.counts["joint_states"] += 1
            self.state_stamps.add(self._stamp(msg))

    def _on_command(self, msg):
        if not all(math.isfinite(x) for x in msg.data):
            self.nonfinite["commands"] += 1
        if self.counting:
            self.counts["commands"] += 1

    def _on_gravity(self, msg):
        if not all(math.isfinite(x) for x in msg.effort):
            self.nonfinite["gravity"] += 1
        if self.counting:
            self.counts["gravity"] += 1
            self.gravity_stamps.add(self._stamp(msg))

    # -- inputs ----------------------------------------------------------------------------------
    def send_reference(self):
        """A 2-second move to the other pose of the swing (header stamp 0 = now)."""
        from trajectory_msgs.msg import JointTrajectoryPoint
        target = SWING if self._swing_up else PANDA_READY
        self._swing_up = not self._swing_up
        msg = self.JointTrajectory()
        msg.joint_names = list(PANDA_ARM_JOINTS)
        point = JointTrajectoryPoint(positions=[float(x) for x in target],
                                     velocities=[0.0] * len(PANDA_ARM_JOINTS))
        point.time_from_start.sec = 2
        msg.points = [point]
        self.pub_reference.publish(msg)

    def _bad_messages(self):
        """(kind, publisher, message) for each kind of bad input, in the order they are sent."""
        from trajectory_msgs.msg import JointTrajectoryPoint
        names = list(PANDA_ARM_JOINTS)
        n = len(names)
        ready = [float(x) for x in PANDA_READY]

        def state(name, position, velocity=None):
            msg = self.JointState(name=name, position=position)
            msg.velocity = [0.0] * len(position) if velocity is None else velocity
            msg.header.stamp = self.node.get_clock().now().to_msg()
            return msg

        def reference(joint_names, positions, seconds=1):
            msg = self.JointTrajectory(joint_names=joint_names)
            point = JointTrajectoryPoint(positions=positions)
            point.time_from_start.sec = seconds
            msg.points = [point]
            return msg

        nan_q = list(ready)
        nan_q[3] = math.nan
        huge_q = list(ready)
        huge_q[1] = 1e300
        unique = f"ghost_joint_{self._bad_index}"       # a new name every time: throttle keys
        return [
            ("state: NaN position", self.pub_state, state(names, nan_q)),
            ("state: q = 1e300", self.pub_state, state(names, huge_q)),
            ("state: lengths differ", self.pub_state, state(names, ready[:-2])),
            ("state: empty", self.pub_state, self.JointState()),
            ("state: unknown joints only", self.pub_state, state([unique], [0.0])),
            ("state: duplicate names", self.pub_state, state(names + names[:1], ready + ready[:1])),
            ("command: NaN", self.pub_command, self.Float64MultiArray(data=[math.nan] * n)),
            ("command: wrong length", self.pub_command, self.Float64MultiArray(data=[0.0] * (n + 3))),
            ("reference: NaN", self.pub_reference, reference(names, [math.nan] * n)),
            ("reference: unknown joint", self.pub_reference, reference([unique], [0.0])),
            ("reference: lengths differ", self.pub_reference, reference(names, ready[:3])),
            ("reference: beyond the limits", self.pub_reference, reference(names, [10.0] * n)),
        ]

    def send_bad(self):
        kinds = self._bad_messages()
        kind, publisher, msg = kinds[self._bad_index % len(kinds)]
        self._bad_index += 1
        if publisher is self.pub_state:
            self.own_state_stamps.add(self._stamp(msg))
        elif publisher is self.pub_command and not all(math.isfinite(x) for x in msg.data):
            self.own_nonfinite_commands += 1
        publisher.publish(msg)
        self.bad_sent[kind] = self.bad_sent.get(kind, 0) + 1

    def spin(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=min(0.05, max(deadline - time.monotonic(), 0.0)))

    def close(self):
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self.rclpy.try_shutdown(context=self.context)


def _params(extra):
    params = {"urdf_path": str(PANDA_URDF), "joints": "[" + ", ".join(PANDA_ARM_JOINTS) + "]"}
    params.update(extra)
    return params


def soak(minutes, warmup_s, domain_id):
    env = ros_env(domain_id)
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    log_dir = tempfile.mkdtemp(prefix="rdr-soak-")
    ready = "[" + ", ".join(f"{x:.6f}" for x in PANDA_READY) + "]"
    probe = SoakProbe(domain_id)
    processes = {
        "simulator": NodeProcess(NODES["simulator"], _params(
            {"dt": "0.001", "publish_rate": "1000.0", "real_time_factor": "1.0", "integrator": "rk4",
             "initial_positions": ready}), env, log_dir),
        "controller": NodeProcess(NODES["controller"], _params({"control_rate": "0.0"}), env, log_dir),
        "dynamics": NodeProcess(NODES["dynamics"], _params({}), env, log_dir),
    }
    result = {"minutes": minutes, "warmup_s": warmup_s, "domain_id": domain_id, "rate_hz": 1000.0,
              "robot": "Panda, fingers locked", "node_logs": log_dir}
    try:
        # generous: after an install or an edit of the kernels, each node compiles them first
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and not (probe.counts["commands"] and probe.counts["gravity"]):
            probe.counting = True
            probe.spin(0.5)
        if not (probe.counts["commands"] and probe.counts["gravity"]):
            result["error"] = f"the loop did not start within {START_TIMEOUT_S:.0f} s: " + "; ".join(
                f"{k}: {p.tail(5)}" for k, p in processes.items())
            return result
        probe.counting = False
        probe.send_reference()
        probe.spin(warmup_s)
        for key in probe.counts:
            probe.counts[key] = 0
        probe.state_stamps.clear()
        probe.gravity_stamps.clear()
        cpu0 = {k: cpu_seconds(p.pid) for k, p in processes.items()}
        rss_start = {k: rss_mb(p.pid) for k, p in processes.items()}
        rss = {k: [] for k in processes}
        probe.counting = True
        t_start = time.monotonic()
        end = t_start + minutes * 60.0
        next_second = t_start
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_second:
                second = int(round(now - t_start))
                probe.send_bad()
                if second % RSS_PERIOD_S == 0:
                    probe.send_reference()
                    for k, p in processes.items():
                        value = rss_mb(p.pid)
                        if value is not None:
                            rss[k].append((now - t_start, value))
                next_second += 1.0
            probe.spin(min(0.05, max(next_second - time.monotonic(), 0.0)))
        wall = time.monotonic() - t_start
        probe.spin(0.5)                 # drain
        probe.counting = False
        result["window_s"] = wall
        result["nodes"] = {
            k: {"alive_at_end": p.alive(), **memory_summary(rss[k], rss_start[k], rss_mb(p.pid)),
                "cpu_percent": 100.0 * (cpu_seconds(p.pid) - cpu0[k]) / wall if p.alive() else None}
            for k, p in processes.items()}
        result["outputs"] = {k: {"received": c, "rate_hz": c / wall} for k, c in probe.counts.items()}
        result["lost"] = {
            "gravity_torques (by stamp)": len(probe.state_stamps - probe.gravity_stamps),
            "commands (count)": max(probe.counts["joint_states"] - probe.counts["commands"], 0)}
        # the probe hears its own NaN commands too: those are taken out
        probe.nonfinite["commands"] -= probe.own_nonfinite_commands
        result["nonfinite_values"] = dict(probe.nonfinite)
        result["bad_messages_sent"] = dict(probe.bad_sent)
        result["log_bytes"] = {k: p.log_path.stat().st_size for k, p in processes.items()}
    finally:
        probe.close()
        for p in processes.values():
            p.stop()
    if all(n["alive_at_end"] for n in result.get("nodes", {}).values()) and "error" not in result:
        shutil.rmtree(log_dir, ignore_errors=True)
        result.pop("node_logs")
    return result


def report(result):
    print(f"\nsoak: {result['minutes']} min at {result['rate_hz']:.0f} Hz, {result['robot']}, "
          f"one bad message per second (after {result['warmup_s']:.0f} s warm-up)")
    if "error" in result:
        print("ERROR:", result["error"])
        return
    print(f"{'node':<12}{'alive':>7}{'RSS after warm-up MB':>22}{'RSS end MB':>12}{'slope MB/min':>14}"
          f"{'2nd half MB/min':>17}{'flat below':>12}{'memory':>8}{'CPU %':>8}{'log KB':>9}")

    def signed(x):
        return "" if x is None else f"{x:+.3f}"

    for k, n in result["nodes"].items():
        cpu, threshold = n["cpu_percent"], n["flat_threshold_mb_per_min"]
        print(f"{k:<12}{str(n['alive_at_end']):>7}{n['rss_mb_after_warmup'] or 0:>22.1f}"
              f"{n['rss_mb_at_end'] or 0:>12.1f}{signed(n['rss_growth_mb_per_min']):>14}"
              f"{signed(n['rss_settled_slope_mb_per_min']):>17}"
              f"{'' if threshold is None else f'{threshold:.3f}':>12}{n['memory'] or '':>8}"
              f"{'' if cpu is None else f'{cpu:.0f}':>8}{result['log_bytes'][k] / 1024:>9.0f}")
    for k, o in result["outputs"].items():
        print(f"  {k:<14} {o['received']:>9} received, {o['rate_hz']:7.1f} Hz")
    print("  lost:", ", ".join(f"{k} {v}" for k, v in result["lost"].items()))
    print("  non-finite values received:", result["nonfinite_values"])


def plot(result, path):
    """RSS minus its value at the first sample, per node, over the measured minutes, with the
    least-squares line of the second half (the settled slope)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    for k, n in result["nodes"].items():
        samples = np.asarray(n["rss_samples"], dtype=float)
        if samples.size == 0:
            continue
        t_min, rss = samples[:, 0] / 60.0, samples[:, 1]
        late = np.asarray(settled(n["rss_samples"]), dtype=float)
        slope = n["rss_settled_slope_mb_per_min"]
        line, = ax.plot(t_min, rss - rss[0], ".-", ms=3, lw=0.8,
                        label=f"{k}: {rss[0]:.0f} MB at start, {slope or 0:+.3f} MB/min in the second half "
                              f"({n['memory']})")
        if len(late) < 2:
            continue
        fit = np.polyfit(late[:, 0] / 60.0, late[:, 1], 1)
        ax.plot(late[:, 0] / 60.0, np.polyval(fit, late[:, 0] / 60.0) - rss[0], "-", lw=2,
                color=line.get_color(), alpha=0.5)
    ax.set_xlabel(f"minutes after the {result['warmup_s']:.0f} s warm-up")
    ax.set_ylabel("RSS − RSS at start (MB)")
    ax.set_title(f"soak: {result['minutes']:g} min, /joint_states at {result['rate_hz']:.0f} Hz, "
                 f"{result['robot']}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds before measuring")
    parser.add_argument("--domain-id", type=int, default=None)
    parser.add_argument("--json", default=str(HERE / "results" / "soak.json"))
    parser.add_argument("--plot", default=str(HERE / "results" / "soak.png"),
                        help="PNG of the RSS of each node over time ('' = none; needs matplotlib)")
    args = parser.parse_args()
    domain_id = args.domain_id if args.domain_id is not None else 1 + os.getpid() % 100
    result = soak(args.minutes, args.warmup, domain_id)
    result["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    report(result)
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    print(f"\nwritten: {args.json}")
    if args.plot and "nodes" in result:
        plot(result, args.plot)
        print(f"written: {args.plot}")


if __name__ == "__main__":
    main()
