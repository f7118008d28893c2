"""Whole-robot identification (identify_robot, base_parameters) on simulated plants whose truth is known.

The "real arm" is the shipped urdf/ur5e_real_arm.urdf and config/ur5e_real_arm.yaml: the UR5e with every
link's mass, centre of mass and inertia changed (by up to 30 %, a few cm), viscous and Coulomb friction,
armature and torque offsets; its torques come from our inverse dynamics, which the reference tests hold
equal to Pinocchio's. The recordings follow a sum of sines.
"""
import os
import sysconfig

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import bringup, resources
from robot_dynamics_ros.dynamics.base_parameters import full_regressor, random_states
from robot_dynamics_ros.dynamics.consistency import pseudo_inertia

ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                      "robots")
REAL_URDF = resources.urdf_file("ur5e_real_arm.urdf")
REAL_PARAMETERS = resources.config_file("ur5e_real_arm.yaml")
Q0 = np.array([0.0, -1.2, 1.5, -1.0, -1.57, 0.0])


def real_arm():
    """(model, effort offsets) of the shipped "real arm" (tools/make_real_arm.py): urdf/ur5e_real_arm.urdf
    with the armature and offsets of config/ur5e_real_arm.yaml."""
    parameters = bringup.config_parameters(REAL_PARAMETERS)["/**"]
    return (rd.load_urdf(REAL_URDF, armature=parameters["armature"]),
            np.array(parameters["effort_offset"], dtype=float))


def sines(duration, rate, seed, q0=Q0):
    """(t, q, q̇, q̈): five harmonics per joint around q0, exact derivatives."""
    rng = np.random.default_rng(seed)
    n = q0.size
    t = np.arange(0.0, duration, 1.0 / rate)
    w = 2 * np.pi * 0.1
    q, qd, qdd = np.tile(q0, (t.size, 1)), np.zeros((t.size, n)), np.zeros((t.size, n))
    for harmonic in range(1, 6):
        a, b = rng.normal(size=n) * 0.5 / harmonic, rng.normal(size=n) * 0.5 / harmonic
        s, c, lw = np.sin(harmonic * w * t)[:, None], np.cos(harmonic * w * t)[:, None], harmonic * w
        q += a * s + b * c
        qd += lw * (a * c - b * s)
        qdd -= lw * lw * (a * s + b * c)
    return t, q, qd, qdd


@pytest.fixture(scope="module")
def plant():
    stock = rd.load_urdf(resources.default_urdf())
    arm, offset = real_arm()
    held_out = sines(8.0, 200, seed=4)
    tau_held_out = rd.inverse_dynamics_trajectory(arm, *held_out[1:], friction=True) + offset
    return stock, arm, offset, held_out, tau_held_out


def rms(x):
    return np.sqrt(np.mean(x ** 2, axis=0))


def assert_consistent(model):
    """Every body a physical one: pseudo-inertia positive semi-definite; friction and armature >= 0."""
    pi = rd.inertial_parameters(model)
    for j in range(model.n_bodies):
        assert np.linalg.eigvalsh(pseudo_inertia(pi[10 * j:10 * j + 10]))[0] >= 0.0, model.link_names[j]
    assert (model.damping >= 0).all() and (model.friction >= 0).all() and (model.armature >= 0).all()
    rd.with_inertial_parameters(model, pi)     # refuses a body that is not a rigid body


