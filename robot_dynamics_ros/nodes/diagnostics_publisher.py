"""A node's ``/diagnostics`` (diagnostic_msgs/DiagnosticArray), as diagnostic_updater publishes them.

``NodeDiagnostics(node, task, ...)`` publishes, every ``diagnostics_period`` s of steady time, one
DiagnosticStatus named ``"<node name>: <task>"`` with ``hardware_id`` = the robot's name ('' before a
model), the level and message of ``robot_dynamics_ros.logic.diagnostics.assess`` and these values
(strings; units in the keys):

- ``robot``, ``joints``, ``model source`` (``ModelSource.where``);
- ``input`` (the topic), ``input rate (Hz)`` (messages accepted per second over the last period),
  ``input age (s)`` (since the last accepted one; for joint states, of the least recently updated
  joint: what a controller's ``state_timeout`` measures), ``inputs received`` (since start);
- ``dropped (last period)``, ``dropped (since start)``, then per reason (the WarningThrottle key:
  ``joint_states/nonfinite``, ``reference/too_long``, ...) ``dropped <reason> (last period)`` and
  ``dropped <reason> (since start)``;
- ``compute time median (ms)``, ``compute time p99 (ms)``: handling one input message (callback
  to output published) over the last 1000;
- the node's own (a controller's ``mode``, the estimator's ``contact``, the simulator's ``state``).

Parameters (declared here, settable at run time, validated): ``diagnostics_period`` (s, default 1; 0 =
none), ``diagnostics_min_rate`` (Hz, default 0 = no check), and, for a node without a
``state_timeout`` of its own, ``diagnostics_max_age`` (s, default 0.5; 0 = no check).

A failure in here is logged (throttled) and never reaches the node's callbacks.
"""

import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType

from robot_dynamics_ros.dynamics.urdf import robot_name
from robot_dynamics_ros.logic.diagnostics import (
    MAX_VALUE,
    MIN_PERIOD,
    PARAMETERS,
    WARN,
    Facts,
    Periods,
    make_status,
    parameter_error,
)
from robot_dynamics_ros.logic.input_guard import bounded
from robot_dynamics_ros.nodes.common import describe, parameter_validator

__all__ = ['NodeDiagnostics', 'Details', 'TOPIC']

TOPIC = '/diagnostics'              # absolute, as diagnostic_updater publishes
_LEVELS = (DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR)


class Details:
    """What a node adds to its status: ``values`` ((key, value) pairs), ``summary`` (the message
    when nothing is wrong), ``idle`` (why no input is expected now: the input checks are skipped;
    None), ``problems`` ((level, text) pairs)."""

    __slots__ = ('values', 'summary', 'idle', 'problems')

    def __init__(self, values=(), summary='OK', idle=None, problems=()):
        self.values, self.summary, self.idle, self.problems = values, summary, idle, problems


