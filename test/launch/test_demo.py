"""The demo: its trajectory, its analysis and plot (synthetic data), and one real run."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros.demos import joint_space_report as demo, recording

ROOT = Path(__file__).resolve().parents[2]
HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])


def test_trajectory_starts_and_ends_at_rest_at_q0():
    t, q, qd, qdd = recording.demo_trajectory(HOME, duration=8.0, knot_step=0.5)
    assert t[0] == 0.0 and t[-1] == 8.0 and np.all(np.diff(t) > 0)
    assert q.shape == qd.shape == qdd.shape == (t.size, 6)
    np.testing.assert_allclose(q[[0, -1]], [HOME, HOME], atol=1e-12)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-12)
    np.testing.assert_allclose(qdd[[0, -1]], 0.0, atol=1e-12)
    # Every joint moves visibly.
    assert np.all(np.ptp(q, axis=0) > 0.3)


def test_trajectory_derivatives_are_consistent():
    t, q, qd, qdd = recording.demo_trajectory(HOME, duration=4.0, knot_step=1e-3)
    np.testing.assert_allclose(np.gradient(q, t, axis=0)[1:-1], qd[1:-1], atol=1e-4)
    np.testing.assert_allclose(np.gradient(qd, t, axis=0)[1:-1], qdd[1:-1], atol=1e-3)


def test_trajectory_respects_position_and_velocity_limits():
    n = 6
    lower, upper = np.full(n, -np.pi), np.full(n, np.pi)
    q0 = np.array([np.pi - 0.3, -np.pi + 0.3, 0.0, 3.0, 0.0, 0.0])
    vmax = np.full(n, 0.5)
    _, q, qd, _ = recording.demo_trajectory(q0, duration=2.0, knot_step=0.01, lower=lower,
                                       upper=upper, velocity_limit=vmax)
    assert np.all(q >= lower + recording.LIMIT_MARGIN - 1e-12)
    assert np.all(q <= upper - recording.LIMIT_MARGIN + 1e-12)
    assert np.all(np.abs(qd) <= 0.5 * vmax + 1e-9)
    # Joint 0 starts near its upper limit: it moves down instead of up.
    assert q[:, 0].min() < q0[0] - 0.1


def test_trajectory_message():
    knots = recording.demo_trajectory(HOME, duration=2.0, knot_step=0.75)
    names = [f'j{i}' for i in range(6)]
    msg = recording.trajectory_message(names, *knots)
    assert msg.joint_names == names
    assert msg.header.stamp.sec == 0 and msg.header.stamp.nanosec == 0
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points]
    np.testing.assert_allclose(times, [0.0, 0.75, 1.5, 2.0])
    assert all(len(p.accelerations) == 6 for p in msg.points)


def test_values_by_name_and_common_stamps():
    assert recording.values_by_name(('b', 'a', 'c'), [2.0, 1.0, 3.0], ('a', 'b')) == [1.0, 2.0]
    assert recording.values_by_name(('b', 'a'), [2.0], ('a', 'b')) is None           # lengths differ
    assert recording.values_by_name(('b', 'c'), [2.0, 3.0], ('a', 'b')) is None      # 'a' missing
    a, b = recording.Series(), recording.Series()
    for stamp in (1, 2, 4):
        a.add(stamp, [float(stamp)])
    for stamp in (2, 3, 4):
        b.add(stamp, [10.0 * stamp])
    stamps, A, B = recording.at_common_stamps(a, b)
    assert stamps.tolist() == [2, 4] and A[:, 0].tolist() == [2.0, 4.0] and B[:, 0].tolist() == [20.0, 40.0]


def test_joint_limits_by_name_of_the_model():
    from robot_dynamics_ros.cli.resources import default_urdf
    from robot_dynamics_ros.dynamics import load_urdf

    model = load_urdf(str(default_urdf()))
    names = (model.joint_names[1], 'no_such_joint', model.joint_names[0])
    lower, upper, velocity, effort = recording.joint_limits(model, names)
    np.testing.assert_array_equal(effort, [model.effort_limit[1], np.inf, model.effort_limit[0]])
    np.testing.assert_array_equal(lower, [model.lower[1], -np.inf, model.lower[0]])
    np.testing.assert_array_equal(recording.urdf_joint_limits(default_urdf(), names),
                                  [lower, upper, velocity, effort])


def test_pose_targets_desired_pose_at_and_model_order():
    from types import SimpleNamespace

    from robot_dynamics_ros.demos import pose_targets

    T = np.eye(4)
    T[:3, 3] = (0.1, 0.2, 0.3)
    rec = SimpleNamespace(desired=recording.Series())
    assert not pose_targets.desired_pose_at(rec, T)                  # nothing desired yet
    rec.desired.add(1, (T + 1e-6).ravel().tolist())
    assert not pose_targets.desired_pose_at(rec, T)
    assert pose_targets.desired_pose_at(rec, T, tolerance=1e-5)
    rec.desired.add(2, T.ravel().tolist())
    assert pose_targets.desired_pose_at(rec, T)
    model = SimpleNamespace(joint_names=('a', 'b', 'c'))
    assert pose_targets.model_order(model, ('c', 'a', 'b')).tolist() == [1, 2, 0]


@pytest.mark.ros
def test_joint_space_recorder_records_messages_in_its_joint_order():
    """The joint-space demo's Recorder (its node's callbacks, called here without spinning): the first joint
    state names the joints, later messages are put in that order by name, stamps in ns (stamp_ns)."""
    import rclpy
    from builtin_interfaces.msg import Time
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool, Float64MultiArray

    from robot_dynamics_ros.demos import joint_space_demo

    rec = demo.Recording()
    context = rclpy.Context()
    rclpy.init(context=context)
    recorder = joint_space_demo.make_recorder(rec, context=context)
    try:
        state = JointState(name=['a', 'b'], position=[1.0, 2.0], velocity=[0.1, 0.2])
        state.header.stamp = Time(sec=3, nanosec=5)
        recorder.on_state(state)
        error = JointState(name=['b', 'a'], position=[-2.0, -1.0])
        error.header.stamp = Time(sec=3, nanosec=5)
        recorder.on_error(error)
        recorder.on_command(Float64MultiArray(data=[7.0, 8.0]))
        recorder.on_contact(Bool(data=True))
        recorder.on_dynamics('gravity_torques', JointState(name=['b', 'a'], effort=[20.0, 10.0]))
        assert rec.joint_names == ('a', 'b')
        assert rec.joint_states.stamp == [3_000_000_005] and rec.joint_states.values == [[1.0, 2.0]]
        assert rec.joint_velocities.values == [[0.1, 0.2]]
        assert rec.tracking_error.values == [[-1.0, -2.0]] and rec.tracking_error.stamp == [3_000_000_005]
        assert rec.commands.values == [[7.0, 8.0]] and rec.commands.stamp == [-1]
        assert rec.contact.values == [[1.0]]
        assert rec.gravity.values == [[10.0, 20.0]] and rec.dynamics['gravity_torques'].values == [True]
        recorder.active = False                  # the recording window closed: nothing more is kept
        recorder.on_state(state)
        assert len(rec.joint_states.values) == 1
    finally:
        recorder.node.destroy_node()
        rclpy.shutdown(context=context)


def _synthetic_recording(error=1e-3, drop=()):
    """1 kHz for 3 s: q follows a sine, e = error * sin, commands and dynamics at every state."""
    names = tuple(f'joint_{i}' for i in range(3))
    rec = demo.Recording(joint_names=names, duration=2.0, t_start=100.0, t_end=103.0,
                         effort_limit=np.array([150.0, 150.0, 28.0]), robot_name='test arm',
                         mode='synthetic')
    t = 99.0 + np.arange(4000) * 1e-3
    q = np.sin(np.outer(t, [1.0, 2.0, 3.0]))
    e = error * np.sin(np.outer(t, [5.0, 6.0, 7.0]))
    stamps = (t * 1e9).astype(np.int64)
    for series, values, st in ((rec.joint_states, q, stamps), (rec.tracking_error, e, stamps),
                               (rec.commands, 10 * q, -np.ones_like(stamps)),
                               (rec.gravity, 5 * q, stamps)):
        if series is rec.tracking_error and 'error' in drop:
            continue
        series.t, series.stamp, series.values = list(t), list(st), values.tolist()
    for series in rec.dynamics.values():
        series.t, series.stamp, series.values = list(t), [-1] * t.size, [True] * t.size
    return rec


def test_analyse_reports_rms_max_and_rates():
    rec = _synthetic_recording()
    report = demo.analyse(rec)
    assert report.ok, report.problems
    _, _, e = demo._window(rec.tracking_error, rec.t_start, rec.t_end)
    np.testing.assert_allclose(report.rms, np.sqrt(np.mean(e**2, axis=0)))
    np.testing.assert_allclose(report.max_abs, np.abs(e).max(axis=0))
    assert report.rates[demo.JOINT_STATES_TOPIC] == pytest.approx(1000.0, rel=1e-6)
    text = demo.report_text(rec, report)
    for name in rec.joint_names:
        assert name in text
    assert '1000.0 Hz' in text


def test_analyse_fails_on_missing_topics_and_large_errors():
    assert any('tracking_error' in p for p in demo.analyse(
        _synthetic_recording(drop=('error',))).problems)
    report = demo.analyse(_synthetic_recording(error=0.2), max_error=0.05)
    assert not report.ok and 'joint_' in report.problems[0]


def test_plot_writes_a_png(tmp_path):
    rec = _synthetic_recording()
    path = demo.plot(rec, demo.analyse(rec), tmp_path / 'sub' / 'demo.png')
    assert path.is_file() and path.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    assert path.stat().st_size > 20_000


@pytest.fixture
def demo_env(spare_domain):
    """The demo's environment: a ROS domain of its own (localhost only), this source tree first."""
    env = dict(os.environ)
    env['ROS_DOMAIN_ID'] = str(spare_domain())
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(ROOT), env.get('PYTHONPATH')) if p)
    return env


