"""spatial.log_transform and exp_coordinates against Pinocchio's log6 and exp6, near θ = 0 and π too;
bad transforms refused naming T."""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics.spatial import exp_coordinates, log_transform

pin = pytest.importorskip("pinocchio")
SWAP6 = np.array([3, 4, 5, 0, 1, 2])


@pytest.mark.parametrize("theta", [0.0, 1e-9, 1e-5, 1e-3, 0.5, 2.0, 3.0, np.pi - 1e-5, np.pi - 1e-8])
def test_exp_and_log_are_pinocchios(theta):
    rng = np.random.default_rng(int(theta * 1e3))
    for _ in range(5):
        X = rng.normal(size=6)
        X[:3] *= theta / np.linalg.norm(X[:3])
        T = exp_coordinates(X)
        np.testing.assert_allclose(T, pin.exp6(pin.Motion(X[SWAP6])).homogeneous, atol=1e-14)
        np.testing.assert_allclose(log_transform(T), pin.log6(pin.SE3(T)).vector[SWAP6], atol=1e-9)
        if theta < np.pi - 1e-6:
            np.testing.assert_allclose(log_transform(T), X, atol=1e-9)


def test_bad_transforms_are_refused():
    T = exp_coordinates([0.1, 0.2, 0.3, 1.0, 2.0, 3.0])
    sheared = T.copy()
    sheared[0, 1] += 1e-3
    for bad in (sheared, T[:3], np.full((4, 4), np.nan), "T"):
        with pytest.raises(ValueError, match="T "):
            log_transform(bad)
    far = exp_coordinates([0.0, 0.0, 2.0, 0.0, 0.0, 0.0])
    far[:3, 3] = (1.7e308, -1.7e308, 0.0)          # [ω θ] p overflows
    with pytest.raises(ValueError, match="overflowed.*T "):
        log_transform(far)
    np.testing.assert_array_equal(log_transform(T.tolist()), log_transform(T))
