"""Data workspaces: results do not depend on which Data is used, nor on what it computed before."""
import inspect
import threading

import numpy as np

from robot_dynamics_ros import dynamics as rd

from _random_trees import random_state


def _calls(model, q, qd, qdd, rng):
    """Every public call that takes data=, with arguments for this model."""
    tau = rng.normal(size=model.nq)
    F = rng.normal(size=6)
    frame = model.frame_names[-1]
    Q = np.array([q, q + 0.1])
    calls = {
        "inverse_dynamics":
            lambda d: rd.inverse_dynamics(model, q, qd, qdd, f_tip=F, frame=frame, friction=True, data=d),
        "forward_dynamics": lambda d: rd.forward_dynamics(model, q, qd, tau, f_tip=F, frame=frame, data=d),
        "forward_dynamics_via_mass_matrix":
            lambda d: rd.forward_dynamics_via_mass_matrix(model, q, qd, tau, data=d),
        "forward_dynamics_trajectory": lambda d: rd.forward_dynamics_trajectory(model, Q, Q, Q, data=d),
        "inverse_dynamics_trajectory": lambda d: rd.inverse_dynamics_trajectory(model, Q, Q, Q, data=d),
        "mass_matrix": lambda d: rd.mass_matrix(model, q, data=d),
        "mass_matrix_trajectory": lambda d: rd.mass_matrix_trajectory(model, Q, data=d),
        "gravity_torques": lambda d: rd.gravity_torques(model, q, data=d),
        "coriolis_forces": lambda d: rd.coriolis_forces(model, q, qd, data=d),
        "bias_forces": lambda d: rd.bias_forces(model, q, qd, data=d),
        "coriolis_matrix": lambda d: rd.coriolis_matrix(model, q, qd, data=d),
        "christoffel_symbols": lambda d: rd.christoffel_symbols(model, q, data=d),
        "mass_matrix_derivatives": lambda d: rd.mass_matrix_derivatives(model, q, data=d),
        "frame_pose": lambda d: rd.frame_pose(model, q, frame, data=d),
        "jacobian": lambda d: rd.jacobian(model, q, frame, "body", data=d),
        "jacobian_derivative": lambda d: rd.jacobian_derivative(model, q, qd, frame, "world_aligned", data=d),
        "task_space_inertia": lambda d: rd.task_space_inertia(model, q, frame, damping=1e-3, data=d),
        "task_space_bias": lambda d: rd.task_space_bias(model, q, qd, frame, damping=1e-3, data=d),
        "computed_torque": lambda d: rd.computed_torque(model, q, qd, qd, q, qdd, 5.0, 1.0, data=d),
        "euler_step": lambda d: np.array(rd.euler_step(model, q, qd, tau, 0.01, data=d)),
        "semi_implicit_euler_step":
            lambda d: np.array(rd.semi_implicit_euler_step(model, q, qd, tau, 0.01, data=d)),
        "rk4_step": lambda d: np.array(rd.rk4_step(model, q, qd, tau, 0.01, data=d)),
        "simulate": lambda d: rd.simulate(model, q, qd, tau, 0.01, 5, data=d).q,
        "mass_matrix_via_jacobians": lambda d: rd.mass_matrix_via_jacobians(model, q, data=d),
        "kinetic_energy": lambda d: rd.kinetic_energy(model, q, qd, data=d),
        "momentum_balance": lambda d: np.concatenate(rd.momentum_balance(model, q, qd, data=d)),
        "task_space_control": lambda d: rd.task_space_control(
            model, q, qd, rd.frame_pose(model, qd, frame, data=d), frame=frame, damping=1e-3, data=d),
        "pose_error":
            lambda d: rd.pose_error(model, q, rd.frame_pose(model, qd, frame, data=d), frame, data=d),
        "joint_torque_regressor": lambda d: rd.joint_torque_regressor(model, q, qd, qdd, data=d),
        "inverse_dynamics_derivatives":
            lambda d: np.concatenate(rd.inverse_dynamics_derivatives(model, q, qd, qdd, data=d)),
        "forward_dynamics_derivatives":
            lambda d: np.concatenate(rd.forward_dynamics_derivatives(model, q, qd, tau, data=d)),
        "linearize": lambda d: np.concatenate(rd.linearize(model, q, qd, tau, 0.01, data=d), axis=1),
        "linearize_trajectory":
            lambda d: np.concatenate(rd.linearize_trajectory(model, Q, Q, Q, 0.01, data=d), axis=2),
        "joint_torque_regressor_trajectory":
            lambda d: rd.joint_torque_regressor_trajectory(model, Q, Q, Q, data=d),
        "external_wrench": lambda d: rd.external_wrench(model, q, tau, frame, "world_aligned", 1e-3, data=d),
        "potential_energy": lambda d: rd.potential_energy(model, q, data=d),
        "compute_all_terms": lambda d: np.concatenate([x.ravel() for x in rd.compute_all_terms(
            model, q, qd, frame, "world_aligned", damping=1e-3, data=d)]),
        "closed_form_dynamics":
            lambda d: np.concatenate([rd.closed_form_dynamics(model, q, qd, data=d).M.ravel(),
                                      rd.closed_form_dynamics(model, q, qd, data=d).c]),
    }
    return calls


