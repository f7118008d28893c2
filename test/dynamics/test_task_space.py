"""Task-space dynamics F = Λ V̇ + η (eqs. 9.97–9.99) on random 6-joint chains (square J) and a
redundant 7-joint chain; exact identities, relative residual ≤ 1e-9 (rounding amplified by cond(J)²,
J's condition number is checked ≤ 1e3 first)."""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

from _random_trees import random_state, random_tree
from _residuals import assert_close

TOL = 1e-9
REFERENCES = ["space", "body", "world_aligned"]
SQUARE = [(300 + k, 6) for k in range(3)]
CHAINS = SQUARE + [(310, 7)]                      # plus one redundant arm


def _ids(cases):
    return [f"chain-seed{s}-n{n}" for s, n in cases]


@pytest.fixture(params=CHAINS, ids=_ids(CHAINS))
def chain(request):
    return _chain(*request.param)


@pytest.fixture(params=SQUARE, ids=_ids(SQUARE))
def square_chain(request):
    return _chain(*request.param)


def _chain(seed, n):
    model = rd.load_urdf(random_tree(seed, n, chain=True).to_urdf())
    # documented default: the last moved link
    assert model.is_chain and model.tip_frame == model.link_names[-1]
    rng = np.random.default_rng(seed)
    states = []
    while len(states) < 3:
        q, qd, qdd = random_state(model, rng)
        if np.linalg.cond(rd.jacobian(model, q, "tool0")) < 1e3:
            states.append((q, qd, qdd))
    return model, states, rng


@pytest.mark.parametrize("reference", REFERENCES)
def test_task_space_inertia_inverse_is_J_Minv_JT(chain, reference):
    model, states, _ = chain
    for q, _, _ in states:
        Lam = rd.task_space_inertia(model, q, "tool0", reference)
        J = rd.jacobian(model, q, "tool0", reference)
        M = rd.mass_matrix(model, q)
        Linv = J @ np.linalg.solve(M, J.T)
        assert_close("Lambda^-1 = J M^-1 J^T", np.linalg.inv(Lam), Linv, TOL)
        assert_close("Lambda symmetric", Lam, Lam.T, TOL)
        if model.nq == 6:
            Jinv = np.linalg.inv(J)
            assert_close("Lambda = J^-T M J^-1 (square J)", Lam, Jinv.T @ M @ Jinv, TOL)


@pytest.mark.parametrize("reference", REFERENCES)
def test_task_space_bias_consistency_square(square_chain, reference):
    """For random q̈: V̇ = J q̈ + J̇ q̇, τ = ID(q̈) ⇒ J⁻ᵀ τ = Λ V̇ + η (square J)."""
    model, states, _ = square_chain
    for q, qd, qdd in states:
        J = rd.jacobian(model, q, "tool0", reference)
        Vdot = J @ qdd + rd.jacobian_derivative(model, q, qd, "tool0", reference) @ qd
        tau = rd.inverse_dynamics(model, q, qd, qdd)
        F = np.linalg.solve(J.T, tau)
        assert_close("J^-T tau = Lambda Vdot + eta",
                     rd.task_space_inertia(model, q, "tool0", reference) @ Vdot
                     + rd.task_space_bias(model, q, qd, "tool0", reference), F, TOL)


@pytest.mark.parametrize("reference", REFERENCES)
def test_task_space_bias_consistency_for_wrench_driven_motion(chain, reference):
    """For any wrench F: τ = Jᵀ F, q̈ = FD(τ), V̇ = J q̈ + J̇ q̇ ⇒ F = Λ V̇ + η (square and redundant)."""
    model, states, rng = chain
    for q, qd, _ in states:
        F = rng.normal(size=6) * 5.0
        J = rd.jacobian(model, q, "tool0", reference)
        qdd = rd.forward_dynamics(model, q, qd, J.T @ F)
        Vdot = J @ qdd + rd.jacobian_derivative(model, q, qd, "tool0", reference) @ qd
        assert_close("F = Lambda Vdot + eta (tau = J^T F)",
                     rd.task_space_inertia(model, q, "tool0", reference) @ Vdot
                     + rd.task_space_bias(model, q, qd, "tool0", reference), F, TOL)


def test_fewer_than_six_joints_need_damping():
    model = rd.load_urdf(random_tree(320, 3, chain=True).to_urdf())
    q, qd, _ = random_state(model, np.random.default_rng(0))
    with pytest.raises(ValueError, match="damping"):
        rd.task_space_inertia(model, q)
    lam = 1e-3
    J = rd.jacobian(model, q, model.tip_frame)
    expected = np.linalg.inv(J @ np.linalg.solve(rd.mass_matrix(model, q), J.T) + lam * np.eye(6))
    assert_close("damped Lambda = (J M^-1 J^T + lambda 1)^-1", rd.task_space_inertia(model, q, damping=lam),
                 expected, TOL)
