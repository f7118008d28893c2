"""The simulator's MuJoCo engine beside its rigid-body engine (run.py section ``mujoco_engine``).

Two parts, both on the UR5e (urdf/ur5e.urdf, tip tool0) at dt = 1 ms, RK4, friction off (as
config/simulation.yaml runs the simulator):

- ``step_costs``: the cost of one ``step`` of each engine, in this process. Cases: RigidBodyEngine;
  MujocoEngine without a world; MujocoEngine with worlds/table.xml while the tool ball presses on the
  table (one contact on the arm; the cube standing on the table adds its own contacts with it);
  MuJoCo's bare ``mj_step`` on each engine's own compiled model and data (the engine's overhead is
  the difference); ``mj_step(m, d, nstep)`` looping in C (the Python call's share); and
  ``MujocoEngine.contact_torques()`` right after a step (what simulator_node does per published
  state when something subscribes to ~/contact_torques: it includes the ``mj_forward`` that brings
  the contacts up to the new state) and again at the same state (forward cached). Every step is
  timed on its own (``perf_counter_ns`` around the call); the torque is a joint-space PD around the
  case's equilibrium (τ = τ₀ + M(q₀) (K_p (q₀ − q) − K_d q̇), config/simulation.yaml's gains, computed
  outside the timed call), so that every case stays at its state for the whole run: the rigid-body
  and free MuJoCo arms held at the home pose against gravity, the table arm with the ball pressed
  towards 20 mm below the table top (settled there first: about 8 N on the table).
  Blocks of ``block`` steps per case, the cases in turn, ``rounds`` times (a drift of the shared
  machine hits all alike); a warm-up block of each first. Reported: median, p99 and mean over all
  steps of a case, and the ratio of medians to the rigid-body engine.
- ``node_runs``: simulator_node (engine mujoco with the table world, then rigid_body) at dt 1 ms,
  publish_rate 1000, real_time_factor 1, publish_clock, with computed_torque_node on every joint
  state (config/simulation.yaml's gains, use_sim_time), both as processes as in benchmarks/soak.py
  (``_ros.NodeProcess``) on an isolated ROS domain; first free to run on any CPU, then both
  confined to one (``sched_setaffinity`` as they start). The controller is sent a 2 s move of the tool
  ball to 20 mm below the table top (on MuJoCo the ball then presses on the table). After the
  warm-up, for ``seconds`` s of wall time: the simulator's ``simulated time (s)`` and ``simulated
  time dropped (s)`` from its /diagnostics (period 0.5 s; factor = Δ simulated time / Δ arrival time
  of the first and last status in the window), and each process's CPU (Δ(utime + stime) from
  /proc/<pid>/stat / wall time, % of one core) and the whole machine's (CPUs × wall time − idle time
  of /proc/stat, % of one core: 200 = both cores busy; the machine is shared). The probe here
  subscribes to /diagnostics only; after the window it listens to ~/contact_torques for a moment to
  check the contact.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mujoco
import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli.resources import world_file
from robot_dynamics_ros.logic.mujoco_engine import MujocoEngine
from robot_dynamics_ros.logic.rigid_body_engine import RigidBodyEngine

from _ros import NodeProcess, cpu_seconds, ros_env, spin_for, spin_until

URDF = Path(__file__).resolve().parents[1] / "urdf" / "ur5e.urdf"
WORLD = "table.xml"
TIP = "tool0"
DT = 1e-3
INTEGRATOR = "rk4"
HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])     # config/simulation.yaml
TABLE_TOP_Z = 0.40              # worlds/table.xml
BALL_RADIUS = 0.025             # the tool ball on tool0 (urdf/ur5e.urdf)
PRESS_DEPTH = 0.020             # the ball's target below the table top, m
KP = np.array([400.0, 400.0, 300.0, 200.0, 150.0, 100.0])         # config/simulation.yaml's gains
KD = np.array([40.0, 40.0, 34.64, 28.28, 24.49, 20.0])            # (1/s², 1/s)


def load():
    """(model, URDF text) of the UR5e with tip tool0."""
    return rd.load_urdf(str(URDF), tip_link=TIP), URDF.read_text()


def press_pose(model, depth=PRESS_DEPTH, iterations=20):
    """Joint positions with tool0 straight below its home pose, the ball's lowest point ``depth`` m
    below the table top, the tool's orientation that of home (Newton steps on the pose error,
    world-aligned Jacobian)."""
    T0 = rd.frame_pose(model, HOME, TIP)
    p_goal = T0[:3, 3].copy()
    p_goal[2] = TABLE_TOP_Z - depth + BALL_RADIUS
    q = HOME.copy()
    for _ in range(iterations):
        T = rd.frame_pose(model, q, TIP)
        dR = T0[:3, :3] @ T[:3, :3].T
        w = 0.5 * np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]])
        error = np.concatenate([w, p_goal - T[:3, 3]])
        q = q + np.linalg.lstsq(rd.jacobian(model, q, TIP, reference="world_aligned"), error, rcond=None)[0]
    return q


class _Held:
    """An engine held at (q0, τ0) by the PD law of the module docstring; ``tau()`` for its state."""

    def __init__(self, engine, q0, tau0, M0):
        self.engine, self.q0, self.tau0, self.M0 = engine, q0, tau0, M0

    def tau(self):
        e = self.engine
        return self.tau0 + self.M0 @ (KP * (self.q0 - e.q) - KD * e.qd)


def _settle(engine, q_goal, M, steps=3000):
    """Press the tool ball on the table: gravity + PD towards ``q_goal`` (below the table top) from
    home; returns (q, τ) at rest, where the contact holds the arm against the PD's push."""
    engine.reset(HOME, np.zeros(6))
    for _ in range(steps):
        tau = engine.holding_torques() + M @ (KP * (q_goal - engine.q) - KD * engine.qd)
        engine.step(tau)
    return engine.q, tau


