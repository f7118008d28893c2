"""Start-up of the nodes as installed: no compiling at run time, SIGINT and SIGTERM honoured at
any moment (issue 13).

The nodes run as their console scripts (<prefix>/lib/robot_dynamics_ros/<node>, what `ros2 run` and
`ros2 launch` start), as separate processes on an isolated domain.
"""
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LIB = Path(sys.prefix) / 'lib' / 'robot_dynamics_ros'
UR5E_URDF = REPO / 'urdf' / 'ur5e.urdf'
NODES = ('dynamics_node', 'computed_torque_controller', 'simulator_node', 'external_torque_estimator',
         'task_space_controller')
# Generous against a loaded machine; the bug this guards against kept a node for the whole
# compile (tens of seconds) and ros2 launch escalated to SIGKILL after 10 s.
EXIT_BOUND_S = 5.0


def _env(**extra):
    env = dict(os.environ)
    env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    env.update(ROS_DOMAIN_ID=str(random.randint(102, 200)), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               PYTHONUNBUFFERED='1', **extra)
    return env


def _start(node, env):
    return subprocess.Popen([str(LIB / node), '--ros-args', '-p', f'urdf_path:={UR5E_URDF}'],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _stop(proc, sig, after_s):
    """Send `sig` `after_s` after the start; (exit code, seconds to exit, output)."""
    time.sleep(after_s)
    assert proc.poll() is None, f'the node ended before the signal:\n{proc.communicate()[0]}'
    sent = time.monotonic()
    proc.send_signal(sig)
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return None, None, out
    return proc.returncode, time.monotonic() - sent, out


def test_the_nodes_are_executables_of_the_ament_prefix():
    """`ros2 run robot_dynamics_ros <node>` and launch_ros look in <prefix>/lib/<package>."""
    for node in NODES:
        assert os.access(LIB / node, os.X_OK), f'{LIB / node} is not an executable'
    marker = Path(sys.prefix) / 'share' / 'ament_index' / 'resource_index' / 'packages'
    assert (marker / 'robot_dynamics_ros').exists()


def test_every_kernel_loads_from_the_cache_after_set_up():
    """The README's set-up compiled every kernel entry point (robot_dynamics_ros.precompile): a
    fresh process loads each from numba's cache, none compiles."""
    run = subprocess.run([sys.executable, '-c', '''
from robot_dynamics_ros.dynamics.kernels import entries
entries.compile_entries()
missed = [name for name in entries.ENTRY_NAMES
          if sum(getattr(entries, name).stats.cache_misses.values())]
print(len(entries.ENTRY_NAMES), missed)
'''], env=_env(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    count, missed = run.stdout.split(maxsplit=1)
    assert int(count) > 20 and missed.strip() == '[]', run.stdout


@pytest.mark.slow
@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['SIGINT', 'SIGTERM'])
@pytest.mark.parametrize('phase,after_s', [('importing', 0.3), ('compiling', 5.0)])
def test_a_signal_during_start_up_ends_the_node_cleanly(tmp_path, sig, phase, after_s):
    """While the node imports rclpy and numba, and while it compiles its kernels (an empty
    NUMBA_CACHE_DIR: a cold compile takes well over the 5 s waited): exit 0, no traceback."""
    proc = _start('dynamics_node', _env(NUMBA_CACHE_DIR=str(tmp_path / 'numba')))
    code, seconds, out = _stop(proc, sig, after_s)
    assert code == 0, f'exit {code} after the {phase} signal:\n{out[-3000:]}'
    assert seconds < EXIT_BOUND_S, f'{seconds:.1f} s to exit after the {phase} signal'
    assert 'Traceback' not in out, out[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize('node', NODES)
def test_a_running_node_ends_on_sigint(node):
    """Started with the cache made at set-up: running within seconds, ends on SIGINT with exit 0."""
    proc = _start(node, _env())
    code, seconds, out = _stop(proc, signal.SIGINT, 4.0)
    assert code == 0 and 'Traceback' not in out, f'exit {code}:\n{out[-3000:]}'
    assert seconds < EXIT_BOUND_S
    assert 'there was no compiled copy' not in out, out
