"""The batch calls on 1, 2 and 3 threads (set_num_threads; threads.run_chunks cuts the states into
contiguous ranges, each computed by the same compiled loop in its own copy of the workspace): bit for
bit the same results (np.array_equal, not allclose: no sum crosses a range), with and without data=,
and the same ValueError when a state in any range cannot be computed (a range in a pool thread raises
it to the caller).

Each call gets N = 3 * its MIN_CHUNK + 1 states (odd), so that 2 and 3 threads do cut it into 2 and 3
ranges of unequal lengths.
"""
import importlib

import numpy as np
import pytest
from test_mimic import _urdf, coupled_chain_joints

from robot_dynamics_ros import dynamics as rd

from _random_trees import random_tree

THREAD_COUNTS = (1, 2, 3)
MODELS = {
    "chain-with-prismatic": lambda: rd.load_urdf(random_tree(300, 6, chain=True).to_urdf()),
    "random-tree": lambda: rd.load_urdf(random_tree(214, 9).to_urdf()),
    "mimic": lambda: rd.load_urdf(_urdf(coupled_chain_joints(), 5)),     # q̈ through M_r (fd_mimic)
}


def _minimum(module, name="MIN_CHUNK"):
    return getattr(importlib.import_module(f"robot_dynamics_ros.dynamics.{module}"), name)


def _states(model, N, seed):
    rng = np.random.default_rng(seed)
    lower, upper = np.maximum(model.lower, -np.pi), np.minimum(model.upper, np.pi)
    q = rng.uniform(lower, upper, (N, model.nq))
    return q, rng.normal(size=(N, model.nq)), rng.normal(size=(N, model.nq)), rng.normal(size=(N, model.nq))


def _batch_calls(model):
    """name -> (N, f(data) -> tuple of arrays): every batch call that splits across threads."""
    def sized(module, name="MIN_CHUNK"):
        N = 3 * _minimum(module, name) + 1
        assert N % 2 == 1
        return N, _states(model, N, seed=N)

    frame = model.frame_names[-1]
    calls = {}
    N, (q, qd, qdd, tau) = sized("inverse_dynamics")
    tips = np.random.default_rng(7).normal(size=(N, 6))
    calls["inverse_dynamics_trajectory"] = N, lambda d: (
        rd.inverse_dynamics_trajectory(model, q, qd, qdd, data=d),)
    calls["inverse_dynamics_trajectory (f_tip)"] = N, lambda d: (
        rd.inverse_dynamics_trajectory(model, q, qd, qdd, f_tip=tips, frame=frame, friction=True, data=d),)
    calls["mass_matrix_trajectory"] = N, lambda d: (rd.mass_matrix_trajectory(model, q, data=d),)
    N, (q2, qd2, _, tau2) = sized("forward_dynamics")
    calls["forward_dynamics_trajectory"] = N, lambda d: (
        rd.forward_dynamics_trajectory(model, q2, qd2, tau2, friction=True, data=d),)
    N, (q3, qd3, qdd3, _) = sized("identification")
    calls["joint_torque_regressor_trajectory"] = N, lambda d: (
        rd.joint_torque_regressor_trajectory(model, q3, qd3, qdd3, data=d),)
    N, (q4, qd4, _, tau4) = sized("derivatives")
    for method in ("rk4", "euler"):
        calls[f"linearize_trajectory ({method})"] = N, lambda d, method=method: rd.linearize_trajectory(
            model, q4, qd4, tau4, 0.002, method, data=d)
    N, (q5, qd5, qdd5, tau5) = sized("identification", "PAYLOAD_MIN_CHUNK")
    calls["identify_payload"] = N, lambda d: _payload_arrays(rd.identify_payload(model, q5, qd5, qdd5, tau5,
                                                                                 consistent=False))
    return calls


def _payload_arrays(estimate):
    return (np.array([estimate.mass, estimate.residual_rms, estimate.condition]), estimate.com,
            estimate.inertia)


