"""The robots of the benchmark, each loaded twice: in robot_dynamics_ros and in Pinocchio.

A `Pair` holds both models, the joint permutation between them (Pinocchio's `model.names[1:]` order
vs our `model.joint_names`), the tip frame, and helpers that draw random states in both orders.
Spatial quantities: ours angular first (ω, v), Pinocchio's linear first; `SWAP6` converts.
"""
import sysconfig
from pathlib import Path

import numpy as np
import pinocchio as pin

from robot_dynamics_ros import dynamics as rd

ROBOTS_DIR = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data"
              / "robots")
PANDA_URDF = ROBOTS_DIR / "panda_description" / "urdf" / "panda.urdf"
UR5_URDF = ROBOTS_DIR / "ur_description" / "urdf" / "ur5_robot.urdf"
PANDA_FINGERS = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
PANDA_ARM_JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
# Franka's "ready" pose: away from singularities (q = 0 is the arm stretched upright, singular).
PANDA_READY = np.array([0.0, -0.785398, 0.0, -2.356194, 0.0, 1.570796, 0.785398])
SWAP6 = np.array([3, 4, 5, 0, 1, 2])      # linear-first <-> angular-first


def random_chain_urdf(n, seed=0):
    """URDF of a random serial chain of n revolute joints (seeded, reproducible).

    Joint origins: random offsets (about 0.15 m) and random rpy, so the geometry is generic; joint
    axes: a random choice of x, y or z of the joint frame (as real URDFs are written, so Pinocchio
    uses its axis-aligned joint models, its fast path). Links: random box-shaped inertias (so the
    triangle inequality holds) with a random centre of mass and a random principal orientation.
    """
    rng = np.random.default_rng(seed)
    out = ['<?xml version="1.0"?>', f'<robot name="random_chain_{n}">']

    def fmt(v):
        return " ".join(f"{x:.17g}" for x in v)

    for i in range(n + 1):
        m = rng.uniform(0.5, 3.0)
        a, b, c = rng.uniform(0.03, 0.3, 3)
        principal = m / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
        R = pin.rpy.rpyToMatrix(*rng.uniform(-np.pi, np.pi, 3))
        I = R @ np.diag(principal) @ R.T
        com = rng.uniform(-0.05, 0.05, 3)
        out.append(
            f'  <link name="link{i}"><inertial><origin xyz="{fmt(com)}" rpy="0 0 0"/><mass value="{m:.17g}"/>'
            f'<inertia ixx="{I[0, 0]:.17g}" ixy="{I[0, 1]:.17g}" ixz="{I[0, 2]:.17g}" iyy="{I[1, 1]:.17g}" '
            f'iyz="{I[1, 2]:.17g}" izz="{I[2, 2]:.17g}"/></inertial></link>')
    for i in range(1, n + 1):
        xyz = rng.uniform(-0.1, 0.1, 3) + np.array([0.0, 0.0, 0.15])
        rpy = rng.uniform(-np.pi, np.pi, 3)
        axis = np.eye(3)[rng.integers(3)]
        out.append(
            f'  <joint name="joint{i}" type="revolute"><parent link="link{i - 1}"/><child link="link{i}"/>'
            f'<origin xyz="{fmt(xyz)}" rpy="{fmt(rpy)}"/><axis xyz="{fmt(axis)}"/>'
            f'<limit lower="-3.0" upper="3.0" effort="100" velocity="5"/></joint>')
    out.append("</robot>")
    return "\n".join(out)


class Pair:
    """One robot in both libraries. Arrays in our joint order; `perm` maps to Pinocchio's:
    x_pin = x_ours[perm], M_pin = M_ours[perm][:, perm]."""

    def __init__(self, name, ours, pin_model, description):
        self.name = name
        self.description = description
        self.ours = ours
        self.pm = pin_model
        self.pd = pin_model.createData()
        if pin_model.nq != pin_model.nv or pin_model.nv != ours.nq:
            raise ValueError(f"{name}: Pinocchio nq={pin_model.nq}, nv={pin_model.nv}, ours nq={ours.nq}")
        pin_names = list(pin_model.names)[1:]
        self.perm = np.array([ours.joint_names.index(j) for j in pin_names])
        # Coriolis forces c(q, q̇) = nonLinearEffects of a copy with zero gravity.
        self.pm0 = pin.Model(pin_model)
        self.pm0.gravity = pin.Motion.Zero()
        self.pd0 = self.pm0.createData()
        self.frame = ours.tip_frame
        self.frame_id = pin_model.getFrameId(self.frame)
        if self.frame_id >= len(pin_model.frames):
            raise ValueError(f"{name}: Pinocchio has no frame {self.frame!r}")
        self.n = ours.nq

    def to_pin(self, x):
        return np.ascontiguousarray(np.asarray(x)[..., self.perm])

    def random_states(self, count, seed, around=None, spread=None):
        """`count` random (q, q̇, q̈, τ) in our order; q uniform within the limits (at most ±π),
        or around a pose when given. Returns a dict of (count, n) arrays."""
        rng = np.random.default_rng(seed)
        n = self.n
        if around is None:
            lo = np.maximum(self.ours.lower, -np.pi)
            hi = np.minimum(self.ours.upper, np.pi)
            q = rng.uniform(lo, hi, (count, n))
        else:
            q = around + rng.uniform(-spread, spread, (count, n))
        qd = rng.uniform(-1.0, 1.0, (count, n))
        qdd = rng.uniform(-2.0, 2.0, (count, n))
        tau = rng.uniform(-5.0, 5.0, (count, n))
        return {k: np.ascontiguousarray(v) for k, v in dict(q=q, qd=qd, qdd=qdd, tau=tau).items()}


