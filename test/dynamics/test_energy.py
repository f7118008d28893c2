"""Energy: g = ∂P/∂q, the power balance d/dt(K + P) = q̇ᵀ(τ − τ_friction − J_bᵀ F_tip), conservation
in a passive RK4 simulation and strict dissipation with friction."""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

from _random_trees import random_state, random_tree
from _residuals import FD, assert_close, measure

H = 1e-6


def energy(model, q, qd):
    return rd.kinetic_energy(model, q, qd) + rd.potential_energy(model, q)


def energies(model, q, qd):
    """K + P along a trajectory (K = ½ q̇ᵀ M q̇ with M from the batched CRBA)."""
    M = rd.mass_matrix_trajectory(model, q)
    K = 0.5 * np.einsum("ti,tij,tj->t", qd, M, qd)
    return K, np.array([rd.potential_energy(model, x) for x in q])


def test_gravity_torques_are_gradient_of_potential_energy(model, states):
    """g(q) = ∂P/∂q (eq. 9.12), P = −Σ m_i gᵀ p_ci, by central differences (FD tolerance)."""
    for q, _, _ in states:
        grad = np.array([(rd.potential_energy(model, q + H * e)
                          - rd.potential_energy(model, q - H * e)) / (2 * H)
                         for e in np.eye(model.nq)])
        g = rd.gravity_torques(model, q)
        # floor: |g| ~ total mass · |gravity| · lever arm (0.3 m), for joints whose g vanishes
        assert_close("g = dP/dq (FD)", g, grad, FD, floor=np.sum(model.mass) * 9.81 * 0.3)


def test_potential_energy_is_zero_without_gravity(model, states):
    model0 = model.replace(gravity=(0.0, 0.0, 0.0))
    for q, _, _ in states:
        assert rd.potential_energy(model0, q) == 0.0
        assert np.all(rd.gravity_torques(model0, q) == 0.0)


def test_power_balance(case, states):
    """dE/dt = q̇ᵀ(τ − F_v q̇ − F_s sgn q̇ − J_bᵀ F_tip) along the motion q̈ = FD(q, q̇, τ, ...).

    dE/dt = ∂E/∂q · q̇ + ∂K/∂q̇ · q̈, each a central difference of kinetic_energy (eq. 9.59, body
    Jacobians) and potential_energy: independent of M, c and the Coriolis code."""
    _, model, rng = case
    for q, qd, _ in states:
        tau = rng.normal(size=model.nq) * 5.0
        frame = model.frame_names[rng.integers(len(model.frame_names))]
        F = rng.normal(size=6) * 5.0
        fv, fs = rng.uniform(0, 1, model.nq), rng.uniform(0, 0.5, model.nq)
        qdd = rd.forward_dynamics(model, q, qd, tau, f_tip=F, frame=frame, friction=(fv, fs))
        dE = ((energy(model, q + H * qd, qd) - energy(model, q - H * qd, qd))
              + (rd.kinetic_energy(model, q, qd + H * qdd)
                 - rd.kinetic_energy(model, q, qd - H * qdd))) / (2 * H)
        Jb = rd.jacobian(model, q, frame, reference="body")
        power = qd @ (tau - fv * qd - fs * np.sign(qd) - Jb.T @ F)
        # scale: the largest single power term, |q̇|·|τ|
        assert_close("power balance dE/dt = qd^T tau_net (FD)", dE, power, FD,
                     floor=np.abs(qd).max() * max(np.abs(tau).max(),
                                                  np.abs(rd.bias_forces(model, q, qd)).max()))


def test_power_balance_along_simulated_trajectory():
    """E(T) − E(0) = ∫ q̇ᵀ(τ − F_v q̇) dt over an RK4 simulation (0.2 s, dt = 1 ms, constant τ, viscous
    friction), the integral by Simpson's rule on the samples. Measured residual 8e-10 relative to
    the energy exchanged; asserted ≤ 1e-7 (integration and quadrature errors ~dt⁴)."""
    tree = random_tree(5, 5)
    model = rd.load_urdf(tree.to_urdf())
    rng = np.random.default_rng(5)
    q0, qd0, _ = random_state(model, rng)
    tau = rng.normal(size=model.nq) * 3.0
    fv = rng.uniform(0.1, 1.0, model.nq)
    dt, steps = 1e-3, 200
    q, qd = rd.simulate(model, q0, qd0, tau, dt, steps, friction=(fv, np.zeros(model.nq)))
    K, P = energies(model, q, qd)
    p = qd @ tau - np.sum(fv * qd * qd, axis=1)
    work = dt / 3 * (p[0] + p[-1] + 4 * p[1:-1:2].sum() + 2 * p[2:-1:2].sum())
    assert_close("E(T) - E(0) = integral of power (RK4 + Simpson)", (K + P)[-1] - (K + P)[0], work, 1e-7,
                 scale=np.abs(np.cumsum(np.abs(p)) * dt).max())


# parents [-1, 0, 1, 2, 0, 4]: a branching tree
ENERGY_TREE = dict(seed=1, n=6, types=("revolute", "continuous"))


def _passive(friction):
    tree = random_tree(ENERGY_TREE["seed"], ENERGY_TREE["n"], types=ENERGY_TREE["types"])
    model = rd.load_urdf(tree.to_urdf())
    q0, qd0, _ = random_state(model, np.random.default_rng(1))
    q, qd = rd.simulate(model, q0, qd0, np.zeros(model.nq), 1e-3, 2000, method="rk4",
                        friction=friction(model) if callable(friction) else friction)
    return model, q, qd


def test_passive_rk4_simulation_conserves_energy():
    """6-joint branching tree, no torque, no friction, RK4, 2 s at dt = 1 ms (peak |q̇| ≈ 6.8 rad/s).
    Measured max |E(t) − E(0)| / max K = 9.7e-12; asserted < 1e-9."""
    model, q, qd = _passive(None)
    assert np.all(model.parent[:2] == [-1, 0]) and len(set(model.parent)) < model.nq   # branches
    K, P = energies(model, q, qd)
    drift = measure("passive RK4 energy drift |dE|/Kmax (2 s, 1 ms)",
                    np.abs((K + P) - (K[0] + P[0])).max() / K.max())
    assert drift < 1e-9, f"relative energy drift {drift:.2e}"


@pytest.mark.parametrize("friction", [
    pytest.param(True, id="urdf"),   # the model's read-only coefficient arrays (refused before d31ada9)
    pytest.param(lambda m: (m.damping, m.friction), id="urdf-explicit"),
    pytest.param((0.2, 0.05), id="scalars"),
])
def test_friction_dissipates_energy_strictly(friction):
    """Same tree and start with friction: E decreases at every step (measured largest step change
    −2.1e-4 J, while |q̇| stays ≥ 0.5 rad/s, so dE/dt = −q̇ᵀ(F_v q̇ + F_s sgn q̇) < 0 throughout)."""
    model, q, qd = _passive(friction)
    K, P = energies(model, q, qd)
    steps = np.diff(K + P)
    measure("friction: largest energy change per step (J, must be < 0)", steps.max())
    assert np.all(steps < 0), f"energy increased at steps {np.flatnonzero(steps >= 0)[:5]}"
