"""Seeded random kinematic trees written as URDF strings, and hand-made URDF edits to compare against.

A `Tree` is a plain description (links with optional inertials, joints with origins) that renders
to URDF text, so every test model goes through `load_urdf`. The edits (`merge_fixed_by_hand`,
`lock_by_hand`, `fix_joints`, `subtree`) rewrite the description the way a person would rewrite the
URDF by hand; they use only the rotation formulas below, not the loader's code, so comparing the
two models checks the loader's fixed-joint merging and joint locking independently.

Everything is driven by `numpy.random.default_rng(seed)`: the same seed gives the same URDF text.
"""
from __future__ import annotations

import copy
import dataclasses

import numpy as np

MOVING = ("revolute", "continuous", "prismatic")


# -- rotations, written out independently of robot_dynamics_ros.dynamics.spatial -------------------
def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy_matrix(rpy):
    """URDF convention: roll about x, then pitch about y, then yaw about z, all fixed axes."""
    return rot_z(rpy[2]) @ rot_y(rpy[1]) @ rot_x(rpy[0])


def matrix_rpy(R):
    """Inverse of rpy_matrix away from pitch = ±π/2 (checked by the caller's round trip)."""
    pitch = np.arcsin(np.clip(-R[2, 0], -1.0, 1.0))
    roll = np.arctan2(R[2, 1], R[2, 2])
    yaw = np.arctan2(R[1, 0], R[0, 0])
    rpy = np.array([roll, pitch, yaw])
    assert np.allclose(rpy_matrix(rpy), R, atol=1e-12), "rpy extraction near gimbal lock"
    return rpy


def axis_angle(axis, angle):
    """Rodrigues' formula."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * K @ K


def homogeneous(R, p):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def random_rotation(rng):
    """Uniform on SO(3) (QR of a Gaussian matrix, sign-fixed)."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q @ np.diag(np.sign(np.diag(R)))
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def random_rpy(rng):
    # pitch kept away from ±π/2 so that hand edits can round-trip rotations through rpy
    return np.array([rng.uniform(-np.pi, np.pi), rng.uniform(-1.3, 1.3), rng.uniform(-np.pi, np.pi)])


# -- the description -------------------------------------------------------------------------------
@dataclasses.dataclass
class Inertial:
    mass: float
    xyz: np.ndarray        # centre of mass in the link frame
    rpy: np.ndarray        # orientation of the inertia axes in the link frame
    inertia: np.ndarray    # 3x3 rotational inertia about the centre of mass, in the inertia axes

    def in_link_frame(self):
        """(m, c, I_c in link axes): I' = R I Rᵀ."""
        R = rpy_matrix(self.rpy)
        return self.mass, np.array(self.xyz, float), R @ self.inertia @ R.T


@dataclasses.dataclass
class Link:
    name: str
    inertial: Inertial | None = None


@dataclasses.dataclass
class Joint:
    name: str
    type: str
    parent: str
    child: str
    xyz: np.ndarray
    rpy: np.ndarray
    axis: np.ndarray | None = None
    lower: float | None = None
    upper: float | None = None
    effort: float | None = None
    velocity: float | None = None
    damping: float | None = None
    friction: float | None = None

    def origin(self):
        return homogeneous(rpy_matrix(self.rpy), self.xyz)


def _f(x):
    return repr(float(x))


def _v(x):
    return " ".join(_f(c) for c in x)


