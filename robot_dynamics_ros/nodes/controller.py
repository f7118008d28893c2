"""What the two controllers share (computed_torque_controller, task_space_controller): the timing
parameters, the stale-state watchdog, the gravity-only hold and the effort output.

- ``control_rate`` (Hz): 0 = one command per joint-state message; 0.1 to 10000 = a timer at that rate
  (common.control_rate_error says why anything else is refused).
- ``state_timeout`` (s, >= 0, 0 = off): when any joint's state is older than this, the controller
  stops tracking (``_drop_reference``), publishes the gravity-only holding torque g(q) of the last
  state and warns; when states resume, the subclass holds where the arm is then.
- ``start_enabled`` (bool, read-only): enabled at start-up.
- ``armature`` (double array, kg m² or kg, one per joint in the controller's joint order; [] = the
  model's own, zeros from a URDF; model_source, settable at run time): the model's M(q) +
  diag(armature), which the control law uses. ``effort_offset`` (double array, N·m or N, same order;
  [] = zeros): declared so that one parameter file (``/**``) serves every node, **not used**: the
  commands are joint torques, to which the effort sensors' offset is not added. Both validated (a
  wrong number of values, a negative or non-finite value: refused with the reason at run time; at
  start-up an error, and no model).

- the hardware parameters (nodes/hardware_parameters.py, read-only: ``hardware_profile``,
  ``firmware_compensates``, ``measured_effort``, ...): the commands are the full torque less what the
  firmware adds (EffortCommand), and the disabled mode's gravity compensation adds no friction where the
  firmware supplies it. ``check_effort_convention`` (bool, read-only, default true): before the first
  command of any kind, the efforts of 10 joint states at rest are compared with what ``measured_effort``
  predicts (logic.hardware.EffortConventionCheck); on a contradiction the controller commands nothing for
  its lifetime, disables itself (``~/enable`` true is refused) and says on the log and /diagnostics which
  convention the data fits. /diagnostics also warns when the commands go out slower than the hardware's
  ``command_rate``.

The state a command is computed from travels as an argument: a joint state's callback hands the
``MeasuredState`` (q, q̇, the node-clock time it was received) that message completed to the step
(``_step(state, now_ns)``); a timer, a service or a reference takes the newest one
(``JointStateInput.latest()``) once and passes it on. Nothing below re-reads the input cache.

What a subclass gives (the few things the controllers differ in): its parameters
(``_check_parameter(p)``, raising ValueError, the rest to ``super()``; ``_apply_parameters(params)``,
calling ``_apply_timing(names)``), ``_warm_up_calls(model)``, ``_use_model(model)`` (after the shared
part of a new model; None: none), its reference (``_reference_empty()``, ``_hold(state, now_ns,
reason)``: hold where the arm is at ``state`` and say so, ``_drop_reference(reason)``), and its law
``_control(state, now_ns)``; ``_tracking()`` for the mode. It calls ``_start(jump_consequence)`` at the
end of its ``__init__``. What a disabled controller publishes (``_disabled_mode``,
``_friction_compensation``) and what a step does while the gains do not fit (``UNFIT_GAINS``) are
attributes. ``Controller._step`` says when each part runs.
"""

import math
import time

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.node import Node
from std_srvs.srv import SetBool, Trigger

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.controller_status import controller_mode, convention_check
from robot_dynamics_ros.logic.diagnostics import ERROR, WARN
from robot_dynamics_ros.logic.hardware import CheckResult, EffortConventionCheck, command_rate_problem
from robot_dynamics_ros.logic.stamps import sec_nanosec
from robot_dynamics_ros.nodes.common import (
    MAX_CONTROL_RATE,
    MIN_CONTROL_RATE,
    WarningThrottle,
    control_rate_error,
    control_timer,
    describe,
    parameter_validator,
)
from robot_dynamics_ros.nodes.conversions import index_map
from robot_dynamics_ros.nodes.diagnostics_publisher import Details, NodeDiagnostics
from robot_dynamics_ros.nodes.effort_command import EffortCommand
from robot_dynamics_ros.nodes.hardware_parameters import HardwareParameters
from robot_dynamics_ros.nodes.joint_state_input import JointStateInput
from robot_dynamics_ros.nodes.model_source import ModelSource

__all__ = ['Controller', 'COMPUTE_ERRORS', 'stamp']

