"""The simulated arm driven as a ROS 2 user drives it: `ros2 launch`, then the `ros2` CLI.

`ros2 launch robot_dynamics_ros simulation.launch.py` finds the package through the ament index of
the environment (.venv-jazzy or .venv-kilted is an ament prefix after the README's set-up, as a colcon
install is), then:
`ros2 pkg executables`, `ros2 topic echo --once`, `ros2 param set` (a good and a bad value),
`ros2 service call .../hold`, `ros2 action send_goal .../follow_joint_trajectory` (a goal that
succeeds, with feedback; an invalid one, answered with its error code), `ros2 topic echo` of the
controller state, and Ctrl-C ends the launch with exit code 0.

Runs where the ROS 2 launch and CLI tools are installed (tools/bootstrap.sh installs them from
../shared/ros2-cli-wheels); skipped elsewhere.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip('ros2cli')
pytest.importorskip('launch_ros')

BIN = Path(sys.executable).parent
UR5E_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
               'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']
# Generous against a loaded machine: the nodes start within seconds once their kernels are cached.
START_TIMEOUT_S = 120.0


def _ros2():
    exe = BIN / 'ros2'
    return str(exe) if exe.exists() else shutil.which('ros2')


@pytest.fixture(scope='module')
def env(spare_domain):
    env = dict(os.environ)
    env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    env['AMENT_PREFIX_PATH'] = os.pathsep.join(
        p for p in (sys.prefix, env.get('AMENT_PREFIX_PATH')) if p)
    env['ROS_DOMAIN_ID'] = str(spare_domain())
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['PYTHONUNBUFFERED'] = '1'
    return env


def ros2(env, *args, timeout=60.0):
    """`ros2 <args> --no-daemon`-style call (a daemon would outlive the test): CompletedProcess."""
    return subprocess.run([_ros2(), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope='module')
def launched(env, tmp_path_factory):
    """`ros2 launch robot_dynamics_ros simulation.launch.py`, running until the module ends, then
    SIGINT; yields the process (its exit checked by the last test). Its output goes to a file
    (``proc.output()`` reads it): a pipe nobody reads until the end fills up on a loaded machine
    (the simulator's lag warnings) and blocks the launch, which then cannot handle Ctrl-C."""
    log_path = tmp_path_factory.mktemp('launch') / 'launch.log'
    with open(log_path, 'w') as log:
        proc = subprocess.Popen([_ros2(), 'launch', 'robot_dynamics_ros', 'simulation.launch.py'],
                                env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
    proc.output = lambda: log_path.read_text(errors='replace')
    yield proc
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _echo_once(env, topic, timeout=START_TIMEOUT_S):
    """`ros2 topic echo --once <topic>` retried until it prints a message (the graph is starting)."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f'no message on {topic} within {timeout} s'
        try:
            run = ros2(env, 'topic', 'echo', '--once', '--no-daemon', topic, timeout=min(left, 20.0))
        except subprocess.TimeoutExpired:
            continue
        if run.returncode == 0 and run.stdout.strip():
            return run.stdout


def _finite(text):
    """No NaN or infinity among the values of `ros2 topic echo` output (YAML: .nan, .inf)."""
    return re.search(r'(?<![\w])-?\.?(nan|inf)(?![\w])', text, re.IGNORECASE) is None


def _param(env, verb, node, *args, timeout=60.0):
    """`ros2 param <verb> <node> <args>`, retried while the CLI's own node has not discovered
    `node` yet ("Node not found": each call is a fresh process without the daemon); its output."""
    deadline = time.monotonic() + timeout
    while True:
        run = ros2(env, 'param', verb, '--no-daemon', node, *args)
        if 'Node not found' not in run.stderr or time.monotonic() > deadline:
            return run.stdout + run.stderr
        time.sleep(0.5)


def _numbers(yaml_list_text):
    return [float(x) for x in re.findall(r'-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+(?:e[-+]?\d+)?',
                                         yaml_list_text)]


def test_ros2_pkg_finds_the_executables(env):
    run = ros2(env, 'pkg', 'executables', 'robot_dynamics_ros')
    assert run.returncode == 0, run.stderr
    listed = {line.split()[1] for line in run.stdout.splitlines() if line.strip()}
    assert {'dynamics_node', 'computed_torque_controller', 'simulator_node'} <= listed, run.stdout


def test_topics_publish_finite_values(env, launched):
    states = _echo_once(env, '/joint_states')
    for name in UR5E_JOINTS:
        assert name in states
    position = states.split('position:')[1].split('velocity:')[0]
    assert len(_numbers(position)) == 6 and _finite(states), states
    gravity = _echo_once(env, '/dynamics_node/gravity_torques')
    assert _finite(gravity) and len(_numbers(gravity.split('effort:')[1])) == 6, gravity
    commands = _echo_once(env, '/effort_controller/commands')
    assert _finite(commands) and len(_numbers(commands.split('data:')[1])) == 6, commands


def test_ros2_param_set_good_and_bad(env, launched):
    _echo_once(env, '/effort_controller/commands')
    node = '/computed_torque_controller'
    good = _param(env, 'set', node, 'kd', '[25.0]')
    assert 'Set parameter successful' in good, good
    assert '25.0' in _param(env, 'get', node, 'kd')
    bad = _param(env, 'set', node, 'kd', '[-1.0]')
    assert 'Setting parameter failed' in bad, bad
    # refused: the good value stays, the controller keeps commanding
    assert '25.0' in _param(env, 'get', node, 'kd')
    assert _finite(_echo_once(env, '/effort_controller/commands'))


def test_ros2_service_call_hold(env, launched):
    _echo_once(env, '/effort_controller/commands')
    run = ros2(env, 'service', 'call', '/computed_torque_controller/hold', 'std_srvs/srv/Trigger',
               timeout=60.0)
    assert run.returncode == 0, run.stdout + run.stderr
    assert 'success=True' in run.stdout, run.stdout


def _goal(positions, joints=UR5E_JOINTS):
    return ('{trajectory: {joint_names: [' + ', '.join(joints) + '], points: [{positions: ['
            + ', '.join(repr(float(x)) for x in positions) + '], time_from_start: {sec: 1}}]}}')


def test_ros2_action_send_goal(env, launched):
    """The launched controller driven through its FollowJointTrajectory action from the CLI: a goal
    that succeeds (with feedback), then an invalid one (an unknown joint), aborted with
    INVALID_JOINTS (-2) and its reason; the controller state shows the first goal's end point."""
    _echo_once(env, '/effort_controller/commands')
    action = ['action', 'send_goal', '/computed_torque_controller/follow_joint_trajectory',
              'control_msgs/action/FollowJointTrajectory']
    target = [0.2, -1.4, 1.4, -1.5, -1.6, 0.1]
    run = ros2(env, *action, _goal(target), '--feedback', timeout=90.0)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert 'Goal accepted' in out and 'Feedback:' in out, out
    assert 'Goal finished with status: SUCCEEDED' in out and 'error_code: 0' in out, out
    state = _echo_once(env, '/computed_torque_controller/controller_state')
    reference = state.split('reference:')[1].split('positions:')[1].split('velocities:')[0]
    assert _numbers(reference) == target, state
    bad = ros2(env, *action, _goal(target, UR5E_JOINTS[:5] + ['gripper']), timeout=90.0)
    out = bad.stdout + bad.stderr
    assert 'Goal finished with status: ABORTED' in out and 'error_code: -2' in out, out
    assert 'gripper' in out, out


def _signal_status(pid):
    """The signal masks of process ``pid`` (/proc/<pid>/status: blocked, ignored, caught), to tell
    a lost Ctrl-C from a stuck shutdown."""
    try:
        lines = Path(f'/proc/{pid}/status').read_text().splitlines()
    except OSError as exc:
        return f'no status: {exc}'
    return ', '.join(line for line in lines if line.startswith(('State', 'SigBlk', 'SigIgn', 'SigCgt')))


def test_ctrl_c_ends_the_launch_with_exit_code_0(env, launched):
    _echo_once(env, '/joint_states')
    # Ctrl-C in a terminal: SIGINT to the whole foreground process group (launch and the nodes it
    # started; launch forwards it too, so a node sees it twice)
    os.killpg(launched.pid, signal.SIGINT)
    try:
        launched.wait(timeout=30)
    except subprocess.TimeoutExpired:
        status = _signal_status(launched.pid)
        os.killpg(launched.pid, signal.SIGKILL)
        launched.wait()
        pytest.fail(f'the launch did not end within 30 s of Ctrl-C ({status}):\n'
                    f'{launched.output()[-6000:]}')
    out = launched.output()
    assert launched.returncode == 0, out[-4000:]
    assert 'Traceback' not in out, out[-4000:]
    assert 'SIGKILL' not in out and 'SIGTERM' not in out, out[-4000:]
    assert 'process has finished cleanly' in out, out[-4000:]
