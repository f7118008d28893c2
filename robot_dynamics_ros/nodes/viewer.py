"""viewer: the robot, live, in a web browser: a local web page (viser; its web client is inside the
wheel, so it works offline) at ``http://<host>:<port>`` showing the arm moving with its targets, the
tool's desired and actual paths, the MPC's plan, the wrench at the tool and the nodes' /diagnostics.

The page: the robot from the same model source as every node (``robot_description`` / ``urdf_path``
/ the transient-local ``robot_description`` topic; a new description on the topic rebuilds the
scene), with its URDF visuals (meshes from ``package://`` through ``package_paths``, the ament index
and ``ROS_PACKAGE_PATH``), collisions with ``show_collisions``, and for a URDF without geometry
(urdf/ur5e.urdf) a body made from the kinematics and inertias (``robot_dynamics_ros.logic.viewer_scene``:
what is drawn, the colours, the frames). The camera first frames the arm at its first state. A panel
lists the nodes that are up and their /diagnostics: level (OK, WARN, ERROR; STALE when a node's status
is 3 s old), message and rate.

Inputs are found by type and name by a topic discovery every second (any node names and
namespaces; the last name of the topic is what counts), each subscribed with depth 1 (joint states
best effort, the others with the publishers' reliability and durability, as rosbag2 does) and only
its latest message kept, as bytes, read at render time: a 1 kHz stream is never queued, the
intermediate states are dropped.

- in ``.../joint_states`` (sensor_msgs/JointState): the configuration, joints matched by name (a
  joint the model lacks is ignored with a warning once; mimic joints follow their joint; a NaN, inf
  or |q| ≥ 1e6 position is dropped with a throttled warning, the joint stays where it was).
- in ``.../controller_state`` (control_msgs/JointTrajectoryControllerState): ``reference.positions``
  with ``joint_names``, the desired configuration: the desired tool frame (green axes) and the last
  ``trail_seconds`` of its path (green line) beside the actual tool path (blue line).
- in ``.../desired_pose`` (geometry_msgs/PoseStamped, frame = the root link, '' or any link):
  the task-space and MPC targets, as axes.
- in ``.../predicted_path`` (nav_msgs/Path): the MPC's predicted tool path (purple line).
- in ``.../external_wrench`` (geometry_msgs/WrenchStamped): the wrench ON the robot at
  ``header.frame_id`` (a link; '' = the tool link) in that frame's coordinates: the force as an
  arrow with its head at the frame's origin, along f, ``wrench_scale`` m per N; orange for a wrench a
  node publishes (external_torque_estimator's estimate), red for one a node subscribes to under its
  own name (simulator_node's ``~/external_wrench``: the push applied, drawn thinner: inside the
  estimate's arrow when the two agree; it holds until the next
  message, as the simulator applies it). Hidden below 1 mN, and an estimate 0.5 s after its last message.
- in ``.../contact`` (std_msgs/Bool): the tool marker turns red (and larger) while true.
- in ``.../contacts`` (visualization_msgs/MarkerArray; simulator_node's ``~/contacts`` on MuJoCo): the
  contact forces, yellow arrows with the head at each contact point, ``wrench_scale`` m per N; hidden
  0.5 s after the last message.
- in ``/diagnostics`` (diagnostic_msgs/DiagnosticArray): the panel.
- out ``/diagnostics``: the viewer's own status ``viewer: viewer`` (nodes/diagnostics_publisher.py):
  joint states' input rate and age, the frames sent and the frame rate, the render time, the latest
  state's lag (from its arrival to the frame that shows it), the clients connected, the URL.

Targets and paths are hidden ``overlay_timeout`` s after their last message (how each overlay is drawn:
``nodes/viewer_overlays.py``). Nothing else is published: the viewer never commands the arm.

Parameters (their ranges and descriptions: the node reference): ``port`` (0 = a free port the system
picks, logged) and ``host`` ('0.0.0.0' serves other machines too); a port in use is an error naming it
and the node exits with status 1 (it does not move to another port: the URL printed stays right).
``tip_link`` ('' = the URDF's deepest leaf link) is the tool of the paths and of a wrench without a
frame; ``payload_mass``, ``payload_com``, ``payload_frame`` (as model_source declares them) draw a
sphere at the payload's centre of mass while the mass is > 0. Bad input (a description that cannot be
parsed, a message that cannot be read) is a throttled warning; nothing wrong is drawn and the viewer
runs on.
"""

