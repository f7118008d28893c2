"""The viewer in a real browser: headless Chromium (Debian's, driven by Playwright) on the page the viewer
node serves, over real DDS. The page loads and draws the arm; two joint states give two pictures and the
same state the same picture; a push applied in the simulator comes back from external_torque_estimator
and both wrenches are drawn as arrows at the tool. Screenshots go to out/viewer_*.png; with
ROBOT_DYNAMICS_ROS_UPDATE_FIGURES=1 the last (out/viewer_figure.png) is copied to doc/figures/viewer.png.

One browser and one viewer (port 0: a free port) for the module; the pictures are compared in a region
of the canvas that neither viser's panel (top right) nor its notices (top left) cover.
"""

import importlib.util
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, WrenchStamped
from nav_msgs.msg import Path as PathMsg
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from _node_harness import REPO, UR5E_HOME, UR5E_JOINTS, held_arm_with_estimator

pytestmark = [pytest.mark.ros, pytest.mark.slow]

CHROMIUM = Path('/usr/bin/chromium')
MISSING = [name for name in ('viser', 'trimesh', 'playwright') if importlib.util.find_spec(name) is None]
if MISSING or not CHROMIUM.exists():
    pytest.skip(f'the browser tests need {", ".join(MISSING) or "Debian chromium (apt-get install chromium)"}'
                + ('' if CHROMIUM.exists() else ' and /usr/bin/chromium (apt-get install chromium)'),
                allow_module_level=True)

from robot_dynamics_ros.nodes.viewer import Viewer  # noqa: E402

#: WebGL without a GPU: SwiftShader through ANGLE (Chromium asks for --enable-unsafe-swiftshader)
CHROMIUM_ARGS = ['--no-sandbox', '--enable-unsafe-swiftshader', '--use-gl=angle', '--use-angle=swiftshader',
                 '--disable-gpu-sandbox', '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--no-first-run']
VIEWPORT = {'width': 1000, 'height': 760}
CLIP = {'x': 0, 'y': 160, 'width': 650, 'height': 600}      # clear of the panel and the notices
OUT = REPO / 'out'
FIGURE = REPO / 'doc' / 'figures' / 'viewer.png'
BENT = (0.0, -1.2, 1.5, -1.5708, -1.5708, 0.0)              # shoulder_lift -1.2, elbow 1.5


@pytest.fixture(scope='module')
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                              args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope='module')
def viewer(ros, ur5e_xml):
    node = ros.add(Viewer, {'robot_description': ur5e_xml, 'port': 0, 'host': '127.0.0.1',
                            'trail_seconds': 0.0})
    yield node
    # (the harness destroys it, which stops its server)


@pytest.fixture(scope='module')
def page(browser, viewer):
    page = browser.new_page(viewport=VIEWPORT)
    response = page.goto(viewer.url)
    page.response_status = response.status
    yield page
    page.close()


def _picture(page, ros, name, settle=1.5):
    """A screenshot of the canvas region after the viewer drew for ``settle`` s (spinning)."""
    ros.spin(settle)
    time.sleep(0.3)                 # (the browser draws the last frame)
    OUT.mkdir(exist_ok=True)
    path = OUT / f'viewer_{name}.png'
    page.screenshot(path=str(path), clip=CLIP)
    from PIL import Image
    return np.asarray(Image.open(path).convert('RGB'), dtype=np.int16)


def _differing(a, b, threshold=40):
    """Pixels whose colour differs by more than ``threshold`` in some channel."""
    return int((np.abs(a - b).max(axis=2) > threshold).sum())


def _state(positions):
    msg = JointState(name=list(UR5E_JOINTS), position=[float(q) for q in positions])
    return msg


def _show(ros, viewer, publisher, positions):
    publisher.publish(_state(positions))
    assert ros.spin_until(lambda: all(abs(viewer.positions.get(j, 1e9) - q) < 1e-9
                                      for j, q in zip(UR5E_JOINTS, positions)), 10.0), 'state not shown'


def test_the_page_loads_and_draws_the_arm(ros, viewer, page):
    assert page.response_status == 200
    page.wait_for_selector('canvas', timeout=30000)
    assert page.locator('canvas').count() >= 1
    publisher = ros.publisher(JointState, '/joint_states', wait_for=0)
    assert ros.spin_until(lambda: '/joint_states' in viewer.inputs.topics, 10.0), 'not discovered'
    ros.spin(0.5)
    _show(ros, viewer, publisher, UR5E_HOME)
    shown = _picture(page, ros, 'home')
    for handle in viewer.scene.links.values():
        handle.visible = False
    hidden = _picture(page, ros, 'no_arm', settle=0.5)
    for handle in viewer.scene.links.values():
        handle.visible = True
    arm = _differing(shown, hidden)
    assert arm > 3000, f'the arm covers only {arm} pixels'
    # and the background is mostly background: the arm is a figure, not a smear
    assert arm < 0.5 * shown.shape[0] * shown.shape[1]


def test_two_joint_states_give_two_pictures_and_one_state_one_picture(ros, viewer, page):
    publisher = ros.publisher(JointState, '/joint_states', wait_for=0)
    _show(ros, viewer, publisher, UR5E_HOME)
    home = _picture(page, ros, 'home_again')
    _show(ros, viewer, publisher, BENT)
    bent = _picture(page, ros, 'bent')
    _show(ros, viewer, publisher, UR5E_HOME)
    home_again = _picture(page, ros, 'home_third')
    moved = _differing(home, bent)
    same = _differing(home, home_again)
    assert moved > 2000, f'only {moved} pixels changed between two configurations'
    assert same < 0.05 * moved, f'{same} pixels changed between two pictures of the same state ({moved})'


