"""The hardware conventions (robot_dynamics_ros.logic.hardware): what each profile's firmware adds to a
command, the measured-effort conversions, bad values, and the start-up check of the effort convention
(both directions, and not fooled by sensor noise and offsets)."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.hardware import (
    FIT_MARGIN,
    MIN_GRAVITY,
    PROFILES,
    REST_STATES,
    REST_VELOCITY,
    EffortConventionCheck,
    check_effort_convention,
    command_rate_problem,
    resolve,
)

UR5E_URDF = Path(__file__).resolve().parents[2] / 'urdf' / 'ur5e.urdf'
BENT = np.array([0.3, -1.2, 1.5, -1.0, -1.57, 0.2])      # g is large at shoulder and elbow


@pytest.fixture(scope='module')
def ur5e():
    model = rd.load_urdf(str(UR5E_URDF))
    assert model.damping.min() > 0 and model.friction.min() > 0     # the friction terms mean something
    return model


def _state(model, seed):
    rng = np.random.default_rng(seed)
    q = rng.uniform(np.maximum(model.lower, -3.0), np.minimum(model.upper, 3.0))
    return q, rng.normal(size=model.nq), rng.normal(size=model.nq) * 20.0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), profile=st.sampled_from(sorted(PROFILES)))
def test_command_plus_the_firmware_terms_is_the_full_torque(ur5e, seed, profile):
    """For every profile: τ_command + τ_firmware(q, q̇) = τ_full + the friction the firmware supplies,
    each term computed independently here (gravity and Coriolis from the RNEA, friction by hand)."""
    q, qd, tau = _state(ur5e, seed)
    c = resolve(profile)
    command = c.command(ur5e, tau, q, qd)
    gravity = rd.inverse_dynamics(ur5e, q, np.zeros(6), np.zeros(6))
    s_v, s_c = (np.ones(6) if s is None else s for s in (c.viscous_scale, c.coulomb_scale))
    expected = {'gravity': gravity,
                'coriolis': rd.inverse_dynamics(ur5e, q, qd, np.zeros(6)) - gravity,
                'friction': s_v * ur5e.damping * qd + s_c * ur5e.friction * np.sign(qd)}
    firmware = sum((expected[t] for t in c.firmware_compensates), np.zeros(6))
    np.testing.assert_allclose(c.firmware_torques(ur5e, q, qd), firmware, atol=1e-10)
    supplied = expected['friction'] if c.adds_friction else 0.0
    np.testing.assert_allclose(command + firmware, tau + supplied, atol=1e-10)
    if 'gravity' in c.firmware_compensates:
        assert np.abs(command - tau).max() > 1.0     # the firmware's gravity is not small here
    else:
        assert command is tau


def test_explicit_fields_override_the_profile(ur5e):
    q, qd, tau = _state(ur5e, 1)
    g = rd.gravity_torques(ur5e, q)
    c = resolve('ros2_control', firmware_compensates=['gravity', 'coriolis'])
    coriolis = rd.coriolis_forces(ur5e, q, qd)
    np.testing.assert_allclose(c.command(ur5e, tau, q, qd), tau - g - coriolis, atol=1e-10)
    assert resolve('franka', firmware_compensates=['none']).command(ur5e, tau, q, qd) is tau
    assert resolve('kuka_fri', measured_effort='gravity_compensated').measured_effort == 'gravity_compensated'
    # the UR's per-joint friction scales, of the URDF's viscous and Coulomb friction
    s_v, s_c = np.linspace(0.0, 1.0, 6), np.linspace(1.0, 0.5, 6)
    c = resolve('ur', viscous_scale=s_v, coulomb_scale=s_c, n=6)
    expected = g + s_v * ur5e.damping * qd + s_c * ur5e.friction * np.sign(qd)
    np.testing.assert_allclose(c.firmware_torques(ur5e, q, qd), expected, atol=1e-10)
    np.testing.assert_allclose(c.firmware_torques(ur5e, q, qd, friction=False), g, atol=1e-10)
    np.testing.assert_allclose(c.command(ur5e, tau, q, qd), tau - g, atol=1e-10)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), measured=st.sampled_from(['full', 'gravity_compensated']))
def test_measured_efforts_back_to_the_full_torque(ur5e, seed, measured):
    """full_torque(measured(τ)) = τ with a scale and an offset; 'gravity_compensated' reports τ − g."""
    q, _, tau = _state(ur5e, seed)
    rng = np.random.default_rng(seed)
    scale, offset = rng.uniform(0.5, 2.0, 6), rng.normal(size=6)
    c = resolve('ros2_control', measured_effort=measured, effort_scale=scale, effort_offset=offset, n=6)
    effort = c.measured(ur5e, tau, q)
    np.testing.assert_allclose(c.full_torque(ur5e, effort, q), tau, atol=1e-9)
    g = rd.gravity_torques(ur5e, q)
    reported = (effort - offset) * scale
    np.testing.assert_allclose(reported, tau - g if measured == 'gravity_compensated' else tau, atol=1e-9)


@pytest.mark.parametrize('kwargs, names', [
    (dict(profile='gazebo'), 'hardware_profile'),
    (dict(firmware_compensates=['gravity', 'inertia']), 'firmware_compensates'),
    (dict(firmware_compensates=['gravity', 'gravity']), 'firmware_compensates'),
    (dict(measured_effort='compensated'), 'measured_effort'),
    (dict(viscous_scale=[1.0, 1.0], n=6), 'firmware_viscous_scale'),
    (dict(coulomb_scale=[1.0] * 5 + [-1.0], n=6), 'firmware_coulomb_scale'),
    (dict(effort_scale=[1.0] * 5 + [0.0], n=6), 'effort_scale'),
    (dict(effort_scale=[1.0] * 5 + [np.nan], n=6), 'effort_scale'),
])
def test_bad_values_are_refused_naming_the_parameter(kwargs, names):
    with pytest.raises(ValueError, match=names):
        resolve(**kwargs)


# -- the start-up check ----------------------------------------------------------------------------
def _feed(model, conventions, efforts, q=BENT, qd=None):
    check = EffortConventionCheck(model, model, conventions)
    qd = np.zeros(model.nq) if qd is None else qd
    for effort in efforts:
        result = check.add(q, qd, effort)
    return result


def _noisy(model, tau, seed, noise=0.3, offset=0.0):
    rng = np.random.default_rng(seed)
    return [tau + offset + rng.normal(scale=noise, size=model.nq) for _ in range(REST_STATES)]


@pytest.mark.parametrize('configured, reported', [('full', 'gravity_compensated'),
                                                  ('gravity_compensated', 'full')])
def test_the_start_up_check_finds_the_contradiction_both_ways(ur5e, configured, reported):
    """Efforts ≈ 0 at a posture with large g(q) under a 'full' profile, or ≈ g(q) under
    'gravity_compensated': a contradiction naming the convention the data fits (and a profile with it)."""
    g = rd.gravity_torques(ur5e, BENT)
    assert np.linalg.norm(g) > 5 * MIN_GRAVITY
    arm = resolve('ros2_control', measured_effort=reported)
    efforts = _noisy(ur5e, arm.measured(ur5e, g, BENT), 0)
    result = _feed(ur5e, resolve('ros2_control', measured_effort=configured), efforts)
    assert result.status == 'contradiction' and not result.allows_commands
    assert result.fitting == reported and f"'{reported}'" in result.message
    if reported == 'full':
        assert 'franka' in result.message          # a profile whose efforts are full
    # the right convention passes
    result = _feed(ur5e, resolve('ros2_control', measured_effort=reported), efforts)
    assert result.status == 'consistent' and result.allows_commands


@pytest.mark.parametrize('measured', ['full', 'gravity_compensated'])
def test_noise_offsets_and_a_payload_do_not_trigger_it(ur5e, measured):
    """Sensor noise of 1 N m, offsets of ±3 N m and a 1 kg payload the model does not know stay below
    FIT_MARGIN of g: consistent, never a contradiction."""
    g = rd.gravity_torques(ur5e, BENT)
    payload = rd.with_payload(ur5e, mass=1.0, com=np.array([0.0, 0.0, 0.05]), inertia=np.zeros((3, 3)))
    tau = rd.gravity_torques(payload, BENT)
    c = resolve('ros2_control', measured_effort=measured)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        offset = rng.uniform(-3.0, 3.0, 6)
        result = _feed(ur5e, c, _noisy(ur5e, c.measured(ur5e, tau, BENT), seed, noise=1.0, offset=offset))
        assert result.status == 'consistent', (seed, result.message, np.linalg.norm(g))


def test_inconclusive_where_gravity_is_small_and_where_the_efforts_fit_neither(ur5e):
    """Arm straight up (|g| small): inconclusive, commands allowed (a wrong convention can do no more
    harm than |g|). Half of g: neither convention: inconclusive, allowed, said so."""
    up = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
    assert np.linalg.norm(rd.gravity_torques(ur5e, up)) < MIN_GRAVITY
    result = _feed(ur5e, resolve(), [np.zeros(6)] * REST_STATES, q=up)
    assert result.status == 'inconclusive' and result.allows_commands and result.share is None
    g = rd.gravity_torques(ur5e, BENT)
    result = _feed(ur5e, resolve(), [0.5 * g] * REST_STATES)
    assert result.status == 'inconclusive' and result.allows_commands
    assert abs(result.share - 0.5) < FIT_MARGIN and 'neither' in result.message


def test_the_check_waits_for_rest_and_ends_without_efforts(ur5e):
    g = rd.gravity_torques(ur5e, BENT)
    check = EffortConventionCheck(ur5e, ur5e, resolve())
    moving = np.full(6, 2 * REST_VELOCITY)
    for _ in range(3 * REST_STATES):
        assert check.add(BENT, moving, np.zeros(6)) is None     # never judged while moving
    assert 'at rest' in check.waiting
    for _ in range(REST_STATES - 1):
        assert check.add(BENT, np.zeros(6), g) is None
    assert check.add(BENT, moving, g) is None                   # motion starts the average again
    for _ in range(REST_STATES):
        result = check.add(BENT, np.zeros(6), g)
    assert result.status == 'consistent' and check.waiting is None
    assert EffortConventionCheck(ur5e, ur5e, resolve()).add(BENT, np.zeros(6), None).status == 'no_efforts'


def test_the_payload_is_the_models_and_the_firmware_knows_the_arm(ur5e):
    """The node's model carries a payload the firmware does not know: at rest 'full' efforts are g of the
    model with it, 'gravity_compensated' ones g of the payload alone: both consistent."""
    loaded = rd.with_payload(ur5e, mass=3.0, com=np.array([0.0, 0.0, 0.1]), inertia=np.zeros((3, 3)))
    g_loaded, g_arm = rd.gravity_torques(loaded, BENT), rd.gravity_torques(ur5e, BENT)
    for measured, efforts in (('full', g_loaded), ('gravity_compensated', g_loaded - g_arm)):
        c = resolve('ros2_control', measured_effort=measured)
        result = check_effort_convention(loaded, ur5e, c, BENT, efforts)
        assert result.status == 'consistent', result.message
        assert abs(result.share - (measured == 'full')) < 1e-9


def test_the_vendors_values():
    """What doc/hardware.md cites: Franka and UR compensate gravity and friction (UR with its default
    scales), KUKA FRI gravity, Kinova's low-level mode nothing; UR's efforts are motor currents, which
    nothing reads as torques, and the check says so."""
    assert resolve('franka').firmware_compensates == {'gravity', 'friction'}
    ur = resolve('ur', n=6)
    assert ur.firmware_compensates == {'gravity', 'friction'} and ur.viscous_scale[2] == 0.8
    assert resolve('ur', n=7).viscous_scale is None        # the UR scales fit six joints only
    assert resolve('kuka_fri').firmware_compensates == {'gravity'}
    assert not resolve('kinova').firmware_compensates
    assert not ur.efforts_are_torques
    with pytest.raises(ValueError, match='currents'):
        ur.full_torque(None, np.zeros(6), np.zeros(6))
    assert resolve('ur', measured_effort='gravity_compensated').efforts_are_torques


def test_currents_are_not_checked(ur5e):
    result = _feed(ur5e, resolve('ur'), [np.zeros(6)] * REST_STATES)
    assert result.status == 'no_torques' and result.allows_commands


def test_command_rate_problem():
    assert command_rate_problem(resolve('ur'), 100.0) is not None
    assert '500 Hz' in command_rate_problem(resolve('ur'), 100.0)
    assert command_rate_problem(resolve('ur'), 500.0) is None
    assert command_rate_problem(resolve(), 1.0) is None          # ros2_control needs no rate
    assert command_rate_problem(resolve('franka'), None) is None
