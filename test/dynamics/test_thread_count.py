"""robot_dynamics_ros.dynamics.threads: the thread count (set/get, the environment variable, bad
values refused by name) and run_chunks's ranges (cover every sample once, in order, the first in the
calling thread, errors raised after every range ended, no split below min_chunk or inside a range)."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics import threads


@pytest.fixture
def two_threads():
    before = rd.get_num_threads()
    rd.set_num_threads(2)
    yield
    rd.set_num_threads(before)


def test_default_is_the_environment_variable_or_the_cores():
    code = "from robot_dynamics_ros import dynamics as rd; print(rd.get_num_threads())"
    env = {k: v for k, v in os.environ.items() if k != threads.ENVIRONMENT_VARIABLE}
    cores = len(os.sched_getaffinity(0))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout) == cores
    out = subprocess.run([sys.executable, "-c", code], env={**env, threads.ENVIRONMENT_VARIABLE: "3"},
                         capture_output=True, text=True, check=True)
    assert int(out.stdout) == 3
    bad = subprocess.run([sys.executable, "-c", code], env={**env, threads.ENVIRONMENT_VARIABLE: "many"},
                         capture_output=True, text=True)
    assert bad.returncode != 0 and threads.ENVIRONMENT_VARIABLE in bad.stderr


@pytest.mark.parametrize("bad", [0, -1, 1.5, "two", None, True])
def test_bad_thread_count_is_refused_by_name(bad):
    before = rd.get_num_threads()
    with pytest.raises(ValueError, match="^n must be"):
        rd.set_num_threads(bad)
    assert rd.get_num_threads() == before


def test_set_and_get(two_threads):
    assert rd.get_num_threads() == 2
    rd.set_num_threads(1)
    assert rd.get_num_threads() == 1


@pytest.mark.parametrize("count, parts", [(10, 3), (7, 7), (5, 1), (0, 2), (1000, 2)])
def test_chunk_bounds_cover_in_order(count, parts):
    bounds = threads.chunk_bounds(count, parts)
    assert len(bounds) == parts and bounds[0][0] == 0 and bounds[-1][1] == count
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    sizes = [stop - start for start, stop in bounds]
    assert max(sizes) - min(sizes) <= 1


def test_ranges_run_in_threads_first_in_the_caller(two_threads):
    seen = []
    lock = threading.Lock()

    def work(start, stop):
        with lock:
            seen.append((start, stop, threading.current_thread() is threading.main_thread()))
    threads.run_chunks(100, work, min_chunk=10)
    assert sorted((a, b) for a, b, _ in seen) == [(0, 50), (50, 100)]
    assert [main for a, _, main in seen if a == 0] == [True]
    assert [main for a, _, main in seen if a == 50] == [False]


def test_each_range_gets_its_own_copy_of_the_workspace(two_threads):
    workspace = np.arange(5.0)
    copies = {}

    def work(start, stop, own):
        copies[start] = own
        own[:] = -1.0                   # a range writes its copy only
    threads.run_chunks(100, work, min_chunk=10, workspace=workspace)
    assert sorted(copies) == [0, 50]
    assert copies[0] is not copies[50] and not np.shares_memory(copies[0], copies[50])
    assert not any(np.shares_memory(own, workspace) for own in copies.values())
    np.testing.assert_array_equal(workspace, np.arange(5.0))


def test_no_split_below_min_chunk_or_with_one_thread(two_threads):
    seen = []
    threads.run_chunks(19, lambda a, b: seen.append((a, b)), min_chunk=10)
    rd.set_num_threads(1)
    threads.run_chunks(1000, lambda a, b: seen.append((a, b)), min_chunk=1)
    assert seen == [(0, 19), (0, 1000)]


def test_nested_call_runs_in_its_pool_thread(two_threads):
    inner = []

    def work(start, stop):
        threads.run_chunks(stop - start, lambda a, b: inner.append((start, a, b)))
    threads.run_chunks(4, work)
    assert sorted(inner) == [(0, 0, 1), (0, 1, 2), (2, 0, 2)]


def test_an_error_in_a_pool_range_reaches_the_caller_after_all_ranges(two_threads):
    ended = []

    def work(start, stop):
        if start > 0:
            raise ValueError("range two")
        ended.append(start)
    with pytest.raises(ValueError, match="range two"):
        threads.run_chunks(10, work)
    assert ended == [0]