@pytest.fixture(scope="module", params=list(MODELS))
def model(request):
    return MODELS[request.param]()


@pytest.fixture
def restore_threads():
    before = rd.get_num_threads()
    yield
    rd.set_num_threads(before)


def test_every_batch_call_gives_the_same_bits_on_any_thread_count(model, restore_threads):
    for name, (N, call) in _batch_calls(model).items():
        rd.set_num_threads(1)
        reference = tuple(np.array(a, copy=True) for a in call(None))
        for threads in THREAD_COUNTS:
            rd.set_num_threads(threads)
            for data in (None, rd.Data(model)):
                got = call(data)
                assert len(got) == len(reference)
                for a, b in zip(got, reference):
                    assert a.shape == b.shape and np.array_equal(a, b), \
                        f"{name}, N = {N}, {threads} threads, data={'given' if data else 'None'}"


def test_identify_robot_gives_the_same_bits_on_any_thread_count(restore_threads):
    """identify_robot's regressor stack (full_regressor) over 2001 samples: one range per thread."""
    model = MODELS["chain-with-prismatic"]()
    N = 2001
    q, qd, qdd, _ = _states(model, N, seed=3)
    tau = rd.inverse_dynamics_trajectory(model, q, qd, qdd, friction=True)
    t = np.arange(N) * 1e-3
    estimates = []
    for threads in THREAD_COUNTS:
        rd.set_num_threads(threads)
        est = rd.identify_robot(model, t, q, tau, qd=qd, qdd=qdd, consistent=False)
        estimates.append((est.base_values, est.residual_rms, est.offset))
    for other in estimates[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(other, estimates[0]))


# -- errors raised in a range -------------------------------------------------------------------------
def _prismatic_at(model, q, value):
    q = np.array(q)
    q[[kind == "prismatic" for kind in model.joint_types]] = value
    return q


