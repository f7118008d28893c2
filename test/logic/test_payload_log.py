"""payload_log (ROS-free): the bounded log of recent joint states with efforts, and the verdict on the
payload they show."""
import json
import math
from pathlib import Path

import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.payload_log import (
    CAPACITY_MARGIN,
    MAX_CONDITION,
    MAX_SAMPLES,
    MIN_SAMPLES,
    StateLog,
    estimate_summary,
    identify_recent,
)

UR5E = Path(__file__).resolve().parents[2] / "urdf" / "ur5e.urdf"


def test_the_log_keeps_the_window_in_order_and_never_more_than_its_bound():
    log = StateLog(2, window=1.0, max_samples=300)
    for k in range(1000):                       # 10 s at 100 Hz
        log.append(0.01 * k, [k, -k], [2 * k, 0.5])
    assert len(log) == 101 and log.capacity <= 300      # the last second only: older samples left
    t, q, tau = log.recent()
    np.testing.assert_allclose(t, 0.01 * np.arange(899, 1000))     # the last second, oldest first
    np.testing.assert_array_equal(q[:, 0], np.arange(899, 1000))
    np.testing.assert_array_equal(tau[:, 0], 2 * np.arange(899, 1000))
    log.append(t[-1], [0, 0], [0, 0])               # a repeated stamp: dropped
    log.append(t[-1] - 0.5, [0, 0], [0, 0])         # a little back: dropped
    assert len(log) == 101 and log.recent()[0][-1] == t[-1]
    log.append(1.0, [7, 7], [7, 7])                 # far back (a reset, a bag played again): starts over
    assert len(log) == 1 and log.recent()[1].tolist() == [[7, 7]]
    log.window = 0.05
    for k in range(1, 20):
        log.append(1.0 + 0.01 * k, [k, k], [k, k])
    assert log.recent()[0].size == 6                # the window is read at each call
    # a window that needs more than the ceiling keeps the newest max_samples: the oldest go first
    capped = StateLog(2, window=1.0, max_samples=50)
    for k in range(1000):
        capped.append(0.01 * k, [k, -k], [2 * k, 0.5])
    assert len(capped) == 50 and capped.capacity == 50
    np.testing.assert_allclose(capped.recent()[0], 0.01 * np.arange(950, 1000))


def _feed(log, stamps, joint_count=7):
    """Append a sample at each stamp (q = τ = the stamp on every joint); returns, after each
    append, the log's capacity."""
    capacities = np.empty(len(stamps), dtype=int)
    for k, t in enumerate(stamps):
        log.append(t, np.full(joint_count, t), np.full(joint_count, t))
        capacities[k] = log.capacity
    return capacities


def _assert_holds_the_window(log, stamps):
    """The log holds exactly the stamps within its window of the newest, in order, q and τ with them:
    nothing inside the window lost, nothing older kept."""
    stamps = np.asarray(stamps)
    inside = stamps[stamps >= stamps[-1] - log.window]
    t, q, tau = log.recent()
    assert len(log) == inside.size
    np.testing.assert_array_equal(t, inside)
    np.testing.assert_array_equal(q[:, 0], inside)
    np.testing.assert_array_equal(tau[:, -1], inside)


def test_a_1khz_stream_for_many_windows_keeps_the_storage_at_window_times_rate_times_margin():
    window, rate = 10.0, 1000.0
    log = StateLog(7, window)
    stamps = 1e-3 * np.arange(int(6 * window * rate))            # 60 s: six windows
    capacities = _feed(log, stamps)
    settled = math.ceil(window * rate * CAPACITY_MARGIN)          # 20 000 samples, 2.4 MB for 7 joints
    # holds the window, and at most window × rate × margin (a growth step that already holds the window
    # at this rate is the last one)
    assert window * rate < capacities[-1] <= settled + 5, capacities[-1]
    # settled within the first window, and unchanged through the five after it
    assert (capacities[int(window * rate):] == capacities[-1]).all()
    assert capacities.max() <= settled + 5 and capacities[0] == MIN_SAMPLES
    assert capacities.max() < MAX_SAMPLES / 10                     # not the ceiling: the bug of issue 40
    _assert_holds_the_window(log, stamps)


