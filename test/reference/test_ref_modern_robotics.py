"""The Modern Robotics code library's worked examples (pip package `modern-robotics`, chapter 8/9
dynamics functions) as references: the "Example Input / Output" numbers printed in its docstrings,
and `mr.<Function>` values computed at seeded states.

A finding about the printed example: its Slist is
    [[1, 0, 1, 0, 1, 0], [0, 1, 0, -0.089, 0, 0], [0, 1, 0, -0.089, 0, 0.425]]ᵀ,
whose first screw axis has ω = (1, 0, 1), |ω| = √2 (the UR5's first joint is (0, 0, 1, 0, 0, 0)), and
the printed outputs are computed with it (mr.InverseDynamics reproduces them with this Slist and
not with the unit one). from_modern_robotics requires unit screw axes and rejects it. The MR
functions treat S = √2·Ŝ as a unit joint Ŝ driven through a gear ratio √2: exp([S]θ) = exp([Ŝ]θ'),
θ' = √2 θ, and by power balance τ θ̇ = τ' θ̇', τ = √2 τ'. So with s = (√2, 1, 1), the printed
example is reproduced by our model of Ŝ through
    τ = s·τ'(sθ, sθ̇, sθ̈),  M = diag(s) M' diag(s),  θ̈ = θ̈'(sθ, sθ̇, τ/s) / s.
The same functions are also compared with the MR library on the unit-axis (true UR5-like) Slist.
"""
from decimal import Decimal

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

mr = pytest.importorskip("modern_robotics")

# --- the docstrings' example (3-link, UR5-like) ------------------------------------------------
M01 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.089159], [0, 0, 0, 1]])
M12 = np.array([[0, 0, 1, 0.28], [0, 1, 0, 0.13585], [-1, 0, 0, 0], [0, 0, 0, 1]])
M23 = np.array([[1, 0, 0, 0], [0, 1, 0, -0.1197], [0, 0, 1, 0.395], [0, 0, 0, 1]])
M34 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.14225], [0, 0, 0, 1]])
G1 = np.diag([0.010267, 0.010267, 0.00666, 3.7, 3.7, 3.7])
G2 = np.diag([0.22689, 0.22689, 0.0151074, 8.393, 8.393, 8.393])
G3 = np.diag([0.0494433, 0.0494433, 0.004095, 2.275, 2.275, 2.275])
MLIST = [M01, M12, M23, M34]
GLIST = [G1, G2, G3]
SLIST_PRINTED = np.array([[1, 0, 1, 0, 1, 0],
                          [0, 1, 0, -0.089, 0, 0],
                          [0, 1, 0, -0.089, 0, 0.425]], dtype=float).T
SLIST_UNIT = np.array([[0, 0, 1, 0, 0, 0],
                       [0, 1, 0, -0.089, 0, 0],
                       [0, 1, 0, -0.089, 0, 0.425]], dtype=float).T
SCALE = np.linalg.norm(SLIST_PRINTED[:3], axis=0)            # (√2, 1, 1): the joints' "gear ratios"

THETA = np.array([0.1, 0.1, 0.1])
DTHETA = np.array([0.1, 0.2, 0.3])
DDTHETA = np.array([2, 1.5, 1])
G = np.array([0, 0, -9.8])
FTIP = np.array([1, 1, 1, 1, 1, 1], dtype=float)
TAU = np.array([0.5, 0.6, 0.7])

# the printed outputs, digit for digit
PRINTED = {
    "InverseDynamics": ["74.69616155", "-33.06766016", "-3.23057314"],
    "MassMatrix": [["2.25433380e+01", "-3.07146754e-01", "-7.18426391e-03"],
                   ["-3.07146754e-01", "1.96850717e+00", "4.32157368e-01"],
                   ["-7.18426391e-03", "4.32157368e-01", "1.91630858e-01"]],
    "VelQuadraticForces": ["0.26453118", "-0.05505157", "-0.00689132"],
    "GravityForces": ["28.40331262", "-37.64094817", "-5.4415892"],
    "EndEffectorForces": ["1.40954608", "1.85771497", "1.392409"],
    "ForwardDynamics": ["-0.97392907", "25.58466784", "-32.91499212"],
    "EulerStep.theta": ["0.11", "0.12", "0.13"],
    "EulerStep.dtheta": ["0.3", "0.35", "0.4"],
}


