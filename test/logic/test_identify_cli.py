"""`python -m robot_dynamics_ros.cli.identify` on real bags: a simulated recording of a UR5e carrying a known
payload, written with rosbags' Writer (sqlite3 and mcap), read back by the tool in a subprocess."""

import json
import os
import pathlib
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import robot_dynamics_ros
from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli.identify import IdentifyError, joint_log, main, param_commands

REPO = pathlib.Path(robot_dynamics_ros.__file__).resolve().parents[1]
URDF = REPO / 'urdf' / 'ur5e.urdf'

# the payload of the recording, at tool0 (kg, m in tool0 coordinates, kg m^2 about its com in tool0 axes)
MASS, COM, INERTIA = 2.0, np.array([0.01, -0.02, 0.08]), np.diag([0.010, 0.012, 0.008])
Q0 = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
FREQUENCIES = np.array([0.15, 0.3, 0.45, 0.6, 0.75])       # Hz
RATE, DURATION = 500.0, 10.0                                # Hz, s
START_SEC = 1_700_000_000                                   # header stamps of a real clock (s)
EXTRA_JOINT = 'gripper_finger_joint'                        # in the messages, not in the model


def _recording(duration=DURATION, seed=3):
    """(t, names, q, tau): the UR5e with the payload following q(t) = Q0 + 5 sines per joint (amplitudes
    in ±0.25 rad, random phases), torques by inverse dynamics plus 0.5 % noise (of each joint's rms
    torque), at RATE; names in the model's order."""
    model = rd.load_urdf(URDF, tip_link='tool0')
    carried = rd.with_payload(model, MASS, COM, INERTIA, frame='tool0')
    rng = np.random.default_rng(seed)
    amplitude = rng.uniform(-0.25, 0.25, (model.nq, FREQUENCIES.size))
    phase = rng.uniform(0.0, 2.0 * np.pi, (model.nq, FREQUENCIES.size))
    t = np.arange(int(round(duration * RATE))) / RATE
    w = 2.0 * np.pi * FREQUENCIES
    angle = w[None, None, :] * t[:, None, None] + phase[None]                  # (N, n, 5)
    q = Q0 + (amplitude * np.sin(angle)).sum(axis=2)
    qd = (amplitude * w * np.cos(angle)).sum(axis=2)
    qdd = -(amplitude * w ** 2 * np.sin(angle)).sum(axis=2)
    tau = rd.inverse_dynamics_trajectory(carried, q, qd, qdd)
    tau = tau + 0.005 * np.sqrt(np.mean(tau ** 2, axis=0)) * rng.standard_normal(tau.shape)
    return t, list(model.joint_names), q, tau


def _write_bag(path, storage, t, names, q, tau, defects=True, seed=4):
    """A rosbag2 bag at `path` (storage 'sqlite3' or 'mcap') with the samples as JointState messages on
    /joint_states, the joints in a shuffled order plus EXTRA_JOINT, and a /rosout-like other topic.
    defects: also two incomplete messages (no effort; a NaN position) and one repeating a stamp."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    typestore = get_typestore(Stores.ROS2_HUMBLE)
    JointState = typestore.types['sensor_msgs/msg/JointState']
    Header = typestore.types['std_msgs/msg/Header']
    Time = typestore.types['builtin_interfaces/msg/Time']
    String = typestore.types['std_msgs/msg/String']
    order = np.random.default_rng(seed).permutation(len(names))
    shuffled = [names[k] for k in order] + [EXTRA_JOINT]

    def message(ns, position, effort, joint_names=shuffled):
        header = Header(stamp=Time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id='')
        return JointState(header=header, name=joint_names, position=np.asarray(position, dtype=float),
                          velocity=np.zeros(0), effort=np.asarray(effort, dtype=float))

    plugin = {'sqlite3': StoragePlugin.SQLITE3, 'mcap': StoragePlugin.MCAP}[storage]
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        states = writer.add_connection('/joint_states', JointState.__msgtype__, typestore=typestore)
        other = writer.add_connection('/chatter', String.__msgtype__, typestore=typestore)
        writer.write(other, START_SEC * 10**9, typestore.serialize_cdr(String(data='hi'), String.__msgtype__))
        for k in range(t.size):
            ns = START_SEC * 10**9 + int(round(t[k] * 1e9))
            sample = message(ns, np.append(q[k, order], 0.01), np.append(tau[k, order], 0.0))
            raw = typestore.serialize_cdr(sample, JointState.__msgtype__)
            writer.write(states, ns + 1_000_000, raw)       # received 1 ms after the stamp
            if defects and k in (1000, 2000, 3000):
                late = ns + 1_000_000                       # between two samples
                if k == 1000:                               # no efforts
                    bad = message(late, np.append(q[k, order], 0.0), [])
                elif k == 2000:                             # a NaN position
                    bad = message(late, np.append(np.full(len(names), np.nan), 0.0), np.zeros(len(names) + 1))
                else:                                       # the stamp of sample k again, other values
                    bad = message(ns, np.append(q[k, order] + 0.3, 0.0), np.append(tau[k, order] + 50, 0.0))
                writer.write(states, late + 1, typestore.serialize_cdr(bad, JointState.__msgtype__))
    return path


@pytest.fixture(scope='module')
def recording():
    return _recording()


@pytest.fixture(scope='module')
def bags(recording, tmp_path_factory):
    """bags(storage): the recording's bag in that storage ('sqlite3' or 'mcap'), written once."""
    written = {}

    def bag(storage):
        if storage not in written:
            written[storage] = _write_bag(tmp_path_factory.mktemp('bags') / f'recording_{storage}', storage,
                                          *recording)
        return written[storage]
    return bag


