"""Where a node's robot model comes from: parameters, a URDF file, or the robot_description topic.

Parameters (declared on the node by ``ModelSource``; read-only after start-up unless said):

- ``robot_description``, ``urdf_path``, ``xacro_args``, ``max_description_bytes``: where the URDF comes
  from (nodes/description_source.py: the parameter, a URDF or xacro file, else the transient-local
  ``robot_description`` topic, from which the model is rebuilt for every description that arrives).
- ``root_link``, ``tip_link`` (string, '' = the URDF's root link / its last link): the chain.
- ``joints`` (string array, [] = all joints of the chain in model order): the joints the node
  works with, in this order. Joints of the chain not listed are locked at 0.
- ``gravity`` (double array of 3, m/s², root frame; default [0, 0, -9.81]).
- ``payload_mass`` (kg, >= 0, default 0), ``payload_com`` (3 numbers, m, in the payload frame's
  coordinates), ``payload_inertia`` (6 numbers ixx, ixy, ixz, iyy, iyz, izz, kg m², about the
  payload's centre of mass in the frame's axes), ``payload_frame`` ('' = the model's tip frame):
  a rigid payload attached at that frame (``dynamics.with_payload``), settable at run time. A change
  is checked against the model (a frame it does not have, an inertia no rigid body has: refused
  with the reason) and the model with the payload is handed to the node (``on_payload``) for the
  next message. ``base_model`` is the model without it.
- ``armature`` (double array; [] = the model's own, zeros from a URDF): the rotor inertia reflected
  through each joint's gearbox, kg m² (kg for a prismatic joint), one value per joint in the node's
  joint order (``joints``; [] = model.joint_names, the order ``identify_robot`` writes), >= 0:
  every algorithm uses M(q) + diag(armature) (``dynamics.with_armature``). Settable at run time.
- ``effort_offset`` (double array; [] = zeros): what the effort sensors add to the joint torque,
  N m (N for a prismatic joint), in the same order: measured effort = joint torque + effort_offset
  (the ``offset`` of ``identify_robot``). ``effort_offset`` (model order, zeros for []) holds it for
  the node, which says what it does with it. Settable at run time.

The payload, the armature and the effort offset are checked when they are set at run time (a
wrong number of values, a negative armature, a value that is not finite, a payload the model cannot
take: refused with the reason, the node keeps its model) and applied to every model the node
builds. A change of the payload or the armature hands the node the new model of the same robot
(``on_payload``: it keeps its state). Values the model built at start-up or from the topic cannot
take (a wrong length for that robot, a payload parameter out of range) are an error logged: the
node then runs without a robot model rather than with a wrong one, until they are set to values
that fit (a payload frame the model does not have: the model without the payload, and an error).

Descriptions arriving on the topic are built off the executor, in the model source's
logic.background_job.BackgroundJob (which says how work leaves and re-enters the executor): the model,
then one call of each core function the node uses, so that numba's compilation or cache loading happens
there too, while the node keeps serving with its current model; the new model is handed to the node on
the executor thread, polled by a timer that runs only while a build is under way. Latest wins: one
build at a time, only the newest description that arrived meanwhile is built next, and a build that a
newer description (or one refused) superseded is not handed over. Descriptions given at start-up
(parameter, file) are built before the node spins, in its constructor.
"""

import math
import time

import numpy as np
from rclpy.clock import Clock, ClockType

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.background_job import BackgroundJob
from robot_dynamics_ros.logic.input_guard import WarningThrottle, bounded, short_list
from robot_dynamics_ros.logic.payload_log import PAYLOAD_PARAMETERS, inertia_matrix
from robot_dynamics_ros.nodes.common import describe, float_array, parameter_validator, string_list
from robot_dynamics_ros.nodes.conversions import index_map
from robot_dynamics_ros.nodes.description_source import DescriptionSource, looks_like_xml

__all__ = ['build_model', 'ModelSource',
           'payload_settings', 'attach_payload', 'joint_parameter', 'with_joint_armature',
           'JOINT_PARAMETERS', 'RUNTIME_PARAMETERS', 'EFFORT_OFFSET_UNUSED']

_BUILD_POLL_PERIOD = 0.02       # s between checks for a finished build (only while building)