def _time_calls(fn, n, out, before=None):
    """Append the time of each of n calls of fn (ns) to out; ``before()`` untimed before each."""
    clock = time.perf_counter_ns
    for _ in range(n):
        if before is not None:
            before()
        t0 = clock()
        fn()
        out.append(clock() - t0)


RIGID = "RigidBodyEngine.step"
FREE, FREE_BARE = "MujocoEngine.step, no world", "mj_step, no world"
TABLE, TABLE_BARE = "MujocoEngine.step, table, ball pressing", "mj_step, table, ball pressing"
CONTACT, CONTACT_CACHED = "contact_torques() after a step (incl. mj_forward)", "contact_torques() again"


def step_costs(block=500, rounds=20, nstep=500):
    """Per-step costs of the cases (module docstring); returns the JSON-ready dict."""
    model, xml = load()
    q_press = press_pose(model)
    zeros = np.zeros(model.nq)
    rigid = RigidBodyEngine(model, DT, INTEGRATOR)
    free = MujocoEngine(model, xml, DT, INTEGRATOR, base_dir=str(URDF.parent))
    table = MujocoEngine(model, xml, DT, INTEGRATOR, world_path=str(world_file(WORLD)),
                         base_dir=str(URDF.parent))
    rigid.reset(HOME, zeros)
    free.reset(HOME, zeros)
    M_home, M_press = rd.mass_matrix(model, HOME), rd.mass_matrix(model, q_press)
    q_table, tau_table = _settle(table, q_press, M_press)
    held = {"rigid": _Held(rigid, HOME, rd.gravity_torques(model, HOME), M_home),
            "free": _Held(free, HOME, free.holding_torques(), M_home),
            "table": _Held(table, q_table, tau_table, M_press)}

    # each: (timed call, untimed call before it) for a held engine
    def engine_step(h):
        tau = [None]

        def before():
            tau[0] = h.tau()
        return (lambda: h.engine.step(tau[0])), before

    def bare(steps):
        def make(h):
            e = h.engine

            def before():
                e.data.qfrc_applied[e.dof] = h.tau()
            return (lambda: mujoco.mj_step(e.mj, e.data, steps)), before
        return make

    def contact_after_step(h):
        return h.engine.contact_torques, lambda: h.engine.step(h.tau())

    def contact_again(h):
        def before():
            h.engine.step(h.tau())
            h.engine.contact_torques()
        return h.engine.contact_torques, before

    in_c = f"mj_step(m, d, nstep={nstep}) in C, per step"
    cases = {   # name: (held engine, maker, steps per timed call)
        RIGID: ("rigid", engine_step, 1),
        FREE: ("free", engine_step, 1),
        FREE_BARE: ("free", bare(1), 1),
        f"{in_c}, no world": ("free", bare(nstep), nstep),
        TABLE: ("table", engine_step, 1),
        TABLE_BARE: ("table", bare(1), 1),
        f"{in_c}, table": ("table", bare(nstep), nstep),
        CONTACT: ("table", contact_after_step, 1),
        CONTACT_CACHED: ("table", contact_again, 1),
    }
    calls = {name: make(held[key]) for name, (key, make, _) in cases.items()}
    times = {name: [] for name in cases}
    for name, (fn, before) in calls.items():             # warm-up (kernels loaded, caches warm)
        _time_calls(fn, block if cases[name][2] == 1 else 2, [], before)
    for _ in range(rounds):
        for name, (fn, before) in calls.items():         # (nstep in C: one timed call per round)
            _time_calls(fn, block if cases[name][2] == 1 else 1, times[name], before)

    table.step(held["table"].tau())
    contacts = table.contacts()
    out = {"robot": "UR5e (urdf/ur5e.urdf, tip tool0)", "dt": DT, "integrator": INTEGRATOR,
           "friction": False, "mujoco": mujoco.__version__, "block": block, "rounds": rounds,
           "torque": "tau0 + M(q0) (kp (q0 - q) - kd qd) about each case's equilibrium (kp, kd of "
                     "config/simulation.yaml), computed outside the timed call",
           "table_state": {"q": q_table.tolist(), "ncon": int(table.data.ncon),
                           "arm_contacts": [{"body": c.body, "other": c.other, "depth_m": c.depth,
                                             "normal_force_N": float(c.force @ c.normal)} for c in contacts],
                           "contact_torques": table.contact_torques(contacts).tolist()},
           "results": {}}
    rigid_median = float(np.median(times[RIGID])) * 1e-9
    for name, (_key, _make, per) in cases.items():
        a = np.asarray(times[name], dtype=float) * 1e-9 / per
        out["results"][name] = {
            "median_s": float(np.median(a)), "p99_s": float(np.percentile(a, 99)) if per == 1 else None,
            "mean_s": float(a.mean()), "min_s": float(a.min()), "samples": int(a.size), "steps_per_call": per,
            "ratio_to_rigid_body": float(np.median(a)) / rigid_median}
    rigid_blocks = _block_medians(times[RIGID], block)
    for name, bare_name in ((FREE, FREE_BARE), (TABLE, TABLE_BARE)):
        r = out["results"][name]
        # the median over rounds of (this block's median / the rigid-body block's of the same round)
        r["ratio_paired_rounds"] = statistics.median(
            m / b for m, b in zip(_block_medians(times[name], block), rigid_blocks))
        r["overhead_over_mj_step_s"] = r["median_s"] - out["results"][bare_name]["median_s"]
    return out


