"""The ``joint_states`` subscription shared by dynamics_node and computed_torque_controller.

Subscribes to ``joint_states`` (sensor_msgs/JointState; /joint_states in the root namespace),
merges messages by joint name into a ``JointStateCache`` in model order, and calls
``on_state(msg, state)`` after every message that updates a model joint, once every model joint has been
heard of: ``state`` is the ``MeasuredState`` (q, q̇ in model order, the node-clock time it was received)
that message completed, the state everything the node computes for it is computed from. Callbacks not
triggered by a joint state (a timer, a service) take the newest one from ``latest()``. While a joint
is missing it warns (throttled) naming the missing joints.

What is not a new state (no output, no control step; warnings throttled per kind of problem):

- a malformed message (field lengths that do not match the names, a model joint named twice or
  with a non-finite position or velocity): dropped with a warning;
- a physically impossible one: a position beyond the URDF limits by more than
  ``position_tolerance`` (revolute, rad) / ``position_tolerance_prismatic`` (m) (continuous
  joints: |q| >= 1e6), or a velocity beyond ``velocity_limit_factor`` × the URDF velocity limit
  (|q̇| >= 1e6 for joints without one): dropped with a warning naming the joint, the value and
  the bound. Such a state never reaches the nodes, so it never becomes a hold target;
- a message naming none of the model's joints: ignored, with a warning;
- an empty message (no names), or one without positions and velocities: ignored silently (counted
  under 'joint_states/empty' on /diagnostics, as every drop is under its warning's key).

Joints the model does not track (a gripper's) are ignored entirely: their values, NaN or not,
do not matter.

With ``track_effort`` the cache also merges the efforts (``cache.efforts()``; a tracked joint's
non-finite effort drops the message). With ``state_jumps`` = (revolute default, prismatic default,
what the node then does), the node gets the parameters ``max_state_jump`` (rad) and
``max_state_jump_prismatic`` (m) (>= 0; 0 = never), and a complete state that does not continue the
previous one (its stamp goes backwards, a joint jumps: ``input_guard.StateContinuity``) calls
``on_discontinuity(description, state)`` before ``on_state(msg, state)``.

For /diagnostics (nodes/diagnostics_publisher.py): ``received`` (states accepted: they updated a model joint),
``age()`` (s since the least recently updated joint's last state, node clock; None before any),
``problems()`` (the joints never heard of) and ``compute`` (robot_dynamics_ros.logic.diagnostics.ComputeTimes:
the time from a message's arrival to the end of its callback, the node's outputs included).

Parameters (declared on the node; settable at run time, >= 0):

- ``position_tolerance`` (rad, default 0.1), ``position_tolerance_prismatic`` (m, 0.01).
- ``velocity_limit_factor`` (default 10; 0 = no per-joint bound, only |q̇| < 1e6).
"""

import math
from typing import NamedTuple

import numpy as np
from sensor_msgs.msg import JointState

from robot_dynamics_ros.logic.diagnostics import WARN, ComputeTimes
from robot_dynamics_ros.logic.input_guard import BadInput, StateContinuity, StateLimits, short_list
from robot_dynamics_ros.nodes.common import describe, parameter_validator
from robot_dynamics_ros.nodes.conversions import JointStateCache

__all__ = ['JointStateInput', 'MeasuredState', 'JUMP_PARAMETERS', 'TOLERANCE_PARAMETERS']

# parameter name -> StateLimits argument
TOLERANCE_PARAMETERS = {'position_tolerance': 'position_tolerance',
                        'position_tolerance_prismatic': 'prismatic_tolerance',
                        'velocity_limit_factor': 'velocity_factor'}
JUMP_PARAMETERS = ('max_state_jump', 'max_state_jump_prismatic')


class MeasuredState(NamedTuple):
    """A complete joint state: q (rad / m) and q̇ (rad/s / m/s), (n,) copies in model order, and
    ``stamp_ns``, the node-clock time (ns) the message that completed it was received."""
    q: np.ndarray
    qd: np.ndarray
    stamp_ns: int


