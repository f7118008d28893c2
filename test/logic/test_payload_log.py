"""payload_log (ROS-free): the bounded log of recent joint states with efforts, and the verdict on the
payload they show."""
import json
from pathlib import Path

import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.payload_log import MAX_CONDITION, StateLog, estimate_summary, identify_recent

UR5E = Path(__file__).resolve().parents[2] / "urdf" / "ur5e.urdf"


def test_the_log_keeps_the_window_in_order_and_never_more_than_its_bound():
    log = StateLog(2, window=1.0, max_samples=300)
    for k in range(1000):                       # 10 s at 100 Hz
        log.append(0.01 * k, [k, -k], [2 * k, 0.5])
    assert len(log) == 300 and log._t.size == 300       # bounded: grew by doubling, then capped
    t, q, tau = log.recent()
    np.testing.assert_allclose(t, 0.01 * np.arange(899, 1000))     # the last second, oldest first
    np.testing.assert_array_equal(q[:, 0], np.arange(899, 1000))
    np.testing.assert_array_equal(tau[:, 0], 2 * np.arange(899, 1000))
    log.append(t[-1], [0, 0], [0, 0])               # a repeated stamp: dropped
    log.append(t[-1] - 0.5, [0, 0], [0, 0])         # a little back: dropped
    assert len(log) == 300 and log.recent()[0][-1] == t[-1]
    log.append(1.0, [7, 7], [7, 7])                 # far back (a reset, a bag played again): starts over
    assert len(log) == 1 and log.recent()[1].tolist() == [[7, 7]]
    log.window = 0.05
    for k in range(1, 20):
        log.append(1.0 + 0.01 * k, [k, k], [k, k])
    assert log.recent()[0].size == 6                # the window is read at each call


def test_identify_recent_finds_the_payload_and_says_why_when_it_cannot():
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    carried = rd.with_payload(model, 1.5, [0.0, 0.02, 0.06], np.diag([0.004, 0.004, 0.002]))
    log = StateLog(model.nq, window=10.0)
    assert identify_recent(model, log)[1].startswith("too few")
    rng = np.random.default_rng(1)
    w = 2 * np.pi * np.array([0.2, 0.45, 0.7])[:, None]
    A, phase = rng.uniform(-0.3, 0.3, (3, 6)), rng.uniform(0, 6, (3, 6))
    home = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
    for t in np.arange(0.0, 12.0, 0.004):          # 12 s: the window keeps the last 10
        angle = w * t + phase
        q, qd, qdd = (home + (A * np.sin(angle)).sum(0), (A * w * np.cos(angle)).sum(0),
                      (-A * w ** 2 * np.sin(angle)).sum(0))
        log.append(t, q, rd.inverse_dynamics(carried, q, qd, qdd))
    estimate, reason = identify_recent(model, log)
    assert reason is None and abs(estimate.mass - 1.5) < 1e-3
    assert np.abs(estimate.com - [0, 0.02, 0.06]).max() < 1e-4
    summary = json.loads(estimate_summary(estimate, "tool0", len(log), 10.0))
    assert summary["mass"] == estimate.mass and len(summary["inertia"]) == 6 and "reason" not in summary
    assert summary["samples"] == len(log) and summary["frame"] == "tool0"
    # standing still: the data cannot tell; the condition number says so, and the JSON stays JSON
    still = StateLog(model.nq, window=10.0)
    for t in np.arange(0.0, 5.0, 0.004):
        still.append(t, home, rd.gravity_torques(carried, home))
    estimate, reason = identify_recent(model, still)
    assert "too little excitation" in reason and not estimate.condition < MAX_CONDITION
    text = estimate_summary(estimate, "tool0", 1250, 5.0, reason)
    assert "Infinity" not in text and "NaN" not in text and json.loads(text)["reason"] == reason
    # a log shorter than the filter needs: its reason
    short = StateLog(model.nq, window=10.0)
    for t in np.arange(0.0, 0.5, 0.004):
        short.append(t, home, rd.gravity_torques(carried, home))
    assert "too short" in identify_recent(model, short)[1]


def test_identify_recent_takes_the_effort_offset_out_of_the_logged_efforts():
    """Efforts measured by sensors with a constant offset (measured = joint torque + offset, as
    identify_robot finds it): with the offset given the payload is found as without one; ignored, the
    offset passes for payload."""
    model = rd.load_urdf(str(UR5E), tip_link="tool0")
    carried = rd.with_payload(model, 1.5, [0.0, 0.02, 0.06], np.diag([0.004, 0.004, 0.002]))
    offset = np.array([0.5, 1.2, -0.6, 0.2, -1.2, 2.0])
    log = StateLog(model.nq, window=10.0)
    rng = np.random.default_rng(2)
    w = 2 * np.pi * np.array([0.2, 0.45, 0.7])[:, None]
    A, phase = rng.uniform(-0.3, 0.3, (3, 6)), rng.uniform(0, 6, (3, 6))
    home = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
    for t in np.arange(0.0, 10.0, 0.004):
        angle = w * t + phase
        q, qd, qdd = (home + (A * np.sin(angle)).sum(0), (A * w * np.cos(angle)).sum(0),
                      (-A * w ** 2 * np.sin(angle)).sum(0))
        log.append(t, q, rd.inverse_dynamics(carried, q, qd, qdd) + offset)
    estimate, reason = identify_recent(model, log, effort_offset=offset)
    assert reason is None and abs(estimate.mass - 1.5) < 1e-3
    assert np.abs(estimate.com - [0, 0.02, 0.06]).max() < 1e-4
    biased, _ = identify_recent(model, log)
    assert abs(biased.mass - 1.5) > 0.05 or np.abs(biased.com - [0, 0.02, 0.06]).max() > 0.01, biased
    assert biased.residual_rms > 100 * estimate.residual_rms
    # the log itself keeps the measured efforts: the offset is taken out at each estimate
    np.testing.assert_allclose(log.recent()[2][-1] - offset, rd.inverse_dynamics(carried, q, qd, qdd))
