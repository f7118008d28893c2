"""simulate_batch: B independent rollouts, each bit for bit simulate's, for every method and any
thread count (1, 2, 3: the rollouts split into ranges run in threads.run_chunks's pool, each range one
GIL-free call with a workspace of its own); the result's shapes; bad input refused naming the
argument; a diverging rollout named; and the model's default Data, which GIL-holding calls from other
threads use at the same time, left alone."""
import os
import sysconfig
import threading

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.kernels import entries

from _random_trees import random_state, random_tree

PANDA = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                     "robots", "panda_description", "urdf", "panda.urdf")
needs_panda = pytest.mark.skipif(not os.path.isfile(PANDA), reason="example-robot-data is not installed")
METHODS = ("rk4", "semi_implicit_euler", "euler")
ROLLOUTS = 7        # odd: ranges of unequal length
STEPS = 60          # enough work per rollout that 7 rollouts split into 2 and 3 ranges (MIN_STEPS_PER_RANGE)
DT = 1e-3


@pytest.fixture
def threads():
    """set the thread count for the test; restored afterwards."""
    before = rd.get_num_threads()
    yield rd.set_num_threads
    rd.set_num_threads(before)


def _rollout_inputs(model, seed, count=ROLLOUTS, steps=STEPS):
    rng = np.random.default_rng(seed)
    states = [random_state(model, rng, scale=0.5) for _ in range(count)]
    q0 = np.array([s[0] for s in states])
    qd0 = np.array([s[1] for s in states])
    tau = rng.normal(scale=2.0, size=(count, steps, model.nq))
    return q0, qd0, tau


def _models():
    """name -> (model, frame of the tip wrench): a random tree with prismatic joints and fixed links,
    and the Panda with its mimic finger (forward dynamics through M_r, not the ABA)."""
    models = {"tree": rd.load_urdf(random_tree(41, 6).to_urdf())}
    models["tree"] = (models["tree"], models["tree"].frame_names[-1])
    if os.path.isfile(PANDA):
        models["panda-mimic"] = (rd.load_urdf(PANDA), "panda_hand")
    return models


MODELS = _models()


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("count", (1, 2, 3))
def test_each_rollout_is_simulate_bit_for_bit(name, method, count, threads):
    """np.array_equal, not a tolerance: every rollout runs the compiled loop simulate runs. With a
    wrench per rollout and the URDF's friction, so that every argument reaches every rollout's steps."""
    model, frame = MODELS[name]
    q0, qd0, tau = _rollout_inputs(model, seed=len(name) + METHODS.index(method))
    f_tip = np.random.default_rng(3).normal(scale=5.0, size=(ROLLOUTS, 6))
    threads(count)
    result = rd.simulate_batch(model, q0, qd0, tau, DT, method=method, f_tip=f_tip, frame=frame,
                               friction=True)
    assert result.q.shape == result.qd.shape == (ROLLOUTS, STEPS + 1, model.nq)
    for b in range(ROLLOUTS):
        alone = rd.simulate(model, q0[b], qd0[b], tau[b], DT, STEPS, method=method, f_tip=f_tip[b],
                            frame=frame, friction=True)
        assert np.array_equal(result.q[b], alone.q), f"rollout {b}: q differs from simulate's"
        assert np.array_equal(result.qd[b], alone.qd), f"rollout {b}: qd differs from simulate's"
    assert not np.array_equal(result.q[0], result.q[1])     # the rollouts are not one repeated


def test_one_wrench_for_every_rollout_equals_it_repeated(threads):
    model, frame = MODELS["tree"]
    q0, qd0, tau = _rollout_inputs(model, seed=5)
    wrench = np.array([0.5, -1.0, 0.2, 3.0, 0.0, -4.0])
    threads(2)
    shared = rd.simulate_batch(model, q0, qd0, tau, DT, f_tip=wrench, frame=frame)
    repeated = rd.simulate_batch(model, q0, qd0, tau, DT, f_tip=np.tile(wrench, (ROLLOUTS, 1)), frame=frame)
    free = rd.simulate_batch(model, q0, qd0, tau, DT)
    assert np.array_equal(shared.q, repeated.q) and np.array_equal(shared.qd, repeated.qd)
    assert not np.array_equal(shared.q, free.q)


def test_result_shapes_times_and_unpacking():
    model, _ = MODELS["tree"]
    q0, qd0, tau = _rollout_inputs(model, seed=6, count=3, steps=4)
    result = rd.simulate_batch(model, q0, qd0, tau, 0.01)
    assert result.t.shape == (5,) and np.array_equal(result.t, 0.01 * np.arange(5))
    assert result.q.shape == result.qd.shape == (3, 5, model.nq)
    assert result.tau.shape == (3, 4, model.nq) and np.array_equal(result.tau, tau)
    q, qd = result
    assert q is result.q and qd is result.qd
    assert np.array_equal(q[:, 0], q0) and np.array_equal(qd[:, 0], qd0)
    initial = rd.simulate_batch(model, q0, qd0, np.zeros((3, 0, model.nq)), 0.01)     # steps = 0
    assert initial.q.shape == (3, 1, model.nq) and np.array_equal(initial.q[:, 0], q0)
    listed = rd.simulate_batch(model, q0.tolist(), qd0.tolist(), tau.tolist(), 0.01)   # converted forms
    assert np.array_equal(listed.q, result.q)