def assert_matches_printed(what, values, printed):
    """Each value rounds to the printed number: |v − p| <= half a unit of p's last printed digit."""
    values, printed = np.asarray(values, dtype=float), np.asarray(printed)
    assert values.shape == printed.shape, what
    for v, p in zip(values.ravel(), printed.ravel()):
        half_ulp = 0.5 * 10.0 ** Decimal(p).as_tuple().exponent
        assert abs(v - float(p)) <= half_ulp * (1 + 1e-9), f"{what}: {v!r} does not print as {p}"


class Scaled:
    """Our model of the unit-axis chain Ŝ, evaluated in the coordinates of MR's S = diag(s)·Ŝ."""

    def __init__(self, slist, gravity):
        self.s = np.linalg.norm(np.asarray(slist, dtype=float)[:3], axis=0)
        self.s[self.s == 0] = 1.0                                  # prismatic joints: unit v already
        self.model = rd.from_modern_robotics(MLIST, GLIST, np.asarray(slist) / self.s, gravity=gravity)

    def inverse_dynamics(self, th, dth, ddth, f_tip=None):
        s = self.s
        return s * rd.inverse_dynamics(self.model, s * th, s * dth, s * ddth, f_tip=f_tip,
                                       frame="end_effector")

    def mass_matrix(self, th):
        return self.s[:, None] * rd.mass_matrix(self.model, self.s * th) * self.s[None, :]

    def coriolis_forces(self, th, dth):
        return self.s * rd.coriolis_forces(self.model, self.s * th, self.s * dth)

    def gravity_torques(self, th):
        return self.s * rd.gravity_torques(self.model, self.s * th)

    def forward_dynamics(self, th, dth, tau, f_tip=None):
        s = self.s
        return rd.forward_dynamics(self.model, s * th, s * dth, tau / s, f_tip=f_tip,
                                   frame="end_effector") / s

    def euler_step(self, th, dth, tau, dt, f_tip=None):
        s = self.s
        q, qd = rd.euler_step(self.model, s * th, s * dth, tau / s, dt, f_tip=f_tip, frame="end_effector")
        return q / s, qd / s

    def simulate_euler(self, th, dth, taus, dt, steps, f_tip=None):
        s = self.s
        traj = rd.simulate(self.model, s * th, s * dth, taus / s, dt, steps, method="euler", f_tip=f_tip,
                           frame="end_effector")
        return traj.q / s, traj.qd / s


@pytest.fixture(scope="module")
def printed_example():
    return Scaled(SLIST_PRINTED, G), Scaled(SLIST_PRINTED, (0.0, 0.0, 0.0))


# ---------------------------------------------------------------------------------------------
# the printed example
# ---------------------------------------------------------------------------------------------

def test_printed_slist_is_what_the_printed_outputs_use():
    """The printed outputs come from the printed (non-unit) Slist, which from_modern_robotics rejects."""
    assert np.isclose(np.linalg.norm(SLIST_PRINTED[:3, 0]), np.sqrt(2))
    assert_matches_printed("mr.InverseDynamics(printed Slist)",
                           mr.InverseDynamics(THETA, DTHETA, DDTHETA, G, FTIP, MLIST, GLIST, SLIST_PRINTED),
                           PRINTED["InverseDynamics"])
    unit = mr.InverseDynamics(THETA, DTHETA, DDTHETA, G, FTIP, MLIST, GLIST, SLIST_UNIT)
    assert abs(unit[0] - float(PRINTED["InverseDynamics"][0])) > 1.0
    with pytest.raises(ValueError, match="Slist"):
        rd.from_modern_robotics(MLIST, GLIST, SLIST_PRINTED, gravity=G)


def test_printed_outputs(printed_example, check):
    """Every printed output, to the digits printed and to mr.<Function> (<= 1e-9)."""
    ex, flat = printed_example
    S = SLIST_PRINTED
    cases = [
        ("InverseDynamics", ex.inverse_dynamics(THETA, DTHETA, DDTHETA, f_tip=FTIP),
         mr.InverseDynamics(THETA, DTHETA, DDTHETA, G, FTIP, MLIST, GLIST, S)),
        ("MassMatrix", ex.mass_matrix(THETA), mr.MassMatrix(THETA, MLIST, GLIST, S)),
        ("VelQuadraticForces", ex.coriolis_forces(THETA, DTHETA),
         mr.VelQuadraticForces(THETA, DTHETA, MLIST, GLIST, S)),
        ("GravityForces", ex.gravity_torques(THETA), mr.GravityForces(THETA, G, MLIST, GLIST, S)),
        # EndEffectorForces = inverse dynamics with q̇ = q̈ = 0, no gravity, F_tip at {n+1} = 'end_effector'
        ("EndEffectorForces", flat.inverse_dynamics(THETA, 0 * THETA, 0 * THETA, f_tip=FTIP),
         mr.EndEffectorForces(THETA, FTIP, MLIST, GLIST, S)),
        ("ForwardDynamics", ex.forward_dynamics(THETA, DTHETA, TAU, f_tip=FTIP),
         mr.ForwardDynamics(THETA, DTHETA, TAU, G, FTIP, MLIST, GLIST, S)),
    ]
    for name, ours, theirs in cases:
        assert_matches_printed(name, ours, PRINTED[name])
        check(f"MR {name}", "MR printed example", ours, theirs)