@pytest.mark.ros
@pytest.mark.slow
def test_demo_runs(tmp_path, demo_env):
    """`python -m robot_dynamics_ros.demos` on a short trajectory: exit 0, report and PNG, with the
    viewer beside the graph (its address printed, still serving when the demo ended)."""
    env = demo_env
    png = tmp_path / 'demo.png'
    with socket.socket() as probe:          # a free port for the viewer
        probe.bind(('localhost', 0))
        port = probe.getsockname()[1]
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.demos', '--duration', '3', '--settle', '0.5',
         '--output', str(png), '--viewer-port', str(port), '--viewer-wait', '0'],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f'viewer: open http://localhost:{port}' in result.stdout
    assert 'viewer exited' not in result.stderr, result.stderr
    assert 'RMS error' in result.stdout and '/joint_states' in result.stdout
    assert str(png) in result.stdout and png.is_file()
    # the push during the trajectory, seen by the external torque estimator
    contact = tmp_path / 'contact.png'
    assert 'push on the arm' in result.stdout and contact.is_file()
    assert '~/contact: true during the push, false after it' in result.stdout, result.stdout


def test_task_space_square_corners_and_turns():
    from robot_dynamics_ros.demos import task_space_demo
    from robot_dynamics_ros.dynamics.spatial import exp_coordinates, inverse_transform, log_transform
    start = exp_coordinates([0.3, -0.2, 0.5, 0.4, -0.1, 0.5])
    targets = task_space_demo.square_targets(start, side=0.1, turn=0.25)
    assert len(targets) == 5
    np.testing.assert_array_equal(targets[-1], start)
    corners = np.array([T[:3, 3] - start[:3, 3] for T in targets[:4]])
    np.testing.assert_allclose(np.abs(corners), [[0.0, 0.05, 0.05]] * 4, atol=1e-15)
    assert len({tuple(np.sign(c[1:])) for c in corners}) == 4
    for k, T in enumerate(targets[:4]):
        turn = log_transform(inverse_transform(start) @ T)[:3]      # about the tool's own z axis
        np.testing.assert_allclose(turn, [0.0, 0.0, 0.25 if k % 2 == 0 else -0.25], atol=1e-12)


