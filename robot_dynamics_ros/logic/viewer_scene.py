"""The viewer's 3D scene, ROS-free: a robot's links as meshes in a viser scene, posed from its joint
positions, with the overlays the viewer node draws (targets, paths, trails, wrenches, contact, payload)
and a markdown panel. ``nodes/viewer.py`` moves messages in and out; everything drawn is decided here.

Frames and units: the scene's world frame is the URDF's root link frame (z up, as viser's default), SI
units. A pose is a (4, 4) homogeneous transform T_root,frame; viser takes its translation and its
rotation as a unit quaternion (w, x, y, z) (``quaternion_wxyz``). Each link is one scene node
``/robot/<link>`` whose pose is T_root,link = ``KinematicTree.link_poses(q)[link]``; its geometry is
children of that node, placed in the link frame (a <visual>'s <origin>).

What a link shows (``robot_parts``):

- its URDF <visual> geometry: box, cylinder (along z), sphere, or a mesh file (STL, OBJ, and DAE when
  pycollada is installed; loaded by trimesh, ``scale`` applied) whose name is resolved by
  ``resolve_mesh``; the <material> colour, else light grey;
- a link whose visual cannot be loaded (a mesh not found or unreadable): a warning naming the file,
  and the link shows its <collision> geometry instead when that loads, else its generated body;
- with ``show_collisions`` also its <collision> geometry, translucent orange;
- a URDF without any <visual> (urdf/ur5e.urdf is kinematics and dynamics only): every link shows a
  body made from the kinematics and inertias (``generated_body``), so the arm is always visible.

The generated body of a link (``generated_body``): for every child joint a capsule from the link
frame's origin to that joint's origin (a leaf link with its centre of mass away from the origin: to
twice the centre of mass), of radius

    r = clamp(sqrt(2 dᵀ I d / m), 0.02, 0.08) m

(a solid cylinder's I_axial = m r² / 2, with d the capsule's unit direction and I the link's inertia
about its centre of mass), or r = clamp(0.04 (m / 3.5 kg)^(1/3), 0.02, 0.08) m without an inertia,
0.02 m for a massless link; a drum (cylinder along the joint axis, radius 1.15 r, length 2.4 r) at
each moving joint; a sphere at the centre of mass of radius 0.012 (m / 1 kg)^(1/3) m; a flat disc
under the root link.

Package names (``resolve_mesh``): ``package://pkg/rel`` is looked up, in this order, in the
``package_paths`` folders, then the ament index (``ament_index_python``, when importable and it knows
``pkg``), then the ``ROS_PACKAGE_PATH`` folders; in a folder ``F`` the file is ``F/pkg/rel``, or
``F/rel`` when ``F`` is the package itself (its last name is ``pkg``). ``file:///abs`` is a path; a
relative name is relative to the URDF file's folder (``base_dir``; the current folder without one).
``MeshNotFound`` says every place tried.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ['MeshNotFound', 'Part', 'Trail', 'RobotScene', 'DiagnosticsBoard', 'quaternion_wxyz',
           'resolve_mesh', 'geometry_mesh', 'generated_body', 'robot_parts', 'default_tip',
           'link_radius', 'camera_placement', 'wrench_arrow', 'LEVEL_NAMES']

MIN_RADIUS, MAX_RADIUS = 0.02, 0.08         # m: the generated body's capsules
BODY_COLOR = (196, 202, 210)                 # the generated body: light grey links ...
JOINT_COLOR = (52, 120, 196)                 # ... and blue joint drums (a UR's colours)
COM_COLOR = (236, 176, 32)
VISUAL_COLOR = (190, 190, 196)               # a <visual> without a material
COLLISION_COLOR = (255, 140, 40)
ACTUAL_COLOR = (40, 110, 220)                # the tool's path
DESIRED_COLOR = (30, 170, 80)                # the desired tool pose and its path
PREDICTED_COLOR = (170, 60, 200)             # the MPC's plan
ESTIMATED_WRENCH_COLOR = (255, 120, 0)       # the estimator's wrench
APPLIED_WRENCH_COLOR = (220, 30, 60)         # a push applied in the simulator
TIP_COLOR, CONTACT_COLOR = (90, 90, 100), (230, 20, 20)
PAYLOAD_COLOR = (120, 60, 200)
LEVEL_NAMES = {0: 'OK', 1: 'WARN', 2: 'ERROR', 3: 'STALE'}


class MeshNotFound(LookupError):
    """A mesh file name that resolves to no file (the message lists the places tried)."""


@dataclass(frozen=True)
class Part:
    """One piece of a link's geometry: ``mesh`` (trimesh.Trimesh in the link frame), ``color`` (r, g,
    b) 0-255, ``opacity`` (None = opaque), ``role`` ('visual', 'collision', 'capsule', 'sphere',
    'joint', 'com', 'base')."""

    mesh: object
    color: tuple
    opacity: float = None
    role: str = 'visual'


def quaternion_wxyz(R):
    """The unit quaternion (w, x, y, z) of a rotation matrix R (3, 3), w >= 0 (Shepperd's method).

    >>> quaternion_wxyz(np.eye(3)).tolist()
    [1.0, 0.0, 0.0, 0.0]
    >>> np.round(quaternion_wxyz(np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])), 6).tolist()
    [0.707107, 0.0, 0.0, 0.707107]
    """
    R = np.asarray(R, dtype=np.float64)
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    if trace > 0.0:
        s = 2.0 * math.sqrt(1.0 + trace)
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s])
    else:
        k = int(np.argmax(np.diag(R)))
        i, j = (k + 1) % 3, (k + 2) % 3
        s = 2.0 * math.sqrt(max(1.0 + R[k, k] - R[i, i] - R[j, j], 1e-300))
        q = np.empty(4)
        q[0] = (R[j, i] - R[i, j]) / s
        q[1 + k] = 0.25 * s
        q[1 + i] = (R[i, k] + R[k, i]) / s
        q[1 + j] = (R[j, k] + R[k, j]) / s
    q /= np.linalg.norm(q)
    return -q if q[0] < 0.0 else q


# -- mesh files ----------------------------------------------------------------------------------
def _ament_share(package):
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:
        return None
    try:
        return get_package_share_directory(package)
    except Exception:  # PackageNotFoundError, or an ament prefix path that is not there
        return None


def _in_folder(folder, package, rel):
    folder = Path(folder)
    candidates = [folder / package / rel]
    if folder.name == package:
        candidates.append(folder / rel)
    return candidates


def resolve_mesh(filename, package_paths=(), base_dir=None, environ=None, ament=_ament_share):
    """The file a URDF mesh ``filename`` names (module docstring: the order of the places searched);
    MeshNotFound otherwise. ``environ`` (default os.environ) gives ROS_PACKAGE_PATH; ``ament``
    (package -> share folder or None) the ament index."""
    environ = os.environ if environ is None else environ
    tried = []

    def found(paths):
        for path in paths:
            tried.append(str(path))
            if path.is_file():
                return path
        return None

    if filename.startswith('package://'):
        package, _, rel = filename[len('package://'):].partition('/')
        if not package or not rel:
            raise MeshNotFound(f'mesh {filename!r}: not package://<package>/<path>')
        for folder in package_paths:
            hit = found(_in_folder(folder, package, rel))
            if hit:
                return hit
        share = ament(package) if ament is not None else None
        if share:
            hit = found([Path(share) / rel])
            if hit:
                return hit
        for folder in (environ.get('ROS_PACKAGE_PATH') or '').split(os.pathsep):
            if folder:
                hit = found(_in_folder(folder, package, rel))
                if hit:
                    return hit
        raise MeshNotFound(f'mesh {filename!r} not found (package {package!r}; tried '
                           f'{", ".join(tried[:6]) or "no folder: set package_paths"}'
                           f'{"" if len(tried) <= 6 else f" and {len(tried) - 6} more"})')
    path = Path(filename[len('file://'):] if filename.startswith('file://') else filename)
    if not path.is_absolute():
        path = Path(base_dir or '.') / path
    hit = found([path])
    if hit:
        return hit
    raise MeshNotFound(f'mesh {filename!r} not found (tried {path})')


def geometry_mesh(geometry, resolve=resolve_mesh):
    """A kinematic_tree.Geometry as a trimesh.Trimesh in its link's frame (its origin and scale
    applied). ``resolve(filename)`` -> path of a mesh file. MeshNotFound, or ValueError for a file
    trimesh cannot read or that holds no triangles."""
    import trimesh

    shape = geometry.shape
    if shape == 'box':
        mesh = trimesh.creation.box(extents=np.asarray(geometry.size, dtype=np.float64))
    elif shape == 'cylinder':
        mesh = trimesh.creation.cylinder(radius=float(geometry.radius), height=float(geometry.length),
                                         sections=32)
    elif shape == 'sphere':
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=float(geometry.radius))
    elif shape == 'mesh':
        path = resolve(geometry.filename)
        try:
            loaded = trimesh.load(str(path), force='mesh')
        except Exception as exc:      # trimesh raises many kinds (a DAE without pycollada: ImportError)
            raise ValueError(f'mesh {geometry.filename!r} ({path}) cannot be read: '
                             f'{type(exc).__name__}: {exc}') from None
        if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
            raise ValueError(f'mesh {geometry.filename!r} ({path}) has no triangles trimesh can read'
                             f'{" (DAE needs pycollada)" if str(path).lower().endswith(".dae") else ""}')
        mesh = loaded.copy()
        scale = np.asarray(geometry.scale if geometry.scale is not None else (1.0, 1.0, 1.0), dtype=float)
        if not np.allclose(scale, 1.0):
            mesh.apply_transform(np.diag([*scale, 1.0]))
    else:
        raise ValueError(f'unknown geometry shape {shape!r}')
    mesh.apply_transform(np.asarray(geometry.origin, dtype=np.float64))
    return mesh


# -- the generated body --------------------------------------------------------------------------
def link_radius(link, direction=None):
    """The generated capsule radius of ``link`` (m) along the unit ``direction`` (module docstring)."""
    m = float(link.mass)
    if m <= 0.0:
        return MIN_RADIUS
    if direction is not None and np.any(link.inertia):
        d = np.asarray(direction, dtype=np.float64)
        r = math.sqrt(max(2.0 * float(d @ link.inertia @ d) / m, 0.0))
    else:
        r = 0.04 * (m / 3.5) ** (1.0 / 3.0)
    return min(max(r, MIN_RADIUS), MAX_RADIUS)


def _segment_transform(start, end):
    """T that puts a z-axis shape centred at the origin on the segment start -> end."""
    d = end - start
    z = d / np.linalg.norm(d)
    T = np.eye(4)
    T[:3, :3] = _rotation_z_to(z)
    T[:3, 3] = 0.5 * (start + end)
    return T


def _rotation_z_to(z):
    """A rotation taking the z axis to the unit vector z (Rodrigues about z_axis × z)."""
    axis = np.cross([0.0, 0.0, 1.0], z)
    s, c = np.linalg.norm(axis), float(z[2])
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    k = axis / s
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def generated_body(tree):
    """{link: [Part]}: the body made from the kinematics and inertias (module docstring)."""
    import trimesh

    children = {name: [] for name in tree.links}
    parent_joint = {}
    for joint in tree.joints:
        children[joint.parent].append(joint)
        parent_joint[joint.child] = joint
    parts = {name: [] for name in tree.links}
    radius_of = {}
    for name, link in tree.links.items():
        ends = [j.origin[:3, 3].astype(np.float64) for j in children[name]]
        ends = [e for e in ends if np.linalg.norm(e) > 1e-4]
        if not ends and not children[name] and link.mass > 0.0 and np.linalg.norm(link.com) > 1e-3:
            ends = [2.0 * np.asarray(link.com, dtype=np.float64)]
        radii = []
        for end in ends:
            length = float(np.linalg.norm(end))
            r = link_radius(link, end / length)
            radii.append(r)
            if link.mass <= 0.0 and name == tree.root_link:
                continue                    # the root's offsets: the disc below stands for them
            capsule = trimesh.creation.capsule(height=length, radius=r, count=[16, 16])
            capsule.apply_transform(_segment_transform(np.zeros(3), end))
            parts[name].append(Part(capsule, BODY_COLOR, role='capsule'))
        radius_of[name] = max(radii) if radii else link_radius(link)
        if link.mass > 0.0:
            sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.012 * link.mass ** (1.0 / 3.0))
            sphere.apply_translation(np.asarray(link.com, dtype=np.float64))
            parts[name].append(Part(sphere, COM_COLOR, role='com'))
        if not ends and link.mass > 0.0 and name != tree.root_link:
            ball = trimesh.creation.icosphere(subdivisions=2, radius=link_radius(link))
            parts[name].append(Part(ball, BODY_COLOR, role='sphere'))
    for name, joint in parent_joint.items():
        if joint.moves and joint.type != 'prismatic':
            r = 1.15 * radius_of.get(name, MIN_RADIUS)
            drum = trimesh.creation.cylinder(radius=r, height=2.4 * r / 1.15, sections=32)
            T = np.eye(4)
            T[:3, :3] = _rotation_z_to(np.asarray(joint.axis, dtype=np.float64))
            drum.apply_transform(T)
            parts[name].append(Part(drum, JOINT_COLOR, role='joint'))
    first = children[tree.root_link]
    r0 = max([radius_of.get(j.child, MIN_RADIUS) for j in first] or [MIN_RADIUS])
    disc = trimesh.creation.cylinder(radius=1.6 * r0, height=0.02, sections=48)
    disc.apply_translation([0.0, 0.0, -0.01])
    parts[tree.root_link].append(Part(disc, (110, 115, 125), role='base'))
    return parts


def robot_parts(tree, resolve=resolve_mesh, show_collisions=False, warn=None):
    """{link: [Part]} of what each link shows (module docstring); ``warn(text)`` is told of every
    mesh that cannot be used and what the link shows instead."""
    warn = warn or (lambda text: None)
    has_visuals = any(link.visuals for link in tree.links.values())
    generated = None
    parts = {}

    def load(geometries, color, opacity, role):
        loaded = []
        for g in geometries:
            mesh = geometry_mesh(g, resolve)
            rgb = color if g.rgba is None or role == 'collision' else tuple(
                int(round(255 * min(max(c, 0.0), 1.0))) for c in g.rgba[:3])
            alpha = opacity if g.rgba is None or role == 'collision' else (
                None if g.rgba[3] >= 1.0 else float(g.rgba[3]))
            loaded.append(Part(mesh, rgb, alpha, role))
        return loaded

    for name, link in tree.links.items():
        if not has_visuals:
            generated = generated or generated_body(tree)
            parts[name] = list(generated[name])
        else:
            try:
                parts[name] = load(link.visuals, VISUAL_COLOR, None, 'visual')
            except (MeshNotFound, ValueError) as exc:
                instead = 'its generated body'
                try:
                    parts[name] = load(link.collisions, VISUAL_COLOR, None, 'visual')
                    if not link.collisions:
                        raise ValueError('no collision geometry')
                    instead = 'its collision geometry'
                except (MeshNotFound, ValueError):
                    generated = generated or generated_body(tree)
                    parts[name] = list(generated[name])
                warn(f'link {name!r}: {exc}; showing {instead}')
        if show_collisions and link.collisions:
            try:
                parts[name] += load(link.collisions, COLLISION_COLOR, 0.45, 'collision')
            except (MeshNotFound, ValueError) as exc:
                warn(f'link {name!r} collision: {exc}; not shown')
    return parts


def default_tip(tree):
    """The tool link: the leaf link deepest below the root (ties: the first in the URDF's order)."""
    depth = {tree.root_link: 0}
    best, best_depth = tree.root_link, 0
    parents = {j.parent for j in tree.joints}
    for joint in tree.joints:
        depth[joint.child] = depth[joint.parent] + 1
        if joint.child not in parents and depth[joint.child] > best_depth:
            best, best_depth = joint.child, depth[joint.child]
    return best


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
            handle.wxyz = quaternion_wxyz(T[:3, :3])
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
        self.desired_tool.wxyz = quaternion_wxyz(T[:3, :3])
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
        handle.wxyz = quaternion_wxyz(T[:3, :3])
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
