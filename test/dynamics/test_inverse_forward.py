"""Inverse and forward dynamics are inverses of each other (ABA and the Cholesky route alike), also
with a tip wrench and with friction; the bias terms decompose as documented (eq. 9.81).
Exact identities: relative residual ≤ EXACT (rounding, amplified by cond(M) ≤ ~10³ here)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from robot_dynamics_ros import dynamics as rd

from _random_trees import random_state, random_tree
from _residuals import EXACT, assert_close, torque_scale


def _extras(model, rng):
    """Variants of the optional arguments: none, a tip wrench at a random frame, friction from the
    URDF, explicit per-joint friction, explicit scalar friction, and all together."""
    frame = model.frame_names[rng.integers(len(model.frame_names))]
    f_tip = rng.normal(size=6) * 5.0
    viscous, coulomb = rng.uniform(0.0, 1.0, model.nq), rng.uniform(0.0, 0.5, model.nq)
    return [{}, {"f_tip": f_tip, "frame": frame}, {"f_tip": f_tip}, {"friction": True},
            {"friction": (viscous, coulomb)}, {"friction": (0.3, 0.1)},
            {"f_tip": f_tip, "frame": frame, "friction": (viscous, coulomb)}]


def test_inverse_of_forward_dynamics_is_identity(case, states):
    _, model, rng = case
    for q, qd, _ in states:
        tau = rng.normal(size=model.nq) * 5.0
        for kw in _extras(model, rng):
            qdd = rd.forward_dynamics(model, q, qd, tau, **kw)
            assert_close("ID(FD(tau)) = tau", rd.inverse_dynamics(model, q, qd, qdd, **kw), tau, EXACT)


def test_forward_of_inverse_dynamics_is_identity(case, states):
    _, model, rng = case
    for q, qd, qdd in states:
        for kw in _extras(model, rng):
            tau = rd.inverse_dynamics(model, q, qd, qdd, **kw)
            assert_close("FD(ID(qdd)) = qdd", rd.forward_dynamics(model, q, qd, tau, **kw), qdd, EXACT)


def test_articulated_body_equals_mass_matrix_route(case, states):
    """forward_dynamics (ABA, O(n)) == forward_dynamics_via_mass_matrix (CRBA + RNEA + Cholesky)."""
    _, model, rng = case
    for q, qd, _ in states:
        tau = rng.normal(size=model.nq) * 5.0
        for kw in _extras(model, rng):
            assert_close("ABA vs M^-1 (tau - b)", rd.forward_dynamics(model, q, qd, tau, **kw),
                         rd.forward_dynamics_via_mass_matrix(model, q, qd, tau, **kw), EXACT)


def test_tip_wrench_enters_through_body_jacobian_transpose(case, states):
    """τ(F_tip) − τ(0) = J_bᵀ F_tip: F_tip is in the frame's own coordinates (eq. 9.81); frames on the
    base (the root link) receive no joint torque."""
    _, model, rng = case
    for q, qd, qdd in states:
        tau0 = rd.inverse_dynamics(model, q, qd, qdd)
        for frame in model.frame_names:
            F = rng.normal(size=6) * 5.0
            Jb = rd.jacobian(model, q, frame, reference="body")
            assert_close("ID(F_tip) - ID = J_b^T F_tip",
                         rd.inverse_dynamics(model, q, qd, qdd, f_tip=F, frame=frame) - tau0,
                         Jb.T @ F, EXACT, floor=np.abs(tau0).max())
        F = rng.normal(size=6)
        assert_close("f_tip default frame = tip_frame", rd.inverse_dynamics(model, q, qd, qdd, f_tip=F),
                     rd.inverse_dynamics(model, q, qd, qdd, f_tip=F, frame=model.tip_frame), 0.0, floor=1.0)


def test_friction_torques_are_added_by_inverse_dynamics(case, states):
    """ID(friction=(F_v, F_s)) − ID = F_v q̇ + F_s sgn(q̇); friction=True uses the URDF's
    <dynamics damping friction>."""
    _, model, rng = case
    for q, qd, qdd in states:
        tau0 = rd.inverse_dynamics(model, q, qd, qdd)
        fv, fs = rng.uniform(0, 1, model.nq), rng.uniform(0, 1, model.nq)
        expected = fv * qd + fs * np.sign(qd)
        assert_close("friction torques", rd.friction_torques(model, qd, fv, fs), expected, EXACT)
        assert_close("ID(friction) - ID", rd.inverse_dynamics(model, q, qd, qdd, friction=(fv, fs)) - tau0,
                     expected, EXACT, floor=np.abs(tau0).max())
        urdf = model.damping * qd + model.friction * np.sign(qd)
        assert_close("friction=True uses URDF damping/friction",
                     rd.inverse_dynamics(model, q, qd, qdd, friction=True) - tau0,
                     urdf, EXACT, floor=np.abs(tau0).max())
        assert_close("friction_torques default = URDF", rd.friction_torques(model, qd), urdf, EXACT)


def test_bias_forces_are_coriolis_plus_gravity(model, states):
    for q, qd, _ in states:
        c, g, b = rd.coriolis_forces(model, q, qd), rd.gravity_torques(model, q), rd.bias_forces(model, q, qd)
        assert_close("b = c + g", b, c + g, EXACT)
        assert_close("b = ID(q, qd, 0)", b, rd.inverse_dynamics(model, q, qd, np.zeros(model.nq)), EXACT)
        zero = np.zeros(model.nq)
        assert_close("g = ID(q, 0, 0)", g, rd.inverse_dynamics(model, q, zero, zero), EXACT)


def test_coriolis_forces_are_quadratic_in_velocity(model, states):
    """c(q, 2q̇) = 4 c(q, q̇), c(q, −q̇) = c(q, q̇), c(q, 0) = 0."""
    for q, qd, _ in states:
        c = rd.coriolis_forces(model, q, qd)
        floor = torque_scale(rd.mass_matrix(model, q), qd)
        assert_close("c(q, 2qd) = 4 c(q, qd)", rd.coriolis_forces(model, q, 2 * qd), 4 * c, EXACT,
                     floor=floor)
        assert_close("c(q, -qd) = c(q, qd)", rd.coriolis_forces(model, q, -qd), c, EXACT, floor=floor)
        assert np.all(rd.coriolis_forces(model, q, np.zeros(model.nq)) == 0.0)


def test_trajectory_calls_match_single_calls(case, states):
    _, model, rng = case
    Q, QD, QDD = (np.array(x) for x in zip(*states))
    frame = model.frame_names[-1]
    F = rng.normal(size=6)
    tau = rd.inverse_dynamics_trajectory(model, Q, QD, QDD, f_tip=F, frame=frame, friction=True)
    assert tau.shape == Q.shape
    for k in range(len(Q)):
        assert_close("inverse_dynamics_trajectory", tau[k],
                     rd.inverse_dynamics(model, Q[k], QD[k], QDD[k], f_tip=F, frame=frame, friction=True),
                     EXACT)
    # one wrench per state (was refused before d31ada9: read-only view)
    Fk = rng.normal(size=(len(Q), 6))
    tau_k = rd.inverse_dynamics_trajectory(model, Q, QD, QDD, f_tip=Fk, frame=frame)
    for k in range(len(Q)):
        assert_close("inverse_dynamics_trajectory, (N, 6) f_tip", tau_k[k],
                     rd.inverse_dynamics(model, Q[k], QD[k], QDD[k], f_tip=Fk[k], frame=frame), EXACT)
    qdd = rd.forward_dynamics_trajectory(model, Q, QD, tau, friction=True)
    assert qdd.shape == Q.shape
    for k in range(len(Q)):
        assert_close("forward_dynamics_trajectory", qdd[k],
                     rd.forward_dynamics(model, Q[k], QD[k], tau[k], friction=True), EXACT)


@settings(derandomize=True, database=None, max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 12), scale=st.sampled_from([1e-3, 1.0, 10.0]))
def test_round_trip_property(seed, n, scale):
    """Hypothesis (derandomized, so reproducible): ID∘FD = id on further trees, at slow and fast states."""
    model = rd.load_urdf(random_tree(seed, n).to_urdf())
    rng = np.random.default_rng(seed)
    q, qd, qdd = random_state(model, rng, scale)
    tau = rd.inverse_dynamics(model, q, qd, qdd)
    assert_close("FD(ID(qdd)) = qdd [hypothesis]", rd.forward_dynamics(model, q, qd, tau), qdd, EXACT,
                 floor=scale)
