#!/usr/bin/env python3
"""Side-by-side timing of robot_dynamics_ros against Pinocchio, plus start-up, node and simulator speed.

    make bench                     # = OPENBLAS_NUM_THREADS=1 .venv-jazzy/bin/python benchmarks/run.py
    .venv-jazzy/bin/python benchmarks/run.py --quick   # < 2 min
    .venv-jazzy/bin/python benchmarks/run.py --only single,scaling
    .venv-jazzy/bin/python benchmarks/run.py --duration 60 --domain-id 42

Sections: single (one call, 3 robots), batch (N = 1000 states, our calls on 1 and 2 threads), contact (one
momentum-observer step, Panda and UR5), task_space (one call of the task-space law), identification
(a payload from 10^4 samples of the Panda), derivatives (∂τ, ∂q̈, linearize_trajectory), scaling
(random chains n = 1..60), startup (cold / warm numba cache, node ready time), node (1 kHz round
trips through the computed-torque and dynamics nodes), sim (simulation speed with and without ROS),
mujoco_engine (the simulator's MuJoCo engine beside its rigid-body engine: step cost, and real time in
the node graph with the controller), rollouts (simulate_batch, 64 Panda rollouts × 200 RK4 steps on 1
and 2 threads, beside a Python loop over Pinocchio's aba and MuJoCo's batched rollout).
Prints tables and writes JSON (benchmarks/results/latest.json unless --json). Method: README.md here.
"""
import os
import sys


def _blas_threads(argv):
    for i, a in enumerate(argv):
        if a == "--blas-threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--blas-threads="):
            return a.split("=", 1)[1]
    return "1"


# BLAS threads must be fixed before numpy loads OpenBLAS.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _blas_threads(sys.argv)

import argparse
import datetime
import json
import platform
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.spatial import exp_twist

import _batch_threads as BT
import _robots as R
import _timing as T

SECTIONS = ("single", "batch", "contact", "task_space", "feedforward", "identification",
            "robot_identification", "derivatives", "ocp", "scaling", "startup", "node", "sim", "viewer",
            "mujoco_engine", "rollouts")
SINGLE_TARGET = 1.0
BATCH_TARGET = 0.35
BATCH_THREADS_TARGET = 0.6       # 2 threads' time / 1 thread's, N = 20 000 Panda states (issue 40)
BATCH_THREADS_N = 20_000
CONTACT_TARGET = 0.3
TASK_SPACE_TARGET = 0.3
VIEWER_FPS_TARGET = 30.0         # frames/s the viewer sends beside a 1 kHz joint-state stream
FEEDFORWARD_TARGET = 1.0         # a goal's efforts (FeedforwardPlan.fill) against a Pinocchio rnea loop
FEEDFORWARD_POINTS = 100
IDENTIFY_TARGET_S = 0.050        # identify_payload on 10^4 samples of a 7-joint arm
IDENTIFY_SAMPLES = 10_000
ROBOT_IDENTIFY_TARGET_S = 5.0    # identify_robot on 20 s at 1 kHz of a 7-joint arm, consistent fit included
ROBOT_IDENTIFY_SECONDS = 20.0
DERIVATIVES_TARGET = 1.0         # one call of the dynamics' derivatives against Pinocchio's
LINEARIZE_TARGET = 0.35          # linearize_trajectory (N = 100) against a Python loop over Pinocchio's
LINEARIZE_N = 100
OCP_TARGET = 1.0                 # solve_optimal_control against Crocoddyl's best (1 or 2 threads)
OCP_TOLERANCE = 1e-9             # the stopping criterion of both solvers (Σ|Q_u|²)
SIM_TARGET_X = 50.0
METHOD = ("one process; for each case ours and Pinocchio's are timed back to back in every round "
          "(order alternating), rounds cycle through the same random states for both; each round is a "
          "timeit.Timer(...).timeit(number) loop, per call = round time / number (a per-round mean); "
          "reported: the MEDIAN over rounds of the per-round means; ratio = median over rounds of the paired "
          "per-round ratio ours/Pinocchio (both sides of a round ran back to back). "
          "Warm-up before timing; gc off while timing (timeit).")


# ----------------------------------------------------------------------------------------------
# printing

def table(headers, rows, title=None):
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    if title:
        lines += ["", title]

    def fmt(r):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

    lines.append(fmt(cells[0]))
    lines.append("  ".join("-" * w for w in widths))
    lines += [fmt(r) for r in cells[1:]]
    print("\n".join(lines), flush=True)


def us(x):
    return "-" if x is None else f"{x * 1e6:.2f}"


def ms(x):
    return "-" if x is None else f"{x * 1e3:.2f}"


def rat(x):
    return "-" if x is None else f"{x:.2f}"


def verdict(met):
    return {True: "yes", False: "NO", None: "-"}[met]


def err(x):
    return "-" if x is None else f"{x:.0e}"


