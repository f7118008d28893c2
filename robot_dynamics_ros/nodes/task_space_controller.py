"""task_space_controller: the tool's pose under the task-space computed-torque law.

    τ = J_bᵀ (Λ_b a + η_b) + (1 − J_bᵀ J̄ᵀ)(τ₀ + c + g),   a = d/dt(V_d,b) + K_p X_e + K_d V_e

(robot_dynamics_ros.dynamics.task_space_control, in the body frame {b} of the tip frame, angular
first); the desired pose moves to each target along a screw motion with a quintic time scaling
(robot_dynamics_ros.logic.pose_profile, ROS-free); efforts saturated at the URDF effort limits.

Topics (joint vectors in the controller's joint order: ``joints`` parameter, else model order):

- in  ``joint_states`` (sensor_msgs/JointState): measured q, q̇, merged by joint name.
- in  ``~/target_pose`` (geometry_msgs/PoseStamped): where the tip frame is to go, in the root link's
  frame (``header.frame_id`` empty or the root link). A new target never makes the desired pose jump:
  it moves there from where it is (pose, twist and acceleration) within ``max_linear_velocity`` (the
  frame origin's speed) and ``max_angular_velocity``, then holds it. A target in another frame, with
  NaN or inf, with a zero quaternion, or farther from the root than the frame can reach
  (pose_profile.reach: the chain's link lengths) is refused with a throttled warning, and the last
  good target stays; a finite non-unit quaternion is normalised.
- out ``effort_controller/commands`` (std_msgs/Float64MultiArray): τ, for ros2_control's
  JointGroupEffortController (or simulator_node), as computed_torque_controller.
- out ``~/pose_error`` (geometry_msgs/TwistStamped): X_e = log(T⁻¹ T_des), the twist that takes the
  tip frame to the desired pose in unit time, in the tip frame (``header.frame_id``): angular in
  rad, linear in m (robot_dynamics_ros.dynamics.pose_error).
- out ``~/desired_pose`` (geometry_msgs/PoseStamped): the current point of the profile, in the root
  link's frame.
  These two are published with every command while anybody subscribes to them.

Services:

- ``~/enable`` (std_srvs/SetBool). Disabled, the target is discarded and the controller publishes the
  gravity torque g(q) for every joint state (the arm floats where it is and can be guided by hand);
  targets are refused. Enabled again: the pose at the next joint state is held.
- ``~/hold`` (std_srvs/Trigger): discard the target, hold the measured pose of the tip frame.

With no target the controller holds the pose of the first complete joint state. When any joint's
state is older than ``state_timeout``: the gravity-only holding torque g(q) of the last state and a
warning; when states resume, the pose at that moment is held. A joint state that does not continue
the previous one (``max_state_jump``): the pose of that state is held. Where the law cannot be
computed (a singular Jacobian with ``damping`` = 0, fewer than six joints moving the frame), the
controller publishes g(q) and warns, naming the cause.

Parameters: the model parameters of model_source (``tip_link`` picks the controlled frame; a tree with
several tips needs it), plus, settable at run time and validated:

- ``armature``, ``effort_offset`` (model_source's, settable at run time): as every controller uses
  them (nodes/controller.py).
- ``kp`` (1/s²), ``kd`` (1/s): 1 value, 2 = [rotation, translation] or 6 (angular first), each >= 0.
- ``nullspace_kp`` (1/s²; 1 or n values, >= 0; 0 = no posture), ``nullspace_kd`` (1/s; empty =
  2√nullspace_kp), ``nullspace_posture`` (rad / m, n values; empty = the first measured position):
  the posture held in the null space of a redundant arm (it changes no task acceleration).
- ``max_linear_velocity`` (m/s, > 0), ``max_angular_velocity`` (rad/s, > 0): of the desired pose.
- ``damping`` (>= 0): added to J M⁻¹ Jᵀ before it is inverted (task_space_inertia).
- ``control_rate`` (Hz; 0 = one command per joint state), ``state_timeout`` (s, 0 = off),
  ``start_enabled`` (read-only), ``max_state_jump`` / ``max_state_jump_prismatic``, and the
  plausibility bounds of joint_state_input.
- ``diagnostics_period`` (s, default 1; 0 = none), ``diagnostics_min_rate`` (Hz, default 0 = no
  check): ``/diagnostics`` (diagnostic_msgs/DiagnosticArray), one status
  ``task_space_controller: control`` (nodes/diagnostics_publisher.py: model, joint-state rate and age,
  drops by reason, compute time, and ``mode``: disabled, holding, tracking or stale-hold); ERROR without a
  model or when the joint states are older than ``state_timeout``.
"""