def test_printed_euler_step(printed_example, check):
    """EulerStep's example takes θ̈ = (2, 1.5, 1) directly; euler_step integrates our forward dynamics,
    so drive it with τ = ID(θ, θ̇, θ̈): one step of dt = 0.1 gives the printed (0.11, 0.12, 0.13),
    (0.3, 0.35, 0.4)."""
    ex, _ = printed_example
    tau = ex.inverse_dynamics(THETA, DTHETA, DDTHETA)
    th, dth = ex.euler_step(THETA, DTHETA, tau, 0.1)
    assert_matches_printed("EulerStep.theta", th, PRINTED["EulerStep.theta"])
    assert_matches_printed("EulerStep.dtheta", dth, PRINTED["EulerStep.dtheta"])
    ref = mr.EulerStep(THETA, DTHETA, DDTHETA, 0.1)
    check("MR EulerStep", "MR printed example", np.concatenate([th, dth]), np.concatenate(ref))


# ---------------------------------------------------------------------------------------------
# the MR library at seeded states, both Slists
# ---------------------------------------------------------------------------------------------

SLISTS = {"MR printed example": SLIST_PRINTED, "MR unit-axis UR5-like": SLIST_UNIT}


@pytest.mark.parametrize("label", SLISTS)
def test_against_mr_library(label, check):
    S = SLISTS[label]
    ex, flat = Scaled(S, G), Scaled(S, (0.0, 0.0, 0.0))
    rng = np.random.default_rng(40)
    for _ in range(6):
        th, dth, ddth = rng.uniform(-np.pi, np.pi, 3), rng.normal(size=3), rng.normal(size=3)
        tau, F = rng.normal(scale=5.0, size=3), rng.normal(size=6)
        check("MR InverseDynamics", label, ex.inverse_dynamics(th, dth, ddth, f_tip=F),
              mr.InverseDynamics(th, dth, ddth, G, F, MLIST, GLIST, S))
        check("MR MassMatrix", label, ex.mass_matrix(th), mr.MassMatrix(th, MLIST, GLIST, S))
        check("MR VelQuadraticForces", label, ex.coriolis_forces(th, dth),
              mr.VelQuadraticForces(th, dth, MLIST, GLIST, S))
        check("MR GravityForces", label, ex.gravity_torques(th), mr.GravityForces(th, G, MLIST, GLIST, S))
        check("MR EndEffectorForces", label, flat.inverse_dynamics(th, 0 * th, 0 * th, f_tip=F),
              mr.EndEffectorForces(th, F, MLIST, GLIST, S))
        check("MR ForwardDynamics", label, ex.forward_dynamics(th, dth, tau, f_tip=F),
              mr.ForwardDynamics(th, dth, tau, G, F, MLIST, GLIST, S))
        ours = ex.euler_step(th, dth, tau, 0.01, f_tip=F)
        ref = mr.EulerStep(th, dth, mr.ForwardDynamics(th, dth, tau, G, F, MLIST, GLIST, S), 0.01)
        check("MR EulerStep", label, np.concatenate(ours), np.concatenate(ref))