def test_the_storage_follows_a_change_of_rate_down_and_up_and_keeps_the_window():
    window = 2.0
    log = StateLog(3, window)
    fast = 1e-3 * np.arange(int(3 * window * 1000))                            # 1 kHz, three windows
    slow = fast[-1] + 1e-2 * np.arange(1, int(3 * window * 100))              # 100 Hz, three windows
    faster = slow[-1] + 5e-4 * np.arange(1, int(3 * window * 2000))           # 2 kHz, three windows
    for stamps, rate in ((fast, 1000.0), (slow, 100.0), (faster, 2000.0)):
        capacities = _feed(log, stamps, 3)
        expected = window * rate * CAPACITY_MARGIN
        # the window fits, with at most window × rate × margin and what shrinks leave (1 / (0.25 · margin))
        assert window * rate < capacities[-1] <= 2.0 * expected, (rate, capacities[-1])
        everything = np.concatenate([fast, slow, faster])[:np.searchsorted(
            np.concatenate([fast, slow, faster]), stamps[-1], side='right')]
        _assert_holds_the_window(log, everything)
    assert capacities.max() <= math.ceil(window * 2000.0 * CAPACITY_MARGIN) + 5


def test_a_burst_of_stamps_is_kept_whole_and_the_storage_stays_bounded():
    window = 1.0
    log = StateLog(2, window)
    steady = 1e-3 * np.arange(3000)                                  # 3 s at 1 kHz
    burst = steady[-1] + 1e-6 * np.arange(1, 5001)                   # 5000 samples within 5 ms
    after = burst[-1] + 1e-3 * np.arange(1, 3001)                    # 3 s at 1 kHz again
    stamps = np.concatenate([steady, burst, after])
    capacities = np.empty(stamps.size, dtype=int)
    most_in_window = 0
    for k, t in enumerate(stamps):
        log.append(t, [t, t], [t, t])
        capacities[k] = log.capacity
        most_in_window = max(most_in_window, len(log))
        if k in (steady.size + burst.size - 1, steady.size + burst.size + 500):
            _assert_holds_the_window(log, stamps[:k + 1])            # the burst is all there
    assert most_in_window > 5900                                     # ~1000 steady + the 5000
    # bounded by what the window held at most (the burst within it), with the margin
    assert capacities.max() <= math.ceil(CAPACITY_MARGIN * (most_in_window + 1)) + 5, capacities.max()
    _assert_holds_the_window(log, stamps)
    # a burst on a log that just started is not extrapolated to a whole window at that rate
    fresh = StateLog(2, window=10.0)
    capacities = _feed(fresh, 1e-6 * np.arange(2000), 2)             # 2000 samples in 2 ms
    assert capacities.max() <= 4 * 4 * MIN_SAMPLES                   # at most x4 per growth
    assert len(fresh) == 2000


def test_uneven_stamps_lose_nothing_inside_the_window_and_bound_the_storage():
    rng = np.random.default_rng(4)
    window, mean_rate = 5.0, 1000.0
    gaps = 1e-3 * rng.uniform(0.2, 1.8, 40_000)                      # jitter of ±80 % around 1 ms
    gaps[rng.integers(0, gaps.size, 20)] = 0.2                        # and a few 200 ms stalls
    stamps = np.cumsum(gaps)
    log = StateLog(7, window)
    capacities = _feed(log, stamps)
    _assert_holds_the_window(log, stamps)
    inside = np.arange(1, stamps.size + 1) - np.searchsorted(stamps, stamps - window)   # held after each
    assert capacities.max() <= 1.25 * CAPACITY_MARGIN * inside.max(), (capacities.max(), inside.max())
    assert capacities.max() <= 1.25 * CAPACITY_MARGIN * window * mean_rate
    # a stall longer than the window: the log holds only what came after it
    late = stamps[-1] + 2 * window + 1e-3 * np.arange(100)
    _feed(log, late)
    _assert_holds_the_window(log, np.concatenate([stamps, late]))
    assert len(log) == 100


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


def test_a_rate_that_wanders_with_the_load_does_not_resize_the_storage_back_and_forth():
    """Stamps of the wall clock from a loaded simulator: the rate wanders between 600 Hz and 1 kHz
    over 30 s. After the first window the storage stays as it is (no growth, no shrink: RSS flat)."""
    window = 10.0
    t, stamps = 0.0, []
    while t < 120.0:
        stamps.append(t)
        t += 1.0 / (800.0 + 200.0 * np.sin(2 * np.pi * t / 30.0))
    log = StateLog(7, window)
    capacities = _feed(log, stamps)
    later = capacities[np.searchsorted(stamps, window):]
    assert (later == later[0]).all(), np.unique(later)
    assert later[0] <= window * 1000.0 * CAPACITY_MARGIN * 1.05
    _assert_holds_the_window(log, stamps)