# -- base parameters -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, path, kwargs, count, with_armature", [
    ("ur5", "ur_description/urdf/ur5_robot.urdf", {}, 36, 40),
    ("panda", "panda_description/urdf/panda.urdf", dict(tip_link="panda_link8"), 43, 48),
    ("xarm7", "xarm_description/urdf/xarm7.urdf", {}, 43, 49),
])
def test_base_parameters_count_and_reproduce_the_torques(name, path, kwargs, count, with_armature):
    """The count is the rank of the regressor stacked over many random states (the literature's 36 for
    a UR-type arm, 43 for the Panda: Gaz et al. 2019), and Y π = Y_b β at other states."""
    model = rd.load_urdf(os.path.join(ROBOTS, path), **kwargs)
    for armature, expected in ((False, count), (True, with_armature)):
        bp = rd.base_parameters(model, armature=armature)
        assert bp.count == expected == len(bp.names) == bp.full_to_base.shape[0]
        q, qd, qdd = random_states(model, 400, seed=11)
        Y = full_regressor(model, q, qd, qdd, armature=armature)
        singular = np.linalg.svd(Y.reshape(-1, Y.shape[-1]), compute_uv=False)
        assert int(np.sum(singular > 1e-9 * singular[0])) == expected
        pi = np.concatenate([rd.inertial_parameters(model), np.linspace(0.1, 0.7, model.nq)]) if armature \
            else rd.inertial_parameters(model)
        tau = Y @ pi
        assert np.allclose(bp.base_regressor(Y) @ bp.base_values(pi), tau, rtol=0,
                           atol=1e-9 * np.abs(tau).max())
        assert np.array_equal(Y @ bp.regressor_to_base, bp.base_regressor(Y))


# -- exact recovery ------------------------------------------------------------------------------------
def test_exact_data_recovers_the_real_arm(plant):
    """Exact q̇, q̈: the held-out torques to 1e-6 relative, the offsets and friction exactly, the model
    consistent, and predict() is the model's inverse dynamics plus the offsets."""
    stock, arm, offset, held_out, tau_held_out = plant
    t, q, qd, qdd = sines(12.0, 200, seed=3)
    tau = rd.inverse_dynamics_trajectory(arm, q, qd, qdd, friction=True) + offset
    est = rd.identify_robot(stock, t, q, tau, qd=qd, qdd=qdd, armature=True)
    predicted = est.predict(*held_out[1:])
    assert np.abs(predicted - tau_held_out).max() <= 1e-6 * np.abs(tau_held_out).max()
    assert np.allclose(est.offset, offset, atol=1e-6)
    assert np.allclose(est.model.damping, arm.damping, atol=1e-6)
    assert np.allclose(est.model.friction, arm.friction, atol=1e-6)
    assert est.residual_rms.max() < 1e-8 and est.samples == t.size and est.cutoff is None
    assert_consistent(est.model)
    assert np.allclose(predicted, rd.inverse_dynamics_trajectory(est.model, *held_out[1:], friction=True)
                       + est.offset, rtol=0, atol=1e-12 * np.abs(predicted).max())
    stock_error = rms(rd.inverse_dynamics_trajectory(stock, *held_out[1:]) - tau_held_out)
    assert stock_error.min() > 0.3            # the URDF as given is off by a lot (N·m)


# -- what real data has ------------------------------------------------------------------------------
def test_noise_quantisation_uneven_stamps_gaps_and_stiction(plant):
    """0.5 % torque noise, 1e-5 rad encoder steps, stamps jittered by ±0.2 ms, 50 ms of messages dropped
    twice, static friction anywhere in ±F_s while a joint is nearly still: the held-out error stays near
    the noise floor and far below the URDF's, and the model is consistent."""
    stock, arm, offset, held_out, tau_held_out = plant
    rng = np.random.default_rng(7)
    t, q, qd, qdd = sines(16.0, 500, seed=3)
    tau = rd.inverse_dynamics_trajectory(arm, q, qd, qdd, friction=True) + offset
    slow = np.abs(qd) < 0.01
    tau[slow] += (rng.uniform(-1, 1, tau.shape) * arm.friction - arm.friction * np.sign(qd))[slow]
    noise = 0.005 * np.abs(tau).max(axis=0)
    tau += rng.normal(size=tau.shape) * noise
    q = np.round(q / 1e-5) * 1e-5
    t = t + rng.uniform(-2e-4, 2e-4, t.size)
    keep = np.ones(t.size, dtype=bool)
    keep[2000:2025] = keep[5000:5025] = False
    est = rd.identify_robot(stock, t[keep], q[keep], tau[keep], armature=True)
    error = rms(est.predict(*held_out[1:]) - tau_held_out)
    stock_error = rms(rd.inverse_dynamics_trajectory(stock, *held_out[1:]) - tau_held_out)
    assert (error < noise).all(), (error, noise)
    assert (error < stock_error / 50).all(), (error, stock_error)
    assert_consistent(est.model)
    assert est.excited and est.cutoff == 5.0


