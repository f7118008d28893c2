"""A robot's body for the viewer, ROS-free: each link's meshes (URDF visuals and collisions, or a body
generated from the kinematics and inertias for a URDF without geometry), and where a URDF's mesh
files are (``resolve_mesh``). ``logic/viewer_scene.py`` puts them in the scene.

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
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robot_dynamics_ros.dynamics.spatial import skew

__all__ = ['MeshNotFound', 'Part', 'resolve_mesh', 'read_mesh', 'geometry_mesh', 'generated_body',
           'robot_parts', 'default_tip', 'link_radius', 'MIN_RADIUS', 'MAX_RADIUS']

MIN_RADIUS, MAX_RADIUS = 0.02, 0.08         # m: the generated body's capsules
BODY_COLOR = (196, 202, 210)                 # the generated body: light grey links ...
JOINT_COLOR = (52, 120, 196)                 # ... and blue joint drums (a UR's colours)
COM_COLOR = (236, 176, 32)
BASE_COLOR = (110, 115, 125)
VISUAL_COLOR = (190, 190, 196)               # a <visual> without a material
COLLISION_COLOR = (255, 140, 40)


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


def read_mesh(path, filename=None):
    """The triangles of the mesh file ``path`` (STL, OBJ, DAE with pycollada, ...) as a new
    trimesh.Trimesh; ValueError, naming ``filename`` (the URDF's name of it) and the path, for a file
    trimesh cannot read or that holds no triangles."""
    import trimesh

    name = f'{filename!r} ({path})' if filename else str(path)
    try:
        loaded = trimesh.load(str(path), force='mesh')
    except Exception as exc:      # trimesh raises many kinds (a DAE without pycollada: ImportError)
        raise ValueError(f'mesh {name} cannot be read: {type(exc).__name__}: {exc}') from None
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        raise ValueError(f'mesh {name} has no triangles trimesh can read'
                         f'{" (DAE needs pycollada)" if str(path).lower().endswith(".dae") else ""}')
    return loaded.copy()


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
        mesh = read_mesh(resolve(geometry.filename), geometry.filename)
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
    K = skew(k)
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
    parts[tree.root_link].append(Part(disc, BASE_COLOR, role='base'))
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