import math
import os
import socket
import sys
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from robot_dynamics_ros.dynamics.kinematic_tree import KinematicTree
from robot_dynamics_ros.logic import robot_body as rb, viewer_scene as vs
from robot_dynamics_ros.logic.diagnostics import ComputeTimes, InputMeter, number
from robot_dynamics_ros.logic.input_guard import MAX_ABS_POSITION, bounded, short_list
from robot_dynamics_ros.nodes.common import (
    WarningThrottle,
    describe,
    float_array,
    parameter_validator,
    run_node,
    string_list,
)
from robot_dynamics_ros.nodes.description_source import DescriptionSource
from robot_dynamics_ros.nodes.diagnostics_publisher import Details, NodeDiagnostics
from robot_dynamics_ros.nodes.latest_messages import LatestMessages
from robot_dynamics_ros.nodes.viewer_overlays import FrameOverlays

__all__ = ['Viewer', 'PortInUse', 'main', 'STREAMS']

DISCOVERY_PERIOD = 1.0          # s between two topic discoveries (and panel updates)
TRAIL_PERIOD = 3                # the trails are redrawn every this many frames
#: kind -> (message type as the graph names it, the topic's last name, module, class)
STREAMS = {
    'joint_states': ('sensor_msgs/msg/JointState', 'joint_states', 'sensor_msgs.msg', 'JointState'),
    'controller_state': ('control_msgs/msg/JointTrajectoryControllerState', 'controller_state',
                         'control_msgs.msg', 'JointTrajectoryControllerState'),
    'desired_pose': ('geometry_msgs/msg/PoseStamped', 'desired_pose', 'geometry_msgs.msg', 'PoseStamped'),
    'predicted_path': ('nav_msgs/msg/Path', 'predicted_path', 'nav_msgs.msg', 'Path'),
    'external_wrench': ('geometry_msgs/msg/WrenchStamped', 'external_wrench', 'geometry_msgs.msg',
                        'WrenchStamped'),
    'contact': ('std_msgs/msg/Bool', 'contact', 'std_msgs.msg', 'Bool'),
    'contacts': ('visualization_msgs/msg/MarkerArray', 'contacts', 'visualization_msgs.msg', 'MarkerArray'),
}


class PortInUse(RuntimeError):
    """The viewer's port is taken by another program."""


def check_port(host, port):
    """Raise PortInUse when ``port`` cannot be listened on at ``host`` (0: any port is fine)."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise PortInUse(f"host '{host}' cannot be resolved: {exc}") from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as the server binds
            try:
                probe.bind(address)
            except OSError as exc:
                if family == socket.AF_INET6 and exc.errno == 99:       # no IPv6 here: not needed
                    continue
                raise PortInUse(f'port {port} on {host} is in use ({exc.strerror}): another viewer or '
                                f'program listens there; choose another with the port parameter '
                                f'(e.g. -p port:={port + 1})') from None


def _declare_parameters(node):
    """The viewer's parameters (module docstring), declared on ``node``."""
    node.declare_parameter('port', 8080, describe(
        'TCP port of the web page (0 = a free port the system picks). A port in use is an error.',
        read_only=True, integer=True, min_value=0, max_value=65535))
    node.declare_parameter('host', 'localhost', describe(
        "Address the web page is served on ('localhost': this machine only; '0.0.0.0': every "
        'interface).', read_only=True))
    node.declare_parameter('frame_rate', 30.0, describe(
        'Frames per second sent to the browser (the latest joint state at each).',
        min_value=1.0, max_value=120.0))
    node.declare_parameter('package_paths', [], describe(
        'Folders where package:// meshes are looked for first (a folder holding packages, or a '
        'package folder itself), before the ament index and ROS_PACKAGE_PATH.',
        read_only=True, dynamic_typing=True))
    node.declare_parameter('show_collisions', False, describe(
        'Draw the URDF collision geometry too (translucent orange).'))
    node.declare_parameter('wrench_scale', 0.02, describe(
        'Length of a wrench arrow per newton of force, m/N.', min_value=0.0, max_value=10.0))
    node.declare_parameter('trail_seconds', 5.0, describe(
        "How long the tool's actual and desired paths are, s.", min_value=0.0, max_value=60.0))
    node.declare_parameter('overlay_timeout', 2.0, describe(
        'Seconds after their last message at which targets, paths and the desired pose are hidden '
        '(0 = never).', min_value=0.0, max_value=3600.0))
    node.declare_parameter('tip_link', '', describe(
        "The tool link of the paths and of a wrench without a frame ('' = the URDF's deepest leaf "
        'link).', read_only=True))
    node.declare_parameter('payload_mass', 0.0, describe(
        'Mass of a rigid payload attached at payload_frame, kg (0 = none): drawn as a sphere.',
        dynamic_typing=True))
    node.declare_parameter('payload_com', [0.0, 0.0, 0.0], describe(
        "The payload's centre of mass in payload_frame's coordinates, m.", dynamic_typing=True))
    node.declare_parameter('payload_frame', '', describe(
        "Frame the payload is attached at ('' = the tool link)."))


