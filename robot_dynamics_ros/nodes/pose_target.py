"""The pose target of the controllers that drive a frame to a pose (task_space_controller,
mpc_controller): ``~/target_pose`` validated, a desired pose that moves to it along a screw profile
(logic.pose_profile.PoseReference) and holds it, and the target's part of ``~/hold``, of a state jump
and of the /diagnostics mode; ``~/desired_pose`` (geometry_msgs/PoseStamped in the root link's frame),
published only while anybody subscribes.

A target (geometry_msgs/PoseStamped of the controlled frame in the root link's frame:
``header.frame_id`` empty or the root link) in another frame, with NaN or inf, with a zero quaternion,
or farther from the root than the frame can reach (pose_profile.reach) is refused with a throttled
warning, and the last good target stays; a finite non-unit quaternion is normalised. Parameters:
``max_linear_velocity`` (m/s, > 0) and ``max_angular_velocity`` (rad/s, > 0) of the desired pose.
"""
import math

from geometry_msgs.msg import PoseStamped

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.input_guard import BadInput, bounded
from robot_dynamics_ros.logic.pose_profile import PoseReference, reach
from robot_dynamics_ros.logic.task_frame import task_frame
from robot_dynamics_ros.nodes.common import describe
from robot_dynamics_ros.nodes.controller import stamp
from robot_dynamics_ros.nodes.conversions import pose_to_matrix, set_pose


class PoseTarget:
    """Mixin of a nodes.controller.Controller that drives ``self.frame`` to a pose: call
    ``_declare_pose_target()`` in ``__init__`` (before ``_start``), ``_check_pose_target(p)`` from
    ``_check_parameter`` and ``_set_frame(model)`` from ``_use_model``. It gives the Controller's
    reference hooks (``_reference_empty``, ``_hold``, ``_drop_reference``, ``_tracking``)."""

    REFERENCE = 'target'

    def _declare_pose_target(self):
        self.frame = None
        self._reach = 0.0
        self._controllable = False      # (Controller) until a model gives the frame
        self._reference = PoseReference()
        self.declare_parameter('max_linear_velocity', 0.1, describe(
            'Peak speed (m/s) of the desired frame origin on its way to a target.', min_value=1e-6))
        self.declare_parameter('max_angular_velocity', 0.5, describe(
            'Peak angular speed (rad/s) of the desired frame on its way to a target.', min_value=1e-6))
        self._read_speeds()
        self.create_subscription(PoseStamped, '~/target_pose', self._on_target, 10)
        self._pub_desired = self.create_publisher(PoseStamped, '~/desired_pose', 10)
        self._desired_msg = PoseStamped()

    def _publish_desired(self, now_ns, T_des):
        """The desired pose T_des (4 x 4, root link's frame) on ~/desired_pose, while subscribed."""
        if self._pub_desired.get_subscription_count():
            desired = self._desired_msg
            desired.header.stamp = stamp(now_ns)
            set_pose(desired.pose, T_des)
            self._pub_desired.publish(desired)

    def _check_pose_target(self, p):
        """Whether p is one of the target's parameters (raising ValueError when it is not acceptable)."""
        if p.name in ('max_linear_velocity', 'max_angular_velocity'):
            if not (math.isfinite(p.value) and p.value > 0.0):
                raise ValueError(f'{p.name} must be finite and > 0, got {p.value}')
            return True
        return False

    def _read_speeds(self):
        self._reference.max_linear_velocity = float(self.get_parameter('max_linear_velocity').value)
        self._reference.max_angular_velocity = float(self.get_parameter('max_angular_velocity').value)

    def _set_frame(self, model, what):
        """The controlled frame of ``model`` (tip_link, logic.task_frame) and its reach; ``what`` the
        control there is, for the error when there is none."""
        self._reference.clear()
        self._desired_msg.header.frame_id = model.root_link
        self.frame, reason = task_frame(model, self.get_parameter('tip_link').value)
        self._controllable = self.frame is not None
        if self.frame is None:
            self.get_logger().error(f'{reason}: no {what} (set tip_link); publishing the gravity torques '
                                    'only')
        self._reach = reach(model, self.frame) if self.frame is not None else 0.0

    def _on_target(self, msg):
        if self.model is None or self.frame is None:
            self._throttle.warn('target/no_model', 'target rejected: no robot model (or no tip frame) yet')
            return
        if not self.enabled:
            self._throttle.warn('target/disabled', 'target rejected: the controller is disabled (~/enable)')
            return
        frame_id = msg.header.frame_id
        if frame_id not in ('', self.model.root_link):
            self._throttle.warn('target/frame', f'target rejected: its frame_id '
                                                f'{bounded(repr(frame_id), 100)} is not the root link '
                                                f'{self.model.root_link!r} (or empty)')
            return
        try:
            T_goal = pose_to_matrix(msg.pose)
        except BadInput as exc:
            self._throttle.warn(f'target/{exc.kind}', f'target rejected: {exc}')
            return
        distance = math.hypot(*T_goal[:3, 3])
        if distance > self._reach:
            self._throttle.warn('target/reach', f'target rejected: {distance:.4g} m from the root link, '
                                                f'beyond the reach of {self.frame} ({self._reach:.3f} m '
                                                'at most)')
            return
        state = self._input.latest()
        if state is None:
            self._throttle.warn('target/no_state', 'target rejected: no complete joint state yet')
            return
        now_ns = self.get_clock().now().nanoseconds
        self._ensure_reference(state, now_ns)
        duration = self._reference.move_to(T_goal, now_ns * 1e-9)
        p = T_goal[:3, 3]
        self.get_logger().info(f'new target ({p[0]:.4f}, {p[1]:.4f}, {p[2]:.4f}) m: '
                               f'reached in {duration:.2f} s', throttle_duration_sec=1.0)

    def _reference_empty(self):
        return self._reference.empty

    def _hold(self, state, now_ns, reason=None):
        """Hold the frame's pose at the measured ``state`` from now_ns on."""
        self._reference.hold(rd.frame_pose(self.model, state.q, self.frame), now_ns * 1e-9)
        p = self._reference.goal[:3, 3]
        return f'holding the pose at ({p[0]:.4f}, {p[1]:.4f}, {p[2]:.4f}) m'

    def _drop_reference(self, reason=None):
        self._reference.clear()

    def _tracking(self):
        """For the mode on /diagnostics (Controller._mode): True while moving to a target."""
        return self._reference.moving
