"""dynamics_node: feed-forward dynamics terms of the measured joint state.

On every joint state that updates a model joint, once every model joint has been heard of (see
joint_state_input: malformed or physically impossible states are dropped, messages naming no
model joint ignored), it publishes, with the header stamp copied
from the JointState that triggered it, joints in the node's joint order (``joints`` parameter, else
model order):

- ``~/gravity_torques`` (sensor_msgs/JointState, name + effort): g(q), N·m / N.
- ``~/coriolis_torques`` (sensor_msgs/JointState, name + effort): c(q, q̇) = C(q, q̇) q̇.
- ``~/mass_matrix`` (std_msgs/Float64MultiArray, n×n row-major, dims "rows"/"cols"): M(q).
- ``~/feedforward_command`` (sensor_msgs/JointState, name + effort): g(q) + c(q, q̇) as this
  hardware takes it in a command, less what its firmware adds itself (the hardware profile,
  nodes/hardware_parameters.py: τ − τ_firmware, logic/hardware.py eq. 1): equal to g + c on a full-torque arm
  ('ros2_control'), c alone on one whose firmware compensates gravity. The other outputs are the
  model's terms, whatever the hardware.
- ``~/task_space_inertia`` (std_msgs/Float64MultiArray, 6×6): Λ(q) at the tip frame
  (``tip_link`` / model.tip_frame), twist/wrench order angular first (ω, v) / (m, f),
  in the ``task_space_reference`` frame convention. Not published for a robot with several
  tips (a tree: a gripper's fingers, two arms) and no ``tip_link``: the node warns once, naming
  the tips (``robot_dynamics_ros.logic.task_frame``).

Parameters: the model parameters of model_source, and (settable at run time)
``publish_gravity``, ``publish_coriolis``, ``publish_mass_matrix``, ``publish_task_space_inertia``,
``publish_feedforward_command`` (bool, true), the hardware parameters (nodes/hardware_parameters.py:
``hardware_profile``, ``firmware_compensates``, ``measured_effort``, ...), ``task_space_reference``
('world_aligned' | 'space' | 'body'),
``task_space_damping`` (>= 0, damped-least-squares damping passed to the core); the plausibility
bounds of joint_state_input (``position_tolerance``, ``position_tolerance_prismatic``,
``velocity_limit_factor``) and ``max_description_bytes`` (model_source).

Payload: the payload parameters of model_source (``payload_mass``, ``payload_com``,
``payload_inertia``, ``payload_frame``; settable at run time) are the node's belief of what the arm
carries; every output is of the model with it.

Armature and effort offset (model_source; settable at run time): ``armature`` (double array, kg m²
or kg, one per joint in the node's joint order; [] = the model's own, zeros from a URDF): every
output is of M(q) + diag(armature) (``~/mass_matrix`` gains the diagonal, Λ changes with it).
``effort_offset`` (double array, N·m or N, same order; [] = zeros): what the effort sensors add to
the joint torque (measured effort = joint torque + effort_offset); ``~/identify_payload`` takes it
out of the logged efforts. Both as ``identify_robot`` finds them (``--params-file`` of
``identify robot``, the console script, or ``python -m robot_dynamics_ros.cli.identify robot``). A
wrong number of values, a negative or non-finite value: refused with the reason at run time; at
start-up an error, and no model.

Identification: the node keeps the joint states that carry an effort for every model joint (the
measured joint torques) of the last ``identification_window`` seconds (of their stamps; default 10)
in a ring buffer sized to the window at the rate the states come (``payload_log.StateLog``:
at most window × rate × CAPACITY_MARGIN = 2 states, grown when the rate rises, shrunk when it falls,
at most 200 000 states; 2.4 MB at most for 7 joints at 1 kHz over 10 s), so memory does not grow with
time. Service
``~/identify_payload`` (std_srvs/Trigger) estimates from them the payload at ``payload_frame``
('' = tip frame) against the model *without* a payload
(``dynamics.identify_payload_from_log``, low-pass ``identification_cutoff`` Hz, default 5): the
answer's message is one line of JSON (``payload_log.estimate_summary``: mass, com, inertia as
ixx, ixy, ixz, iyy, iyz, izz, residual_rms, condition, consistent, frame, samples, seconds, and
``reason`` when success is false: too few states, too little excitation, no rigid body). With
``apply_identified_payload`` (default false) a successful estimate is set as the node's own payload
parameters. The efforts, turned into joint torques by the hardware conventions (less
``effort_offset``; plus g(q) of the arm when ``measured_effort`` is 'gravity_compensated'), must be
the joint torques the model's dynamics explain (without friction the model does not have); the
model is the one with the armature.

Diagnostics: ``diagnostics_period`` (s, default 1; 0 = none), ``diagnostics_min_rate`` (Hz, default
0 = no check), ``diagnostics_max_age`` (s, default 0.5; 0 = no check), settable at run time:
``/diagnostics`` (diagnostic_msgs/DiagnosticArray), one status ``dynamics_node: dynamics``
(nodes/diagnostics_publisher.py: model, joint-state rate and age, drops by reason, compute time per state);
ERROR without a model, WARN when the joint states are older than ``diagnostics_max_age``, slower
than ``diagnostics_min_rate``, none yet, or some were dropped in the last period.

Nothing non-finite is published: an output with a NaN or inf is skipped with a warning.
"""