def rel_error(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


# ----------------------------------------------------------------------------------------------
# single calls

def single_cases(pair, states):
    m, pm, pd, P = pair.ours, pair.pm, pair.pd, pair.to_pin
    K = len(states["q"])
    q = [states["q"][k].copy() for k in range(K)]
    qd = [states["qd"][k].copy() for k in range(K)]
    qdd = [states["qdd"][k].copy() for k in range(K)]
    tau = [states["tau"][k].copy() for k in range(K)]
    pq, pv, pa, pt = ([P(x) for x in xs] for xs in (q, qd, qdd, tau))
    frame, fid = pair.frame, pair.frame_id
    # name, ours, ours args, pin, pin args, pin description, compare(ours out, pin out) -> rel error
    inv = np.argsort(pair.perm)

    def vec(o, p):
        return rel_error(o, np.asarray(p)[inv])

    def mat(o, p):
        return rel_error(o, np.asarray(p)[np.ix_(inv, inv)])

    def lam(o, p):
        return rel_error(o, np.asarray(p)[np.ix_(R.SWAP6, R.SWAP6)])

    columns = np.concatenate([10 * inv[j] + np.arange(10) for j in range(len(inv))])

    def reg(o, p):
        return rel_error(o, np.asarray(p)[inv][:, columns])

    spec = [
        ("inverse_dynamics", rd.inverse_dynamics, [(m, q[k], qd[k], qdd[k]) for k in range(K)],
         pin.rnea, [(pm, pd, pq[k], pv[k], pa[k]) for k in range(K)], "pin.rnea", vec),
        ("mass_matrix", rd.mass_matrix, [(m, q[k]) for k in range(K)],
         pin.crba, [(pm, pd, pq[k]) for k in range(K)], "pin.crba", mat),
        ("forward_dynamics", rd.forward_dynamics, [(m, q[k], qd[k], tau[k]) for k in range(K)],
         pin.aba, [(pm, pd, pq[k], pv[k], pt[k]) for k in range(K)], "pin.aba", vec),
        ("gravity_torques", rd.gravity_torques, [(m, q[k]) for k in range(K)],
         pin.computeGeneralizedGravity, [(pm, pd, pq[k]) for k in range(K)], "pin.computeGeneralizedGravity",
         vec),
        ("coriolis_forces", rd.coriolis_forces, [(m, q[k], qd[k]) for k in range(K)],
         pin.nonLinearEffects, [(pair.pm0, pair.pd0, pq[k], pv[k]) for k in range(K)],
         "pin.nonLinearEffects on a model copy with gravity = 0", vec),
        ("bias_forces", rd.bias_forces, [(m, q[k], qd[k]) for k in range(K)],
         pin.nonLinearEffects, [(pm, pd, pq[k], pv[k]) for k in range(K)], "pin.nonLinearEffects", vec),
        ("coriolis_matrix", rd.coriolis_matrix, [(m, q[k], qd[k]) for k in range(K)],
         pin.computeCoriolisMatrix, [(pm, pd, pq[k], pv[k]) for k in range(K)], "pin.computeCoriolisMatrix",
         mat),
        ("task_space_inertia", rd.task_space_inertia, [(m, q[k], frame) for k in range(K)],
         R.pin_task_space_inertia, [(pm, pd, pq[k], fid) for k in range(K)],
         "computeMinverse + computeFrameJacobian(WORLD) + np.linalg.inv(J Minv J^T)", lam),
        ("joint_torque_regressor", rd.joint_torque_regressor, [(m, q[k], qd[k], qdd[k]) for k in range(K)],
         pin.computeJointTorqueRegressor, [(pm, pd, pq[k], pv[k], pa[k]) for k in range(K)],
         "pin.computeJointTorqueRegressor", reg),
    ]
    cases, checks = [], {}
    for name, f, fa, g, ga, desc, cmp in spec:
        try:
            checks[name] = max(cmp(f(*fa[k]), g(*ga[k])) for k in range(min(K, 4)))
        except Exception as exc:
            checks[name] = None
            print(f"  {pair.name} {name}: check failed: {type(exc).__name__}: {exc}", flush=True)
        cases.append(T.Case(name, f, fa, g, ga, target=SINGLE_TARGET, note=desc))
    return cases, checks


def section_single(opts):
    pairs = [R.panda(), R.ur5(), R.chain(30, seed=1)]
    out = {"method": METHOD, "states": opts.states, "rounds": opts.rounds, "robots": {}}
    t0 = time.perf_counter()
    for pair in pairs:
        states = pair.random_states(opts.states, seed=7)
        cases, checks = single_cases(pair, states)
        res = T.run_interleaved(cases, opts.rounds, opts.round_s)
        for name, r in res.items():
            r["check_rel_error"] = checks.get(name)
        out["robots"][pair.name] = {"description": pair.description, "n": pair.n, "frame": pair.frame,
                                    "results": res}
    out["seconds"] = time.perf_counter() - t0
    for name, rob in out["robots"].items():
        rows = [(fn, us(r.get("ours_s")), us(r.get("pin_s")), rat(r.get("ratio")), f"<= {SINGLE_TARGET:g}",
                 verdict(r.get("met")), err(r.get("check_rel_error")), r.get("error", ""))
                for fn, r in rob["results"].items()]
        table(["function", "ours us", "pin us", "ratio", "target", "met", "check", ""], rows,
              f"Single call: {name} ({rob['description']}; Λ at frame {rob['frame']})")
    print("  pin side of coriolis_forces: pin.nonLinearEffects on a copy of the model with gravity = 0 "
          "(Pinocchio has no c(q, qd) call); bias_forces: pin.nonLinearEffects. check = max relative "
          "difference ours vs Pinocchio on 4 states (joint order and angular/linear order permuted).")
    return out


# ----------------------------------------------------------------------------------------------
# contact sensing: one momentum-observer step

def section_contact(opts):
    """MomentumObserver.update against the same step composed from Pinocchio calls in Python
    (_robots.PinMomentumObserver), Panda and UR5, K = 50, dt = 1 ms; check: the two observers fed
    the same 4 states from the same start."""
    out = {"method": METHOD, "states": opts.states, "rounds": opts.rounds, "robots": {}}
    for pair in (R.panda(), R.ur5()):
        m, P = pair.ours, pair.to_pin
        S = pair.random_states(opts.states, seed=13)
        q, qd, tau = ([S[k][i].copy() for i in range(opts.states)] for k in ("q", "qd", "tau"))
        ours, theirs = rd.MomentumObserver(m, 50.0), R.PinMomentumObserver(pair.pm, pair.pd, 50.0)
        ours.reset(q[0], qd[0])
        theirs.reset(P(q[0]), P(qd[0]))
        inv = np.argsort(pair.perm)
        check = max(rel_error(ours.update(q[k], qd[k], tau[k], 1e-3),
                              theirs.update(P(q[k]), P(qd[k]), P(tau[k]), 1e-3)[inv]) for k in range(1, 4))
        case = T.Case("MomentumObserver.update", ours.update,
                      [(q[k], qd[k], tau[k], 1e-3) for k in range(opts.states)], theirs.update,
                      [(P(q[k]), P(qd[k]), P(tau[k]), 1e-3) for k in range(opts.states)],
                      target=CONTACT_TARGET,
                      note="crba + computeCoriolisMatrix + computeGeneralizedGravity + numpy")
        out["robots"][pair.name] = _run_one_case(
            opts, pair, case, check, CONTACT_TARGET,
            f"Contact sensing: {pair.name} ({pair.description}); pin side: crba + computeCoriolisMatrix + "
            "computeGeneralizedGravity + the same update in numpy")
    return out


def _pin_feedforward(pm, pd, Q, QD, QDD, gravity):
    """The efforts of trajectory_feedforward from Pinocchio calls in Python: rnea at every point, less
    the firmware's computeGeneralizedGravity (Franka's profile)."""
    tau = np.empty_like(Q)
    for k in range(Q.shape[0]):
        tau[k] = pin.rnea(pm, pd, Q[k], QD[k], QDD[k]) - (pin.computeGeneralizedGravity(pm, pd, Q[k])
                                                          if gravity else 0.0)
    return tau


def section_feedforward(opts):
    """trajectory_feedforward's work per goal: FeedforwardPlan.fill of a FEEDFORWARD_POINTS-point goal
    (positions and velocities: q̈ from the cubic Hermite segments, as JTC samples them; the Franka
    profile: the firmware's g(q) taken out) against a Python loop of Pinocchio's rnea and
    computeGeneralizedGravity at the same (q, q̇, q̈); check: the two efforts."""
    from robot_dynamics_ros.logic.feedforward import FeedforwardPlan, knot_derivatives
    from robot_dynamics_ros.logic.hardware import resolve

    out = {"method": METHOD, "points": FEEDFORWARD_POINTS, "rounds": opts.rounds, "robots": {}}
    for pair in (R.panda(), R.ur5()):
        m, P = pair.ours, pair.to_pin
        S = pair.random_states(FEEDFORWARD_POINTS, seed=17)
        times = np.arange(1, FEEDFORWARD_POINTS + 1) * 0.01
        velocities = list(S["qd"])
        plan = FeedforwardPlan(m, m, resolve("franka"), list(m.joint_names))
        args = (np.zeros(m.nq), times, S["q"], velocities, [None] * FEEDFORWARD_POINTS)
        qd, qdd = knot_derivatives(times, S["q"], velocities, [None] * FEEDFORWARD_POINTS)
        pin_args = (pair.pm, pair.pd, P(S["q"]), P(qd), P(qdd), True)
        check = rel_error(plan.fill(*args), _pin_feedforward(*pin_args)[:, np.argsort(pair.perm)])
        case = T.Case(f"FeedforwardPlan.fill ({FEEDFORWARD_POINTS} points)", plan.fill, [args],
                      _pin_feedforward, [pin_args], target=FEEDFORWARD_TARGET,
                      note="pin: a loop of rnea + computeGeneralizedGravity")
        out["robots"][pair.name] = _run_one_case(
            opts, pair, case, check, FEEDFORWARD_TARGET,
            f"Trajectory feed-forward: {pair.name} ({pair.description}), {FEEDFORWARD_POINTS} points, "
            "Franka profile; pin side: a Python loop of rnea + computeGeneralizedGravity")
    return out


def _run_one_case(opts, pair, case, check, target, title):
    """Time one case against its Pinocchio composition, print its table; the robot's result."""
    res = T.run_interleaved([case], opts.rounds, opts.round_s)
    for r in res.values():
        r["check_rel_error"] = check
    rows = [(fn, us(r.get("ours_s")), us(r.get("pin_s")), rat(r.get("ratio")), f"<= {target:g}",
             verdict(r.get("met")), err(r.get("check_rel_error"))) for fn, r in res.items()]
    table(["function", "ours us", "pin us", "ratio", "target", "met", "check"], rows, title)
    return {"description": pair.description, "n": pair.n, "results": res}


# ----------------------------------------------------------------------------------------------
# task-space control: one call of the law

def section_task_space(opts):
    """task_space_control against the same law composed from Pinocchio calls in Python
    (_robots.pin_task_space_control), Panda (with a null-space posture) and UR5, at the tip frame, the
    desired pose 0.4 rad and about 0.1 m away with a desired twist and its derivative; check: τ of both on
    4 states."""
    out = {"method": METHOD, "states": opts.states, "rounds": opts.rounds, "robots": {}}
    for pair in (R.panda(), R.ur5()):
        m, P = pair.ours, pair.to_pin
        S = pair.random_states(opts.states, seed=17)
        rng = np.random.default_rng(3)
        ours, theirs = [], []
        for k in range(opts.states):
            q, qd = S["q"][k].copy(), S["qd"][k].copy()
            T_des = rd.frame_pose(m, q) @ exp_twist(np.r_[0.6, 0.0, 0.8, 0.05, 0.02, 0.1], 0.4)
            V_des, Vdot_des = rng.normal(size=6), rng.normal(size=6)
            q0 = np.zeros(m.nq)
            ours.append((m, q, qd, T_des, V_des, Vdot_des, 100.0, 20.0, None, q0, 25.0))
            theirs.append((pair.pm, pair.pd, pair.frame_id, P(q), P(qd),
                           pin.SE3(T_des[:3, :3], T_des[:3, 3]), pin.Motion(V_des[R.SWAP6]),
                           pin.Motion(Vdot_des[R.SWAP6]), 100.0, 20.0, P(q0), 25.0, 10.0))
        inv = np.argsort(pair.perm)
        check = max(rel_error(rd.task_space_control(*ours[k]), R.pin_task_space_control(*theirs[k])[inv])
                    for k in range(4))
        case = T.Case("task_space_control", rd.task_space_control, ours, R.pin_task_space_control, theirs,
                      target=TASK_SPACE_TARGET,
                      note="computeAllTerms + frame Jacobian and its time variation + Cholesky + log6 "
                           "+ numpy")
        out["robots"][pair.name] = _run_one_case(
            opts, pair, case, check, TASK_SPACE_TARGET,
            f"Task-space control: {pair.name} ({pair.description}; frame {pair.frame}, posture q0 = 0 with "
            "kp0 = 25); pin side: computeAllTerms + computeJointJacobiansTimeVariation + frame Jacobian and "
            "its time variation (LOCAL) + Cholesky + log6 + the law in numpy")
    return out


# ----------------------------------------------------------------------------------------------
# identification: a payload from 10^4 samples

def section_identification(opts):
    """identify_payload on IDENTIFY_SAMPLES random states of the Panda (7 joints) whose torques carry a
    1.5 kg payload at the tip frame, against the same least squares from Pinocchio calls in Python
    (_robots.pin_identify_payload: a loop of computeJointTorqueRegressor + rnea, then numpy's lstsq);
    and identify_payload_from_log on a 10 s log at 1 kHz (its filter, differentiation and the same
    least squares; ours only). Target: identify_payload <= 50 ms. Check: the two masses."""
    pair = R.panda()
    m, P, N = pair.ours, pair.to_pin, IDENTIFY_SAMPLES
    carried = rd.with_payload(m, 1.5, [0.01, -0.02, 0.05], np.diag([0.004, 0.005, 0.003]))
    S = pair.random_states(N, seed=23)
    Q, QD, QDD = S["q"], S["qd"], S["qdd"]
    TAU = np.ascontiguousarray(rd.inverse_dynamics_trajectory(carried, Q, QD, QDD))
    joint_id = pair.pm.frames[pair.frame_id].parentJoint
    ours_args = (m, Q, QD, QDD, TAU)
    pin_args = (pair.pm, pair.pd, joint_id, P(Q), P(QD), P(QDD), P(TAU))
    check = rel_error(rd.identify_payload(*ours_args).mass, R.pin_identify_payload(*pin_args)[0])
    t = np.arange(N) * 1e-3
    w = 2 * np.pi * np.array([0.2, 0.45, 0.7])[:, None]
    amplitude = np.random.default_rng(4).uniform(-0.3, 0.3, (3, m.nq))
    Q_log = 0.5 * (m.lower + m.upper) + (amplitude * np.sin(w[None] * t[:, None, None])).sum(1)
    QD_log = (amplitude * w * np.cos(w[None] * t[:, None, None])).sum(1)
    QDD_log = (-amplitude * w ** 2 * np.sin(w[None] * t[:, None, None])).sum(1)
    TAU_log = rd.inverse_dynamics_trajectory(carried, Q_log, QD_log, QDD_log)
    cases = [T.Case("identify_payload", rd.identify_payload, [ours_args], R.pin_identify_payload, [pin_args],
                    note="loop of computeJointTorqueRegressor + rnea, numpy lstsq"),
             T.Case("identify_payload_from_log", rd.identify_payload_from_log, [(m, t, Q_log, TAU_log)], None,
                    None, note="ours only: filter + differentiation + identify_payload")]
    rounds = 5 if opts.quick else 15
    res = T.run_interleaved(cases, rounds, 0.0)
    rows = []
    for name, r in res.items():
        r["met"] = r["ours_s"] is not None and r["ours_s"] <= IDENTIFY_TARGET_S
        r["target_s"] = IDENTIFY_TARGET_S
        r["check_rel_error"] = check if name == "identify_payload" else None
        rows.append((name, ms(r.get("ours_s")), ms(r.get("pin_s")), rat(r.get("ratio")),
                     f"<= {IDENTIFY_TARGET_S * 1e3:g} ms", verdict(r["met"]), err(r["check_rel_error"])))
    table(["function", "ours ms", "pin ms", "ratio", "target", "met", "mass check"], rows,
          f"Identification: {pair.name} ({pair.description}), {N} samples (the log: {N / 1000:g} s at "
          "1 kHz); pin side: a Python loop of computeJointTorqueRegressor + rnea, then the same lstsq")
    return {"method": METHOD, "samples": N, "rounds": rounds, "robot": pair.name, "results": res}


def _pin_regressor_least_squares(pm, pd, Q, V, A, TAU):
    """The unconstrained least squares of the whole robot from Pinocchio calls: for each sample
    computeJointTorqueRegressor (all 10 n columns), then numpy's lstsq on the stacked system (no base
    parameters, no friction: the least a Pinocchio user would write)."""
    N, n = Q.shape
    Y = np.empty((N * n, 10 * pm.njoints - 10))
    for k in range(N):
        Y[k * n:(k + 1) * n] = pin.computeJointTorqueRegressor(pm, pd, Q[k], V[k], A[k])
    return np.linalg.lstsq(Y, TAU.reshape(-1), rcond=None)[0]


def section_robot_identification(opts):
    """identify_robot on ROBOT_IDENTIFY_SECONDS s at 1 kHz of the Panda (7 joints, tip panda_link8) whose
    inertias are off, with friction, armature and offsets and 1 % torque noise, from t, q and τ only
    (filter, base parameters, weighted least squares, the consistent fit: the noise makes least squares
    no rigid body, so the SDP runs); beside it the regressor stacking and plain least squares a Pinocchio
    user would write (a Python loop of computeJointTorqueRegressor, numpy's lstsq). Also
    base_parameters and excitation_trajectory (ours only). Target: identify_robot <= 5 s."""
    pair = R.panda()
    m = pair.ours
    rng = np.random.default_rng(31)
    arm = rd.with_armature(m.replace(mass=m.mass * rng.uniform(0.8, 1.2, m.n_bodies),
                                     damping=rng.uniform(0.1, 1.0, m.nq),
                                     friction=rng.uniform(0.2, 1.0, m.nq)),
                           rng.uniform(0.05, 0.3, m.nq))
    offset = rng.uniform(-1.0, 1.0, m.nq)
    N = int(ROBOT_IDENTIFY_SECONDS * 1000)
    t = np.arange(N) * 1e-3
    w = 2 * np.pi * np.array([0.1, 0.25, 0.4, 0.55])[:, None]
    amplitude = rng.uniform(-0.4, 0.4, (4, m.nq))
    Q = 0.5 * (m.lower + m.upper) + (amplitude * np.sin(w[None] * t[:, None, None])).sum(1)
    QD = (amplitude * w * np.cos(w[None] * t[:, None, None])).sum(1)
    QDD = (-amplitude * w ** 2 * np.sin(w[None] * t[:, None, None])).sum(1)
    TAU = rd.inverse_dynamics_trajectory(arm, Q, QD, QDD, friction=True) + offset
    TAU += 0.01 * np.abs(TAU).max(0) * rng.normal(size=TAU.shape)
    P = pair.to_pin
    pin_args = (pair.pm, pair.pd, P(Q), P(QD), P(QDD), P(TAU))
    # 10 % noise: least squares gives no rigid body for some link, so the semidefinite program runs
    TAU_NOISY = TAU + 0.1 * np.abs(TAU).max(0) * rng.normal(size=TAU.shape)
    rounds = 2 if opts.quick else 3
    results = {}
    timings = {"identify_robot": [], "identify_robot, 10 % noise": [], "pin_loop_lstsq": [],
               "base_parameters": [], "excitation_trajectory": []}
    estimate = noisy = None
    for _ in range(rounds):
        t0 = time.perf_counter()
        estimate = rd.identify_robot(m, t, Q, TAU, armature=True)
        timings["identify_robot"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        noisy = rd.identify_robot(m, t, Q, TAU_NOISY, armature=True)
        timings["identify_robot, 10 % noise"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        _pin_regressor_least_squares(*pin_args)
        timings["pin_loop_lstsq"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        rd.base_parameters(m, armature=True)
        timings["base_parameters"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        excitation = rd.excitation_trajectory(m, 20.0)
        timings["excitation_trajectory"].append(time.perf_counter() - t0)
    held = rd.inverse_dynamics_trajectory(arm, Q[::10], QD[::10], QDD[::10], friction=True) + offset
    error = float(np.sqrt(np.mean((estimate.predict(Q[::10], QD[::10], QDD[::10]) - held) ** 2)))
    for name, values in timings.items():
        results[name] = {"seconds": statistics.median(values), "all": values}
    theirs = results["pin_loop_lstsq"]["seconds"]
    rows = []
    for name, fit in (("identify_robot", estimate), ("identify_robot, 10 % noise", noisy)):
        ours = results[name]["seconds"]
        results[name].update(met=ours <= ROBOT_IDENTIFY_TARGET_S, method=fit.method)
        rows.append((f"{name} ({fit.method})", f"{ours:.3f}", f"{theirs:.3f}", rat(ours / theirs),
                     f"<= {ROBOT_IDENTIFY_TARGET_S:g} s", verdict(results[name]["met"])))
    met = all(results[name]["met"] for name in ("identify_robot", "identify_robot, 10 % noise"))
    rows += [("base_parameters (armature)", f"{results['base_parameters']['seconds']:.3f}", "", "", "", ""),
             ("excitation_trajectory (20 s, 5 harmonics)",
              f"{results['excitation_trajectory']['seconds']:.3f}", "", "", "", "")]
    table(["function", "ours s", "pin loop s", "ratio", "target", "met"], rows,
          f"Robot identification: {pair.name}, {N} samples ({ROBOT_IDENTIFY_SECONDS:g} s at 1 kHz); method "
          f"{estimate.method}; {estimate.base_parameters.count} base parameters, condition "
          f"{estimate.condition:.3g}; torque RMS against the noise-free truth {error:.3g} N m (noise 1 % of "
          f"each joint's peak); excitation condition {excitation.condition:.3g}; pin side: a Python loop "
          "of computeJointTorqueRegressor + numpy lstsq (no filter, no base parameters, no consistency)")
    return {"samples": N, "rounds": rounds, "robot": pair.name, "method": estimate.method,
            "base_parameters": estimate.base_parameters.count, "condition": estimate.condition,
            "rms_error": error, "met": met, "target_s": ROBOT_IDENTIFY_TARGET_S, "results": results}


# ----------------------------------------------------------------------------------------------
# derivatives: inverse and forward dynamics derivatives, linearisation over a horizon

def section_derivatives(opts):
    """inverse_dynamics_derivatives / forward_dynamics_derivatives against computeRNEADerivatives /
    computeABADerivatives (Panda, UR5, 30-joint chain; one call each); linearize_trajectory (RK4, N =
    LINEARIZE_N) against a Python loop of computeABADerivatives at the four stages + the same chain rule in
    numpy (_robots.pin_linearize_trajectory). Checks: ∂τ/∂q, ∂q̈/∂q of both; A of the horizon."""
    out = {"method": METHOD, "states": opts.states, "rounds": opts.rounds, "robots": {}}
    for pair in (R.panda(), R.ur5(), R.chain(30, seed=1)):
        m, pm, pd, P = pair.ours, pair.pm, pair.pd, pair.to_pin
        S = pair.random_states(opts.states, seed=29)
        q, qd, qdd, tau = ([S[x][k].copy() for k in range(opts.states)] for x in ("q", "qd", "qdd", "tau"))
        inv = np.argsort(pair.perm)
        ours_order = np.ix_(inv, inv)

        def pin_rnea_dq(k):
            return np.asarray(pin.computeRNEADerivatives(pm, pd, P(q[k]), P(qd[k]), P(qdd[k]))[0])[ours_order]

        def pin_aba_dq(k):
            pin.computeABADerivatives(pm, pd, P(q[k]), P(qd[k]), P(tau[k]))
            return np.asarray(pd.ddq_dq)[ours_order]

        check_id = max(rel_error(rd.inverse_dynamics_derivatives(m, q[k], qd[k], qdd[k])[0], pin_rnea_dq(k))
                       for k in range(4))
        check_fd = max(rel_error(rd.forward_dynamics_derivatives(m, q[k], qd[k], tau[k])[0], pin_aba_dq(k))
                       for k in range(4))
        N, dt = LINEARIZE_N, 1e-3
        Q, QD = S["q"][:1].repeat(N, 0), S["qd"][:1].repeat(N, 0)
        TAU = np.ascontiguousarray(np.tile(rd.gravity_torques(m, Q[0]), (N, 1)))
        Q = np.ascontiguousarray(Q + 0.01 * np.arange(N)[:, None] / N)
        A_ours = rd.linearize_trajectory(m, Q, QD, TAU, dt)[0]
        A_pin = R.pin_linearize_trajectory(pm, pd, P(Q), P(QD), P(TAU), dt)[0]
        two = np.concatenate([pair.perm, pair.n + pair.perm])
        check_lin = rel_error(A_ours, A_pin[:, np.argsort(two)][:, :, np.argsort(two)])
        cases = [T.Case("inverse_dynamics_derivatives", rd.inverse_dynamics_derivatives,
                        [(m, q[k], qd[k], qdd[k]) for k in range(opts.states)], pin.computeRNEADerivatives,
                        [(pm, pd, P(q[k]), P(qd[k]), P(qdd[k])) for k in range(opts.states)],
                        target=DERIVATIVES_TARGET, note="pin.computeRNEADerivatives"),
                 T.Case("forward_dynamics_derivatives", rd.forward_dynamics_derivatives,
                        [(m, q[k], qd[k], tau[k]) for k in range(opts.states)], pin.computeABADerivatives,
                        [(pm, pd, P(q[k]), P(qd[k]), P(tau[k])) for k in range(opts.states)],
                        target=DERIVATIVES_TARGET, note="pin.computeABADerivatives"),
                 T.Case(f"linearize_trajectory (N = {N})", rd.linearize_trajectory, [(m, Q, QD, TAU, dt)],
                        R.pin_linearize_trajectory, [(pm, pd, P(Q), P(QD), P(TAU), dt)],
                        target=LINEARIZE_TARGET, note="loop of 4 computeABADerivatives + numpy chain rule")]
        rounds = opts.rounds if pair.n < 30 else max(20, opts.rounds // 4)
        res = T.run_interleaved(cases, rounds, opts.round_s)
        checks = dict(zip([c.name for c in cases], (check_id, check_fd, check_lin)))
        for name, r in res.items():
            r["check_rel_error"] = checks[name]
        rows = [(fn, us(r.get("ours_s")), us(r.get("pin_s")), rat(r.get("ratio")), f"<= {r['target']:g}",
                 verdict(r.get("met")), err(r.get("check_rel_error"))) for fn, r in res.items()]
        table(["function", "ours us", "pin us", "ratio", "target", "met", "check"], rows,
              f"Derivatives: {pair.name} ({pair.description})")
        out["robots"][pair.name] = {"description": pair.description, "n": pair.n, "results": res}
    return out


def section_ocp(opts):
    """solve_optimal_control against Crocoddyl's SolverFDDP (SolverBoxFDDP with the URDF's torque limits)
    on the reaching problem of its arm-manipulation example (_robots.REACHING: UR5, Panda with the fingers
    locked; 100 knots of 10 ms), from the same start (x0 at every knot, quasi-static torques), to the
    same tolerance (1e-9) or 500 iterations. Crocoddyl 3.2.1 runs in .venv-crocoddyl with 1 and 2 threads
    (problem.nthreads, OpenMP). Per solve: the fastest of the repeats; per iteration: that / iterations.
    Ratio: ours / Crocoddyl's best of the two thread counts (target <= OCP_TARGET). Where Crocoddyl stops
    short of the tolerance (its BoxFDDP here: its stopping criterion far above it, a slightly higher
    cost), the ratio is that of ours stopped at the first iteration whose cost is as low as Crocoddyl's
    final one; both runs of ours are reported, and the costs."""
    repeats = 3 if opts.quick else 10
    out = {"repeats": repeats, "horizon": 100, "dt": 0.01, "robots": {}}
    for name in R.REACHING:
        results = {}
        for limits in (False, True):
            problem = R.reaching_problem(name, limits)
            rd.solve_optimal_control(problem, max_iterations=500)            # compiled or loaded
            solutions = [rd.solve_optimal_control(problem, max_iterations=500) for _ in range(repeats)]
            best = min(solutions, key=lambda s: s.solve_time)
            ours = {"solve_s": best.solve_time, "iterations": best.iterations, "cost": best.cost,
                    "per_iteration_s": best.solve_time / max(best.iterations, 1), "converged": best.converged}
            crocoddyl = {}
            for threads in (1, 2):
                c = R.crocoddyl_reaching(name, problem, repeats=repeats, threads=threads)
                crocoddyl[threads] = {"solve_s": c["solve_time"], "iterations": c["iterations"],
                                      "cost": c["cost"], "stop": c["stop"], "converged": c["converged"],
                                      "per_iteration_s": c["solve_time"] / max(c["iterations"], 1)}
            fastest = min(crocoddyl.values(), key=lambda c: c["solve_s"])
            compared = ours
            if fastest["stop"] > OCP_TOLERANCE:
                # Crocoddyl stopped short of the tolerance (its stopping criterion far above it): ours
                # timed to the first iteration whose cost is as low as Crocoddyl's final one
                for k in range(1, 501):
                    if rd.solve_optimal_control(problem, max_iterations=k).cost <= fastest["cost"]:
                        break
                solutions = [rd.solve_optimal_control(problem, max_iterations=k) for _ in range(repeats)]
                matched = min(solutions, key=lambda s: s.solve_time)
                compared = {"solve_s": matched.solve_time, "iterations": matched.iterations,
                            "cost": matched.cost,
                            "per_iteration_s": matched.solve_time / max(matched.iterations, 1)}
            ratio = compared["solve_s"] / fastest["solve_s"]
            ratio_it = ours["per_iteration_s"] / min(c["per_iteration_s"] for c in crocoddyl.values())
            results["torque limits" if limits else "free"] = {
                "ours": ours, "ours_to_crocoddyls_cost": compared if compared is not ours else None,
                "crocoddyl_1": crocoddyl[1], "crocoddyl_2": crocoddyl[2], "ratio": ratio,
                "ratio_per_iteration": ratio_it, "target": OCP_TARGET, "met": bool(ratio <= OCP_TARGET)}
        def ms_it(r):
            return f"{r['solve_s'] * 1e3:.1f} ({r['iterations']})"
        rows = [(case, ms_it(r["ours"]) + (f"; {ms_it(r['ours_to_crocoddyls_cost'])}"
                                           if r["ours_to_crocoddyls_cost"] else ""),
                 ms_it(r["crocoddyl_1"]), ms_it(r["crocoddyl_2"]), rat(r["ratio"]),
                 rat(r["ratio_per_iteration"]),
                 f"{r['ours']['cost']:.7f} / {r['crocoddyl_1']['cost']:.7f}", verdict(r["met"]))
                for case, r in results.items()]
        table(["problem", "ours ms (it)", "croc 1T ms (it)", "croc 2T ms (it)", "ratio", "per it",
               "cost ours/croc", "met"], rows,
              f"Optimal control: {name} reaching, 100 knots (ratio: ours / Crocoddyl's best)")
        out["robots"][name] = {"results": results}
    return out


# ----------------------------------------------------------------------------------------------
# batched

def batch_cases(pair, N, dt=1e-3):
    m, pm, pd, P = pair.ours, pair.pm, pair.pd, pair.to_pin
    S = pair.random_states(N, seed=11)
    Q, QD, QDD, TAU = S["q"], S["qd"], S["qdd"], S["tau"]
    pQ, pV, pA, pT = P(Q), P(QD), P(QDD), P(TAU)
    q0, qd0 = Q[0].copy(), np.zeros(pair.n)
    rng = np.random.default_rng(5)
    TS = np.ascontiguousarray(rd.gravity_torques(m, q0) + rng.uniform(-1.0, 1.0, (N, pair.n)))
    inv = np.argsort(pair.perm)
    spec = [
        ("inverse_dynamics_trajectory", rd.inverse_dynamics_trajectory, (m, Q, QD, QDD),
         R.pin_rnea_loop, (pm, pd, pQ, pV, pA), "for-loop over pin.rnea",
         lambda o, p: rel_error(o, p[:, inv])),
        ("mass_matrix_trajectory", rd.mass_matrix_trajectory, (m, Q),
         R.pin_crba_loop, (pm, pd, pQ), "for-loop over pin.crba",
         lambda o, p: rel_error(o, p[:, inv][:, :, inv])),
        ("forward_dynamics_trajectory", rd.forward_dynamics_trajectory, (m, Q, QD, TAU),
         R.pin_aba_loop, (pm, pd, pQ, pV, pT), "for-loop over pin.aba",
         lambda o, p: rel_error(o, p[:, inv])),
        ("simulate (rk4, array torques)", rd.simulate, (m, q0, qd0, TS, dt, N),
         R.pin_simulate_rk4, (pm, pd, P(q0), P(qd0), P(TS), dt), "Python RK4 loop around pin.aba",
         lambda o, p: rel_error(o.q[-1], p[0][-1][inv])),
    ]
    # The check of simulate runs 20 steps only: over N steps a random 30-link chain is chaotic enough
    # to amplify rounding differences.
    short = {"simulate (rk4, array torques)": ((m, q0, qd0, TS[:20], dt, 20),
                                               (pm, pd, P(q0), P(qd0), P(TS[:20]), dt))}
    cases, checks = [], {}
    for name, f, fa, g, ga, desc, cmp in spec:
        try:
            ca, cg = short.get(name, (fa, ga))
            checks[name] = cmp(f(*ca), g(*cg))
        except Exception as exc:
            checks[name] = None
            print(f"  {pair.name} {name}: check failed: {type(exc).__name__}: {exc}", flush=True)
        cases.append(T.Case(name, f, [fa], g, [ga], target=BATCH_TARGET, note=desc))
    return cases, checks


def _batch_against_pinocchio(opts, threads):
    """The batch cases of the three robots against Pinocchio's loops, our calls on `threads` threads."""
    out = {"N": opts.batch_n, "threads": threads, "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
           "rounds": opts.batch_rounds, "method": METHOD, "robots": {}}
    before = rd.get_num_threads()
    rd.set_num_threads(threads)
    t0 = time.perf_counter()
    try:
        for pair in [R.panda(), R.ur5(), R.chain(30, seed=1)]:
            cases, checks = batch_cases(pair, opts.batch_n)
            res = T.run_interleaved(cases, opts.batch_rounds, 0.02, warmup_s=0.0)
            for name, r in res.items():
                r["check_rel_error"] = checks.get(name)
            out["robots"][pair.name] = {"n": pair.n, "results": res}
    finally:
        rd.set_num_threads(before)
    out["seconds"] = time.perf_counter() - t0
    return out


def section_batch(opts):
    """The batch calls against Pinocchio's loops on 1 thread, and our calls on 1 and 2 threads in
    paired rounds (_batch_threads.py), Panda: N = BATCH_THREADS_N states for the issue's target, fewer
    for the slower calls; numba's prange beside the pool for the RNEA."""
    out = _batch_against_pinocchio(opts, 1)
    pair = R.panda()
    S = pair.random_states(BATCH_THREADS_N, seed=11)
    m, Q, QD, QDD, TAU = pair.ours, S["q"], S["qd"], S["qdd"], S["tau"]
    n_regressor, n_linearize = BATCH_THREADS_N // 5, BATCH_THREADS_N // 20
    cases = [(f"inverse_dynamics_trajectory (N = {BATCH_THREADS_N})", rd.inverse_dynamics_trajectory,
              (m, Q, QD, QDD)),
             (f"forward_dynamics_trajectory (N = {BATCH_THREADS_N})", rd.forward_dynamics_trajectory,
              (m, Q, QD, TAU)),
             (f"mass_matrix_trajectory (N = {BATCH_THREADS_N})", rd.mass_matrix_trajectory, (m, Q)),
             (f"joint_torque_regressor_trajectory (N = {n_regressor})", rd.joint_torque_regressor_trajectory,
              (m, Q[:n_regressor], QD[:n_regressor], QDD[:n_regressor])),
             (f"linearize_trajectory (N = {n_linearize}, rk4)", rd.linearize_trajectory,
              (m, Q[:n_linearize], QD[:n_linearize], TAU[:n_linearize], 1e-3)),
             (f"inverse_dynamics_trajectory (N = {opts.batch_n})", rd.inverse_dynamics_trajectory,
              (m, Q[:opts.batch_n], QD[:opts.batch_n], QDD[:opts.batch_n]))]
    rounds = max(opts.batch_rounds, 7)
    out["threads_paired"] = {"robot": pair.name, "target": BATCH_THREADS_TARGET, "rounds": rounds,
                             "loadavg": os.getloadavg(), "results": BT.paired_rounds(cases, rounds)}
    out["prange"] = BT.prange_against_pool(m, Q, QD, QDD, rounds)
    out["prange"]["N"] = BATCH_THREADS_N
    return out


def batch_two_threads(opts):
    """The batch cases against Pinocchio again, our calls on 2 threads (set_num_threads)."""
    return _batch_against_pinocchio(opts, 2)


def print_batch(b1, b2):
    for name, rob in b1["robots"].items():
        rows, N = [], b1["N"]
        for fn, r in rob["results"].items():
            r2 = (b2 or {}).get("robots", {}).get(name, {}).get("results", {}).get(fn, {})
            rows.append((fn, ms(r.get("ours_s")), ms(r2.get("ours_s")), ms(r.get("pin_s")),
                         rat(r.get("ratio")), verdict(r.get("met")), rat(r2.get("ratio")),
                         verdict(r2.get("met")),
                         err(r.get("check_rel_error")), r.get("error", "")))
        table(["function", f"ours 1T ms/{N}", f"ours 2T ms/{N}", f"pin ms/{N}", "ratio 1T", "met",
               "ratio 2T", "met", "check", ""], rows,
              f"Batched, N = {b1['N']} states: {name} (n = {rob['n']}); target ratio <= {BATCH_TARGET}; "
              f"1T, 2T = our calls on 1 and 2 threads (set_num_threads), Pinocchio's loop on one")
    if b2 and "error" in b2:
        print(f"  2-thread run failed: {b2['error']}")
    print("  Pinocchio side: a Python for-loop calling pin.rnea / pin.crba / pin.aba per state (results "
          "stored into an (N, ...) array); simulate: classical RK4 in Python around pin.aba, dt = 1 ms, "
          "N steps (one rollout: one thread).")
    paired = b1.get("threads_paired")
    if paired:
        rows = [(fn, ms(r["1T_s"]), ms(r["2T_s"]), rat(r["ratio_2T_1T"]),
                 f"{r['ratio_p25']:.2f}-{r['ratio_p75']:.2f}", verdict(r["ratio_2T_1T"] <= paired["target"]))
                for fn, r in paired["results"].items()]
        table(["function", "1T ms", "2T ms", "2T/1T", "p25-p75", f"<= {paired['target']}"], rows,
              f"Batch calls on 1 and 2 threads, {paired['robot']}: paired rounds ({paired['rounds']}), "
              f"load {paired['loadavg'][0]:.2f}")
    pr = b1.get("prange")
    if pr:
        rows = [(way, ms(pr[way]["1T_s"]), ms(pr[way]["2T_s"]), rat(pr[way]["ratio_2T_1T"]))
                for way in ("pool", "prange")]
        table(["RNEA over the states", "1T ms", "2T ms", "2T/1T"], rows,
              f"numba prange ({pr['threading_layer']}) beside the pool (threads.run_chunks), Panda, "
              f"N = {pr['N']}; the same bits: {pr['prange_equals_pool']}")


# ----------------------------------------------------------------------------------------------
# scaling

def loglog_slope(ns, ts):
    ns, ts = np.asarray(ns, float), np.asarray(ts, float)
    ok = ts > 0
    if ok.sum() < 2:
        return None
    return float(np.polyfit(np.log(ns[ok]), np.log(ts[ok]), 1)[0])


def section_scaling(opts):
    ns = [1, 2, 4, 8, 15, 30, 45, 60]
    algos = [("rnea", rd.inverse_dynamics, pin.rnea), ("aba", rd.forward_dynamics, pin.aba),
             ("crba", rd.mass_matrix, pin.crba)]
    cases = []
    t0 = time.perf_counter()
    for n in ns:
        pair = R.chain(n, seed=1)
        S = pair.random_states(opts.states, seed=3)
        K = opts.states
        m, pm, pd, P = pair.ours, pair.pm, pair.pd, pair.to_pin

        def rows(key):
            return [S[key][k].copy() for k in range(K)]

        q, qd, qdd, tau = rows("q"), rows("qd"), rows("qdd"), rows("tau")
        args = {
            "rnea": ([(m, q[k], qd[k], qdd[k]) for k in range(K)],
                     [(pm, pd, P(q[k]), P(qd[k]), P(qdd[k])) for k in range(K)]),
            "aba": ([(m, q[k], qd[k], tau[k]) for k in range(K)],
                    [(pm, pd, P(q[k]), P(qd[k]), P(tau[k])) for k in range(K)]),
            "crba": ([(m, q[k]) for k in range(K)], [(pm, pd, P(q[k])) for k in range(K)]),
        }
        for name, f, g in algos:
            cases.append(T.Case(f"{name}/{n}", f, args[name][0], g, args[name][1]))
    res = T.run_interleaved(cases, opts.scaling_rounds, opts.round_s)
    out = {"n": ns, "rounds": opts.scaling_rounds, "method": METHOD, "per_call_s": {}, "ratio": {},
           "exponent": {},
           "note": "exponent = least-squares slope of log(time) vs log(n): over all n, over n >= 15, and of "
                   "(time(n) - time(1)) over n >= 15 (the constant per-call overhead removed)"}
    for name, _, _ in algos:
        for side in ("ours", "pin"):
            ts = [res[f"{name}/{n}"].get(f"{side}_s") for n in ns]
            out["per_call_s"][f"{name}/{side}"] = ts
            if side == "pin":
                out["ratio"][name] = [res[f"{name}/{n}"].get("ratio") for n in ns]
            if any(t is None for t in ts):
                continue
            big = [i for i, n in enumerate(ns) if n >= 15]
            out["exponent"][f"{name}/{side}"] = {
                "all": loglog_slope(ns, ts),
                "n>=15": loglog_slope([ns[i] for i in big], [ts[i] for i in big]),
                "marginal n>=15": loglog_slope([ns[i] for i in big], [ts[i] - ts[0] for i in big]),
            }
    out["seconds"] = time.perf_counter() - t0
    heads = ["n"]
    for name, _, _ in algos:
        heads += [f"{name} ours", f"{name} pin", "ratio"]
    rows = []
    for i, n in enumerate(ns):
        row = [n]
        for name, _, _ in algos:
            o, p = out["per_call_s"][f"{name}/ours"][i], out["per_call_s"][f"{name}/pin"][i]
            row += [us(o), us(p), rat(out["ratio"].get(name, [None] * len(ns))[i])]
        rows.append(row)
    table(heads, rows, "Scaling: per call (us) vs number of joints n (random chains)")
    rows = []
    for name, _, _ in algos:
        for side in ("ours", "pin"):
            e = out["exponent"].get(f"{name}/{side}", {})
            rows.append((f"{name} {side}", rat(e.get("all")), rat(e.get("n>=15")),
                         rat(e.get("marginal n>=15")), "~1" if name != "crba" else "~2 (large n)"))
    table(["algorithm", "all n", "n >= 15", "t(n)-t(1), n >= 15", "expected"], rows,
          "Scaling: fitted exponent k in time ~ n^k (log-log slope)")
    return out


# ----------------------------------------------------------------------------------------------
# start-up

def run_child(env, timeout=600):
    t_spawn = time.monotonic()
    proc = subprocess.run([sys.executable, str(HERE / "_startup_child.py"), str(R.PANDA_URDF)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    t_exit = time.monotonic()
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}: {proc.stderr[-2000:]}"}
    d = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"interpreter_s": d["t_script"] - t_spawn, "import_numpy_s": d["t_numpy"] - d["t_script"],
            "import_dynamics_s": d["t_import"] - d["t_numpy"], "load_urdf_s": d["t_load"] - d["t_import"],
            "first_calls_s": sum(d["first"].values()), "to_last_first_call_s": d["t_end"] - t_spawn,
            "process_total_s": t_exit - t_spawn, "first_call_s": d["first"], "second_call_s": d["second"],
            "errors": d["errors"]}


def section_startup(opts):
    base = dict(os.environ)
    base.pop("_ROS_WHEELS_BOOTSTRAP_COMPLETE", None)      # start as from a fresh shell (ROS re-exec)
    out = {}
    t0 = time.perf_counter()
    if opts.cold:
        cache = tempfile.mkdtemp(prefix="rdr-bench-numba-cold-")
        try:
            out["cold"] = run_child(dict(base, NUMBA_CACHE_DIR=cache))
            out["cold"]["numba_cache_dir"] = "empty temporary directory"
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        # every kernel, as the set-up compiles them (robot_dynamics_ros.cli.precompile, one worker per core)
        cache = tempfile.mkdtemp(prefix="rdr-bench-numba-all-")
        try:
            t_all = time.perf_counter()
            run = subprocess.run([sys.executable, "-m", "robot_dynamics_ros.cli.precompile", "--quiet"],
                                 env=dict(base, NUMBA_CACHE_DIR=cache), capture_output=True, text=True,
                                 timeout=3600)
            out["cold_all_kernels_s"] = time.perf_counter() - t_all if run.returncode == 0 else None
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        seconds = out["cold_all_kernels_s"]
        print(f"  cold compile of every kernel (python -m robot_dynamics_ros.cli.precompile, "
              f"{os.cpu_count()} cores): "
              f"{'failed: ' + run.stderr[-500:] if seconds is None else f'{seconds:.0f} s'}")
    else:
        out["cold"] = {"skipped": "--quick: the cold compile (minutes) is skipped; add --cold to run it"}
    run_child(base)                                         # make sure the normal cache is populated
    warm = [run_child(base) for _ in range(opts.warm_runs)]
    good = [w for w in warm if "error" not in w]
    if good:
        best = sorted(good, key=lambda w: w["to_last_first_call_s"])[len(good) // 2]
        out["warm"] = dict(best, runs=len(good),
                           to_last_first_call_runs_s=[w["to_last_first_call_s"] for w in good])
    else:
        out["warm"] = warm[0]
    out["seconds"] = time.perf_counter() - t0
    phases = [("interpreter start (incl. ROS re-exec)", "interpreter_s"), ("import numpy", "import_numpy_s"),
              ("import robot_dynamics_ros.dynamics", "import_dynamics_s"),
              ("load_urdf (Panda)", "load_urdf_s"),
              ("first calls, all functions below", "first_calls_s"),
              ("process start -> last first call", "to_last_first_call_s")]
    c, w = out["cold"], out["warm"]
    table(["phase", "cold cache s", "warm cache s"],
          [(label, f"{c[k]:.3f}" if k in c else "-", f"{w[k]:.3f}" if k in w else "-")
           for label, k in phases],
          "Start-up (fresh process; cold = NUMBA_CACHE_DIR empty temp dir, warm = normal cache, "
          f"median of {opts.warm_runs})")
    names = list((w.get("first_call_s") or c.get("first_call_s") or {}).keys())
    table(["function", "1st call cold ms", "1st call warm ms", "2nd call warm us"],
          [(n, ms(c.get("first_call_s", {}).get(n)), ms(w.get("first_call_s", {}).get(n)),
            us(w.get("second_call_s", {}).get(n))) for n in names], "Start-up: first call of each function")
    if "skipped" in c:
        print(f"  cold: {c['skipped']}")
    for which in ("cold", "warm"):
        if out[which].get("error") or out[which].get("errors"):
            print(f"  {which}: {out[which].get('error') or out[which].get('errors')}")
    return out


# ----------------------------------------------------------------------------------------------
# simulation without ROS

def section_sim_core(opts):
    pair = R.panda()
    m, n, dt, steps = pair.ours, pair.n, 1e-3, opts.sim_steps
    q0, qd0 = R.PANDA_READY.copy(), np.zeros(n)
    rng = np.random.default_rng(9)
    TS = np.ascontiguousarray(rd.gravity_torques(m, q0) + rng.uniform(-1.0, 1.0, (steps, n)))
    P = pair.to_pin
    pin_args = [(pair.pm, pair.pd, P(q0), P(qd0), P(TS), dt)]
    cases = [T.Case("simulate (array torques)", rd.simulate, [(m, q0, qd0, TS, dt, steps)],
                    R.pin_simulate_rk4, pin_args),
             T.Case("rk4_step in a Python loop", R.rk4_step_loop, [(m, q0, qd0, TS, dt)],
                    R.pin_simulate_rk4, pin_args)]
    res = T.run_interleaved(cases, opts.sim_rounds, 0.01, warmup_s=0.0)
    sim_s = steps * dt
    out = {"robot": "Panda (fingers locked)", "dt": dt, "steps": steps, "integrator": "rk4", "results": {}}
    for name, r in res.items():
        x = sim_s / r["ours_s"] if r.get("ours_s") else None
        xp = sim_s / r["pin_s"] if r.get("pin_s") else None
        out["results"][name] = dict(r, x_real_time=x, pin_x_real_time=xp, target_x=SIM_TARGET_X,
                                    met=None if x is None else x >= SIM_TARGET_X)
    rows = [(name, ms(r.get("ours_s")), f"{r['x_real_time']:.0f}" if r["x_real_time"] else "-",
             f">= {SIM_TARGET_X:g}", verdict(r["met"]),
             f"{r['pin_x_real_time']:.0f}" if r["pin_x_real_time"] else "-", r.get("error", ""))
            for name, r in out["results"].items()]
    table(["ours", f"ms per {sim_s:g} s", "x real time", "target", "met", "pin RK4 loop x", ""], rows,
          f"Simulator without ROS: Panda, RK4, dt = 1 ms, {steps} steps (median of {opts.sim_rounds})")
    return out


# ----------------------------------------------------------------------------------------------
# ROS

def _print_ready(rd_):
    """The node start-up table of the ROS section."""
    runs = ", ".join(f"{t:.3f}" for t in rd_["runs_s"])
    first = rd_.get("first_start_s")
    table(["node", "ready s (median)", "runs s", "target", "met", "uncounted first start s"],
          [("dynamics_node", f"{rd_['median_s']:.3f}" if rd_["median_s"] else "-", runs, "< 1 s",
            verdict(rd_["met"]), "-" if first is None else f"{first:.3f}")],
          "Node start-up, warm cache: process start -> first /dynamics_node/gravity_torques "
          "(/joint_states already flowing at 1 kHz; one uncounted start first)")
    for note in rd_["notes"]:
        print("  " + note)


def _print_mpc(m):
    """The MPC controller's table of the ROS section."""
    if "error" in m:
        print(f"\nmpc_controller: {m['error'].splitlines()[0]}")
    else:
        def f(x, fmt):
            return "-" if x is None else format(x, fmt)
        table(["node", "re-plan Hz", "target", "met", "solve median ms", "solve p99 ms", "step median ms",
               "step p99 ms", "commands / states", "round trip median ms", "p99 ms", "max ms",
               "node CPU %"],
              [("mpc_controller (UR5e, 50 knots)", f(m["replan_rate_hz"], ".1f"), ">= 100",
                verdict(m["replan_met"]), f(m["solve_median_ms"], ".2f"), f(m["solve_p99_ms"], ".2f"),
                f(m["step_median_ms"], ".3f"), f(m["step_p99_ms"], ".3f"),
                f"{m['answered']} / {m['sent']}", f(m.get("median_ms"), ".3f"), f(m.get("p99_ms"), ".3f"),
                f(m.get("max_ms"), ".2f"), f"{m['cpu_percent']:.1f}")],
              "MPC controller under /joint_states at 1 kHz, moving to a target 10 cm away "
              "(its /diagnostics; step: the compute time per joint state, the re-plans run in a thread "
              "beside it; round trip: commands paired with states by order)")


def _print_simulator(s):
    """The simulator node's table of the ROS section."""
    if "error" in s:
        print(f"\nsimulator_node: {s['error']}")
    else:
        table(["node", "window s", "simulated s", "x real time", "target", "met", "node CPU %"],
              [("simulator_node", f"{s['wall_s']:.2f}", f"{s['simulated_s']:.2f}",
                f"{s['speed_x_real_time']:.1f}", ">= 5", verdict(s["met"]), f"{s['cpu_percent']:.0f}")],
              "Simulator node: rk4, dt = 1 ms, real_time_factor 0, publish_rate 1000, publish_clock "
              "(simulated time from /clock per wall second)")
        print(f"  {s['note']}")


def print_ros(r):
    if "skipped" in r:
        print(f"\nROS sections skipped: {r['skipped']}")
        return
    for key in ("skipped_node", "skipped_sim"):
        if key in r:
            print(f"\n{key.replace('_', ' ')}: {r[key]}")
    if "ready" in r:
        _print_ready(r["ready"])
    rows = []
    for key in ("echo", "controller", "controller_goal", "task_space", "dynamics", "estimator"):
        if key not in r:
            continue
        x = r[key]
        label = f"{x['node'].rsplit('.', 1)[-1]}: {x['topic']}"
        if key == "controller_goal":
            label += " (FollowJointTrajectory goal active)"
        if "error" in x:
            rows.append((label, "-", "-", "-", "-", "-", "-", "-", "-", "-", x["error"].splitlines()[0]))
            continue
        rows.append((label, f"{x['window_s']:.1f}", f"{x['publish_rate_hz']:.0f}", x["sent"],
                     f"{x['lost']} ({x['lost_bursts']}, {x['longest_lost_burst']})",
                     f"{x.get('median_ms', float('nan')):.3f}", f"{x.get('p99_ms', float('nan')):.3f}",
                     f"{x.get('max_ms', float('nan')):.2f}", f"{x['cpu_percent']:.1f}", f"{x['ready_s']:.2f}",
                     f"{x['out_of_order']}/{x['duplicates']}/{x['undecoded']}"))
    if r.get("mpc") is not None:
        _print_mpc(r["mpc"])
    if rows:
        table(["output", "window s", "rate Hz", "sent", "lost (bursts, longest)", "median ms", "p99 ms",
               "max ms", "node CPU %", "ready s", "disorder/dup/undecoded"], rows,
              "Node path: /joint_states at 1 kHz from this process -> node process -> back (round trip)")
        print("  Panda, joints = 7 arm joints. Controller: kp = kd = 0, its command g(q_k) decoded against "
              "a table to the sequence k;\n  dynamics_node: k from the copied header stamp (also computes c, "
              "M, Λ each message); external_torque_estimator: k from the copied header stamp (also\n  "
              "publishes the tip wrench each message). See benchmarks/README.md.")
    if "simulator" in r:
        _print_simulator(r["simulator"])


def section_viewer(opts):
    """The viewer beside a 1 kHz joint-state stream with a headless Chromium connected
    (benchmarks/_viewer_cost.py, a child process): its CPU, the frames it sends, the lag."""
    if not Path("/usr/bin/chromium").exists():
        return {"skipped": "no /usr/bin/chromium (apt-get install chromium)"}
    seconds = 8.0 if opts.quick else 20.0
    run = subprocess.run([sys.executable, str(HERE / "_viewer_cost.py"), "--seconds", str(seconds)],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "no output")
    out = json.loads(run.stdout.strip().splitlines()[-1])
    # (the timer's frames over a diagnostics period: 29.97 is 30 frames/s)
    out["met"] = out["frames_per_second"] is not None and round(out["frames_per_second"]) >= VIEWER_FPS_TARGET
    table(["viewer", "CPU % of a core", "frames/s", "joint states/s", "latest-state lag ms",
           "render ms (median)"],
          [("UR5e", f"{out['cpu_percent_of_core']:.1f}", f"{out['frames_per_second']:.1f}",
            f"{out['joint_states_rate']:.0f}", f"{out['latest_state_lag_ms']:.1f}",
            f"{out['render_time_median_ms']:.2f}")],
          f"viewer process beside /joint_states at {out['publish_rate_set']:.0f} Hz, one browser, "
          f"{seconds:.0f} s")
    return out


def section_node_callback(opts):
    """dynamics_node's joint-state callback in process (benchmarks/_node_callback.py, a child process)."""
    messages, rounds = (1000, 5) if opts.quick else (3000, 11)
    run = subprocess.run([sys.executable, str(HERE / "_node_callback.py"), "--messages", str(messages),
                          "--rounds", str(rounds)], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "no output")
    out = json.loads(run.stdout.strip().splitlines()[-1])
    table(["node", "callback µs (median)", "q1 µs", "q3 µs", "min µs", "outputs"],
          [("dynamics_node", f"{out['callback_us']:.1f}", f"{out['q1_us']:.1f}", f"{out['q3_us']:.1f}",
            f"{out['min_us']:.1f}", out["outputs"])],
          f"dynamics_node callback in process: JointState in -> four outputs published "
          f"({messages} messages x {rounds} rounds, Panda 7 arm joints, no subscribers)")
    return out


def section_mujoco_engine(opts):
    """The simulator's MuJoCo engine beside its rigid-body engine, UR5e, dt 1 ms, RK4
    (benchmarks/_mujoco_engine.py): µs per step in this process, then simulator_node + the
    computed-torque controller at 1 kHz in real time on each engine."""
    import _mujoco_engine as MJ
    block, rounds = (200, 5) if opts.quick else (500, 20)
    out = {"steps": MJ.step_costs(block=block, rounds=rounds)}
    s = out["steps"]
    rows = []
    for name, r in s["results"].items():
        paired = r.get("ratio_paired_rounds")
        rows.append((name, us(r["median_s"]), us(r["p99_s"]), us(r["mean_s"]), rat(r["ratio_to_rigid_body"]),
                     rat(paired)))
    table(["call", "median µs", "p99 µs", "mean µs", "/ rigid-body (medians)", "paired rounds"], rows,
          f"Simulator engines: one step, UR5e, RK4, dt = 1 ms, friction off ({block} steps per case in turn, "
          f"{rounds} rounds, each step timed; MuJoCo {s['mujoco']})")
    contact = s["table_state"]["arm_contacts"]
    print(f"  table: {s['table_state']['ncon']} MuJoCo contacts, on the arm: "
          + ", ".join(f"{c['body']}-{c['other']} {c['normal_force_N']:.1f} N" for c in contact)
          + f"; engine overhead over mj_step: {us(s['results'][MJ.FREE]['overhead_over_mj_step_s'])} µs "
          f"(no world), {us(s['results'][MJ.TABLE]['overhead_over_mj_step_s'])} µs (table)")
    out["nodes"] = MJ.node_runs(opts.domain_id, seconds=opts.sim_duration, warmup=3.0 if opts.quick else 4.0,
                                repeats=1 if opts.quick else 2)
    rows = []
    for name, r in out["nodes"]["runs"].items():
        if "error" in r:
            rows.append((name, *["-"] * 11, r["error"].splitlines()[0][:80]))
            continue
        cpu = r["cpu_percent"]
        contact = {True: "yes", False: "no", None: "-"}[r.get("in_contact_after")]
        rows.append((name, f"{r['simulated_s']:.2f}", f"{r['status_span_s']:.2f}",
                     f"{r['real_time_factor']:.3f}", verdict(r["met"]), f"{r['dropped_s']:.3f}",
                     f"{cpu['simulator']:.0f}", f"{cpu['controller']:.0f}" if 'controller' in cpu else "-",
                     f"{r['machine_busy_percent']:.0f}", f"{r['tick_median_ms']:.3f}",
                     f"{r['tick_p99_ms']:.3f}", contact))
    table(["simulator_node engine, CPUs", "simulated s", "wall s", "real-time factor",
           f">= {MJ.RTF_TARGET}", "dropped s", "simulator CPU %", "controller CPU %", "machine CPU %",
           "tick median ms", "tick p99 ms", "ball on table"], rows,
          "simulator_node (dt 1 ms, /joint_states 1 kHz, real_time_factor 1, /clock; MuJoCo with "
          "worlds/table.xml) + computed_torque_node on every state, separate processes; one CPU: both "
          "confined to one; one process: both nodes on one executor (as bring-up), its CPU in the "
          "simulator's column; CPU in % of one core, machine: every process on both cores (shared)")
    table(["simulator_node engine, CPUs", "runs", "real-time factor (mean)", f">= {MJ.RTF_TARGET}",
           "dropped s per 10 s", "simulator CPU %", "controller CPU %", "machine CPU %"],
          [(name, m["runs"], f"{m['real_time_factor']:.3f}", verdict(m["met"]),
            f"{m['dropped_s_per_10_s']:.2f}", f"{m['simulator_cpu_percent']:.0f}",
            "-" if m['controller_cpu_percent'] is None else f"{m['controller_cpu_percent']:.0f}",
            f"{m['machine_busy_percent']:.0f}")
           for name, m in out["nodes"]["settings"].items()],
          "The same, mean over the runs of each setting")
    return out


def section_rollouts(opts):
    """simulate_batch beside Pinocchio's loop and MuJoCo's rollout (benchmarks/_rollouts.py)."""
    import _rollouts as RO
    out = RO.run(rounds=7 if opts.quick else 21, pin_rounds=1 if opts.quick else 3)
    rows = []
    for name, r in out["results"].items():
        rows.append((name, ms(r["median_s"]), ms(r["min_s"]), f"{r['states_per_s'] / 1e3:.0f}",
                     rat(r["speed_up_over_pinocchio"]), rat(r.get("ratio_to_1T")), verdict(r.get("met")),
                     err(r.get("rel_error_to_pinocchio"))))
    table(["rollouts", "median ms", "min ms", "k states/s", "x Pinocchio loop", "2T / 1T",
           f"<= {out['target_2T']}", "rel. error vs Pinocchio"], rows,
          f"Batched rollouts: {out['robot']}, B = {out['rollouts']} x {out['steps']} steps, dt = "
          f"{out['dt'] * 1e3:g} ms, RK4, no friction, no contact; {out['rounds']} rounds (Pinocchio "
          f"{out['pinocchio_rounds']}), load {out['loadavg'][0]:.2f}; MuJoCo {out['mujoco']}")
    print("  ours: rd.simulate_batch after set_num_threads(1 | 2); MuJoCo: mujoco.rollout.Rollout(nthread "
          "0 | 2) on the same URDF (damping, armature 0; constraints and contacts off); Pinocchio: a Python "
          "loop of RK4 around pin.aba per rollout. States/s = B x steps / median time.")
    return out


# ----------------------------------------------------------------------------------------------

def meta(opts):
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except Exception:
            return None
    cpu = None
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except Exception:
        pass
    import numba
    return {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
            "pinocchio": pin.__version__, "cpu": cpu,
            "cpus": os.cpu_count(), "loadavg_start": os.getloadavg(),
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "git_head": git("rev-parse", "HEAD"),
            "git_dirty_package": bool(git("status", "--porcelain", "--", "robot_dynamics_ros")),
            "options": vars(opts), "method": METHOD}


def _ratio_rows(res):
    """The summary's rows of the per-call ratios against Pinocchio (and Crocoddyl for the OCP)."""
    rows = []
    for rob, d in res.get("single", {}).get("robots", {}).items():
        for fn, r in d["results"].items():
            rows.append(("single", f"{rob} {fn}", rat(r.get("ratio")), f"<= {SINGLE_TARGET:g}",
                         verdict(r.get("met"))))
    for tag, b in (("1T", res.get("batch")), ("2T", res.get("batch_2threads"))):
        for rob, d in (b or {}).get("robots", {}).items():
            for fn, r in d["results"].items():
                rows.append((f"batch {tag}", f"{rob} {fn}", rat(r.get("ratio")), f"<= {BATCH_TARGET}",
                             verdict(r.get("met"))))
    for rob, d in res.get("ocp", {}).get("robots", {}).items():
        for case, r in d["results"].items():
            rows.append(("ocp", f"{rob} reaching ({case}), per solve", rat(r["ratio"]), f"<= {OCP_TARGET:g}",
                         verdict(r["met"])))
    for section in ("contact", "task_space", "derivatives"):
        for rob, d in res.get(section, {}).get("robots", {}).items():
            for fn, r in d["results"].items():
                rows.append((section, f"{rob} {fn}", rat(r.get("ratio")), f"<= {r.get('target'):g}",
                             verdict(r.get("met"))))
    return rows


def _identification_rows(res):
    """The summary's rows of the identification times."""
    rows = []
    for fn, r in res.get("identification", {}).get("results", {}).items():
        rows.append(("identification", f"Panda {fn}, {IDENTIFY_SAMPLES} samples", ms(r.get("ours_s")) + " ms",
                     f"<= {IDENTIFY_TARGET_S * 1e3:g} ms", verdict(r.get("met"))))
    robot = res.get("robot_identification", {})
    for name, r in robot.get("results", {}).items():
        if name.startswith("identify_robot"):
            rows.append(("robot_identification", f"Panda {name}, {robot['samples']} samples",
                         f"{r['seconds']:.2f} s", f"<= {ROBOT_IDENTIFY_TARGET_S:g} s", verdict(r["met"])))
    return rows


def _node_rows(res):
    """The summary's rows of start-up, simulation speed, the MPC's re-plan rate, the viewer and the
    MuJoCo engine."""
    rows = []
    ros = res.get("ros", {})
    if "ready" in ros:
        rows.append(("startup", "dynamics_node ready (warm)", f"{ros['ready']['median_s']:.3f} s"
                     if ros["ready"]["median_s"] else "-", "< 1 s", verdict(ros["ready"]["met"])))
    for name, r in res.get("sim", {}).get("results", {}).items():
        rows.append(("sim", name, f"{r['x_real_time']:.0f}x" if r["x_real_time"] else "-",
                     f">= {SIM_TARGET_X:g}x", verdict(r["met"])))
    mpc = ros.get("mpc") or {}
    if "error" not in mpc and mpc.get("replan_rate_hz") is not None:
        rows.append(("node", "mpc_controller re-plan rate (UR5e, 50 knots)",
                     f"{mpc['replan_rate_hz']:.1f} Hz", ">= 100 Hz", verdict(mpc["replan_met"])))
    viewer = res.get("viewer") or {}
    if "cpu_percent_of_core" in viewer:
        rows.append(("viewer", f"frames/s beside 1 kHz joint states ({viewer['cpu_percent_of_core']:.0f} % "
                     "of a core, own process)", f"{viewer['frames_per_second']:.1f}",
                     f">= {VIEWER_FPS_TARGET:g}", verdict(viewer["met"])))
    for name, r in (res.get("mujoco_engine") or {}).get("nodes", {}).get("settings", {}).items():
        if name.startswith("mujoco"):
            rows.append(("mujoco_engine", f"simulator_node {name} (table world): real-time factor with the "
                         "controller at 1 kHz", f"{r['real_time_factor']:.3f}", ">= 0.99", verdict(r["met"])))
    if "simulator" in ros and "error" not in ros["simulator"]:
        rows.append(("sim", "simulator_node", f"{ros['simulator']['speed_x_real_time']:.1f}x", ">= 5x",
                     verdict(ros["simulator"]["met"])))
    return rows


def summary(res):
    rows = _ratio_rows(res) + _identification_rows(res) + _node_rows(res)
    if rows:
        met = sum(r[-1] == "yes" for r in rows)
        table(["section", "item", "value", "target", "met"], rows,
              f"Summary: {met} of {len(rows)} targets met")
    return [dict(zip(["section", "item", "value", "target", "met"], r)) for r in rows]


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer rounds, 5 s node runs (< 2 min)")
    p.add_argument("--only", default=",".join(SECTIONS),
                   help=f"comma-separated subset of {','.join(SECTIONS)}")
    p.add_argument("--duration", type=float, help="node round-trip run length, s (default 30, quick 5)")
    p.add_argument("--sim-duration", type=float,
                   help="simulator_node measuring window, s (default 10, quick 3)")
    p.add_argument("--json", default=str(HERE / "results" / "latest.json"), help="JSON output path")
    p.add_argument("--domain-id", type=int, help="ROS_DOMAIN_ID for the node runs (default: random 1..101)")
    p.add_argument("--blas-threads", default="1", help="OPENBLAS_NUM_THREADS of this process (default 1)")
    p.add_argument("--cold", action="store_true", help="with --quick: run the cold-cache start-up anyway")
    p.add_argument("--no-2threads", action="store_true", help="skip the batch run on 2 threads")
    p.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--batch-rounds", type=int, help=argparse.SUPPRESS)
    p.add_argument("--batch-n", type=int, default=1000, help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    only = [s.strip() for s in opts.only.split(",") if s.strip()]
    bad = set(only) - set(SECTIONS)
    if bad:
        p.error(f"unknown sections {sorted(bad)}; choose from {SECTIONS}")
    opts.only = only
    q = opts.quick
    opts.duration = opts.duration or (5.0 if q else 30.0)
    opts.sim_duration = opts.sim_duration or (3.0 if q else 10.0)
    opts.states = 8 if q else 16
    # Short rounds (about 1 ms): on a shared machine a preemption then spoils few rounds, and the
    # median over rounds ignores them.
    opts.rounds = 60 if q else 400
    opts.round_s = 0.0005 if q else 0.001
    opts.scaling_rounds = 60 if q else 300
    opts.batch_rounds = opts.batch_rounds or (5 if q else 21)
    opts.warm_runs = 1 if q else 3
    opts.cold = opts.cold or not q
    opts.ready_runs = 1 if q else 3
    opts.sim_steps = 2000 if q else 10000
    opts.sim_rounds = 3 if q else 9
    if opts.domain_id is None:
        taken = os.environ.get("ROS_DOMAIN_ID")
        opts.domain_id = random.choice([d for d in range(1, 102) if str(d) != taken])
    return opts


def _guarded(res, name, fn, *a):
    """res[name] = fn(*a), and its time in res["timing_s"]; an exception is reported and kept as
    res[name]["error"]: one broken section must not lose the others."""
    t0 = time.perf_counter()
    try:
        res[name] = fn(*a)
    except Exception as exc:
        import traceback
        traceback.print_exc()
        res[name] = {"error": f"{type(exc).__name__}: {exc}"}
        print(f"\n{name}: FAILED: {res[name]['error']}", flush=True)
    res.setdefault("timing_s", {})[name] = time.perf_counter() - t0


def _run_batch(opts, res):
    """The batch section (and our calls on 2 threads), then its table."""
    _guarded(res, "batch", section_batch, opts)
    if not opts.quiet and not opts.no_2threads:
        _guarded(res, "batch_2threads", batch_two_threads, opts)
    if "error" not in res["batch"]:
        print_batch(res["batch"], res.get("batch_2threads"))


def _run_ros(opts, res):
    """The node sections (_ros.py: start-up, round trips, MPC) and the simulator node, then their tables."""
    import _ros
    _guarded(res, "ros", lambda: _ros.run(opts.domain_id, duration=opts.duration,
                                          sim_duration=opts.sim_duration, ready_runs=opts.ready_runs,
                                          do_node="node" in opts.only, do_sim="sim" in opts.only))
    if "error" not in res["ros"]:
        print_ros(res["ros"])


def _section(key, section):
    """What runs a section whose results are res[key] = section(opts), guarded."""
    return lambda opts, res: _guarded(res, key, section, opts)


# The sections in the order they run, each when one of its names is chosen (--only): (those names,
# what runs it with (opts, res)).
RUN_ORDER = (
    (("single",), _section("single", section_single)),
    (("batch",), _run_batch),
    (("contact",), _section("contact", section_contact)),
    (("task_space",), _section("task_space", section_task_space)),
    (("feedforward",), _section("feedforward", section_feedforward)),
    (("identification",), _section("identification", section_identification)),
    (("robot_identification",), _section("robot_identification", section_robot_identification)),
    (("derivatives",), _section("derivatives", section_derivatives)),
    (("ocp",), _section("ocp", section_ocp)),
    (("scaling",), _section("scaling", section_scaling)),
    (("startup",), _section("startup", section_startup)),
    (("sim",), _section("sim", section_sim_core)),
    (("node", "sim"), _run_ros),
    (("node",), _section("node_callback", section_node_callback)),
    (("viewer",), _section("viewer", section_viewer)),
    (("mujoco_engine",), _section("mujoco_engine", section_mujoco_engine)),
    (("rollouts",), _section("rollouts", section_rollouts)),
)


def main(argv=None):
    opts = parse(sys.argv[1:] if argv is None else argv)
    if opts.quiet:
        sys.stdout = open(os.devnull, "w")
    t_start = time.perf_counter()
    res = {"meta": meta(opts)}
    print(f"robot_dynamics_ros vs Pinocchio {pin.__version__} | Python {platform.python_version()} | "
          f"{res['meta']['cpus']} CPUs ({res['meta']['cpu']}) | "
          f"OPENBLAS_NUM_THREADS={res['meta']['blas_threads']} | "
          f"load {res['meta']['loadavg_start'][0]:.2f} | "
          f"{'quick' if opts.quick else 'full'} run: {','.join(opts.only)}")
    print(f"Method: {METHOD}", flush=True)
    for sections, run in RUN_ORDER:
        if any(section in opts.only for section in sections):
            run(opts, res)
    res["summary"] = summary(res)
    res["meta"]["loadavg_end"] = os.getloadavg()
    res["meta"]["total_s"] = time.perf_counter() - t_start
    path = Path(opts.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1, default=str))
    print(f"\nTotal {res['meta']['total_s']:.0f} s. JSON: {path}")


if __name__ == "__main__":
    main()
