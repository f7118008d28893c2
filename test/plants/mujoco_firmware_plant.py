"""A MuJoCo arm whose firmware compensates gravity: a plant this package did not write.

On arms such as Franka, Kinova, KUKA (FRI) and UR in torque control, the firmware adds its own gravity
compensation g(q) to every effort command, and some report efforts with gravity removed. This module
stands in for such an arm, with dynamics that do not come from robot_dynamics_ros, so that a closed
loop of the package's controllers against it tests them against an independent engine:

- ``MujocoArm`` (ROS-free): MuJoCo compiles the URDF itself (its URDF importer, with the
  ``<mujoco><compiler .../></mujoco>`` element of ``urdf_for_mujoco`` inserted in the XML); one
  ``motor`` actuator per joint is added through ``mujoco.MjSpec`` (gear 1, control range ± the URDF
  effort limit). The firmware is MuJoCo's own gravity compensation: ``gravcomp = 1`` on every moving
  body, routed through the joints' actuators (``actgravcomp``), so that the torque each joint applies
  is τ_applied = clamp(clamp(u, ±effort) + g(q), ±effort) with u the command, and a zero command
  holds the arm where it is. With ``firmware_gravity=False`` it is a plain full-torque arm,
  τ_applied = clamp(u, ±effort).
- ``MujocoFirmwarePlant`` (rclpy node): the driver of that arm, with simulator_node's interface:
  ``effort_controller/commands`` in, ``joint_states`` out, ``~/external_wrench`` in, stepping in
  real time on a steady-clock timer.

What MuJoCo 4.0 makes of ``urdf/ur5e.urdf`` (test/reference/test_ref_mujoco_plant.py checks it):
bodies world, base_link (fixed to the world), shoulder_link ... wrist_3_link, and tool0 (kept as a
massless body: ``fusestatic="false"``); hinge joints shoulder_pan_joint ... wrist_3_joint in the
URDF's order, ranges from <limit lower upper>, the actuator force range of each joint from <limit
effort>; <dynamics damping> becomes the joint's viscous ``damping`` (N m s/rad), <dynamics friction>
its ``frictionloss`` (N m, dry friction as a soft constraint, not the package's smoothed Coulomb
model), armature 0. With ``friction=False`` (the default) all three are zero: the rigid-body dynamics
only, which equal the package's to about 1e-14 (gravity torques, mass matrix).

Units: SI (rad, rad/s, N m, N, s); joint vectors in the order of ``joints``; spatial vectors
angular first, as in the package: a wrench is (m, f).

test/plants/ holds plants written outside robot_dynamics_ros; tests import them by module name with
that folder on sys.path, as the node tests import _node_harness (no package: pytest's doctest run
imports this module under the same name). It imports nothing of robot_dynamics_ros.
"""

import math
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

__all__ = ['COMPILER', 'INTEGRATORS', 'REPORTED_EFFORTS', 'UR5E_URDF', 'MujocoArm', 'MujocoFirmwarePlant',
           'tip_wrench_to_xfrc', 'urdf_for_mujoco']

UR5E_URDF = Path(__file__).resolve().parents[2] / 'urdf' / 'ur5e.urdf'

# MuJoCo's URDF options (<mujoco><compiler/></mujoco> inside <robot>): no meshes to look for; fixed
# joints do not merge their child into the parent (tool0 stays a body, where wrenches act); the
# URDF's inertias are taken as they are (not "balanced", not replaced by geometry's).
COMPILER = {'discardvisual': 'true', 'fusestatic': 'false', 'balanceinertia': 'false',
            'inertiafromgeom': 'false', 'strippath': 'true', 'angle': 'radian'}

INTEGRATORS = {'RK4': mujoco.mjtIntegrator.mjINT_RK4,
               'implicitfast': mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
               'Euler': mujoco.mjtIntegrator.mjINT_EULER}

