"""`python -m robot_dynamics_ros.cli.identify robot` on a real bag: the shipped "real arm"
(urdf/ur5e_real_arm.urdf with the armature and effort offsets of config/ur5e_real_arm.yaml) recorded
with noise, written with rosbags' Writer, identified from the stock URDF in a subprocess as a user runs
it; the written URDF and YAML are loaded back and judged on data the tool never saw."""

import json

import numpy as np
import pytest
from test_identify_cli import REPO, START_SEC, _run, _write_bag

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import bringup

STOCK = REPO / 'urdf' / 'ur5e.urdf'
REAL_URDF = REPO / 'urdf' / 'ur5e_real_arm.urdf'
REAL_PARAMETERS = REPO / 'config' / 'ur5e_real_arm.yaml'
Q0 = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
FREQUENCIES = np.array([0.1, 0.2, 0.3, 0.4, 0.5])          # Hz


def real_arm():
    """(model, effort offsets) of the shipped real arm."""
    parameters = bringup.config_parameters(REAL_PARAMETERS)['/**']
    return (rd.load_urdf(REAL_URDF, armature=parameters['armature']),
            np.array(parameters['effort_offset'], dtype=float))


def motion(duration, rate, seed):
    """(t, q, q̇, q̈): five sines per joint about Q0, amplitudes up to 0.5 rad, exact derivatives."""
    rng = np.random.default_rng(seed)
    amplitude = rng.uniform(0.1, 0.5, (Q0.size, FREQUENCIES.size)) / np.arange(1, 6)
    phase = rng.uniform(0.0, 2 * np.pi, (Q0.size, FREQUENCIES.size))
    t = np.arange(int(round(duration * rate))) / rate
    w = 2 * np.pi * FREQUENCIES
    angle = w * t[:, None, None] + phase
    return (t, Q0 + (amplitude * np.sin(angle)).sum(axis=2), (amplitude * w * np.cos(angle)).sum(axis=2),
            -(amplitude * w ** 2 * np.sin(angle)).sum(axis=2))


@pytest.fixture(scope='module')
def identified(tmp_path_factory):
    """The tool's JSON line and output paths for a 30 s, 500 Hz recording with 0.5 % torque noise."""
    arm, offset = real_arm()
    t, q, qd, qdd = motion(30.0, 500.0, seed=2)
    tau = rd.inverse_dynamics_trajectory(arm, q, qd, qdd, friction=True) + offset
    rng = np.random.default_rng(5)
    tau += 0.005 * np.sqrt(np.mean(tau ** 2, axis=0)) * rng.standard_normal(tau.shape)
    folder = tmp_path_factory.mktemp('identify_robot')
    bag = _write_bag(folder / 'recording', 'mcap', t, list(arm.joint_names), q, tau, defects=False)
    output = folder / 'identified.urdf'
    result = _run('robot', '--bag', bag, '--urdf', STOCK, '--output', output, '--armature', '--json')
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout), output, bag


def test_the_held_out_error_drops_and_the_files_run_the_arm(identified):
    report, output, _ = identified
    before, after = np.array(report['rms_before']), np.array(report['rms_after'])
    assert (after < before / 5).all(), (before, after)
    arm, offset = real_arm()
    assert np.allclose(report['offset'], offset, atol=0.05), (report['offset'], offset)
    assert report['condition'] < 1e3 and report['samples'] > 9000 and report['output'] == str(output)
    # the user's side: the identified URDF and YAML, loaded as the nodes load them
    parameters = bringup.config_parameters(output.with_suffix('.yaml'))['/**']
    model = rd.load_urdf(output, armature=parameters['armature'])
    t, q, qd, qdd = motion(10.0, 200.0, seed=9)
    truth = rd.inverse_dynamics_trajectory(arm, q, qd, qdd, friction=True) + offset
    predicted = rd.inverse_dynamics_trajectory(model, q, qd, qdd, friction=True) + parameters['effort_offset']
    stock = rd.inverse_dynamics_trajectory(rd.load_urdf(STOCK), q, qd, qdd)
    error = np.sqrt(np.mean((predicted - truth) ** 2, axis=0))
    stock_error = np.sqrt(np.mean((stock - truth) ** 2, axis=0))
    assert (error < stock_error / 10).all(), (error, stock_error)


def test_the_report_and_the_old_payload_form(identified, tmp_path):
    _, _, bag = identified
    result = _run('robot', '--bag', bag, '--urdf', STOCK, '--output', tmp_path / 'arm.urdf')
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert 'RMS URDF' in out and 'shoulder_pan_joint' in out and 'wrote ' in out, out
    assert (tmp_path / 'arm.urdf').is_file() and (tmp_path / 'arm.yaml').is_file()
    result = _run('robot', '--bag', bag, '--urdf', STOCK, '--output', tmp_path / 'arm.txt')
    assert result.returncode == 2 and '--output must name a .urdf file' in result.stderr
    for form in (('payload',), ()):          # the payload mode, with and without its subcommand
        result = _run(*form, '--bag', bag, '--urdf', STOCK, '--json')
        assert result.returncode == 0, result.stdout + result.stderr
        assert 'mass' in json.loads(result.stdout)
    assert START_SEC > 0
