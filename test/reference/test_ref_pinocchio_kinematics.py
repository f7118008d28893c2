"""Frames, Jacobians, their time derivatives and the task-space quantities against Pinocchio.

References: ours "space" / "body" / "world_aligned" = Pinocchio WORLD / LOCAL / LOCAL_WORLD_ALIGNED.
Pinocchio's spatial vectors are linear first: its Jacobian rows are permuted [3:6, 0:3] (Pair.jac).
Every frame of our model (every URDF link kept, incl. fixed ones such as tool0, panda_hand,
panda_hand_tcp) is compared with Pinocchio's body frame of the same name.
"""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

pin = pytest.importorskip("pinocchio")

#: robots with at least six joints moving the tip frame (task-space inertia needs a rank-6 J)
ARMS_6PLUS = ("panda_locked", "panda", "ur5", "ur10", "xarm7", "kinova", "panda_chain_link8",
              "panda_chain_hand", "ur5_gravity")
#: redundant (7-dof) arms
ARMS_7 = ("panda_locked", "xarm7", "panda_chain_hand")
REFERENCES = {"space": pin.WORLD, "body": pin.LOCAL, "world_aligned": pin.LOCAL_WORLD_ALIGNED}
N_STATES = 6


def test_every_frame_is_a_pinocchio_frame(pair):
    """Our frames are the URDF links: each exists in Pinocchio, and the tip frame is among them."""
    model = pair.model
    assert model.tip_frame in model.frame_names
    for name in model.frame_names:
        pair.frame_id(name)
    # every URDF link is addressable (links merged behind fixed joints included)
    links = {f.name for f in pair.pm.frames if f.type == pin.BODY}
    assert links <= set(model.frame_names), links - set(model.frame_names)


def test_frame_pose_every_frame(pair, check):
    Q, _, _ = pair.states(N_STATES, seed=20)
    for q in Q:
        pin.framesForwardKinematics(pair.pm, pair.pd, pair.pin_q(q))
        for name in pair.model.frame_names:
            check("frame_pose", pair.name, rd.frame_pose(pair.model, q, name),
                  pair.pd.oMf[pair.frame_id(name)].homogeneous)


@pytest.mark.parametrize("reference", REFERENCES)
def test_jacobian_and_derivative_every_frame(pair, reference, check):
    """J and J̇ of every frame in the three references (pin.getFrameJacobian /
    getFrameJacobianTimeVariation after computeJointJacobiansTimeVariation)."""
    rf = REFERENCES[reference]
    Q, QD, _ = pair.states(N_STATES, seed=21)
    for q, qd in zip(Q, QD):
        pin.computeJointJacobiansTimeVariation(pair.pm, pair.pd, pair.pin_q(q), pair.pin_v(qd))
        pin.updateFramePlacements(pair.pm, pair.pd)
        for name in pair.model.frame_names:
            fid = pair.frame_id(name)
            check(f"jacobian[{reference}]", pair.name, rd.jacobian(pair.model, q, name, reference),
                  pair.jac(pin.getFrameJacobian(pair.pm, pair.pd, fid, rf)))
            check(f"jacobian_derivative[{reference}]", pair.name,
                  rd.jacobian_derivative(pair.model, q, qd, name, reference),
                  pair.jac(pin.getFrameJacobianTimeVariation(pair.pm, pair.pd, fid, rf)))


def test_default_frame_is_the_tip(pair, check):
    """frame=None means model.tip_frame (the tip_link of a chain selection) in every frame-taking call."""
    model = pair.model
    q, qd, _ = (x[0] for x in pair.states(1, seed=22))
    check("default frame = tip_frame", pair.name, rd.frame_pose(model, q),
          rd.frame_pose(model, q, model.tip_frame), tol=0)
    check("default frame = tip_frame", pair.name, rd.jacobian(model, q),
          rd.jacobian(model, q, model.tip_frame), tol=0)
    check("default frame = tip_frame", pair.name, rd.jacobian_derivative(model, q, qd),
          rd.jacobian_derivative(model, q, qd, model.tip_frame), tol=0)


@pytest.mark.parametrize("pair, tip", [("panda_chain_link8", "panda_link8"),
                                       ("panda_chain_hand", "panda_hand")],
                         indirect=["pair"])
def test_chain_selection_tip_frame(pair, tip):
    """load_urdf(root_link, tip_link): the tip frame is tip_link, the joints are the seven arm joints."""
    assert pair.model.tip_frame == tip
    assert pair.model.root_link == "panda_link0"
    assert pair.model.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))


# ---------------------------------------------------------------------------------------------
# task space (eqs. 9.97–9.99)
# ---------------------------------------------------------------------------------------------

