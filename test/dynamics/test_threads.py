"""Calls without data= from several threads: they share the model's default Data, and each returns
exactly what it returns in a single thread.

Why this holds: every kernel is compiled without nogil, so it holds the GIL for its whole call, and
it uses the workspace only inside that call (results go to arrays the Python layer allocated per
call). What this test would catch: a function that returned a view of a shared buffer (its results
all alias the last state computed by any thread), one that read a result back from the workspace
after its kernel returned (another thread's kernel may have run in between; the switch interval is
set to 1 µs so that threads switch at almost every opportunity), or a kernel compiled with nogil.
With NUMBA_DISABLE_JIT=1 the kernels run as Python, threads switch inside them and the shared
workspace races (this test then fails): there, one Data per thread.
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


def _arrays(result):
    """The arrays of a result (a SimulationResult gives q, qd and the applied torques), as they are."""
    if isinstance(result, rd.SimulationResult):
        return (result.q, result.qd, result.tau)
    return (result,)


def _snapshot(result):
    return tuple(np.array(a, copy=True) for a in _arrays(result))


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

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)

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