@pytest.mark.ros
@pytest.mark.slow
def test_task_space_demo_runs(tmp_path, demo_env):
    """`python -m robot_dynamics_ros.demos --task-space`: exit 0, every corner reached, the PNG."""
    env = demo_env
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.demos', '--task-space', '--no-viewer', '--side', '0.06',
         '--dwell', '0.2',
         '--output', str(tmp_path / 'demo.png')],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    png = tmp_path / 'demo_task_space.png'
    assert str(png) in result.stdout and png.is_file()
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 5 and all(float(r[1]) < 1000.0 and float(r[2]) < 10000.0 for r in rows), result.stdout


@pytest.mark.ros
@pytest.mark.slow
def test_mpc_demo_runs(tmp_path, demo_env):
    """`python -m robot_dynamics_ros.demos --mpc`: exit 0 (every target reached within 5 mm and 0.02 rad,
    every torque within its limit), re-plans near 100 Hz, the PNG."""
    env = demo_env
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.demos', '--mpc', '--no-viewer', '--side', '0.06',
         '--dwell', '0.2',
         '--max-position-error', '0.005', '--max-orientation-error', '0.02',
         '--output', str(tmp_path / 'demo.png')],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    png = tmp_path / 'demo_mpc.png'
    assert str(png) in result.stdout and png.is_file()
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 5 and all(float(r[1]) < 5.0 and float(r[2]) < 20.0 for r in rows), result.stdout
    rate = float(result.stdout.split('re-plan rate ')[1].split()[0])
    assert 80.0 < rate <= 110.0, result.stdout


