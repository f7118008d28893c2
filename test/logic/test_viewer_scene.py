"""The viewer's scene without ROS or a browser (robot_dynamics_ros.logic.viewer_scene): the body generated
for a URDF without geometry, where package:// meshes are looked for and in which order, the fallback of
a mesh that cannot be found, the Panda's real meshes, and the links posed in a real viser server."""

import importlib.util
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros.dynamics.kinematic_tree import KinematicTree
from robot_dynamics_ros.dynamics.spatial import rotation_quaternion
from robot_dynamics_ros.logic import robot_body as rb, viewer_scene as vs

pytestmark = pytest.mark.skipif(importlib.util.find_spec('trimesh') is None,
                                reason='trimesh is not installed (the viewer needs it: requirements)')

REPO = Path(__file__).resolve().parents[2]
UR5E = REPO / 'urdf' / 'ur5e.urdf'
SHARE = Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix' / 'share'
PANDA = SHARE / 'example-robot-data' / 'robots' / 'panda_description' / 'urdf' / 'panda.urdf'
STL = (b'solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\n'
       b'endfacet\nendsolid t\n')


def _rotation(rng):
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_quaternion_of_a_rotation_gives_the_rotation_back():
    rng = np.random.default_rng(7)
    for _ in range(200):
        R = _rotation(rng)
        w, x, y, z = rotation_quaternion(R)
        back = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        assert np.abs(back - R).max() < 1e-12 and w >= 0.0


def test_ur5e_has_no_geometry_and_gets_one_capsule_per_moving_link():
    tree = KinematicTree.from_urdf(str(UR5E))
    assert not any(link.visuals for link in tree.links.values())
    parts = rb.robot_parts(tree)
    moving_links = [j.child for j in tree.joints if j.moves]
    assert len(moving_links) == 6
    for name in moving_links:
        capsules = [p for p in parts[name] if p.role == 'capsule']
        assert len(capsules) == 1, (name, [p.role for p in parts[name]])
        # the capsule spans the link frame's origin -> the child joint's origin, radius 2 to 8 cm
        child = next(j for j in tree.joints if j.parent == name)
        length = float(np.linalg.norm(child.origin[:3, 3]))
        v, d = capsules[0].mesh.vertices, child.origin[:3, 3] / length
        radius = np.linalg.norm(v - np.outer(v @ d, d), axis=1).max()      # distance from the axis
        assert rb.MIN_RADIUS - 1e-3 <= radius <= rb.MAX_RADIUS + 1e-3, (name, radius)
        along = v @ d
        assert along.min() == pytest.approx(-radius, abs=1e-6)
        assert along.max() == pytest.approx(length + radius)
        assert any(p.role == 'com' for p in parts[name]) and any(p.role == 'joint' for p in parts[name])
    # the upper arm's radius from its inertia about its own axis: sqrt(2 I_axial / m) = 5 cm
    upper = tree.links['upper_arm_link']
    assert rb.link_radius(upper, np.array([-1.0, 0.0, 0.0])) == pytest.approx(0.05, rel=1e-3)
    assert any(p.role == 'base' for p in parts[tree.root_link])
    assert rb.default_tip(tree) == 'tool0'


def _package(root, package, rel='meshes/m.stl'):
    path = root / package / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(STL)
    return path


def test_package_urls_are_looked_for_in_package_paths_then_ament_then_ros_package_path(tmp_path):
    first, ament, ros = (tmp_path / name for name in ('first', 'ament', 'ros'))
    in_first = _package(first, 'pkg')
    in_ament = _package(ament, 'pkg')
    in_ros = _package(ros, 'pkg')
    env = {'ROS_PACKAGE_PATH': str(ros)}

    def share(package):
        return str(ament / package) if package == 'pkg' else None

    url = 'package://pkg/meshes/m.stl'
    assert rb.resolve_mesh(url, [str(first)], environ=env, ament=share) == in_first
    assert rb.resolve_mesh(url, [str(tmp_path / 'none')], environ=env, ament=share) == in_ament
    assert rb.resolve_mesh(url, [], environ=env, ament=lambda p: None) == in_ros
    # a folder that is the package itself
    assert rb.resolve_mesh(url, [str(first / 'pkg')], environ={}, ament=None) == in_first
    # file:// and a path relative to the URDF's folder
    assert rb.resolve_mesh(f'file://{in_ros}', environ={}, ament=None) == in_ros
    assert rb.resolve_mesh('pkg/meshes/m.stl', base_dir=str(ament), environ={}, ament=None) == in_ament
    with pytest.raises(rb.MeshNotFound, match="'package://other/x.stl'.*tried"):
        rb.resolve_mesh('package://other/x.stl', [str(first)], environ=env, ament=share)


MISSING = """<robot name="r">
  <link name="base"><visual><geometry><box size="0.2 0.2 0.1"/></geometry></visual></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="arm">
    <inertial><origin xyz="0.2 0 0"/><mass value="2"/>
      <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial>
    <visual><geometry><mesh filename="package://nowhere/meshes/arm.stl"/></geometry></visual>
  </link>
  <joint name="f" type="fixed"><parent link="arm"/><child link="tool"/><origin xyz="0.4 0 0"/></joint>
  <link name="tool"/>
</robot>"""


