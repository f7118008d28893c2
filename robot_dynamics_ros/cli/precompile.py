"""Compile every kernel into numba's on-disk cache, so that no node compiles at run time.

    python -m robot_dynamics_ros.cli.precompile            # all entry points, one process per core
    python -m robot_dynamics_ros.cli.precompile --jobs 1

The README's set-up (tools/bootstrap.sh) runs it for the venv's editable install, and `colcon build`
runs it for the installed copy (setup.py's install step), so that a node's first output comes as soon
as its model is built. numba keeps the compiled code beside the kernel sources (kernels/jit/cache.py:
`__pycache__`, or NUMBA_CACHE_DIR), keyed on a hash of the kernel package's source and on this
machine's CPU: a later process loads it instead of compiling it (the times of both:
doc/performance.md, section "Start-up").

Each entry point (kernels/entries/, explicit signatures) has exactly one compiled version, so
compiling them all covers every call. They compile independently: worker processes take them one at
a time, the longest first, so that the cores share the work.
"""
import argparse
import multiprocessing
import os
import sys
import time

# Compiled first, in this process: the entry point whose compilation compiles the helpers that every
# other one calls (rows, spatial, kinematics: kernels/jit, `inline`), which the workers then load
# from the cache instead of each compiling them at the same time.
_FIRST = 'rnea'
# Then, in the workers, the entry points that take longest to compile, the longest first (their cold
# compile times: doc/performance.md, section "Start-up"), so that no long one is left to run alone at
# the end while the other cores idle; each pair that would compile the same recursions at the same
# time (step and simulate) kept apart.
_SLOW_FIRST = ('linearize_trajectory', 'all_terms', 'task_space_control', 'step', 'aba_derivatives',
               'aba_batch', 'simulate', 'joint_torque_regressor',
               'rnea_derivatives', 'task_space_inertia', 'body_regressor_batch', 'fd_via_mass_matrix',
               'observer_update', 'aba_tip', 'mass_matrix_derivatives', 'joint_torque_regressor_batch')


def _start_worker():
    """Worker initializer: import numba and the kernels while the parent compiles _FIRST."""
    from robot_dynamics_ros.dynamics.kernels import entries  # noqa: F401


def _compile(name):
    """Worker: compile (or load) one entry point; (name, seconds)."""
    from robot_dynamics_ros.dynamics.kernels import entries

    entries.NOTICE["quiet"] = True     # the compiles are this tool's point: no first-use notice
    start = time.perf_counter()
    entries.compile_entries([name])
    return name, time.perf_counter() - start


def _ordered(names):
    slow = [n for n in _SLOW_FIRST if n in names]
    return slow + [n for n in names if n not in slow]


def precompile(jobs=None, names=None, log=None):
    """Compile (or load from the cache) the entry points `names` (default: every one) in `jobs`
    processes (default: the number of usable cores, at most 4; 1 = in this process). Returns the
    wall time in s."""
    from robot_dynamics_ros.dynamics.kernels import entries

    names = _ordered(list(entries.ENTRY_NAMES if names is None else names))
    if jobs is None:
        jobs = min(4, len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity')
                   else os.cpu_count() or 1)
    start = time.perf_counter()
    pool = None
    try:
        if jobs > 1:
            # spawn: a fresh interpreter per worker, no state inherited from this one; the workers
            # start and import while this process compiles _FIRST
            pool = multiprocessing.get_context('spawn').Pool(jobs, initializer=_start_worker)
            if _FIRST in names:
                names.remove(_FIRST)
                name, seconds = _compile(_FIRST)
                if log is not None:
                    log(f'{name}: {seconds:.1f} s')
        results = map(_compile, names) if pool is None else pool.imap_unordered(_compile, names)
        for name, seconds in results:
            if log is not None:
                log(f'{name}: {seconds:.1f} s')
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m robot_dynamics_ros.cli.precompile',
                                     description=__doc__.split('\n\n')[0])
    parser.add_argument('--jobs', type=int, default=None,
                        help='worker processes (default: the usable cores, at most 4)')
    parser.add_argument('--quiet', action='store_true', help='print only the total')
    args = parser.parse_args(argv)
    log = None if args.quiet else (lambda line: print(f'  {line}', flush=True))
    try:
        seconds = precompile(args.jobs, log=log)
    except KeyboardInterrupt:
        print('precompile: interrupted; kernels not compiled yet compile on first use',
              file=sys.stderr)
        return 130
    from robot_dynamics_ros.dynamics.kernels import entries
    print(f'precompile: {len(entries.ENTRY_NAMES)} kernel entry points compiled or loaded in '
          f'{seconds:.1f} s', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
