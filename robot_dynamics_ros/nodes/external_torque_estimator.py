"""external_torque_estimator: contact sensing from the joint states, without a force sensor.

A generalized-momentum observer (robot_dynamics_ros.dynamics.MomentumObserver; the logic in
robot_dynamics_ros.logic.contact_estimation) estimates the external joint torques τ_ext, defined by
M q̈ + c + g (+ friction) = τ + τ_ext, from each joint state's position, velocity and effort.

- in  ``joint_states`` (sensor_msgs/JointState): position, velocity and **effort = the measured
  joint torque** in the hardware's convention (simulator_node publishes the effort it applied there,
  plus its ``effort_offset``; the node turns it into the joint torque first, see ``measured_effort``
  below), merged by
  joint name as in the other nodes (joint_state_input). A state without efforts for every model joint: a
  throttled warning, nothing published. dt comes from the header stamps (the receive time for an
  unstamped state); a stamp going backwards, a gap longer than ``state_timeout``, or a state that
  does not continue the previous one (``max_state_jump``) starts the observer again at that state.
- out ``~/external_torques`` (sensor_msgs/JointState): names + effort = τ̂_ext (N·m / N), the stamp
  of the input state, joints in the node's joint order.
- out ``~/external_wrench`` (geometry_msgs/WrenchStamped): the wrench ON the robot at the tip frame
  (``tip_link`` / model.tip_frame), in that frame's coordinates, ``header.frame_id`` = the frame: the
  convention of simulator_node's ``~/external_wrench`` input, so that a wrench applied in
  simulation comes back unchanged. Least squares of Jᵀ F = τ̂_ext (minimum norm where fewer than six
  joints move the frame). Not published for a tree with several tips and no ``tip_link``, and not
  computed while nobody subscribes to it.
- out ``~/contact`` (std_msgs/Bool, reliable, transient local): published when the model is ready
  and whenever it changes; true while any |τ̂_ext,i| exceeds ``contact_threshold``.
- service ``~/zero`` (std_srvs/Trigger): tare: the current estimate becomes the zero (model errors
  at rest), as with a force–torque sensor.

Parameters (settable at run time, validated): ``observer_gain`` (1/s; 1 or n values, each > 0;
default 50: τ_ext seen through 50/(s + 50), a 20 ms time constant), ``contact_threshold`` (N·m; 1 or
n values, each >= 0; default 5), ``friction`` (bool, default false: the URDF's damping and friction
taken out of the measured effort), ``state_timeout`` (s > 0, default 0.5), ``max_state_jump`` (rad,
>= 0, default 0.2; 0 = never) and ``max_state_jump_prismatic`` (m, default 0.05); the model
parameters of model_source, among them (settable at run time, validated: a wrong number of values, a
negative or non-finite value is refused with the reason; at start-up an error, and no model):

- ``effort_offset`` (double array, N·m or N, one per joint in the node's joint order; [] = zeros):
  the constant offset the effort sensors add (measured effort = joint torque + effort_offset, the
  ``offset`` ``identify_robot`` finds): subtracted from every measured effort before the observer.
  Without it an offset reads as an external torque of −effort_offset.
- the hardware parameters (nodes/hardware_parameters.py, settable at run time): ``hardware_profile``,
  ``measured_effort``, ``effort_scale`` (and the firmware's, unused here): the measured efforts are
  turned into the full joint torque before the observer, τ = effort_scale (effort − effort_offset)
  (+ g(q) of the arm without its payload when they are 'gravity_compensated'), so that an arm whose
  firmware reports them without gravity shows no phantom torque.
- ``armature`` (double array, kg m² or kg, same order; [] = the model's own): the observer's model
  has M(q) + diag(armature) (its momentum p = M q̇ includes the rotors');

the plausibility bounds of joint_state_input.

Diagnostics: ``diagnostics_period`` (s, default 1; 0 = none), ``diagnostics_min_rate`` (Hz, default
0 = no check), ``diagnostics_max_age`` (s, default 0.5; 0 = no check), settable at run time:
``/diagnostics`` (diagnostic_msgs/DiagnosticArray), one status ``external_torque_estimator:
estimation`` (nodes/diagnostics_publisher.py: model, joint-state rate and age, drops by reason, compute time
per state, and ``contact``, ``external torque norm (N m)`` = |τ̂_ext|, ``observer restarts (since
start)``); ERROR without a model (or with gains that do not fit it), WARN when the joint states are
older than ``diagnostics_max_age``, slower than ``diagnostics_min_rate``, none yet, or some were
dropped in the last period.

Nothing non-finite is published.
"""

import math

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.contact_estimation import ContactEstimation
from robot_dynamics_ros.logic.diagnostics import ERROR, number
from robot_dynamics_ros.logic.stamps import stamp_ns
from robot_dynamics_ros.logic.task_frame import task_frame
from robot_dynamics_ros.nodes.common import (
    LATCHED_QOS,
    WarningThrottle,
    describe,
    float_array,
    gain_vector,
    parameter_validator,
    run_node,
)
from robot_dynamics_ros.nodes.conversions import index_map, make_joint_state, set_wrench
from robot_dynamics_ros.nodes.diagnostics_publisher import Details, NodeDiagnostics
from robot_dynamics_ros.nodes.hardware_parameters import HardwareParameters
from robot_dynamics_ros.nodes.joint_state_input import JointStateInput
from robot_dynamics_ros.nodes.model_source import ModelSource
from robot_dynamics_ros.nodes.serialized import SerializedMessage