#: Per-joint parameters of the robot itself (one value per joint, [] = none): their units.
JOINT_PARAMETERS = {'armature': 'kg m^2, kg for a prismatic joint',
                    'effort_offset': 'N m, N for a prismatic joint'}
#: The model parameters settable at run time (checked, then applied to the model).
RUNTIME_PARAMETERS = PAYLOAD_PARAMETERS + tuple(JOINT_PARAMETERS)
#: effort_offset's description in a node that does not use it (a controller: its commands are joint
#: torques, which the offset is not added to).
EFFORT_OFFSET_UNUSED = ('Not used by this node: its commands are joint torques (the offset is only in what '
                        'the sensors measure); declared so that one parameter file serves every node.')


def build_model(urdf, *, root_link='', tip_link='', joints=(), gravity=(0.0, 0.0, -9.81)):
    """Build the Model a node uses; return ``(model, joint_order)``.

    ``urdf``: XML string or file path. ``joints``: explicit subset/order (empty = model order);
    the chain's other joints are locked at 0 via ``load_urdf(locked_joints=...)``.
    Raises ValueError (from the core, or for unknown / duplicate joints, bad gravity).
    """
    gravity = float_array('gravity', gravity)
    if gravity.shape != (3,):
        raise ValueError(f"parameter 'gravity' must have 3 entries, got {gravity.tolist()}")
    joints = list(joints)
    if len(set(joints)) != len(joints):
        raise ValueError(f"parameter 'joints' lists a joint twice: {short_list(joints)}")
    kwargs = dict(root_link=root_link or None, tip_link=tip_link or None, gravity=tuple(gravity))
    model = rd.load_urdf(urdf, **kwargs)
    if not joints:
        return model, tuple(model.joint_names)
    unknown = [j for j in joints if j not in model.joint_names]
    if unknown:
        mimics = [j for j in unknown if j in model.mimic]
        hint = (f" ({short_list(mimics)} mimic other joints and follow them: list the joints they "
                "follow)") if mimics else ''
        raise ValueError(f"parameter 'joints' names {short_list(unknown)}, not movable joints of the chain "
                         f'{list(model.joint_names)}{hint}')
    locked = {j: 0.0 for j in model.joint_names if j not in joints}
    if locked:
        model = rd.load_urdf(urdf, locked_joints=locked, **kwargs)
    if sorted(model.joint_names) != sorted(joints):
        raise ValueError(f'model joints {list(model.joint_names)} after locking {sorted(locked)} '
                         f'do not match parameter joints {joints}')
    return model, tuple(joints)


def payload_settings(mass, com, inertia, frame):
    """The payload parameters' values as ``dynamics.with_payload``'s keyword arguments; ValueError
    naming the parameter. ``inertia``: (ixx, ixy, ixz, iyy, iyz, izz) about the centre of mass."""
    if isinstance(mass, bool) or not isinstance(mass, (int, float)) or not (math.isfinite(mass)
                                                                              and mass >= 0):
        raise ValueError(f"parameter 'payload_mass' must be a finite number >= 0 (kg), got "
                         f"{bounded(repr(mass))}")
    com = float_array('payload_com', com)
    if com.shape != (3,):
        raise ValueError(f"parameter 'payload_com' must have 3 entries (m), got {short_list(com.tolist())}")
    values = float_array('payload_inertia', inertia)
    if values.shape != (6,):
        raise ValueError("parameter 'payload_inertia' must have 6 entries (ixx, ixy, ixz, iyy, iyz, izz; "
                         f"kg m^2), got {short_list(values.tolist())}")
    return dict(mass=float(mass), com=com, inertia=inertia_matrix(values), frame=frame or None)


def attach_payload(model, payload):
    """``dynamics.with_payload(model, **payload)`` (mass 0: the model itself), its ValueError saying it
    is the payload."""
    try:
        return rd.with_payload(model, **payload)
    except ValueError as exc:
        raise ValueError(f'payload refused: {exc}') from None


