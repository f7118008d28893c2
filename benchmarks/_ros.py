"""The ROS part of the benchmark: node start-up, node round trips at 1 kHz, simulator speed.

Everything runs on an isolated ROS domain with localhost-only discovery. The nodes run as
separate processes (`python -m robot_dynamics_ros.nodes.<node> --ros-args ...`), the robot is the
Panda with its fingers locked (parameter `joints` = the seven arm joints). This process holds one
probe node, spun by an EventsExecutor with finite timeouts only, which

- publishes /joint_states from a 1 ms timer, sequence number k encoded twice:
  header.stamp = 1000 s + k ms, and q = ready pose + k * 1e-7 rad on panda_joint2 (q̇ = 0);
- subscribes to the nodes' outputs and stores (CLOCK_MONOTONIC ns at callback entry, payload).

Matching responses to requests (the send time of k is taken just before publish()):
- dynamics_node ~/gravity_torques copies the header stamp: k = decoded stamp, exact.
- computed_torque_node's command is a Float64MultiArray without header. The controller runs with
  kp = kd = 0 (the same computation: τ = M(q)(q̈_d + K_d ė + K_p e) + c + g is still one RNEA
  call), so its command is τ_k = b(q_k, 0) = g(q_k), a function of k alone. The probe computes the
  table g(q_k) with the same core function (inverse_dynamics) and decodes each command as the k
  whose table entry is nearest (searched just ahead of the previous match; accepted when the
  error is below a quarter of the gap to the neighbouring entry, which is about 1e-6 N·m, while
  the rounding noise is about 1e-13). Arrival order is not trusted; it is checked (a decoded k
  below an earlier one counts as out of order; a k seen before is a duplicate, e.g. the
  controller's stale-state watchdog republishing g(q) of the last state after a stall).
- computed_torque_node with a FollowJointTrajectory goal active ('controller_goal'): the same, after
  the probe sent a goal (through the action, as MoveIt does) whose trajectory holds the ready pose
  (a point at 0 s and one after the run), with path tolerances of 1 rad on every joint: the goal's
  tolerances are then checked at every step, its feedback published at 20 Hz, and the command is
  still g(q_k).
Round trip = arrival - send of the same k; "lost" = requests sent inside the window without any
response by the end of a 0.5 s drain. Node CPU = (utime + stime) from /proc/<pid>/stat over the
window / window wall time.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _robots import PANDA_ARM_JOINTS, PANDA_FINGERS, PANDA_READY, PANDA_URDF

DELTA = 1e-7                 # rad per sequence number on panda_joint2
SEQ_JOINT = 1                # panda_joint2 (gravity-loaded at the ready pose)
STAMP_BASE_S = 1000


def ros_env(domain_id):
    """Environment of a node process: isolated domain, localhost discovery, fresh ROS re-exec."""
    env = dict(os.environ)
    env.pop("_ROS_WHEELS_BOOTSTRAP_COMPLETE", None)   # start like a user's shell would
    for var in ("ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS"):
        env.pop(var, None)
    env["ROS_DOMAIN_ID"] = str(domain_id)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def cpu_seconds(pid):
    """utime + stime of a process, in seconds (from /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _yaml_list(items):
    return "[" + ", ".join(items) + "]"


def spin_for(executor, seconds):
    """Spin ``executor`` for ``seconds`` s of wall time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=min(0.05, max(deadline - time.monotonic(), 0.0)))


def spin_until(executor, predicate, timeout):
    """Spin ``executor`` until ``predicate()`` is true (at most ``timeout`` s); its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        executor.spin_once(timeout_sec=0.02)
    return bool(predicate())


class NodeProcess:
    """A node started with `python -m module --ros-args -p k:=v ...`; log in a temp file."""

    def __init__(self, module, params, env, log_dir):
        args = [sys.executable, "-m", module, "--ros-args"]
        for k, v in params.items():
            args += ["-p", f"{k}:={v}"]
        self.log_path = Path(log_dir) / f"{module.rsplit('.', 1)[-1]}-{time.monotonic_ns()}.log"
        self._log = open(self.log_path, "w")
        self.t_spawn = time.monotonic_ns()
        self.proc = subprocess.Popen(args, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        # SIGTERM: the nodes' main() stops its spin loop cleanly on it (SIGINT raises
        # KeyboardInterrupt inside whatever callback is running, which rclpy logs as FATAL).
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def tail(self, lines=15):
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class Probe:
    """The measuring node in this process (see module docstring)."""

    def __init__(self, domain_id, spin):
        import rclpy
        from rclpy.qos import qos_profile_sensor_data
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        from robot_dynamics_ros.nodes.common import make_executor

        self.rclpy = rclpy
        self.JointState = JointState
        self.spin_s = spin
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node("benchmark_probe", context=self.context)
        self.executor = make_executor(context=self.context)
        self.executor.add_node(self.node)
        self.names = list(PANDA_ARM_JOINTS)
        self.base = [float(x) for x in PANDA_READY]
        self.zeros = [0.0] * len(self.names)
        self.pub = self.node.create_publisher(JointState, "/joint_states", 10)
        self.send_ns = []
        self.publishing = False
        self.commands, self.gravity, self.estimates, self.echoes, self.clock = [], [], [], [], []
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                      lambda m: self.commands.append((time.monotonic_ns(), m.data)), 1000)
        self.node.create_subscription(JointState, "/dynamics_node/gravity_torques",
                                      lambda m: self.gravity.append((time.monotonic_ns(), m.header.stamp.sec,
                                                                     m.header.stamp.nanosec)), 1000)
        self.node.create_subscription(
            JointState, "/external_torque_estimator/external_torques",
            lambda m: self.estimates.append((time.monotonic_ns(), m.header.stamp.sec,
                                             m.header.stamp.nanosec)), 1000)
        self.node.create_subscription(
            JointState, "/echo/joint_states",
            lambda m: self.echoes.append((time.monotonic_ns(), m.header.stamp.sec,
                                          m.header.stamp.nanosec)), 1000)
        self.node.create_subscription(Clock, "/clock",
                                      lambda m: self.clock.append((time.monotonic_ns(), m.clock.sec,
                                                                   m.clock.nanosec)), qos_profile_sensor_data)
        self.timer = self.node.create_timer(0.001, self._tick)

    def position(self, k):
        pos = list(self.base)
        pos[SEQ_JOINT] = self.base[SEQ_JOINT] + k * DELTA
        return pos

    def _tick(self):
        if not self.publishing:
            return
        k = len(self.send_ns)
        msg = self.JointState()
        msg.header.stamp.sec = STAMP_BASE_S + k // 1000
        msg.header.stamp.nanosec = (k % 1000) * 1_000_000
        msg.name = self.names
        msg.position = self.position(k)
        msg.velocity = self.zeros
        msg.effort = self.zeros         # (the external torque estimator needs efforts; others ignore them)
        self.send_ns.append(time.monotonic_ns())
        self.pub.publish(msg)

    @property
    def seq(self):
        return len(self.send_ns)

    def spin(self, seconds):
        spin_for(self.executor, seconds)

    def spin_until(self, predicate, timeout):
        return spin_until(self.executor, predicate, timeout)

    def close(self):
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self.rclpy.try_shutdown(context=self.context)


def _stats_ms(values_ns):
    if not values_ns:
        return {}
    a = np.asarray(values_ns, dtype=float) * 1e-6
    return {"median_ms": float(np.median(a)), "p99_ms": float(np.percentile(a, 99)),
            "p90_ms": float(np.percentile(a, 90)), "max_ms": float(a.max()), "mean_ms": float(a.mean()),
            "count": int(a.size)}


def _stamp_seq(sec, nanosec):
    return (sec - STAMP_BASE_S) * 1000 + nanosec // 1_000_000


class Decoder:
    """Decodes computed-torque commands into sequence numbers via the table τ_k = ID(q_k, 0, 0)."""

    def __init__(self, probe):
        from robot_dynamics_ros import dynamics as rd
        self.rd = rd
        self.model = rd.load_urdf(str(PANDA_URDF), locked_joints=dict(PANDA_FINGERS))
        assert tuple(self.model.joint_names) == PANDA_ARM_JOINTS, self.model.joint_names
        self.probe = probe

    def table(self, lo, hi):
        zero = np.zeros(self.model.nq)
        return np.array([self.rd.inverse_dynamics(self.model, np.array(self.probe.position(k)), zero, zero)
                         for k in range(lo, hi)])

    def decode(self, received, lo, hi):
        """[(arrival_ns, k or None)] for every received command; commands sent for k in [lo, hi)."""
        G = self.table(lo, hi)
        out, p = [], 0
        for t_ns, data in received:
            tau = np.asarray(data, dtype=float)
            if tau.shape != (G.shape[1],):
                out.append((t_ns, None))
                continue
            a, b = max(p - 50, 0), min(p + 5000, len(G))
            if a >= b:
                out.append((t_ns, None))
                continue
            err = np.abs(G[a:b] - tau).max(axis=1)
            i = int(np.argmin(err))
            k = a + i
            gaps = [np.abs(G[j] - G[k]).max() for j in (k - 1, k + 1) if 0 <= j < len(G)]
            if err[i] < 0.25 * min(gaps):
                out.append((t_ns, lo + k))
                p = k + 1
            else:
                out.append((t_ns, None))
        return out


def _node_params(extra=None):
    params = {"urdf_path": str(PANDA_URDF), "joints": _yaml_list(PANDA_ARM_JOINTS)}
    params.update(extra or {})
    return params


def measure_ready(probe, env, log_dir, runs, timeout=30.0):
    """Process start -> first /dynamics_node/gravity_torques while /joint_states flows at 1 kHz.

    One start first, not counted (reported as `first_start_s`): it fills numba's cache for code
    compiled lazily on the node's path, so the counted runs are warm-cache starts."""
    probe.publishing = True
    probe.spin(0.2)
    times, notes = [], []
    for _ in range(runs + 1):
        probe.gravity.clear()
        node = NodeProcess("robot_dynamics_ros.nodes.dynamics_node", _node_params(), env, log_dir)
        try:
            ok = probe.spin_until(lambda: bool(probe.gravity) or not node.alive(), timeout)
            if ok and probe.gravity:
                times.append((probe.gravity[0][0] - node.t_spawn) * 1e-9)
            else:
                times.append(None)
                notes.append(f"no gravity_torques within {timeout} s; log tail:\n{node.tail()}")
        finally:
            node.stop()
        probe.spin(0.3)
    first = times.pop(0)
    times = [t for t in times if t is not None]
    return {"first_start_s": first, "runs_s": times, "median_s": float(np.median(times)) if times else None,
            "target_s": 1.0, "met": (float(np.median(times)) < 1.0) if times else None, "notes": notes}


def _send_holding_goal(probe, node_name, seconds, timeout=10.0):
    """A FollowJointTrajectory goal that holds the ready pose for ``seconds``, path tolerance 1 rad
    on every joint; returns (goal handle or None, why not)."""
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    client = ActionClient(probe.node, FollowJointTrajectory, f"/{node_name}/follow_joint_trajectory")
    if not probe.spin_until(client.server_is_ready, timeout):
        return None, "no action server"
    # The ready pose at 0 s and at the end: the desired state is that pose, at rest, throughout
    # (q̈_d = 0, so the command stays g(q_k) with kp = kd = 0).
    trajectory = JointTrajectory(joint_names=list(probe.names), points=[
        JointTrajectoryPoint(positions=list(probe.base), time_from_start=Duration(sec=t))
        for t in (0, int(seconds))])
    goal = FollowJointTrajectory.Goal(trajectory=trajectory, path_tolerance=[
        JointTolerance(name=name, position=1.0) for name in probe.names])
    sent = client.send_goal_async(goal)
    if not probe.spin_until(sent.done, timeout) or not sent.result().accepted:
        return None, "goal not accepted"
    return sent.result(), None


def _round_trip_node(kind, env):
    """(module, parameters, the probe's log it answers into, topic, env) of measure_round_trip's node."""
    # The controllers: no start-up check of the effort convention (the probe's efforts are zeros, for
    # the estimator: a 'full' profile would read them as a contradiction and command nothing).
    if kind in ("controller", "controller_goal"):
        return ("robot_dynamics_ros.nodes.computed_torque_node",
                _node_params({"kp": "[0.0]", "kd": "[0.0]", "control_rate": "0.0",
                              "check_effort_convention": "false"}),
                "commands", "/effort_controller/commands", env)
    if kind == "task_space":
        # kp = kd = 0 at rest: τ = J^T Λ J M^-1 g + (1 - J^T Λ J M^-1) g = g(q_k), decoded like the
        # joint controller's command (the whole law is still computed: one task_space_control call,
        # the frame's pose and the pose error's logarithm)
        return ("robot_dynamics_ros.nodes.task_space_controller",
                _node_params({"kp": "[0.0]", "kd": "[0.0]", "control_rate": "0.0",
                              "tip_link": "panda_link8", "check_effort_convention": "false"}),
                "commands", "/effort_controller/commands", env)
    if kind == "echo":
        # rclpy's floor: a node that only republishes the state (_echo_node.py), same executor and loop
        env = dict(env, PYTHONPATH=os.pathsep.join(p for p in (str(Path(__file__).resolve().parent),
                                                               env.get("PYTHONPATH", "")) if p))
        return "_echo_node", {}, "echoes", "/echo/joint_states", env
    if kind == "estimator":
        return ("robot_dynamics_ros.nodes.external_torque_estimator", _node_params(), "estimates",
                "/external_torque_estimator/external_torques", env)
    return ("robot_dynamics_ros.nodes.dynamics_node", _node_params(), "gravity",
            "/dynamics_node/gravity_torques", env)


def _first_answers(decoded):
    """{state k: the time its first answer arrived (ns)} of the (t_ns, k or None) answers, and the
    counts of the undecoded, duplicate and out-of-order ones."""
    first, out_of_order, undecoded, duplicates, last = {}, 0, 0, 0, -1
    for t_ns, k in decoded:
        if k is None:
            undecoded += 1
            continue
        if k in first:
            duplicates += 1
            continue
        if k < last:
            out_of_order += 1
        last = max(last, k)
        first[k] = t_ns
    return first, {"undecoded": undecoded, "out_of_order": out_of_order, "duplicates": duplicates}


def measure_round_trip(probe, kind, env, log_dir, duration, warmup=1.0, drain=0.5, timeout=30.0):
    """kind 'controller' (computed_torque_node), 'controller_goal' (the same, with a goal active),
    'task_space' (task_space_controller), 'dynamics' (dynamics_node), 'estimator'
    (external_torque_estimator) or 'echo' (_echo_node: rclpy's floor) at 1 kHz."""
    probe.publishing = True
    module, params, log_name, topic, env = _round_trip_node(kind, env)
    log = getattr(probe, log_name)
    probe.spin(0.3)         # (what the previous node sent still arrives: it must not count as this one's)
    log.clear()
    node = NodeProcess(module, params, env, log_dir)
    seq_at_start = probe.seq
    result = {"node": module, "topic": topic, "rate_hz": 1000.0}
    try:
        if not probe.spin_until(lambda: bool(log) or not node.alive(), timeout) or not log:
            result["error"] = f"no message on {topic} within {timeout} s; log tail:\n{node.tail()}"
            return result
        result["ready_s"] = (log[0][0] - node.t_spawn) * 1e-9
        if kind == "controller_goal":
            handle, why = _send_holding_goal(probe, "computed_torque_controller",
                                             warmup + duration + drain + 30.0)
            if handle is None:
                result["error"] = f"{why}; log tail:\n{node.tail()}"
                return result
            result["goal"] = "active (holding the ready pose, path tolerance 1 rad per joint)"
        probe.spin(warmup)
        s0, w0, c0 = probe.seq, time.monotonic_ns(), cpu_seconds(node.pid)
        probe.spin(duration)
        s1, w1, c1 = probe.seq, time.monotonic_ns(), cpu_seconds(node.pid)
        probe.spin(drain)
        received = list(log)
        alive = node.alive()
    finally:
        node.stop()
    wall = (w1 - w0) * 1e-9
    if kind in ("controller", "controller_goal", "task_space"):
        decoded = Decoder(probe).decode(received, seq_at_start, probe.seq)
        method = "command value decoded against the table g(q_k) (kp = kd = 0)"
    else:
        decoded = [(t, _stamp_seq(sec, ns)) for t, sec, ns in received]
        method = "header stamp copied by the node"
    first, counts = _first_answers(decoded)
    rts = [first[k] - probe.send_ns[k] for k in range(s0, s1) if k in first]
    missing = [k for k in range(s0, s1) if k not in first]
    bursts = np.split(np.asarray(missing), np.flatnonzero(np.diff(missing) != 1) + 1) if missing else []
    sent = s1 - s0
    result.update(
        method=method, window_s=wall, sent=sent, publish_rate_hz=sent / wall, answered=len(rts),
        lost=sent - len(rts), lost_bursts=len(bursts), longest_lost_burst=max(map(len, bursts), default=0),
        **counts, cpu_percent=100.0 * (c1 - c0) / wall, node_alive_at_end=alive, **_stats_ms(rts))
    return result


def _tool_target(model, q, offset):
    """A PoseStamped of the tool0 pose at ``q`` moved by ``offset`` (m, base frame)."""
    from geometry_msgs.msg import PoseStamped

    from robot_dynamics_ros import dynamics as rd
    from robot_dynamics_ros.nodes.conversions import set_pose

    T_goal = rd.frame_pose(model, q, "tool0")
    T_goal[:3, 3] += offset
    goal = PoseStamped()
    set_pose(goal.pose, T_goal)
    return goal


def _mpc_diagnostics(window):
    """From mpc_controller's /diagnostics values in the window: the median re-plan rate, the median
    and worst p99 solve time, the median and worst p99 compute time per joint state (None: none
    reported)."""
    def values(key):
        return [float(v[key]) for v in window if v.get(key, "-") not in ("-", "")]
    rates, medians, p99s = values("replan rate (Hz)"), values("solve median (ms)"), values("solve p99 (ms)")
    steps, steps99 = values("compute time median (ms)"), values("compute time p99 (ms)")
    return dict(replan_rate_hz=float(np.median(rates)) if rates else None,
                solve_median_ms=float(np.median(medians)) if medians else None,
                solve_p99_ms=float(np.max(p99s)) if p99s else None,
                step_median_ms=float(np.median(steps)) if steps else None,
                step_p99_ms=float(np.max(steps99)) if steps99 else None)


def measure_mpc(probe, env, log_dir, duration, warmup=2.0, gap=0.03, timeout=60.0, parameters=None):
    """mpc_controller on the UR5e (config/simulation.yaml's settings: 50 knots of 10 ms re-planned at
    100 Hz, one iteration per warm re-plan, torque limits; `parameters`: others, name: value string)
    under /joint_states at 1 kHz from this process, moving the tool to a target 10 cm away (so that the
    re-plans work): from its /diagnostics (every 0.5 s) the achieved re-plan rate, the solve times and
    the compute time per joint state; here, the round trip and the node's CPU.

    The round trip, paired by order: the node answers every joint state with one command, in the order
    the states arrive, and its commands carry no stamp (nor are they a function of the state alone, to
    be decoded as the other controllers'). So the states stop, `gap` s at a time, until no command is
    under way, and from then on the j-th command answers the j-th state; after the window the states
    stop again until no command is under way, and the pairing holds if as many commands came as states
    were sent (checked: `paired`). The node's state_timeout is 1 s here, so that no gap ends in its
    stale-state hold (which publishes a command of its own)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import PoseStamped

    from robot_dynamics_ros import dynamics as rd

    probe.publishing = False        # (the Panda states of the other nodes' runs)
    urdf = Path(__file__).resolve().parents[1] / "urdf" / "ur5e.urdf"
    model = rd.load_urdf(str(urdf))
    q0 = np.array([0.0, -1.2, 1.5, -1.0, -1.57, 0.0])
    node = probe.node
    pub = node.create_publisher(probe.JointState, "/joint_states", 10)
    target = node.create_publisher(PoseStamped, "/mpc_controller/target_pose", 10)
    diagnostics = []
    sub = node.create_subscription(DiagnosticArray, "/diagnostics", lambda m: diagnostics.extend(
        {v.key: v.value for v in st.values} for st in m.status if st.name.startswith("mpc_controller")), 100)
    sends = []

    def tick():
        msg = probe.JointState(name=list(model.joint_names), position=[float(x) for x in q0],
                               velocity=[0.0] * model.nq)
        sends.append(time.monotonic_ns())
        pub.publish(msg)
    timer = node.create_timer(0.001, tick)
    probe.spin(0.3)                 # (what the previous node sent still arrives)
    probe.commands.clear()
    proc = NodeProcess("robot_dynamics_ros.nodes.mpc_controller",
                       {"urdf_path": str(urdf), "tip_link": "tool0", "diagnostics_period": "0.5",
                        "state_timeout": "1.0", **(parameters or {})}, env,
                       log_dir)
    result = {"node": "robot_dynamics_ros.nodes.mpc_controller", "topic": "/effort_controller/commands",
              "rate_hz": 1000.0, "horizon": 50, "replan_target_hz": 100.0,
              "method": "commands paired with states by order after a drained gap (docstring)"}

    def quiet():
        """Stop the states until no command is under way (none for `gap` s)."""
        timer.cancel()
        count = -1
        while count != len(probe.commands):
            count = len(probe.commands)
            probe.spin(gap)
    try:
        if not probe.spin_until(lambda: bool(probe.commands) or not proc.alive(), timeout):
            result["error"] = f"no command within {timeout} s; log tail:\n{proc.tail()}"
            return result
        target.publish(_tool_target(model, q0, (0.1, 0.0, 0.0)))
        probe.spin(warmup)
        quiet()
        n0, s0, d0 = len(probe.commands), len(sends), len(diagnostics)
        timer.reset()
        w0, c0 = time.monotonic_ns(), cpu_seconds(proc.pid)
        probe.spin(duration)
        w1, c1 = time.monotonic_ns(), cpu_seconds(proc.pid)
        quiet()
        n1, s1, d1 = len(probe.commands), len(sends), len(diagnostics)
    finally:
        proc.stop()
        node.destroy_timer(timer)
        node.destroy_subscription(sub)
        node.destroy_publisher(pub)
        node.destroy_publisher(target)
    wall = (w1 - w0) * 1e-9
    sent, answered = s1 - s0, n1 - n0
    result.update(window_s=wall, sent=sent, answered=answered, paired=sent == answered,
                  **_mpc_diagnostics(diagnostics[d0:d1]), cpu_percent=100.0 * (c1 - c0) / wall)
    if sent == answered:
        rts = [probe.commands[n0 + j][0] - sends[s0 + j] for j in range(sent)]
        result.update(_stats_ms(rts))
    result["replan_met"] = bool(result["replan_rate_hz"] is not None and result["replan_rate_hz"] >= 99.0)
    return result


def measure_simulator(probe, env, log_dir, duration, warmup=1.0, timeout=30.0):
    """simulator_node, real_time_factor 0, publish_rate 1000, /clock: simulated s per wall s."""
    probe.publishing = False
    probe.clock.clear()
    # wait_for_command false: no controller here, the simulation runs from the start
    params = _node_params({"real_time_factor": "0.0", "publish_rate": "1000.0", "publish_clock": "true",
                           "wait_for_command": "false",
                           "dt": "0.001", "integrator": "rk4",
                           "initial_positions": _yaml_list(f"{x:.6f}" for x in PANDA_READY)})
    node = NodeProcess("robot_dynamics_ros.nodes.simulator_node", params, env, log_dir)
    result = {"node": "robot_dynamics_ros.nodes.simulator_node", "integrator": "rk4", "dt": 0.001,
              "publish_rate_hz": 1000.0, "real_time_factor_param": 0.0,
              "note": "no controller: zero effort command (the arm falls onto its joint limits)"}
    try:
        if not probe.spin_until(lambda: bool(probe.clock) or not node.alive(), timeout) or not probe.clock:
            result["error"] = f"no /clock within {timeout} s; log tail:\n{node.tail()}"
            return result
        result["ready_s"] = (probe.clock[0][0] - node.t_spawn) * 1e-9
        probe.spin(warmup)
        i0, c0, w0 = len(probe.clock), cpu_seconds(node.pid), time.monotonic_ns()
        probe.spin(duration)
        c1, w1 = cpu_seconds(node.pid), time.monotonic_ns()
        samples = probe.clock[max(i0 - 1, 0):]
        alive = node.alive()
    finally:
        node.stop()
    if len(samples) < 2:
        result["error"] = "fewer than two /clock messages in the window"
        return result
    (ta, sa, na), (tb, sb, nb) = samples[0], samples[-1]
    sim = (sb - sa) + (nb - na) * 1e-9
    wall = (tb - ta) * 1e-9
    result.update(window_s=(w1 - w0) * 1e-9, clock_messages=len(samples), simulated_s=sim, wall_s=wall,
                  speed_x_real_time=sim / wall, target_x=5.0, met=sim / wall >= 5.0,
                  cpu_percent=100.0 * (c1 - c0) / ((w1 - w0) * 1e-9), node_alive_at_end=alive)
    return result


def run(domain_id, *, duration, sim_duration, ready_runs, do_node=True, do_sim=True):
    """The ROS measurements; returns {'ready':..., 'controller':..., 'dynamics':..., 'simulator':...}."""
    nodes_dir = Path(__file__).resolve().parents[1] / "robot_dynamics_ros" / "nodes"
    missing = [m for m in ("dynamics_node", "computed_torque_node", "simulator_node")
               if not (nodes_dir / f"{m}.py").exists()]
    try:
        import rclpy  # noqa: F401
    except ImportError as exc:
        return {"skipped": f"rclpy not importable: {exc}"}
    os.environ["ROS_DOMAIN_ID"] = str(domain_id)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    for var in ("ROS_LOCALHOST_ONLY", "ROS_STATIC_PEERS"):
        os.environ.pop(var, None)
    env = ros_env(domain_id)
    out = {"domain_id": domain_id, "discovery": "LOCALHOST"}
    log_dir = tempfile.mkdtemp(prefix="rdr-bench-nodes-")
    out["node_logs"] = log_dir
    probe = Probe(domain_id, spin=0.05)
    try:
        if do_node:
            if {"dynamics_node", "computed_torque_node"} & set(missing):
                out["skipped_node"] = f"nodes not there yet: {missing}"
            else:
                out["ready"] = measure_ready(probe, env, log_dir, ready_runs)
                out["echo"] = measure_round_trip(probe, "echo", env, log_dir, duration)
                out["controller"] = measure_round_trip(probe, "controller", env, log_dir, duration)
                out["controller_goal"] = measure_round_trip(probe, "controller_goal", env, log_dir,
                                                            duration)
                out["task_space"] = measure_round_trip(probe, "task_space", env, log_dir, duration)
                out["dynamics"] = measure_round_trip(probe, "dynamics", env, log_dir, duration)
                out["estimator"] = measure_round_trip(probe, "estimator", env, log_dir, duration)
                out["mpc"] = measure_mpc(probe, env, log_dir, duration)
        if do_sim:
            if "simulator_node" in missing:
                out["skipped_sim"] = "simulator_node not there yet"
            else:
                out["simulator"] = measure_simulator(probe, env, log_dir, sim_duration)
    finally:
        probe.publishing = False
        probe.close()
    if not any(isinstance(v, dict) and ("error" in v or v.get("notes")) for v in out.values()):
        shutil.rmtree(log_dir, ignore_errors=True)      # keep the node logs only when something failed
        out["node_logs"] = None
    return out


def main(argv=None):
    """The MPC's round trip alone, beside the computed-torque controller's as the load reference, in
    one run (a quick look at the MPC tail without the whole node section): ``python benchmarks/_ros.py
    [--duration s] [--rounds k] [--json path] [--also name=value ...]``; the rounds alternate controller,
    mpc, and with --also the MPC with those parameters (e.g. ``--also max_iterations=5``)."""
    import argparse
    import json
    import random

    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("--duration", type=float, default=20.0, help="window of each run, s (default 20)")
    p.add_argument("--rounds", type=int, default=1, help="controller, mpc pairs (default 1)")
    p.add_argument("--json", help="JSON output path")
    p.add_argument("--also", nargs="+", metavar="NAME=VALUE", default=[],
                   help="a third run per round: the MPC with these parameters")
    opts = p.parse_args(argv)
    also = dict(item.split("=", 1) for item in opts.also)
    domain_id = random.randint(1, 101)
    os.environ["ROS_DOMAIN_ID"] = str(domain_id)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    env = ros_env(domain_id)
    log_dir = tempfile.mkdtemp(prefix="rdr-bench-mpc-")
    probe = Probe(domain_id, spin=0.05)
    runs = [("controller", lambda: measure_round_trip(probe, "controller", env, log_dir, opts.duration)),
            ("mpc", lambda: measure_mpc(probe, env, log_dir, opts.duration))]
    if also:
        runs.append((" ".join(opts.also),
                     lambda: measure_mpc(probe, env, log_dir, opts.duration, parameters=also)))
    out = {"load_start": os.getloadavg(), **{key: [] for key, _ in runs}}
    try:
        for _ in range(opts.rounds):
            for key, measure in runs:
                r = measure()
                out[key].append(r)
                nan = float("nan")
                line = (f"median {r.get('median_ms', nan):.3f} ms  p99 {r.get('p99_ms', nan):.3f} ms  "
                        f"max {r.get('max_ms', nan):.2f} ms  CPU {r.get('cpu_percent', 0):.0f} %")
                if key != "controller" and "error" not in r:
                    line += f"  re-plan {r['replan_rate_hz']} Hz  solve median {r['solve_median_ms']} ms"
                print(f"{key:10s} " + (r["error"].splitlines()[0] if "error" in r else line)
                      + f"  load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        probe.publishing = False
        probe.close()
    out["load_end"] = os.getloadavg()
    if opts.json:
        Path(opts.json).write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