def test_consistent_fit_when_least_squares_is_not(plant):
    """Heavy noise and a short recording: least squares alone gives no rigid body for some link, the
    SDP returns a consistent model whose fit is still far better than the URDF's."""
    stock, arm, offset, held_out, tau_held_out = plant
    rng = np.random.default_rng(3)
    t, q, qd, qdd = sines(6.0, 200, seed=5)
    tau = rd.inverse_dynamics_trajectory(arm, q, qd, qdd, friction=True) + offset
    tau += rng.normal(size=tau.shape) * 0.05 * np.abs(tau).max(axis=0)
    loose = rd.identify_robot(stock, t, q, tau, qd=qd, qdd=qdd, consistent=False, armature=True)
    est = rd.identify_robot(stock, t, q, tau, qd=qd, qdd=qdd, armature=True)
    assert est.method == "semidefinite program"
    assert_consistent(est.model)
    assert (est.residual_rms <= 1.1 * loose.residual_rms).all()    # consistency costs the fit little
    error = rms(est.predict(*held_out[1:]) - tau_held_out)
    stock_error = rms(rd.inverse_dynamics_trajectory(stock, *held_out[1:]) - tau_held_out)
    assert (error < stock_error / 3).all(), (error, stock_error)


# -- bad input -----------------------------------------------------------------------------------------
def test_a_joint_that_never_moves_is_named(plant):
    stock = plant[0]
    t, q, qd, qdd = sines(6.0, 100, seed=3)
    q[:, 4] = 0.3
    tau = rd.inverse_dynamics_trajectory(stock, q, qd * 0, qdd * 0)
    with pytest.raises(ValueError, match=f"{stock.joint_names[4]}.*never moves"):
        rd.identify_robot(stock, t, q, tau)


@pytest.mark.parametrize("change, match", [
    (lambda t, q, tau: (t, q[:-1], tau), "same number of samples"),
    (lambda t, q, tau: (t, q[:, :3], tau), "q must have shape"),
    (lambda t, q, tau: (t, q, np.where(tau > 1e9, 0, tau) * np.nan), "tau"),
    (lambda t, q, tau: (t[::-1], q, tau), "t must"),
    (lambda t, q, tau: (t[:40], q[:40], tau[:40]), "too short|too few"),
])
def test_bad_input_is_named(plant, change, match):
    stock = plant[0]
    t, q, qd, qdd = sines(10.0, 100, seed=3)
    tau = rd.inverse_dynamics_trajectory(stock, q, qd, qdd)
    with pytest.raises(ValueError, match=match):
        rd.identify_robot(stock, *change(t, q, tau))


def test_a_joint_that_barely_moves_is_flagged_not_trusted(plant):
    """wrist_3 moves by ±5 mrad only: the fit runs, a warning names the joint (excited is False: the
    condition number of unit-norm columns does not see a weak signal), the other joints' torques are
    still predicted, and the model is a physical one."""
    stock, arm, offset, held_out, tau_held_out = plant
    t, q, qd, qdd = sines(12.0, 200, seed=3)
    scale = np.ones(stock.nq)
    scale[5] = 0.005 / np.abs(q[:, 5] - Q0[5]).max()
    q, qd, qdd = Q0 + (q - Q0) * scale, qd * scale, qdd * scale
    tau = rd.inverse_dynamics_trajectory(arm, q, qd, qdd, friction=True) + offset
    tau += np.random.default_rng(8).normal(size=tau.shape) * 0.005 * np.abs(tau).max(axis=0)
    est = rd.identify_robot(stock, t, q, tau, qd=qd, qdd=qdd, armature=True)
    assert not est.excited and len(est.warnings) == 1 and "'wrist_3_joint' barely moved" in est.warnings[0]
    assert_consistent(est.model)
    error = rms(est.predict(q, qd, qdd) - tau)
    assert (error[:5] < 0.01 * np.abs(tau[:, :5]).max(axis=0)).all(), error