# What joint_states' efforts contain: 'full' = the torque the joint applies (command + the firmware's
# gravity compensation, what a joint torque sensor reads); 'gravity_compensated' = that minus the
# firmware's gravity compensation (the command, as the actuator applied it).
REPORTED_EFFORTS = ('full', 'gravity_compensated')


def urdf_for_mujoco(urdf_xml, compiler=None):
    """The URDF text with ``<mujoco><compiler **compiler/></mujoco>`` as the first child of <robot>.

    MuJoCo's URDF importer reads its compiler options from that element only; the file itself is not
    changed. An element already there is replaced.

    >>> '<mujoco><compiler fusestatic="false" /></mujoco>' in urdf_for_mujoco(
    ...     '<robot name="r"><link name="a"/></robot>', {'fusestatic': 'false'})
    True
    """
    root = ET.fromstring(urdf_xml)
    for old in root.findall('mujoco'):
        root.remove(old)
    element = ET.Element('mujoco')
    ET.SubElement(element, 'compiler', dict(COMPILER if compiler is None else compiler))
    root.insert(0, element)
    return ET.tostring(root, encoding='unicode')


def tip_wrench_to_xfrc(wrench, rotation, origin, com):
    """A wrench at a body's frame origin in the body's axes -> MuJoCo's ``xfrc_applied`` row.

    ``wrench`` (6,) = (m, f), angular first: the torque about the frame origin and the force, both in
    the body frame's coordinates. ``rotation`` (3, 3) is the body frame's orientation in the world
    (MuJoCo ``xmat``), ``origin`` its origin (``xpos``) and ``com`` the body's centre of mass
    (``xipos``), both in the world, m. MuJoCo applies ``xfrc_applied`` = (f, m), force first, in world
    coordinates, the torque about the centre of mass, so

        f_w = R f,    m_com = R m + (p_origin − p_com) × f_w.

    >>> tip_wrench_to_xfrc(np.array([0, 0, 0, 0, 0, 1.0]), np.eye(3), np.zeros(3),
    ...                    np.array([1.0, 0, 0])).tolist()
    [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    """
    rotation = np.asarray(rotation, dtype=float).reshape(3, 3)
    force = rotation @ np.asarray(wrench[3:], dtype=float)
    torque = rotation @ np.asarray(wrench[:3], dtype=float) + np.cross(
        np.asarray(origin, dtype=float) - np.asarray(com, dtype=float), force)
    return np.concatenate([force, torque])


def _read_urdf(urdf):
    """The URDF text of ``urdf``: XML text (starts with '<') or a path."""
    text = str(urdf)
    return text if text.lstrip().startswith('<') else Path(text).read_text(encoding='utf-8')


def _moving_bodies(body, moving=False):
    """Names of the bodies below ``body`` (an MjsBody) that some joint moves: a body moves when it or
    one of its ancestors has a joint."""
    names = []
    for child in body.bodies:
        child_moving = moving or len(child.joints) > 0
        if child_moving:
            names.append(child.name)
        names += _moving_bodies(child, child_moving)
    return names


