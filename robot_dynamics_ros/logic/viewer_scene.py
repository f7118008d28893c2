"""The viewer's 3D scene, ROS-free: a robot's links as meshes in a viser scene, posed from its joint
positions, with the overlays the viewer node draws (targets, paths, trails, wrenches, contact, payload)
and a markdown panel. ``nodes/viewer.py`` moves messages in and out; everything drawn is decided here.

Frames and units: the scene's world frame is the URDF's root link frame (z up, as viser's default), SI
units. A pose is a (4, 4) homogeneous transform T_root,frame; viser takes its translation and its
rotation as a unit quaternion (w, x, y, z) (``dynamics.spatial.rotation_quaternion``). Each link is
one scene node ``/robot/<link>`` whose pose is T_root,link = ``KinematicTree.link_poses(q)[link]``;
its geometry is children of that node, placed in the link frame (a <visual>'s <origin>).

What each link shows, and the generated body of a URDF without geometry: ``logic/robot_body.py``.
"""
from __future__ import annotations

import numpy as np

from robot_dynamics_ros.dynamics.spatial import rotation_quaternion
from robot_dynamics_ros.logic.robot_body import default_tip

__all__ = ['Trail', 'RobotScene', 'DiagnosticsBoard', 'camera_placement', 'wrench_arrow', 'LEVEL_NAMES']

ACTUAL_COLOR = (40, 110, 220)                # the tool's path
DESIRED_COLOR = (30, 170, 80)                # the desired tool pose and its path
PREDICTED_COLOR = (170, 60, 200)             # the MPC's plan
ESTIMATED_WRENCH_COLOR = (255, 120, 0)       # the estimator's wrench
APPLIED_WRENCH_COLOR = (220, 30, 60)         # a push applied in the simulator
CONTACT_FORCE_COLOR = (250, 200, 0)          # the forces of a simulator's contacts (MuJoCo)
TIP_COLOR, CONTACT_COLOR = (90, 90, 100), (230, 20, 20)
PAYLOAD_COLOR = (120, 60, 200)
LEVEL_NAMES = {0: 'OK', 1: 'WARN', 2: 'ERROR', 3: 'STALE'}


