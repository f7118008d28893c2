"""Where a node's robot model comes from: parameters, a URDF file, or the robot_description topic.

Parameters (declared on the node by ``ModelSource``; all read-only after start-up):

- ``robot_description`` (string): URDF XML. Used when non-empty.
- ``urdf_path`` (string): URDF file, used when ``robot_description`` is empty.
- neither set: subscribe to ``robot_description`` (std_msgs/String, reliable, TRANSIENT_LOCAL,
  depth 1; resolves to /robot_description in the root namespace) and rebuild the model from every
  description that arrives.
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
- ``max_description_bytes`` (integer, default 10 MiB; settable at run time): a description
  larger than this (the parameter's or file's UTF-8 bytes; on the topic, the serialized
  message: the XML plus 9 bytes) is refused with a warning, the node keeps its current model.
  On the topic the size is checked before the message is deserialized.

Descriptions arriving on the topic are built off the executor: in a worker thread (the model,
then one call of each core function the node uses, so that numba's compilation or cache loading
happens there too), while the node keeps serving with its current model; the new model is handed
to the node on the executor thread, polled by a timer that runs only while a build is under way.
Python threads share the GIL: the executor still runs between the builder's bytecodes, which is
the point (a C call that holds the GIL, such as parsing the XML, still delays it). One build at a
time: descriptions arriving meanwhile are queued, and only the newest is built next. Descriptions
given at start-up (parameter, file) are built before the node spins, in its constructor.
"""

import math
import os
import queue
import threading
import time

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from std_msgs.msg import String

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.input_guard import WarningThrottle, bounded, short_list
from robot_dynamics_ros.nodes.common import describe, float_array, string_list
from robot_dynamics_ros.payload_log import PAYLOAD_PARAMETERS, inertia_matrix

__all__ = ['build_model', 'ModelSource', 'ROBOT_DESCRIPTION_QOS', 'DEFAULT_MAX_DESCRIPTION_BYTES',
           'payload_settings', 'attach_payload']

DEFAULT_MAX_DESCRIPTION_BYTES = 10 * 1024 * 1024
_BUILD_POLL_PERIOD = 0.02       # s between checks for a finished build (only while building)

# As robot_state_publisher publishes it: late joiners get the last description.
ROBOT_DESCRIPTION_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                   durability=DurabilityPolicy.TRANSIENT_LOCAL)


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


def _looks_like_xml(text):
    return text.lstrip()[:1] == '<'