class MujocoArm:
    """A fixed-base arm compiled by MuJoCo from a URDF, torque-controlled, with or without a firmware
    that compensates gravity (see the module docstring).

    ``joints``: the actuated joints, in the order of every joint vector here (default: the URDF's
    movable joints, in MuJoCo's order, which is the URDF's tree order). ``firmware_gravity``: the
    firmware adds g(q) to each command (MuJoCo ``gravcomp = 1`` on every moving body, applied through
    the actuators: ``actgravcomp``). ``friction``: keep the URDF's <dynamics> (damping, frictionloss);
    False zeroes them and the armature. ``dt``: MuJoCo's timestep, s. ``integrator``: a key of
    INTEGRATORS. ``tip_link``: the body external wrenches act on ('' = none).

    >>> arm = MujocoArm(UR5E_URDF)
    >>> arm.reset([0.3, -1.0, 1.2, -0.8, -1.4, 0.5])
    >>> for _ in range(100):
    ...     arm.step()
    >>> bool(np.abs(arm.q - [0.3, -1.0, 1.2, -0.8, -1.4, 0.5]).max() < 1e-9)   # zero command: held
    True
    """

    def __init__(self, urdf=UR5E_URDF, joints=(), firmware_gravity=True, friction=False, dt=0.001,
                 integrator='RK4', tip_link='tool0'):
        if integrator not in INTEGRATORS:
            raise ValueError(f'integrator must be one of {sorted(INTEGRATORS)}, got {integrator!r}')
        if not (math.isfinite(dt) and dt > 0):
            raise ValueError(f'dt must be a positive number of seconds, got {dt!r}')
        spec = mujoco.MjSpec.from_string(urdf_for_mujoco(_read_urdf(urdf)))
        movable = [j.name for j in spec.joints
                   if j.type in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)]
        self.joints = tuple(joints) or tuple(movable)
        unknown = [name for name in self.joints if name not in movable]
        if unknown or len(set(self.joints)) != len(self.joints):
            raise ValueError(f'joints {list(self.joints)}: each must be one of the movable joints '
                             f'{movable}, once')
        self.firmware_gravity = bool(firmware_gravity)
        for joint in spec.joints:
            if not friction:
                joint.damping = 0 * joint.damping      # an array (polynomial damping) in MuJoCo 4
                joint.frictionloss = 0.0
                joint.armature = 0.0
            joint.actgravcomp = self.firmware_gravity
        for name in _moving_bodies(spec.worldbody):
            spec.body(name).gravcomp = 1.0 if self.firmware_gravity else 0.0
        for name in self.joints:
            # The importer put the URDF's <limit effort> into the joint's actuator force range.
            low, high = spec.joint(name).actfrcrange
            limited = mujoco.mjtLimited.mjLIMITED_TRUE if high > low else mujoco.mjtLimited.mjLIMITED_FALSE
            actuator = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT,
                                         ctrllimited=limited, ctrlrange=[low, high])
            actuator.set_to_motor()
            actuator.gear = [1.0, 0, 0, 0, 0, 0]
        spec.option.timestep = float(dt)
        spec.option.integrator = INTEGRATORS[integrator]
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        m = self.model
        ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name) for name in self.joints]
        self.qpos_index = np.array([m.jnt_qposadr[i] for i in ids])
        self.dof_index = np.array([m.jnt_dofadr[i] for i in ids])
        self.effort_limit = np.array([m.jnt_actfrcrange[i, 1] for i in ids])
        self.tip_body = -1
        if tip_link:
            self.tip_body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, tip_link)
            if self.tip_body < 0:
                bodies = [m.body(i).name for i in range(m.nbody)]
                raise ValueError(f'tip_link {tip_link!r} is not a body of the MuJoCo model: {bodies}')
        self._wrench = None
        self.reset(np.zeros(len(self.joints)))

    # -- state -----------------------------------------------------------------------------------
    q = property(lambda self: self.data.qpos[self.qpos_index].copy(), doc='Joint positions, rad or m.')
    qd = property(lambda self: self.data.qvel[self.dof_index].copy(), doc='Joint velocities.')
    time = property(lambda self: float(self.data.time), doc='Simulated time, s.')

    def reset(self, q):
        """Rest at joint positions ``q`` (joint order), time 0, zero command, no wrench."""
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self.qpos_index] = np.asarray(q, dtype=float)
        self._wrench = None
        self.forward()

    def forward(self):
        """MuJoCo's forward dynamics at the current state (mj_forward): the efforts, accelerations and
        body poses then belong to the state and command now (after mj_step they are those of the
        state the step started from)."""
        self._apply_wrench()
        mujoco.mj_forward(self.model, self.data)

    # -- inputs ------------------------------------------------------------------------------------
    def command(self, tau):
        """The effort command u (joint order, N m or N); MuJoCo clamps it to ± the effort limit."""
        self.data.ctrl[:] = np.asarray(tau, dtype=float)

    def set_tip_wrench(self, wrench):
        """The wrench (m, f) exerted ON the arm at the tip body's frame origin, in the tip frame's
        coordinates (N m, N), applied from now on; None or zeros remove it."""
        if self.tip_body < 0:
            raise ValueError('no tip body: external wrenches need tip_link')
        wrench = None if wrench is None else np.asarray(wrench, dtype=float).copy()
        self._wrench = None if wrench is None or not wrench.any() else wrench
        if self._wrench is None:
            self.data.xfrc_applied[self.tip_body] = 0.0

    def _apply_wrench(self):
        """xfrc_applied of the tip from the wrench in tip coordinates, at the current pose."""
        if self._wrench is None:
            return
        mujoco.mj_kinematics(self.model, self.data)
        b, d = self.tip_body, self.data
        d.xfrc_applied[b] = tip_wrench_to_xfrc(self._wrench, d.xmat[b], d.xpos[b], d.xipos[b])

    # -- simulation ----------------------------------------------------------------------------------
    def step(self):
        """One MuJoCo step of dt (mj_step). A tip wrench is re-expressed in the world at the pose the
        step starts from, and held there during the step."""
        self._apply_wrench()
        mujoco.mj_step(self.model, self.data)

    # -- outputs -------------------------------------------------------------------------------------
    def gravity_compensation(self):
        """The firmware's gravity compensation (MuJoCo ``qfrc_gravcomp``; zeros without firmware),
        from the last mj_forward or mj_step."""
        return self.data.qfrc_gravcomp[self.dof_index].copy()

    def efforts(self, reported='full'):
        """Joint efforts as the arm reports them (REPORTED_EFFORTS), from the last mj_forward:
        'full' = MuJoCo ``qfrc_actuator`` (command + firmware gravity compensation, clamped at the
        effort limit: the applied torque); 'gravity_compensated' = ``qfrc_actuator − qfrc_gravcomp``
        (the command as applied; without firmware the two are the same)."""
        full = self.data.qfrc_actuator[self.dof_index]
        if reported == 'full':
            return full.copy()
        if reported == 'gravity_compensated':
            return full - self.gravity_compensation()
        raise ValueError(f'reported_effort must be one of {REPORTED_EFFORTS}, got {reported!r}')

    def holding_efforts(self, reported='full'):
        """The efforts of an arm held still by its brakes (before the first command): 'full' = the
        torque that holds it, MuJoCo's ``qfrc_bias`` at rest (its gravity); 'gravity_compensated' = that
        minus the firmware's gravity compensation. From the last mj_forward."""
        full = self.data.qfrc_bias[self.dof_index].copy()
        if reported == 'full':
            return full
        if reported == 'gravity_compensated':
            return full - self.gravity_compensation()
        raise ValueError(f'reported_effort must be one of {REPORTED_EFFORTS}, got {reported!r}')