class NodeDiagnostics:
    """The /diagnostics of ``node`` (module docstring).

    Args:
        node: the rclpy node. task: the status name's second part ('control', 'dynamics', ...).
        throttle: the node's WarningThrottle (its ``counts`` are the drops). source: its
            ModelSource (``model``, ``urdf_xml``, ``where``).
        meter: the input: ``received`` (messages accepted since start), ``age()`` (s since the
            last, None before), optionally ``problems()`` ((level, text) pairs).
        compute: the node's ComputeTimes. topic: the input topic (for the ``input`` value).
        what: the input in words, for the message ('joint states').
        stale_after: callable -> s after which the input is stale (a controller's state_timeout);
            None: the ``diagnostics_max_age`` parameter, declared here. stale_level: the level then.
        details: callable -> Details, or None.
    """

    def __init__(self, node, task, throttle, source, meter, compute, topic, what='joint states', *,
                 stale_after=None, stale_level=WARN, details=None):
        self._node = node
        self._name = f'{node.get_name()}: {task}'
        self.rate = None            # input messages per second over the last period (None before one)
        self._source = source
        self._meter = meter
        self._compute = compute
        self._topic = topic
        self._what = what
        self._stale_level = stale_level
        self._details = details
        self._robot = ('', '')              # (the description it is the name of, the name)
        names = [name for name in PARAMETERS if name != 'diagnostics_max_age' or stale_after is None]
        for name in names:
            default, unit, zero, text = PARAMETERS[name]
            node.declare_parameter(name, default, describe(
                f'{text} 0 = {zero}.', min_value=0.0, max_value=MAX_VALUE[name],
                additional_constraints=(f'0, or {MIN_PERIOD} to {MAX_VALUE[name]:g} {unit}'
                                        if name == 'diagnostics_period' else f'{unit}, >= 0')))
        self._names = frozenset(names)
        self._settings = {}
        self._stale_after = stale_after or (lambda: self._settings['diagnostics_max_age'])
        node.add_on_set_parameters_callback(parameter_validator(self._check))
        node.add_post_set_parameters_callback(self._apply)
        self._publisher = node.create_publisher(DiagnosticArray, TOPIC, 10)
        self._periods = Periods(throttle.counts, time.monotonic(), meter.received)
        self._timer = None
        self._read()

    # -- parameters -------------------------------------------------------------------------
    def _check(self, params):
        for p in params:
            if p.name in self._names:
                reason = parameter_error(p.name, p.value)
                if reason is not None:
                    raise ValueError(reason)

    def _apply(self, params):
        if any(p.name in self._names for p in params):
            self._read()

    def _read(self):
        """The parameters' values; a new timer when the period changed (start-up values are checked
        here: a bad one is an error and the default)."""
        settings = {}
        for name in self._names:
            value = self._node.get_parameter(name).value
            reason = parameter_error(name, value)
            if reason is not None:
                self._node.get_logger().error(f'{reason}: using {PARAMETERS[name][0]}')
                value = PARAMETERS[name][0]
            settings[name] = float(value)
        old = self._settings.get('diagnostics_period')
        self._settings = settings
        period = settings['diagnostics_period']
        if period != old:
            if self._timer is not None:
                self._node.destroy_timer(self._timer)
                self._timer = None
            if period > 0.0:
                # steady clock: with use_sim_time a ROS-time timer would wait for /clock
                self._timer = self._node.create_timer(period, self._update,
                                                      clock=Clock(clock_type=ClockType.STEADY_TIME))

    # -- the status -------------------------------------------------------------------------
    def _update(self):
        try:
            self._publisher.publish(self.message())
        except Exception as exc:  # the diagnostics must never stop the node
            self._node.get_logger().error(f'/diagnostics not published: {type(exc).__name__}: '
                                          f'{bounded(exc, 300)}', throttle_duration_sec=10.0)

    def status(self):
        """The node's status now (robot_dynamics_ros.logic.diagnostics.Status); starts a new period."""
        model = self._source.model
        received = self._meter.received
        rate, total, period = self._periods.update(time.monotonic(), received)
        self.rate = rate            # (the details may judge it: a controller against its hardware's rate)
        details = self._details() if self._details is not None else Details()
        problems = tuple(getattr(self._meter, 'problems', tuple)()) + tuple(details.problems)
        facts = Facts(has_model=model is not None, input=self._what, received=received,
                      age=self._meter.age(), rate=rate, stale_after=float(self._stale_after()),
                      stale_level=self._stale_level, min_rate=self._settings['diagnostics_min_rate'],
                      dropped=period, idle=details.idle, problems=problems, summary=details.summary)
        model_values = (('joints', str(model.nq if model is not None else 0)),
                        ('model source', self._source.where))
        return make_status(self._name, self._robot_name(model), facts, model_values, self._topic,
                           total, self._compute.stats(), details.values)

    def message(self):
        """The DiagnosticArray of ``status()``, stamped with the node's clock."""
        s = self.status()
        msg = DiagnosticArray()
        msg.header.stamp = self._node.get_clock().now().to_msg()
        msg.status = [DiagnosticStatus(level=_LEVELS[s.level], name=s.name, message=s.message,
                                       hardware_id=s.hardware_id,
                                       values=[KeyValue(key=k, value=v) for k, v in s.values])]
        return msg

    def _robot_name(self, model):
        if model is None:
            return ''
        xml = self._source.urdf_xml
        if self._robot[0] is not xml:       # (parsed once per description)
            self._robot = (xml, robot_name(xml))
        return self._robot[1]