def test_every_call_with_a_data_argument_is_covered():
    takes_data = {name for name in rd.__all__
                  if callable(getattr(rd, name)) and not inspect.isclass(getattr(rd, name))
                  and "data" in inspect.signature(getattr(rd, name)).parameters}
    covered = set(_calls(_ModelStub(), *([np.zeros(1)] * 3), np.random.default_rng(0)))   # names only
    assert takes_data <= covered, f"not covered: {sorted(takes_data - covered)}"


class _ModelStub:
    nq = 1
    frame_names = ("base",)


def test_two_data_objects_give_identical_results(case, states):
    _, model, rng = case
    d1, d2 = rd.Data(model), rd.Data(model)
    for q, qd, qdd in states:
        for name, call in _calls(model, q, qd, qdd, rng).items():
            default = call(None)
            np.testing.assert_array_equal(call(d1), default, err_msg=name)
            np.testing.assert_array_equal(call(d2), default, err_msg=name)


def test_results_do_not_depend_on_what_a_data_computed_before(case, states):
    """Interleave two states on one Data: each result equals the one from a fresh Data."""
    _, model, rng = case
    (qa, qda, qdda), (qb, qdb, qddb) = states[:2]
    calls_a = _calls(model, qa, qda, qdda, np.random.default_rng(1))
    calls_b = _calls(model, qb, qdb, qddb, np.random.default_rng(1))
    fresh_a = {n: c(rd.Data(model)) for n, c in calls_a.items()}
    fresh_b = {n: c(rd.Data(model)) for n, c in calls_b.items()}
    shared = rd.Data(model)
    for name in calls_a:
        np.testing.assert_array_equal(calls_b[name](shared), fresh_b[name], err_msg=name)
        np.testing.assert_array_equal(calls_a[name](shared), fresh_a[name], err_msg=name)


def test_threads_with_their_own_data(model):
    """Two threads, one Data each, many calls: the same results as in one thread."""
    rng = np.random.default_rng(3)
    states = [random_state(model, rng) for _ in range(20)]
    expected = [(rd.inverse_dynamics(model, q, qd, qdd), rd.mass_matrix(model, q)) for q, qd, qdd in states]
    results, errors = {}, []

    def work(k):
        data = rd.Data(model)
        try:
            results[k] = [(rd.inverse_dynamics(model, q, qd, qdd, data=data),
                           rd.mass_matrix(model, q, data=data))
                          for _ in range(5) for q, qd, qdd in states]
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(2):
        for got, want in zip(results[k], expected * 5):
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])


def test_calls_with_a_data_leave_the_default_workspace_alone(case, states):
    """Every call given data= works in that Data only: the model's default workspace is not written
    (before, potential_energy and closed_form_dynamics always used it)."""
    _, model, rng = case
    q, qd, qdd = states[0]
    before = model._data.buffer.copy()
    data = rd.Data(model)
    for name, call in _calls(model, q, qd, qdd, rng).items():
        call(data)
        np.testing.assert_array_equal(model._data.buffer, before, err_msg=name)
