"""Compiled entry points (kernels.entries._entry): compiled once, however they are reached, and
reading every array as the numbers it holds (kernels/native.py)."""
from _fresh_python import run_python


def test_the_name_is_the_dispatcher_that_runs_compiled_once_for_its_signature():
    """`entries.crba` is numba's dispatcher from import on: the first call compiles (or loads) its one
    declared signature, and the name keeps reaching that dispatcher; nothing rebinds it. Other argument
    types are refused (TypeError), not compiled; thousands of calls through a reference taken before
    the first call compile nothing more (before 6f61bef such calls compiled new dispatchers and crashed
    the interpreter). A fresh process, so that crba has not been called yet."""
    run = run_python("""
        import numpy as np
        from robot_dynamics_ros import dynamics as rd
        from robot_dynamics_ros.dynamics.kernels import entries
        from _random_trees import random_tree
        model = rd.load_urdf(random_tree(7, 5, chain=True).to_urdf())
        early = entries.crba
        assert early.signatures == [], "nothing compiled at import"
        q, M = np.linspace(-1.0, 1.0, 5), np.empty((5, 5))
        try:
            early(model._data.buffer, q.tolist(), M)
            raise AssertionError("a list was accepted")
        except TypeError:
            pass
        assert len(early.signatures) == 1 and entries.crba is early
        for _ in range(3000):
            early(model._data.buffer, q, M)
        assert entries.crba is early and len(early.signatures) == 1
        assert entries.compile_entries(["crba"]) == ["crba"] and len(early.signatures) == 1
        assert np.allclose(M, rd.mass_matrix(model, q), rtol=0.0, atol=1e-12)
        print("ok")
    """)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stdout,
                                                                 run.stderr[-1500:])


def test_unusual_arrays_are_read_as_their_values_whatever_came_first():
    """kernels/native.py. numba types an unusual array through a process-wide cache whose first entry
    decides what later ones are read as. Before the fix: after a misaligned q (or a read-only one), a
    big-endian q (read-only) was read as native bytes, wrong torques, and an all-NaN one passed the NaN
    check; after a big-endian q, a misaligned one raised TypeError; a masked q first raised numba's
    NumbaTypeError, later ones were read without their mask. Each order in a forked child of a fresh
    process, so that each starts from numba's untouched state."""
    run = run_python("""
        import os
        import numpy as np
        from robot_dynamics_ros import dynamics as rd
        from _array_forms import misaligned, read_only
        from _random_trees import random_state, random_tree

        model = rd.load_urdf(random_tree(300, 6, chain=True).to_urdf())
        q, qd, qdd = random_state(model, np.random.default_rng(1))

        forms = {"misaligned": misaligned(q), "misaligned-read-only": misaligned(q, writeable=False),
                 "read-only": read_only(q), "big-endian": q.astype(">f8"),
                 "big-endian-read-only": read_only(q.astype(">f8")),
                 "big-endian-nan": np.full(6, np.nan, ">f8"), "masked": np.ma.masked_array(q, q > 0)}
        orders = [["misaligned", "big-endian", "big-endian-nan"], ["read-only", "big-endian-read-only"],
                  ["misaligned-read-only", "big-endian-read-only"], ["big-endian", "misaligned"],
                  ["masked", "masked"]]
        for order in orders:
            pid = os.fork()
            if pid == 0:
                problems = []
                for name in order:
                    try:
                        tau = rd.inverse_dynamics(model, forms[name], qd, qdd)
                        outcome = "finite" if np.isfinite(tau).all() else "NaN"
                    except ValueError as e:
                        tau, outcome = None, f"ValueError {e}"
                    except Exception as e:
                        tau, outcome = None, f"{type(e).__name__} {e}"
                    if name in ("big-endian-nan", "masked"):
                        if not (outcome.startswith("ValueError") and " q" in outcome):
                            problems.append(f"{order}: {name}: {outcome}")
                    elif tau is None or not np.array_equal(tau, rd.inverse_dynamics(model, q, qd, qdd)):
                        problems.append(f"{order}: {name}: {outcome}, {tau}")
                print("\\n".join(problems) if problems else "", flush=True)
                os._exit(0)
            os.waitpid(pid, 0)
        print("done")
    """)
    assert run.returncode == 0 and run.stdout.strip() == "done", (run.stdout, run.stderr[-1500:])


def test_the_python_check_of_array_objects_agrees_with_the_compiled_one():
    """is_native_ndarray runs as Python under NUMBA_DISABLE_JIT=1 and compiled otherwise (on arrays
    numba types at all: not on big-endian ones)."""
    import numba
    import numpy as np

    from robot_dynamics_ros.dynamics.kernels.native import is_native_ndarray

    class Subclass(np.ndarray):
        pass

    compiled = numba.njit(lambda x, like: is_native_ndarray(x, like))
    like = np.zeros((2, 2))
    unaligned = np.zeros(8 * 3 + 1, np.uint8)[1:].view(np.float64)
    for x, expected in [(np.zeros(3), True), (unaligned, False), (np.ma.masked_array(np.zeros(3)), False),
                        (np.zeros(3).view(Subclass), False)]:
        assert is_native_ndarray(x, like) is expected and compiled(x, like) is expected, x
    # What the compiled calls' signatures refuse, the Python version refuses itself.
    for x in (np.zeros(3, ">f8"), np.zeros(6)[::2], np.zeros(3, np.float32), np.zeros(3, complex)):
        assert not is_native_ndarray(x, like), x
