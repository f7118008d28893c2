"""The reaching problem against Crocoddyl (issue 28): the same problem (our objective of Crocoddyl's
solution is Crocoddyl's cost), and our solver's optimum at least as good (cost <= 1.01 x Crocoddyl's),
converged and dynamically feasible, on the UR5 and the Panda (fingers locked), with and without the
URDF's torque limits. Crocoddyl runs in .venv-crocoddyl (tools/bootstrap.sh, step 1d)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import _robots as R

REPO = Path(__file__).resolve().parents[2]
CROCODDYL_PYTHON = Path(os.environ.get("ROBOT_DYNAMICS_ROS_CROCODDYL_PYTHON",
                                       REPO / ".venv-crocoddyl" / "bin" / "python"))
WEIGHTS = {"goal": 1.0, "state": 0.1, "control": 0.1, "terminal": 1000.0}
# (name, URDF, locked joints, frame, q0): the UR5's and Panda's usual home configurations
ROBOTS = {
    "UR5": (R.UR5_URDF, {}, "tool0", [0.0, -1.0, 1.5, -0.5, 1.5, 0.0]),
    "Panda": (R.PANDA_URDF, R.PANDA_FINGERS, "panda_hand", [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]),
}
GOAL_OFFSET = (0.1, 0.1, -0.1)      # the goal: the tool's start pose moved by this (m, root frame)


def problem_of(name, torque_limits):
    urdf, locked, frame, q0 = ROBOTS[name]
    model = rd.load_urdf(str(urdf), locked_joints=dict(locked)) if locked else rd.load_urdf(str(urdf))
    q0 = np.array(q0)
    T_goal = rd.frame_pose(model, q0, frame)
    T_goal[:3, 3] += GOAL_OFFSET
    return rd.ReachingProblem(model, frame, T_goal, q0, goal_weight=WEIGHTS["goal"],
                              state_weight=WEIGHTS["state"], control_weight=WEIGHTS["control"],
                              terminal_goal_weight=WEIGHTS["terminal"], torque_limits=torque_limits)


def crocoddyl_solution(name, problem, max_iterations=500):
    urdf, locked, frame, _ = ROBOTS[name]
    assert CROCODDYL_PYTHON.exists(), f"no Crocoddyl at {CROCODDYL_PYTHON}: run tools/bootstrap.sh"
    spec = {"urdf": str(urdf), "locked": dict(locked), "frame": frame, "q0": problem.q0.tolist(),
            "T_goal": problem.T_goal.tolist(), "horizon": problem.horizon, "dt": problem.dt,
            "weights": WEIGHTS, "torque_limits": problem.torque_limits, "max_iterations": max_iterations}
    run = subprocess.run([str(CROCODDYL_PYTHON), str(Path(__file__).with_name("_crocoddyl_reaching.py"))],
                         input=json.dumps(spec), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


@pytest.mark.parametrize("torque_limits", [False, True], ids=["free", "limits"])
@pytest.mark.parametrize("name", list(ROBOTS))
def test_the_optimum_is_crocoddyls_or_lower(name, torque_limits):
    problem = problem_of(name, torque_limits)
    ours = rd.solve_optimal_control(problem, max_iterations=500)
    theirs = crocoddyl_solution(name, problem)
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