@pytest.mark.ros
@pytest.mark.slow
def test_payload_demo_runs(tmp_path, demo_env):
    """`python -m robot_dynamics_ros.demos --payload`: exit 0 (the estimate within 5 % and 1 cm, the
    tracking error at least halved once the controller knows it), the report and the PNG."""
    env = demo_env
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.demos', '--payload', '--no-viewer', '--duration', '6',
         '--output', str(tmp_path / 'demo.png')],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    png = tmp_path / 'demo_payload.png'
    assert str(png) in result.stdout and png.is_file()
    lines = result.stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in lines if line.startswith(('true ', 'identified '))}
    assert abs(float(rows['identified'][1]) - 2.0) < 0.1, result.stdout
    assert 'payload applied' in result.stdout and 'payload unknown' in result.stdout


@pytest.mark.ros
@pytest.mark.slow
def test_identify_demo_runs(tmp_path, demo_env):
    """`python -m robot_dynamics_ros.demos --identify`: exit 0 (the held-out torque error at least 5 times
    smaller, the phantom external torque on the moving arm below the contact threshold), the identified
    URDF and YAML, the bag, the report and the PNG."""
    env = demo_env
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.demos', '--identify', '--no-viewer', '--duration', '6',
         '--excitation-duration', '16', '--output', str(tmp_path / 'demo.png')],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    png = tmp_path / 'demo_identify.png'
    assert str(png) in result.stdout and png.is_file()
    assert (tmp_path / 'identified_ur5e.urdf').is_file() and (tmp_path / 'identified_ur5e.yaml').is_file()
    assert (tmp_path / 'demo_identify_bag' / 'metadata.yaml').is_file()
    total = next(line.split() for line in result.stdout.splitlines() if line.startswith('all joints'))
    assert 5 * float(total[3]) <= float(total[2]), result.stdout      # URDF, identified (N m)


@pytest.mark.ros
@pytest.mark.slow
def test_hardware_demo_runs(tmp_path, demo_env):
    """`python -m robot_dynamics_ros.demos --hardware`: exit 0 (the right profile's goal succeeded within
    --max-error, the wrong profile with the check off drifted beyond it, the default check refused: no
    command, the arm still, the ERROR on /rosout and /diagnostics), the report and the PNG."""
    env = demo_env
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.demos', '--hardware', '--no-viewer',
         '--output', str(tmp_path / 'demo.png')],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    png = tmp_path / 'demo_hardware.png'
    assert str(png) in result.stdout and png.is_file()
    assert 'FollowJointTrajectory goal SUCCEEDED' in result.stdout, result.stdout
    assert '0 commands in' in result.stdout and 'the arm moved 0 rad' in result.stdout, result.stdout
    assert "the data fits measured_effort 'gravity_compensated'" in result.stdout, result.stdout


@pytest.mark.ros
@pytest.mark.slow
def test_feedforward_demo_runs(tmp_path, demo_env):
    """`python -m robot_dynamics_ros.demos --feedforward`: exit 0 (both goals succeeded, the relay's efforts
    reached the JTC stand-in, the max tracking error at least 10 times smaller with them), the report
    and the PNG."""
    env = demo_env
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.demos', '--feedforward', '--no-viewer',
         '--output', str(tmp_path / 'demo.png')],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    png = tmp_path / 'demo_feedforward.png'
    assert str(png) in result.stdout and png.is_file()
    assert result.stdout.count('goal SUCCEEDED (error_code 0') == 2, result.stdout
    lines = result.stdout.splitlines()
    pd_max, ff_max, pd_rms, ff_rms = map(float, next(line for line in lines
                                                     if line.startswith('all joints')).split()[2:])
    assert ff_max * 10 <= pd_max and ff_rms * 10 <= pd_rms, result.stdout
    better = next(line for line in lines if line.startswith('feed-forward: max tracking error'))
    assert float(better.split()[4]) >= 10.0, result.stdout