@dataclasses.dataclass
class Tree:
    name: str
    links: list
    joints: list

    @property
    def root(self):
        children = {j.child for j in self.joints}
        (root,) = [link.name for link in self.links if link.name not in children]
        return root

    def link(self, name):
        return next(link for link in self.links if link.name == name)

    def joint(self, name):
        return next(j for j in self.joints if j.name == name)

    def parent_joint(self, link):
        return next((j for j in self.joints if j.child == link), None)

    def moving_joints(self):
        return [j for j in self.joints if j.type in MOVING]

    def dfs_joint_order(self, root=None):
        """Moving joints depth first from the root, children in file order (the documented model order)."""
        start = root or self.root
        order, stack = [], [start]
        while stack:
            name = stack.pop()
            joint = self.parent_joint(name)
            if name != start and joint.type in MOVING:
                order.append(joint.name)
            stack.extend(j.child for j in reversed([j for j in self.joints if j.parent == name]))
        return order

    def copy(self):
        return copy.deepcopy(self)

    def to_urdf(self):
        out = ['<?xml version="1.0"?>', f'<robot name="{self.name}">']
        for link in self.links:
            if link.inertial is None:
                out.append(f'  <link name="{link.name}"/>')
                continue
            i = link.inertial
            I = i.inertia
            out += [f'  <link name="{link.name}">',
                    '    <inertial>',
                    f'      <origin xyz="{_v(i.xyz)}" rpy="{_v(i.rpy)}"/>',
                    f'      <mass value="{_f(i.mass)}"/>',
                    f'      <inertia ixx="{_f(I[0, 0])}" ixy="{_f(I[0, 1])}" ixz="{_f(I[0, 2])}" '
                    f'iyy="{_f(I[1, 1])}" iyz="{_f(I[1, 2])}" izz="{_f(I[2, 2])}"/>',
                    '    </inertial>',
                    '  </link>']
        for j in self.joints:
            out += [f'  <joint name="{j.name}" type="{j.type}">',
                    f'    <parent link="{j.parent}"/>',
                    f'    <child link="{j.child}"/>',
                    f'    <origin xyz="{_v(j.xyz)}" rpy="{_v(j.rpy)}"/>']
            if j.type in MOVING:
                out.append(f'    <axis xyz="{_v(j.axis)}"/>')
                bounds = "" if j.type == "continuous" else f'lower="{_f(j.lower)}" upper="{_f(j.upper)}" '
                out.append(f'    <limit {bounds}effort="{_f(j.effort)}" velocity="{_f(j.velocity)}"/>')
                out.append(f'    <dynamics damping="{_f(j.damping)}" friction="{_f(j.friction)}"/>')
            out.append('  </joint>')
        out.append('</robot>')
        return "\n".join(out) + "\n"


# -- the generator ---------------------------------------------------------------------------------
def random_inertial(rng, mass=None):
    """A physically consistent inertial: I = tr(Σ) 1 − Σ for a random positive-definite second-moment
    matrix Σ (so the triangle inequalities hold), non-diagonal in its own axes, rotated by a random rpy
    and placed at a random centre of mass."""
    m = rng.uniform(0.5, 3.0) if mass is None else mass
    Q = random_rotation(rng)
    Sigma = Q @ np.diag(m * rng.uniform(0.002, 0.03, 3)) @ Q.T
    I = np.trace(Sigma) * np.eye(3) - Sigma
    return Inertial(m, rng.uniform(-0.15, 0.15, 3), random_rpy(rng), 0.5 * (I + I.T))