def panda():
    ours = rd.load_urdf(str(PANDA_URDF), locked_joints=dict(PANDA_FINGERS))
    full = pin.buildModelFromUrdf(str(PANDA_URDF))
    lock = [full.getJointId(j) for j in PANDA_FINGERS]
    reduced = pin.buildReducedModel(full, lock, pin.neutral(full))
    return Pair("Panda", ours, reduced, "example-robot-data panda.urdf, fingers locked at 0 (7 joints)")


def ur5():
    return Pair("UR5", rd.load_urdf(str(UR5_URDF)), pin.buildModelFromUrdf(str(UR5_URDF)),
                "example-robot-data ur5_robot.urdf (6 joints)")


def chain(n, seed=0):
    xml = random_chain_urdf(n, seed)
    return Pair(f"chain{n}", rd.load_urdf(xml), pin.buildModelFromXML(xml),
                f"random {n}-joint chain (seed {seed}), one URDF string loaded by both")


# -- Pinocchio counterparts of functions that Pinocchio has no single call for ------------------

def pin_task_space_inertia(pm, pd, q, frame_id):
    """Λ = (J M⁻¹ Jᵀ)⁻¹: computeMinverse + computeFrameJacobian (WORLD) + np.linalg.inv."""
    Minv = pin.computeMinverse(pm, pd, q)
    J = pin.computeFrameJacobian(pm, pd, q, frame_id, pin.WORLD)
    return np.linalg.inv(J @ Minv @ J.T)


def pin_rk4_linearization(pm, pd, q, v, tau, dt):
    """(A, B) of one RK4 step from Pinocchio's computeABADerivatives at the four stages and the chain
    rule in numpy (the same recursion as linearize's)."""
    n = pm.nv
    identity = np.eye(2 * n)

    def stage(q_s, v_s):
        pin.computeABADerivatives(pm, pd, q_s, v_s, tau)
        Minv = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T
        Fx = np.zeros((2 * n, 2 * n))
        Fx[:n, n:] = np.eye(n)
        Fx[n:, :n], Fx[n:, n:] = pd.ddq_dq, pd.ddq_dv
        Fu = np.zeros((2 * n, n))
        Fu[n:] = Minv
        return np.concatenate([v_s, pd.ddq]), Fx, Fu

    x = np.concatenate([q, v])
    k, dk_dx, dk_du = stage(q, v)
    A_sum, B_sum = dk_dx.copy(), dk_du.copy()
    for c, weight in ((0.5, 2.0), (0.5, 2.0), (1.0, 1.0)):
        x_s = x + c * dt * k
        k, Fx, Fu = stage(x_s[:n], x_s[n:])
        dk_dx = Fx @ (identity + c * dt * dk_dx)
        dk_du = Fx @ (c * dt * dk_du) + Fu
        A_sum += weight * dk_dx
        B_sum += weight * dk_du
    return identity + dt / 6.0 * A_sum, dt / 6.0 * B_sum