def test_a_missing_mesh_is_a_warning_and_the_link_shows_its_generated_body():
    tree = KinematicTree.from_urdf(MISSING)
    warnings = []
    parts = rb.robot_parts(tree, lambda f: rb.resolve_mesh(f, [], environ={}, ament=None),
                           warn=warnings.append)
    assert len(warnings) == 1 and 'arm.stl' in warnings[0] and 'generated body' in warnings[0]
    assert [p.role for p in parts['arm']].count('capsule') == 1
    assert [p.role for p in parts['base']] == ['visual']          # its box, as written
    assert parts['base'][0].mesh.extents == pytest.approx([0.2, 0.2, 0.1])


@pytest.mark.skipif(not PANDA.is_file(),
                    reason='example-robot-data (the pin test dependency) is not installed')
def test_the_panda_shows_its_real_meshes():
    tree = KinematicTree.from_urdf(str(PANDA))
    warnings = []
    parts = rb.robot_parts(tree, lambda f: rb.resolve_mesh(f, [str(SHARE)], environ={}, ament=None),
                           warn=warnings.append)
    has_collada = importlib.util.find_spec('collada') is not None
    for k in range(8):
        link = parts[f'panda_link{k}']
        assert link and all(p.role == 'visual' for p in link), (k, [p.role for p in link])
        assert sum(len(p.mesh.faces) for p in link) > 100
    # the visual meshes are DAE: without pycollada each link shows its STL collision mesh, saying so
    assert has_collada or (warnings and all('collision geometry' in w for w in warnings))
    with_collisions = rb.robot_parts(tree, lambda f: rb.resolve_mesh(f, [str(SHARE)], environ={}, ament=None),
                                     show_collisions=True, warn=lambda text: None)
    assert any(p.role == 'collision' for p in with_collisions['panda_link3'])


def test_wrench_arrow_points_along_the_force_in_the_root_frame():
    T = np.eye(4)
    T[:3, :3] = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]       # tip turned 90° about z
    T[:3, 3] = [0.5, 0.0, 0.3]
    start, end = vs.wrench_arrow(T, np.array([10.0, 0.0, 0.0]), 0.01)
    assert end == pytest.approx([0.5, 0.0, 0.3])                            # head at the tip
    assert end - start == pytest.approx([0.0, 0.1, 0.0])                    # along f = R f_tip
    assert vs.wrench_arrow(T, np.zeros(3), 0.01) is None
    assert vs.wrench_arrow(T, np.array([np.nan, 0, 0]), 0.01) is None


def test_trail_is_bounded_and_keeps_the_last_seconds():
    trail = vs.Trail(1.0, 10)
    for k in range(100):
        trail.add(0.1 * k, np.array([k, 0.0, 0.0]))
    points = trail.points(9.9)
    assert len(points) <= 10 and points[-1][0] == 99 and points[0][0] >= 89
    assert trail.segments(100.0) is None


def test_diagnostics_board_marks_stale_statuses_and_stays_bounded():
    board = vs.DiagnosticsBoard(stale_after=3.0, max_entries=4)
    for k in range(10):
        board.update(f'n{k}: task', 1, 'WARN | reason', [('input rate (Hz)', '12.5')], now=0.0)
    text = board.markdown(['/n9'], now=5.0)
    assert text.count('| STALE |') == 4 and 'n0: task' not in text and 'WARN / reason' in text


@pytest.mark.skipif(importlib.util.find_spec('viser') is None, reason='viser is not installed')
def test_links_are_posed_in_a_viser_scene_as_the_kinematic_tree_says():
    import viser
    tree = KinematicTree.from_urdf(str(UR5E))
    server = viser.ViserServer(host='127.0.0.1', port=0, verbose=False)
    try:
        scene = vs.RobotScene(server, tree, rb.robot_parts(tree))
        q = dict(zip(tree.moving_joints, (0.3, -1.2, 1.5, -0.4, 0.7, 0.2)))
        poses = scene.pose(q, now=0.0)
        for name, handle in scene.links.items():
            assert handle.position == pytest.approx(poses[name][:3, 3])
            w, x, y, z = handle.wxyz
            assert np.abs(np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z)],
                                    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z)]])
                          - poses[name][:2, :2]).max() < 1e-9
        assert scene.tip.position == pytest.approx(poses['tool0'][:3, 3])
        scene.set_wrench('w', poses['tool0'], np.array([0.0, 0.0, 20.0]), 0.01, vs.ESTIMATED_WRENCH_COLOR)
        assert scene.wrench_visible('w')
        scene.set_wrench('w', poses['tool0'], None, 0.01, vs.ESTIMATED_WRENCH_COLOR)
        assert not scene.wrench_visible('w')
        scene.set_payload('tool0', np.array([0.0, 0.0, 0.05]), 2.0)
        assert scene.payload.visible
        T = poses['tool0']
        assert scene.payload.position == pytest.approx(T[:3, :3] @ [0, 0, 0.05] + T[:3, 3])
        scene.remove()
    finally:
        server.stop()
