"""M(q): symmetric positive definite, and the same from three more routes (eq. 9.61, RNEA columns,
the closed form 9.82); K = ½ q̇ᵀ M q̇. Exact identities: relative residual ≤ EXACT (rounding only)."""
import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.inertia import spatial_inertia
from robot_dynamics_ros.dynamics.jacobians import body_jacobians

from _residuals import EXACT, assert_close, torque_scale


def test_mass_matrix_is_symmetric_positive_definite(model, states):
    """Symmetry is asserted on M built column by column from the RNEA (τ(q, 0, e_i) − g): the CRBA
    writes M_ik and M_ki from one number, so its own M − Mᵀ is zero by construction."""
    n = model.nq
    for q, _, _ in states:
        M = rd.mass_matrix(model, q)
        assert M.shape == (n, n)
        g = rd.gravity_torques(model, q)
        cols = np.column_stack([rd.inverse_dynamics(model, q, np.zeros(n), e) - g for e in np.eye(n)])
        assert_close("M (RNEA columns) - M^T", cols, cols.T, EXACT, floor=np.abs(M).max())
        eig = np.linalg.eigvalsh(M)
        assert eig[0] > 1e-8 * eig[-1], f"M not positive definite: eigenvalues {eig}"
        np.linalg.cholesky(M)


def test_mass_matrix_equals_sum_of_body_jacobian_terms(model, states):
    """CRBA == Σ_i J_ibᵀ G_i J_ib (eq. 9.61)."""
    for q, _, _ in states:
        assert_close("CRBA vs eq. 9.61 (Jacobians)", rd.mass_matrix(model, q),
                     rd.mass_matrix_via_jacobians(model, q), EXACT)


def test_mass_matrix_columns_from_inverse_dynamics(model, states):
    """Column i of M = τ(q, 0, e_i) − g(q) (the unit-acceleration test of RNEA)."""
    n = model.nq
    for q, _, _ in states:
        g = rd.gravity_torques(model, q)
        cols = np.column_stack([rd.inverse_dynamics(model, q, np.zeros(n), e) - g for e in np.eye(n)])
        assert_close("CRBA vs RNEA columns", rd.mass_matrix(model, q), cols, EXACT)


def test_closed_form_matches_recursive(model, states):
    """closed_form_dynamics (eqs. 9.76–9.84, stacked matrices) == CRBA, RNEA c and g."""
    for q, qd, _ in states:
        cf = rd.closed_form_dynamics(model, q, qd)
        assert_close("closed form M vs CRBA", cf.M, rd.mass_matrix(model, q), EXACT)
        assert_close("closed form c vs RNEA", cf.c, rd.coriolis_forces(model, q, qd), EXACT,
                     floor=torque_scale(cf.M, qd))
        assert_close("closed form g vs RNEA", cf.g, rd.gravity_torques(model, q), EXACT)


def test_kinetic_energy_is_half_qd_M_qd(model, states):
    """K = ½ q̇ᵀ M q̇ (eq. 9.10, M by CRBA) == ½ Σ_i V_iᵀ G_i V_i (eq. 9.59), V_i = J_ib q̇ the twist of
    link frame {i} in {i}."""
    for q, qd, _ in states:
        K = rd.kinetic_energy(model, q, qd)
        assert K > 0
        assert_close("kinetic energy vs 1/2 qd^T M qd", K, 0.5 * qd @ rd.mass_matrix(model, q) @ qd, EXACT)
        K_links = sum(0.5 * (J @ qd) @ spatial_inertia(model.mass[i], model.com[i], model.inertia_com[i])
                      @ (J @ qd) for i, J in enumerate(body_jacobians(model, q)))
        assert_close("kinetic energy vs 1/2 sum V_i^T G_i V_i", K, K_links, EXACT)


def test_mass_matrix_trajectory_matches_single_calls(model, states):
    Q = np.array([q for q, _, _ in states])
    Ms = rd.mass_matrix_trajectory(model, Q)
    assert Ms.shape == (len(Q), model.nq, model.nq)
    for q, M in zip(Q, Ms):
        assert_close("mass_matrix_trajectory vs mass_matrix", M, rd.mass_matrix(model, q), EXACT)