import numpy as np
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.input_guard import bounded
from robot_dynamics_ros.logic.payload_log import (
    CAPACITY_MARGIN,
    MAX_SAMPLES,
    PAYLOAD_PARAMETERS,
    StateLog,
    estimate_summary,
    identify_recent,
    payload_parameter_values,
)
from robot_dynamics_ros.logic.stamps import stamp_ns
from robot_dynamics_ros.logic.task_frame import task_frame
from robot_dynamics_ros.nodes.common import WarningThrottle, describe, parameter_validator, run_node
from robot_dynamics_ros.nodes.conversions import index_map, make_joint_state, matrix_to_multiarray
from robot_dynamics_ros.nodes.diagnostics_publisher import Details, NodeDiagnostics
from robot_dynamics_ros.nodes.hardware_parameters import HardwareParameters
from robot_dynamics_ros.nodes.joint_state_input import JointStateInput
from robot_dynamics_ros.nodes.model_source import ModelSource
from robot_dynamics_ros.nodes.serialized import SerializedMessage

__all__ = ['DynamicsNode', 'main']

TASK_SPACE_REFERENCES = ('world_aligned', 'space', 'body')
_PUBLISH_FLAGS = ('publish_gravity', 'publish_coriolis', 'publish_mass_matrix',
                  'publish_task_space_inertia', 'publish_feedforward_command')