def _block_medians(ns, block):
    return [statistics.median(ns[i:i + block]) for i in range(0, len(ns), block)]


# -- the node graph ----------------------------------------------------------------------------------
SIM_STATUS = "simulator_node: simulation"
RTF_TARGET = 0.99               # "keeps real time": at most 1 % of the simulated time dropped
START_TIMEOUT_S = 600.0         # after an edit of the kernels, each node compiles them first


def _yaml(values):
    return "[" + ", ".join(f"{float(x):.6f}" for x in values) + "]"


def simulator_params(engine):
    """simulator_node's parameters: config/simulation.yaml's, at publish_rate 1000, on ``engine``."""
    params = {"urdf_path": str(URDF), "tip_link": TIP, "engine": engine, "integrator": INTEGRATOR,
              "dt": str(DT), "friction": "false", "publish_rate": "1000.0", "real_time_factor": "1.0",
              "publish_clock": "true", "initial_positions": _yaml(HOME), "wait_for_command": "true",
              "command_timeout": "0.5", "lockstep_timeout": "0.05", "diagnostics_period": "0.5"}
    if engine == "mujoco":
        params["world_path"] = str(world_file(WORLD))
    return params


def controller_params():
    """computed_torque_node's: config/simulation.yaml's (a command for every joint state)."""
    return {"urdf_path": str(URDF), "use_sim_time": "true", "kp": _yaml(KP), "kd": _yaml(KD),
            "control_rate": "0.0", "state_timeout": "0.1", "start_enabled": "true",
            "diagnostics_period": "0.5"}


