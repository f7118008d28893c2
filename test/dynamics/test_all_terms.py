"""compute_all_terms: every term of one state from one kinematics pass equals the separate calls."""
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

from _residuals import EXACT, assert_close, torque_scale


@pytest.mark.parametrize("reference", ["space", "body", "world_aligned"])
def test_all_terms_equal_the_separate_calls(model, states, reference):
    frame = model.frame_names[-1]
    for q, qd, _ in states:
        M = rd.mass_matrix(model, q)
        terms = rd.compute_all_terms(model, q, qd, frame, reference, damping=1e-3)
        scale = torque_scale(M, qd)
        assert_close("all terms: M", terms.M, M, EXACT, floor=np.abs(M).max())
        assert_close("all terms: c", terms.c, rd.coriolis_forces(model, q, qd), EXACT, floor=scale)
        assert_close("all terms: g", terms.g, rd.gravity_torques(model, q), EXACT, floor=scale)
        assert_close("all terms: J", terms.J, rd.jacobian(model, q, frame, reference), EXACT, floor=1.0)
        Lam = rd.task_space_inertia(model, q, frame, reference, damping=1e-3)
        assert_close("all terms: Lambda", terms.Lambda, Lam, 1e-9, floor=np.abs(Lam).max())
        eta = rd.task_space_bias(model, q, qd, frame, reference, damping=1e-3)
        assert_close("all terms: eta", terms.eta, eta, 1e-9, floor=np.abs(eta).max() + np.abs(Lam).max())


def test_without_a_frame_only_the_joint_space_terms(model, states):
    q, qd, _ = states[0]
    terms = rd.compute_all_terms(model, q, qd)
    assert terms.J is None and terms.Lambda is None and terms.eta is None
    np.testing.assert_array_equal(terms.M, rd.mass_matrix(model, q))


def test_with_a_data_the_results_are_its_arrays(model, states):
    """With data=, the same arrays are refilled (no allocation per call); without, new arrays."""
    (qa, qda, _), (qb, qdb, _) = states[:2]
    data = rd.Data(model)
    first = rd.compute_all_terms(model, qa, qda, data=data)
    second = rd.compute_all_terms(model, qb, qdb, data=data)
    assert first.M is second.M and first.c is second.c and first.g is second.g
    np.testing.assert_array_equal(second.M, rd.mass_matrix(model, qb))
    assert rd.compute_all_terms(model, qa, qda).M is not rd.compute_all_terms(model, qa, qda).M


def test_a_singular_task_space_asks_for_damping():
    """UR5e stretched out (q = 0) is singular: J M^-1 J^T cannot be inverted without damping."""
    model = rd.load_urdf(Path(__file__).resolve().parents[2] / "urdf" / "ur5e.urdf")
    q = np.zeros(model.nq)
    with pytest.raises(ValueError, match="damping"):
        rd.compute_all_terms(model, q, q, "tool0")
    assert np.all(np.isfinite(rd.compute_all_terms(model, q, q, "tool0", damping=1e-3).Lambda))


def test_bad_arguments_name_themselves(model):
    n = model.nq
    with pytest.raises(ValueError, match="qd"):
        rd.compute_all_terms(model, np.zeros(n), np.full(n, np.nan))
    with pytest.raises(ValueError, match="q"):
        rd.compute_all_terms(model, np.zeros(n + 1), np.zeros(n))
    with pytest.raises(ValueError, match="frame"):
        rd.compute_all_terms(model, np.zeros(n), np.zeros(n), "no such frame")
    with pytest.raises(ValueError, match="reference"):
        rd.compute_all_terms(model, np.zeros(n), np.zeros(n), model.frame_names[-1], "sideways")
    with pytest.raises(ValueError, match="damping"):
        rd.compute_all_terms(model, np.zeros(n), np.zeros(n), model.frame_names[-1], damping=-1.0)