def camera_placement(points):
    """(camera position, look-at point) that frames ``points`` (N, 3) in the root frame: looking at
    the middle of their bounding box from the front-right and above, 1.9 times its size away."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    low, high = points.min(axis=0), points.max(axis=0)
    centre = 0.5 * (low + high)
    size = max(float(np.linalg.norm(high - low)), 0.5)
    direction = np.array([0.55, -1.0, 0.55])
    return centre + 1.9 * size * direction / np.linalg.norm(direction), centre


def wrench_arrow(T_root_tip, force, scale, min_force=1e-3):
    """The arrow of a force ``force`` (3,) N given in the tip frame's coordinates, acting at the tip
    frame's origin: (start, end) (2, 3) in the root frame with the head at the tip and the shaft
    along f, of length scale·|f| m (``scale`` m/N); None when |f| < min_force.

    >>> wrench_arrow(np.eye(4), np.array([0.0, 0.0, -20.0]), 0.01).tolist()
    [[0.0, 0.0, 0.2], [0.0, 0.0, 0.0]]
    """
    force = np.asarray(force, dtype=np.float64)
    if not np.all(np.isfinite(force)) or np.linalg.norm(force) < min_force:
        return None
    tip = T_root_tip[:3, 3]
    f_root = T_root_tip[:3, :3] @ force                   # f in the root frame = R_root,tip f_tip
    return np.stack([tip - scale * f_root, tip])


# -- trails and the diagnostics panel --------------------------------------------------------------
class Trail:
    """The last ``seconds`` of a point's positions (a ring of at most ``capacity`` samples).

    >>> trail = Trail(1.0, 4)
    >>> for t in range(6):
    ...     trail.add(0.5 * t, np.array([t, 0.0, 0.0]))
    >>> trail.points(2.5)[:, 0].tolist()
    [3.0, 4.0, 5.0]
    """

    def __init__(self, seconds, capacity):
        self.seconds = float(seconds)
        self.capacity = max(int(capacity), 2)
        self._t = np.full(self.capacity, -np.inf)
        self._p = np.zeros((self.capacity, 3))
        self._next = 0
        self._count = 0

    def clear(self):
        self._t[:] = -np.inf
        self._next = self._count = 0

    def add(self, t, point):
        self._t[self._next] = t
        self._p[self._next] = point
        self._next = (self._next + 1) % self.capacity
        self._count = min(self._count + 1, self.capacity)

    def points(self, now):
        """The samples of the last ``seconds`` before ``now``, oldest first, (k, 3)."""
        order = (np.arange(self._count) + self._next - self._count) % self.capacity
        keep = order[self._t[order] >= now - self.seconds]
        return self._p[keep]

    def segments(self, now):
        """``points`` as consecutive line segments (k - 1, 2, 3), or None with fewer than 2."""
        p = self.points(now)
        if len(p) < 2:
            return None
        return np.stack([p[:-1], p[1:]], axis=1)


class DiagnosticsBoard:
    """The /diagnostics statuses seen (at most ``max_entries``, the oldest forgotten) as a markdown
    table: name, level (a status not renewed for ``stale_after`` s reads STALE), message, and a rate
    when one of its values says one (a key with 'rate (Hz)'); with the nodes that are up.

    >>> board = DiagnosticsBoard()
    >>> board.update('sim: simulation', 0, 'OK', [('input rate (Hz)', '999.8')], now=0.0)
    >>> print(board.markdown(['/sim'], now=1.0))
    **Nodes up (1):** /sim
    <BLANKLINE>
    | status | level | rate (Hz) | message |
    |---|---|---|---|
    | sim: simulation | OK | 999.8 | OK |
    """

    def __init__(self, stale_after=3.0, max_entries=64):
        self.stale_after = stale_after
        self.max_entries = max_entries
        self._entries = {}              # name -> (level, message, rate, time)

    def update(self, name, level, message, values, now):
        rate = next((v for k, v in values if 'rate (Hz)' in k), '')
        self._entries.pop(name, None)
        self._entries[name] = (int(level), message, rate, now)
        while len(self._entries) > self.max_entries:
            del self._entries[next(iter(self._entries))]

    @staticmethod
    def _cell(text, limit=80):
        text = str(text).replace('|', '/').replace('\n', ' ')
        return text if len(text) <= limit else text[:limit - 1] + '…'

    def markdown(self, nodes_up, now):
        nodes = sorted(nodes_up)
        shown = ', '.join(self._cell(n, 60) for n in nodes[:30]) + (' …' if len(nodes) > 30 else '')
        lines = [f'**Nodes up ({len(nodes)}):** {shown or "none"}', '']
        if not self._entries:
            return '\n'.join(lines + ['No /diagnostics yet.'])
        lines += ['| status | level | rate (Hz) | message |', '|---|---|---|---|']
        for name in sorted(self._entries):
            level, message, rate, t = self._entries[name]
            level_name = 'STALE' if now - t > self.stale_after else LEVEL_NAMES.get(level, str(level))
            lines.append(f'| {self._cell(name, 60)} | {level_name} | {self._cell(rate, 12)} | '
                         f'{self._cell(message)} |')
        return '\n'.join(lines)


# -- the scene -----------------------------------------------------------------------------------
def _hide(handle):
    """Hide a scene node (no message when it is hidden already or None)."""
    if handle is not None and handle.visible:
        handle.visible = False


def _name(text):
    return str(text).replace('/', '_') or '_'


class RobotScene:
    """A robot and its overlays in a viser server's scene (module docstring).

    Args:
        server: a viser.ViserServer (only its ``scene`` and ``gui`` are used).
        tree: dynamics.kinematic_tree.KinematicTree. parts: {link: [Part]} (``robot_parts``).
        tip_link: the tool link (trails, the desired tool pose; default ``default_tip``).
        trail_seconds: how long the tool paths are (s). frame_rate: renders per second (the trails'
            capacity).

    ``pose(positions)`` poses the links ({independent joint: q}; missing joints at 0) and returns the
    link poses; the overlay methods show or hide one thing each; ``remove()`` clears it all.
    """

    def __init__(self, server, tree, parts, tip_link=None, trail_seconds=5.0, frame_rate=30.0):
        self.server = server
        self.tree = tree
        self.tip_link = tip_link or default_tip(tree)
        scene = server.scene
        self._handles = []              # removed by remove() (a link's meshes go with its frame)
        self.meshes = []
        self.links = {}
        for name in tree.links:
            handle = scene.add_frame(f'/robot/{_name(name)}', show_axes=False)
            self.links[name] = handle
            self._handles.append(handle)
            for k, part in enumerate(parts.get(name, ())):
                mesh = part.mesh
                self.meshes.append(scene.add_mesh_simple(
                    f'/robot/{_name(name)}/{part.role}_{k}', np.asarray(mesh.vertices, dtype=np.float32),
                    np.asarray(mesh.faces, dtype=np.uint32), color=part.color, opacity=part.opacity,
                    flat_shading=False, cast_shadow=False, receive_shadow=False))
        capacity = int(trail_seconds * max(frame_rate, 1.0) * 1.5) + 8
        self.actual_trail = Trail(trail_seconds, capacity)
        self.desired_trail = Trail(trail_seconds, capacity)
        self._trail_handles = {}
        self._overlays = {}
        self.tip = self._add(scene.add_icosphere('/overlay/tip', radius=0.018, color=TIP_COLOR))
        self.desired_tool = self._add(scene.add_frame('/overlay/desired_tool', axes_length=0.1,
                                                      axes_radius=0.006, visible=False))
        self.payload = self._add(scene.add_icosphere('/overlay/payload', radius=0.03, color=PAYLOAD_COLOR,
                                                     visible=False))
        self.contact = False
        self.poses = None

    def _add(self, handle):
        self._handles.append(handle)
        return handle

    def remove(self):
        for handle in self._handles + list(self._trail_handles.values()) + list(self._overlays.values()):
            try:
                handle.remove()
            except Exception:  # already gone (a server stopped)
                pass
        self._handles, self.meshes, self._trail_handles, self._overlays = [], [], {}, {}

    # -- the robot --------------------------------------------------------------------------
    def pose(self, positions, now=None):
        """Pose every link at ``positions`` and move the tip marker; add the tool to its trail at
        ``now`` (s) when given. Returns {link: T_root,link}."""
        poses = self.tree.link_poses(positions)
        for name, handle in self.links.items():
            T = poses[name]
            handle.position = T[:3, 3]
            handle.wxyz = rotation_quaternion(T)
        tip = poses[self.tip_link][:3, 3]
        self.tip.position = tip
        if now is not None:
            self.actual_trail.add(now, tip)
        self.poses = poses
        return poses

    def set_contact(self, in_contact):
        """The tip marker red while in contact."""
        if bool(in_contact) != self.contact:
            self.contact = bool(in_contact)
            self.tip.color = CONTACT_COLOR if self.contact else TIP_COLOR
            self.tip.radius = 0.026 if self.contact else 0.018

    # -- overlays ---------------------------------------------------------------------------
    def set_desired(self, positions, now):
        """The desired configuration (``positions``, {joint: q}, or None = hide): its tool frame,
        and its tool position added to the desired trail."""
        if positions is None:
            _hide(self.desired_tool)
            return
        T = self.tree.link_poses(positions)[self.tip_link]
        self.desired_tool.position = T[:3, 3]
        self.desired_tool.wxyz = rotation_quaternion(T)
        self.desired_tool.visible = True
        self.desired_trail.add(now, T[:3, 3])

    def draw_trails(self, now):
        """Redraw the actual (blue) and desired (green) tool paths of the last trail_seconds."""
        for key, trail, color in (('actual', self.actual_trail, ACTUAL_COLOR),
                                  ('desired', self.desired_trail, DESIRED_COLOR)):
            self._set_lines(self._trail_handles, f'/overlay/trail_{key}', trail.segments(now), color,
                            0.006)

    def _set_lines(self, store, name, segments, color, thickness):
        handle = store.get(name)
        if segments is None:
            _hide(handle)
            return
        segments = np.asarray(segments, dtype=np.float32)
        if handle is None:
            store[name] = self.server.scene.add_line_segments(name, segments, color, thickness=thickness)
        else:
            handle.points = segments
            handle.visible = True

    def set_target(self, key, T):
        """A target frame (axes) ``key`` at T_root,target (4, 4), or hidden (None)."""
        name = f'/overlay/target_{_name(key)}'
        handle = self._overlays.get(name)
        if T is None:
            _hide(handle)
            return
        if handle is None:
            handle = self._overlays[name] = self.server.scene.add_frame(name, axes_length=0.12,
                                                                        axes_radius=0.005)
        handle.position = T[:3, 3]
        handle.wxyz = rotation_quaternion(T)
        handle.visible = True

    def set_path(self, key, points):
        """A path ``key`` through ``points`` (k, 3) in the root frame (the MPC's plan), or hidden."""
        segments = None
        if points is not None and len(points) >= 2:
            points = np.asarray(points, dtype=np.float64)
            segments = np.stack([points[:-1], points[1:]], axis=1)
        self._set_lines(self._overlays, f'/overlay/path_{_name(key)}', segments, PREDICTED_COLOR, 0.008)

    def set_wrench(self, key, T, force, scale, color):
        """The arrow of force ``force`` (3,) N acting at the origin of the frame T_root,frame (4, 4),
        in that frame's coordinates (``wrench_arrow``), or hidden (``force`` or T None)."""
        name = f'/overlay/wrench_{_name(key)}'
        handle = self._overlays.get(name)
        points = None if force is None or T is None else wrench_arrow(T, force, scale)
        if points is None:
            _hide(handle)
            return
        points = points[None].astype(np.float32)
        if handle is None:
            thick = color == ESTIMATED_WRENCH_COLOR         # the estimate drawn around the push applied
            handle = self._overlays[name] = self.server.scene.add_arrows(
                name, points, color, shaft_radius=0.014 if thick else 0.007,
                head_radius=0.034 if thick else 0.02, head_length=0.07 if thick else 0.05)
        else:
            handle.points = points
            handle.visible = True

    def set_contact_forces(self, key, arrows):
        """The contact forces ``key``: arrows (k, 2, 3), (start, end) in the root frame with the head at
        each contact point, or hidden (None or k = 0)."""
        name = f'/overlay/contacts_{_name(key)}'
        handle = self._overlays.get(name)
        if arrows is None or len(arrows) == 0:
            _hide(handle)
            return
        arrows = np.asarray(arrows, dtype=np.float32)
        if handle is not None and handle.points.shape != arrows.shape:     # another number of contacts
            handle.remove()
            handle = None
        if handle is None:
            handle = self._overlays[name] = self.server.scene.add_arrows(
                name, arrows, CONTACT_FORCE_COLOR, shaft_radius=0.006, head_radius=0.016, head_length=0.04)
        else:
            handle.points = arrows
            handle.visible = True

    def wrench_visible(self, key):
        handle = self._overlays.get(f'/overlay/wrench_{_name(key)}')
        return handle is not None and handle.visible

    def set_payload(self, frame, com, mass):
        """A sphere at the payload's centre of mass (``com`` (3,) in ``frame``), sized by ``mass``
        (kg); hidden when mass <= 0 or the frame is not a link of the robot."""
        if mass <= 0.0 or self.poses is None or frame not in self.poses:
            _hide(self.payload)
            return
        T = self.poses[frame]
        self.payload.position = T[:3, :3] @ np.asarray(com, dtype=np.float64) + T[:3, 3]
        self.payload.radius = min(max(0.03 * mass ** (1.0 / 3.0), 0.015), 0.08)
        self.payload.visible = True
