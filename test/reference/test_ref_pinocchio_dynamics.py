"""Joint-space dynamics against Pinocchio on the real URDFs of example-robot-data.

Each test runs on every robot pair of conftest.ROBOTS (Panda with locked fingers and the full Panda
tree, UR5, UR10, xArm7, Kinova Jaco with continuous joints, Panda chains root -> tip, UR5 with a joint
locked at 0.7 rad, custom gravity) at seeded random states, and asserts
|ours - Pinocchio|max <= 1e-9 · max(1, |Pinocchio|max). Joints are matched by name (Pair.perm).
"""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

pin = pytest.importorskip("pinocchio")

N_STATES = 8
ARMS_CLOSED_FORM = ("ur5", "panda_locked", "panda")


def pin_mass_matrix(P, q):
    """Pinocchio's CRBA fills the upper triangle only: symmetrise, then our joint order."""
    M = pin.crba(P.pm, P.pd, P.pin_q(q)).copy()
    return P.mat(np.triu(M) + np.triu(M, 1).T)


def pin_gravity(P, q):
    return P.vec(pin.computeGeneralizedGravity(P.pm, P.pd, P.pin_q(q)).copy())


def pin_nle(P, q, qd):
    return P.vec(pin.nonLinearEffects(P.pm, P.pd, P.pin_q(q), P.pin_v(qd)).copy())


def pin_rnea(P, q, qd, qdd):
    return P.vec(pin.rnea(P.pm, P.pd, P.pin_q(q), P.pin_v(qd), P.pin_v(qdd)).copy())


def pin_body_jacobian(P, q, frame):
    """J_b of a frame (Pinocchio LOCAL), angular rows first, our joint order."""
    pin.computeJointJacobians(P.pm, P.pd, P.pin_q(q))
    pin.updateFramePlacements(P.pm, P.pd)
    return P.jac(pin.getFrameJacobian(P.pm, P.pd, P.frame_id(frame), pin.LOCAL))