def joint_parameter(name, value, joint_order=(), model=None):
    """The per-joint parameter ``name`` (JOINT_PARAMETERS) as an (n,) array in ``model.joint_names``
    order, or None for []. ``value``: [] or one number per joint of ``joint_order`` (the node's joint
    order), finite (an armature >= 0). Without a model only the numbers are checked (then returned as
    given). ValueError naming the parameter."""
    values = float_array(name, value)
    unit = JOINT_PARAMETERS[name]
    if name == 'armature' and np.any(values < 0.0):
        raise ValueError(f"parameter 'armature' must be >= 0 ({unit}), got {_numbers(values)}")
    if values.size == 0:
        return None
    if model is None:
        return values
    if values.size != len(joint_order):
        raise ValueError(f"parameter '{name}' must have {len(joint_order)} values ({unit}), one per "
                         f'joint {short_list(list(joint_order))} in that order, or none ([]); got '
                         f'{values.size}')
    return values[index_map(joint_order, model.joint_names)]


def _numbers(values, limit=12):
    """A list of numbers for a message: at most ``limit`` of them, then the count of the others."""
    values = [float(v) for v in values]
    shown = ', '.join(f'{v:g}' for v in values[:limit])
    return f'[{shown}]' if len(values) <= limit else f'[{shown}, … and {len(values) - limit} more]'


def with_joint_armature(model, armature):
    """``dynamics.with_armature(model, armature)`` (armature (n,) in model order; None: the model
    itself), its ValueError naming the parameter."""
    if armature is None:
        return model
    try:
        return rd.with_armature(model, armature)
    except ValueError as exc:
        raise ValueError(f"parameter 'armature' refused: {exc}") from None


def _warm(model, warm_up):
    """Call the node's warm-up functions ``warm_up(model)`` (None: none) on ``model`` (at q = 0 clipped
    into the limits, q̇ = 0); what to log about it (text or None; the first failure, never raised)."""
    if warm_up is None:
        return None
    start = time.monotonic()
    q, qd = np.clip(np.zeros(model.nq), model.lower, model.upper), np.zeros(model.nq)
    for call in warm_up(model):
        try:
            call(q, qd)
        except Exception as exc:  # warm-up must never stop a node
            return f'warm-up call failed: {type(exc).__name__}: {bounded(exc, 300)}'
    elapsed = time.monotonic() - start
    if elapsed > 5.0:     # loading from numba's cache takes milliseconds
        return (f'dynamics kernels ready after {elapsed:.1f} s: compiled, there was no compiled '
                'copy for these sources (`python -m robot_dynamics_ros.cli.precompile`, which the '
                "README's set-up and colcon build run, makes nodes start at once)")
    if elapsed > 0.5:
        return f'dynamics kernels ready after {elapsed:.1f} s (compiled or loaded)'
    return None


def _build(text, settings, warm_up):
    """The background job's work: ``(model, joint_order, warm-up note)`` built from the description
    ``text``; raises what the build raises. Touches no node state."""
    model, joint_order = build_model(text, **settings)
    return model, joint_order, _warm(model, warm_up)


