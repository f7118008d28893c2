"""Armature (rotor inertia reflected through the gearbox) against Pinocchio's model.armature.

Pinocchio adds model.armature to the mass matrix's diagonal in every algorithm (rnea, crba, aba,
the derivatives and the kinetic energy). Our Model.armature must give the same numbers, to the
reference tolerance, on every robot pair of conftest.ROBOTS at seeded random states.
"""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

pin = pytest.importorskip("pinocchio")

TOL = 1e-12


def _with_armature(P, seed=3):
    """(our model, Pinocchio model and data) with the same random armature per joint (0.05-2 kg m^2)."""
    rng = np.random.default_rng([seed, sum(map(ord, P.name))])
    armature = rng.uniform(0.05, 2.0, P.n)
    model = rd.with_armature(P.model, armature)
    pm = P.pm.copy()
    values = np.zeros(pm.nv)
    values[P.perm] = armature
    pm.armature = values
    return model, pm, pm.createData(), armature


def test_armature_is_pinocchios(pair, check):
    model, pm, pd, armature = _with_armature(pair)
    assert np.array_equal(model.armature, armature)
    q, qd, qdd = pair.states(6)
    for k in range(len(q)):
        pq, pv, pa = pair.pin_q(q[k]), pair.pin_v(qd[k]), pair.pin_v(qdd[k])
        M = pin.crba(pm, pd, pq).copy()
        check("armature M", pair.name, rd.mass_matrix(model, q[k]), pair.mat(np.triu(M) + np.triu(M, 1).T),
              TOL)
        tau = pair.vec(pin.rnea(pm, pd, pq, pv, pa))
        check("armature rnea", pair.name, rd.inverse_dynamics(model, q[k], qd[k], qdd[k]), tau, TOL)
        if not model.mimic:
            check("armature aba", pair.name, rd.forward_dynamics(model, q[k], qd[k], rd.inverse_dynamics(
                model, q[k], qd[k], qdd[k])), qdd[k], 1e-10)
            check("armature aba", pair.name, rd.forward_dynamics(model, q[k], qd[k], tau),
                  pair.vec(pin.aba(pm, pd, pq, pv, pair.pin_v(tau))), 1e-10)
        check("armature M via jacobians", pair.name, rd.mass_matrix_via_jacobians(model, q[k]),
              rd.mass_matrix(model, q[k]), TOL)
        pin.computeRNEADerivatives(pm, pd, pq, pv, pa)
        dq, dv = rd.inverse_dynamics_derivatives(model, q[k], qd[k], qdd[k])
        check("armature dtau/dq", pair.name, dq, pair.mat(pd.dtau_dq), 1e-10)
        check("armature dtau/dqd", pair.name, dv, pair.mat(pd.dtau_dv), 1e-10)
        M_ddq = pd.M.copy()                                  # ∂τ/∂q̈ = M + diag(armature), upper triangle
        check("armature dtau/dqdd = M + diag", pair.name, rd.mass_matrix(model, q[k]),
              pair.mat(np.triu(M_ddq) + np.triu(M_ddq, 1).T), TOL)
        if not model.mimic:
            pin.computeABADerivatives(pm, pd, pq, pv, pair.pin_v(tau))
            dqdd_dq, dqdd_dqd, Minv = rd.forward_dynamics_derivatives(model, q[k], qd[k], tau)
            check("armature dqdd/dq", pair.name, dqdd_dq, pair.mat(pd.ddq_dq), 1e-9)
            check("armature dqdd/dtau", pair.name, Minv, pair.mat(pd.Minv), 1e-9)
        energy = pin.computeKineticEnergy(pm, pd, pq, pv)
        ours = rd.kinetic_energy(model, q[k], qd[k])
        check("armature kinetic energy", pair.name, np.array([ours]), np.array([energy]), 1e-10)


def test_armature_moves_a_joint_that_carries_no_mass():
    """A joint whose links are massless has M singular without armature (refused), and the rotor's
    inertia alone with armature: D_i = a_i in the ABA's pivot, and q̈ = τ / a on that joint."""
    urdf = """<robot name="r">
      <link name="base"/>
      <link name="l1"/>
      <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
        <limit lower="-3" upper="3" effort="10" velocity="2"/></joint>
    </robot>"""
    with pytest.raises(ValueError, match="j1"):
        rd.load_urdf(urdf)
    model = rd.load_urdf(urdf, armature=[0.25])
    assert np.allclose(rd.forward_dynamics(model, [0.3], [0.0], [1.0]), [4.0])
    assert np.allclose(rd.mass_matrix(model, [0.3]), [[0.25]])


def test_armature_argument_checks(pairs):
    model = pairs("ur5").model
    with pytest.raises(ValueError, match="armature"):
        rd.with_armature(model, [1.0, 2.0])
    with pytest.raises(ValueError, match="armature"):
        rd.with_armature(model, [-1.0] + [0.0] * 5)
    with pytest.raises(ValueError, match="armature"):
        rd.with_armature(model, [np.nan] + [0.0] * 5)
    named = rd.with_armature(model, {model.joint_names[2]: 0.5})
    assert named.armature[2] == 0.5 and not named.armature[[0, 1, 3, 4, 5]].any()
    with pytest.raises(ValueError, match="unknown joint"):
        rd.with_armature(model, {"nope": 0.5})