class _DiagnosticsProbe:
    """A node in this process that keeps every /diagnostics status with its arrival time."""

    def __init__(self, domain_id):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray

        from robot_dynamics_ros.nodes.common import make_executor

        self.rclpy = rclpy
        self.context = rclpy.context.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node("mujoco_engine_probe", context=self.context)
        self.executor = make_executor(context=self.context)
        self.executor.add_node(self.node)
        self.statuses = []          # (CLOCK_MONOTONIC ns at arrival, name, {key: value})
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, 100)

    def _on_diagnostics(self, msg):
        now = time.monotonic_ns()
        for status in msg.status:
            self.statuses.append((now, status.name, {v.key: v.value for v in status.values}))

    def latest(self, name):
        for entry in reversed(self.statuses):
            if entry[1] == name:
                return entry
        return None

    def spin(self, seconds):
        spin_for(self.executor, seconds)

    def spin_until(self, predicate, timeout):
        return spin_until(self.executor, predicate, timeout)

    def send_move(self, model, q_goal, seconds=2):
        """A reference for the controller: from where the arm is to ``q_goal`` in ``seconds`` s."""
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        pub = self.node.create_publisher(JointTrajectory, "/computed_torque_controller/joint_trajectory", 10)
        self.spin_until(lambda: pub.get_subscription_count() > 0, 5.0)
        self.spin(0.5)      # (matched on this side need not be on the controller's yet)
        point = JointTrajectoryPoint(positions=[float(x) for x in q_goal], velocities=[0.0] * model.nq)
        point.time_from_start.sec = seconds
        for _ in range(3):  # the same goal again: a lost message must not leave the arm at home
            pub.publish(JointTrajectory(joint_names=list(model.joint_names), points=[point]))
            self.spin(0.2)
        self.node.destroy_publisher(pub)

    def contact_torques(self, seconds=1.0):
        """The last ~/contact_torques of the simulator within ``seconds`` (None: none came)."""
        from sensor_msgs.msg import JointState

        got = []
        sub = self.node.create_subscription(JointState, "/simulator_node/contact_torques",
                                            lambda m: got.append(list(m.effort)), 10)
        self.spin(seconds)
        self.node.destroy_subscription(sub)
        return got[-1] if got else None

    def close(self):
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self.rclpy.try_shutdown(context=self.context)


def _machine_idle_s():
    """Seconds all CPUs spent idle since boot (/proc/stat: idle + iowait). (The busy fields, sampled
    at the scheduler tick, miss a process that wakes every millisecond almost entirely; the idle
    time is measured.)"""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (fields[3] + fields[4]) / os.sysconf("SC_CLK_TCK")