import math

import numpy as np
from geometry_msgs.msg import TwistStamped

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.input_guard import bounded
from robot_dynamics_ros.nodes.common import (
    describe,
    float_array,
    gain_vector,
    run_node,
)
from robot_dynamics_ros.nodes.controller import COMPUTE_ERRORS, Controller, stamp
from robot_dynamics_ros.nodes.pose_target import PoseTarget

__all__ = ['TaskSpaceController', 'main', 'task_gains']


def task_gains(name, value):
    """A task-space gain parameter as 6 values, angular first: 1 value (all six), 2 ([rotation,
    translation]) or 6; each >= 0. ValueError naming the parameter otherwise."""
    gains = gain_vector(name, value)
    if gains.size == 2:
        return np.repeat(gains, 3)
    if gains.size not in (1, 6):
        raise ValueError(f"parameter '{name}' must have 1, 2 ([rotation, translation]) or 6 entries "
                         f'(angular first), got {gains.size}')
    return np.broadcast_to(gains, (6,)).copy()


def _empty(value):
    """An empty array parameter (rclpy types an empty default [] as a byte array)."""
    return isinstance(value, (list, tuple, bytes)) and len(value) == 0


class TaskSpaceController(PoseTarget, Controller):
    """Task-space computed-torque controller of the tip frame's pose (module docstring)."""

    def __init__(self, node_name='task_space_controller', **kwargs):
        super().__init__(node_name, 'pose', **kwargs)
        # self._gains (Controller): the law's keyword arguments while the parameters fit, else None
        self._posture = None            # nullspace_posture in model order, None when empty
        self._first_q = None            # the first measured position (the posture by default)
        self.declare_parameter('kp', [100.0], describe(
            'Pose gains K_p (1/s^2): 1 value, 2 = [rotation, translation], or 6 (angular first).',
            dynamic_typing=True, additional_constraints='1, 2 or 6 numbers, each >= 0'))
        self.declare_parameter('kd', [20.0], describe(
            'Twist gains K_d (1/s): 1 value, 2 = [rotation, translation], or 6 (angular first).',
            dynamic_typing=True, additional_constraints='1, 2 or 6 numbers, each >= 0'))
        self.declare_parameter('nullspace_kp', [0.0], describe(
            'Posture gain in the null space (1/s^2): 1 value or one per joint; 0 = no posture.',
            dynamic_typing=True, additional_constraints='1 or n numbers, each >= 0'))
        self.declare_parameter('nullspace_kd', [], describe(
            'Posture damping in the null space (1/s): empty = 2 sqrt(nullspace_kp), else 1 or n values.',
            dynamic_typing=True, additional_constraints='empty, or 1 or n numbers, each >= 0'))
        self.declare_parameter('nullspace_posture', [], describe(
            'The posture q0 held in the null space (rad / m, one per joint in the controller\'s joint '
            'order); empty = the first measured position.',
            dynamic_typing=True, additional_constraints='empty or n numbers'))
        self.declare_parameter('damping', 0.0, describe(
            'Added to J M^-1 J^T before it is inverted (0 = exact law; > 0 near singularities or with '
            'fewer than six joints).', min_value=0.0))
        self._declare_pose_target()
        self._pub_error = self.create_publisher(TwistStamped, '~/pose_error', 10)
        self._error_msg = TwistStamped()
        self._start('drops the target and holds the pose of the new state')

    # -- parameters -------------------------------------------------------------------------
    def _check_parameter(self, p):
        if p.name in ('kp', 'kd'):
            task_gains(p.name, p.value)
        elif p.name == 'nullspace_kp' or (p.name == 'nullspace_kd' and not _empty(p.value)):
            gain_vector(p.name, p.value, self._n())
        elif p.name == 'nullspace_posture':
            posture = np.zeros(0) if _empty(p.value) else float_array(p.name, p.value)
            if posture.size and self.model is not None and posture.size != self.model.nq:
                raise ValueError(f"parameter 'nullspace_posture' must be empty or have "
                                 f'{self.model.nq} entries, got {posture.size}')
        elif self._check_pose_target(p):
            pass
        elif p.name == 'damping':
            if not (math.isfinite(p.value) and p.value >= 0.0):
                raise ValueError(f'damping must be finite and >= 0, got {p.value}')
        else:
            super()._check_parameter(p)

    def _apply_parameters(self, params):
        names = {p.name for p in params}
        if names & {'kp', 'kd', 'nullspace_kp', 'nullspace_kd', 'nullspace_posture', 'damping'}:
            self._update_gains()
        if names & {'max_linear_velocity', 'max_angular_velocity'}:
            self._read_speeds()
        self._apply_timing(names)

    def _update_gains(self):
        """The law's gains and posture in model order; None (and an error) when they do not fit."""
        self._gains = None
        if self.model is None:
            return
        n = self.model.nq
        get = self.get_parameter
        try:
            kp, kd = task_gains('kp', get('kp').value), task_gains('kd', get('kd').value)
            kp0 = gain_vector('nullspace_kp', get('nullspace_kp').value, n)[self._to_model]
            kd_value = get('nullspace_kd').value
            kd0 = (2.0 * np.sqrt(kp0) if _empty(kd_value)
                   else gain_vector('nullspace_kd', kd_value, n)[self._to_model])
            posture = get('nullspace_posture').value
            posture = np.zeros(0) if _empty(posture) else float_array('nullspace_posture', posture)
            if posture.size not in (0, n):
                raise ValueError(f"parameter 'nullspace_posture' must be empty or have {n} entries")
        except ValueError as exc:
            self.get_logger().error(bounded(f'{exc}: no commands until the gains are set correctly'))
            return
        # (6 x 6 gain matrices go to the kernel as they are)
        law = dict(kp=np.diag(kp), kd=np.diag(kd), damping=float(get('damping').value))
        if kp0.any() or kd0.any():
            law.update(nullspace_kp=kp0, nullspace_kd=kd0)
        self._posture = posture[self._to_model] if posture.size else None
        self._gains = law

    # -- model ------------------------------------------------------------------------------
    @staticmethod
    def _warm_up_calls(model):
        """The core calls of a control step, to compile them before the first one."""
        def law(q, qd):
            T = rd.frame_pose(model, q)
            rd.pose_error(model, q, T)
            return rd.task_space_control(model, q, qd, T, damping=1e-3, nullspace_q=q, nullspace_kp=1.0)
        return law, lambda q, qd: rd.gravity_torques(model, q)

    def _use_model(self, model):
        self._first_q = None
        if model is None:
            self._reference.clear()
            self.frame, self._controllable = None, False
            return
        self._set_frame(model, 'task-space control')
        self._error_msg.header.frame_id = self.frame or ''
        self._update_gains()

    # -- control ----------------------------------------------------------------------------
    def _control(self, state, now_ns):
        """The task-space law toward the profile's pose at now_ns from the measured ``state`` (after
        Controller._step's opening); the two diagnostic outputs."""
        q, qd = state.q, state.qd
        T_des, V_des, Vdot_des = self._reference.sample(now_ns * 1e-9)
        if self._first_q is None:
            self._first_q = q.copy()
        law = self._gains
        if 'nullspace_kp' in law:
            law = dict(law, nullspace_q=self._first_q if self._posture is None else self._posture)
        try:
            tau = rd.task_space_control(self.model, q, qd, T_des, V_des, Vdot_des, frame=self.frame, **law)
        except COMPUTE_ERRORS as exc:
            self._throttle.warn('compute/law', f'cannot compute the task-space law ({exc}): publishing '
                                               'the gravity torques')
            self._publish_gravity(state)
            return
        if not self._command.publish(tau, q, qd):
            return
        # the two diagnostic outputs only while someone listens (a publish's cost: doc/performance.md,
        # section "Nodes")
        if self._pub_error.get_subscription_count():
            try:
                X_e = rd.pose_error(self.model, q, T_des, self.frame)
            except COMPUTE_ERRORS as exc:       # (what task_space_control computed, it computes)
                self._throttle.warn('compute/pose_error', f'cannot compute the pose error: {exc}')
                return
            msg = self._error_msg
            msg.header.stamp = stamp(now_ns)
            a, v = msg.twist.angular, msg.twist.linear
            a.x, a.y, a.z, v.x, v.y, v.z = X_e.tolist()
            self._pub_error.publish(msg)
        self._publish_desired(now_ns, T_des)

def main(args=None):
    run_node(TaskSpaceController, args)


if __name__ == '__main__':
    main()
