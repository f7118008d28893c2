"""_checks.kernel_arguments: the public functions' one error path (a bad argument -> a ValueError naming
it; a good call -> nothing but the fast path)."""
import dis
import traceback
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics import _checks

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model():
    return rd.load_urdf(str(REPO / "urdf" / "ur5e.urdf"))


def test_the_fast_path_is_the_function_itself(model):
    """No wrapper frame: the public function's code is its own body inside one try statement, in its own
    file and lines, with its own signature, defaults and docstring."""
    code = rd.gravity_torques.__code__
    assert code.co_filename.endswith("inverse_dynamics.py") and code.co_name == "gravity_torques"
    cells = rd.gravity_torques.__closure__ or ()
    assert all(cell.cell_contents in (_checks.KERNEL_ERRORS, _checks.retry_args, rd.gravity_torques)
               for cell in cells)      # (the error path's: the conversions, and the call again)
    calls = [i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_ATTR", "LOAD_METHOD")]
    assert "gravity" in calls and "vector" not in calls
    assert rd.inverse_dynamics.__defaults__ == (None, None, None, None)
    assert "recursive Newton" in rd.gravity_torques.__doc__


def test_a_converted_argument_gives_the_same_result(model):
    q = np.linspace(-1.0, 1.0, model.nq)
    expected = rd.inverse_dynamics(model, q, 0.5 * q, q)
    got = rd.inverse_dynamics(model, list(q), tuple(0.5 * q), np.asfortranarray(q[::-1])[::-1])
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(rd.forward_dynamics(model, list(q), q, list(expected)),
                                  rd.forward_dynamics(model, q, q, expected))


@pytest.mark.parametrize("call, name", [
    (lambda m, q: rd.gravity_torques(m, q[:3]), "q"),
    (lambda m, q: rd.coriolis_forces(m, q, [np.nan] * 6), "qd"),
    (lambda m, q: rd.inverse_dynamics(m, q, q, q, f_tip=[1.0, 2.0]), "f_tip"),
    (lambda m, q: rd.forward_dynamics(m, q, q, "tau"), "tau"),
    (lambda m, q: rd.forward_dynamics(m, q, q, q[:2], friction=True), "tau"),
    (lambda m, q: rd.jacobian_derivative(m, q, q.tolist() + [1.0]), "qd"),
])
def test_a_bad_argument_is_named_and_the_traceback_points_at_the_function(model, call, name):
    with pytest.raises(ValueError, match=rf"^{name} must") as caught:
        call(model, np.zeros(model.nq))
    frames = [f.filename for f in traceback.extract_tb(caught.value.__traceback__)]
    assert any(f.endswith(("inverse_dynamics.py", "forward_dynamics.py", "jacobians.py")) for f in frames)


def test_an_error_not_of_the_arguments_is_raised_as_it_was(model):
    """Every argument right, the kernel's own error (an unknown frame here) comes through unchanged."""
    with pytest.raises(ValueError, match="unknown frame 'nope'"):
        rd.jacobian(model, [0.0] * model.nq, frame="nope")


def test_a_function_that_rebinds_a_named_parameter_is_refused():
    def rebinds(model, q, data=None):
        q = np.asarray(q)
        return q

    with pytest.raises(TypeError, match=r"rebound"):
        _checks.kernel_arguments("q")(rebinds)
    def takes_q(model, q):
        return q

    with pytest.raises(TypeError, match=r"'qd', which is not a parameter"):
        _checks.kernel_arguments("qd")(takes_q)