def test_tip_wrench_convention():
    """MR's Ftip is the wrench the end effector applies to the environment, in {n+1}: the torques
    that produce it are +J_bᵀ Ftip with J_b the body Jacobian of {n+1} (mr.JacobianBody). Our f_tip
    at 'end_effector' is the same wrench."""
    home = np.linalg.multi_dot(MLIST)
    Blist = mr.Adjoint(mr.TransInv(home)) @ SLIST_UNIT
    model = rd.from_modern_robotics(MLIST, GLIST, SLIST_UNIT, gravity=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(41)
    for _ in range(4):
        th, F = rng.uniform(-np.pi, np.pi, 3), rng.normal(size=6)
        Jb = mr.JacobianBody(Blist, th)
        np.testing.assert_allclose(mr.EndEffectorForces(th, F, MLIST, GLIST, SLIST_UNIT), Jb.T @ F,
                                   atol=1e-12)
        np.testing.assert_allclose(rd.jacobian(model, th, "end_effector", "body"), Jb, atol=1e-12)
        tau_tip = rd.inverse_dynamics(model, th, 0 * th, 0 * th, f_tip=F, frame="end_effector")
        np.testing.assert_allclose(tau_tip, Jb.T @ F, atol=1e-12)


def docstring_trajectory():
    """InverseDynamicsTrajectory's docstring trajectory: quintic JointTrajectory 0 -> π/2 in 3 s,
    N = 1000, velocities and accelerations by backward differences, Ftip = 1 throughout."""
    N, Tf = 1000, 3
    thetamat = np.array(mr.JointTrajectory(np.zeros(3), np.full(3, np.pi / 2), Tf, N, 5))
    dthetamat, ddthetamat = np.zeros((N, 3)), np.zeros((N, 3))
    dt = Tf / (N - 1.0)
    for i in range(N - 1):
        dthetamat[i + 1] = (thetamat[i + 1] - thetamat[i]) / dt
        ddthetamat[i + 1] = (dthetamat[i + 1] - dthetamat[i]) / dt
    return thetamat, dthetamat, ddthetamat, np.ones((N, 6))


@pytest.mark.parametrize("label", SLISTS)
def test_inverse_dynamics_trajectory(label, check):
    """The docstring trajectory through InverseDynamicsTrajectory. The MR library's MatrixExp6 treats
    a rotation |ω|θ < 1e-6 rad as none at all (NearZero), so on the first rows of the trajectory
    (θ ~ 1e-8 .. 4e-7) its torques are off by ~|θ|·|τ| (8e-7 N·m measured): those rows are compared
    at 1e-5, the rest at 1e-9."""
    S = SLISTS[label]
    ex = Scaled(S, G)
    th, dth, ddth, F = docstring_trajectory()
    s = ex.s
    ours = s * rd.inverse_dynamics_trajectory(ex.model, th * s, dth * s, ddth * s, f_tip=F,
                                              frame="end_effector")
    ref = mr.InverseDynamicsTrajectory(th, dth, ddth, G, F, MLIST, GLIST, S)
    tiny = np.any((np.abs(th * s) < 1e-6) & (th != 0), axis=1)
    assert 0 < tiny.sum() < 10
    check("MR InverseDynamicsTrajectory", label, ours[~tiny], ref[~tiny])
    check("MR InverseDynamicsTrajectory (rows with 0 < |θ| < 1e-6, tol 1e-5)", label, ours[tiny], ref[tiny],
          tol=1e-5)


@pytest.mark.parametrize("label", SLISTS)
def test_forward_dynamics_trajectory(label, check):
    """ForwardDynamicsTrajectory's docstring example (dt = 0.1, intRes = 8 Euler sub-steps per torque
    row; the last row is not applied) = simulate(method='euler') with dt/8, each torque held 8 steps."""
    S = SLISTS[label]
    ex = Scaled(S, G)
    taumat = np.array([[3.63, -6.58, -5.57], [3.74, -5.55, -5.5], [4.31, -0.68, -5.19], [5.18, 5.63, -4.31],
                       [5.85, 8.17, -2.59], [5.78, 2.79, -1.7], [4.99, -5.3, -1.19], [4.08, -9.41, 0.07],
                       [3.56, -10.1, 0.97], [3.49, -9.41, 1.23]])
    dt, int_res = 0.1, 8
    F = np.ones(6)
    th_mr, dth_mr = mr.ForwardDynamicsTrajectory(THETA, DTHETA, taumat, G, np.ones((len(taumat), 6)),
                                                 MLIST, GLIST, S, dt, int_res)
    taus = np.repeat(taumat[:-1], int_res, axis=0)
    q, qd = ex.simulate_euler(THETA, DTHETA, taus, dt / int_res, len(taus), f_tip=F)
    check("MR ForwardDynamicsTrajectory", label, np.hstack([q[::int_res], qd[::int_res]]),
          np.hstack([th_mr, dth_mr]))


# ---------------------------------------------------------------------------------------------
# to_modern_robotics
# ---------------------------------------------------------------------------------------------

def test_round_trip(check):
    """to_modern_robotics(from_modern_robotics(M, G, S)) returns the same lists here (the example's
    frames {i} sit at the centres of mass with diagonal G_i), and the MR library agrees on both."""
    Ml, Gl, Sl = rd.to_modern_robotics(rd.from_modern_robotics(MLIST, GLIST, SLIST_UNIT, gravity=G))
    assert len(Ml) == 4 and len(Gl) == 3 and Sl.shape == (6, 3)
    check("to_modern_robotics round trip (Mlist)", "MR unit-axis UR5-like", np.array(Ml), np.array(MLIST),
          tol=1e-12)
    check("to_modern_robotics round trip (Glist)", "MR unit-axis UR5-like", np.array(Gl), np.array(GLIST),
          tol=1e-12)
    check("to_modern_robotics round trip (Slist)", "MR unit-axis UR5-like", Sl, SLIST_UNIT, tol=1e-12)
    check("to_modern_robotics round trip (mr.InverseDynamics)", "MR unit-axis UR5-like",
          mr.InverseDynamics(THETA, DTHETA, DDTHETA, G, FTIP, Ml, Gl, Sl),
          mr.InverseDynamics(THETA, DTHETA, DDTHETA, G, FTIP, MLIST, GLIST, SLIST_UNIT))


@pytest.mark.parametrize("robot", ["ur5", "ur10"])
def test_to_modern_robotics_of_urdf(robot, pairs, check):
    """to_modern_robotics(load_urdf(ur5)): the MR library's InverseDynamics / MassMatrix /
    ForwardDynamics on the exported lists equal ours (Ftip at the model's tip frame)."""
    model = rd.load_urdf(pairs(robot).path)
    Ml, Gl, Sl = rd.to_modern_robotics(model)
    g = model.gravity
    rng = np.random.default_rng(42)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, 6), rng.normal(size=6), rng.normal(size=6)
        F, tau = rng.normal(size=6), rng.normal(scale=5.0, size=6)
        check("to_modern_robotics → mr.InverseDynamics", robot,
              rd.inverse_dynamics(model, q, qd, qdd, f_tip=F),
              mr.InverseDynamics(q, qd, qdd, g, F, Ml, Gl, Sl))
        check("to_modern_robotics → mr.MassMatrix", robot, rd.mass_matrix(model, q),
              mr.MassMatrix(q, Ml, Gl, Sl))
        check("to_modern_robotics → mr.ForwardDynamics", robot,
              rd.forward_dynamics(model, q, qd, tau, f_tip=F),
              mr.ForwardDynamics(q, qd, tau, g, F, Ml, Gl, Sl))


