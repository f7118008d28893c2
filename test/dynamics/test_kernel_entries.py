"""Compiled entry points (kernels.entries._entry): compiled once, however they are reached."""
from _fresh_python import run_python


def test_a_reference_taken_before_the_first_call_keeps_one_dispatcher():
    """`f = entries.crba` before the first call holds the lazy stand-in. Before 6f61bef every call
    through it compiled (or loaded) a new dispatcher and rebound the module attribute; thousands of
    calls crashed the interpreter. A fresh process, so that crba has not been called yet."""
    run = run_python("""
        import numpy as np
        from robot_dynamics_ros import dynamics as rd
        from robot_dynamics_ros.dynamics.kernels import entries
        from _random_trees import random_tree
        model = rd.load_urdf(random_tree(7, 5, chain=True).to_urdf())
        early = entries.crba
        q, M = np.linspace(-1.0, 1.0, 5), np.empty((5, 5))
        early(model._data.buffer, q, M)
        compiled = entries.crba
        assert compiled is not early, "the first call rebinds the module attribute"
        for _ in range(3000):
            early(model._data.buffer, q, M)
        assert entries.crba is compiled, "a later call through the early reference compiled again"
        assert np.allclose(M, rd.mass_matrix(model, q), rtol=0.0, atol=1e-12)
        print("ok")
    """)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stdout,
                                                                 run.stderr[-1500:])
