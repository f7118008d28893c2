"""Threads for the batch calls: how many, and the one way a batch is split across them.

A batch call (N states, B rollouts) computes each sample independently of the others, so it is cut
into contiguous chunks of samples, one per thread, each chunk computed by the same compiled loop the
single-thread call runs, in its own workspace, into its own rows of the result. No sum crosses a
chunk boundary, so the results are bit for bit those of one thread, for any thread count.

- ``set_num_threads(n)`` / ``get_num_threads()``: the process's thread count for batch calls. The
  default is the environment variable ``ROBOT_DYNAMICS_ROS_NUM_THREADS`` when set, else the cores this
  process may run on (``os.sched_getaffinity``).
- ``run_chunks(count, work, min_chunk, workspace)``: ``work(start, stop)`` over contiguous ranges
  that cover ``range(count)``, at most one range per thread and none shorter than ``min_chunk``
  samples; with a ``workspace`` (a model's Data buffer), ``work(start, stop, own)`` where ``own`` is
  that range's copy of it (1 µs), so no two ranges write one workspace. The calling thread computes
  the first range itself; the others go to a pool of ``n - 1`` threads made
  on first use (so a process that never asks for more than one thread never starts one). A range's
  compiled loop releases the GIL (its entry point is declared ``nogil``), so the ranges run at once.
  The first error raised by any range is raised to the caller once every range has ended.

How long a range should be (each module's ``MIN_CHUNK``, in samples): at least 0.15 ms of work on a
7-joint arm, twice what handing a range to a pool thread costs (25-80 µs: a thread's wake-up, twice;
doc/performance.md, "Batch calls on several threads"), so a split never costs more than it saves.

A batch too small to split (``count < 2 * min_chunk``), a thread count of 1, or a call made from
inside a pool thread (a batch call inside a batch call) runs ``work(0, count)`` in the calling thread:
no thread start-up, no hand-off. Single-state calls never come here.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

ENVIRONMENT_VARIABLE = "ROBOT_DYNAMICS_ROS_NUM_THREADS"


def _threads_from(value, name):
    """`value` as a thread count (an int >= 1), or a ValueError naming it."""
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if isinstance(value, bool) or n < 1 or (not isinstance(value, str) and n != value):
        raise ValueError(f"{name} must be a whole number of threads >= 1, got {value!r}")
    return n


def _default_threads():
    """ROBOT_DYNAMICS_ROS_NUM_THREADS when set, else the cores this process may run on."""
    value = os.environ.get(ENVIRONMENT_VARIABLE)
    if value is not None and value.strip():
        return _threads_from(value.strip(), ENVIRONMENT_VARIABLE)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


_LOCK = threading.Lock()                       # guards _SETTING's changes
_SETTING = {"threads": _default_threads(), "pool": None, "pid": os.getpid()}
_IN_POOL = threading.local()                   # .busy is True inside a pool thread's range


def set_num_threads(n: int) -> None:
    """Use `n` threads (>= 1) for the batch calls from now on (calls under way keep theirs)."""
    n = _threads_from(n, "n")
    with _LOCK:
        if n != _SETTING["threads"]:
            pool, _SETTING["pool"] = _SETTING["pool"], None
            _SETTING["threads"] = n
            if pool is not None:
                pool.shutdown(wait=False)   # its threads end once their ranges under way have


def get_num_threads() -> int:
    """The number of threads the batch calls use."""
    return _SETTING["threads"]


def _pool(threads):
    """The pool of threads - 1 workers (made on first use, remade after set_num_threads, and in a
    process forked from one that had a pool: the fork has none of its threads, and the copied pool,
    believing a worker idle, would queue ranges that nothing runs)."""
    with _LOCK:
        pool = _SETTING["pool"]
        if pool is None or pool._max_workers != threads - 1 or _SETTING["pid"] != os.getpid():
            pool = _SETTING["pool"] = ThreadPoolExecutor(max_workers=threads - 1,
                                                         thread_name_prefix="robot_dynamics_ros-batch")
            _SETTING["pid"] = os.getpid()
        return pool


def chunk_bounds(count: int, parts: int) -> list[tuple[int, int]]:
    """`parts` contiguous (start, stop) ranges covering range(count), lengths differing by at most 1."""
    size, extra = divmod(count, parts)
    bounds, start = [], 0
    for i in range(parts):
        stop = start + size + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def _in_pool_thread(work, start, stop):
    _IN_POOL.busy = True
    try:
        work(start, stop)
    finally:
        _IN_POOL.busy = False


def run_chunks(count: int, work: Callable[..., None], min_chunk: int = 1, workspace=None) -> None:
    """work(start, stop) over contiguous ranges covering range(count) (module docstring): at most
    get_num_threads() ranges, each of at least `min_chunk` samples; the first range in the calling
    thread. With a `workspace` (an array), work(start, stop, own): `own` is the range's own copy of it.
    Returns once every range has ended; raises the first error of any range."""
    def run(start, stop):               # one range, in its own copy of the workspace when there is one
        if workspace is None:
            work(start, stop)
        else:
            work(start, stop, workspace.copy())
    threads = get_num_threads()
    parts = min(threads, count // max(int(min_chunk), 1))
    if parts <= 1 or getattr(_IN_POOL, "busy", False):
        run(0, count)
        return
    first, *rest = chunk_bounds(count, parts)
    futures = [_pool(threads).submit(_in_pool_thread, run, start, stop) for start, stop in rest]
    error = None
    try:
        run(*first)
    except BaseException as e:      # raised below, after the other ranges end
        error = e
    for future in futures:          # every range ends before the caller sees its arrays
        try:
            future.result()
        except BaseException as e:
            error = error or e
    if error is not None:
        raise error