def _wrench(force, frame='tool0'):
    msg = WrenchStamped()
    msg.header.frame_id = frame
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = map(float, force)
    return msg


def test_the_wrench_arrows_appear_under_a_push(ros, viewer, page, ur5e_xml):
    viewer.set_parameters([Parameter('trail_seconds', value=5.0)])
    sim, est = held_arm_with_estimator(ros, ur5e_xml, BENT, publish_rate=250.0)
    estimated = ros.collect(WrenchStamped, f'/{est.get_name()}/external_wrench', qos=100)
    assert ros.spin_until(lambda: len(estimated) > 20, 40.0), 'no estimate'
    push_topic = f'/{sim.get_name()}/external_wrench'
    push = ros.publisher(WrenchStamped, push_topic, wait_for=2)     # the simulator and the viewer
    force = np.array([0.0, 25.0, 20.0])                     # N, in tool0
    push.publish(_wrench(force))

    def estimate():
        f = estimated[-1].wrench.force
        return np.array([f.x, f.y, f.z])

    assert ros.spin_until(lambda: np.linalg.norm(estimate()) > 0.8 * np.linalg.norm(force), 30.0), \
        'the estimate did not follow the push'
    estimate_topic = f'/{est.get_name()}/external_wrench'
    assert ros.spin_until(lambda: viewer.scene.wrench_visible(estimate_topic)
                          and viewer.scene.wrench_visible(push_topic), 10.0), 'no arrows'
    assert push_topic in viewer.inputs.applied and estimate_topic not in viewer.inputs.applied
    # an MPC-like plan and target beside the arm (for the figure): a path from the tool to a target
    tool = viewer.scene.poses['tool0'][:3, 3]
    target = tool + np.array([0.15, -0.25, 0.2])
    plan = ros.probe.create_publisher(PathMsg, '/mpc_controller/predicted_path', 10)
    goal = ros.probe.create_publisher(PoseStamped, '/mpc_controller/desired_pose', 10)
    path = PathMsg()
    path.header.frame_id = 'base_link'
    for s in np.linspace(0.0, 1.0, 20):
        pose = PoseStamped()
        pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = tool + s * (target - tool) + \
            np.array([0.0, 0.0, 0.12 * np.sin(np.pi * s)])
        pose.pose.orientation.w = 1.0
        path.poses.append(pose)
    desired = PoseStamped()
    desired.header.frame_id = 'base_link'
    desired.pose.position.x, desired.pose.position.y, desired.pose.position.z = target
    desired.pose.orientation.w = 1.0
    overlays = viewer.scene._overlays
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and '/overlay/path__mpc_controller_predicted_path' not in overlays:
        plan.publish(path)
        goal.publish(desired)
        ros.spin(0.3)
    assert overlays['/overlay/path__mpc_controller_predicted_path'].visible
    assert overlays['/overlay/target__mpc_controller_desired_pose'].visible
    with_arrows = _picture(page, ros, 'push', settle=1.0)
    for topic in (estimate_topic, push_topic):               # the same frame without the arrows
        viewer.scene._overlays[f'/overlay/wrench_{topic.replace("/", "_")}'].visible = False
    time.sleep(0.5)
    without = _picture(page, ros, 'push_no_arrows', settle=0.0)
    arrows = _differing(with_arrows, without)
    assert arrows > 400, f'the arrows cover only {arrows} pixels'
    full = OUT / 'viewer_figure.png'
    for topic in (estimate_topic, push_topic):
        viewer.scene._overlays[f'/overlay/wrench_{topic.replace("/", "_")}'].visible = True
    try:                            # (the figure without viser's "software WebGL" notice)
        page.locator('.mantine-Notification-closeButton').first.click(timeout=2000)
    except Exception:  # another client version: the notice stays in the picture
        pass
    time.sleep(0.5)
    page.screenshot(path=str(full))
    if os.environ.get('ROBOT_DYNAMICS_ROS_UPDATE_FIGURES') and FIGURE.parent.is_dir():
        shutil.copyfile(full, FIGURE)           # (only on request: a test run leaves the checkout clean)


def test_a_simulators_contact_forces_are_arrows_at_the_contacts(ros, viewer):
    """simulator_node's ~/contacts on MuJoCo (nodes/contact_markers.py): each contact force is an arrow
    with its head at the contact point, wrench_scale m per N along f; hidden 0.5 s after the last
    message."""
    from visualization_msgs.msg import MarkerArray

    from robot_dynamics_ros.logic.mujoco_engine import Contact
    from robot_dynamics_ros.nodes.contact_markers import contact_markers

    topic = '/simulator_node/contacts'
    publisher = ros.probe.create_publisher(MarkerArray, topic, 10)
    contact = Contact('tool0', 'world/table_top', np.array([-0.49, -0.13, 0.40]), np.array([0.0, 0.0, 1.0]),
                      np.array([1.0, 0.0, 20.0]), np.zeros(3), 0.001)
    name = '/overlay/contacts__simulator_node_contacts'
    overlays = viewer.scene._overlays
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline and not (name in overlays and overlays[name].visible):
        publisher.publish(contact_markers([contact], None, 'base_link'))
        ros.spin(0.2)
    assert name in overlays and overlays[name].visible, 'no contact arrows'
    scale = viewer.get_parameter('wrench_scale').value
    np.testing.assert_allclose(overlays[name].points[0], [contact.position - scale * contact.force,
                                                          contact.position], atol=1e-6)
    assert ros.spin_until(lambda: not overlays[name].visible, 5.0), 'the arrows stayed after the contacts'