def pin_task_space(P, q, qd, reference, damping=0.0):
    """Λ = (J M⁻¹ Jᵀ + damping·1)⁻¹ and η = Λ (J M⁻¹ b − J̇ q̇) at the tip frame, from Pinocchio's
    M (crba), b (nonLinearEffects), J and J̇, in our ordering."""
    qp, vp = P.pin_q(q), P.pin_v(qd)
    M = pin.crba(P.pm, P.pd, qp).copy()
    M = P.mat(np.triu(M) + np.triu(M, 1).T)
    b = P.vec(pin.nonLinearEffects(P.pm, P.pd, qp, vp).copy())
    pin.computeJointJacobiansTimeVariation(P.pm, P.pd, qp, vp)
    pin.updateFramePlacements(P.pm, P.pd)
    fid = P.frame_id(P.model.tip_frame)
    J = P.jac(pin.getFrameJacobian(P.pm, P.pd, fid, REFERENCES[reference]))
    Jd = P.jac(pin.getFrameJacobianTimeVariation(P.pm, P.pd, fid, REFERENCES[reference]))
    Lam = np.linalg.inv(J @ np.linalg.solve(M, J.T) + damping * np.eye(6))
    eta = Lam @ (J @ np.linalg.solve(M, b) - Jd @ qd)
    return Lam, eta


MAX_COND_J = 300.0


def well_conditioned_states(P, count, seed):
    """Seeded states whose tip body Jacobian (Pinocchio's) has cond(J_b) <= MAX_COND_J.

    Λ = (J M⁻¹ Jᵀ)⁻¹ loses about cond(J M⁻¹ Jᵀ)·ε of relative accuracy in ANY implementation: at
    cond ~ 1e10 (UR10 near a singularity) ours and the reference differ by 1e-7 relative, both right
    to their inputs' rounding. Near-singular states are tested separately, against that bound."""
    Q, QD = [], []
    k = 0
    while len(Q) < count:
        q, qd, _ = (x[0] for x in P.states(1, seed=1000 * seed + k))
        k += 1
        pin.computeJointJacobians(P.pm, P.pd, P.pin_q(q))
        pin.updateFramePlacements(P.pm, P.pd)
        J = pin.getFrameJacobian(P.pm, P.pd, P.frame_id(P.model.tip_frame), pin.LOCAL)
        if np.linalg.cond(J) <= MAX_COND_J:
            Q.append(q)
            QD.append(qd)
    return np.array(Q), np.array(QD)


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("pair", ARMS_6PLUS, indirect=True)
def test_task_space_inertia_and_bias(pair, reference, check):
    Q, QD = well_conditioned_states(pair, N_STATES, seed=23)
    for q, qd in zip(Q, QD):
        Lam, eta = pin_task_space(pair, q, qd, reference)
        check(f"task_space_inertia[{reference}]", pair.name,
              rd.task_space_inertia(pair.model, q, reference=reference), Lam)
        check(f"task_space_bias[{reference}]", pair.name,
              rd.task_space_bias(pair.model, q, qd, reference=reference), eta)


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("pair", ARMS_7, indirect=True)
def test_task_space_with_damping(pair, reference, check):
    """Redundant 7-dof arms with damped least squares: Λ = (J M⁻¹ Jᵀ + λ·1)⁻¹."""
    Q, QD = well_conditioned_states(pair, N_STATES, seed=24)
    for q, qd in zip(Q, QD):
        Lam, eta = pin_task_space(pair, q, qd, reference, damping=0.05)
        check(f"task_space_inertia[{reference}](damping)", pair.name,
              rd.task_space_inertia(pair.model, q, reference=reference, damping=0.05), Lam)
        check(f"task_space_bias[{reference}](damping)", pair.name,
              rd.task_space_bias(pair.model, q, qd, reference=reference, damping=0.05), eta)


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("pair", ["ur10"], indirect=True)
def test_task_space_inertia_near_singularity(pair, reference, check):
    """Near a singularity (cond(J M⁻¹ Jᵀ) ~ 1e10) ours agrees with the reference to the accuracy the
    problem allows: |ΔΛ| <= 100·ε·cond(J M⁻¹ Jᵀ)·|Λ|max. (The wrist-singular UR10 state of seed 23.)"""
    q = pair.states(6, seed=23)[0][4]
    Lam, _ = pin_task_space(pair, q, np.zeros(pair.n), reference)
    cond = np.linalg.cond(np.linalg.inv(Lam))
    assert cond > 1e8, "the chosen state should be near-singular"
    check(f"task_space_inertia[{reference}] near singularity (tol 100·ε·cond)", pair.name,
          rd.task_space_inertia(pair.model, q, reference=reference), Lam,
          tol=100 * np.finfo(float).eps * cond)