def pin_linearize_trajectory(pm, pd, Q, V, TAU, dt):
    """A Python loop of pin_rk4_linearization over N states."""
    pairs = [pin_rk4_linearization(pm, pd, Q[k], V[k], TAU[k], dt) for k in range(Q.shape[0])]
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def pin_identify_payload(pm, pd, joint_id, Q, V, A, TAU):
    """identify_payload's least squares from Pinocchio calls: for each sample computeJointTorqueRegressor
    (the ten columns of `joint_id`'s body, its parameters in the joint frame) and rnea (the model's
    torques), then the same column-scaled lstsq in numpy. Returns π_p (10,) (m, m c, I_o in Pinocchio's
    order)."""
    N, n = Q.shape
    Y, residual = np.empty((N * n, 10)), np.empty(N * n)
    columns = slice(10 * (joint_id - 1), 10 * joint_id)
    for k in range(N):
        Y[k * n:(k + 1) * n] = pin.computeJointTorqueRegressor(pm, pd, Q[k], V[k], A[k])[:, columns]
        residual[k * n:(k + 1) * n] = TAU[k] - pin.rnea(pm, pd, Q[k], V[k], A[k])
    scale = np.linalg.norm(Y, axis=0)
    scale[scale == 0.0] = 1.0
    return np.linalg.lstsq(Y / scale, residual, rcond=None)[0] / scale


def pin_task_space_control(pm, pd, frame_id, q, v, T_des, V_des, Vdot_des, kp, kd, q0, kp0, kd0):
    """The task-space computed torque of rd.task_space_control composed from Pinocchio calls and numpy
    (linear-first Motions; scalar gains): computeAllTerms (M, nle, kinematics), the frame Jacobian and
    its time variation in the frame (LOCAL), M = L Lᵀ (numpy Cholesky), Λ = (J M⁻¹ Jᵀ)⁻¹,
    X_e = log6(T⁻¹ T_des), the feed-forward transport by SE3 and Motion actions, then
    τ = Jᵀ (Λ a + η) + (1 − Jᵀ J̄ᵀ)(M (kp0 (q0 − q) − kd0 q̇) + nle)."""
    pin.computeAllTerms(pm, pd, q, v)
    pin.computeJointJacobiansTimeVariation(pm, pd, q, v)
    pin.updateFramePlacement(pm, pd, frame_id)
    J = pin.getFrameJacobian(pm, pd, frame_id, pin.LOCAL)
    dJ = pin.getFrameJacobianTimeVariation(pm, pd, frame_id, pin.LOCAL)
    M = np.triu(pd.M) + np.triu(pd.M, 1).T
    L = np.linalg.cholesky(M)
    Minv_Jt = np.linalg.solve(L.T, np.linalg.solve(L, J.T))
    Lam = np.linalg.inv(J @ Minv_Jt)
    T_bd = pd.oMf[frame_id].actInv(T_des)
    V_b = pin.Motion(J @ v)
    Vd_b = T_bd.act(V_des)
    a = ((T_bd.act(Vdot_des) + Vd_b.cross(V_b)).vector + kp * pin.log6(T_bd).vector
         + kd * (Vd_b.vector - V_b.vector))
    F = Lam @ (a + Minv_Jt.T @ pd.nle - dJ @ v)
    tau0 = M @ (kp0 * (q0 - q) - kd0 * v) + pd.nle
    return J.T @ F + tau0 - J.T @ (Lam @ (Minv_Jt.T @ tau0))


