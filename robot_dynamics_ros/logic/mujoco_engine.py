"""The simulator's MuJoCo engine, ROS-free: the arm compiled by MuJoCo, in a world of objects it can touch.

``MujocoEngine`` steps the same equation of motion as the rigid-body engine
(``logic/rigid_body_engine.py``; the Simulation's engine protocol is documented there),

    M(q) q̈ + c(q, q̇) + g(q) + τ_friction + τ_limits = τ + Σ_k J_kᵀ f_k                 (1)

but with MuJoCo's dynamics of MuJoCo's model, and with contacts: f_k are the forces of the contacts
MuJoCo's solver finds between the arm's collision geometry and the world (or itself), τ_limits the
joint limits as MuJoCo's soft constraints. With the friction off and nothing touching, (1) is the
package's own equation of motion: MuJoCo compiled from the same URDF has the same M, c and g
(test/reference/test_ref_mujoco_engine.py measures it), so it is an independent judge of the
controllers where it should agree, and a richer world where it should not.

The model (``compile_spec``):

- from the URDF the controllers use (``urdf_xml``), compiled by MuJoCo's URDF importer with the
  options of ``COMPILER``: every link kept as a body (``fusestatic`` false: the tool frame is a body,
  where external wrenches act), the URDF's inertias as they are, visuals dropped unless
  ``keep_visuals``. Mesh file names (``package://``, ``file://``, relative) are resolved as the viewer
  resolves them (``robot_body.resolve_mesh``); STL, OBJ and MSH go to MuJoCo as files, any other format
  trimesh reads (DAE) is handed over as vertices and faces;
- or from an MJCF file (``mjcf_path``, e.g. a MuJoCo Menagerie arm) while the URDF stays the
  controllers' model: the arm's joints are matched by name (``ValueError`` naming the joints MuJoCo's
  model lacks); the MJCF's actuators are removed (the arm takes effort commands, not its servos);
- a world (``world_path``): an MJCF whose worldbody (floor, tables, boxes, free objects) is attached to
  the scene by ``MjSpec.attach`` with the prefix ``world/``;
- joint torques: the simulator's applied torque τ goes to MuJoCo as ``qfrc_applied`` of the arm's
  degrees of freedom (saturation and any firmware terms are the Simulation's, as with the rigid-body
  engine); an external wrench at the tip as ``xfrc_applied`` of the tip body (``tip_wrench_to_xfrc``);
- friction (the Simulation's ``friction`` setting): the URDF's <dynamics damping> is MuJoCo's viscous
  joint ``damping`` (the package's F_v q̇, the same), its <dynamics friction> MuJoCo's ``frictionloss``:
  dry friction as a soft constraint of the solver, |τ_f| ≤ F_s, that holds a joint at rest against
  smaller torques — where the package's model is Coulomb friction F_s tanh(q̇ / v_s), smoothed near
  zero velocity (``dynamics/friction.py``), which lets a joint creep under any torque. With friction
  false both are zero. Armature: the controllers' model's (``Model`` armature, also the ``armature``
  parameter) for a URDF; an MJCF's own;
- joint limits: MuJoCo's (the URDF's <limit lower upper> as ranges), soft constraints, where the
  rigid-body engine has hard stops;
- self-collision of the arm is off unless ``self_collision`` (meshes of neighbouring links overlap at
  their joints): the arm's geoms get ``contype`` 2, ``conaffinity`` 1, so they touch the world
  (``contype`` 1 by default) and not each other.

Ground truth of the contacts (``contacts``, ``contact_torques``), at the current state: for each contact
k of an arm body with anything (MuJoCo's ``mj_contactForce``, the force f_k, in world coordinates,
that the other geom exerts on the arm's, and, with ``condim`` 4 or 6, a torsional / rolling torque),
the joint torques it exerts on the arm are

    τ_contact = Σ_k J_p,kᵀ f_k + J_r,kᵀ m_k                                              (2)

with J_p,k the Jacobian (``mj_jac``) of the contact point fixed in the arm's body and J_r,k its
rotational part, columns of the arm's coordinates: what an external-torque estimator should find.

Units: SI; joint vectors in the controllers' model order (``model.joint_names``); positions and
forces of contacts in MuJoCo's world frame, which is the URDF's root link frame for a URDF, and a
wrench (m, f) angular first as everywhere in the package (MuJoCo's own arrays are force first).
"""

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from robot_dynamics_ros.dynamics.spatial import exp_coordinates
from robot_dynamics_ros.logic.robot_body import MeshNotFound, read_mesh, resolve_mesh