def _overflowing_calls(model):
    """name -> (N, f(k, data)): a call whose state k alone overflows, and the message it raises."""
    def sized(module):
        N = 3 * _minimum(module) + 1
        return N, _states(model, N, seed=N)

    calls = {}
    N1, (q, qd, qdd, tau) = sized("inverse_dynamics")

    def huge(x, k, value=1e155):
        x = x.copy()
        x[k] = value
        return x
    calls["inverse_dynamics_trajectory"] = (
        N1, lambda k, d: rd.inverse_dynamics_trajectory(model, q, huge(qd, k), qdd, data=d),
        r"^inverse dynamics tau overflowed: not finite for these finite q, qd, qdd ")
    calls["mass_matrix_trajectory"] = (
        N1, lambda k, d: rd.mass_matrix_trajectory(model, huge(q, k, _prismatic_at(model, q[k], 1e300)),
                                                   data=d),
        r"^M\(q\) overflowed: not finite for this finite q ")
    N2, (q2, qd2, _, tau2) = sized("forward_dynamics")
    calls["forward_dynamics_trajectory"] = (
        N2, lambda k, d: rd.forward_dynamics_trajectory(model, q2, huge(qd2, k), tau2, data=d),
        r"^forward dynamics qdd overflowed: not finite for these finite q, qd, tau ")
    N3, (q3, qd3, qdd3, _) = sized("identification")
    calls["joint_torque_regressor_trajectory"] = (
        N3, lambda k, d: rd.joint_torque_regressor_trajectory(model, q3, huge(qd3, k), qdd3, data=d),
        r"^joint-torque regressor Y overflowed: not finite for these finite q, qd, qdd ")
    N4, (q4, qd4, _, tau4) = sized("derivatives")
    calls["linearize_trajectory"] = (
        N4, lambda k, d: rd.linearize_trajectory(model, q4, huge(qd4, k), tau4, 0.002, data=d),
        r"^an RK4 stage of the step from q\[{k}\], qd\[{k}\], tau\[{k}\] over dt = 0.002 s has no dynamics ")
    return calls


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_state_that_overflows_in_any_range_raises_the_same_error(restore_threads):
    """State k (the first, last, or one in the middle or last range) overflows: on 2 and 3 threads the
    ValueError of one thread, word for word, with data= too; the model works on afterwards."""
    model = MODELS["chain-with-prismatic"]()
    assert "prismatic" in model.joint_types
    for name, (N, call, message) in _overflowing_calls(model).items():
        for k in (0, N // 2, N - 2, N - 1):
            rd.set_num_threads(1)
            with pytest.raises(ValueError, match=message.format(k=k)) as one_thread:
                call(k, None)
            for threads in THREAD_COUNTS:
                rd.set_num_threads(threads)
                for data in (None, rd.Data(model)):
                    with pytest.raises(ValueError) as error:
                        call(k, data)
                    assert str(error.value) == str(one_thread.value), f"{name}, state {k}, {threads} threads"
    q = np.zeros((5, model.nq))
    assert np.all(np.isfinite(rd.inverse_dynamics_trajectory(model, q, q, q)))


@pytest.mark.parametrize("threads", THREAD_COUNTS)
def test_the_first_bad_state_is_the_one_named(threads, restore_threads):
    """Two states that cannot be linearized, in different ranges: linearize_trajectory names the first
    one, as on one thread."""
    model = MODELS["chain-with-prismatic"]()
    rd.set_num_threads(threads)
    N = 3 * _minimum("derivatives") + 1
    q, qd, _, tau = _states(model, N, seed=1)
    qd[N - 3] = qd[N // 2] = 1e155
    with pytest.raises(ValueError, match=rf"q\[{N // 2}\], qd\[{N // 2}\], tau\[{N // 2}\]"):
        rd.linearize_trajectory(model, q, qd, tau, 0.002)


def test_bad_values_are_refused_by_name_before_any_range_runs(restore_threads):
    model = MODELS["random-tree"]()
    rd.set_num_threads(2)
    N = 3 * _minimum("inverse_dynamics") + 1
    q, qd, qdd, tau = _states(model, N, seed=2)
    qd[N - 1, 0] = np.nan
    with pytest.raises(ValueError, match="^qd must be finite"):
        rd.inverse_dynamics_trajectory(model, q, qd, qdd)
    with pytest.raises(ValueError, match="^qd must be finite"):
        rd.forward_dynamics_trajectory(model, q, qd, tau, data=rd.Data(model))
    with pytest.raises(ValueError, match="^data must be a Data made for this model"):
        rd.mass_matrix_trajectory(model, q, data=rd.Data(MODELS["mimic"]()))


FORK = """
import os, sys, time
import numpy as np
from robot_dynamics_ros import dynamics as rd
rd.set_num_threads(2)
model = rd.load_urdf(sys.argv[1])
q = np.random.default_rng(0).normal(size=(801, model.nq))
tau = rd.inverse_dynamics_trajectory(model, q, q, q)          # the pool's thread starts here
pid = os.fork()
if pid == 0:                                                  # the fork: no pool thread of its own
    os._exit(0 if np.array_equal(rd.inverse_dynamics_trajectory(model, q, q, q), tau) else 3)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print("exit", os.waitstatus_to_exitcode(status))
        break
    time.sleep(0.02)
else:
    os.kill(pid, 9)
    print("hung")
"""


def test_a_forked_process_splits_its_batches_too(tmp_path):
    """A process forked after a batch call has none of the pool's threads: its batch calls make a pool
    of their own (a copied pool would queue the second range where no thread runs it: a hang)."""
    import subprocess
    import sys
    urdf = tmp_path / "tree.urdf"
    urdf.write_text(random_tree(214, 9).to_urdf())
    run = subprocess.run([sys.executable, "-c", FORK, str(urdf)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["exit", "0"], run.stdout