class _ModelView:
    """What NodeDiagnostics reads of a model source: the tree as ``model`` (its ``nq``), ``urdf_xml``,
    ``where``."""

    def __init__(self, source):
        self._source = source
        self.model = None
        self.urdf_xml = ''

    @property
    def where(self):
        return self._source.where


class Viewer(Node):
    """The web viewer (module docstring). ``url`` is where it serves; ``scene`` the RobotScene (None
    before a model); ``frames`` the frames sent since start; ``positions`` {joint: q} the configuration
    drawn; ``inputs`` the topics shown (LatestMessages)."""

    def __init__(self, node_name='viewer', **kwargs):
        super().__init__(node_name, **kwargs)
        self._throttle = WarningThrottle(self.get_logger())
        _declare_parameters(self)
        self.add_on_set_parameters_callback(parameter_validator(self._check_parameters))
        self.add_post_set_parameters_callback(self._apply_parameters)
        host = self.get_parameter('host').value
        port = int(self.get_parameter('port').value)
        check_port(host, port)              # before anything is served: PortInUse

        # imported here (a second): the graph's other nodes never pay it
        import viser
        self.server = viser.ViserServer(host=host, port=port, label='robot_dynamics_ros', verbose=False)
        self.port = self.server.get_port()
        if port and self.port != port:      # taken between the check and the server's bind
            self.server.stop()
            raise PortInUse(f'port {port} on {host} is in use: choose another with the port parameter')
        self.url = f'http://{host}:{self.port}'
        self.server.scene.set_up_direction('+z')
        self.server.scene.add_grid('/grid', width=2.0, height=2.0, cell_size=0.1, section_size=0.5,
                                   shadow_opacity=0.0)
        with self.server.gui.add_folder('Nodes and /diagnostics'):
            self._panel = self.server.gui.add_markdown('Waiting for the graph…')
        self._status_text = self.server.gui.add_markdown('No robot model yet.')
        self.get_logger().info(f'viewer at {self.url} (open it in a browser)')

        self.scene = None
        self.tree = None
        self._description = None            # (text, origin) of the scene's model
        self._framed = 0
        self.positions = {}                 # joint -> q of the latest states
        self._moving = frozenset()
        self._mimic = frozenset()
        self._board = vs.DiagnosticsBoard()
        self._meter = InputMeter()
        self.inputs = LatestMessages(self, STREAMS, self._throttle, on_arrival=self._on_arrival)
        self._render_times = ComputeTimes()
        self.frames = 0
        self._frames_before, self._frames_time = 0, time.monotonic()
        self.frame_rate_measured = None
        self.lag = None                     # s from the latest joint state's arrival to its frame
        self._changed = False
        self.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, 50)
        self._model_view = None
        self._source = DescriptionSource(self, self._on_description, self._throttle,
                                         kept=lambda: 'keeping the current scene')
        self._model_view = _ModelView(self._source)
        self._render_timer = None
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._start_render_timer()
        self.create_timer(DISCOVERY_PERIOD, self._discover, clock=self._steady)
        self._diagnostics = NodeDiagnostics(self, 'viewer', self._throttle, self._model_view, self._meter,
                                            self._render_times, 'joint_states (discovered)',
                                            details=self._details)
        self._source.start()
        self._discover()

    # -- parameters -------------------------------------------------------------------------
    def _check_parameters(self, params):
        for p in params:
            if p.name == 'payload_mass':
                if isinstance(p.value, bool) or not isinstance(p.value, (int, float)) or not (
                        math.isfinite(p.value) and p.value >= 0.0):
                    raise ValueError(f'payload_mass must be a finite number >= 0 (kg), got {p.value!r}')
            elif p.name == 'payload_com':
                if float_array('payload_com', p.value).size != 3:
                    raise ValueError('payload_com must have 3 entries (m)')
            elif p.name == 'package_paths':
                string_list('package_paths', p.value)

    def _apply_parameters(self, params):
        names = {p.name for p in params}
        if 'frame_rate' in names:
            self._start_render_timer()
        if 'trail_seconds' in names and self.scene is not None:
            seconds = float(self.get_parameter('trail_seconds').value)
            self.scene.actual_trail.seconds = self.scene.desired_trail.seconds = seconds
        if 'show_collisions' in names and self._description is not None:
            self._build(*self._description)
        self._changed = True

    def _start_render_timer(self):
        if self._render_timer is not None:
            self.destroy_timer(self._render_timer)
        self._render_timer = self.create_timer(1.0 / float(self.get_parameter('frame_rate').value),
                                               self._render, clock=Clock(clock_type=ClockType.STEADY_TIME))

    # -- the model --------------------------------------------------------------------------
    def _on_description(self, text, origin):
        self._build(text, origin)

    def _resolver(self, origin):
        folders = [f for f in string_list('package_paths', self.get_parameter('package_paths').value) if f]
        path = self.get_parameter('urdf_path').value
        base = os.path.dirname(os.path.abspath(path)) if origin == 'file' and path else None
        return lambda filename: rb.resolve_mesh(filename, folders, base)

    def _build(self, text, origin):
        """The scene of a description; a description that cannot be used keeps the current scene."""
        try:
            tree = KinematicTree.from_urdf(text)
            tip = self.get_parameter('tip_link').value or rb.default_tip(tree)
            if tip not in tree.links:
                raise ValueError(f'tip_link {tip!r} is not a link of the robot')
            parts = rb.robot_parts(tree, self._resolver(origin),
                                   bool(self.get_parameter('show_collisions').value),
                                   warn=lambda message: self._throttle.warn('mesh', message))
        except Exception as exc:  # (the parser's ValueError, and whatever a broken file raises)
            self._throttle.warn('description/unusable', f'robot description from the {origin} cannot be '
                                f'shown: {bounded(exc, 500)}; keeping the current scene')
            return
        if self.scene is not None:
            self.scene.remove()
        trail = float(self.get_parameter('trail_seconds').value)
        self.scene = vs.RobotScene(self.server, tree, parts, tip, trail,
                                   float(self.get_parameter('frame_rate').value))
        self.tree = tree
        self._description = (text, origin)
        self._moving, self._mimic = frozenset(tree.moving_joints), frozenset(tree.mimic_joints)
        self.positions = {name: q for name, q in self.positions.items() if name in self._moving}
        self._framed = 0                    # 1: framed at q = 0, 2: at a joint state
        self._model_view.model = tree
        self._model_view.urdf_xml = text
        self.inputs.forget_reads()
        self._changed = True
        self._status_text.content = (f'**{len(tree.links)} links, {len(tree.moving_joints)} joints**, '
                                     f'tool `{tip}` (from the {origin})')
        self.get_logger().info(f'scene built: {len(tree.links)} links, {len(tree.moving_joints)} joints '
                               f'{short_list(tree.moving_joints)}, tool {tip!r}')

    def _frame_camera(self, poses):
        position, look_at = vs.camera_placement([T[:3, 3] for T in poses.values()])
        self.server.initial_camera.position = position
        self.server.initial_camera.look_at = look_at
        for client in self.server.get_clients().values():
            client.camera.position = position
            client.camera.look_at = look_at

    # -- discovery --------------------------------------------------------------------------
    def _discover(self):
        """New input topics (LatestMessages.discover); the panel of the nodes up."""
        try:
            self.inputs.discover()
            up = [f"{ns.rstrip('/')}/{name}" for name, ns in self.get_node_names_and_namespaces()]
            self._panel.content = self._board.markdown(up, time.monotonic())
        except Exception as exc:  # the graph queries fail while the context shuts down
            self._throttle.warn('discovery',
                                f'topic discovery failed: {type(exc).__name__}: {bounded(exc, 300)}')

    def _on_arrival(self, kind):
        if kind == 'joint_states':
            self._meter.add()           # (the input rate of the viewer's /diagnostics)

    def _on_diagnostics(self, msg):
        now = time.monotonic()
        for status in msg.status[:64]:
            level = status.level[0] if isinstance(status.level, bytes) else int(status.level)
            self._board.update(bounded(status.name, 120), level, bounded(status.message, 200),
                               [(kv.key, kv.value) for kv in status.values[:64]], now)

    # -- rendering --------------------------------------------------------------------------
    def _joint_positions(self, msg, topic):
        """Take the finite positions of ``msg``'s known joints into the configuration."""
        names, positions = list(msg.name), np.asarray(msg.position, dtype=np.float64)
        if len(positions) != len(names):
            self._throttle.warn('joint_states/size', f'{topic}: {len(names)} names and {len(positions)} '
                                                     'positions: message dropped')
            return
        bad = ~np.isfinite(positions) | (np.abs(positions) >= MAX_ABS_POSITION)
        unknown = []
        for k, name in enumerate(names):
            if name in self._moving:
                if bad[k]:
                    self._throttle.warn('joint_states/nonfinite', f'{topic}: joint {name!r} position '
                                        f'{positions[k]!r} dropped (not finite or |q| >= 1e6)')
                else:
                    self.positions[name] = float(positions[k])
            elif name not in self._mimic:
                unknown.append(name)
        if unknown:
            self._throttle.once(f'joint_states/unknown:{topic}', f'{topic}: joints {short_list(unknown)} are '
                                'not joints of the robot: ignored')

    def _render(self):
        """One frame: the latest state of every input drawn; nothing sent when nothing changed."""
        if self.scene is None:
            return
        start = time.perf_counter_ns()
        try:
            self._draw()
        except Exception as exc:  # never let one bad frame stop the viewer
            self._throttle.warn('render', f'frame not drawn: {type(exc).__name__}: {bounded(exc, 500)}')
        self._render_times.record(time.perf_counter_ns() - start)

    def _draw(self):
        """The scene at the newest joint state, then each overlay from the latest message of its
        topic (LatestMessages.read: a message is converted once)."""
        scene, now = self.scene, time.monotonic()
        newest = self._take_joint_states()
        with self.server.atomic():
            if self._changed or newest is not None or scene.poses is None:
                poses = scene.pose(self.positions, now)
                if self._framed == 0 or (self._framed == 1 and newest is not None):
                    self._frame_camera(poses)           # (again at the first joint state)
                    self._framed = 2 if newest is not None else 1
            overlays = FrameOverlays(
                scene, self.tree.root_link, self.positions, self._moving, self.inputs.applied,
                overlay_timeout=float(self.get_parameter('overlay_timeout').value),
                wrench_scale=float(self.get_parameter('wrench_scale').value), now=now,
                warn=self._throttle.warn)
            for topic, kind in list(self.inputs.topics.items()):
                if kind != 'joint_states':
                    msg, arrived = self.inputs.read(topic)
                    if arrived is not None:
                        overlays.draw(kind, topic, msg, arrived)
            scene.set_desired(overlays.desired, now)
            self._draw_payload()
            self.frames += 1
            if self.frames % TRAIL_PERIOD == 0:
                scene.draw_trails(now)
        if newest is not None:
            self.lag = now - newest
        self._changed = False

    def _take_joint_states(self):
        """The positions of the joint-state messages that arrived since the last frame; the newest
        arrival time among them (None: none arrived)."""
        newest = None
        for topic, kind in list(self.inputs.topics.items()):
            if kind == 'joint_states' and self.inputs.has_new(topic):
                msg, arrived = self.inputs.read(topic)
                if msg is not None:
                    self._joint_positions(msg, topic)
                    newest = arrived if newest is None else max(newest, arrived)
        return newest

    def _draw_payload(self):
        mass = self.get_parameter('payload_mass').value
        if mass and float(mass) > 0.0:
            frame = self.get_parameter('payload_frame').value or self.scene.tip_link
            com = float_array('payload_com', self.get_parameter('payload_com').value)
            self.scene.set_payload(frame, com, float(mass))
        else:
            self.scene.set_payload('', None, 0.0)

    # -- diagnostics ------------------------------------------------------------------------
    def _details(self):
        now = time.monotonic()
        elapsed = now - self._frames_time
        if elapsed > 0.0:
            self.frame_rate_measured = (self.frames - self._frames_before) / elapsed
        self._frames_before, self._frames_time = self.frames, now
        clients = len(self.server.get_clients())
        values = (('url', self.url), ('clients', str(clients)), ('frames sent', str(self.frames)),
                  ('frame rate (Hz)', number(self.frame_rate_measured, 1)),
                  ('latest state lag (ms)', number(None if self.lag is None else 1e3 * self.lag, 2)),
                  ('topics shown', str(len(self.inputs.topics))))
        return Details(values=values, summary=f'{clients} browser(s) at {self.url}')

    def destroy_node(self):
        server = getattr(self, 'server', None)
        if server is not None:
            try:
                server.stop()
            except Exception:  # already stopped
                pass
        return super().destroy_node()


def main(args=None):
    """Run the viewer; exit status 1 with the reason when its port is in use."""
    try:
        run_node(Viewer, args)
    except PortInUse as exc:
        print(f'viewer: {exc}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
