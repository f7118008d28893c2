"""The Coriolis matrix and the Christoffel symbols (eqs. 9.12, 9.13, 9.87, 9.88, Proposition 9.1).

Finite differences are central with step h = 1e-6 (rad or m per unit q̇): truncation ~h²·|M'''|
and rounding ~ε|M|/h ≈ 1e-10 relative, asserted at FD = 1e-6. The rest are exact identities (EXACT)."""
import numpy as np

from robot_dynamics_ros import dynamics as rd

from _residuals import EXACT, FD, assert_close, torque_scale

H = 1e-6


def _mdot_fd(model, q, qd):
    return (rd.mass_matrix(model, q + H * qd) - rd.mass_matrix(model, q - H * qd)) / (2 * H)


def _scale(model, q, qd):
    """Natural size of Ṁ and C: |M| |q̇| (|∂M/∂q| ~ |M| for unit lever arms)."""
    return float(np.abs(rd.mass_matrix(model, q)).max() * np.abs(qd).max())


def test_mdot_equals_c_plus_c_transpose(model, states):
    """Ṁ (central finite difference of CRBA along q̇) = C + Cᵀ."""
    for q, qd, _ in states:
        C = rd.coriolis_matrix(model, q, qd)
        assert_close("Mdot (FD) = C + C^T", C + C.T, _mdot_fd(model, q, qd), FD, floor=_scale(model, q, qd))


def test_mdot_minus_2c_is_skew_symmetric(model, states):
    """N = Ṁ − 2C is skew-symmetric (Proposition 9.1), with Ṁ from mass_matrix_derivatives (exact)
    and from a finite difference of M (independent of the Coriolis code)."""
    for q, qd, _ in states:
        C = rd.coriolis_matrix(model, q, qd)
        scale = _scale(model, q, qd)
        N = rd.mass_matrix_derivatives(model, q) @ qd - 2 * C
        assert_close("Mdot - 2C skew (exact Mdot)", N + N.T, np.zeros_like(N), EXACT, floor=scale)
        N = _mdot_fd(model, q, qd) - 2 * C
        assert_close("Mdot - 2C skew (FD Mdot)", N + N.T, np.zeros_like(N), FD, floor=scale)
        x = np.random.default_rng(0).normal(size=model.nq)
        assert abs(x @ N @ x) <= FD * scale * (x @ x)


def test_coriolis_matrix_times_velocity_is_coriolis_forces(model, states):
    """C(q, q̇) q̇ = c(q, q̇) (RNEA with q̈ = 0, no gravity) (eq. 9.88)."""
    for q, qd, _ in states:
        M = rd.mass_matrix(model, q)
        assert_close("C qd = c", rd.coriolis_matrix(model, q, qd) @ qd, rd.coriolis_forces(model, q, qd), EXACT,
                     floor=torque_scale(M, qd))


def test_coriolis_matrix_from_christoffel_symbols(model, states):
    """C_ij = Σ_k Γ_ijk q̇_k (eq. 9.87) and c_i = Σ_jk Γ_ijk q̇_j q̇_k (eq. 9.12, against RNEA)."""
    for q, qd, _ in states:
        Gamma = rd.christoffel_symbols(model, q)
        assert Gamma.shape == (model.nq,) * 3
        floor = _scale(model, q, qd)
        assert_close("C_ij = sum_k Gamma_ijk qd_k", rd.coriolis_matrix(model, q, qd), Gamma @ qd, EXACT, floor=floor)
        assert_close("c_i = sum_jk Gamma_ijk qd_j qd_k", np.einsum("ijk,j,k->i", Gamma, qd, qd),
                     rd.coriolis_forces(model, q, qd), EXACT, floor=torque_scale(rd.mass_matrix(model, q), qd))


def test_christoffel_symbols_are_symmetric_in_last_two_indices(model, states):
    for q, _, _ in states:
        Gamma = rd.christoffel_symbols(model, q)
        assert_close("Gamma_ijk = Gamma_ikj", Gamma, np.transpose(Gamma, (0, 2, 1)), EXACT,
                     floor=np.abs(rd.mass_matrix(model, q)).max())


def test_christoffel_symbols_from_finite_differences_of_M(model, states):
    """Γ_ijk = ½(∂m_ij/∂q_k + ∂m_ik/∂q_j − ∂m_jk/∂q_i) (eq. 9.13) with ∂M/∂q by finite differences."""
    n = model.nq
    for q, _, _ in states:
        dM = np.stack([(rd.mass_matrix(model, q + H * e) - rd.mass_matrix(model, q - H * e)) / (2 * H)
                       for e in np.eye(n)], axis=2)
        Gamma = 0.5 * (dM + np.transpose(dM, (0, 2, 1)) - np.transpose(dM, (2, 0, 1)))
        assert_close("Gamma vs eq. 9.13 of FD dM/dq", rd.christoffel_symbols(model, q), Gamma, FD,
                     floor=np.abs(rd.mass_matrix(model, q)).max())


def test_mass_matrix_derivatives_equal_finite_differences(model, states):
    """mass_matrix_derivatives(q)[:, :, k] = ∂M/∂q_k (central difference of CRBA)."""
    n = model.nq
    for q, _, _ in states:
        dM = rd.mass_matrix_derivatives(model, q)
        assert dM.shape == (n, n, n)
        floor = np.abs(rd.mass_matrix(model, q)).max()
        for k, e in enumerate(np.eye(n)):
            fd = (rd.mass_matrix(model, q + H * e) - rd.mass_matrix(model, q - H * e)) / (2 * H)
            assert_close("dM/dq_k vs FD", dM[:, :, k], fd, FD, floor=floor)


def test_coriolis_matrix_is_linear_in_velocity(case, states):
    _, model, rng = case
    for q, qd, _ in states:
        qd2, a, b = rng.normal(size=model.nq), rng.normal(), rng.normal()
        lhs = rd.coriolis_matrix(model, q, a * qd + b * qd2)
        rhs = a * rd.coriolis_matrix(model, q, qd) + b * rd.coriolis_matrix(model, q, qd2)
        assert_close("C linear in qd", lhs, rhs, EXACT, floor=_scale(model, q, np.abs(a * qd) + np.abs(b * qd2)))