def random_unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_tree(seed, n, *, types=MOVING, p_fixed=0.35, p_frame=0.25, chain=False, root_inertial=True):
    """A random kinematic tree with n moving joints, as a Tree (render with .to_urdf()).

    Each moving joint hangs from a random earlier link (half the time the newest moving link, so that
    trees grow deep as well as wide; always the newest when chain=True), with a random unit axis, a
    random origin (xyz within ±0.3 m, random rpy) and a child link with a random inertial (mass
    0.5–3 kg, centre of mass within ±0.15 m, random inertia axes). With probability p_fixed a moving
    link carries a massive link on a fixed joint (merged by the loader; later joints may hang from
    it), with probability p_frame a massless fixed frame; the last moving link carries 'tool0'.
    Joint types are drawn from `types`; limits, damping and friction are random and positive.
    """
    rng = np.random.default_rng(seed)
    links = [Link("base_link", random_inertial(rng) if root_inertial else None)]
    joints = []
    attach = ["base_link"]          # links a later joint may hang from
    newest = "base_link"
    for k in range(1, n + 1):
        parent = newest if chain or rng.random() < 0.5 else attach[rng.integers(len(attach))]
        kind = types[rng.integers(len(types))]
        child = f"link{k}"
        lower, upper = (-rng.uniform(0.5, 3.0), rng.uniform(0.5, 3.0)) if kind == "revolute" else \
            (-rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5))
        joints.append(Joint(f"joint{k}", kind, parent, child, rng.uniform(-0.3, 0.3, 3), random_rpy(rng),
                            axis=random_unit(rng), lower=lower, upper=upper, effort=rng.uniform(10, 200),
                            velocity=rng.uniform(1, 5), damping=rng.uniform(0.05, 0.5),
                            friction=rng.uniform(0.01, 0.2)))
        links.append(Link(child, random_inertial(rng)))
        attach.append(child)
        newest = child
        if not chain and rng.random() < p_fixed:
            name = f"link{k}_fixed"
            joints.append(Joint(f"joint{k}_fixed", "fixed", child, name, rng.uniform(-0.3, 0.3, 3),
                                random_rpy(rng)))
            links.append(Link(name, random_inertial(rng)))
            attach.append(name)
        if not chain and rng.random() < p_frame:
            name = f"frame{k}"
            joints.append(Joint(f"joint{k}_frame", "fixed", child, name, rng.uniform(-0.2, 0.2, 3),
                                random_rpy(rng)))
            links.append(Link(name))
            attach.append(name)
    joints.append(Joint("tool0_joint", "fixed", newest, "tool0", rng.uniform(-0.2, 0.2, 3), random_rpy(rng)))
    links.append(Link("tool0"))
    return Tree(f"random_tree_{seed}_{n}", links, joints)


def random_state(model, rng, scale=1.0):
    """(q, qd, qdd): revolute angles uniform in ±π, prismatic ±0.3 m, rates and accelerations N(0, scale²)."""
    prismatic = np.array([t == "prismatic" for t in model.joint_types])
    q = np.where(prismatic, rng.uniform(-0.3, 0.3, model.nq), rng.uniform(-np.pi, np.pi, model.nq))
    return q, scale * rng.normal(size=model.nq), scale * rng.normal(size=model.nq)


# -- hand edits of a description --------------------------------------------------------------------
def combine_inertials(parts):
    """One inertial (in the common frame, identity rpy) from [(m, c, I_c in common axes)]:
    masses add, the centre of mass is the mass-weighted mean, each I_c moves to it by the
    parallel-axis theorem I + m(|d|² 1 − d dᵀ)."""
    m = sum(p[0] for p in parts)
    c = sum(p[0] * p[1] for p in parts) / m
    I = np.zeros((3, 3))
    for mk, ck, Ik in parts:
        d = ck - c
        I += Ik + mk * (d @ d * np.eye(3) - np.outer(d, d))
    return Inertial(m, c, np.zeros(3), 0.5 * (I + I.T))


def merge_fixed_by_hand(tree, keep=()):
    """The same robot with every fixed joint (except those whose child is in `keep`) removed: the
    child's inertial is moved into the parent link frame (c' = T c, I' = R I Rᵀ) and combined, and
    the child's joints are re-attached to the parent with origin T_fixed · T_origin."""
    t = tree.copy()
    while True:
        joint = next((j for j in t.joints if j.type == "fixed" and j.child not in keep), None)
        if joint is None:
            return t
        T = joint.origin()
        parent, child = t.link(joint.parent), t.link(joint.child)
        if child.inertial is not None and parent.name != t.root:
            m, c, I = child.inertial.in_link_frame()
            parts = [(m, T[:3, :3] @ c + T[:3, 3], T[:3, :3] @ I @ T[:3, :3].T)]
            if parent.inertial is not None:
                parts.append(parent.inertial.in_link_frame())
            parent.inertial = combine_inertials(parts)
        for j in t.joints:
            if j.parent == child.name:
                To = T @ j.origin()
                j.parent, j.xyz, j.rpy = parent.name, To[:3, 3], matrix_rpy(To[:3, :3])
        t.joints.remove(joint)
        t.links.remove(child)


