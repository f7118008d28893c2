"""pose_profile: the screw motion with quintic time scaling from rest (the textbook's), the general
profile from a moving start (its twist and derivative against finite differences of its pose and
against Pinocchio's Jexp6), continuity when a target arrives mid-motion, the speed limits."""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics.spatial import exp_coordinates, inverse_transform, log_transform
from robot_dynamics_ros.logic.pose_profile import (
    MIN_DURATION,
    PoseReference,
    ScrewProfile,
    body_twist_of_exponential,
    screw_duration,
)

SWAP6 = np.array([3, 4, 5, 0, 1, 2])       # angular first <-> Pinocchio's linear first


def _pose(rng, angle=1.0, distance=0.3):
    X = np.r_[rng.normal(size=3), rng.normal(size=3)]
    X[:3] *= angle / np.linalg.norm(X[:3])
    X[3:] *= distance / np.linalg.norm(X[3:])
    return exp_coordinates(X)


def _twist_by_differences(profile, t, h=1e-5):
    """V = log(T(t)⁻¹ T(t + h)) − log(T(t)⁻¹ T(t − h)) over 2h; V̇ from V at t ± h."""
    def V(t):
        T_inv = inverse_transform(profile.sample(t)[0])
        return (log_transform(T_inv @ profile.sample(t + h)[0])
                - log_transform(T_inv @ profile.sample(t - h)[0])) / (2 * h)
    return V(t), (V(t + h) - V(t - h)) / (2 * h)


def test_from_rest_it_is_the_textbooks_screw_trajectory():
    rng = np.random.default_rng(1)
    T0, T1 = _pose(rng), _pose(rng)
    profile = ScrewProfile(T0, T1, 2.0, 3.0)
    X = log_transform(inverse_transform(T0) @ T1)
    for tau in (0.0, 0.1, 0.5, 0.77, 0.999):
        s = 10 * tau**3 - 15 * tau**4 + 6 * tau**5
        s_dot = (30 * tau**2 - 60 * tau**3 + 30 * tau**4) / 3.0
        s_ddot = (60 * tau - 180 * tau**2 + 120 * tau**3) / 9.0
        T, V, V_dot = profile.sample(2.0 + 3.0 * tau)
        np.testing.assert_allclose(T, T0 @ exp_coordinates(X * s), atol=1e-14)
        np.testing.assert_allclose(V, X * s_dot, atol=1e-14)
        np.testing.assert_allclose(V_dot, X * s_ddot, atol=1e-13)
    np.testing.assert_array_equal(profile.sample(5.0)[0], T1)
    np.testing.assert_array_equal(profile.sample(1.0)[0], T0)


def test_body_twist_of_the_exponential_is_pinocchios_jexp6():
    pin = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(2)
    for scale in (1e-8, 0.3, 1.5, 3.0):
        xi, xi_dot = rng.normal(size=6) * scale, rng.normal(size=6)
        V, _ = body_twist_of_exponential(xi, xi_dot, np.zeros(6))
        J = pin.Jexp6(pin.Motion(xi[SWAP6]))[np.ix_(SWAP6, SWAP6)]
        np.testing.assert_allclose(V, J @ xi_dot, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_a_moving_start_twist_and_derivative_match_finite_differences(seed):
    rng = np.random.default_rng(seed)
    profile = ScrewProfile(_pose(rng), _pose(rng, 2.0, 0.5), 0.0, 2.0, rng.normal(size=6),
                           rng.normal(size=6) * 3)
    for t in (0.1, 0.7, 1.3, 1.9):
        _, V, V_dot = profile.sample(t)
        V_fd, V_dot_fd = _twist_by_differences(profile, t)
        np.testing.assert_allclose(V, V_fd, atol=1e-7)
        np.testing.assert_allclose(V_dot, V_dot_fd, atol=1e-4)


def test_a_target_arriving_mid_motion_changes_neither_pose_twist_nor_acceleration():
    rng = np.random.default_rng(5)
    reference = PoseReference(max_linear_velocity=0.2, max_angular_velocity=1.0)
    reference.hold(_pose(rng), 0.0)
    reference.move_to(_pose(rng), 0.0)
    before = reference.sample(0.6)
    assert np.abs(before[1]).max() > 0.05, "the first profile must be moving at the switch"
    reference.move_to(_pose(rng), 0.6)
    after = reference.sample(0.6)
    for a, b in zip(before, after):
        np.testing.assert_allclose(b, a, atol=1e-12)
    # and it ends at the new target, at rest, then holds it
    goal = reference.goal
    T, V, V_dot = reference.sample(60.0)
    np.testing.assert_array_equal(T, goal)
    assert not V.any() and not V_dot.any() and not reference.moving


@pytest.mark.parametrize("angle, distance", [(2.0, 0.05), (0.1, 0.6), (1.0, 0.3)])
def test_from_rest_the_speeds_stay_within_the_limits_and_one_of_them_is_reached(angle, distance):
    rng = np.random.default_rng(7)
    T0 = _pose(rng)
    T1 = T0 @ _pose(rng, angle, distance)
    reference = PoseReference(max_linear_velocity=0.25, max_angular_velocity=0.8)
    reference.hold(T0, 0.0)
    duration = reference.move_to(T1, 0.0)
    X = log_transform(inverse_transform(T0) @ T1)
    assert duration == pytest.approx(screw_duration(X, 0.25, 0.8))
    V = np.array([reference.sample(t)[1] for t in np.linspace(0.0, duration, 401)])
    w, v = np.linalg.norm(V[:, :3], axis=1).max(), np.linalg.norm(V[:, 3:], axis=1).max()
    assert w <= 0.8 * (1 + 1e-9) and v <= 0.25 * (1 + 1e-9)
    assert max(w / 0.8, v / 0.25) == pytest.approx(1.0, rel=1e-4)


def test_a_target_at_the_desired_pose_takes_the_shortest_profile_and_an_empty_reference_refuses():
    reference = PoseReference()
    with pytest.raises(ValueError, match="no desired pose"):
        reference.sample(0.0)
    reference.hold(np.eye(4), 0.0)
    assert reference.move_to(np.eye(4), 1.0) == MIN_DURATION
    T, V, _ = reference.sample(1.0 + MIN_DURATION / 2)
    np.testing.assert_allclose(T, np.eye(4), atol=1e-15)
    assert not V.any()


def test_reach_bounds_the_frame_over_every_configuration():
    from pathlib import Path

    from robot_dynamics_ros import dynamics as rd
    from robot_dynamics_ros.logic.pose_profile import reach
    model = rd.load_urdf(str(Path(__file__).resolve().parents[2] / "urdf" / "ur5e.urdf"), tip_link="tool0")
    bound = reach(model, "tool0")
    rng = np.random.default_rng(0)
    farthest = max(np.linalg.norm(rd.frame_pose(model, q, "tool0")[:3, 3])
                   for q in rng.uniform(-np.pi, np.pi, (2000, model.nq)))
    assert farthest <= bound < 1.3 * farthest, (farthest, bound)