__all__ = ['COMPILER', 'INTEGRATORS', 'MESH_FILES', 'POINT_MASS_INERTIA', 'WORLD_PREFIX', 'Contact',
           'MujocoEngine', 'compile_spec', 'tip_wrench_to_xfrc']

# MuJoCo's URDF options (<mujoco><compiler/></mujoco> inside <robot>), module docstring.
COMPILER = {'discardvisual': 'true', 'fusestatic': 'false', 'balanceinertia': 'false',
            'inertiafromgeom': 'false', 'strippath': 'false', 'angle': 'radian'}
INTEGRATORS = {'rk4': mujoco.mjtIntegrator.mjINT_RK4,
               'semi_implicit_euler': mujoco.mjtIntegrator.mjINT_EULER,
               'implicitfast': mujoco.mjtIntegrator.mjINT_IMPLICITFAST}
MESH_FILES = ('.stl', '.obj', '.msh')       # MuJoCo reads these itself
WORLD_PREFIX = 'world/'                     # names of the world file's elements in the scene
ARM_CONTYPE, ARM_CONAFFINITY = 2, 1         # arm geoms: touch the world, not each other
POINT_MASS_INERTIA = 1e-9                   # kg m², added to a payload's principal moments
_MOVING_JOINTS = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)


@dataclass(frozen=True)
class Contact:
    """One contact on the arm at the current state (world coordinates, m, N, N m).

    ``body``: the arm's body (link) touched; ``other``: what touches it (geom name, else its body's);
    ``position``: the contact point; ``normal``: unit normal pointing from ``other`` into ``body``;
    ``force``: the force ``other`` exerts on ``body``; ``torque``: its torsional/rolling torque (zeros
    with condim 3); ``depth``: penetration, m (> 0 when the geoms overlap).
    """

    body: str
    other: str
    position: np.ndarray
    normal: np.ndarray
    force: np.ndarray
    torque: np.ndarray
    depth: float


def tip_wrench_to_xfrc(wrench, rotation, origin, com):
    """A wrench (m, f) on a body at its frame origin, in the body frame's axes -> MuJoCo's
    ``xfrc_applied`` row (f, m): force first, world axes, the torque about the body's centre of mass:

        f_w = R f,    m_com = R m + (p_origin − p_com) × f_w.

    ``rotation``: the body frame in the world (``xmat``); ``origin``, ``com``: ``xpos``, ``xipos`` (m).

    >>> tip_wrench_to_xfrc(np.array([0, 0, 0, 0, 0, 1.0]), np.eye(3), np.zeros(3),
    ...                    np.array([1.0, 0, 0])).tolist()
    [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    """
    rotation = np.asarray(rotation, dtype=np.float64).reshape(3, 3)
    force = rotation @ np.asarray(wrench[3:], dtype=np.float64)
    torque = rotation @ np.asarray(wrench[:3], dtype=np.float64) + np.cross(
        np.asarray(origin, dtype=np.float64) - np.asarray(com, dtype=np.float64), force)
    return np.concatenate([force, torque])


# -- the model --------------------------------------------------------------------------------------
def _urdf_for_mujoco(urdf_xml, resolve, keep_visuals):
    """(URDF text for MuJoCo's importer, {file name: trimesh} of meshes MuJoCo cannot read).

    The <mujoco><compiler/></mujoco> element of COMPILER goes first in <robot>; every mesh file name is
    replaced by the absolute path ``resolve`` finds (MeshNotFound says where it looked); meshes that are
    not STL/OBJ/MSH are loaded by trimesh, to be handed to MuJoCo as vertices and faces."""
    root = ET.fromstring(urdf_xml)
    for old in root.findall('mujoco'):
        root.remove(old)
    options = dict(COMPILER, discardvisual='false' if keep_visuals else 'true')
    element = ET.Element('mujoco')
    ET.SubElement(element, 'compiler', options)
    root.insert(0, element)
    converted = {}
    kinds = ('collision', 'visual') if keep_visuals else ('collision',)
    for link in root.findall('link'):
        for kind in ('collision', 'visual'):
            for geometry in link.findall(f'{kind}/geometry'):
                mesh = geometry.find('mesh')
                if mesh is None:
                    continue
                if kind not in kinds:              # dropped by discardvisual: never looked up
                    geometry.remove(mesh)
                    ET.SubElement(geometry, 'sphere', radius='0.001')
                    continue
                path = str(resolve(mesh.get('filename', '')))
                mesh.set('filename', path)
                if not path.lower().endswith(MESH_FILES):
                    converted[path] = read_mesh(path)
    return ET.tostring(root, encoding='unicode'), converted


