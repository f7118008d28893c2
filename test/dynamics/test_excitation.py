"""Excitation trajectories (dynamics/excitation.py) on the UR5e and the Panda: at rest at q0 at both ends,
within the position, velocity and acceleration limits on a 1 kHz grid, sample() consistent with its own
finite differences, the waypoints on the series (and a quintic spline through them on it too), a lower
condition number than random feasible series of the same kind, deterministic, bad input named.
The optimisations here are short (OPT_ITERATIONS, one start); the defaults run in the slow test."""
import functools
import os
import sysconfig
import time

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import resources
from robot_dynamics_ros.dynamics.base_parameters import base_parameters, full_regressor
from robot_dynamics_ros.dynamics.excitation import (
    ACCELERATION_PER_VELOCITY,
    DEFAULT_MARGINS,
    ExcitationTrajectory,
    excitation_trajectory,
    random_fourier_trajectory,
)

from _random_trees import random_tree

PANDA_URDF = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                          "robots", "panda_description", "urdf", "panda.urdf")
DURATION = 10.0             # s: one period
HARMONICS = 5
OPT_ITERATIONS = 60         # SLSQP iterations in the quick tests (default 150 × 2 starts: the slow test)
RANDOM_SEEDS = range(100, 105)
FINE = 1e-3                 # s: the 1 kHz grid of the limit checks


@pytest.fixture(scope="module", params=["ur5e", "panda"])
def robot(request):
    """(name, model)."""
    if request.param == "ur5e":
        return "ur5e", rd.load_urdf(resources.default_urdf())
    if not os.path.exists(PANDA_URDF):
        pytest.skip("example-robot-data's Panda URDF is not installed")
    return "panda", rd.load_urdf(PANDA_URDF, tip_link="panda_link8")


@pytest.fixture(scope="module")
def optimised(robot):
    name, model = robot
    start = time.perf_counter()
    trajectory = excitation_trajectory(model, DURATION, harmonics=HARMONICS, max_iterations=OPT_ITERATIONS,
                                       restarts=1)
    elapsed = time.perf_counter() - start
    print(f"\n{name}: optimised ({OPT_ITERATIONS} iterations, 1 start) in {elapsed:.1f} s, "
          f"condition {trajectory.condition:.2f}")
    return trajectory


@pytest.fixture(scope="module")
def randoms(robot):
    _, model = robot
    return [random_fourier_trajectory(model, DURATION, harmonics=HARMONICS, seed=s) for s in RANDOM_SEEDS]


def _box(model, q0, margins=DEFAULT_MARGINS):
    """The shrunk position box of the docstring (±π about q0 where a limit is infinite)."""
    lo = np.where(np.isfinite(model.lower), model.lower, q0 - np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, q0 + np.pi)
    clear = margins[0] * (hi - lo)
    return lo + clear, hi - clear


def _assert_within_limits(model, trajectory, margins=DEFAULT_MARGINS, acceleration_limit=None):
    """Every limit on the 1 kHz grid over [0, duration]; returns the largest used fraction of each."""
    t = np.arange(0.0, trajectory.duration + FINE / 2, FINE)
    q, qd, qdd = trajectory.sample(t)
    lo, hi = _box(model, trajectory.q0, margins)
    velocity = np.where(model.velocity_limit > 0, model.velocity_limit, np.inf)
    if acceleration_limit is None:
        acceleration_limit = np.where(np.isfinite(velocity), ACCELERATION_PER_VELOCITY * velocity, 5.0)
    v_max, a_max = margins[1] * velocity, margins[2] * np.broadcast_to(acceleration_limit, (model.nq,))
    assert (q >= lo).all() and (q <= hi).all(), (q.min(axis=0) - lo, hi - q.max(axis=0))
    assert (np.abs(qd) <= v_max).all(), np.abs(qd).max(axis=0) / v_max
    assert (np.abs(qdd) <= a_max).all(), np.abs(qdd).max(axis=0) / a_max
    used_position = np.maximum((q.max(axis=0) - trajectory.q0) / (hi - trajectory.q0),
                               (trajectory.q0 - q.min(axis=0)) / (trajectory.q0 - lo))
    return used_position, np.abs(qd).max(axis=0) / v_max, np.abs(qdd).max(axis=0) / a_max


