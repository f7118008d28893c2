"""The viewer's overlays: the latest message of each overlay topic (``nodes/viewer.py``'s docstring says
which) drawn into the RobotScene (``logic/viewer_scene.py``) for one frame.

Frames: a message's ``header.frame_id`` is '' or the root link (identity) or a link of the robot (its
pose T_root,link in the frame being drawn); a point p given in a frame is drawn at p_root = R p + t.
"""

import numpy as np

from robot_dynamics_ros.logic import viewer_scene as vs
from robot_dynamics_ros.logic.input_guard import BadInput, bounded
from robot_dynamics_ros.nodes.contact_markers import FORCE_SCALE
from robot_dynamics_ros.nodes.conversions import pose_to_matrix

__all__ = ['FrameOverlays', 'WRENCH_TIMEOUT']

WRENCH_TIMEOUT = 0.5            # s after which a wrench arrow is hidden


class FrameOverlays:
    """The overlays of one frame, drawn into ``scene`` at wall time ``now`` (s).

    Args:
        scene: the RobotScene, posed at the frame's configuration (``scene.poses``).
        root_link: the robot's root link (the scene's world frame).
        positions: {joint: q} of the frame; moving: the names of the robot's moving joints.
        applied: the wrench topics a node subscribes to (pushes applied, not estimates).
        overlay_timeout: s after its last message an overlay is hidden (0: never).
        wrench_scale: m of arrow per N.
        warn: ``warn(key, message)``, a throttled warning.

    ``desired``: the desired configuration {joint: q} a controller_state gave (None: none).
    """

    def __init__(self, scene, root_link, positions, moving, applied, *, overlay_timeout, wrench_scale, now,
                 warn):
        self.scene, self.root_link, self.positions, self.moving = scene, root_link, positions, moving
        self.applied, self.overlay_timeout, self.wrench_scale = applied, overlay_timeout, wrench_scale
        self.now, self.warn = now, warn
        self.desired = None
        self._draw = {'controller_state': self.controller_state, 'desired_pose': self.desired_pose,
                      'predicted_path': self.predicted_path, 'external_wrench': self.external_wrench,
                      'contact': self.contact, 'contacts': self.contacts}

    def draw(self, kind, topic, msg, arrived):
        """The overlay of topic ``topic`` of ``kind`` (viewer.STREAMS) from its latest message ``msg``
        (None: unreadable), arrived at wall time ``arrived``."""
        self._draw[kind](topic, msg, arrived)

    def _recent(self, arrived):
        """An overlay's message is shown for overlay_timeout s (0: always)."""
        return self.overlay_timeout <= 0.0 or self.now - arrived <= self.overlay_timeout

    def frame_of(self, frame_id, kind, topic):
        """T_root,frame of a message's frame: '' or the root = identity, a link = its pose; None (and a
        warning) for a frame the robot lacks."""
        if not frame_id or frame_id == self.root_link:
            return np.eye(4)
        if frame_id in self.scene.poses:
            return self.scene.poses[frame_id]
        self.warn(f'{kind}/frame', f"{topic}: frame '{bounded(frame_id, 64)}' is not a link of the robot: "
                                   'not shown')
        return None

    def controller_state(self, topic, msg, arrived):
        """The desired configuration: the measured one with the reference's joints."""
        if msg is None or not self._recent(arrived):
            return
        reference = np.asarray(msg.reference.positions, dtype=np.float64)
        names = list(msg.joint_names)
        if len(reference) == len(names) and len(reference) and np.all(np.isfinite(reference)):
            self.desired = dict(self.positions)
            self.desired.update((n, float(v)) for n, v in zip(names, reference) if n in self.moving)

    def desired_pose(self, topic, msg, arrived):
        T = None
        if msg is not None and self._recent(arrived):
            frame = self.frame_of(msg.header.frame_id, 'desired_pose', topic)
            try:
                T = None if frame is None else frame @ pose_to_matrix(msg.pose)
            except BadInput as exc:
                self.warn('desired_pose/bad', f'{topic}: target not shown: {exc}')
        self.scene.set_target(topic, T)

    def predicted_path(self, topic, msg, arrived):
        points = None
        if msg is not None and self._recent(arrived) and msg.poses:
            frame = self.frame_of(msg.header.frame_id, 'predicted_path', topic)
            if frame is not None:
                p = np.array([[s.pose.position.x, s.pose.position.y, s.pose.position.z]
                              for s in msg.poses[:10000]])
                if np.all(np.isfinite(p)):
                    points = p @ frame[:3, :3].T + frame[:3, 3]            # p_root = R p_frame + t
        self.scene.set_path(topic, points)

    def external_wrench(self, topic, msg, arrived):
        """A push applied holds until its next message (the simulator applies it until then); an
        estimate is hidden WRENCH_TIMEOUT s after its last message."""
        force, T = None, None
        applied = topic in self.applied
        if msg is not None and (applied or self.now - arrived <= WRENCH_TIMEOUT):
            f = msg.wrench.force
            force = np.array([f.x, f.y, f.z])
            T = self.frame_of(msg.header.frame_id or self.scene.tip_link, 'external_wrench', topic)
        color = vs.APPLIED_WRENCH_COLOR if applied else vs.ESTIMATED_WRENCH_COLOR
        self.scene.set_wrench(topic, T, force, self.wrench_scale, color)

    def contact(self, topic, msg, arrived):
        if msg is not None:
            self.scene.set_contact(msg.data)

    def contacts(self, topic, msg, arrived):
        """The ``contact_force`` markers of a simulator's ~/contacts (nodes/contact_markers.py: the force
        f = (p1 − p0) / FORCE_SCALE at p0) as arrows with the head at the contact point, ``wrench_scale``
        m per N; hidden WRENCH_TIMEOUT s after the last message."""
        arrows = []
        if msg is not None and self.now - arrived <= WRENCH_TIMEOUT:
            for marker in msg.markers[:256]:
                if marker.ns != 'contact_force' or marker.action != marker.ADD or len(marker.points) != 2:
                    continue
                frame = self.frame_of(marker.header.frame_id, 'contacts', topic)
                p0, p1 = (np.array([p.x, p.y, p.z]) for p in marker.points)
                if frame is None or not np.all(np.isfinite(p0)) or not np.all(np.isfinite(p1)):
                    continue
                force = (p1 - p0) / FORCE_SCALE
                head = frame[:3, :3] @ p0 + frame[:3, 3]                      # p_root = R p_frame + t
                arrows.append((head - self.wrench_scale * (frame[:3, :3] @ force), head))
        self.scene.set_contact_forces(topic, arrows)