def _read_spec(path, what):
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{what} '{path}' is not a file")
    try:
        return mujoco.MjSpec.from_file(str(path))
    except Exception as exc:       # MuJoCo's parse errors name the line
        raise ValueError(f"{what} '{path}' is not an MJCF MuJoCo can read: {exc}") from None


def compile_spec(urdf_xml, *, mjcf_path='', world_path='', keep_visuals=False, package_paths=(),
                 base_dir=None):
    """The MjSpec of the scene (module docstring): the arm from ``mjcf_path`` or else ``urdf_xml``, the
    world of ``world_path`` attached. ValueError naming the file that cannot be used."""
    if mjcf_path:
        spec = _read_spec(mjcf_path, 'mjcf_path')
        for actuator in list(spec.actuators):
            spec.delete(actuator)
    else:
        def resolve(filename):
            return resolve_mesh(filename, package_paths, base_dir)

        try:
            text, converted = _urdf_for_mujoco(urdf_xml, resolve, keep_visuals)
        except MeshNotFound as exc:
            raise ValueError(str(exc)) from None
        try:
            spec = mujoco.MjSpec.from_string(text)
        except Exception as exc:       # a URDF MuJoCo's importer does not take (MuJoCo says why)
            raise ValueError(f'MuJoCo cannot import the URDF: {exc}') from None
        for mesh in spec.meshes:
            loaded = converted.get(mesh.file)
            if loaded is not None:               # handed over as vertices and faces
                mesh.file = ''
                mesh.uservert = np.asarray(loaded.vertices, dtype=np.float32).ravel()
                mesh.userface = np.asarray(loaded.faces, dtype=np.int32).ravel()
    if world_path:
        world = _read_spec(world_path, 'world_path')
        try:
            spec.attach(world, prefix=WORLD_PREFIX, frame=spec.worldbody.add_frame())
        except Exception as exc:       # (names that clash, a world MuJoCo cannot attach)
            raise ValueError(f"world_path '{world_path}' cannot be attached: {exc}") from None
    return spec


def _subtree(body):
    names = [body.name]
    for child in body.bodies:
        names += _subtree(child)
    return names


