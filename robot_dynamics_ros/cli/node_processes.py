"""Bring-up with one process per node: each node's command (``python -m <module>`` with the ROS
arguments ``ros2 launch`` would give it), started in its own session, stopped with SIGINT, then
SIGTERM, then SIGKILL; and the command that runs a whole graph in one separate process."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from typing import Sequence

from robot_dynamics_ros.cli import resources
from robot_dynamics_ros.cli.node_graph import GraphConfig, NodeSpec, param_arg
from robot_dynamics_ros.nodes import stop

__all__ = ['bringup_command', 'child_command', 'log', 'run_processes', 'spawn', 'start_processes',
           'stop_processes']

#: Exit codes that count as a clean stop of a node process after it was sent SIGINT/SIGTERM.
_CLEAN_EXIT_CODES = {0, -signal.SIGINT, 128 + signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGTERM}


def log(message: str) -> None:
    print(f'[bringup] {message}', file=sys.stderr, flush=True)



def child_command(gc: GraphConfig, spec: NodeSpec) -> list[str]:
    """The command that runs node ``spec`` in its own process (this interpreter, ``-m module``)."""
    return [sys.executable, '-m', spec.module, *gc.node_arguments(spec)]


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the bringup process dies (Linux), so a killed
    bringup leaves no orphaned nodes behind."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # best effort: not Linux, no libc
        pass


def bringup_command(gc: GraphConfig, *, executor: str = 'events') -> list[str]:
    """The command that runs the whole graph in one separate process (bringup's main): the options
    that give ``gc`` back, those at their defaults left out."""
    def text(value):
        return None if value is None else str(value)

    options = [
        ('--urdf', text(gc.urdf)),
        ('--xacro-args', gc.xacro_args or None),
        ('--use-sim-time', None if gc.use_sim_time is None else str(bool(gc.use_sim_time)).lower()),
        ('--real-time-factor', None if gc.real_time_factor is None else repr(float(gc.real_time_factor))),
        ('--hardware', gc.hardware),
        ('--engine', gc.engine),
        ('--world', text(gc.world)),
        ('--feedforward', 'true' if gc.feedforward else None),
        ('--publish-tf', None if gc.publish_tf else 'false'),
        ('--controller', None if gc.controller == 'computed_torque' else gc.controller),
        *(('--params-file', str(path)) for path in gc.params_files),
        ('--namespace', gc.namespace or None),
        ('--joint-states-topic', None if gc.joint_states_topic == 'joint_states' else gc.joint_states_topic),
        ('--effort-command-topic',
         None if gc.effort_command_topic == 'effort_controller/commands' else gc.effort_command_topic),
        *(('--set', f'{node}.{param_arg(name, value)}'.replace(':=', '=', 1))
          for node, values in gc.node_parameters.items() for name, value in values.items()),
    ]
    cmd = [sys.executable, '-m', 'robot_dynamics_ros.cli.bringup', '--graph', gc.graph,
           '--config', str(gc.config), '--executor', executor]
    for flag, value in options:
        if value is not None:
            cmd += [flag, value]
    if gc.ros_args:
        cmd += ['--ros-args', *gc.ros_args]
    return cmd


def spawn(cmd: Sequence[str], **popen_kwargs) -> subprocess.Popen:
    """Start ``cmd`` as a child that can import this package (also from a source tree), in its
    own session (a terminal's Ctrl-C reaches only the parent, which stops the child with
    stop_processes), and that gets SIGTERM if the parent dies (Linux)."""
    env = dict(popen_kwargs.pop('env', None) or os.environ)
    env['PYTHONPATH'] = os.pathsep.join(
        p for p in (str(resources.package_parent()), env.get('PYTHONPATH', '')) if p)
    return subprocess.Popen(list(cmd), env=env, start_new_session=True,
                            preexec_fn=_die_with_parent, **popen_kwargs)


def start_processes(gc: GraphConfig, **popen_kwargs) -> list[tuple[NodeSpec, subprocess.Popen]]:
    """Start one process per node of the graph (child_command, via spawn); returns (spec, Popen)
    pairs. ``popen_kwargs`` go to subprocess.Popen (e.g. stdout, stderr). If one start fails,
    the children started so far are stopped.
    """
    children: list[tuple[NodeSpec, subprocess.Popen]] = []
    try:
        for spec in gc.nodes:
            cmd = child_command(gc, spec)
            proc = spawn(cmd, **popen_kwargs)
            children.append((spec, proc))
            log(f'started {spec.name} (pid {proc.pid}): {shlex.join(cmd)}')
    except BaseException:
        stop_processes(children, timeout=3.0)
        raise
    return children


def run_processes(
    gc: GraphConfig, *, duration: float | None = None, shutdown_timeout: float = 10.0,
) -> int:
    """Start one process per node; stop them all on Ctrl-C/SIGTERM, ``duration``, or when one exits.

    Returns 0 when every node stopped cleanly after being asked to, else non-zero (the exit code
    of a node that ended on its own, or 1).
    """
    failed: tuple[NodeSpec, int] | None = None
    children: list[tuple[NodeSpec, subprocess.Popen]] = []
    # no deadline: this process waits for its children (stop_processes escalates if they hang)
    with stop.handling(deadline_s=None) as request:
        try:
            children = start_processes(gc)
            log(f"graph '{gc.graph}' running as {len(children)} processes; "
                 f'config {gc.config}; urdf {gc.urdf or "from /robot_description"}')
            deadline = None if duration is None else time.monotonic() + duration
            while not request.requested:
                time.sleep(0.1)
                if deadline is not None and time.monotonic() >= deadline:
                    break
                exited = [(s, p.returncode) for s, p in children if p.poll() is not None]
                if exited:
                    failed = exited[0]
                    log(f'{failed[0].name} exited with code {failed[1]}; stopping the graph')
                    break
            if request.signum is not None:
                log(f'shutting down ({signal.Signals(request.signum).name})')
        except KeyboardInterrupt:
            pass
        finally:
            clean = stop_processes(children, shutdown_timeout)
    if failed is not None:
        # A node that ends on its own (even with 0) ended the graph early: a failure.
        return failed[1] if failed[1] > 0 else 1
    return 0 if clean else 1


def stop_processes(children: list[tuple[NodeSpec, subprocess.Popen]], timeout: float = 10.0) -> bool:
    """SIGINT every running child, wait ``timeout`` s, then SIGTERM, then SIGKILL.

    Returns True if every child stopped cleanly (exit code 0, or died of the SIGINT).
    """
    clean = True
    running = [(s, p) for s, p in children if p.poll() is None]
    for sig, wait in ((signal.SIGINT, timeout), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        if not running:
            break
        if sig != signal.SIGINT:
            clean = False
            log(f'sending {sig.name} to ' + ', '.join(s.name for s, _ in running))
        for _, proc in running:
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                pass
        end = time.monotonic() + wait
        for _, proc in running:
            try:
                proc.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        running = [(s, p) for s, p in running if p.poll() is None]
    for spec, proc in children:
        code = proc.poll()
        if code not in _CLEAN_EXIT_CODES:
            clean = False
            log(f'{spec.name} exited with code {code}')
    return clean
