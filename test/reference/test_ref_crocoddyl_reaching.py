"""The reaching problem against Crocoddyl (issue 28): the same problem (our objective of Crocoddyl's
solution is Crocoddyl's cost), and our solver's optimum at least as good (cost <= 1.01 x Crocoddyl's),
converged and dynamically feasible, on the UR5 and the Panda (fingers locked), with and without the
URDF's torque limits. Crocoddyl runs in .venv-crocoddyl (tools/bootstrap.sh, step 1d); the problems are
the benchmarks' (benchmarks/_robots.py, REACHING)."""
import sys
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import _robots as R


@pytest.mark.parametrize("torque_limits", [False, True], ids=["free", "limits"])
@pytest.mark.parametrize("name", list(R.REACHING))
def test_the_optimum_is_crocoddyls_or_lower(name, torque_limits):
    problem = R.reaching_problem(name, torque_limits)
    ours = rd.solve_optimal_control(problem, max_iterations=500)
    theirs = R.crocoddyl_reaching(name, problem)
    xs, us = np.array(theirs["xs"]), np.array(theirs["us"])
    # the same problem: our objective of Crocoddyl's trajectory is Crocoddyl's cost, and it is feasible
    assert problem.cost(xs, us) == pytest.approx(theirs["cost"], rel=1e-9)
    assert np.abs(problem.defects(xs, us)).max() < 1e-9
    # our optimum: converged, feasible, as low as theirs
    assert ours.converged and ours.defect <= 1e-9, (ours.iterations, ours.stop, ours.defect)
    assert np.abs(problem.defects(ours.xs, ours.us)).max() <= 1e-9
    assert ours.cost <= 1.01 * theirs["cost"], (ours.cost, theirs["cost"])
    assert problem.cost(ours.xs, ours.us) == pytest.approx(ours.cost, rel=1e-12)
    if torque_limits:
        assert (np.abs(ours.us) <= problem.u_upper).all()
