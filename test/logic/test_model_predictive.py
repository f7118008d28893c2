"""The MPC logic (logic/model_predictive.py) in closed loop with the UR5e simulated by RK4 at 1 kHz
(ROS-free): re-plans at 100 Hz (50 knots of 10 ms, 5 FDDP iterations), feedback between them; a target
10 cm away is reached without a jump, within the torque limits; a new target mid-motion and a hold; the
same with the re-plans in the planning thread, paced in real time as the node runs them; the thread's
plan equals the one solved in the caller's, a hold discards a re-plan under way, and its errors reach
the caller."""
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.spatial import log_transform
from robot_dynamics_ros.logic.model_predictive import ModelPredictiveController

REPO = Path(__file__).resolve().parents[2]
Q0 = np.array([0.0, -1.2, 1.5, -1.0, -1.57, 0.0])
FRAME = "tool0"
# The node's default weights (a receding horizon holds the arm against gravity: the torque cost small
# beside the goal's)
WEIGHTS = dict(goal_weight=100.0, state_weight=0.01, control_weight=1e-5, terminal_goal_weight=1000.0)


@pytest.fixture(scope="module")
def model():
    return rd.load_urdf(str(REPO / "urdf" / "ur5e.urdf"))


def run(model, mpc, x, t0, seconds, targets=(), background=False):
    """Simulate: re-plan every 10 ms, command every 1 ms (RK4); targets: (time, T_goal). Returns the
    final state and the joint speeds and torques of every step. background: the warm re-plans in the
    planning thread (as mpc_controller), the simulation paced to the wall clock so that a re-plan takes
    the simulated time it takes."""
    n, dt = model.nq, 0.001
    speeds, torques = [], []
    targets = list(targets)
    wall0 = time.perf_counter()
    for k in range(int(round(seconds / dt))):
        t = t0 + k * dt
        while targets and targets[0][0] <= t:
            mpc.set_target(targets.pop(0)[1], x, t)
        if background:
            while time.perf_counter() - wall0 < k * dt:
                time.sleep(0.0002)
            mpc.collect()
            if k % 10 == 0 and not mpc.start_replan(x, t, np.r_[x[:n], np.zeros(n)]) and mpc.plan is None:
                mpc.replan(x, t, np.r_[x[:n], np.zeros(n)])
        elif k % 10 == 0:
            mpc.problem.x_ref = np.r_[x[:n], np.zeros(n)]
            mpc.replan(x, t)
        tau = mpc.command(x, t)
        torques.append(tau)
        q, qd = rd.rk4_step(model, x[:n], x[n:], tau, dt)
        x = np.r_[q, qd]
        speeds.append(np.abs(qd).max())
    return x, np.array(speeds), np.array(torques)


def controller(model, **options):
    problem = rd.ReachingProblem(model, FRAME, rd.frame_pose(model, Q0, FRAME), Q0, horizon=50, dt=0.01,
                                 torque_limits=True, **WEIGHTS)
    return ModelPredictiveController(problem, max_iterations=5, **options)


def pose_error(model, x, T_goal):
    T = rd.frame_pose(model, x[:model.nq], FRAME)
    rotation = log_transform(np.linalg.inv(T_goal) @ T)[:3]
    return np.linalg.norm(T[:3, 3] - T_goal[:3, 3]), np.linalg.norm(rotation)


def test_a_target_10_cm_away_is_reached_without_a_jump(model):
    mpc = controller(model)
    x = np.r_[Q0, np.zeros(6)]
    assert mpc.command(x, 0.0) is None                  # no plan yet: the node publishes nothing
    mpc.hold(x, 0.0)
    T_goal = rd.frame_pose(model, Q0, FRAME)
    T_goal[:3, 3] += (0.1, 0.0, 0.0)
    x, speeds, torques = run(model, mpc, x, 0.0, 3.0, targets=[(0.2, T_goal)])
    position, rotation = pose_error(model, x, T_goal)
    assert position < 0.005 and rotation < 0.02, (position, rotation)
    assert speeds[:200].max() < 0.05                   # held (the plan's 10 ms steps against RK4 at 1 ms)
    assert speeds.max() < 0.6                          # along the 0.1 m/s profile, no swing
    assert (np.abs(torques) <= model.effort_limit).all()
    assert np.abs(x[6:]).max() < 0.01                  # at rest at the end


def test_the_planning_thread_reaches_the_target_in_real_time(model):
    mpc = controller(model)
    x = np.r_[Q0, np.zeros(6)]
    mpc.hold(x, 0.0)
    T_goal = rd.frame_pose(model, Q0, FRAME)
    T_goal[:3, 3] += (0.1, 0.0, 0.0)
    try:
        x, speeds, torques = run(model, mpc, x, 0.0, 3.0, targets=[(0.2, T_goal)], background=True)
    finally:
        mpc.close()
    position, rotation = pose_error(model, x, T_goal)
    assert position < 0.005 and rotation < 0.02, (position, rotation)
    assert speeds.max() < 0.6
    assert (np.abs(torques) <= model.effort_limit).all()
    assert np.abs(x[6:]).max() < 0.01


