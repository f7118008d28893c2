"""The feed-forward efforts of trajectory_feedforward (logic/feedforward.py) against Pinocchio: at every
point of random trajectories, τ_k = pin.rnea(q_k, q̇_k, q̈_k) with q̇_k, q̈_k as JTC's spline sampler
gives them (checked here against scipy's splines, written by others too), for the goals' joints only
(the others at their measured positions), with a payload, and less each hardware profile's firmware
terms (Pinocchio's computeGeneralizedGravity and the Coriolis of pin.rnea at q̈ = 0)."""
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import CubicHermiteSpline

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.feedforward import FeedforwardPlan, knot_derivatives
from robot_dynamics_ros.logic.hardware import PROFILES, resolve
from robot_dynamics_ros.logic.input_guard import BadInput

pin = pytest.importorskip("pinocchio")


def _trajectory(rng, model, columns, N=6, fields='positions'):
    """times (N,), positions (N, m) within the limits, per-point velocities / accelerations or None."""
    lower = np.maximum(model.lower[columns], -3.0)
    upper = np.minimum(model.upper[columns], 3.0)
    times = np.cumsum(rng.uniform(0.2, 0.8, N))
    q = rng.uniform(lower, upper, (N, columns.size))
    v = [rng.normal(size=columns.size) for _ in range(N)] if fields != 'positions' else [None] * N
    a = [rng.normal(size=columns.size) * 3 for _ in range(N)] if fields == 'accelerations' else [None] * N
    return times, q, v, a


@pytest.mark.parametrize('fields', ['positions', 'velocities', 'accelerations'])
def test_knot_derivatives_are_the_splines_jtc_samples(fields):
    """Linear slopes, a cubic Hermite spline's second derivative (scipy's), the quintic's given values;
    the last point as given, else at rest."""
    rng = np.random.default_rng(1)
    times = np.cumsum(rng.uniform(0.2, 0.8, 5))
    q = rng.normal(size=(5, 3))
    v = [rng.normal(size=3) for _ in range(5)] if fields != 'positions' else [None] * 5
    a = [rng.normal(size=3) for _ in range(5)] if fields == 'accelerations' else [None] * 5
    qd, qdd = knot_derivatives(times, q, v, a)
    if fields == 'positions':
        np.testing.assert_allclose(qd[:-1], np.diff(q, axis=0) / np.diff(times)[:, None], rtol=1e-14)
        assert not qdd.any() and not qd[-1].any()
    elif fields == 'velocities':
        spline = CubicHermiteSpline(times, q, np.array(v))
        np.testing.assert_allclose(qd, np.array(v), rtol=1e-14)
        np.testing.assert_allclose(qdd[:-1], spline(times[:-1], 2), rtol=1e-9, atol=1e-9)
        assert not qdd[-1].any()
    else:
        np.testing.assert_allclose(qd, np.array(v), rtol=1e-14)
        np.testing.assert_allclose(qdd, np.array(a), rtol=1e-14)


@pytest.mark.parametrize('fields', ['positions', 'velocities', 'accelerations'])
@pytest.mark.parametrize('pair', ['ur5', 'panda_locked'], indirect=True)
def test_efforts_are_pinocchios_inverse_dynamics(pair, check, fields):
    m = pair.model
    rng = np.random.default_rng(7)
    for partial in (False, True):
        columns = np.sort(rng.choice(m.nq, 4, replace=False)) if partial else np.arange(m.nq)
        names = [m.joint_names[i] for i in columns]
        q_rest = rng.uniform(np.maximum(m.lower, -3), np.minimum(m.upper, 3))
        times, q, v, a = _trajectory(rng, m, columns, fields=fields)
        plan = FeedforwardPlan(m, m, resolve(), names)
        tau = plan.fill(q_rest, times, q, v, a)
        qd, qdd = knot_derivatives(times, q, v, a)
        for k in range(times.size):
            Q, QD, QDD = q_rest.copy(), np.zeros(m.nq), np.zeros(m.nq)
            Q[columns], QD[columns], QDD[columns] = q[k], qd[k], qdd[k]
            expected = pair.vec(pin.rnea(pair.pm, pair.pd, pair.pin_q(Q), pair.pin_v(QD), pair.pin_v(QDD)))
            check(f'feed-forward efforts ({fields})', pair.name, tau[k], expected[columns])