def _run(*args):
    """The tool in a fresh interpreter, as a user runs it (this source tree first on the path)."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(REPO), env.get('PYTHONPATH')) if p)
    return subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.cli.identify', *map(str, args)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_identifies_the_payload_from_a_bag(bags, storage):
    bag = bags(storage)
    result = _run('--bag', bag, '--urdf', URDF, '--frame', 'tool0', '--json')
    assert result.returncode == 0, result.stdout + result.stderr
    estimate = json.loads(result.stdout)
    assert estimate['samples'] == 5000 and estimate['skipped'] == 2 and estimate['duplicates'] == 1
    assert estimate['frame'] == 'tool0'
    assert abs(estimate['mass'] - MASS) < 0.02 * MASS, estimate
    assert np.linalg.norm(np.array(estimate['com']) - COM) < 0.005, estimate
    assert len(estimate['inertia']) == 6 and estimate['condition'] < 1e3 and estimate['consistent'], estimate


def test_report_prints_the_param_commands(bags):
    result = _run('--bag', bags('sqlite3'), '--urdf', URDF, '--tip-link', 'tool0', '--node',
                  'computed_torque_controller', '--node', '/dynamics_node')
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert 'ros2 param set /computed_torque_controller payload_mass ' in out, out
    assert 'ros2 param set /dynamics_node payload_frame tool0' in out, out     # the tip frame: tool0
    assert 'external_torque_estimator' not in out                               # --node replaces the default
    assert '5000 used' in out and '2 skipped' in out and '500 Hz' in out, out
    assert 'warning' not in out, out


def test_a_wrong_topic_names_the_topics_there(bags):
    result = _run('--bag', bags('mcap'), '--urdf', URDF, '--topic', '/joint_state')
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith('identify: error: ') and "'/joint_state'" in result.stderr
    assert '/joint_states (sensor_msgs/msg/JointState)' in result.stderr and '/chatter' in result.stderr


def test_a_bag_too_short_for_the_cutoff(recording, tmp_path):
    t, names, q, tau = recording
    short = _write_bag(tmp_path / 'short', 'sqlite3', t[:500], names, q[:500], tau[:500], defects=False)
    result = _run('--bag', short, '--urdf', URDF, '--cutoff', '5')
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith('identify: error: ') and 'too short' in result.stderr, result.stderr


def test_errors_in_process(tmp_path, capsys, monkeypatch):
    """Errors before any bag is read: exit 2 with `identify: error: ...`."""
    assert main(['--bag', str(tmp_path / 'none'), '--urdf', str(URDF), '--frame', 'tool9']) == 2
    assert "unknown frame 'tool9'" in capsys.readouterr().err
    assert main(['--bag', str(tmp_path / 'none'), '--urdf', str(URDF)]) == 2
    assert 'cannot read the bag' in capsys.readouterr().err
    for name in ('rosbags', 'rosbags.highlevel', 'rosbags.typesys'):
        monkeypatch.setitem(sys.modules, name, None)        # as if rosbags were not installed
    assert main(['--bag', str(tmp_path), '--urdf', str(URDF)]) == 2
    assert 'pip install rosbags' in capsys.readouterr().err


def _message(names, position, effort, sec=0, nanosec=0):
    stamp = SimpleNamespace(sec=sec, nanosec=nanosec)
    return SimpleNamespace(header=SimpleNamespace(stamp=stamp), name=names, position=position, effort=effort)


def test_joint_log_matches_names_and_skips_incomplete_messages():
    model = ['a', 'b']
    messages = [
        (50, _message(['b', 'x', 'a'], [2.0, 9.0, 1.0], [20.0, 90.0, 10.0], sec=1, nanosec=500_000_000)),
        (10, _message(['a', 'b'], [0.0, 0.5], [0.0, 5.0], sec=1)),                 # earlier stamp: first
        (20, _message(['a'], [1.0], [1.0], sec=3)),                                # lacks b
        (30, _message(['a', 'b'], [1.0, 1.0], [], sec=4)),                         # no efforts
        (40, _message(['a', 'b'], [1.0, float('nan')], [1.0, 1.0], sec=5)),        # not finite
        (60, _message(['a', 'b'], [7.0, 7.0], [7.0, 7.0], sec=1, nanosec=500_000_000)),  # repeated time
        (70, _message(['b', 'a'], [4.0, 3.0], [40.0, 30.0], sec=2, nanosec=250_000_000)),
        (80, _message(['a', 'b', 'c'], [1.0, 1.0, float('nan')], [1.0, 1.0, 1.0], sec=6)),   # c is not used
    ]
    log = joint_log(messages, model)
    assert log.clock == 'header' and log.skipped == 3 and log.duplicates == 1
    assert log.start_ns == 1_000_000_000
    np.testing.assert_allclose(log.t, [0.0, 0.5, 1.25, 5.0])
    np.testing.assert_array_equal(log.q, [[0.0, 0.5], [1.0, 2.0], [3.0, 4.0], [1.0, 1.0]])
    np.testing.assert_array_equal(log.tau, [[0.0, 5.0], [10.0, 20.0], [30.0, 40.0], [1.0, 1.0]])
    np.testing.assert_allclose(log.window(0.4, 1.3).t, [0.5, 1.25])


def test_joint_log_uses_receive_times_when_the_stamps_are_zero():
    messages = [(3_000_000_000 + 2_000_000 * k, _message(['a'], [float(k)], [0.0])) for k in (2, 0, 1, 1)]
    log = joint_log(messages, ['a'])
    assert log.clock == 'receive' and log.duplicates == 1
    np.testing.assert_allclose(log.t, [0.0, 0.002, 0.004])
    np.testing.assert_array_equal(log.q[:, 0], [0.0, 1.0, 2.0])
    with pytest.raises(IdentifyError, match=r"none of the 1 messages.*\['a'\]"):
        joint_log([(0, _message(['b'], [1.0], [1.0]))], ['a'])


def test_param_commands_are_doubles_for_ros2_param_set():
    estimate = SimpleNamespace(mass=2.0, com=np.array([0.0, -1e-5, 0.08]),
                               inertia=np.array([[1e-2, 2e-6, 0.0], [2e-6, 0.012, 0.0], [0.0, 0.0, 8e-3]]))
    lines = param_commands(['computed_torque_controller'], estimate, 'tool0')
    assert lines == ['ros2 param set /computed_torque_controller payload_mass 2.0',
                     'ros2 param set /computed_torque_controller payload_com "[0.0, -1.0e-05, 0.08]"',
                     'ros2 param set /computed_torque_controller payload_inertia '
                     '"[0.01, 2.0e-06, 0.0, 0.012, 0.0, 0.008]"',
                     'ros2 param set /computed_torque_controller payload_frame tool0']


def test_gravity_compensated_efforts_get_gravity_back(recording, tmp_path):
    """A firmware that reports efforts without the arm's g(q) (doc/hardware.md): read as full torques the
    payload is wrong; with --measured-effort gravity_compensated (the URDF's g added back) it is found as
    from full torques. A profile whose efforts are currents is refused with the reason."""
    t, names, q, tau = recording
    arm = rd.load_urdf(URDF, tip_link='tool0')
    compensated = tau - np.array([rd.gravity_torques(arm, qk) for qk in q])
    bag = _write_bag(tmp_path / 'compensated', 'sqlite3', t, names, q, compensated, defects=False)
    result = _run('--bag', bag, '--urdf', URDF, '--frame', 'tool0', '--json',
                  '--hardware', 'kuka_fri', '--measured-effort', 'gravity_compensated')
    assert result.returncode == 0, result.stdout + result.stderr
    estimate = json.loads(result.stdout)
    assert abs(estimate['mass'] - MASS) < 0.02 * MASS, estimate
    assert np.linalg.norm(np.array(estimate['com']) - COM) < 0.005, estimate
    as_full = _run('--bag', bag, '--urdf', URDF, '--frame', 'tool0', '--json')
    assert as_full.returncode != 0 or abs(json.loads(as_full.stdout)['mass'] - MASS) > 1.0, as_full.stdout
    currents = _run('--bag', bag, '--urdf', URDF, '--hardware', 'ur')
    assert currents.returncode == 2 and 'motor currents' in currents.stderr, currents.stderr
