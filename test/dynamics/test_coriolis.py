"""The Coriolis matrix, ∂M/∂q and the Christoffel symbols (eqs. 9.12, 9.13, 9.87, 9.88, Proposition 9.1).

mass_matrix_derivatives is computed from the Coriolis code (∂M/∂q_k = C(q, e_k) + C(q, e_k)ᵀ) and
christoffel_symbols from mass_matrix_derivatives, so identities among these three functions alone
prove little (Ṁ − 2C with that Ṁ is skew for ANY matrix C; Γ_ijk = Γ_ikj holds because
christoffel_symbols symmetrises). Every assertion here has independent code on the other side: the
CRBA (mass_matrix) by central differences, step h = 1e-6 (truncation ~h²·|M'''|, rounding
~ε|M|/h ≈ 1e-10 relative; asserted at FD = 1e-6), or the RNEA (coriolis_forces; exact, EXACT)."""
import numpy as np

from robot_dynamics_ros import dynamics as rd

from _residuals import EXACT, FD, assert_close, torque_scale

H = 1e-6


def _mdot_fd(model, q, qd):
    """Ṁ = dM/dt along q̇: central difference of the CRBA."""
    return (rd.mass_matrix(model, q + H * qd) - rd.mass_matrix(model, q - H * qd)) / (2 * H)


def _dM_fd(model, q):
    """dM[i, j, k] = ∂m_ij/∂q_k: central differences of the CRBA along each e_k."""
    return np.stack([(rd.mass_matrix(model, q + H * e) - rd.mass_matrix(model, q - H * e)) / (2 * H)
                     for e in np.eye(model.nq)], axis=2)


def _christoffel_from(dM):
    """Eq. 9.13: Γ_ijk = ½(∂m_ij/∂q_k + ∂m_ik/∂q_j − ∂m_jk/∂q_i), dM[i, j, k] = ∂m_ij/∂q_k."""
    return 0.5 * (dM + np.transpose(dM, (0, 2, 1)) - np.transpose(dM, (2, 0, 1)))


def _scale(model, q, qd):
    """Natural size of Ṁ and C: |M| |q̇| (|∂M/∂q| ~ |M| for unit lever arms)."""
    return float(np.abs(rd.mass_matrix(model, q)).max() * np.abs(qd).max())


def test_mdot_equals_c_plus_c_transpose(model, states):
    """Ṁ (central finite difference of CRBA along q̇) = C + Cᵀ."""
    for q, qd, _ in states:
        C = rd.coriolis_matrix(model, q, qd)
        assert_close("Mdot (FD) = C + C^T", C + C.T, _mdot_fd(model, q, qd), FD, floor=_scale(model, q, qd))


def test_mdot_minus_2c_is_skew_symmetric(model, states):
    """N = Ṁ − 2C is skew-symmetric (Proposition 9.1): N + Nᵀ = 0 and xᵀ N x = 0, with Ṁ a finite
    difference of the CRBA (independent of the Coriolis code; Ṁ from mass_matrix_derivatives would
    make N skew for any C)."""
    rng = np.random.default_rng(0)
    for q, qd, _ in states:
        scale = _scale(model, q, qd)
        N = _mdot_fd(model, q, qd) - 2 * rd.coriolis_matrix(model, q, qd)
        assert_close("Mdot - 2C skew (FD Mdot)", N + N.T, np.zeros_like(N), FD, floor=scale)
        x = rng.normal(size=model.nq)
        assert abs(x @ N @ x) <= FD * scale * (x @ x)


def test_coriolis_matrix_times_velocity_is_coriolis_forces(model, states):
    """C(q, q̇) q̇ = c(q, q̇) (RNEA with q̈ = 0, no gravity) (eq. 9.88)."""
    for q, qd, _ in states:
        M = rd.mass_matrix(model, q)
        assert_close("C qd = c", rd.coriolis_matrix(model, q, qd) @ qd, rd.coriolis_forces(model, q, qd),
                     EXACT, floor=torque_scale(M, qd))


