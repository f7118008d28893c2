"""The joint-torque regressor on models Pinocchio is not compared on here: random trees with prismatic,
continuous, fixed and merged links, and mimic joints (rows = coordinates); Y π = τ; bad input.
(Against Pinocchio: test/reference/test_ref_pinocchio_regressor.py.)"""
import numpy as np
import pytest
from test_mimic import ROBOTS as MIMIC_ROBOTS, _urdf

from robot_dynamics_ros import dynamics as rd

from _random_trees import random_tree


@pytest.mark.parametrize("seed", range(6))
def test_regressor_times_parameters_is_inverse_dynamics_on_random_trees(seed):
    model = rd.load_urdf(random_tree(400 + seed, 7).to_urdf())
    rng = np.random.default_rng(seed)
    pi = rd.inertial_parameters(model)
    assert pi.shape == (10 * model.n_bodies,)
    for _ in range(4):
        q, qd, qdd = rng.uniform(-1, 1, (3, model.nq))
        Y = rd.joint_torque_regressor(model, q, qd, qdd)
        assert Y.shape == (model.nq, 10 * model.n_bodies)
        tau = rd.inverse_dynamics(model, q, qd, qdd)
        np.testing.assert_allclose(Y @ pi, tau, rtol=0, atol=1e-12 * max(1.0, np.abs(tau).max()))


@pytest.mark.parametrize("name", sorted(MIMIC_ROBOTS))
def test_with_mimic_joints_the_rows_are_the_coordinates(name):
    joints, seed = MIMIC_ROBOTS[name]
    model = rd.load_urdf(_urdf(joints, seed))
    assert model.n_bodies > model.nq
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-0.01, 0.03, (3, model.nq))
    Y = rd.joint_torque_regressor(model, q, qd, qdd)
    assert Y.shape == (model.nq, 10 * model.n_bodies)
    np.testing.assert_allclose(Y @ rd.inertial_parameters(model), rd.inverse_dynamics(model, q, qd, qdd),
                               rtol=0, atol=1e-12)


def test_the_regressor_is_linear_in_the_acceleration_and_gravity_is_its_qdd_zero_part():
    model = rd.load_urdf(random_tree(7, 6).to_urdf())
    rng = np.random.default_rng(1)
    q, qdd = rng.uniform(-1, 1, (2, model.nq))
    zero = np.zeros(model.nq)
    pi = rd.inertial_parameters(model)
    np.testing.assert_allclose(rd.joint_torque_regressor(model, q, zero, zero) @ pi,
                               rd.gravity_torques(model, q), atol=1e-12)
    Y_acc = rd.joint_torque_regressor(model, q, zero, qdd) - rd.joint_torque_regressor(model, q, zero, zero)
    np.testing.assert_allclose(Y_acc @ pi, rd.mass_matrix(model, q) @ qdd, atol=1e-12)


def test_bad_input_is_refused_naming_it():
    model = rd.load_urdf(random_tree(3, 4).to_urdf())
    good = np.zeros(model.nq)
    for name in ("q", "qd", "qdd"):
        args = dict(q=good, qd=good, qdd=good)
        args[name] = np.zeros(model.nq + 1)
        with pytest.raises(ValueError, match=name):
            rd.joint_torque_regressor(model, **args)
        args[name] = np.full(model.nq, np.nan)
        with pytest.raises(ValueError, match=name):
            rd.joint_torque_regressor(model, **args)