class ModelSource:
    """Declares the model parameters on ``node`` and calls ``on_model(model, joint_order)``.

    Called once per successfully built model; ``on_model(None, ())`` when a description that
    arrives on the topic cannot be built (the node then runs without a model rather than with a
    model of a different robot). A description above ``max_description_bytes`` is refused and
    changes nothing. ``warm_up(model)`` (optional) returns callables ``f(q, qd)``, each called once
    on a new model before it is handed over (in the builder thread for the topic), so the core's
    kernels are compiled or loaded before the first control cycle. After ``start()``: ``model``
    (with the payload), ``base_model`` (without), ``joint_order``, ``urdf_xml`` (the text of the
    description in use) and ``origin`` ('parameter', 'file' or 'topic'); ``building`` is True while
    a topic description is built; ``where`` says where the model comes from, in words.
    ``on_payload(model)`` (default: ``on_model(model, joint_order)``) is called when the payload or
    armature parameters change the model of the same robot: the node
    swaps the model and keeps its state. ``base_model`` has the armature, not the payload;
    ``effort_offset`` is the effort_offset parameter in model order (zeros for []; None without a
    model): the node reads it when it needs it; ``effort_offset_use`` says in the parameter's
    description what the node does with it.
    """

    def __init__(self, node, on_model, warm_up=None, throttle=None, on_payload=None,
                 effort_offset_use=EFFORT_OFFSET_UNUSED):
        self._node = node
        self._on_model = on_model
        self._on_payload = on_payload or (lambda model: on_model(model, self.joint_order))
        self._warm_up = warm_up
        self._throttle = throttle or WarningThrottle(node.get_logger())
        self.model = None
        self.base_model = None
        self.joint_order = ()
        self.urdf_xml = None
        self.origin = None
        self.effort_offset = None
        # (model as built from the description, joint order, description, origin): kept while the
        # run-time parameters do not fit it, so that setting them to values that do brings it in
        self._built = None
        self._poll_timer = None
        self._builds = BackgroundJob('robot_description builder')    # the topic's descriptions
        self._latest_xml = None         # the newest description submitted to it
        self._description = DescriptionSource(
            node, self._on_description, self._throttle,
            kept=lambda: 'keeping the current model' if self.model is not None else 'no robot model')
        node.declare_parameter('root_link', '', describe(
            "Root link of the chain ('' = the URDF's root link).", read_only=True))
        node.declare_parameter('tip_link', '', describe(
            "Tip link of the chain, frame of task-space quantities and of external wrenches "
            "('' = the model's default tip frame, the last link).", read_only=True))
        node.declare_parameter('joints', [], describe(
            'Joints to use, in this order (the order of every joint vector the node publishes or '
            'expects). [] = every joint of the chain in model order. Joints of the chain not '
            'listed are locked at 0.', read_only=True, dynamic_typing=True,
            additional_constraints='list of strings, each a movable joint of the chain'))
        node.declare_parameter('gravity', [0.0, 0.0, -9.81], describe(
            'Gravitational acceleration in the root frame, m/s^2.', read_only=True,
            dynamic_typing=True, additional_constraints='3 finite numbers'))
        node.declare_parameter('payload_mass', 0.0, describe(
            'Mass of a rigid payload attached at payload_frame, kg (0 = none).', dynamic_typing=True,
            additional_constraints='a finite number >= 0'))
        node.declare_parameter('payload_com', [0.0, 0.0, 0.0], describe(
            "The payload's centre of mass in payload_frame's coordinates, m.", dynamic_typing=True,
            additional_constraints='3 finite numbers'))
        node.declare_parameter('payload_inertia', [0.0] * 6, describe(
            "The payload's rotational inertia about its centre of mass in payload_frame's axes, kg m^2: "
            'ixx, ixy, ixz, iyy, iyz, izz (0 = a point mass).', dynamic_typing=True,
            additional_constraints='6 finite numbers, a rigid body (positive semi-definite, triangle '
                                   'inequalities) unless all 0'))
        node.declare_parameter('payload_frame', '', describe(
            "Frame the payload is attached at ('' = the model's tip frame)."))
        node.declare_parameter('armature', [], describe(
            'Rotor inertia reflected through each joint\'s gearbox, kg m^2 (kg for a prismatic joint), '
            "one value per joint in the node's joint order (joints; [] = the model's joint order): "
            "the model's mass matrix becomes M(q) + diag(armature). [] = the model's own (zero from "
            'a URDF).', dynamic_typing=True,
            additional_constraints='[] or one finite number >= 0 per joint'))
        node.declare_parameter('effort_offset', [], describe(
            'Constant offset the effort sensors add to the joint torque, N m (N for a prismatic '
            "joint), one value per joint in the node's joint order: measured effort = joint torque "
            f'+ effort_offset. [] = zeros. {effort_offset_use}',
            dynamic_typing=True, additional_constraints='[] or one finite number per joint'))
        node.add_on_set_parameters_callback(parameter_validator(self._check_parameters))
        node.add_post_set_parameters_callback(self._apply_parameters)

    def _param(self, name):
        return self._node.get_parameter(name).value

    def _build_settings(self):
        return dict(root_link=self._param('root_link'), tip_link=self._param('tip_link'),
                    joints=string_list('joints', self._param('joints')),
                    gravity=self._param('gravity'))

    # -- the run-time parameters: payload, armature, effort offset ---------------------------
    def payload(self):
        """The payload in force: ``dynamics.with_payload``'s arguments (mass, com, inertia, frame)."""
        return self._payload()

    def _payload(self, changes=()):
        """The payload parameters (with ``changes``, rclpy Parameters, in place of theirs) as
        with_payload's arguments; ValueError naming the parameter."""
        values = {name: self._param(name) for name in PAYLOAD_PARAMETERS}
        values.update((p.name, p.value) for p in changes if p.name in values)
        return payload_settings(*(values[name] for name in PAYLOAD_PARAMETERS))

    def _compose(self, built, joint_order):
        """(model, base model, effort offset, payload note) of a model built from a description with
        the run-time parameters in force; ValueError naming a parameter whose value does not fit it
        (a payload that does not fit: the model without it, and the note says so)."""
        armature, offset = (joint_parameter(name, self._param(name), joint_order, built)
                            for name in JOINT_PARAMETERS)
        base = with_joint_armature(built, armature)
        model, payload_note = self._with_payload(base, self._payload())
        return model, base, np.zeros(built.nq) if offset is None else offset, payload_note

    def _check_parameters(self, params):
        """A run-time parameter set: ValueError (the reason it is refused) when its values do not fit
        the model (the payload, the armature and the effort offset together with the others in force)."""
        names = {p.name for p in params}
        if not names & set(RUNTIME_PARAMETERS):
            return
        built, joint_order = self._built[:2] if self._built is not None else (None, ())
        for p in params:
            if p.name in JOINT_PARAMETERS:      # (without a model yet: the numbers only)
                values = joint_parameter(p.name, p.value, joint_order, built)
                if p.name == 'armature' and built is not None:
                    with_joint_armature(built, values)
        if names & set(PAYLOAD_PARAMETERS):
            payload = self._payload(params)
            if built is not None:
                attach_payload(built, payload)

    def _apply_parameters(self, params):
        """Checked by _check_parameters: the model with the new values goes to the node now (the same
        robot: ``on_payload``; or, when the node had no model because a value did not fit, the model
        at last: ``on_model``)."""
        names = {p.name for p in params} & set(RUNTIME_PARAMETERS)
        if not names or self._built is None:
            return
        built, joint_order, urdf_xml, origin = self._built
        try:
            model, base, offset, payload_note = self._compose(built, joint_order)
        except ValueError as exc:       # another parameter still does not fit: still no model
            self._node.get_logger().error(bounded(f'{exc}: still running without a robot model'))
            return
        if self.model is None:
            self._log_model(model, joint_order, origin, payload_note)
            self._set(model, joint_order, urdf_xml, origin, base, offset, built)
            return
        logger = self._node.get_logger()
        if names & set(PAYLOAD_PARAMETERS):
            logger.info(self._payload_text(self._payload()))
        for name in sorted(names & set(JOINT_PARAMETERS)):
            logger.info(self._joint_text(name, joint_order))
        self.model, self.base_model, self.effort_offset = model, base, offset
        if names - {'effort_offset'}:
            self._on_payload(model)

    def _joint_text(self, name, joint_order):
        """The per-joint parameter ``name`` in words, for the log."""
        value = self._param(name)
        if not len(value):
            return f"{name}: [] (the model's own)" if name == 'armature' else f'{name}: [] (zeros)'
        return bounded(f'{name}: {_numbers(value)} ({JOINT_PARAMETERS[name]}; '
                       f'joints {short_list(list(joint_order))})')

    def _with_payload(self, base, payload):
        """(model with the payload, note to log): the base model and an error when it does not fit."""
        try:
            return attach_payload(base, payload), self._payload_text(payload) if payload['mass'] else None
        except ValueError as exc:
            return base, f'{exc}: running with the model without a payload (set the payload parameters again)'

    @staticmethod
    def _payload_text(payload):
        frame = payload['frame'] or 'the tip frame'
        return (f"payload {payload['mass']:g} kg at {frame}, centre of mass {payload['com'].tolist()} m"
                if payload['mass'] else 'no payload')

    @property
    def building(self):
        return self._builds.active

    def close(self, timeout=1.0):
        """End the builder thread (after the build under way; at most ``timeout`` s waited)."""
        self._builds.close(timeout)

    @property
    def where(self):
        """Where the model comes from, in words (DescriptionSource.where)."""
        return self._description.where

    def start(self):
        """Build from the parameter or file now, or subscribe to the robot_description topic."""
        self._description.start()

    # -- the robot_description topic: built in the background job --------------------------
    def _on_description(self, text, origin):
        if origin != 'topic':
            self.load(text, origin)
            return
        if not looks_like_xml(text):
            self._builds.cancel()           # a build under way is superseded: this one is the newest
            self._latest_xml = None
            self._set_failed(f'robot description from the topic is not URDF XML (starts with '
                             f'{text[:40]!r})', 'topic')
            return
        if text == (self._latest_xml if self._builds.active else self.urdf_xml):
            return  # being built, or the same robot: keep the model (and the node's state)
        if self._poll_timer is None:
            # steady clock: with use_sim_time, a ROS-time timer would wait for /clock
            self._poll_timer = self._node.create_timer(
                _BUILD_POLL_PERIOD, self._poll_build, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._latest_xml = text
        settings, warm_up = self._build_settings(), self._warm_up
        self._builds.submit(lambda: _build(text, settings, warm_up), tag=text)
        self._poll_timer.reset()

    def _poll_build(self):
        """Executor thread: hand over a finished build unless a newer description superseded it."""
        outcome = self._builds.poll()
        if not self._builds.active:
            self._poll_timer.cancel()
        if outcome is None or outcome.superseded:
            return
        if outcome.error is not None:
            error = outcome.error
            self._set_failed(f'cannot build the robot model from the topic robot description: '
                             f'{type(error).__name__}: {bounded(error, 500)}', 'topic')
            return
        base, joint_order, warm_up_note = outcome.value
        self._log_warm_up(warm_up_note)
        self._adopt(base, joint_order, outcome.tag, 'topic')

    # -- building ---------------------------------------------------------------------------
    def load(self, urdf_xml, origin):
        """Build the model from ``urdf_xml`` now; log an error and return None on failure."""
        if not looks_like_xml(urdf_xml):
            return self._set_failed(f'robot description from the {origin} is not URDF XML '
                                    f'(starts with {urdf_xml[:40]!r})', origin)
        try:
            built, joint_order = build_model(urdf_xml, **self._build_settings())
        except Exception as exc:  # any failure to build leaves the node running
            return self._set_failed(f'cannot build the robot model from the {origin} robot '
                                    f'description: {type(exc).__name__}: {bounded(exc, 500)}',
                                    origin)
        self._log_warm_up(_warm(built, self._warm_up))
        return self._adopt(built, joint_order, urdf_xml, origin)

    def _adopt(self, built, joint_order, urdf_xml, origin):
        """The model built from a description, with the run-time parameters (armature, payload, effort
        offset), to the node. Values that do not fit it: an error, no model (the node does not run
        with a wrong one) until they are set to values that do."""
        try:
            model, base, offset, payload_note = self._compose(built, joint_order)
        except ValueError as exc:
            self._set_failed(f'the robot model from the {origin} is not used: {bounded(exc, 500)}; '
                             'set it to a value that fits', origin)
            self._built = (built, tuple(joint_order), urdf_xml, origin)
            return None
        self._log_model(model, joint_order, origin, payload_note)
        return self._set(model, joint_order, urdf_xml, origin, base, offset, built)

    def _log_warm_up(self, note):
        if note is None:
            return
        logger = self._node.get_logger()
        (logger.error if note.startswith('warm-up call failed') else logger.info)(note)

    def _log_model(self, model, joint_order, origin, payload_note=None):
        self._node.get_logger().info(bounded(
            f'robot model from the {origin}: {model.nq} joints {list(joint_order)}, '
            f'root {model.root_link!r}, tip {model.tip_frame!r}, '
            f'gravity {np.asarray(model.gravity).tolist()}'))
        if payload_note is not None and payload_note.startswith('payload refused'):
            self._node.get_logger().error(bounded(payload_note))
        elif payload_note is not None:
            self._node.get_logger().info(bounded(payload_note))
        for name in JOINT_PARAMETERS:
            if len(self._param(name)):
                self._node.get_logger().info(self._joint_text(name, joint_order))

    def _set_failed(self, message, origin):
        self._node.get_logger().error(bounded(f'{message}; running without a robot model'))
        return self._set(None, (), None, origin)

    def _set(self, model, joint_order, urdf_xml, origin, base=None, effort_offset=None, built=None):
        """The node's model (None: none), ``base`` without the payload, ``built`` as built from the
        description (without the run-time parameters: what a change of them starts from)."""
        had_model = self.model is not None
        self.model, self.base_model, self.joint_order, self.urdf_xml, self.origin = (
            model, base, tuple(joint_order), urdf_xml, origin)
        self.effort_offset = effort_offset
        self._built = None if built is None else (built, self.joint_order, urdf_xml, origin)
        if model is not None or had_model:
            self._on_model(model, self.joint_order)
        return model