# -- the engine -------------------------------------------------------------------------------------
class MujocoEngine:
    """The Simulation's engine on MuJoCo (module docstring; protocol: ``logic/rigid_body_engine.py``).

    Args:
        model: the controllers' Model (joint names and order, tip frame, armature).
        urdf_xml: the URDF text ``model`` was built from (compiled unless ``mjcf_path``).
        dt: the step, s; integrator: a key of INTEGRATORS.
        mjcf_path, world_path, keep_visuals, package_paths, base_dir: ``compile_spec``.
        self_collision: the arm's geoms touch each other.

    ``q``, ``qd`` are the arm's coordinates (model order); ``qpos``/``qvel`` of the world's free
    objects are MuJoCo's and reset with the arm.
    """

    name = 'mujoco'
    integrators = tuple(INTEGRATORS)

    def __init__(self, model, urdf_xml, dt, integrator='rk4', *, mjcf_path='', world_path='',
                 keep_visuals=False, package_paths=(), base_dir=None, self_collision=False):
        if integrator not in INTEGRATORS:
            raise ValueError(f'integrator must be one of {sorted(INTEGRATORS)} with engine mujoco, '
                             f'got {integrator!r}')
        self.model = model
        self.spec = compile_spec(urdf_xml, mjcf_path=mjcf_path, world_path=world_path,
                                 keep_visuals=keep_visuals, package_paths=package_paths, base_dir=base_dir)
        joints = {j.name: j for j in self.spec.joints if j.type in _MOVING_JOINTS}
        missing = [name for name in model.body_joint_names if name not in joints]
        if missing:
            raise ValueError(f"the MuJoCo model ({mjcf_path or 'the URDF'}) has no joints {missing} of the "
                             f'controllers\' model (its moving joints: {sorted(joints)})')
        self._mimic_equalities()
        self.arm_bodies = frozenset(name for joint in model.body_joint_names
                                    for name in _subtree(joints[joint].parent))
        if not self_collision:
            for geom in self.spec.geoms:
                if geom.parent.name in self.arm_bodies and (geom.contype or geom.conaffinity):
                    geom.contype, geom.conaffinity = ARM_CONTYPE, ARM_CONAFFINITY
        self.spec.option.timestep = float(dt)
        self.spec.option.integrator = INTEGRATORS[integrator]
        try:
            self.mj = self.spec.compile()
        except Exception as exc:       # a mesh MuJoCo cannot read, a bad world: MuJoCo says which
            raise ValueError(f'MuJoCo cannot compile the scene: {exc}') from None
        self.data = mujoco.MjData(self.mj)
        self._index(model)
        self._damping = self.mj.dof_damping.copy()
        self._frictionloss = self.mj.dof_frictionloss.copy()
        self._friction = True
        self._armature_from_model = not mjcf_path       # an MJCF's armature is its own
        if self._armature_from_model:
            self.mj.dof_armature[self.dof] = model.armature
        self._wrench = None         # on the robot at the tip, tip axes (m, f)
        self._current = False       # data's forward quantities belong to the current state
        self.reset(np.zeros(model.nq), np.zeros(model.nq))

    def _mimic_equalities(self):
        """MuJoCo joint equalities q_i = o_i + m_i q_c for URDF <mimic> joints the importer left free."""
        coupled = {(eq.name1, eq.name2) for eq in self.spec.equalities
                   if eq.type == mujoco.mjtEq.mjEQ_JOINT}
        for name, (followed, multiplier, offset) in self.model.mimic.items():
            if (name, followed) not in coupled:
                self.spec.add_equality(type=mujoco.mjtEq.mjEQ_JOINT, name1=name, name2=followed,
                                       data=[offset, multiplier, 0, 0, 0, 0, 0, 0, 0, 0, 0])

    def _index(self, model):
        m = self.mj
        ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name) for name in model.joint_names]
        self.qpos = np.array([m.jnt_qposadr[i] for i in ids])      # the arm's coordinates in qpos
        self.dof = np.array([m.jnt_dofadr[i] for i in ids])        # ... in qvel
        ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name) for name in model.body_joint_names]
        self._body_qpos = np.array([m.jnt_qposadr[i] for i in ids])   # every moving joint's, mimic too
        self._body_dof = np.array([m.jnt_dofadr[i] for i in ids])
        self._arm_body_of = {m.body(i).name: i for i in range(m.nbody) if m.body(i).name in self.arm_bodies}
        self._arm_body_ids = frozenset(self._arm_body_of.values())
        self.tip_body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, model.tip_frame or '')
        self._jacp, self._jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        self._velocity = np.zeros(6)      # the tip's (ω, v) in world axes (mj_objectVelocity)

    # -- the protocol -------------------------------------------------------------------------------
    q = property(lambda self: self.data.qpos[self.qpos].copy(), doc="The arm's joint positions.")
    qd = property(lambda self: self.data.qvel[self.dof].copy(), doc="The arm's joint velocities.")

    def set_integrator(self, name):
        if name not in INTEGRATORS:
            raise ValueError(f'integrator must be one of {sorted(INTEGRATORS)} with engine mujoco, '
                             f'got {name!r}')
        self.mj.opt.integrator = INTEGRATORS[name]

    def set_model(self, model):
        """Another armature of the same arm, from the current state on (payloads: ``set_payload``)."""
        self.model = model
        if self._armature_from_model:
            self.mj.dof_armature[self.dof] = model.armature

    def set_payload(self, mass, com, inertia, frame):
        """A rigid payload of ``mass`` kg, centre of mass ``com`` (m) and ``inertia`` (3, 3) about it,
        in the axes of body ``frame``, fixed to that body (plus ``POINT_MASS_INERTIA`` on the diagonal);
        mass 0 removes it. MuJoCo recompiles the model and keeps the state (``MjSpec.recompile``)."""
        payload = self.spec.body('payload')
        if payload is not None:
            self.spec.delete(payload)
        elif mass <= 0:
            return                                  # none before, none now
        if mass > 0:
            body = self.spec.body(frame)
            if body is None:
                raise ValueError(f'the payload frame {frame!r} is not a body of the MuJoCo model')
            # MuJoCo wants positive principal moments: a point mass gets 1e-9 kg m² about each axis
            inertia = np.asarray(inertia, dtype=np.float64) + POINT_MASS_INERTIA * np.eye(3)
            body.add_body(name='payload', explicitinertial=True, mass=float(mass),
                          ipos=np.asarray(com, dtype=np.float64),
                          fullinertia=[inertia[0, 0], inertia[1, 1], inertia[2, 2],
                                       inertia[0, 1], inertia[0, 2], inertia[1, 2]])
        self.mj, self.data = self.spec.recompile(self.mj, self.data)
        self.mj.dof_damping[:], self.mj.dof_frictionloss[:] = self._damping, self._frictionloss
        self._friction = True
        if self._armature_from_model:
            self.mj.dof_armature[self.dof] = self.model.armature
        self._index(self.model)
        self._current = False

    def reset(self, q, qd):
        """The arm at (q, q̇) (mimic joints where they follow: q_i = m_i q[c_i] + o_i), the world's
        objects where its file puts them, no wrench."""
        mujoco.mj_resetData(self.mj, self.data)
        self.data.qpos[self._body_qpos] = self.model.body_positions(q)
        self.data.qvel[self._body_dof] = self.model.body_velocities(qd)
        self._wrench = None
        self._current = False

    def step(self, tau, f_tip=None, friction=False):
        """One MuJoCo step of dt under the applied torque ``tau`` (model order) and the wrench
        ``f_tip`` (m, f) the robot exerts on the environment at the tip frame (None: none)."""
        self._set_friction(friction)
        self.data.qfrc_applied[self.dof] = tau
        self._set_wrench(None if f_tip is None else -np.asarray(f_tip, dtype=np.float64))
        self._checked_step()

    def _checked_step(self):
        """mj_step; FloatingPointError when MuJoCo found the state unstable (a NaN or huge acceleration:
        MuJoCo then resets its data to the model's reference pose, which must not pass for a state)."""
        warnings = self.data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number
        mujoco.mj_step(self.mj, self.data)
        self._current = False
        if self.data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number != warnings:
            raise FloatingPointError(f'MuJoCo: unstable at simulated time {self.data.time:.3f} s '
                                     '(NaN or huge acceleration)')

    def hold(self):
        """A step with the arm on its brakes: it stays where it is, at rest; the world moves on."""
        q = self.data.qpos[self.qpos].copy()
        self.data.qvel[self.dof] = 0.0
        self.data.qfrc_applied[self.dof] = 0.0
        self._checked_step()
        self.data.qpos[self.qpos] = q
        self.data.qvel[self.dof] = 0.0

    def holding_torques(self):
        """The torque that holds the arm still where it is: MuJoCo's bias force at rest, g(q)."""
        qvel = self.data.qvel.copy()
        self.data.qvel[:] = 0.0
        mujoco.mj_forward(self.mj, self.data)
        torques = self._folded(self.data.qfrc_bias)
        self.data.qvel[:] = qvel
        self._current = False
        return torques

    def _folded(self, generalized_forces):
        """MuJoCo's generalized forces on the arm's joints as forces on the model's coordinates,
        τ_coordinates = Gᵀ τ_joints (a mimic joint's adds m_i times its own to the joint it follows)."""
        torques = np.zeros(self.model.nq)
        np.add.at(torques, self.model.body_coordinate,
                  self.model.body_multiplier * generalized_forces[self._body_dof])
        return torques

    @staticmethod
    def warm_up_calls(model, dt, integrator='rk4', friction=True):
        """None: MuJoCo's step is compiled already (the engine protocol)."""
        return ()

    # -- inputs ---------------------------------------------------------------------------------------
    def _set_friction(self, friction):
        friction = bool(friction)
        if friction != self._friction:
            self.mj.dof_damping[:] = self._damping if friction else 0.0
            self.mj.dof_frictionloss[:] = self._frictionloss if friction else 0.0
            self._friction = friction

    def _set_wrench(self, on_robot):
        if on_robot is None or not on_robot.any():
            if self._wrench is not None and self.tip_body >= 0:
                self.data.xfrc_applied[self.tip_body] = 0.0
            self._wrench = None
            return
        if self.tip_body < 0:
            raise ValueError(f'the tip frame {self.model.tip_frame!r} is not a body of the MuJoCo model')
        self._wrench = on_robot
        # The wrench turns with the tip; xfrc_applied is held fixed in the world during the step: it
        # is expressed in the tip's axes at mid-step, R(t + dt/2) = exp([ω] dt/2) R(t) (ω: the tip's
        # angular velocity in the world), which keeps the step second-order accurate (at the pose of
        # the step's start the error would grow as dt).
        m, d, b = self.mj, self.data, self.tip_body
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_comVel(m, d)
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, b, self._velocity, 0)   # world axes
        half_step = 0.5 * m.opt.timestep
        half_turn = exp_coordinates(np.concatenate([self._velocity[:3] * half_step, np.zeros(3)]))
        R = d.xmat[b].reshape(3, 3)
        rotation = half_turn[:3, :3] @ R
        origin, com = d.xpos[b], d.xipos[b]
        arm = rotation @ (R.T @ (com - origin))     # the centre of mass at mid-step, from the origin
        d.xfrc_applied[b] = tip_wrench_to_xfrc(on_robot, rotation, origin, origin + arm)

    # -- ground truth ---------------------------------------------------------------------------------
    def _forward(self):
        if not self._current:
            mujoco.mj_forward(self.mj, self.data)
            self._current = True

    def contacts(self):
        """The contacts on the arm at the current state (``Contact``, module docstring)."""
        self._forward()
        m, d = self.mj, self.data
        found = []
        wrench = np.zeros(6)
        arm = self._arm_body_ids
        for k in range(d.ncon):
            contact = d.contact[k]
            b1, b2 = int(m.geom_bodyid[contact.geom1]), int(m.geom_bodyid[contact.geom2])
            if b1 not in arm and b2 not in arm:             # (the world's objects among themselves)
                continue
            mujoco.mj_contactForce(m, d, k, wrench)
            frame = contact.frame.reshape(3, 3)      # rows: normal (geom1 -> geom2), tangents
            on_geom2 = frame.T @ wrench[:3], frame.T @ wrench[3:]
            for body, other, sign in ((b2, contact.geom1, 1.0), (b1, contact.geom2, -1.0)):
                if body in arm:
                    found.append(Contact(
                        body=m.body(body).name,
                        other=m.geom(other).name or m.body(m.geom_bodyid[other]).name,
                        position=contact.pos.copy(), normal=sign * frame[0].copy(),
                        force=sign * on_geom2[0], torque=sign * on_geom2[1], depth=-float(contact.dist)))
        return found

    def contact_torques(self, contacts=None):
        """τ_contact (2), model order: the joint torques the contacts exert on the arm (folded onto the
        coordinates as ``_folded`` says)."""
        contacts = self.contacts() if contacts is None else contacts
        tau = np.zeros(self.mj.nv)
        for contact in contacts:
            body = self._arm_body_of[contact.body]
            mujoco.mj_jac(self.mj, self.data, self._jacp, self._jacr, contact.position, body)
            tau += self._jacp.T @ contact.force + self._jacr.T @ contact.torque     # J_pᵀ f + J_rᵀ m
        return self._folded(tau)

    def body_pose(self, name):
        """(R (3, 3), p (3,)) of body ``name`` in MuJoCo's world, or None when it is not a body."""
        body = mujoco.mj_name2id(self.mj, mujoco.mjtObj.mjOBJ_BODY, name)
        if body < 0:
            return None
        mujoco.mj_kinematics(self.mj, self.data)
        return self.data.xmat[body].reshape(3, 3).copy(), self.data.xpos[body].copy()

