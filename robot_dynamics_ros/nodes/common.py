"""Helpers shared by the nodes: parameter descriptors and validation (``parameter_validator``: the
callback every node and node part gives ``add_on_set_parameters_callback``), throttled warnings, main().

Nothing here computes dynamics. ``WarningThrottle`` is robot_dynamics_ros.logic.input_guard's (ROS-free:
keys from a fixed set of problem kinds, bounded lines, bounded memory), re-exported here.
"""

import faulthandler
import math
import signal
import time

import numpy as np
import rclpy
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

from robot_dynamics_ros.logic.input_guard import WarningThrottle, bounded
from robot_dynamics_ros.nodes import stop

__all__ = ['describe', 'float_array', 'gain_vector', 'parameter_validator', 'string_list', 'WarningThrottle',
           'make_executor', 'run_node', 'spin_for', 'spin_until', 'control_rate_error', 'control_timer',
           'MIN_CONTROL_RATE', 'MAX_CONTROL_RATE', 'LATCHED_QOS']

MIN_CONTROL_RATE = 0.1          # Hz: the slowest timer rate accepted (0 = on every joint state)
MAX_CONTROL_RATE = 10000.0

# A topic of the latest value, published when it changes: a late subscriber gets it (as
# robot_state_publisher's robot_description and tf2's /tf_static are published).
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


def describe(description, *, read_only=False, dynamic_typing=False, min_value=None,
             max_value=None, additional_constraints='', integer=False):
    """A ParameterDescriptor; a numeric range becomes a FloatingPointRange (an IntegerRange for
    an ``integer`` parameter: then both bounds are required)."""
    d = ParameterDescriptor(description=description, read_only=read_only,
                            dynamic_typing=dynamic_typing,
                            additional_constraints=additional_constraints)
    if integer:
        d.integer_range = [IntegerRange(from_value=int(min_value), to_value=int(max_value), step=1)]
    elif min_value is not None or max_value is not None:
        d.floating_point_range = [FloatingPointRange(
            from_value=float(-math.inf if min_value is None else min_value),
            to_value=float(math.inf if max_value is None else max_value), step=0.0)]
    return d


def parameter_validator(check):
    """The on-set-parameters callback (``add_on_set_parameters_callback``) of ``check(params)``, which
    raises ValueError when the set is to be refused: then SetParametersResult(successful=False) with
    the error's message (``bounded``) as the reason, else successful=True. A set refused by one
    callback is refused whole."""
    def validate(params):
        try:
            check(params)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=bounded(exc))
        return SetParametersResult(successful=True)
    return validate


def _shown(value):
    """A parameter value quoted in an error: at most 200 characters (a list may be huge)."""
    return bounded(repr(value), 200)


def float_array(name, value):
    """A parameter value (double or integer array, or a number) as a finite float64 array.

    Array parameters are declared with dynamic typing (rclpy types an empty default [] as a byte
    array), so the type is checked here. Raises ValueError naming the parameter.
    """
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ValueError(f"parameter '{name}' must be a list of numbers, got {_shown(value)}")
    if isinstance(value, (int, float)):
        value = [value]
    try:
        values = list(value)
    except TypeError as exc:
        raise ValueError(f"parameter '{name}' must be a list of numbers, got {_shown(value)}") from exc
    if any(isinstance(v, (bool, str, bytes)) for v in values):
        raise ValueError(f"parameter '{name}' must be a list of numbers, got {_shown(value)}")
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"parameter '{name}' must be finite, got {_shown(array.tolist())}")
    return array


def gain_vector(name, value, n=None):
    """A gain parameter: length 1 (same gain on every joint) or n, every entry >= 0.

    Returns the (n,) vector, or the raw array when ``n`` is None (no model yet).
    """
    gains = float_array(name, value)
    if gains.size == 0:
        raise ValueError(f"parameter '{name}' must not be empty")
    if np.any(gains < 0.0):
        raise ValueError(f"parameter '{name}' must be >= 0, got {_shown(gains.tolist())}")
    if n is None:
        return gains
    if gains.size == 1:
        return np.full(n, gains[0])
    if gains.size != n:
        raise ValueError(f"parameter '{name}' must have 1 or {n} entries (one per joint), "
                         f'got {gains.size}')
    return gains


def control_rate_error(rate):
    """Why a controller's control_rate (Hz) is refused, or None: 0 (one step per joint state) or
    MIN_CONTROL_RATE to MAX_CONTROL_RATE (a timer that slow is no controller, and a tiny rate would
    overflow the timer period)."""
    if not (rate == 0.0 or MIN_CONTROL_RATE <= rate <= MAX_CONTROL_RATE):
        return (f'control_rate must be 0 or at least {MIN_CONTROL_RATE} Hz (and at most '
                f'{MAX_CONTROL_RATE:g} Hz), got {rate}')
    return None