__all__ = ['ExternalTorqueEstimator', 'main']

_PER_JOINT = ('observer_gain', 'contact_threshold')


class ExternalTorqueEstimator(Node):
    """Publishes τ̂_ext, the tip wrench and the contact flag for every joint state (module docstring)."""

    def __init__(self, node_name='external_torque_estimator', **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = WarningThrottle(self.get_logger())
        self.model = None
        self.joint_order = ()
        self._estimation = None
        self._contact = None
        self.declare_parameter('observer_gain', 50.0, describe(
            'Observer gain K (1/s): the estimate follows the external torque through K/(s + K). '
            'One value for every joint, or one per joint (model order).',
            dynamic_typing=True, additional_constraints='1 or n numbers, each > 0'))
        self.declare_parameter('contact_threshold', 5.0, describe(
            '|external torque| (N·m or N) above which ~/contact is true; 1 or n values.',
            dynamic_typing=True, additional_constraints='1 or n numbers, each >= 0'))
        self.declare_parameter('friction', False, describe(
            "Take the URDF's joint damping and friction out of the measured effort."))
        self.declare_parameter('state_timeout', 0.5, describe(
            's between two states (by their stamps) beyond which the observer starts again.',
            min_value=1e-6))
        self.add_on_set_parameters_callback(parameter_validator(self._check_parameters))
        self.add_post_set_parameters_callback(self._apply_parameters)

        self._pub_torques = self.create_publisher(JointState, '~/external_torques', 10)
        self._pub_wrench = self.create_publisher(WrenchStamped, '~/external_wrench', 10)
        self._pub_contact = self.create_publisher(Bool, '~/contact', LATCHED_QOS)
        self.create_service(Trigger, '~/zero', self._on_zero)
        self._input = JointStateInput(self, self._throttle, self._on_state,
                                      state_jumps=(0.2, 0.05, 'starts the observer again'),
                                      on_discontinuity=self._on_discontinuity, track_effort=True)
        self._source = ModelSource(self, self._on_model, warm_up=self._warm_up_calls,
                                   throttle=self._throttle,
                                   effort_offset_use='Subtracted from the measured efforts before the '
                                                     'observer.')
        self._hardware = HardwareParameters(self, self._source, runtime=True)
        self._source.start()
        self._diagnostics = NodeDiagnostics(self, 'estimation', self._throttle, self._source, self._input,
                                            self._input.compute, self._input.subscription.topic_name,
                                            details=self._diagnostic_details)

    # -- parameters -------------------------------------------------------------------------
    def _check_parameters(self, params):
        n = None if self.model is None else self.model.nq
        for p in params:
            if p.name in _PER_JOINT:
                values = gain_vector(p.name, p.value, n)            # 1 or n values, each >= 0
                if n is None and values.size != 1:
                    raise ValueError(f"parameter '{p.name}' must have 1 value until the model is "
                                     f'known, got {values.size}')
                if p.name == 'observer_gain' and np.any(values == 0.0):
                    raise ValueError("parameter 'observer_gain' must be > 0")
            elif p.name == 'state_timeout' and not (math.isfinite(p.value) and p.value > 0.0):
                raise ValueError(f'state_timeout must be > 0, got {p.value}')

    def _apply_parameters(self, params):
        names = {p.name for p in params}
        if self._estimation is not None:
            e = self._estimation
            if 'observer_gain' in names:
                e.gain = float_array('observer_gain', self.get_parameter('observer_gain').value)
            if 'contact_threshold' in names:
                e.threshold = float_array('contact_threshold', self.get_parameter('contact_threshold').value)
            if 'friction' in names:
                e.friction = self.get_parameter('friction').value
            if 'state_timeout' in names:
                e.state_timeout = self.get_parameter('state_timeout').value

    # -- model ------------------------------------------------------------------------------
    @staticmethod
    def _warm_up_calls(model):
        """The core calls of a joint state, to compile or load them before the first one."""
        def observe(q, qd):
            observer = rd.MomentumObserver(model, 50.0)
            observer.update(q, qd, qd, 1e-3)
            observer.update(q, qd, qd, 1e-3)
        return (observe, lambda q, qd: rd.external_wrench(model, q, qd))

    def _on_model(self, model, joint_order):
        self.model = model
        self.joint_order = joint_order
        self._estimation = None
        if model is None:
            self._input.reset(None)
            return
        frame, reason = task_frame(model, self.get_parameter('tip_link').value)
        if reason is not None:
            self._throttle.reset('tip_link/several_tips')
            self._throttle.once('tip_link/several_tips', f'{reason}. No ~/external_wrench until then.')
        get = self.get_parameter
        try:
            self._estimation = ContactEstimation(
                model, float_array('observer_gain', get('observer_gain').value),
                float_array('contact_threshold', get('contact_threshold').value), get('friction').value,
                get('state_timeout').value, frame)
        except ValueError as exc:       # 1 value per joint of another robot: set them again
            self._throttle.warn('parameters/model', f'cannot estimate for this model: {exc}')
            self._input.reset(None)
            return
        self._to_order = index_map(model.joint_names, joint_order)
        # serialized once: each state only rewrites the numbers and the stamp (nodes/serialized.py)
        self._torques_out = SerializedMessage(make_joint_state(joint_order, effort=np.zeros(model.nq)),
                                              'effort', stamped=True)
        self._wrench_msg = WrenchStamped()
        self._wrench_msg.header.frame_id = frame or ''
        self._input.reset(model)
        self._set_contact(False)

    # -- one joint state in ---------------------------------------------------------------------
    def _on_state(self, msg, state):
        e = self._estimation
        if e is None:
            return
        if len(msg.effort) == 0:
            self._throttle.warn('joint_states/no_effort', 'joint states without effort (the measured '
                                'joint torques): no estimate')
            return
        tau = self._input.cache.efforts()
        if tau is None:
            self._throttle.warn('joint_states/no_effort', 'no effort received yet for some joints: no '
                                'estimate until every joint has one')
            return
        conventions = self._hardware.conventions()
        if conventions is None or not conventions.efforts_are_torques:
            why = self._hardware.error if conventions is None else 'the measured efforts are motor currents'
            self._throttle.warn('hardware', f'no estimate: {why}')
            return
        q, qd = state.q, state.qd
        # the joint torque: the measured effort less the sensors' offset, plus what the firmware's
        # gravity compensation took out of it (logic/hardware.py, eqs. 2-3)
        tau = conventions.full_torque(self._hardware.firmware_model, tau, q)
        stamp = msg.header.stamp
        time_ns = stamp_ns(stamp) or state.stamp_ns      # (no stamp: when it was received)
        try:
            # the wrench (a least-squares solve) only when someone subscribes to it
            estimate = e.update(q, qd, tau, time_ns, self._pub_wrench.get_subscription_count() > 0)
        except ValueError as exc:
            self._throttle.warn('estimate/state', f'cannot estimate at this state: {exc}')
            return
        if estimate is None:
            return
        if estimate.restarted is not None and estimate.restarted != 'first state':
            self._throttle.warn('estimate/restart', f'observer started again: {estimate.restarted}')
        out = self._torques_out
        np.take(estimate.tau_ext, self._to_order, out=out.values)
        if not np.isfinite(out.values).all():
            self._throttle.warn('nonfinite/estimate', 'the estimate is not finite: not published')
            return
        out.set_stamp(stamp.sec, stamp.nanosec)
        self._pub_torques.publish(out.serialized())
        if estimate.wrench is not None and np.isfinite(estimate.wrench).all():
            w = self._wrench_msg
            w.header.stamp = stamp
            set_wrench(w.wrench, estimate.wrench)
            self._pub_wrench.publish(w)
        self._set_contact(estimate.contact)

    def _set_contact(self, contact):
        if contact != self._contact:
            self._contact = contact
            self._pub_contact.publish(Bool(data=contact))

    def _on_discontinuity(self, description, _state):
        if self._estimation is not None:
            self._estimation.restart(description)

    def _diagnostic_details(self):
        """The estimator's part of its /diagnostics status: the contact flag, |τ̂_ext| of the last
        estimate published, the observer's restarts."""
        norm = None
        if self._estimation is not None and self._contact is not None:
            values = self._torques_out.values      # (the last estimate; finite when published)
            norm = float(np.linalg.norm(values)) if np.isfinite(values).all() else None
        problems = ()
        if self.model is not None and self._estimation is None:
            problems = ((ERROR, 'no estimate: observer_gain or contact_threshold do not fit the model'),)
        elif self.model is not None and self._hardware.conventions() is None:
            problems = ((ERROR, f'no estimate: {self._hardware.error}'),)
        elif self.model is not None and not self._hardware.conventions().efforts_are_torques:
            problems = ((ERROR, "no estimate: the measured efforts are motor currents (measured_effort "
                                "'current'), not joint torques"),)
        contact = 'unknown' if self._contact is None else str(self._contact).lower()
        return Details(values=(('contact', contact), ('external torque norm (N m)', number(norm, 3)),
                               ('observer restarts (since start)',
                                str(self._throttle.counts.get('estimate/restart', 0))),
                               *self._hardware.details()),
                       summary=f'contact: {contact}', problems=problems)

    # -- services ---------------------------------------------------------------------------
    def _on_zero(self, request, response):
        if self._estimation is not None and self._estimation.zero():
            response.success = True
            response.message = 'the current estimate is the zero from now on'
        else:
            response.success = False
            response.message = 'no estimate yet (no model, or no joint state with efforts)'
        return response

    def destroy_node(self):
        self._source.close()        # the builder thread of topic descriptions (after its build)
        return super().destroy_node()


def main(args=None):
    run_node(ExternalTorqueEstimator, args)


if __name__ == '__main__':
    main()