# ---------------------------------------------------------------------------------------------
# energies of a from_modern_robotics model
# ---------------------------------------------------------------------------------------------

def mr_potential_energy(th, slist):
    """P = −Σ m_i gᵀ p_i with p_i the origin of {i} (the example's frames sit at the centres of
    mass): T_0i = e^[S1]θ1 ⋯ e^[Si]θi M_i (product of exponentials, mr.FKinSpace)."""
    P, home = 0.0, np.eye(4)
    for i in range(3):
        home = home @ MLIST[i]
        T = mr.FKinSpace(home, slist[:, :i + 1], th[:i + 1])
        P -= GLIST[i][3, 3] * G @ T[:3, 3]
    return P


def test_potential_energy(check):
    model = rd.from_modern_robotics(MLIST, GLIST, SLIST_UNIT, gravity=G)
    rng = np.random.default_rng(43)
    for th in rng.uniform(-np.pi, np.pi, (5, 3)):
        check("MR potential energy (FKinSpace)", "MR unit-axis UR5-like", rd.potential_energy(model, th),
              mr_potential_energy(th, SLIST_UNIT))


def test_kinetic_energy_and_mass_matrix_via_jacobians(check):
    """K = ½ θ̇ᵀ M θ̇ and Σ J_iᵀ G_i J_i = M with M = mr.MassMatrix. The example's joint 2 and 3 axes
    do not pass through the origins of {2}, {3}, so from_modern_robotics offsets the body frames."""
    model = rd.from_modern_robotics(MLIST, GLIST, SLIST_UNIT, gravity=G)
    rng = np.random.default_rng(44)
    for _ in range(5):
        th, dth = rng.uniform(-np.pi, np.pi, 3), rng.normal(size=3)
        M = mr.MassMatrix(th, MLIST, GLIST, SLIST_UNIT)
        check("MR kinetic energy (½θ̇ᵀMθ̇)", "MR unit-axis UR5-like", rd.kinetic_energy(model, th, dth),
              0.5 * dth @ M @ dth)
        check("MR mass_matrix_via_jacobians", "MR unit-axis UR5-like",
              rd.mass_matrix_via_jacobians(model, th), M)