def test_the_default_data_is_left_to_the_other_threads(threads):
    """A thread computing M(q) on the model's default Data over and over (GIL-holding calls) while
    simulate_batch runs its GIL-free ranges on two threads: both get exactly what they get alone. A
    range writing into the default Data would corrupt the other thread's M (and its own states)."""
    model, _ = MODELS["tree"]
    q0, qd0, tau = _rollout_inputs(model, seed=8, count=9, steps=400)
    threads(1)
    expected = rd.simulate_batch(model, q0, qd0, tau, DT)
    q_other = np.random.default_rng(9).uniform(-1.0, 1.0, (16, model.nq))
    M_expected = [rd.mass_matrix(model, q) for q in q_other]
    threads(2)
    stop, wrong, calls = threading.Event(), [], [0]

    def other():
        while not stop.is_set():
            for q, M in zip(q_other, M_expected):
                if not np.array_equal(rd.mass_matrix(model, q), M):
                    wrong.append(q)
                calls[0] += 1
    worker = threading.Thread(target=other)
    worker.start()
    try:
        results = [rd.simulate_batch(model, q0, qd0, tau, DT) for _ in range(5)]
    finally:
        stop.set()
        worker.join()
    assert calls[0] > 0 and not wrong
    for result in results:
        assert np.array_equal(result.q, expected.q) and np.array_equal(result.qd, expected.qd)


@pytest.mark.skipif(not hasattr(entries.simulate_batch, "targetoptions"), reason="NUMBA_DISABLE_JIT=1")
def test_the_range_entry_releases_the_gil():
    """Each range's call can run beside the others only if its compiled entry is declared nogil."""
    assert entries.simulate_batch.targetoptions.get("nogil") is True


@pytest.mark.parametrize("count", (1, 2))
def test_a_diverging_rollout_is_named(count, threads):
    """Rollouts 2 and 5 start too fast for the step (their states overflow); the first is named, with
    simulate's message, whichever thread ran it."""
    model, _ = MODELS["tree"]
    q0, qd0, tau = _rollout_inputs(model, seed=10)
    qd0[[2, 5]] = 1e200
    with pytest.raises(ValueError, match="simulation diverged") as alone:
        rd.simulate(model, q0[2], qd0[2], tau[2], DT, STEPS)
    threads(count)
    with pytest.raises(ValueError) as batch:
        rd.simulate_batch(model, q0, qd0, tau, DT)
    assert str(batch.value) == f"rollout 2: {alone.value}"


N = MODELS["tree"][0].nq
Q0, QD0, TAU = _rollout_inputs(MODELS["tree"][0], seed=11, count=3, steps=5)


def _with(array, index, value):
    out = np.array(array, dtype=float)
    out[index] = value
    return out


BAD = [
    (dict(q0=Q0[0]), "q0"),                                   # one state, not a batch
    (dict(q0=Q0[:, :-1]), "q0"),
    (dict(q0=_with(Q0, (1, 0), np.nan)), "q0"),
    (dict(q0=np.zeros((0, N)), qd0=np.zeros((0, N)), tau=np.zeros((0, 5, N))), "q0"),   # B = 0
    (dict(qd0=QD0[:2]), "qd0"),
    (dict(qd0=_with(QD0, (2, 1), np.inf)), "qd0"),
    (dict(tau=TAU[:, 0]), "tau"),                             # (B, n): no steps axis
    (dict(tau=TAU[:2]), "tau"),
    (dict(tau=TAU[..., :-1]), "tau"),
    (dict(tau=_with(TAU, (0, 3, 1), np.nan)), "tau"),
    (dict(tau=lambda t, q, qd: np.zeros(N)), "tau"),          # a controller: simulate's, not a batch's
    (dict(dt=0.0), "dt"),
    (dict(dt=-1e-3), "dt"),
    (dict(dt=np.nan), "dt"),
    (dict(dt=np.inf), "dt"),
    (dict(dt="0.001"), "dt"),
    (dict(method="midpoint"), "method"),
    (dict(f_tip=np.ones(5)), "f_tip"),
    (dict(f_tip=np.ones((2, 6))), "f_tip"),
    (dict(f_tip=_with(np.ones(6), 0, np.nan)), "f_tip"),
    (dict(f_tip=np.ones(6), frame="no_such_frame"), "frame"),
    (dict(friction=(-0.1, 0.0)), "viscous"),
    (dict(friction="yes"), "friction"),
]


@pytest.mark.parametrize("changes, name", BAD, ids=[f"{name}-{i}" for i, (_, name) in enumerate(BAD)])
def test_bad_input_raises_naming_the_argument(changes, name):
    model, frame = MODELS["tree"]
    arguments = dict(q0=Q0, qd0=QD0, tau=TAU, dt=DT, frame=frame) | changes
    with pytest.raises(ValueError, match=name):
        rd.simulate_batch(model, **arguments)