def _run_calls(calls, q, qd):
    """Call each ``f(q, qd)``; the first failure as text (warm-up never raises)."""
    for call in calls:
        try:
            call(q, qd)
        except Exception as exc:  # warm-up must never stop a node
            return f'warm-up call failed: {type(exc).__name__}: {bounded(exc, 300)}'
    return None


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
    a topic description is built. ``on_payload(model)`` (default: ``on_model(model, joint_order)``)
    is called when the payload parameters change the model of the same robot: the node swaps the
    model and keeps its state.
    """

    def __init__(self, node, on_model, warm_up=None, throttle=None, on_payload=None):
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
        self._subscription = None
        self._poll_timer = None
        self._builder = None            # the worker thread of the build under way
        self._building_xml = None       # its description
        self._next_xml = None           # the newest description that arrived meanwhile
        self._results = queue.SimpleQueue()
        node.declare_parameter('robot_description', '', describe(
            'URDF XML of the robot. Empty: use urdf_path, else the robot_description topic.',
            read_only=True))
        node.declare_parameter('urdf_path', '', describe(
            'Path of a URDF file, used when robot_description is empty.', read_only=True))
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
        node.declare_parameter('max_description_bytes', DEFAULT_MAX_DESCRIPTION_BYTES, describe(
            'Largest robot description accepted, bytes; a larger one is refused (the current '
            'model is kept).', integer=True, min_value=1, max_value=2**31 - 1))
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
        node.add_on_set_parameters_callback(self._check_payload)
        node.add_post_set_parameters_callback(self._apply_payload)
    def _param(self, name):
        return self._node.get_parameter(name).value

    def _build_settings(self):
        return dict(root_link=self._param('root_link'), tip_link=self._param('tip_link'),
                    joints=string_list('joints', self._param('joints')),
                    gravity=self._param('gravity'))

    # -- the payload ------------------------------------------------------------------------
    def _payload(self, changes=()):
        """The payload parameters (with ``changes``, rclpy Parameters, in place of theirs) as
        with_payload's arguments; ValueError naming the parameter."""
        values = {name: self._param(name) for name in PAYLOAD_PARAMETERS}
        values.update((p.name, p.value) for p in changes if p.name in values)
        return payload_settings(*(values[name] for name in PAYLOAD_PARAMETERS))

    def _check_payload(self, params):
        if not any(p.name in PAYLOAD_PARAMETERS for p in params):
            return SetParametersResult(successful=True)
        try:
            payload = self._payload(params)
            if self.base_model is not None:
                attach_payload(self.base_model, payload)
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=bounded(exc))
        return SetParametersResult(successful=True)

    def _apply_payload(self, params):
        """Checked by _check_payload: the model with the new payload goes to the node now."""
        if self.base_model is None or not any(p.name in PAYLOAD_PARAMETERS for p in params):
            return
        payload = self._payload()
        self.model = attach_payload(self.base_model, payload)
        self._node.get_logger().info(self._payload_text(payload))
        self._on_payload(self.model)

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
        return self._builder is not None

    def _too_large(self, size, origin):
        limit = int(self._param('max_description_bytes'))
        if size <= limit:
            return False
        keeps = 'keeping the current model' if self.model is not None else 'no robot model'
        self._throttle.warn('description/too_large',
                            f'robot description from the {origin} refused: {size} bytes, more '
                            f'than max_description_bytes = {limit}; {keeps}')
        return True

    def start(self):
        """Build from the parameter or file now, or subscribe to the robot_description topic."""
        description = self._param('robot_description')
        path = self._param('urdf_path')
        if description:
            if not self._too_large(len(description.encode('utf-8')), 'parameter'):
                self.load(description, 'parameter')
        elif path:
            limit = int(self._param('max_description_bytes'))
            try:
                with open(path, 'rb') as f:
                    data = f.read(limit + 1)        # never more (a device or FIFO never ends)
                if self._too_large(max(len(data), os.path.getsize(path)), 'file'):
                    return
                text = data.decode('utf-8')
            except (OSError, UnicodeDecodeError) as exc:
                self._node.get_logger().error(
                    f"cannot read urdf_path '{bounded(path, 300)}': {bounded(exc, 300)}; "
                    'running without a robot model')
                return
            self.load(text, 'file')
        else:
            self._node.get_logger().info(
                'no robot_description/urdf_path parameter: '
                'waiting for the robot_description topic')
            # steady clock: with use_sim_time, a ROS-time timer would wait for /clock
            self._poll_timer = self._node.create_timer(
                _BUILD_POLL_PERIOD, self._poll_build, clock=Clock(clock_type=ClockType.STEADY_TIME))
            self._poll_timer.cancel()
            # raw: the size is checked before rclpy converts the message
            self._subscription = self._node.create_subscription(
                String, 'robot_description', self._on_description, ROBOT_DESCRIPTION_QOS,
                raw=True)

    # -- the robot_description topic: built in a worker thread ------------------------------
    def _on_description(self, raw):
        if self._too_large(len(raw), 'topic'):
            return
        try:
            text = deserialize_message(raw, String).data
        except Exception as exc:  # a message the middleware delivered but rclpy cannot read
            self._throttle.warn('description/malformed',
                                f'unreadable robot_description message: {bounded(exc, 300)}')
            return
        if self._builder is not None:
            # the build under way finishes first; only the newest of those that arrive meanwhile
            # is built after it
            self._next_xml = None if text == self._building_xml else text
            return
        if self.urdf_xml is not None and text == self.urdf_xml:
            return  # same robot: keep the model (and the node's state)
        self._start_build(text)

    def _start_build(self, text):
        if not _looks_like_xml(text):
            self._set_failed(f'robot description from the topic is not URDF XML (starts with '
                             f'{text[:40]!r})', 'topic')
            return
        settings = self._build_settings()
        self._building_xml = text
        self._builder = threading.Thread(target=self._build_worker, args=(text, settings),
                                         name='robot_description builder', daemon=True)
        self._builder.start()
        self._poll_timer.reset()

    def _build_worker(self, text, settings):
        """Worker thread: build and warm up; the result goes to the queue, nothing else is
        touched (the node is the executor thread's; the payload is attached there, with the
        parameters in force when the build is handed over)."""
        try:
            base, joint_order = build_model(text, **settings)
            result = (text, base, joint_order, None, self._warm(base))
        except Exception as exc:  # any failure to build leaves the node running
            result = (text, None, (), f'{type(exc).__name__}: {bounded(exc, 500)}', None)
        self._results.put(result)

    def _poll_build(self):
        """Executor thread: hand over a finished build, start the next one if one is queued."""
        try:
            text, base, joint_order, error, warm_up_note = self._results.get_nowait()
        except queue.Empty:
            return
        self._builder.join()
        self._builder = self._building_xml = None
        if error is not None:
            self._set_failed(f'cannot build the robot model from the topic robot description: '
                             f'{error}', 'topic')
        else:
            self._log_warm_up(warm_up_note)
            model, payload_note = self._with_payload(base, self._payload())
            self._log_model(model, joint_order, 'topic', payload_note)
            self._set(model, joint_order, text, 'topic', base)
        following, self._next_xml = self._next_xml, None
        if following is not None and following != self.urdf_xml:
            self._start_build(following)
        if self._builder is None:
            self._poll_timer.cancel()

    # -- building ---------------------------------------------------------------------------
    def _warm(self, model):
        """Call the node's warm-up functions on ``model`` (at q = 0 clipped into the limits,
        q̇ = 0); what to log about it (text or None)."""
        if self._warm_up is None:
            return None
        start = time.monotonic()
        q = np.clip(np.zeros(model.nq), model.lower, model.upper)
        error = _run_calls(self._warm_up(model), q, np.zeros(model.nq))
        elapsed = time.monotonic() - start
        if error is None and elapsed > 5.0:     # loading from numba's cache takes milliseconds
            return (f'dynamics kernels ready after {elapsed:.1f} s: compiled, there was no compiled '
                    'copy for these sources (`python -m robot_dynamics_ros.precompile`, which the '
                    "README's set-up and colcon build run, makes nodes start at once)")
        if error is None and elapsed > 0.5:
            return f'dynamics kernels ready after {elapsed:.1f} s (compiled or loaded)'
        return error

    def load(self, urdf_xml, origin):
        """Build the model from ``urdf_xml`` now; log an error and return None on failure."""
        if not _looks_like_xml(urdf_xml):
            return self._set_failed(f'robot description from the {origin} is not URDF XML '
                                    f'(starts with {urdf_xml[:40]!r})', origin)
        try:
            base, joint_order = build_model(urdf_xml, **self._build_settings())
            model, payload_note = self._with_payload(base, self._payload())
        except Exception as exc:  # any failure to build leaves the node running
            return self._set_failed(f'cannot build the robot model from the {origin} robot '
                                    f'description: {type(exc).__name__}: {bounded(exc, 500)}',
                                    origin)
        self._log_warm_up(self._warm(model))
        self._log_model(model, joint_order, origin, payload_note)
        return self._set(model, joint_order, urdf_xml, origin, base)

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

    def _set_failed(self, message, origin):
        self._node.get_logger().error(bounded(f'{message}; running without a robot model'))
        return self._set(None, (), None, origin)

    def _set(self, model, joint_order, urdf_xml, origin, base=None):
        had_model = self.model is not None
        self.model, self.base_model, self.joint_order, self.urdf_xml, self.origin = (
            model, base, tuple(joint_order), urdf_xml, origin)
        if model is not None or had_model:
            self._on_model(model, self.joint_order)
        return model
