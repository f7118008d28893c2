"""The public functions' one error path, written in each function (_checks' module docstring): the fast
path inside ``try``; a refused argument -> a ValueError naming it, or converted and the call made again;
a good call -> nothing but the fast path."""
import dis
import inspect
import traceback
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics import _checks, derivatives, integrators

REPO = Path(__file__).resolve().parents[2]

#: Every function that hands its vector arguments to a kernel unchecked (its fast path).
FAST_PATHS = [rd.inverse_dynamics, rd.gravity_torques, rd.coriolis_forces, rd.bias_forces, rd.mass_matrix,
              rd.forward_dynamics, rd.forward_dynamics_via_mass_matrix, rd.coriolis_matrix,
              rd.mass_matrix_derivatives, rd.frame_pose, rd.jacobian, rd.jacobian_derivative,
              rd.task_space_inertia, rd.compute_all_terms, rd.kinetic_energy, rd.momentum_balance,
              rd.joint_torque_regressor, rd.inverse_dynamics_derivatives,
              derivatives._forward_dynamics_derivatives, integrators._step]


@pytest.fixture(scope="module")
def model():
    return rd.load_urdf(str(REPO / "urdf" / "ur5e.urdf"))


@pytest.mark.parametrize("function", FAST_PATHS, ids=lambda f: f.__name__)
def test_the_function_in_the_file_is_the_function_that_runs(function):
    """No wrapper and no recompiled copy: the module's function is the one its file defines (its own
    code object, no closure), and before its handler it converts nothing."""
    module = inspect.getmodule(function)
    assert getattr(module, function.__name__) is function and inspect.unwrap(function) is function
    assert function.__code__.co_filename == module.__file__ and function.__closure__ is None
    source = inspect.getsource(function)
    assert "except _checks.KERNEL_ERRORS as error:" in source and "_checks.retry_args(" in source
    names = [i.argval for i in dis.get_instructions(function) if isinstance(i.argval, str)]
    fast_path = names[:names.index("KERNEL_ERRORS")]
    assert "retry_args" not in fast_path and "vector" not in fast_path
    assert any(n in fast_path for n in ("_k", "_checks")), "the fast path calls the kernel itself"


def test_a_converted_argument_gives_the_same_result(model):
    q = np.linspace(-1.0, 1.0, model.nq)
    expected = rd.inverse_dynamics(model, q, 0.5 * q, q)
    got = rd.inverse_dynamics(model, list(q), tuple(0.5 * q), np.asfortranarray(q[::-1])[::-1])
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(rd.forward_dynamics(model, list(q), q, list(expected)),
                                  rd.forward_dynamics(model, q, q, expected))
    np.testing.assert_array_equal(rd.inverse_dynamics(model, q, q, q, f_tip=[1, 2, 3, 4, 5, 6]),
                                  rd.inverse_dynamics(model, q, q, q, f_tip=np.arange(1.0, 7.0)))


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
    """Every argument right (here after converting the list once), the kernel's own error (an unknown
    frame) comes through unchanged: the call again does not loop."""
    with pytest.raises(ValueError, match="unknown frame 'nope'"):
        rd.jacobian(model, [0.0] * model.nq, frame="nope")
    another = rd.load_urdf(str(REPO / "urdf" / "ur5e.urdf"))
    with pytest.raises(ValueError, match="data must be a Data made for this model"):
        rd.gravity_torques(model, [0.0] * model.nq, data=rd.Data(another))


def test_retry_args_converts_names_or_raises_the_kernels_error_again(model):
    q = np.zeros(model.nq)
    error = TypeError("the kernel's")
    converted, f_tip = _checks.retry_args(model, error, (q.tolist(), "q"), (None, "f_tip", 6))
    assert converted.dtype == np.float64 and converted.shape == q.shape and f_tip is None
    with pytest.raises(TypeError, match="the kernel's"):
        _checks.retry_args(model, error, (q, "q"), (None, "f_tip", 6))
    with pytest.raises(ValueError, match=r"^qd must have shape \(6,\)"):
        _checks.retry_args(model, error, (q, "q"), (q[:2], "qd"))


def test_the_workspace_is_the_models_default_or_a_data_of_that_model(model):
    assert _checks.workspace(model) is model._data and _checks.buffer(model) is model._data.buffer
    data = rd.Data(model)
    assert _checks.workspace(model, data) is data and _checks.buffer(model, data) is data.buffer
    for other in (rd.Data(rd.load_urdf(str(REPO / "urdf" / "ur5e.urdf"))), "data"):
        with pytest.raises(ValueError, match="data must be a Data made for this model"):
            _checks.buffer(model, other)