def control_timer(node, old_timer, control_rate, state_timeout, step, watchdog):
    """A controller's timer (``old_timer`` destroyed): ``step`` at control_rate, or (rate 0: a step
    per joint state) a ``watchdog`` that detects stale states when state_timeout > 0; else None."""
    if old_timer is not None:
        node.destroy_timer(old_timer)
    if control_rate > 0.0:
        return node.create_timer(1.0 / control_rate, step)
    if state_timeout > 0.0:
        return node.create_timer(min(max(state_timeout / 2, 0.005), 0.5), watchdog)
    return None


def string_list(name, value):
    """A string-array parameter (empty list allowed) as a list of str; ValueError otherwise."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)):
        raise ValueError(f"parameter '{name}' must be a list of strings, got {_shown(value)}")
    try:
        values = list(value)
    except TypeError:               # (a number or a bool: dynamic typing lets any type through)
        raise ValueError(f"parameter '{name}' must be a list of strings, got {_shown(value)}") from None
    if not all(isinstance(v, str) for v in values):
        raise ValueError(f"parameter '{name}' must be a list of strings, got {_shown(value)}")
    return values


def make_executor(context=None, kind='events'):
    """The executor of a node process, of bring-up and of the demos: ``kind`` 'events' (rclpy's
    EventsExecutor, the fastest; a SingleThreadedExecutor where this rclpy has none), 'single'
    (SingleThreadedExecutor) or 'multi' (MultiThreadedExecutor).

    rclpy 9.1.2's EventsExecutor hangs in spin() and in spin_once() without a timeout: only ever
    call ``spin_once(timeout_sec=...)`` on the returned executor (``spin_for``, ``spin_until``).
    """
    if kind == 'events':
        for module in ('rclpy.executors', 'rclpy.experimental'):
            try:
                return __import__(module, fromlist=['EventsExecutor']).EventsExecutor(context=context)
            except (ImportError, AttributeError):
                continue
        kind = 'single'
    if kind == 'single':
        return SingleThreadedExecutor(context=context)
    if kind == 'multi':
        return MultiThreadedExecutor(context=context)
    raise ValueError(f"executor must be 'events', 'single' or 'multi', got {kind!r}")


def spin_for(executor, seconds, timeout_sec=0.05):
    """Spin ``executor`` for ``seconds`` of wall time, always with finite timeouts."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=min(timeout_sec, max(deadline - time.monotonic(), 0.0)))


def spin_until(executor, condition, timeout, timeout_sec=0.05):
    """Spin ``executor`` (finite timeouts) until ``condition()`` or ``timeout`` s of wall time have
    passed; True when the condition was met."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        executor.spin_once(timeout_sec=timeout_sec)
    return True


def run_node(node_class, args=None):
    """``main()`` of every node: init, spin with finite timeouts; exit 0 within stop.STOP_DEADLINE_S
    of SIGINT or SIGTERM, at any moment (stop.py: the process's one handler, which the console script
    installed before importing, so a request made while importing is honoured here).

    Start-up (building the model and warming up its kernel calls in the constructor: loaded from
    numba's cache, or compiled when there is none) is interrupted where it is: the signal raises
    KeyboardInterrupt there. Once spinning, rclpy's own SIGINT handling would raise
    KeyboardInterrupt wherever the main thread is, often inside a subscription callback: the
    signals then only set a flag, and the spin loop ends at its next turn. Should that turn not
    come in time (a callback that does not return), the process exits at the deadline. The
    handlers stay until the node is destroyed: Ctrl-C under ``ros2 launch`` reaches a node twice
    (from the terminal, to the whole process group, and forwarded by launch), and the second must
    not interrupt the clean-up.
    """
    previous = {sig: signal.getsignal(sig) for sig in stop.SIGNALS}
    request = stop.install()        # the console script's, with a request made while importing
    node = None
    executor = None
    try:
        if request.requested:
            return
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        node = node_class()
        executor = make_executor()
        executor.add_node(node)
        request.interrupt = False
        while rclpy.ok() and not request.requested:
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        request.interrupt = False
        try:
            if executor is not None:
                executor.shutdown(timeout_sec=stop.STOP_DEADLINE_S)
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            faulthandler.cancel_dump_traceback_later()      # (the clean-up is done)