class DynamicsNode(Node):
    """Publishes g(q), c(q, q̇), M(q) and Λ(q) for every joint state (see module docstring)."""

    def __init__(self, node_name='dynamics_node', **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = WarningThrottle(self.get_logger())
        self.model = None
        self.joint_order = ()
        self._to_order = None
        self._task_frame = None         # frame of the task-space inertia; None: none published
        for flag, what in zip(_PUBLISH_FLAGS, ('~/gravity_torques', '~/coriolis_torques',
                                               '~/mass_matrix', '~/task_space_inertia',
                                               "~/feedforward_command (g + c less the firmware's terms)")):
            self.declare_parameter(flag, True, describe(f'Publish {what}.'))
        self.declare_parameter('task_space_reference', 'world_aligned', describe(
            'Frame convention of the task-space inertia at the tip frame: world_aligned (tip '
            'origin, root-frame axes), space (root frame) or body (tip frame).',
            additional_constraints="one of 'world_aligned', 'space', 'body'"))
        self.declare_parameter('task_space_damping', 0.0, describe(
            'Damping of the task-space inertia inversion near singularities (0 = exact inverse).',
            min_value=0.0))
        self.declare_parameter('identification_window', 10.0, describe(
            'Seconds of joint states with efforts ~/identify_payload estimates the payload from (kept in '
            f'memory: at most window x state rate x {CAPACITY_MARGIN:g} states, at most {MAX_SAMPLES}).',
            min_value=0.1, max_value=3600.0))
        self.declare_parameter('identification_cutoff', 5.0, describe(
            "Low-pass cutoff of ~/identify_payload's differentiation and torque filter, Hz.",
            min_value=0.01, max_value=10000.0))
        self.declare_parameter('apply_identified_payload', False, describe(
            "~/identify_payload sets a successful estimate as this node's payload parameters."))
        self._log = StateLog(0, 10.0)
        self.add_on_set_parameters_callback(parameter_validator(self._check_parameters))
        self._settings = {}
        self._read_settings()
        self.add_post_set_parameters_callback(lambda _params: self._read_settings())

        self._pub_gravity = self.create_publisher(JointState, '~/gravity_torques', 10)
        self._pub_coriolis = self.create_publisher(JointState, '~/coriolis_torques', 10)
        self._pub_mass = self.create_publisher(Float64MultiArray, '~/mass_matrix', 10)
        self._pub_lambda = self.create_publisher(Float64MultiArray, '~/task_space_inertia', 10)
        self._pub_feedforward = self.create_publisher(JointState, '~/feedforward_command', 10)
        self._input = JointStateInput(self, self._throttle, self._on_state)
        self.create_service(Trigger, '~/identify_payload', self._on_identify_payload)
        self._source = ModelSource(self, self._on_model, warm_up=self._warm_up_calls,
                                   throttle=self._throttle, on_payload=self._on_payload,
                                   effort_offset_use='~/identify_payload subtracts it from the logged '
                                                     'efforts.')
        self._hardware = HardwareParameters(self, self._source, runtime=True)
        self._source.start()
        self._diagnostics = NodeDiagnostics(self, 'dynamics', self._throttle, self._source, self._input,
                                            self._input.compute, self._input.subscription.topic_name,
                                            details=lambda: Details(values=self._hardware.details()))

    # -- parameters -------------------------------------------------------------------------
    def _check_parameters(self, params):
        for p in params:
            if p.name == 'task_space_reference' and p.value not in TASK_SPACE_REFERENCES:
                raise ValueError(f'task_space_reference must be one of {TASK_SPACE_REFERENCES}, '
                                 f'got {bounded(repr(p.value), 200)}')
            if p.name == 'task_space_damping' and not (p.value >= 0.0 and np.isfinite(p.value)):
                raise ValueError(f'task_space_damping must be >= 0, got {p.value}')

    def _read_settings(self):
        names = _PUBLISH_FLAGS + ('task_space_reference', 'task_space_damping', 'identification_window',
                                  'identification_cutoff', 'apply_identified_payload')
        self._settings = {name: self.get_parameter(name).value for name in names}
        self._log.window = self._settings['identification_window']

    # -- model ------------------------------------------------------------------------------
    @staticmethod
    def _warm_up_calls(model):
        """The core call of a joint state, to compile it before the first one."""
        return (lambda q, qd: rd.compute_all_terms(model, q, qd, model.tip_frame, damping=1e-6),)

    def _on_model(self, model, joint_order):
        self.model = model
        self.joint_order = joint_order
        if model is None:
            self._input.reset(None)
            return
        self._task_frame, reason = task_frame(model, self.get_parameter('tip_link').value)
        if reason is not None:
            self._throttle.reset('tip_link/several_tips')
            self._throttle.once('tip_link/several_tips', f'{reason}. No ~/task_space_inertia '
                                                         'until then.')
        order = index_map(model.joint_names, joint_order)
        # what each output takes from the core's arrays: model order -> the node's joint order
        self._to_order = order
        self._mass_index = (order[:, None] * model.nq + order[None, :]).ravel()
        self._lambda_index = np.arange(36)
        # the outgoing messages, serialized once: each joint state only rewrites their numbers
        n = len(joint_order)
        self._out_gravity = SerializedMessage(make_joint_state(joint_order, effort=np.zeros(n)), 'effort',
                                              stamped=True)
        self._out_coriolis = SerializedMessage(make_joint_state(joint_order, effort=np.zeros(n)), 'effort',
                                               stamped=True)
        self._out_mass = SerializedMessage(matrix_to_multiarray(np.zeros((n, n))), 'data')
        self._out_lambda = SerializedMessage(matrix_to_multiarray(np.zeros((6, 6))), 'data')
        self._out_feedforward = SerializedMessage(make_joint_state(joint_order, effort=np.zeros(n)),
                                                  'effort', stamped=True)
        self._input.reset(model)
        self._data = rd.Data(model)      # the workspace and result arrays of this node's core calls
        self._log = StateLog(model.nq, self._settings['identification_window'])

    def _on_payload(self, model):
        """The same robot with another payload or armature (model_source): used from the next joint
        state on."""
        self.model = model
        self._data = rd.Data(model)

    # -- one joint state in: one core call, four messages out -------------------------------
    def _on_state(self, msg, state):
        q, qd = state.q, state.qd
        self._record(msg, q)
        s = self._settings
        terms = self._compute_terms(q, qd, s['publish_task_space_inertia']
                                    and self._task_frame is not None)
        if terms is None:
            return
        stamp = msg.header.stamp
        if s['publish_gravity']:
            self._out_gravity.set_stamp(stamp.sec, stamp.nanosec)
            self._publish(self._pub_gravity, self._out_gravity, 'gravity torques', terms.g, self._to_order)
        if s['publish_coriolis']:
            self._out_coriolis.set_stamp(stamp.sec, stamp.nanosec)
            self._publish(self._pub_coriolis, self._out_coriolis, 'Coriolis torques', terms.c, self._to_order)
        if s['publish_mass_matrix']:
            self._publish(self._pub_mass, self._out_mass, 'mass matrix', terms.M, self._mass_index)
        if terms.Lambda is not None:
            self._publish(self._pub_lambda, self._out_lambda, 'task-space inertia', terms.Lambda,
                          self._lambda_index)
        conventions = self._hardware.conventions()
        if s['publish_feedforward_command'] and conventions is not None:
            # g + c as this hardware takes it: less what its firmware adds itself (logic/hardware.py, eq. 1)
            feedforward = conventions.command(self._hardware.firmware_model, terms.g + terms.c, q, qd)
            self._out_feedforward.set_stamp(stamp.sec, stamp.nanosec)
            self._publish(self._pub_feedforward, self._out_feedforward, 'feed-forward command', feedforward,
                          self._to_order)

    def _compute_terms(self, q, qd, with_task_space):
        """g, c, M and (with_task_space) Λ at the tip frame from one core call; without Λ when it
        cannot be computed at this state (a throttled warning says why)."""
        model, s = self.model, self._settings
        if with_task_space:
            try:
                return rd.compute_all_terms(model, q, qd, self._task_frame,
                                            reference=s['task_space_reference'],
                                            damping=s['task_space_damping'], data=self._data)
            except (ValueError, ArithmeticError) as exc:
                self._throttle.warn('compute/task-space inertia',
                                    f'cannot compute the task-space inertia: {exc}')
        try:
            return rd.compute_all_terms(model, q, qd, data=self._data)
        except (ValueError, ArithmeticError) as exc:
            self._throttle.warn('compute/terms', f'cannot compute the dynamics terms: {exc}')
            return None

    # -- payload identification -------------------------------------------------------------
    def _record(self, msg, q):
        """Keep (t, q, τ) when the message gives every model joint a finite effort; t its stamp (the
        node's clock when unstamped); τ the joint torque, converted from the measured effort by the
        hardware conventions in force (logic/hardware.py, eqs. 2-3: less the sensors' offset, plus the
        gravity a 'gravity_compensated' measurement took out)."""
        effort = self._input.cache.message_efforts(msg)
        conventions = self._hardware.conventions()
        if effort is None or conventions is None or not conventions.efforts_are_torques:
            return
        tau = conventions.full_torque(self._hardware.firmware_model, effort, q)
        t = 1e-9 * (stamp_ns(msg.header.stamp) or self.get_clock().now().nanoseconds)   # s; unstamped: now
        self._log.append(t, q, tau)

    def _on_identify_payload(self, request, response):
        model = self._source.base_model
        if model is None:
            response.success, response.message = False, '{"reason": "no robot model yet"}'
            return response
        conventions = self._hardware.conventions()
        if conventions is not None and not conventions.efforts_are_torques:
            response.success = False
            response.message = ('{"reason": "the measured efforts are motor currents (measured_effort '
                                '\'current\'), not joint torques"}')
            return response
        frame = self.get_parameter('payload_frame').value or model.tip_frame
        estimate, reason = identify_recent(model, self._log, frame, self._settings['identification_cutoff'])
        t = self._log.recent()[0]
        seconds = t[-1] - t[0] if t.size else 0.0
        if reason is None and self._settings['apply_identified_payload']:
            values = payload_parameter_values(estimate.mass, estimate.com, estimate.inertia, frame)
            result = self.set_parameters_atomically(
                [Parameter(name, value=value) for name, value in zip(PAYLOAD_PARAMETERS, values)])
            if not result.successful:
                reason = f'estimate not applied: {result.reason}'
        response.success = reason is None
        response.message = estimate_summary(estimate, frame, t.size, seconds, reason)
        text = bounded(f'~/identify_payload: {response.message}')
        if response.success:      # (rclpy's logger wants one call site per severity)
            self.get_logger().info(text)
        else:
            self.get_logger().warning(text)
        return response

    def _publish(self, publisher, out, what, values, index):
        """Publish values.flat[index] (the node's joint order, row-major) in `out`, if all finite."""
        np.take(values, index, out=out.values)
        if not np.isfinite(out.values).all():
            self._throttle.warn(f'nonfinite/{what}',
                                f'the {what} is not finite at this joint state: not published')
            return
        publisher.publish(out.serialized())

    def destroy_node(self):
        self._source.close()        # the builder thread of topic descriptions (after its build)
        return super().destroy_node()


def main(args=None):
    run_node(DynamicsNode, args)


if __name__ == '__main__':
    main()
