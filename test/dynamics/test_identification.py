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


def test_the_trajectory_form_is_the_single_call_per_row():
    model = rd.load_urdf(random_tree(11, 6).to_urdf())
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-1, 1, (3, 5, model.nq))
    Y = rd.joint_torque_regressor_trajectory(model, q, qd, qdd)
    assert Y.shape == (5, model.nq, 10 * model.n_bodies)
    for k in range(5):
        np.testing.assert_array_equal(Y[k], rd.joint_torque_regressor(model, q[k], qd[k], qdd[k]))
    with pytest.raises(ValueError, match="same number of samples"):
        rd.joint_torque_regressor_trajectory(model, q, qd, qdd[:4])


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


UR5E = __import__("pathlib").Path(__file__).resolve().parents[2] / "urdf" / "ur5e.urdf"
PAYLOAD = (2.0, np.array([0.01, -0.02, 0.08]), np.diag([0.010, 0.012, 0.008]))


def _samples(model, count, seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-2, 2, (count, model.nq)), rng.uniform(-1, 1, (count, model.nq)),
            rng.uniform(-2, 2, (count, model.nq)))


def test_a_payload_is_identified_exactly_from_exact_torques_and_closely_from_noisy_ones():
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    carried = rd.with_payload(model, *PAYLOAD, frame="tool0")
    q, qd, qdd = _samples(model, 300, 1)
    tau = np.array([rd.inverse_dynamics(carried, *x) for x in zip(q, qd, qdd)])
    exact = rd.identify_payload(model, q, qd, qdd, tau, frame="tool0")
    assert abs(exact.mass - PAYLOAD[0]) < 1e-6 and np.abs(exact.com - PAYLOAD[1]).max() < 1e-6
    assert np.abs(exact.inertia - PAYLOAD[2]).max() < 1e-6 and exact.consistent and exact.residual_rms < 1e-9
    noisy_tau = tau * (1.0 + 0.005 * np.random.default_rng(2).normal(size=tau.shape))
    noisy = rd.identify_payload(model, q, qd, qdd, noisy_tau, frame="tool0")
    assert abs(noisy.mass - PAYLOAD[0]) < 0.02 * PAYLOAD[0], noisy
    assert np.abs(noisy.com - PAYLOAD[1]).max() < 0.005, noisy
    # no motion, no information: a huge condition number says so
    still = rd.identify_payload(model, np.tile(q[0], (50, 1)), np.zeros((50, 6)), np.zeros((50, 6)),
                                np.tile(tau[0], (50, 1)), frame="tool0")
    assert still.condition > 1e6


def test_inertial_parameters_round_trip_and_inconsistent_ones_are_refused_naming_the_body():
    model = rd.load_urdf(str(UR5E))
    pi = rd.inertial_parameters(model)
    rebuilt = rd.with_inertial_parameters(model, pi)
    np.testing.assert_allclose(rd.inertial_parameters(rebuilt), pi, rtol=0, atol=1e-12)
    body = 2
    for change, words in (({0: -1.0}, "mass must be > 0"), ({4: -1.0}, "not positive definite"),
                          ({4: 10.0}, "triangle inequality")):
        bad = pi.copy()
        for k, value in change.items():
            bad[10 * body + k] = value
        with pytest.raises(ValueError, match=f"body {body} .*{words}"):
            rd.with_inertial_parameters(model, bad)
    with pytest.raises(ValueError, match="pi must be"):
        rd.with_inertial_parameters(model, pi[:-1])


def test_a_zero_payload_changes_nothing_and_bad_payloads_are_refused():
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    assert rd.with_payload(model, 0.0, [0.1, 0.2, 0.3]) is model
    q = np.array([0.1, -1.0, 1.2, -0.5, 0.3, 0.2])
    heavier = rd.with_payload(model, 1.5, [0.0, 0.0, 0.05])
    assert rd.gravity_torques(heavier, q)[1] != rd.gravity_torques(model, q)[1]
    for kwargs, name in ((dict(mass=-1.0, com=[0, 0, 0]), "mass"), (dict(mass=1.0, com=[0, 0]), "com"),
                         (dict(mass=1.0, com=[0, 0, 0], inertia=np.eye(2)), "inertia"),
                         (dict(mass=1.0, com=[0, 0, 0], inertia=-np.eye(3)), "inertia"),
                         (dict(mass=1.0, com=[0, 0, 0], inertia=np.diag([0.01, 0.01, 0.05])), "triangle"),
                         (dict(mass=1.0, com=[0, 0, 0], frame="nowhere"), "nowhere"),
                         (dict(mass=1.0, com=[0, 0, 0], frame="base_link"), "on the base")):
        with pytest.raises(ValueError, match=name):
            rd.with_payload(model, **kwargs)
    q, qd, qdd = _samples(model, 5, 3)
    with pytest.raises(ValueError, match="tau"):
        rd.identify_payload(model, q, qd, qdd, np.zeros((5, 5)))
    with pytest.raises(ValueError, match="same number of samples"):
        rd.identify_payload(model, q, qd, qdd, np.zeros((4, 6)))