#: What a core call may raise on a state it cannot handle (the node warns and goes on).
COMPUTE_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError)


def stamp(now_ns):
    """The header stamp of node-clock time now_ns (the controllers' diagnostic outputs)."""
    sec, nanosec = sec_nanosec(now_ns)
    return Time(sec=sec, nanosec=nanosec)


def _declare_parameters(node, held):
    """The controllers' shared parameters (module docstring) on ``node``; ``held``: what it holds."""
    node.declare_parameter('control_rate', 0.0, describe(
        'Control rate in Hz; 0 = compute and publish on every joint-state message.',
        min_value=0.0, max_value=MAX_CONTROL_RATE,
        additional_constraints=f'0, or {MIN_CONTROL_RATE} to {MAX_CONTROL_RATE:g}'))
    node.declare_parameter('state_timeout', 0.1, describe(
        'Seconds without a joint state after which the controller stops tracking and '
        'publishes the gravity-only holding torque (0 = never).', min_value=0.0))
    node.declare_parameter('start_enabled', True, describe(
        f'Start enabled (holding the {held} of the first joint state until a reference arrives).',
        read_only=True))
    node.declare_parameter('check_effort_convention', True, describe(
        'Before the first command, compare the measured efforts at rest with what measured_effort '
        'predicts (doc/hardware.md, "The start-up check"); on a contradiction command nothing.',
        read_only=True))