def lock_by_hand(tree, positions):
    """The same robot with each named joint replaced by a fixed joint whose origin includes the joint's
    motion at the given position (rotation about / translation along the axis in the child frame)."""
    t = tree.copy()
    for name, value in positions.items():
        j = t.joint(name)
        if j.type == "prismatic":
            motion = homogeneous(np.eye(3), np.asarray(j.axis) / np.linalg.norm(j.axis) * value)
        else:
            motion = homogeneous(axis_angle(j.axis, value), np.zeros(3))
        To = j.origin() @ motion
        j.type, j.xyz, j.rpy = "fixed", To[:3, 3], matrix_rpy(To[:3, :3])
    return t


def fix_joints(tree, names):
    """The same robot with the named joints turned into fixed joints (at position 0)."""
    return lock_by_hand(tree, {name: 0.0 for name in names})


def subtree(tree, root):
    """Only the links at and below `root` (the URDF a user would write for that part of the robot)."""
    keep, frontier = {root}, [root]
    while frontier:
        name = frontier.pop()
        for j in tree.joints:
            if j.parent == name:
                keep.add(j.child)
                frontier.append(j.child)
    t = tree.copy()
    t.links = [link for link in t.links if link.name in keep]
    t.joints = [j for j in t.joints if j.parent in keep and j.child in keep]
    return t


def chain_to(tree, tip):
    """Joint names on the path from the root to link `tip`."""
    names, link = [], tip
    while (j := tree.parent_joint(link)) is not None:
        names.append(j.name)
        link = j.parent
    return names[::-1]


def index_map(source, target):
    """idx with x_target = x_source[idx]: joint vectors of `source` reordered into `target`'s order."""
    return np.array([source.joint_index(name) for name in target.joint_names], dtype=int)


# -- long chains ---------------------------------------------------------------------------------------
def long_chain_urdf(n, seed=0):
    """URDF text of an n-joint open chain, written directly (a Tree and random_tree are too slow at 10^5
    links): revolute and prismatic joints in turn with random unit axes, origins within ±0.1 m and
    random rpy; every link has a random inertial (mass 0.5–3 kg, centre of mass within ±0.05 m,
    principal moments 0.002–0.01 kg m², random inertia axes); 'tool0' on the last link.
    The same (n, seed) gives the same text."""
    rng = np.random.default_rng(seed)
    axes = rng.normal(size=(n, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    xyz, rpy = rng.uniform(-0.1, 0.1, (n, 3)), rng.uniform(-np.pi, np.pi, (n, 3))
    mass, com = rng.uniform(0.5, 3.0, n), rng.uniform(-0.05, 0.05, (n, 3))
    moments, inertia_rpy = rng.uniform(0.002, 0.01, (n, 3)), rng.uniform(-np.pi, np.pi, (n, 3))
    out = ['<?xml version="1.0"?>', f'<robot name="long_chain_{n}_{seed}">', '  <link name="base_link"/>']
    for k in range(n):
        parent = "base_link" if k == 0 else f"link{k}"
        kind = "revolute" if k % 2 == 0 else "prismatic"
        child = f"link{k + 1}"
        out += [f'  <link name="{child}"><inertial><origin xyz="{_v(com[k])}" rpy="{_v(inertia_rpy[k])}"/>'
                f'<mass value="{_f(mass[k])}"/><inertia ixx="{_f(moments[k, 0])}" ixy="0" ixz="0" '
                f'iyy="{_f(moments[k, 1])}" iyz="0" izz="{_f(moments[k, 2])}"/></inertial></link>',
                f'  <joint name="joint{k + 1}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{_v(xyz[k])}" rpy="{_v(rpy[k])}"/><axis xyz="{_v(axes[k])}"/>'
                '<limit lower="-1" upper="1" effort="100" velocity="2"/></joint>']
    out += ['  <link name="tool0"/>',
            f'  <joint name="tool0_joint" type="fixed"><parent link="link{n}"/><child link="tool0"/></joint>',
            '</robot>']
    return "\n".join(out) + "\n"