class PinMomentumObserver:
    """The momentum observer's step composed from Pinocchio calls (the way one writes it without
    robot_dynamics_ros): p = crba(q) q̇, β = computeCoriolisMatrix(q, q̇)ᵀ q̇ − computeGeneralizedGravity(q),
    then the same discretisation as MomentumObserver (trapezoid β, Tustin r) in numpy."""

    def __init__(self, pm, pd, gain):
        self.pm, self.pd, self.K = pm, pd, gain

    def balance(self, q, v):
        M = pin.crba(self.pm, self.pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        C = pin.computeCoriolisMatrix(self.pm, self.pd, q, v)
        g = pin.computeGeneralizedGravity(self.pm, self.pd, q)
        return M @ v, C.T @ v - g

    def reset(self, q, v):
        self.z, self.beta = self.balance(q, v)
        self.r = np.zeros_like(v)

    def update(self, q, v, tau, dt):
        p, beta = self.balance(q, v)
        increment = dt * tau + 0.5 * dt * (self.beta + beta)
        r = self.K * (p - (self.z + increment + 0.5 * dt * self.r)) / (1.0 + 0.5 * dt * self.K)
        self.z = self.z + increment + 0.5 * dt * (self.r + r)
        self.beta, self.r = beta, r
        return r


def pin_rnea_loop(pm, pd, Q, V, A):
    rnea, out = pin.rnea, np.empty_like(Q)
    for i in range(len(Q)):
        out[i] = rnea(pm, pd, Q[i], V[i], A[i])
    return out


def pin_crba_loop(pm, pd, Q):
    crba, n = pin.crba, Q.shape[1]
    out = np.empty((len(Q), n, n))
    for i in range(len(Q)):
        out[i] = crba(pm, pd, Q[i])
    return out


def pin_aba_loop(pm, pd, Q, V, T):
    aba, out = pin.aba, np.empty_like(Q)
    for i in range(len(Q)):
        out[i] = aba(pm, pd, Q[i], V[i], T[i])
    return out


def pin_simulate_rk4(pm, pd, q0, v0, taus, dt):
    """Classical RK4 on (q, q̇) with τ held over each step, a Python loop around pin.aba
    (all joints are 1-DoF revolute, so q + dt·q̇ is the configuration update)."""
    aba = pin.aba
    steps, n = taus.shape
    Q = np.empty((steps + 1, n))
    V = np.empty((steps + 1, n))
    Q[0], V[0] = q0, v0
    q, v = q0, v0
    h, s = 0.5 * dt, dt / 6.0
    for k in range(steps):
        tau = taus[k]
        a1 = aba(pm, pd, q, v, tau)
        v2 = v + h * a1
        a2 = aba(pm, pd, q + h * v, v2, tau)
        v3 = v + h * a2
        a3 = aba(pm, pd, q + h * v2, v3, tau)
        v4 = v + dt * a3
        a4 = aba(pm, pd, q + dt * v3, v4, tau)
        q = q + s * (v + 2.0 * v2 + 2.0 * v3 + v4)
        v = v + s * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        Q[k + 1], V[k + 1] = q, v
    return Q, V


def rk4_step_loop(model, q0, qd0, taus, dt):
    """Our rk4_step called from a Python loop (what a user-written simulator does)."""
    step = rd.rk4_step
    q, qd = q0, qd0
    for k in range(len(taus)):
        q, qd = step(model, q, qd, taus[k], dt)
    return q, qd


# ---- the reaching problem of optimal control, ours and Crocoddyl's -------------------------------------
CROCODDYL_PYTHON = Path(__file__).resolve().parents[1] / ".venv-crocoddyl" / "bin" / "python"
REACHING_WEIGHTS = {"goal": 1.0, "state": 0.1, "control": 0.1, "terminal": 1000.0}
# name: (URDF, locked joints, frame, q0); the goal: the frame's start pose moved by REACHING_OFFSET
REACHING = {
    "UR5": (UR5_URDF, {}, "tool0", np.array([0.0, -1.0, 1.5, -0.5, 1.5, 0.0])),
    "Panda": (PANDA_URDF, PANDA_FINGERS, "panda_hand", PANDA_READY),
}
REACHING_OFFSET = (0.1, 0.1, -0.1)      # m, root frame


def reaching_problem(name, torque_limits=False, horizon=100, dt=0.01):
    """The ReachingProblem `name` (REACHING) with Crocoddyl's example's weights."""
    urdf, locked, frame, q0 = REACHING[name]
    model = rd.load_urdf(str(urdf), locked_joints=dict(locked)) if locked else rd.load_urdf(str(urdf))
    T_goal = rd.frame_pose(model, q0, frame)
    T_goal[:3, 3] += REACHING_OFFSET
    w = REACHING_WEIGHTS
    return rd.ReachingProblem(model, frame, T_goal, q0, horizon=horizon, dt=dt, goal_weight=w["goal"],
                              state_weight=w["state"], control_weight=w["control"],
                              terminal_goal_weight=w["terminal"], torque_limits=torque_limits)


def crocoddyl_reaching(name, problem, max_iterations=500, repeats=1, threads=None):
    """Crocoddyl's FDDP (BoxFDDP with limits) on the same problem, in .venv-crocoddyl
    (_crocoddyl_reaching.py): its JSON answer."""
    import json
    import subprocess
    urdf, locked, frame, _ = REACHING[name]
    if not CROCODDYL_PYTHON.exists():
        raise RuntimeError(f"no Crocoddyl at {CROCODDYL_PYTHON}: run tools/bootstrap.sh")
    spec = {"urdf": str(urdf), "locked": dict(locked), "frame": frame, "q0": problem.q0.tolist(),
            "T_goal": problem.T_goal.tolist(), "horizon": problem.horizon, "dt": problem.dt,
            "weights": REACHING_WEIGHTS, "torque_limits": problem.torque_limits,
            "max_iterations": max_iterations, "repeats": repeats, "threads": threads}
    run = subprocess.run([str(CROCODDYL_PYTHON), str(Path(__file__).with_name("_crocoddyl_reaching.py"))],
                         input=json.dumps(spec), capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(f"Crocoddyl failed: {run.stderr[-3000:]}")
    return json.loads(run.stdout)
