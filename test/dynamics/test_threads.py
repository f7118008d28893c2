"""Calls without data= from several threads: single-state calls share the model's default Data, batch
calls run beside them, and each returns exactly what it returns in a single thread.

Why this holds: every single-state kernel is compiled without nogil, so it holds the GIL for its whole
call, and it uses the workspace only inside that call (results go to arrays the Python layer
allocated per call). The batch calls' kernels release the GIL, so they never touch the default Data:
each range of states (threads.run_chunks) works in its own copy of the buffer. What this test would
catch: a function that returned a view of a shared buffer (its results all alias the last state
computed by any thread), one that read a result back from the workspace after its kernel returned
(another thread's kernel may have run in between; the switch interval is set to 1 µs so that threads
switch at almost every opportunity), a single-state kernel compiled with nogil, or a batch call whose
ranges worked in the default Data (the single-state calls of the other threads then write into its
workspace while it runs without the GIL). With NUMBA_DISABLE_JIT=1 the kernels run as Python, threads
switch inside them and the shared workspace races (this test then fails): there, one Data per thread.
"""
import pathlib
import sys
import threading

import numba
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

from _random_trees import random_state, random_tree

UR5E = pathlib.Path(__file__).resolve().parents[2] / "urdf" / "ur5e.urdf"
THREADS = 4
STATES = 8          # per thread, each thread its own
ROUNDS = 6          # every thread goes over its states this many times


def _mix(model):
    """name -> f(q, qd, qdd, tau) -> array: a mix of public calls, none given data=."""
    frame = model.frame_names[-1]
    return {
        "inverse_dynamics": lambda q, qd, qdd, tau: rd.inverse_dynamics(model, q, qd, qdd),
        "mass_matrix": lambda q, qd, qdd, tau: rd.mass_matrix(model, q),
        "forward_dynamics": lambda q, qd, qdd, tau: rd.forward_dynamics(model, q, qd, tau),
        "coriolis_matrix": lambda q, qd, qdd, tau: rd.coriolis_matrix(model, q, qd),
        "jacobian": lambda q, qd, qdd, tau: rd.jacobian(model, q, frame, "body"),
        "task_space_inertia": lambda q, qd, qdd, tau: rd.task_space_inertia(model, q, frame, damping=1e-3),
        "kinetic_energy": lambda q, qd, qdd, tau: rd.kinetic_energy(model, q, qd),
        "potential_energy": lambda q, qd, qdd, tau: rd.potential_energy(model, q),
        "simulate": lambda q, qd, qdd, tau: rd.simulate(model, q, qd, tau, 0.005, 4),
        # one kernel call per step, Python (the controller) in between: the threads interleave steps
        "simulate_controlled": lambda q, qd, qdd, tau: rd.simulate(model, q, qd, lambda t, q_, qd_: tau - qd_,
                                                                   0.005, 3, method="semi_implicit_euler"),
    }


def _batch_mix(model, Q, QD, QDD, TAU):
    """name -> f() -> result: the batch calls, none given data=, on BATCH states: enough that two
    threads split each (every MIN_CHUNK <= BATCH // 2; linearize_trajectory on its first 25)."""
    return {
        "inverse_dynamics_trajectory": lambda: rd.inverse_dynamics_trajectory(model, Q, QD, QDD),
        "forward_dynamics_trajectory": lambda: rd.forward_dynamics_trajectory(model, Q, QD, TAU),
        "mass_matrix_trajectory": lambda: rd.mass_matrix_trajectory(model, Q),
        "joint_torque_regressor_trajectory": lambda: rd.joint_torque_regressor_trajectory(model, Q, QD, QDD),
        "linearize_trajectory": lambda: rd.linearize_trajectory(model, Q[:25], QD[:25], TAU[:25], 0.005),
        "identify_payload": lambda: rd.identify_payload(model, Q, QD, QDD, TAU, consistent=False),
    }


BATCH = 801


def _arrays(result):
    """The arrays of a result (a SimulationResult gives q, qd and the applied torques; a payload
    estimate its numbers), as they are."""
    if isinstance(result, rd.SimulationResult):
        return (result.q, result.qd, result.tau)
    if isinstance(result, rd.PayloadEstimate):
        return (np.array([result.mass, result.residual_rms, result.condition]), result.com, result.inertia)
    if isinstance(result, tuple):
        return result
    return (result,)


def _snapshot(result):
    return tuple(np.array(a, copy=True) for a in _arrays(result))


