"""Batched rollouts (run.py section ``rollouts``): simulate_batch beside Pinocchio and MuJoCo.

The case: example-robot-data's Panda (fingers locked at 0, 7 joints; ``_robots.panda``), B = 64
rollouts of 200 steps, dt = 1 ms, RK4, each rollout from its own state near Franka's ready pose
(q ± 0.3 rad, q̇ ± 0.5 rad/s) under its own torques: gravity at the start plus N(0, (2 N m)²)
per step and joint, held over each step. No friction, no contact, no joint limits.

Timed, in rounds (each call once per round, the order rotating from round to round, gc off):

- ours: ``rd.simulate_batch`` with ``set_num_threads(1)`` and ``set_num_threads(2)``;
- MuJoCo: ``mujoco.rollout.Rollout(nthread).rollout`` (its C++ thread pool, persistent across
  calls; nthread 0 = the calling thread alone, reported as 1 thread, and 2) on the same arm: the
  same URDF through the package's ``logic.mujoco_engine.compile_spec`` with the geometry removed,
  the finger joints deleted (welded at 0), MuJoCo's RK4 (``mjINT_RK4``), constraints and contacts
  disabled (``mjDSBL_CONSTRAINT | mjDSBL_CONTACT``: no joint limits), joint damping (the URDF's
  0.003), friction loss and armature set to 0, so that its equation of motion is ours; the torques
  go in as ``qfrc_applied`` (``control_spec = mjSTATE_QFRC_APPLIED``), one MjData per thread;
- Pinocchio: a Python loop over the rollouts of ``_robots.pin_simulate_rk4`` (classical RK4 around
  ``pin.aba``, one Python call per stage), timed in fewer rounds spread over the run (one call takes
  about 0.3 s).

Reported: the median time per call over the rounds, states per second (B × steps / time), the
paired 2-thread / 1-thread ratio (median over rounds of the per-round ratio; target ≤ 0.6 on a
2-core machine, issue 40), and the largest relative error of every state (q and q̇, every rollout
and step) of ours and of MuJoCo's against Pinocchio's loop: max |x − x_pin| / max |x_pin|.
"""
import gc
import os
import statistics
import time
import xml.etree.ElementTree as ET

import mujoco
import mujoco.rollout
import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.threads import run_chunks
from robot_dynamics_ros.logic.mujoco_engine import compile_spec

import _robots as R

ROLLOUTS, STEPS, DT = 64, 200, 1e-3
TARGET_2T = 0.6                 # 2-thread time / 1-thread time (issue 40, part 3)
THREADS = (1, 2)


def inputs(pair, seed=0):
    """(q0, qd0, tau) in our joint order: (B, n), (B, n), (B, steps, n) (module docstring)."""
    rng = np.random.default_rng(seed)
    n = pair.n
    q0 = R.PANDA_READY + rng.uniform(-0.3, 0.3, (ROLLOUTS, n))
    qd0 = rng.uniform(-0.5, 0.5, (ROLLOUTS, n))
    gravity = np.array([rd.gravity_torques(pair.ours, q) for q in q0])
    tau = gravity[:, None, :] + rng.normal(0.0, 2.0, (ROLLOUTS, STEPS, n))
    return q0, qd0, tau


def mujoco_arm(pair):
    """(MjModel, qpos indices, dof indices of our joints) of the Panda (module docstring)."""
    root = ET.fromstring(R.PANDA_URDF.read_text())
    for link in root.findall("link"):           # geometry: none needed without contacts
        for element in link.findall("collision") + link.findall("visual"):
            link.remove(element)
    spec = compile_spec(ET.tostring(root, encoding="unicode"))
    for equality in list(spec.equalities):      # the finger's mimic coupling: the fingers are welded
        spec.delete(equality)
    for name in R.PANDA_FINGERS:                # welded at q = 0, as our model locks them
        spec.delete(spec.joint(name))
    spec.option.timestep = DT
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    m = spec.compile()
    m.dof_damping[:] = 0.0
    m.dof_frictionloss[:] = 0.0
    m.dof_armature[:] = 0.0
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name) for name in pair.ours.joint_names]
    return m, np.array([m.jnt_qposadr[i] for i in ids]), np.array([m.jnt_dofadr[i] for i in ids])


class MujocoRollouts:
    """MuJoCo's batched rollout of (q0, qd0, tau) with `nthread` pool threads (0: the calling thread)."""

    def __init__(self, pair, q0, qd0, tau, nthread):
        m, self.qpos, self.dof = mujoco_arm(pair)
        self.m = m
        self.datas = [mujoco.MjData(m) for _ in range(max(nthread, 1))]
        self.pool = mujoco.rollout.Rollout(nthread=nthread)
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        d = self.datas[0]
        self.initial = np.empty((len(q0), mujoco.mj_stateSize(m, spec)))
        for b in range(len(q0)):
            mujoco.mj_resetData(m, d)
            d.qpos[self.qpos], d.qvel[self.dof] = q0[b], qd0[b]
            mujoco.mj_getState(m, d, self.initial[b], spec)
        self.control = np.zeros((len(q0), tau.shape[1], m.nv))
        self.control[:, :, self.dof] = tau
        self.state = np.empty((len(q0), tau.shape[1], self.initial.shape[1]))

    def __call__(self):
        self.pool.rollout(self.m, self.datas, self.initial, self.control,
                          control_spec=mujoco.mjtState.mjSTATE_QFRC_APPLIED.value, state=self.state)
        return self.state

    def trajectories(self):
        """(q, q̇) of shape (B, steps + 1, n) in our joint order, the initial states first."""
        spec, d = mujoco.mjtState.mjSTATE_FULLPHYSICS, self.datas[0]
        B, steps = self.state.shape[:2]
        q, qd = np.empty((B, steps + 1, len(self.qpos))), np.empty((B, steps + 1, len(self.qpos)))
        for b in range(B):
            for k, row in enumerate([self.initial[b], *self.state[b]]):
                mujoco.mj_setState(self.m, d, row, spec)
                q[b, k], qd[b, k] = d.qpos[self.qpos], d.qvel[self.dof]
        return q, qd

    def close(self):
        self.pool.close()