def test_coriolis_matrix_from_christoffel_symbols(model, states):
    """C_ij = Σ_k Γ_ijk q̇_k (eq. 9.87) with Γ from eq. 9.13 on finite differences of the CRBA (and,
    exactly, with christoffel_symbols); c_i = Σ_jk Γ_ijk q̇_j q̇_k (eq. 9.12) against the RNEA."""
    for q, qd, _ in states:
        Gamma = rd.christoffel_symbols(model, q)
        assert Gamma.shape == (model.nq,) * 3
        floor = _scale(model, q, qd)
        C = rd.coriolis_matrix(model, q, qd)
        assert_close("C_ij = sum_k Gamma_ijk qd_k (Gamma from FD of CRBA)", C,
                     _christoffel_from(_dM_fd(model, q)) @ qd, FD, floor=floor)
        assert_close("C_ij = sum_k Gamma_ijk qd_k", C, Gamma @ qd, EXACT, floor=floor)
        assert_close("c_i = sum_jk Gamma_ijk qd_j qd_k", np.einsum("ijk,j,k->i", Gamma, qd, qd),
                     rd.coriolis_forces(model, q, qd), EXACT,
                     floor=torque_scale(rd.mass_matrix(model, q), qd))


def test_christoffel_symbols_by_polarisation_of_coriolis_forces(model, states):
    """c(q, q̇) = Σ_jk Γ_ijk q̇_j q̇_k is a quadratic form in q̇ whose symmetric coefficients are Γ_i··:
    Γ_ijj = c_i(q, e_j), Γ_ijk = Γ_ikj = ½(c_i(q, e_j + e_k) − c_i(q, e_j) − c_i(q, e_k)). The RNEA
    thus gives every Γ_ijk, so this also checks the symmetry Γ_ijk = Γ_ikj independently."""
    n = model.nq
    E = np.eye(n)
    for q, _, _ in states:
        diag = np.array([rd.coriolis_forces(model, q, e) for e in E])          # diag[j] = Γ_·jj
        Gamma = np.empty((n, n, n))
        for j in range(n):
            for k in range(n):
                Gamma[:, j, k] = 0.5 * (rd.coriolis_forces(model, q, E[j] + E[k]) - diag[j] - diag[k])
            Gamma[:, j, j] = diag[j]
        assert_close("Gamma by polarisation of RNEA c(q, .)", rd.christoffel_symbols(model, q), Gamma, EXACT,
                     floor=np.abs(rd.mass_matrix(model, q)).max())


def test_christoffel_symbols_from_finite_differences_of_M(model, states):
    """Γ_ijk = ½(∂m_ij/∂q_k + ∂m_ik/∂q_j − ∂m_jk/∂q_i) (eq. 9.13) with ∂M/∂q by finite differences."""
    for q, _, _ in states:
        assert_close("Gamma vs eq. 9.13 of FD dM/dq", rd.christoffel_symbols(model, q),
                     _christoffel_from(_dM_fd(model, q)), FD, floor=np.abs(rd.mass_matrix(model, q)).max())


def test_mass_matrix_derivatives_equal_finite_differences(model, states):
    """mass_matrix_derivatives(q)[:, :, k] = ∂M/∂q_k (central difference of CRBA)."""
    n = model.nq
    for q, _, _ in states:
        dM = rd.mass_matrix_derivatives(model, q)
        assert dM.shape == (n, n, n)
        floor = np.abs(rd.mass_matrix(model, q)).max()
        fd = _dM_fd(model, q)
        for k in range(n):
            assert_close("dM/dq_k vs FD", dM[:, :, k], fd[:, :, k], FD, floor=floor)


def test_coriolis_matrix_is_linear_in_velocity(case, states):
    _, model, rng = case
    for q, qd, _ in states:
        qd2, a, b = rng.normal(size=model.nq), rng.normal(), rng.normal()
        lhs = rd.coriolis_matrix(model, q, a * qd + b * qd2)
        rhs = a * rd.coriolis_matrix(model, q, qd) + b * rd.coriolis_matrix(model, q, qd2)
        assert_close("C linear in qd", lhs, rhs, EXACT,
                     floor=_scale(model, q, np.abs(a * qd) + np.abs(b * qd2)))
