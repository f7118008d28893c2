"""The batch calls on 1 and 2 threads (set_num_threads), measured in paired rounds, and numba's
prange beside the package's pool (issue 40).

- paired_rounds(cases, rounds): for every case, each round times the call once with 1 thread and once
  with 2 (which goes first alternates), so that the load of a shared machine hits both alike; the
  figures are the medians over rounds and the 2T/1T ratio the median of the per-round ratios.
- prange_rnea: a throwaway kernel for the comparison only (the package has one mechanism, the pool:
  robot_dynamics_ros/dynamics/threads.py): the RNEA over N states with numba.prange over as many
  contiguous ranges as threads, each range with its own copy of the workspace, calling the same
  inlined recursion (kernels/rnea.py) as the package's rnea_batch. parallel=True, compiled here
  (not cached).
"""
import statistics
import time

import numba
import numpy as np
from numba import njit, prange

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.kernels.rnea import rnea as recursive_newton_euler


def _time(f, args, number):
    t0 = time.perf_counter()
    for _ in range(number):
        f(*args)
    return (time.perf_counter() - t0) / number


def paired_rounds(cases, rounds, number=3, counts=(1, 2)):
    """{name: {"1T_s", "2T_s", "ratio_2T_1T", "ratio_p25", "ratio_p75"}} of cases [(name, f, args)]:
    per round, `number` calls with each thread count (the first call after set_num_threads, which
    makes the pool, untimed)."""
    before = rd.get_num_threads()
    out = {}
    try:
        for name, f, args in cases:
            times = {c: [] for c in counts}
            for r in range(rounds):
                for c in (counts if r % 2 == 0 else counts[::-1]):
                    rd.set_num_threads(c)
                    f(*args)
                    times[c].append(_time(f, args, number))
            ratios = [b / a for a, b in zip(times[counts[0]], times[counts[1]])]
            q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
            out[name] = {f"{c}T_s": statistics.median(times[c]) for c in counts}
            out[name].update(ratio_2T_1T=statistics.median(ratios), ratio_p25=q[0], ratio_p75=q[2],
                             rounds=rounds)
    finally:
        rd.set_num_threads(before)
    return out


# ---- numba prange, for the comparison --------------------------------------------------------------
@njit(parallel=True, error_model="numpy", fastmath={"contract", "reassoc", "nsz", "arcp"})
def _rnea_prange(workspaces, bounds, q, qd, qdd, no_wrench, tau):
    for r in prange(bounds.shape[0]):      # one range per thread, each in its own workspace
        w = workspaces[r]
        for k in range(bounds[r, 0], bounds[r, 1]):
            recursive_newton_euler(w, w, q[k], qd[k], qdd[k], True, True, True, -1, no_wrench, tau[k])


def prange_rnea(model, q, qd, qdd, threads):
    """τ (N, n) by _rnea_prange on `threads` numba threads (numba.set_num_threads)."""
    from robot_dynamics_ros.dynamics.threads import chunk_bounds
    numba.set_num_threads(threads)
    bounds = np.array(chunk_bounds(q.shape[0], threads), dtype=np.int64)
    workspaces = np.repeat(model._data.buffer[None], threads, axis=0)
    tau = np.empty(q.shape)
    _rnea_prange(workspaces, bounds, q, qd, qdd, np.zeros(6), tau)
    return tau


def prange_against_pool(model, q, qd, qdd, rounds, number=3):
    """The RNEA over the states (q, qd, qdd) on 1 and 2 threads, by prange_rnea and by
    inverse_dynamics_trajectory (the pool), in paired rounds: {"prange": {...}, "pool": {...}} as
    paired_rounds gives, and whether prange's τ equals the pool's bit for bit."""
    # the pool first: numba's OpenMP threads spin-wait a while after each prange loop, taking a core
    pool = paired_rounds([("pool", rd.inverse_dynamics_trajectory, (model, q, qd, qdd))], rounds, number)
    tau = rd.inverse_dynamics_trajectory(model, q, qd, qdd)
    same = np.array_equal(prange_rnea(model, q, qd, qdd, 2), tau)
    before = numba.get_num_threads()
    prange = {c: [] for c in (1, 2)}
    try:
        for c in (1, 2):
            prange_rnea(model, q, qd, qdd, c)
        for r in range(rounds):
            for c in ((1, 2) if r % 2 == 0 else (2, 1)):
                prange[c].append(_time(prange_rnea, (model, q, qd, qdd, c), number))
    finally:
        numba.set_num_threads(before)
    ratios = [b / a for a, b in zip(prange[1], prange[2])]
    return {"prange": {"1T_s": statistics.median(prange[1]), "2T_s": statistics.median(prange[2]),
                       "ratio_2T_1T": statistics.median(ratios), "rounds": rounds},
            "pool": pool["pool"], "prange_equals_pool": bool(same),
            "threading_layer": numba.threading_layer()}