def _run_switching_often(threads):
    """Start the threads and wait for them, the switch interval set to 1 µs meanwhile, so that threads
    switch at almost every opportunity."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)


@pytest.fixture(scope="module", params=["ur5e", "random-tree"])
def model(request):
    if request.param == "ur5e":
        return rd.load_urdf(str(UR5E))
    return rd.load_urdf(random_tree(214, 9).to_urdf())


@pytest.mark.skipif(numba.config.DISABLE_JIT,
                    reason="uncompiled kernels do not hold the GIL for a whole call")
def test_threads_sharing_the_default_data_get_single_thread_results(model):
    mix = _mix(model)
    rngs = [np.random.default_rng(500 + k) for k in range(THREADS)]
    states = [[(*random_state(model, rng), rng.normal(size=model.nq)) for _ in range(STATES)] for rng in rngs]
    # single-threaded reference, copied at once: a result that aliases shared memory cannot fake it
    expected = [[{name: _snapshot(f(*s)) for name, f in mix.items()} for s in thread_states]
                for thread_states in states]

    start = threading.Barrier(THREADS)
    results = [[] for _ in range(THREADS)]
    errors = []

    def work(k):
        try:
            start.wait()
            for r in range(ROUNDS):
                order = range(STATES) if (k + r) % 2 == 0 else reversed(range(STATES))
                for i in order:
                    for name, f in mix.items():
                        results[k].append((i, name, f(*states[k][i])))     # kept as returned, not copied
        except Exception as e:  # reported below
            errors.append(f"thread {k}: {type(e).__name__}: {e}")

    _run_switching_often([threading.Thread(target=work, args=(k,)) for k in range(THREADS)])

    assert not errors, "\n".join(errors)
    wrong = []
    for k in range(THREADS):
        assert len(results[k]) == ROUNDS * STATES * len(mix)
        for i, name, got in results[k]:
            got_arrays, want = _arrays(got), expected[k][i][name]
            if not all(np.array_equal(g, w) for g, w in zip(got_arrays, want, strict=True)):
                wrong.append(f"thread {k}, state {i}: {name}")
    assert not wrong, (f"{len(wrong)} results differ from the single-threaded ones, e.g.\n"
                       + "\n".join(wrong[:10]))


def _compare(results, expected):
    """'thread k, <what>: name' for every result that differs from its single-threaded one."""
    wrong = []
    for k, thread_results in results.items():
        for what, name, got in thread_results:
            want = expected[k][what][name]
            if not all(np.array_equal(g, w) for g, w in zip(_arrays(got), want, strict=True)):
                wrong.append(f"thread {k}, {what}: {name}")
    return wrong


@pytest.mark.skipif(numba.config.DISABLE_JIT,
                    reason="uncompiled kernels do not hold the GIL for a whole call")
def test_batch_calls_beside_single_calls_sharing_the_default_data(model):
    """Two threads make batch calls (each split into two ranges, its second in the pool's thread, all
    without the GIL) while two others make single-state calls in the model's default Data, until the
    batch calls end: every result equals the single-threaded one."""
    before = rd.get_num_threads()
    rd.set_num_threads(2)
    mix = _mix(model)
    rngs = [np.random.default_rng(700 + k) for k in range(4)]
    batches = {k: _batch_mix(model, *(rng.normal(size=(BATCH, model.nq)) for _ in range(4)))
               for k, rng in enumerate(rngs[:2])}
    states = {k: [(*random_state(model, rng), rng.normal(size=model.nq)) for _ in range(STATES)]
              for k, rng in enumerate(rngs[2:], start=2)}
    expected = {k: {"batch": {name: _snapshot(f()) for name, f in batch.items()}}
                for k, batch in batches.items()}
    expected.update({k: {i: {name: _snapshot(f(*s)) for name, f in mix.items()} for i, s in enumerate(ss)}
                     for k, ss in states.items()})
    start = threading.Barrier(4)
    results, errors, workers = {k: [] for k in range(4)}, [], []

    def batch_work(k):
        try:
            start.wait()
            for _ in range(3):
                for name, f in batches[k].items():
                    results[k].append(("batch", name, f()))
        except Exception as e:  # reported below
            errors.append(f"thread {k}: {type(e).__name__}: {e}")

    def single_work(k):
        try:
            start.wait()
            while any(t.is_alive() for t in workers[:2]):     # the batch threads
                for i, s in enumerate(states[k]):
                    for name, f in mix.items():
                        results[k].append((i, name, f(*s)))
        except Exception as e:  # reported below
            errors.append(f"thread {k}: {type(e).__name__}: {e}")

    workers += [threading.Thread(target=batch_work, args=(k,)) for k in range(2)]
    workers += [threading.Thread(target=single_work, args=(k,)) for k in range(2, 4)]
    try:
        _run_switching_often(workers)
    finally:
        rd.set_num_threads(before)

    assert not errors, "\n".join(errors)
    assert all(len(results[k]) == 3 * len(batches[k]) for k in range(2))
    assert all(len(results[k]) >= len(mix) for k in range(2, 4))
    wrong = _compare(results, expected)
    assert not wrong, (f"{len(wrong)} results differ from the single-threaded ones, e.g.\n"
                       + "\n".join(wrong[:10]))