def _descriptor(description, dynamic_typing=False):
    return ParameterDescriptor(description=description, read_only=True, dynamic_typing=dynamic_typing)


class MujocoFirmwarePlant(Node):
    """The driver of a MujocoArm: simulator_node's interface on MuJoCo's dynamics.

    Topics (names as simulator_node's; joint vectors in the order of ``joints``):

    - in  ``effort_controller/commands`` (std_msgs/Float64MultiArray): the effort command u, one per
      joint, N m or N. On a firmware-gravity arm the firmware adds g(q) to it. A message of the wrong
      size or with NaN/inf is dropped with a warning. No command for ``command_timeout`` s of
      simulated time: u = 0 (the firmware terms only: a firmware-gravity arm holds, a plain one falls).
    - in  ``~/external_wrench`` (geometry_msgs/WrenchStamped): the wrench exerted ON the robot by the
      environment at the origin of ``tip_link``, torque about that origin, both in the tip frame's
      coordinates (header.frame_id '' or ``tip_link``; another frame is dropped with a warning).
      Applied until the next message; a zero wrench removes it. MuJoCo takes it as ``xfrc_applied``
      of the tip body, in world coordinates at the body's centre of mass (``tip_wrench_to_xfrc``).
    - out ``joint_states`` (sensor_msgs/JointState): name, position, velocity, effort (``reported_effort``:
      'full' = applied torque, or 'gravity_compensated' = applied torque minus the firmware's gravity
      compensation), header.stamp from the node clock, one per tick of a steady-clock timer at
      ``publish_rate``.

    Stepping: MuJoCo steps of ``dt`` in real time: each timer tick runs the steps owed since the start
    (wall time / dt), then publishes the state. A backlog beyond two publication periods is dropped
    (``dropped`` counts the seconds): the simulation then runs slower than real time rather than open
    loop in bursts. With ``wait_for_command`` nothing steps until the first command; the initial state
    is published meanwhile, with the efforts of an arm held on its brakes (``holding_efforts``), so a
    controller can start and check them.

    Parameters (read-only, set at construction): ``urdf_path`` (default the repository's UR5e),
    ``joints`` (string array, [] = the URDF's movable joints), ``firmware_gravity`` (bool, true),
    ``reported_effort`` ('full' | 'gravity_compensated'), ``friction`` (bool, false: the URDF's
    damping and friction as MuJoCo maps them), ``dt`` (s, 0.001), ``integrator`` ('RK4' |
    'implicitfast' | 'Euler'), ``publish_rate`` (Hz, 500), ``initial_positions`` ([] = zeros),
    ``wait_for_command`` (true), ``command_timeout`` (s, 0.5), ``tip_link`` ('tool0').
    """

    def __init__(self, node_name='mujoco_firmware_plant', **kwargs):
        super().__init__(node_name, **kwargs)
        p = {}
        for name, default, description, dynamic in (
                ('urdf_path', str(UR5E_URDF), 'URDF file MuJoCo compiles.', False),
                ('joints', [], 'Joint order of commands and states; [] = the URDF movable joints.', True),
                ('firmware_gravity', True, 'The firmware adds g(q) to every effort command.', False),
                ('reported_effort', 'full', f'Efforts in joint_states: one of {REPORTED_EFFORTS}.', False),
                ('friction', False, "The URDF's joint damping and friction (MuJoCo damping, frictionloss).",
                 False),
                ('dt', 0.001, 'MuJoCo timestep, s.', False),
                ('integrator', 'RK4', f'MuJoCo integrator: one of {sorted(INTEGRATORS)}.', False),
                ('publish_rate', 500.0, 'joint_states rate, Hz (steady clock).', False),
                ('initial_positions', [], 'Initial joint positions in joint order; [] = zeros.', True),
                ('wait_for_command', True, 'No stepping until the first effort command.', False),
                ('command_timeout', 0.5, 'Simulated s without a command after which u = 0.', False),
                ('tip_link', 'tool0', 'Body external wrenches act on.', False)):
            p[name] = self.declare_parameter(name, default, _descriptor(description, dynamic)).value
        self.reported_effort = p['reported_effort']
        if self.reported_effort not in REPORTED_EFFORTS:
            raise ValueError(f'reported_effort must be one of {REPORTED_EFFORTS}, '
                             f'got {self.reported_effort!r}')
        for name in ('publish_rate', 'command_timeout'):
            if not (math.isfinite(p[name]) and p[name] > 0):
                raise ValueError(f'{name} must be a positive number, got {p[name]!r}')
        self.arm = MujocoArm(p['urdf_path'], joints=tuple(p['joints']),
                             firmware_gravity=p['firmware_gravity'], friction=p['friction'],
                             dt=float(p['dt']), integrator=p['integrator'], tip_link=p['tip_link'])
        self.joints, self.tip_link = self.arm.joints, p['tip_link']
        n = len(self.joints)
        q0 = np.asarray(p['initial_positions'], dtype=float)
        if q0.size not in (0, n) or not np.isfinite(q0).all():
            raise ValueError(f'initial_positions must be [] or {n} finite numbers, got {q0.tolist()}')
        self.arm.reset(q0 if q0.size else np.zeros(n))
        self.dt = float(p['dt'])
        self.command_timeout = float(p['command_timeout'])
        self._period = 1.0 / float(p['publish_rate'])
        self._max_owed = max(1, round(2 * self._period / self.dt))      # two publication periods
        self._tau = np.zeros(n)
        self._last_command = -math.inf          # simulated time of the last command
        self.running = not p['wait_for_command']
        self.dropped = 0.0                      # simulated seconds dropped (backlog)
        self._t0, self._stepped = time.monotonic(), 0

        self._pub = self.create_publisher(JointState, 'joint_states', 10)
        self.create_subscription(Float64MultiArray, 'effort_controller/commands', self._on_command, 10)
        self.create_subscription(WrenchStamped, '~/external_wrench', self._on_wrench, 10)
        # Steady clock, never the ROS clock (with use_sim_time the plant must not wait for /clock).
        self._timer = self.create_timer(self._period, self._tick,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))

    # -- inputs ------------------------------------------------------------------------------------
    def _on_command(self, msg):
        tau = np.asarray(msg.data, dtype=float)
        if tau.shape != (len(self.joints),) or not np.isfinite(tau).all():
            self.get_logger().warning(f'dropping an effort command of {tau.size} values (NaN/inf or not '
                                      f'one per joint of {list(self.joints)})', throttle_duration_sec=1.0)
            return
        self._tau = tau
        self._last_command = self.arm.time
        if not self.running:                    # the first command starts the clock
            self.running = True
            self._t0, self._stepped = time.monotonic(), 0

    def _on_wrench(self, msg):
        if msg.header.frame_id not in ('', self.tip_link):
            self.get_logger().warning(f"dropping an external wrench in frame '{msg.header.frame_id}': it "
                                      f"must be in the tip frame '{self.tip_link}' (or '')",
                                      throttle_duration_sec=1.0)
            return
        w = msg.wrench
        wrench = np.array([w.torque.x, w.torque.y, w.torque.z, w.force.x, w.force.y, w.force.z])
        if not np.isfinite(wrench).all():
            self.get_logger().warning('dropping a non-finite external wrench', throttle_duration_sec=1.0)
            return
        self.arm.set_tip_wrench(wrench)

    # -- stepping ------------------------------------------------------------------------------------
    def _tick(self):
        if self.running:
            owed = int((time.monotonic() - self._t0) / self.dt) - self._stepped
            if owed > self._max_owed:           # drop the backlog: run late, not open loop in bursts
                self.dropped += (owed - self._max_owed) * self.dt
                self._stepped += owed - self._max_owed
                owed = self._max_owed
            if owed <= 0:
                return
            for _ in range(owed):
                fresh = self.arm.time - self._last_command <= self.command_timeout
                self.arm.command(self._tau if fresh else 0.0 * self._tau)
                self.arm.step()
            self._stepped += owed
        self.arm.forward()
        # before the first command the arm is held as on its brakes: the sensors read what holds it
        efforts = (self.arm.efforts if self.running else self.arm.holding_efforts)(self.reported_effort)
        msg = JointState(name=list(self.joints), position=self.arm.q.tolist(), velocity=self.arm.qd.tolist(),
                         effort=efforts.tolist())
        msg.header.stamp = self.get_clock().now().to_msg()
        self._pub.publish(msg)


def main(args=None):
    """Run the plant on its own: ``python test/plants/mujoco_firmware_plant.py --ros-args -p ...``."""
    import rclpy

    rclpy.init(args=args)
    node = MujocoFirmwarePlant()
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