def _number(status, key):
    try:
        return float(status[key])
    except (KeyError, ValueError):
        return None


class _OneProcessGraph(NodeProcess):
    """Both nodes in one process on one executor (benchmarks/_one_process_graph.py), as bring-up."""

    def __init__(self, simulator, controller, env, log_dir):     # (NodeProcess's stop, alive, tail)
        self.log_path = Path(log_dir) / f"one_process_graph-{time.monotonic_ns()}.log"
        self._log = open(self.log_path, "w")
        self.t_spawn = time.monotonic_ns()
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("_one_process_graph.py")), json.dumps(simulator),
             json.dumps(controller)], env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid


def node_run(probe, engine, env, log_dir, seconds, warmup, cpus=None, one_process=False):
    """One simulator + controller graph on ``engine`` (module docstring); the JSON-ready dict.
    ``cpus``: the set of CPUs the processes are confined to (None: any); ``one_process``: both nodes in
    one process on one executor (as bring-up runs a graph), its CPU reported as the simulator's."""
    model, _xml = load()
    result = {"engine": engine, "cpus": None if cpus is None else sorted(cpus), "one_process": one_process,
              "simulator": simulator_params(engine), "controller": controller_params()}
    probe.statuses.clear()
    if one_process:
        procs = {"simulator": _OneProcessGraph(simulator_params(engine), controller_params(), env, log_dir)}
    else:
        procs = {key: NodeProcess(f"robot_dynamics_ros.nodes.{module}", params, env, log_dir)
                 for key, module, params in (("simulator", "simulator_node", simulator_params(engine)),
                                             ("controller", "computed_torque_node", controller_params()))}
    for process in procs.values():
        if cpus is not None:
            # at once, before the interpreter starts its threads (DDS's): they inherit it
            os.sched_setaffinity(process.pid, cpus)
    try:
        def running():
            latest = probe.latest(SIM_STATUS)
            return (latest is not None and latest[2].get("state") == "running") or not all(
                p.alive() for p in procs.values())
        t0 = time.monotonic()
        if not probe.spin_until(running, START_TIMEOUT_S) or not all(p.alive() for p in procs.values()):
            result["error"] = ("the simulation did not start running: " + "; ".join(
                f"{k}: {p.tail(8)}" for k, p in procs.items()))
            return result
        result["start_s"] = time.monotonic() - t0
        probe.send_move(model, press_pose(model))
        probe.spin(warmup)
        w0, idle0, load0 = time.monotonic_ns(), _machine_idle_s(), os.getloadavg()[0]
        c0 = {k: cpu_seconds(p.pid) for k, p in procs.items()}
        probe.spin(seconds)
        w1, idle1, load1 = time.monotonic_ns(), _machine_idle_s(), os.getloadavg()[0]
        c1 = {k: cpu_seconds(p.pid) for k, p in procs.items()}
        window = [(t, s) for t, name, s in probe.statuses if name == SIM_STATUS and w0 <= t <= w1]
        if engine == "mujoco":
            torques = probe.contact_torques()
            result["contact_torques_after"] = torques
            result["in_contact_after"] = torques is not None and float(np.abs(torques).max()) > 1e-6
        result["alive_at_end"] = {k: p.alive() for k, p in procs.items()}
        last_controller = next((s for t, name, s in reversed(probe.statuses)
                                if name.startswith("computed_torque_controller")), None)
    finally:
        for p in procs.values():
            p.stop()
    wall = (w1 - w0) * 1e-9
    result["window_s"] = wall
    result["cpu_percent"] = {k: 100.0 * (c1[k] - c0[k]) / wall for k in procs}   # one process: both nodes
    # the whole machine's busy time (every process, this one and the other users' included)
    result["machine_busy_percent"] = 100.0 * (os.cpu_count() * wall - (idle1 - idle0)) / wall
    result["loadavg_1min"] = [load0, load1]
    if len(window) < 2:
        result["error"] = f"{len(window)} simulator statuses in the window"
        return result
    (ta, a), (tb, b) = window[0], window[-1]
    sim = _number(b, "simulated time (s)") - _number(a, "simulated time (s)")
    dropped = _number(b, "simulated time dropped (s)") - _number(a, "simulated time dropped (s)")
    span = (tb - ta) * 1e-9
    result.update(status_span_s=span, simulated_s=sim, dropped_s=dropped, real_time_factor=sim / span,
                  dropped_fraction=dropped / span, met=sim / span >= RTF_TARGET,
                  tick_median_ms=_number(b, "compute time median (ms)"),
                  tick_p99_ms=_number(b, "compute time p99 (ms)"),
                  simulator_status=b, controller_status=last_controller)
    return result