def _timed(fn, before=None):
    """Seconds of one fn() (gc off); before() first, untimed."""
    if before is not None:
        before()
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def _ours(model, q0, qd0, tau):
    def call():
        return rd.simulate_batch(model, q0, qd0, tau, DT, method="rk4")
    return call


def _use_threads(count):
    """set_num_threads(count), untimed, and its pool's threads started (set_num_threads replaces the
    pool, whose threads start on their first range): a round times rollouts, not thread start-up."""
    def before():
        rd.set_num_threads(count)
        run_chunks(count, lambda start, stop: None)
    return before


def _pinocchio(pair, q0, qd0, tau):
    """Pinocchio's Python loop: (q, q̇) (B, steps + 1, n) in our joint order."""
    inverse = np.argsort(pair.perm)
    q0p, qd0p, taup = pair.to_pin(q0), pair.to_pin(qd0), pair.to_pin(tau)

    def call():
        runs = [R.pin_simulate_rk4(pair.pm, pair.pd, q0p[b], qd0p[b], taup[b], DT) for b in range(len(q0p))]
        return np.array([r[0] for r in runs])[..., inverse], np.array([r[1] for r in runs])[..., inverse]
    return call


def _rel_error(x, reference):
    return float(np.abs(x - reference).max() / np.abs(reference).max())


def _summary(times):
    states = ROLLOUTS * STEPS
    median = statistics.median(times)
    return {"median_s": median, "min_s": min(times), "max_s": max(times), "rounds": len(times),
            "states_per_s": states / median}


def run(rounds=21, pin_rounds=3):
    """The measurements of the module docstring; a JSON-ready dict."""
    pair = R.panda()
    q0, qd0, tau = inputs(pair)
    threads_before = rd.get_num_threads()
    cases = {f"ours {t}T": _ours(pair.ours, q0, qd0, tau) for t in THREADS}
    before = {f"ours {t}T": _use_threads(t) for t in THREADS}
    mujocos = {t: MujocoRollouts(pair, q0, qd0, tau, 0 if t == 1 else t) for t in THREADS}
    cases.update({f"mujoco {t}T": mujocos[t] for t in THREADS})
    times = {name: [] for name in cases}
    try:
        for name, call in cases.items():        # warm-up: compile or load, start the pools
            _timed(call, before.get(name))
        pinocchio, pin_times = _pinocchio(pair, q0, qd0, tau), []
        names, pin_every = list(cases), max(rounds // pin_rounds, 1)
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                times[name].append(_timed(cases[name], before.get(name)))
            if r % pin_every == pin_every // 2 and len(pin_times) < pin_rounds:    # spread over the run
                pin_times.append(_timed(pinocchio))
        q_pin, qd_pin = pinocchio()
        before["ours 1T"]()
        ours = cases["ours 1T"]()
        mujoco_q, mujoco_qd = mujocos[1].trajectories()
    finally:
        rd.set_num_threads(threads_before)
        for m in mujocos.values():
            m.close()
    results = {name: _summary(t) for name, t in times.items()}
    results["pinocchio loop"] = _summary(pin_times)
    for side in ("ours", "mujoco"):
        pairs = [b / a for a, b in zip(times[f"{side} 1T"], times[f"{side} 2T"])]
        results[f"{side} 2T"]["ratio_to_1T"] = statistics.median(pairs)
        results[f"{side} 2T"]["met"] = results[f"{side} 2T"]["ratio_to_1T"] <= TARGET_2T
    pin_s = results["pinocchio loop"]["median_s"]
    for r in results.values():
        r["speed_up_over_pinocchio"] = pin_s / r["median_s"]
    results["ours 1T"]["rel_error_to_pinocchio"] = max(_rel_error(ours.q, q_pin), _rel_error(ours.qd, qd_pin))
    results["mujoco 1T"]["rel_error_to_pinocchio"] = max(_rel_error(mujoco_q, q_pin),
                                                         _rel_error(mujoco_qd, qd_pin))
    return {"robot": pair.description, "rollouts": ROLLOUTS, "steps": STEPS, "dt": DT, "method": "rk4",
            "rounds": rounds, "pinocchio_rounds": pin_rounds, "mujoco": mujoco.__version__,
            "loadavg": os.getloadavg(), "target_2T": TARGET_2T, "results": results}