@pytest.mark.parametrize('profile', sorted(PROFILES))
@pytest.mark.parametrize('pair', ['ur5'], indirect=True)
def test_efforts_with_a_payload_less_each_profiles_firmware(pair, check, profile):
    """The model carries a payload (Pinocchio: a body appended at the tip frame's joint); the firmware
    knows the arm without it, and its gravity (and Coriolis) come off: Pinocchio's
    computeGeneralizedGravity of the arm alone."""
    m = pair.model
    mass, com = 2.5, np.array([0.0, 0.01, 0.08])
    inertia = np.diag([0.01, 0.012, 0.008])
    loaded = rd.with_payload(m, mass, com, inertia)
    pm = pin.Model(pair.pm)
    frame = pm.frames[pair.frame_id(m.tip_frame)]
    pm.appendBodyToJoint(frame.parentJoint, pin.Inertia(mass, com, inertia), frame.placement)
    pd = pm.createData()
    conventions = resolve(profile, n=m.nq)
    rng = np.random.default_rng(11)
    times, q, v, a = _trajectory(rng, m, np.arange(m.nq), fields='velocities')
    plan = FeedforwardPlan(loaded, m, conventions, list(m.joint_names))
    tau = plan.fill(np.zeros(m.nq), times, q, v, a)
    qd, qdd = knot_derivatives(times, q, v, a)
    for k in range(times.size):
        Q, QD, QDD = pair.pin_q(q[k]), pair.pin_v(qd[k]), pair.pin_v(qdd[k])
        expected = pair.vec(pin.rnea(pm, pd, Q, QD, QDD))
        if 'gravity' in conventions.firmware_compensates:
            expected = expected - pair.vec(pin.computeGeneralizedGravity(pair.pm, pair.pd, Q))
        if 'coriolis' in conventions.firmware_compensates:
            expected = expected - pair.vec(pin.rnea(pair.pm, pair.pd, Q, QD, 0 * QD)
                                           - pin.computeGeneralizedGravity(pair.pm, pair.pd, Q))
        check(f'feed-forward efforts, payload, {profile}', pair.name, tau[k], expected)


@pytest.mark.parametrize('pair', ['ur5'], indirect=True)
def test_unknown_joints_are_refused_naming_them(pair):
    with pytest.raises(BadInput, match='gripper'):
        FeedforwardPlan(pair.model, pair.model, resolve(), ['shoulder_pan_joint', 'gripper'])



def test_friction_compensation_adds_the_urdf_friction_of_each_points_velocity():
    """friction: Pinocchio's rnea plus F_v q̇ + F_s sgn(q̇) with the URDF's <dynamics damping friction>
    (urdf/ur5e.urdf has them); none where the firmware compensates friction (Franka: it supplies it)."""
    path = str(Path(__file__).resolve().parents[2] / 'urdf' / 'ur5e.urdf')
    m, pm = rd.load_urdf(path), pin.buildModelFromUrdf(path)
    pd = pm.createData()
    assert list(pm.names)[1:] == list(m.joint_names) and m.friction.min() > 0
    rng = np.random.default_rng(3)
    times, q, v, a = _trajectory(rng, m, np.arange(m.nq), fields='velocities')
    qd, qdd = knot_derivatives(times, q, v, a)
    tau = FeedforwardPlan(m, m, resolve(), list(m.joint_names), friction=True).fill(
        np.zeros(m.nq), times, q, v, a)
    for k in range(times.size):
        expected = pin.rnea(pm, pd, q[k], qd[k], qdd[k]) + m.damping * qd[k] + m.friction * np.sign(qd[k])
        np.testing.assert_allclose(tau[k], expected, rtol=1e-12, atol=1e-12)
    franka = FeedforwardPlan(m, m, resolve('franka'), list(m.joint_names), friction=True)
    assert not franka.friction