class JointStateInput:
    def __init__(self, node, throttle, on_state=None, topic='joint_states', qos=10,
                 state_jumps=None, on_discontinuity=None, track_effort=False):
        self._node = node
        self._throttle = throttle
        self._on_state = on_state
        self._jumps = state_jumps is not None
        self._on_discontinuity = on_discontinuity
        self._track_effort = track_effort
        self.cache = None
        self.last_msg = None
        self.last_ns = 0          # node-clock time at which last_msg was received
        self.received = 0         # states accepted since start
        self.compute = ComputeTimes()
        node.declare_parameter('position_tolerance', 0.1, describe(
            'rad a revolute joint may be measured beyond its URDF position limits; a state '
            'further out is dropped as impossible.', min_value=0.0))
        node.declare_parameter('position_tolerance_prismatic', 0.01, describe(
            'm a prismatic joint may be measured beyond its URDF position limits.',
            min_value=0.0))
        node.declare_parameter('velocity_limit_factor', 10.0, describe(
            'A measured |velocity| above this times the URDF velocity limit is dropped as a '
            'sensor error (0 = no per-joint bound: only |velocity| < 1e6).', min_value=0.0))
        if state_jumps is not None:
            revolute, prismatic, consequence = state_jumps
            node.declare_parameter('max_state_jump', revolute, describe(
                'rad a revolute joint may move between consecutive joint states beyond what its '
                f'velocity explains; more (or a stamp going backwards) {consequence} (0 = never).',
                min_value=0.0))
            node.declare_parameter('max_state_jump_prismatic', prismatic, describe(
                'm a prismatic joint may move between consecutive joint states beyond what its '
                'velocity explains (0 = never).', min_value=0.0))
        node.add_on_set_parameters_callback(parameter_validator(self._check_parameters))
        node.add_post_set_parameters_callback(self._apply_parameters)
        self._model = None
        self.subscription = node.create_subscription(JointState, topic, self.compute.timed(self._on_msg),
                                                     qos)

    # -- parameters -------------------------------------------------------------------------
    @staticmethod
    def _check_parameters(params):
        for p in params:
            if (p.name in TOLERANCE_PARAMETERS or p.name in JUMP_PARAMETERS) \
                    and not (math.isfinite(p.value) and p.value >= 0.0):
                raise ValueError(f'{p.name} must be finite and >= 0, got {p.value}')

    def _apply_parameters(self, params):
        if self.cache is not None and any(p.name in TOLERANCE_PARAMETERS for p in params):
            self.cache.limits = self._limits(self._model)
        if any(p.name in JUMP_PARAMETERS for p in params):
            self.refresh_continuity()

    def _limits(self, model):
        values = {arg: float(self._node.get_parameter(name).value)
                  for name, arg in TOLERANCE_PARAMETERS.items()}
        return StateLimits.from_model(model, **values)

    # -- model and messages -----------------------------------------------------------------
    def reset(self, model):
        """Track the joints of ``model`` (model order), forgetting all heard so far; None = no
        model."""
        self._model = model
        self.cache = (JointStateCache(model.joint_names, self._limits(model), self._track_effort)
                      if model is not None and model.nq else None)
        self.last_msg = None
        self.refresh_continuity()

    def refresh_continuity(self):
        """(Re)build the continuity check from the node's current settings (no previous state)."""
        if self.cache is not None and self._jumps:
            revolute = float(self._node.get_parameter('max_state_jump').value)
            prismatic = float(self._node.get_parameter('max_state_jump_prismatic').value)
            self.cache.continuity = StateContinuity(
                self._model.joint_names,
                [prismatic if t == 'prismatic' else revolute for t in self._model.joint_types])

    def now_ns(self):
        return self._node.get_clock().now().nanoseconds

    def _on_msg(self, msg):
        if self.cache is None:
            self._throttle.warn('joint_states/no_model',
                                'joint states received but there is no robot model yet: ignored')
            return
        now_ns = self.now_ns()
        try:
            merged = self.cache.update(msg, now_ns)
        except BadInput as exc:
            self._throttle.warn(f'joint_states/{exc.kind}', f'dropping a JointState message: {exc}')
            return
        if not merged.updated:
            if merged.ignored:
                self._throttle.warn('joint_states/unknown', (
                    f'ignoring a JointState that names none of the joints '
                    f'{short_list(self.cache.joint_names)} (it names {merged.ignored} others)'))
            else:
                self._throttle.count('joint_states/empty')
            return
        self.last_msg = msg
        self.last_ns = now_ns
        self.received += 1
        if not self.check_complete():
            return
        state = MeasuredState(*self.cache.arrays(), now_ns)
        if merged.discontinuity is not None and self._on_discontinuity is not None:
            self._on_discontinuity(merged.discontinuity, state)
        if self._on_state is not None:
            self._on_state(msg, state)

    def latest(self):
        """The newest complete state (MeasuredState, stamped when its last message arrived), or None
        while some joint was never heard of: for what a timer or a service computes."""
        if not self.complete:
            return None
        return MeasuredState(*self.cache.arrays(), self.last_ns)

    def age(self):
        """Seconds (node clock) since the least recently updated joint's last state (of the last
        state while some joint was never heard of); None before the first state."""
        if self.cache is None or self.last_msg is None:
            return None
        since_ns = self.cache.oldest_update_ns() if self.cache.complete else self.last_ns
        return (self.now_ns() - since_ns) * 1e-9

    def problems(self):
        """(level, text) for /diagnostics: the joints never heard of, once some state came."""
        if self.cache is None or self.cache.complete or self.last_msg is None:
            return ()
        return ((WARN, f'no state yet for joints {short_list(self.cache.missing(), 4)}: no output'),)

    @property
    def complete(self):
        return self.cache is not None and self.cache.complete

    def check_complete(self):
        """True when every model joint has been heard of; otherwise warn (throttled) and False."""
        if self.cache is None:
            return False
        if self.cache.complete:
            return True
        self._throttle.warn('joint_states/missing',
                            f'no joint state received yet for joints {short_list(self.cache.missing())}: '
                            'no output until every joint of the model has been heard of')
        return False