#: (label, confined to one CPU, both nodes in one process) of node_runs' settings.
SETTINGS = (("any CPU", False, False), ("one CPU", True, False), ("one process, one CPU", True, True))


def node_runs(domain_id, seconds=10.0, warmup=4.0, repeats=2, engines=("mujoco", "rigid_body")):
    """node_run for each engine on one ROS domain: the two processes free to use every CPU ('any
    CPU'), then both confined to one CPU ('one CPU'), then both nodes in one process on one executor
    confined to one CPU ('one process, one CPU': the graph as bring-up runs it, on one core); each
    setting ``repeats`` times, the engines in the order A B B A ... (a drift of the shared machine hits
    both alike). The JSON-ready dict: ``runs`` one by one, ``settings`` their means per engine and
    setting."""
    env = ros_env(domain_id)
    os.environ.update({k: env[k] for k in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE")})
    log_dir = tempfile.mkdtemp(prefix="rdr-bench-mujoco-")
    probe = _DiagnosticsProbe(domain_id)
    one = {max(os.sched_getaffinity(0))}
    out = {"seconds": seconds, "warmup_s": warmup, "repeats": repeats, "domain_id": domain_id,
           "rtf_target": RTF_TARGET, "cpus_available": sorted(os.sched_getaffinity(0)), "runs": {},
           "settings": {}}
    try:
        for label, cpus, one_process in SETTINGS:
            for k in range(repeats):
                for engine in engines if k % 2 == 0 else engines[::-1]:
                    name = f"{engine}, {label} #{k + 1}"
                    out["runs"][name] = node_run(probe, engine, env, log_dir, seconds, warmup,
                                                 one if cpus else None, one_process)
                    probe.spin(0.5)
    finally:
        probe.close()
    for label, _cpus, one_process in SETTINGS:
        for engine in engines:
            runs = [r for name, r in out["runs"].items()
                    if name.startswith(f"{engine}, {label} #") and "error" not in r]
            if not runs:
                continue

            def mean(key, runs=runs):
                return float(np.mean([key(r) for r in runs]))
            rtf = mean(lambda r: r["real_time_factor"])
            out["settings"][f"{engine}, {label}"] = {
                "runs": len(runs), "real_time_factor": rtf, "met": rtf >= RTF_TARGET,
                "real_time_factor_runs": [r["real_time_factor"] for r in runs],
                "dropped_s_per_10_s": mean(lambda r: 10.0 * r["dropped_s"] / r["status_span_s"]),
                "simulator_cpu_percent": mean(lambda r: r["cpu_percent"]["simulator"]),
                "controller_cpu_percent": (None if one_process else   # (one process: in the simulator's)
                                           mean(lambda r: r["cpu_percent"]["controller"])),
                "machine_busy_percent": mean(lambda r: r["machine_busy_percent"]),
                "tick_median_ms": mean(lambda r: r["tick_median_ms"]),
                "in_contact": [r.get("in_contact_after") for r in runs]}
    if any("error" in r for r in out["runs"].values()):
        out["node_logs"] = log_dir
    else:
        shutil.rmtree(log_dir, ignore_errors=True)
    return out
