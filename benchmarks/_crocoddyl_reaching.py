"""The reaching problem of robot_dynamics_ros.dynamics.ReachingProblem, built and solved with Crocoddyl
(its arm-manipulation example's models: frame placement, state and control residuals, free forward
dynamics, IntegratedActionModelEuler; SolverFDDP, or SolverBoxFDDP with the URDF's effort limits).

Run by .venv-crocoddyl's interpreter (tools/bootstrap.sh step 1d: Crocoddyl with the Pinocchio it works
with), not the project's: by test/reference/test_ref_crocoddyl_reaching.py and the benchmarks' "ocp"
section (_robots.crocoddyl_reaching). Reads the problem as JSON on stdin:

    {"urdf": path, "locked": {joint: value}, "frame": name, "q0": [...], "T_goal": 4x4, "horizon": N,
     "dt": s, "weights": {"goal", "state", "control", "terminal"}, "torque_limits": bool,
     "max_iterations": k, "repeats": r, "threads": t (optional)}

and writes {"cost", "iterations", "converged" (what solve() returned), "solve_time" (the fastest of
the repeats, s), "stop", "threads", "xs", "us"} as JSON on stdout. The initial guess is Crocoddyl's: x0
at every knot, quasi-static controls.
"""
import json
import sys
import time

import crocoddyl
import numpy as np
import pinocchio as pin


def build(spec):
    full = pin.buildModelFromUrdf(spec["urdf"])
    if spec["locked"]:
        q_locked = pin.neutral(full)
        for name, value in spec["locked"].items():
            q_locked[full.joints[full.getJointId(name)].idx_q] = value
        model = pin.buildReducedModel(full, [full.getJointId(name) for name in spec["locked"]], q_locked)
    else:
        model = full
    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFull(state)
    nu = actuation.nu
    x0 = np.concatenate([np.array(spec["q0"], dtype=float), np.zeros(model.nv)])
    T = np.array(spec["T_goal"], dtype=float)
    w = spec["weights"]
    goal = crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelFramePlacement(
        state, model.getFrameId(spec["frame"]), pin.SE3(T[:3, :3], T[:3, 3]), nu))
    running = crocoddyl.CostModelSum(state, nu)
    running.addCost("goal", goal, w["goal"])
    running.addCost("state", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelState(state, x0, nu)),
                    w["state"])
    running.addCost("control", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControl(state, nu)),
                    w["control"])
    terminal = crocoddyl.CostModelSum(state, nu)
    terminal.addCost("goal", goal, w["terminal"])
    dynamics = crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, running)
    if spec["torque_limits"]:
        dynamics.u_lb, dynamics.u_ub = -model.effortLimit, model.effortLimit
    problem = crocoddyl.ShootingProblem(
        x0, [crocoddyl.IntegratedActionModelEuler(dynamics, spec["dt"])] * spec["horizon"],
        crocoddyl.IntegratedActionModelEuler(
            crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, terminal), 0.0))
    if spec.get("threads"):
        problem.nthreads = spec["threads"]
    return problem, x0


def main():
    spec = json.load(sys.stdin)
    problem, x0 = build(spec)
    solver = crocoddyl.SolverBoxFDDP(problem) if spec["torque_limits"] else crocoddyl.SolverFDDP(problem)
    xs_init = [x0] * (spec["horizon"] + 1)
    us_init = list(problem.quasiStatic([x0] * spec["horizon"]))
    times = []
    for _ in range(spec.get("repeats", 1)):
        started = time.perf_counter()
        converged = solver.solve(xs_init, us_init, spec["max_iterations"], False)
        times.append(time.perf_counter() - started)
    json.dump({"cost": solver.cost, "iterations": solver.iter, "converged": bool(converged),
               "solve_time": min(times), "stop": solver.stop, "threads": problem.nthreads,
               "xs": np.array(solver.xs).tolist(), "us": np.array(solver.us).tolist()}, sys.stdout)


if __name__ == "__main__":
    main()