def _exciting_log(model, seconds, period, seed, jitter=0.0):
    """A recording of a sum of sines around the UR home pose (0.15-0.75 Hz): times (with jitter on the
    stamps), q, q̇, q̈ at those times."""
    rng = np.random.default_rng(seed)
    w = 2 * np.pi * np.array([0.15, 0.3, 0.45, 0.6, 0.75])[:, None]
    amplitude, phase = rng.uniform(-0.25, 0.25, (5, model.nq)), rng.uniform(0, 2 * np.pi, (5, model.nq))
    t = np.arange(0.0, seconds, period) + rng.uniform(-jitter, jitter, int(round(seconds / period)))
    angle = w[None] * t[:, None, None] + phase[None]
    q = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0]) + (amplitude * np.sin(angle)).sum(1)
    return t, q, (amplitude * w * np.cos(angle)).sum(1), (-amplitude * w ** 2 * np.sin(angle)).sum(1)


def test_a_payload_is_identified_from_a_log_of_positions_and_efforts_with_jittery_stamps():
    """No velocities or accelerations in the log: the filter differentiates; the stamps jitter by
    ±0.1 ms at 500 Hz; encoder noise 1e-5 rad and 0.5 % torque noise."""
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    carried = rd.with_payload(model, *PAYLOAD, frame="tool0")
    t, q, qd, qdd = _exciting_log(model, 10.0, 0.002, 5, jitter=1e-4)
    tau = rd.inverse_dynamics_trajectory(carried, q, qd, qdd)
    clean = rd.identify_payload_from_log(model, t, q, tau, frame="tool0")
    assert abs(clean.mass - PAYLOAD[0]) < 2e-4 and np.abs(clean.com - PAYLOAD[1]).max() < 5e-5
    rng = np.random.default_rng(6)
    noisy = rd.identify_payload_from_log(model, t, q + 1e-5 * rng.normal(size=q.shape),
                                         tau + 0.005 * np.abs(tau).max(0) * rng.normal(size=tau.shape),
                                         frame="tool0")
    assert abs(noisy.mass - PAYLOAD[0]) < 0.02 * PAYLOAD[0], noisy
    assert np.abs(noisy.com - PAYLOAD[1]).max() < 0.005, noisy
    assert noisy.consistent and noisy.condition < 100


def test_the_log_filter_differentiates_a_slow_signal_and_delays_nothing():
    """Zero phase: the filtered q̇ of a sine below the cutoff is the sine's derivative, not a delayed one
    (identify_payload on the filtered log of a payload-free arm finds no payload)."""
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    t, q, qd, qdd = _exciting_log(model, 8.0, 0.001, 9)
    estimate = rd.identify_payload_from_log(model, t, q, rd.inverse_dynamics_trajectory(model, q, qd, qdd))
    assert abs(estimate.mass) < 1e-4 and estimate.residual_rms < 2e-3


def test_bad_logs_are_refused_naming_the_argument():
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    t, q, _, _ = _exciting_log(model, 2.0, 0.002, 1)
    tau = np.zeros_like(q)
    for args, name in (((t[::-1], q, tau), "t must be"), ((t[:-1], q, tau), "same number of samples"),
                       ((t, q[:, :5], tau), "q must have shape"), ((t, q, tau * np.nan), "tau must be")):
        with pytest.raises(ValueError, match=name):
            rd.identify_payload_from_log(model, *args)
    for cutoff in (0.0, 250.0, np.nan):
        with pytest.raises(ValueError, match="cutoff"):
            rd.identify_payload_from_log(model, t, q, tau, cutoff=cutoff)
    with pytest.raises(ValueError, match="too short"):
        rd.identify_payload_from_log(model, t[:200], q[:200], tau[:200], cutoff=1.0)


def test_a_point_mass_and_no_payload_come_back_as_rigid_bodies_the_model_accepts():
    """A 2 kg point mass (zero inertia about its centre of mass) under 0.5 % torque noise: least squares
    gives an inertia that is no rigid body's, and the answer is the nearest rigid body instead (projected),
    which with_payload accepts; an arm carrying nothing comes back with a payload with_payload accepts too,
    of nearly no mass."""
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    com = np.array([0.0, 0.0, 0.1])
    carried = rd.with_payload(model, 2.0, com, None, frame="tool0")
    q, qd, qdd = _samples(model, 400, 3)
    rng = np.random.default_rng(4)
    for truth, expected_mass in ((carried, 2.0), (model, 0.0)):
        tau = rd.inverse_dynamics_trajectory(truth, q, qd, qdd)
        tau = tau + 0.005 * np.abs(tau).max(0) * rng.normal(size=tau.shape)
        loose = rd.identify_payload(model, q, qd, qdd, tau, frame="tool0", consistent=False)
        estimate = rd.identify_payload(model, q, qd, qdd, tau, frame="tool0")
        assert not loose.consistent and estimate.projected and estimate.consistent
        assert abs(estimate.mass - expected_mass) < 0.03, estimate
        assert estimate.residual_rms <= 1.05 * loose.residual_rms
        rd.with_payload(model, estimate.mass, estimate.com, estimate.inertia, frame="tool0")   # accepted
        if expected_mass:
            assert np.abs(estimate.com - com).max() < 0.01 and np.abs(estimate.inertia).max() < 0.01