def test_the_planning_thread_solves_what_the_caller_would(model):
    from robot_dynamics_ros.dynamics.kernels import entries
    x = np.r_[Q0, np.zeros(6)]
    T_goal = rd.frame_pose(model, Q0, FRAME)
    T_goal[:3, 3] += (0.05, 0.0, 0.0)
    x_next = x + np.r_[np.full(6, 1e-3), np.full(6, 0.01)]
    plans = []
    for background in (False, True):
        mpc = controller(model, planning_idle=True)       # as mpc_controller runs it
        mpc.hold(x, -10.0)
        mpc.set_target(T_goal, x, -10.0)
        mpc.replan(x, 0.0)                                      # cold, in the caller's thread
        assert not mpc.planning and mpc.collect() is None
        if background:
            assert mpc.start_replan(x_next, 0.02)
            assert not mpc.start_replan(x_next, 0.02)          # one at a time
            deadline = time.monotonic() + 10.0
            while (plan := mpc.collect()) is None and time.monotonic() < deadline:
                mpc.command(x_next, 0.02)                       # the control path runs meanwhile
                time.sleep(1e-4)
            assert plan is not None and mpc.plan is plan and mpc.plan_time == 0.02
            # the planning thread under SCHED_IDLE: a joint state's callback preempts it at once
            planners = [t for t in threading.enumerate() if t.name == 'mpc-planning' and t.is_alive()]
            assert planners and all(os.sched_getscheduler(t.native_id) == os.SCHED_IDLE for t in planners)
            mpc.close()
        else:
            plan = mpc.replan(x_next, 0.02)
        plans.append(plan)
    np.testing.assert_array_equal(plans[0].xs, plans[1].xs)
    np.testing.assert_array_equal(plans[0].K, plans[1].K)
    # the solver's passes release the GIL (the control path runs beside them, not between them); a whole
    # iteration is one such call
    for name in ('ocp_cost', 'ocp_iteration', 'ocp_derivatives'):
        assert getattr(entries, name).targetoptions['nogil'] is True, name


def test_a_hold_discards_the_replan_under_way_and_errors_reach_the_caller(model):
    mpc = controller(model)
    x = np.r_[Q0, np.zeros(6)]
    mpc.hold(x, 0.0)
    mpc.replan(x, 0.0)
    assert mpc.start_replan(x, 0.01)
    mpc.hold(x, 0.01)                                           # the plan dropped, the re-plan too
    assert mpc.plan is None
    assert not mpc.start_replan(x, 0.02)                        # nothing to warm start from
    deadline = time.monotonic() + 10.0
    while mpc.planning and time.monotonic() < deadline:
        time.sleep(1e-3)
    assert mpc.collect() is None and mpc.plan is None
    mpc.replan(x, 0.02)
    bad = x.copy()
    bad[0] = np.nan
    assert mpc.start_replan(bad, 0.03)
    with pytest.raises(ValueError, match="x0"):
        deadline = time.monotonic() + 10.0
        while mpc.collect() is None and time.monotonic() < deadline:
            time.sleep(1e-3)
    assert mpc.plan is None                                     # dropped: the next re-plan is cold
    mpc.close()


def test_a_new_target_mid_motion_and_a_hold(model):
    mpc = controller(model)
    x = np.r_[Q0, np.zeros(6)]
    mpc.hold(x, 0.0)
    first, second = rd.frame_pose(model, Q0, FRAME), rd.frame_pose(model, Q0, FRAME)
    first[:3, 3] += (0.1, 0.0, 0.0)
    second[:3, 3] += (0.0, 0.08, 0.05)
    x, speeds, _ = run(model, mpc, x, 0.0, 3.5, targets=[(0.0, first), (0.8, second)])
    position, rotation = pose_error(model, x, second)
    assert position < 0.005 and rotation < 0.02, (position, rotation)
    assert speeds.max() < 0.6
    # hold: the reference stops where the frame is, the arm stays
    mpc.hold(x, 3.5)
    held = rd.frame_pose(model, x[:6], FRAME)
    x, speeds, _ = run(model, mpc, x, 3.5, 0.5)
    assert pose_error(model, x, held)[0] < 0.002 and speeds.max() < 0.05


def test_a_warm_started_replan_needs_fewer_iterations(model):
    mpc = controller(model)
    x = np.r_[Q0, np.zeros(6)]
    mpc.hold(x, -10.0)
    T_goal = rd.frame_pose(model, Q0, FRAME)
    T_goal[:3, 3] += (0.05, 0.0, 0.0)
    mpc.set_target(T_goal, x, -10.0)                   # the profile has ended at t = 0: the goal is T_goal
    mpc.max_iterations = 100
    cold = mpc.replan(x, 0.0)
    warm = mpc.replan(cold.xs[1], 0.01)                 # the arm followed the plan for one knot
    assert cold.converged and warm.converged and warm.iterations < cold.iterations
    assert np.allclose(warm.xs[0], cold.xs[1])


def test_one_iteration_per_warm_replan_follows_the_converged_closed_loop(model):
    """The real-time iteration (mpc_controller's default max_iterations = 1: one FDDP iteration per warm
    re-plan, the next re-plan going on from its result) against re-plans solved to convergence (three
    iterations here), in the same closed loop with a target changed mid-motion: the same torques within
    0.01 N·m of tens of N·m, the same motion."""
    runs = {}
    for iterations in (1, 100):
        mpc = controller(model)
        mpc.max_iterations = iterations
        x = np.r_[Q0, np.zeros(6)]
        mpc.hold(x, 0.0)
        first, second = rd.frame_pose(model, Q0, FRAME), rd.frame_pose(model, Q0, FRAME)
        first[:3, 3] += (0.06, -0.05, 0.06)
        second[:3, 3] += (0.0, 0.1, -0.05)
        x, speeds, torques = run(model, mpc, x, 0.0, 4.0, targets=[(0.2, first), (1.0, second)])
        runs[iterations] = x, torques
        assert mpc.plan.converged == (iterations > 1)
    (x_one, tau_one), (x_converged, tau_converged) = runs[1], runs[100]
    assert np.abs(tau_converged).max() > 10.0
    assert np.abs(tau_one - tau_converged).max() < 0.01
    assert np.abs(x_one - x_converged).max() < 1e-4
    assert pose_error(model, x_one, second)[0] < 0.001