class Controller(Node):
    """A controller node's shared part (module docstring). ``held``: what it holds without a
    reference ('position', 'pose'), for parameter descriptions and log lines."""

    #: what it follows, in log lines ('reference', 'target')
    REFERENCE = 'reference'
    #: a step while the gains do not fit the model: (warning key, warning, publish g(q) meanwhile)
    UNFIT_GAINS = ('gains', 'the gains do not fit the model: gravity torques only', True)

    def __init__(self, node_name, held, **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = WarningThrottle(self.get_logger())
        self._held = held
        self.model = None
        self.joint_order = ()
        self._stale = False
        self._timer = None
        self._input = None              # the subclass's JointStateInput
        self._gains = None              # the subclass's gains in model order; None while they do not fit
        self._controllable = True       # False: nothing to control in this model (_step idles)
        # index maps: model order -> the controller's joint order (public: trajectory_action), and back
        self.to_order = self._to_model = None
        # disabled: 'gravity_compensation' (g(q), with _friction_compensation + friction) or 'zero_effort'
        self._disabled_mode = 'gravity_compensation'
        self._friction_compensation = False
        _declare_parameters(self, held)
        self.enabled = bool(self.get_parameter('start_enabled').value)
        self._state_timeout = float(self.get_parameter('state_timeout').value)
        self._control_rate = float(self.get_parameter('control_rate').value)
        if control_rate_error(self._control_rate):          # a start-up value: not validated
            self.get_logger().error(f'{control_rate_error(self._control_rate)}: using '
                                    f'{MIN_CONTROL_RATE} Hz')
            self._control_rate = MIN_CONTROL_RATE
        self._command = None            # EffortCommand, made in _start with the hardware parameters
        self._effort_check = None       # logic.hardware.EffortConventionCheck until it has a verdict

    def _start(self, jump_consequence):
        """The parameter callbacks (start-up values are not validated: the subclass reads them), the
        services, the joint states (a jump of more than max_state_jump: ``jump_consequence``, for the
        parameter's description), the timer, the model (built or awaited), then /diagnostics
        (``_diagnostic_details``). ``_step`` is timed for them: a step of the timer (control_rate >
        0) on its own, a step on a joint state as part of that state's callback."""
        self.add_on_set_parameters_callback(parameter_validator(self._check_parameters))
        self.add_post_set_parameters_callback(self._apply_parameters)
        self.create_service(SetBool, '~/enable', self._on_enable)
        self.create_service(Trigger, '~/hold', self._on_hold)
        self._input = JointStateInput(self, self._throttle, self._on_state,
                                      state_jumps=(0.05, 0.01, jump_consequence),
                                      on_discontinuity=self._on_discontinuity)
        self._make_timer()
        self._source = ModelSource(self, self._on_model, warm_up=self._warm_up_calls,
                                   throttle=self._throttle, on_payload=self._on_payload)
        self._hardware = HardwareParameters(self, self._source, runtime=False)
        self._command = EffortCommand(self, self._throttle, self._hardware)
        if not self.get_parameter('check_effort_convention').value:
            self._command.verdict = CheckResult('skipped', None, None, 'check_effort_convention is false')
        self._source.start()
        self._diagnostics = NodeDiagnostics(
            self, 'control', self._throttle, self._source, self._input, self._input.compute,
            self._input.subscription.topic_name, stale_after=lambda: self._state_timeout,
            stale_level=ERROR, details=self._diagnostic_details)

    def _on_model(self, model, joint_order):
        """A new model (None: none) from model_source: the shared part, then ``_use_model``."""
        self.model, self.joint_order = model, joint_order
        self._stale, self._gains = False, None
        self._throttle.reset()
        self._input.reset(model)
        if model is None:
            self._command.reset(None, None)
        else:
            self.to_order = index_map(model.joint_names, joint_order)
            self._to_model = index_map(joint_order, model.joint_names)
            self._command.reset(model, self.to_order)
        self._use_model(model)

    def _on_payload(self, model):
        """The same robot, another payload or armature (model_source): the reference carries on."""
        self.model = model

    def _on_enable(self, request, response):
        """~/enable: true holds where the arm is at the next complete state; false drops the
        reference and publishes the disabled output (``_disable``). Refused after the start-up check
        found the efforts contradict the hardware profile."""
        verdict = self._command.verdict
        if request.data and verdict is not None and not verdict.allows_commands:
            response.success, response.message = False, f'refused: {verdict.message}'
            return response
        if request.data and not self.enabled:
            self.enabled = True
            self._drop_reference('the controller was enabled')  # hold at the next complete state
            self._stale = False
            response.message = f'enabled: holding the current {self._held}'
        elif not request.data and self.enabled:
            self.enabled = False
            self._drop_reference('the controller was disabled (~/enable false)')
            response.message = self._disable(self._input.latest())
        else:
            response.message = f"already {'enabled' if self.enabled else 'disabled'}"
        self.get_logger().info(response.message)
        response.success = True
        return response

    def destroy_node(self):
        self._source.close()        # the builder thread of topic descriptions (after its build)
        return super().destroy_node()

    # -- parameters -------------------------------------------------------------------------
    def _n(self):
        return self.model.nq if self.model is not None else None

    def _check_parameters(self, params):
        for p in params:
            self._check_parameter(p)

    def _check_parameter(self, p):
        """Raise ValueError when p is control_rate or state_timeout and not acceptable."""
        if p.name in ('control_rate', 'state_timeout'):
            if not (math.isfinite(p.value) and p.value >= 0.0):
                raise ValueError(f'{p.name} must be finite and >= 0, got {p.value}')
            if p.name == 'control_rate' and control_rate_error(p.value):
                raise ValueError(control_rate_error(p.value))

    def _apply_timing(self, names):
        if names & {'control_rate', 'state_timeout'}:
            self._state_timeout = float(self.get_parameter('state_timeout').value)
            self._control_rate = float(self.get_parameter('control_rate').value)
            self._make_timer()

    def _make_timer(self):
        """Control timer at control_rate, or (rate 0) a watchdog that detects stale states."""
        self._timer = control_timer(self, self._timer, self._control_rate, self._state_timeout,
                                    self._on_timer, self._watchdog)

    # -- the entry points: a joint state, the timer, ~/hold, a discontinuity ------------------
    def _on_state(self, msg, state):
        """A complete joint state (``state``: what ``msg`` completed): the start-up check, and a
        step at the time it was received (control_rate 0)."""
        if self._command.verdict is None:
            self._check_effort_convention(msg, state)
        if self._control_rate == 0.0:
            self._step(state, state.stamp_ns)

    def _on_timer(self):
        """A step of the control_rate timer, now, at the newest state; timed by hand (ComputeTimes)."""
        if self.model is not None and self._input.check_complete():
            start_ns = time.perf_counter_ns()
            self._step(self._input.latest(), self.get_clock().now().nanoseconds)
            self._input.compute.record(time.perf_counter_ns() - start_ns)

    def _on_hold(self, request, response):
        """~/hold: drop the reference, hold where the arm is at the newest state."""
        state = self._input.latest()
        if not self.enabled:
            response.success, response.message = False, 'the controller is disabled'
        elif state is None or not self._controllable:
            response.success = False
            response.message = 'no complete joint state yet' if state is None else 'no tip frame yet'
        else:
            response.message = self._hold(state, self.get_clock().now().nanoseconds, 'held by ~/hold')
            response.success = True
            self.get_logger().info(response.message)
        return response

    def _on_discontinuity(self, description, state):
        """A joint state that does not continue the previous one: hold where the arm is at it."""
        if not self.enabled or self.model is None or not self._controllable:
            return
        self._hold(state, state.stamp_ns, f'{description}: holding the {self._held} of this state')
        self._throttle.warn('state/discontinuity', f'{description}: {self.REFERENCE} dropped, holding the '
                                                   f'{self._held} of this state')

    def _ensure_reference(self, state, now_ns):
        """Hold where the arm is at ``state`` if nothing is desired yet."""
        if self._reference_empty():
            self._hold(state, now_ns)

    # -- stale states -----------------------------------------------------------------------
    def _check_effort_convention(self, msg, state):
        """The start-up check (logic.hardware.EffortConventionCheck), fed with each complete state
        until it has a verdict; nothing is commanded before. A contradiction: disabled, an ERROR, and
        nothing commanded for the node's lifetime (the parameters are read-only: restart it with the
        profile that fits, or check_effort_convention false)."""
        conventions = self._hardware.conventions()
        if self.model is None or conventions is None:
            return
        check = self._effort_check
        if check is None or check.model is not self.model:
            check = self._effort_check = EffortConventionCheck(self.model, self._hardware.firmware_model,
                                                               conventions)
        effort = None
        if len(msg.effort):
            effort = self._input.cache.message_efforts(msg)
            if effort is None:          # efforts for some joints only: wait for a whole state
                return
        result = check.add(state.q, state.qd, effort)
        if result is None:
            return
        self._command.verdict, self._effort_check = result, None
        if result.allows_commands:
            self.get_logger().info(f'effort convention: {result.message}')
            return
        self.enabled = False
        self._drop_reference('the measured efforts contradict the hardware profile')
        self.get_logger().error(f'{result.message}: this controller commands nothing (restart it with '
                                'the hardware profile that fits)')

    def _is_stale(self, now_ns):
        """Some joint's state is older than state_timeout (> 0) at node-clock time now_ns."""
        return self._state_timeout > 0.0 and \
            (now_ns - self._input.cache.oldest_update_ns()) * 1e-9 > self._state_timeout

    def _watchdog(self):
        if self.enabled and self.model is not None and self._input.complete:
            if self._is_stale(self.get_clock().now().nanoseconds):
                self._hold_against_gravity(self._input.latest())

    def _hold_against_gravity(self, state):
        """Stale joint states: gravity-only holding torque g(q) at the last measured q."""
        if not self._stale:
            self._stale = True
            # hold where the robot is when states resume
            self._drop_reference(f'joint states older than state_timeout = {self._state_timeout} s: '
                                 'holding against gravity')
        self._throttle.warn('stale', f'joint states older than state_timeout = '
                                     f'{self._state_timeout} s: publishing gravity-only holding '
                                     'torque, tracking stopped')
        self._publish_gravity(state)

    def _publish_gravity(self, state, friction=False):
        """g(q) at the measured ``state`` (with ``friction``, plus the URDF friction torques of its q̇,
        unless the firmware supplies them): the arm does not fall (and is not driven); on an arm whose
        firmware adds g itself, what is left of it (EffortCommand)."""
        q, qd = state.q, state.qd
        try:
            tau = rd.gravity_torques(self.model, q)
            if friction and not self._hardware.firmware_adds_friction:
                tau = tau + rd.friction_torques(self.model, qd)
        except COMPUTE_ERRORS as exc:
            self._throttle.warn('compute/gravity', f'cannot compute gravity torques: {exc}')
            return
        self._command.publish(tau, q, qd)

    def _may_track(self, state, now_ns):
        """An enabled step at node-clock time now_ns: False (after the gravity-only hold at ``state``)
        while the states are stale; when they resume, the subclass's reference is empty (dropped when
        they went stale) and it holds where the arm is now."""
        if self._is_stale(now_ns):
            self._hold_against_gravity(state)
            return False
        if self._stale:
            self._stale = False
            self.get_logger().warning(f'joint states resumed: holding the current {self._held}')
        return True

    # -- disabled, unfit gains --------------------------------------------------------------
    def _disable(self, state):
        """Disabled (or its mode changed): the mode's first output at ``state`` (None: none); what to log."""
        if self._disabled_mode == 'zero_effort':
            if self.model is not None:
                self._command.publish_zero()
            return 'disabled (zero_effort): published one zero command, no commands from now on'
        if self.model is not None and state is not None:
            self._idle(state)
        return ('disabled (gravity_compensation): publishing g(q)'
                f"{' + friction' if self._friction_compensation else ''} for every joint state")

    def _idle(self, state):
        """A step while disabled (or not ``_controllable``): g(q) (+ friction) at ``state`` in
        gravity_compensation mode, nothing in zero_effort."""
        if self._disabled_mode == 'gravity_compensation':
            self._publish_gravity(state, friction=self._friction_compensation)

    # -- the control step -------------------------------------------------------------------
    def _step(self, state, now_ns):
        """One control update at node-clock time now_ns from the measured ``state`` (a complete
        MeasuredState; nothing without a model): ``_idle`` while disabled (or not ``_controllable``);
        after ``_may_track`` (the stale-state hold), ``UNFIT_GAINS`` while ``_gains`` is None; else the
        reference latched (``_ensure_reference``) and the subclass's ``_control(state, now_ns)``."""
        if self.model is None:
            return
        if not (self.enabled and self._controllable):
            self._idle(state)
            return
        if not self._may_track(state, now_ns):
            return
        if self._gains is None:
            key, warning, gravity = self.UNFIT_GAINS
            self._throttle.warn(key, warning)
            if gravity:
                self._publish_gravity(state)
            return
        self._ensure_reference(state, now_ns)
        self._control(state, now_ns)

    # -- what a subclass gives ----------------------------------------------------------------
    def _use_model(self, model):
        """The subclass's part of a new model (None: none): its gains, frame, reference."""
        raise NotImplementedError

    def _reference_empty(self):
        """Nothing is desired (the next step holds where the arm is)."""
        raise NotImplementedError

    def _hold(self, state, now_ns, reason=None):
        """Hold where the arm is at ``state`` from now_ns on; ``reason`` (None: latching the first
        hold): why, for a client whose goal ends with it. Returns what it holds, in words."""
        raise NotImplementedError

    def _drop_reference(self, reason):
        """Discard the reference (the next step holds where the arm is); ``reason``: why."""
        raise NotImplementedError

    def _control(self, state, now_ns):
        """The subclass's control law at node-clock time now_ns from the measured ``state``."""
        raise NotImplementedError

    # -- /diagnostics -----------------------------------------------------------------------
    def _mode(self):
        """What the controller does now, in a few words, for /diagnostics (logic.controller_status).

        The override point for modes of a subclass's own (an action goal): return its mode, else
        ``super()._mode()``. It is called once per diagnostics period, never on the control path.
        """
        return controller_mode(self._command.verdict, self.enabled, self._stale, self._tracking)

    def _tracking(self):
        """Hook of ``_mode``: True while a reference moves the arm, False while it holds still; None
        (the default): not known."""
        return None

    def _diagnostic_details(self):
        """The controller's part of its /diagnostics status: the mode (the message when all is
        well), enabled, the timing parameters, the hardware conventions and the start-up check: ERROR
        on a contradiction or without conventions, WARN when the commands go out slower than the
        hardware needs (its ``command_rate``)."""
        mode = self._mode()
        convention, problems = convention_check(self._command.verdict, self._effort_check)
        conventions = self._hardware.conventions()
        if conventions is None and self.model is not None:
            problems.append((ERROR, f'no hardware conventions: {self._hardware.error}'))
        # commands go out at control_rate, or once per joint state
        slow = conventions and command_rate_problem(conventions, self._control_rate or self._diagnostics.rate)
        if slow and self.enabled:
            problems.append((WARN, slow))
        return Details(values=(('mode', mode), ('enabled', str(self.enabled).lower()),
                               ('control_rate (Hz)', f'{self._control_rate:g}'),
                               ('state_timeout (s)', f'{self._state_timeout:g}'),
                               *self._hardware.details(), ('effort convention check', convention)),
                       summary=mode, problems=tuple(problems))