def _assert_at_rest_at_both_ends(trajectory):
    q, qd, qdd = trajectory.sample(np.array([0.0, trajectory.duration]))
    np.testing.assert_allclose(q, np.tile(trajectory.q0, (2, 1)), rtol=0, atol=1e-12)
    assert np.abs(qd).max() <= 1e-9 and np.abs(qdd).max() <= 1e-9, (qd, qdd)
    for k in (0, -1):                                       # the stored samples too
        np.testing.assert_allclose(trajectory.q[k], trajectory.q0, rtol=0, atol=1e-12)
        assert np.abs(trajectory.qd[k]).max() <= 1e-9 and np.abs(trajectory.qdd[k]).max() <= 1e-9


def _condition(model, trajectory):
    """κ of the base regressor along the samples with unit-norm columns, computed here."""
    Y = full_regressor(model, trajectory.q, trajectory.qd, trajectory.qdd)
    Y = base_parameters(model).base_regressor(Y)
    Y = Y.reshape(-1, Y.shape[-1])
    return np.linalg.cond(Y / np.linalg.norm(Y, axis=0))


# ---------------------------------------------------------------------------------------------

def test_starts_and_ends_at_rest_at_q0(robot, optimised, randoms):
    _, model = robot
    limited = np.isfinite(model.lower) & np.isfinite(model.upper)
    np.testing.assert_allclose(optimised.q0, np.where(limited, 0.5 * (model.lower + model.upper), 0.0))
    for trajectory in [optimised, *randoms]:
        _assert_at_rest_at_both_ends(trajectory)
    # the rest conditions, as the coefficients state them: Σ_l a_jl = 0, Σ_l l b_jl = 0
    np.testing.assert_allclose(optimised.a.sum(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(optimised.b @ np.arange(1, HARMONICS + 1), 0.0, atol=1e-12)
    # and outside [0, duration] the robot stays there
    q, qd, qdd = optimised.sample([-1.0, DURATION + 1.0])
    np.testing.assert_array_equal(q, np.tile(optimised.q0, (2, 1)))
    assert not qd.any() and not qdd.any()


def test_within_the_limits_on_a_1khz_grid(robot, optimised, randoms):
    name, model = robot
    used = _assert_within_limits(model, optimised)
    # it uses the room it has: every joint reaches at least 90 % of one of its limits... or the optimiser
    # chose a smaller motion for it; at least most joints do
    reached = np.max(np.stack(used), axis=0)
    assert np.count_nonzero(reached > 0.9) >= model.nq - 2, reached
    for trajectory in randoms:
        used = np.max(np.stack(_assert_within_limits(model, trajectory)), axis=0)
        np.testing.assert_array_less(0.97, used)           # random series are scaled to their limits


def test_sample_agrees_with_finite_differences(optimised):
    tr = optimised
    t = np.linspace(0.01, DURATION - 0.01, 301)
    h = 1e-4
    q, qd, qdd = tr.sample(t)
    q_plus, qd_plus, _ = tr.sample(t + h)
    q_minus, qd_minus, _ = tr.sample(t - h)
    # central differences: truncation h²/6 |q'''| ~ 1e-8, rounding ε |q| / h ~ 1e-11
    np.testing.assert_allclose((q_plus - q_minus) / (2 * h), qd, rtol=0, atol=1e-7 * max(1, np.abs(qd).max()))
    np.testing.assert_allclose((qd_plus - qd_minus) / (2 * h), qdd, rtol=0,
                               atol=1e-7 * max(1, np.abs(qdd).max()))
    # the stored samples are the series at t, t at samples_per_second with both ends
    assert tr.t[0] == 0.0 and tr.t[-1] == DURATION and tr.t.shape == (round(DURATION * 200) + 1,)
    for stored, sampled in zip((tr.q, tr.qd, tr.qdd), tr.sample(tr.t)):
        np.testing.assert_allclose(stored, sampled, rtol=0, atol=1e-13)
    # the series of the docstring, written out from a and b
    w = 2 * np.pi * tr.base_frequency * np.arange(1, HARMONICS + 1)
    offset = (tr.b / w).sum(axis=1)
    q_series = tr.q0 + offset + (np.sin(np.outer(t, w)) / w) @ tr.a.T - (np.cos(np.outer(t, w)) / w) @ tr.b.T
    np.testing.assert_allclose(q, q_series, rtol=0, atol=1e-12)


def test_optimised_condition_is_lower_than_random_feasible_series(robot, optimised, randoms):
    name, model = robot
    random_conditions = [trajectory.condition for trajectory in randoms]
    print(f"\n{name}: condition optimised {optimised.condition:.2f}, random {np.round(random_conditions, 1)}")
    assert optimised.condition < min(random_conditions)
    assert optimised.condition < 0.75 * min(random_conditions)     # measured: 0.4-0.6 of the best random
    # the reported condition is the regressor's along the samples, recomputed here
    for trajectory in (optimised, randoms[0]):
        np.testing.assert_allclose(trajectory.condition, _condition(model, trajectory), rtol=1e-8)


def test_joint_trajectory_points_lie_on_the_series(robot, optimised):
    _, model = robot
    points = optimised.to_joint_trajectory()                        # 50 Hz
    assert points.joint_names == model.joint_names
    np.testing.assert_allclose(points.time_from_start, np.linspace(0.0, DURATION, 501), rtol=0, atol=1e-12)
    q, qd, qdd = optimised.sample(points.time_from_start)
    for got, want in ((points.positions, q), (points.velocities, qd), (points.accelerations, qdd)):
        assert got.shape == (501, model.nq)
        np.testing.assert_array_equal(got, want)
    # a controller's quintic segments through (position, velocity, acceleration) reproduce the series
    t_mid, spline = _quintic_midpoints(points)
    np.testing.assert_allclose(spline, optimised.sample(t_mid)[0], rtol=0, atol=1e-9)
    coarse = optimised.to_joint_trajectory(rate=20.0)
    assert coarse.time_from_start.shape == (201,)
    t_mid, spline = _quintic_midpoints(coarse)
    np.testing.assert_allclose(spline, optimised.sample(t_mid)[0], rtol=0, atol=1e-7)


def _quintic_midpoints(points):
    """The quintic Hermite segment between consecutive points evaluated at each segment's middle."""
    t = points.time_from_start
    dt = np.diff(t)[:, None]
    p0, p1 = points.positions[:-1], points.positions[1:]
    v0, v1 = points.velocities[:-1] * dt, points.velocities[1:] * dt
    a0, a1 = points.accelerations[:-1] * dt ** 2, points.accelerations[1:] * dt ** 2
    s = 0.5                                                  # quintic Hermite basis at s = 1/2
    h = [1 - 10 * s**3 + 15 * s**4 - 6 * s**5, s - 6 * s**3 + 8 * s**4 - 3 * s**5,
         0.5 * s**2 - 1.5 * s**3 + 1.5 * s**4 - 0.5 * s**5, 0.5 * s**3 - s**4 + 0.5 * s**5,
         -4 * s**3 + 7 * s**4 - 3 * s**5, 10 * s**3 - 15 * s**4 + 6 * s**5]
    value = h[0] * p0 + h[1] * v0 + h[2] * a0 + h[3] * a1 + h[4] * v1 + h[5] * p1
    return t[:-1] + 0.5 * dt[:, 0], value


def test_deterministic_for_a_seed():
    model = rd.load_urdf(resources.default_urdf())
    runs = [excitation_trajectory(model, 4.0, harmonics=3, seed=seed, max_iterations=15, restarts=1)
            for seed in (3, 3, 4)]
    for field in ("t", "q", "qd", "qdd", "a", "b", "q0"):
        np.testing.assert_array_equal(getattr(runs[0], field), getattr(runs[1], field))
    assert runs[0].condition == runs[1].condition
    assert not np.array_equal(runs[0].a, runs[2].a)
    random = [random_fourier_trajectory(model, 4.0, harmonics=3, seed=7) for _ in range(2)]
    np.testing.assert_array_equal(random[0].q, random[1].q)


def test_several_periods_a_given_q0_and_acceleration_limits():
    model = rd.load_urdf(resources.default_urdf())
    q0 = np.array([0.3, -1.2, 1.0, -1.5, -1.6, 0.2])
    margins = (0.2, 0.5, 0.6)
    # 2 / duration, given with a rounding error: rounded to the whole number of periods
    tr = excitation_trajectory(model, 8.0, harmonics=4, base_frequency=0.25 * (1 + 1e-9), q0=q0,
                               margins=margins, acceleration_limit=3.0, max_iterations=20, restarts=1)
    assert tr.base_frequency == 0.25 and tr.a.shape == (6, 4)
    np.testing.assert_array_equal(tr.q0, q0)
    _assert_at_rest_at_both_ends(tr)
    _assert_within_limits(model, tr, margins, acceleration_limit=3.0)
    t = np.linspace(0.0, 4.0, 97)
    for first, second in zip(tr.sample(t), tr.sample(t + 4.0)):     # the period repeats
        np.testing.assert_allclose(first, second, rtol=0, atol=1e-12)


def test_continuous_and_prismatic_joints_use_the_range_about_q0():
    model = rd.load_urdf(random_tree(7, 4, types=("continuous", "prismatic", "revolute")).to_urdf())
    assert "continuous" in model.joint_types
    tr = excitation_trajectory(model, 6.0, harmonics=3, max_iterations=20, restarts=1)
    unlimited = ~np.isfinite(model.lower)
    assert (tr.q0[unlimited] == 0.0).all()
    _assert_at_rest_at_both_ends(tr)
    _assert_within_limits(model, tr)


@functools.lru_cache(maxsize=None)
def _ur5e():
    return rd.load_urdf(resources.default_urdf())


BAD = [
    (dict(duration=0.0), "duration"),
    (dict(duration=-2.0), "duration"),
    (dict(duration=float("nan")), "duration"),
    (dict(duration="10"), "duration"),
    (dict(harmonics=0), "harmonics"),
    (dict(harmonics=1), "harmonics"),
    (dict(harmonics=2.5), "harmonics"),
    (dict(base_frequency=0.15), "base_frequency"),          # 1.5 periods in 10 s
    (dict(base_frequency=0.0), "base_frequency"),
    (dict(q0=np.zeros(5)), "q0"),
    (dict(q0=[0, 0, 3.0, 0, 0, 0]), "q0"),                 # elbow within [-π, π] but not the shrunk box
    (dict(q0=[0, 0, float("nan"), 0, 0, 0]), "q0"),
    (dict(margins=(-0.1, 0.8, 0.8)), "margins"),
    (dict(margins=(0.5, 0.8, 0.8)), "margins"),
    (dict(margins=(0.1, 0.0, 0.8)), "margins"),
    (dict(margins=(0.1, 0.8, 1.5)), "margins"),
    (dict(margins=(0.1, 0.8)), "margins"),
    (dict(acceleration_limit=-1.0), "acceleration_limit"),
    (dict(acceleration_limit=[1.0, 2.0]), "acceleration_limit"),
    (dict(acceleration_limit=np.inf), "acceleration_limit"),
    (dict(samples_per_second=4.0), "samples_per_second"),   # below 10 × 5 harmonics × 0.1 Hz
    (dict(samples_per_second=-1.0), "samples_per_second"),
    (dict(seed=-1), "seed"),
    (dict(seed=1.5), "seed"),
    (dict(max_iterations=-1), "max_iterations"),
    (dict(restarts=0), "restarts"),
    (dict(armature="yes"), "armature"),
]


@pytest.mark.parametrize("changes, name", BAD, ids=[f"{n}-{i}" for i, (_, n) in enumerate(BAD)])
def test_bad_input_raises_naming_the_argument(changes, name):
    arguments = dict(duration=10.0, harmonics=5, max_iterations=0, restarts=1) | changes
    duration = arguments.pop("duration")
    with pytest.raises(ValueError, match=name):
        excitation_trajectory(_ur5e(), duration, **arguments)
    if name not in ("max_iterations", "restarts"):
        arguments.pop("max_iterations"), arguments.pop("restarts")
        with pytest.raises(ValueError, match=name):
            random_fourier_trajectory(_ur5e(), duration, **arguments)


def test_bad_sample_times_and_rates_raise_naming_them():
    tr = random_fourier_trajectory(_ur5e(), 10.0, harmonics=5)
    assert isinstance(tr, ExcitationTrajectory)
    with pytest.raises(ValueError, match="t must be finite"):
        tr.sample([0.0, float("nan")])
    with pytest.raises(ValueError, match="^t "):
        tr.sample("now")
    for rate in (0.0, 4.0, -3.0, "fast"):
        with pytest.raises(ValueError, match="rate"):
            tr.to_joint_trajectory(rate=rate)
    with pytest.raises(ValueError, match="model"):
        excitation_trajectory("ur5e.urdf", 10.0)


@pytest.mark.slow
@pytest.mark.parametrize("duration", [10.0, 20.0])
def test_defaults_on_both_robots_report(robot, duration):
    """The docstring's figures: the defaults (150 iterations × 2 starts) against 10 random series."""
    name, model = robot
    start = time.perf_counter()
    trajectory = excitation_trajectory(model, duration)
    elapsed = time.perf_counter() - start
    random_conditions = [random_fourier_trajectory(model, duration, seed=s).condition
                         for s in range(100, 110)]
    print(f"\n{name} {duration:.0f} s: optimised {trajectory.condition:.2f} in {elapsed:.1f} s; random best "
          f"{min(random_conditions):.1f}, median {np.median(random_conditions):.1f}, worst "
          f"{max(random_conditions):.1f}")
    _assert_at_rest_at_both_ends(trajectory)
    _assert_within_limits(model, trajectory)
    assert trajectory.condition < 0.6 * min(random_conditions)