def tip_test_frames(model):
    """Frames at which a tip wrench is applied: the default tip frame (frame=None), a link halfway along
    the tree, and the last fixed frame on a moving body (tool0, panda_hand_tcp, link_eef, ...)."""
    fixed = [f for f in model.frame_names
             if f not in model.link_names and model.frame_body[model.frame_index(f)] >= 0]
    return [None, model.link_names[model.nq // 2], fixed[-1] if fixed else model.tip_frame]


# ---------------------------------------------------------------------------------------------
# inverse dynamics and its terms
# ---------------------------------------------------------------------------------------------

def test_joints_matched_by_name(pair):
    """The harness maps joints by name: the same joint set, perm a permutation, and Pinocchio's joint
    at velocity index perm[i] is our joint i."""
    model, pm = pair.model, pair.pm
    assert sorted(pm.names[1:]) == sorted(model.joint_names)
    assert sorted(pair.perm) == list(range(pm.nv))
    by_v = {pm.joints[j].idx_v: pm.names[j] for j in range(1, pm.njoints)}
    assert [by_v[v] for v in pair.perm] == list(model.joint_names)


def test_inverse_dynamics(pair, check):
    Q, QD, QDD = pair.states(N_STATES)
    for q, qd, qdd in zip(Q, QD, QDD):
        check("inverse_dynamics", pair.name, rd.inverse_dynamics(pair.model, q, qd, qdd),
              pin_rnea(pair, q, qd, qdd))


def test_inverse_dynamics_with_tip_wrench(pair, check):
    """τ = RNEA(q, q̇, q̈) + J_bᵀ F: F is the wrench (m, f) the robot exerts at the frame, in its
    coordinates; J_b is Pinocchio's LOCAL frame Jacobian."""
    Q, QD, QDD = pair.states(N_STATES, seed=1)
    rng = np.random.default_rng(11)
    model = pair.model
    for frame in tip_test_frames(model):
        name = model.tip_frame if frame is None else frame
        for q, qd, qdd in zip(Q, QD, QDD):
            F = rng.normal(scale=10.0, size=6)
            ref = pin_rnea(pair, q, qd, qdd) + pin_body_jacobian(pair, q, name).T @ F
            check("inverse_dynamics(f_tip)", pair.name,
                  rd.inverse_dynamics(model, q, qd, qdd, f_tip=F, frame=frame), ref)


def test_urdf_dynamics_coefficients(pair, joint_dynamics_from_xml):
    """model.damping / model.friction are each joint's URDF <dynamics damping friction>: as read from
    the XML text here (by joint name) and as Pinocchio reads them."""
    model = pair.model
    xml = joint_dynamics_from_xml(pair.path)
    np.testing.assert_array_equal(model.damping, [xml[j][0] for j in model.joint_names])
    np.testing.assert_array_equal(model.friction, [xml[j][1] for j in model.joint_names])
    np.testing.assert_array_equal(model.damping, pair.vec(pair.pm.damping))
    np.testing.assert_array_equal(model.friction, pair.vec(pair.pm.friction))


@pytest.mark.parametrize("robot, expected", [
    ("panda", {"panda_joint1": (0.003, 0.0), "panda_joint7": (0.003, 0.0), "panda_finger_joint1": (0.3, 0.0),
               "panda_finger_joint2": (0.3, 0.0)}),
    ("ur5", {"shoulder_pan_joint": (0.0, 0.0), "wrist_3_joint": (0.0, 0.0)}),
    ("ur10", {"shoulder_pan_joint": (0.0, 0.0), "wrist_3_joint": (0.0, 0.0)}),
    ("xarm7", {"joint1": (10.0, 1.0), "joint3": (5.0, 1.0), "joint7": (2.0, 1.0)}),
])
def test_urdf_dynamics_values(robot, expected, pairs):
    """The <dynamics> values written in Panda's, UR5's, UR10's and xArm7's URDFs (copied from the files)
    are what load_urdf reports."""
    model = pairs(robot).model
    for joint, (damping, friction) in expected.items():
        i = model.joint_index(joint)
        assert (model.damping[i], model.friction[i]) == (damping, friction), joint


def test_inverse_dynamics_with_friction(pair, check):
    """friction=True adds the URDF's damping·q̇ + friction·sgn(q̇) (Pinocchio's model.damping/friction);
    a (viscous, coulomb) pair adds those instead."""
    Q, QD, QDD = pair.states(N_STATES, seed=2)
    damping, coulomb = pair.vec(pair.pm.damping), pair.vec(pair.pm.friction)
    viscous = np.linspace(0.1, 0.9, pair.n)
    for q, qd, qdd in zip(Q, QD, QDD):
        rnea = pin_rnea(pair, q, qd, qdd)
        check("inverse_dynamics(friction)", pair.name,
              rd.inverse_dynamics(pair.model, q, qd, qdd, friction=True),
              rnea + damping * qd + coulomb * np.sign(qd))
        check("inverse_dynamics(friction)", pair.name,
              rd.inverse_dynamics(pair.model, q, qd, qdd, friction=(viscous, 0.7)),
              rnea + viscous * qd + 0.7 * np.sign(qd))


def test_gravity_coriolis_bias(pair, check):
    Q, QD, _ = pair.states(N_STATES, seed=3)
    for q, qd in zip(Q, QD):
        g, nle = pin_gravity(pair, q), pin_nle(pair, q, qd)
        check("gravity_torques", pair.name, rd.gravity_torques(pair.model, q), g)
        check("bias_forces", pair.name, rd.bias_forces(pair.model, q, qd), nle)
        check("coriolis_forces", pair.name, rd.coriolis_forces(pair.model, q, qd), nle - g)


def test_mass_matrix(pair, check):
    Q, _, _ = pair.states(N_STATES, seed=4)
    for q in Q:
        M = pin_mass_matrix(pair, q)
        check("mass_matrix", pair.name, rd.mass_matrix(pair.model, q), M)
        check("mass_matrix_via_jacobians", pair.name, rd.mass_matrix_via_jacobians(pair.model, q), M)


def test_coriolis_matrix(pair, check):
    Q, QD, _ = pair.states(N_STATES, seed=5)
    for q, qd in zip(Q, QD):
        C = pair.mat(pin.computeCoriolisMatrix(pair.pm, pair.pd, pair.pin_q(q), pair.pin_v(qd)).copy())
        check("coriolis_matrix", pair.name, rd.coriolis_matrix(pair.model, q, qd), C)


# ---------------------------------------------------------------------------------------------
# ∂M/∂q and the Christoffel symbols
# ---------------------------------------------------------------------------------------------

def pin_mass_matrix_derivatives(P, q):
    """∂M/∂q_k exactly from Pinocchio's RNEA derivatives: τ(q, 0, q̈) = M(q) q̈ + g(q), so with
    q̈ = e_j, ∂τ/∂q_k − ∂g/∂q_k = ∂(M e_j)/∂q_k = column j of ∂M/∂q_k. Returns dM[i, j, k] = ∂m_ij/∂q_k
    in our joint order."""
    n, qp, zero = P.pm.nv, P.pin_q(q), np.zeros(P.pm.nv)
    dg = pin.computeRNEADerivatives(P.pm, P.pd, qp, zero, zero)[0].copy()
    dM = np.empty((n, n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = 1.0
        dM[:, j, :] = pin.computeRNEADerivatives(P.pm, P.pd, qp, zero, e)[0] - dg
    p = P.perm
    return dM[np.ix_(p, p, p)]


def pin_mass_matrix_derivatives_fd(P, q, h=1e-6):
    """Central finite differences of Pinocchio's CRBA: dM[:, :, k] ≈ (M(q + h e_k) − M(q − h e_k)) / 2h."""
    n = P.n
    dM = np.empty((n, n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        dM[:, :, k] = (pin_mass_matrix(P, q + e) - pin_mass_matrix(P, q - e)) / (2 * h)
    return dM


def christoffel_from(dM):
    """Eq. 9.13: Γ_ijk = ½(∂m_ij/∂q_k + ∂m_ik/∂q_j − ∂m_jk/∂q_i), with dM[i, j, k] = ∂m_ij/∂q_k."""
    return 0.5 * (dM + np.einsum("ikj->ijk", dM) - np.einsum("jki->ijk", dM))


def test_mass_matrix_derivatives(pair, check):
    """Against the exact ∂M/∂q from Pinocchio's RNEA derivatives (≤ 1e-9) and against central
    finite differences of pin.crba (≤ 1e-6: truncation h² and rounding ε/h)."""
    Q, _, _ = pair.states(4, seed=6)
    for q in Q:
        ours = rd.mass_matrix_derivatives(pair.model, q)
        check("mass_matrix_derivatives", pair.name, ours, pin_mass_matrix_derivatives(pair, q))
        check("mass_matrix_derivatives (FD of crba, tol 1e-6)", pair.name, ours,
              pin_mass_matrix_derivatives_fd(pair, q), tol=1e-6)


def test_christoffel_symbols(pair, check):
    """Γ (eq. 9.13) from Pinocchio's exact ∂M/∂q and from finite differences of pin.crba; and the
    Coriolis matrix is C_ij = Σ_k Γ_ijk q̇_k for Pinocchio's Γ too (eq. 9.87)."""
    Q, QD, _ = pair.states(4, seed=7)
    for q, qd in zip(Q, QD):
        ours = rd.christoffel_symbols(pair.model, q)
        gamma = christoffel_from(pin_mass_matrix_derivatives(pair, q))
        check("christoffel_symbols", pair.name, ours, gamma)
        check("christoffel_symbols (FD of crba, tol 1e-6)", pair.name, ours,
              christoffel_from(pin_mass_matrix_derivatives_fd(pair, q)), tol=1e-6)
        check("coriolis_matrix = Γ·q̇ (Pinocchio's Γ)", pair.name, rd.coriolis_matrix(pair.model, q, qd),
              np.einsum("ijk,k->ij", gamma, qd))


# ---------------------------------------------------------------------------------------------
# forward dynamics
# ---------------------------------------------------------------------------------------------

def test_forward_dynamics(pair, check):
    Q, QD, _ = pair.states(N_STATES, seed=8)
    rng = np.random.default_rng(8)
    for q, qd in zip(Q, QD):
        tau = rng.normal(scale=5.0, size=pair.n)
        ref = pair.vec(pin.aba(pair.pm, pair.pd, pair.pin_q(q), pair.pin_v(qd), pair.pin_v(tau)).copy())
        check("forward_dynamics", pair.name, rd.forward_dynamics(pair.model, q, qd, tau), ref)
        check("forward_dynamics_via_mass_matrix", pair.name,
              rd.forward_dynamics_via_mass_matrix(pair.model, q, qd, tau), ref)


def test_forward_dynamics_with_tip_wrench_and_friction(pair, check):
    """q̈ = ABA(q, q̇, τ − J_bᵀ F − damping·q̇ − friction·sgn(q̇)) (Pinocchio), both algorithms."""
    Q, QD, _ = pair.states(N_STATES, seed=9)
    rng = np.random.default_rng(9)
    damping, coulomb = pair.vec(pair.pm.damping), pair.vec(pair.pm.friction)
    frame = tip_test_frames(pair.model)[2]
    for q, qd in zip(Q, QD):
        tau, F = rng.normal(scale=5.0, size=pair.n), rng.normal(scale=5.0, size=6)
        net = tau - pin_body_jacobian(pair, q, frame).T @ F - damping * qd - coulomb * np.sign(qd)
        ref = pair.vec(pin.aba(pair.pm, pair.pd, pair.pin_q(q), pair.pin_v(qd), pair.pin_v(net)).copy())
        for fd, label in ((rd.forward_dynamics, "forward_dynamics(f_tip, friction)"),
                          (rd.forward_dynamics_via_mass_matrix,
                           "forward_dynamics_via_mass_matrix(f_tip, friction)")):
            check(label, pair.name, fd(pair.model, q, qd, tau, f_tip=F, frame=frame, friction=True), ref)


# ---------------------------------------------------------------------------------------------
# energies and the closed form
# ---------------------------------------------------------------------------------------------

def test_energies(pair, check):
    Q, QD, _ = pair.states(N_STATES, seed=10)
    for q, qd in zip(Q, QD):
        qp, vp = pair.pin_q(q), pair.pin_v(qd)
        check("kinetic_energy", pair.name, rd.kinetic_energy(pair.model, q, qd),
              pin.computeKineticEnergy(pair.pm, pair.pd, qp, vp))
        check("potential_energy", pair.name, rd.potential_energy(pair.model, q),
              pin.computePotentialEnergy(pair.pm, pair.pd, qp))


@pytest.mark.parametrize("pair", ARMS_CLOSED_FORM, indirect=True)
def test_closed_form_dynamics(pair, check):
    """closed_form_dynamics (stacked matrices, eqs. 9.62–9.84): M, c, g against Pinocchio."""
    Q, QD, _ = pair.states(4, seed=11)
    for q, qd in zip(Q, QD):
        cf = rd.closed_form_dynamics(pair.model, q, qd)
        g = pin_gravity(pair, q)
        check("closed_form_dynamics.M", pair.name, cf.M, pin_mass_matrix(pair, q))
        check("closed_form_dynamics.c", pair.name, cf.c, pin_nle(pair, q, qd) - g)
        check("closed_form_dynamics.g", pair.name, cf.g, g)
