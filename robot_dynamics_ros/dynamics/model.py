"""Model (frozen kinematic tree with inertias) and Data (preallocated workspace).

A Model describes a fixed-base kinematic tree of n one-degree-of-freedom joints. Body i is the link
moved by joint i; its frame {i} is the joint frame (the URDF child-link frame), and bodies are
numbered so that parent[i] < i (parent -1 is the fixed base). At q = 0 the pose of {i} in its
parent frame is T_tree[i]; the joint then moves {i} about/along its unit axis a_i (coordinates in
{i}), so the screw axis of joint i in {i} is A_i = (a_i, 0) for a revolute and (0, a_i) for a
prismatic joint, and T_{parent,i}(q_i) = T_tree[i] exp([A_i] q_i)   (eqs. 9.35, 9.50).

A joint may mimic another (URDF <mimic>): its body moves with the followed joint's coordinate,
q_i = m_i q[c_i] + o_i, so q has nq <= n entries, one per independent joint, and the algorithms
return the projections onto them (Model's class docstring).

Each body's spatial inertia in {i} (angular first, eq. 9.41 moved off the centre of mass) is kept
as the ten numbers (m, h = m c, I_o): mass, first mass moment and rotational inertia about the
origin of {i}, so that  G_i = [[I_o, [h]], [[h]^T, m 1]].

The compiled kernels read the model as one packed float64 array (few arguments per compiled call);
`Model` is the readable, immutable front of that array.

A Model refuses numbers that mean nothing physically or overflow the recursions, and a mass matrix
singular at q = 0 (ValueError naming the joint, link or frame): model_checks.py says which, and how.
"""
from __future__ import annotations

from types import MappingProxyType

import numpy as np

from . import _checks
from .inertia import check_inertia, parallel_axis

# The packed layout lives in the kernel package that reads it, so that changing it invalidates numba's
# on-disk cache (keyed on the kernel package's source: kernels/jit/cache.py).
from .kernels.layout import (
    COL_ARMATURE,
    COL_C,
    COL_COORD,
    COL_GRAVITY,
    COL_H,
    COL_IO,
    COL_MASS,
    COL_MIMIC,
    COL_MULT,
    COL_N,
    COL_NQ,
    COL_OFFSET,
    COL_P,
    COL_PARENT,
    COL_R,
    COL_RUN,
    COL_TYPE,
    DATA_WIDTH,
    FCOL_BODY,
    FCOL_P,
    FCOL_R,
    MODEL_WIDTH,
    PRISMATIC,
    REVOLUTE,
)
from .model_checks import (
    check_bodies,
    check_frames,
    check_gravity,
    check_limits,
    check_mass_matrix,
)


def _frozen(a, dtype=float):
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


class Model:
    """A fixed-base kinematic tree: joints, frames, inertias, limits. Immutable after construction.

    Coordinates and bodies. Every moving joint moves one body; a joint that mimics another (URDF
    <mimic>) has no coordinate of its own: its position, velocity and acceleration are
    q_i = m_i q[c_i] + o_i, q̇_i = m_i q̇[c_i], q̈_i = m_i q̈[c_i] of the independent joint c_i it follows
    (G: the constant map with G[i, c_i] = m_i). q, q̇, q̈ and τ have one entry per independent coordinate
    (nq of them), and every algorithm returns the projections of the full-body quantities onto them:
    M_r = G^T M G, τ_r = G^T τ, J_r = J G. Without mimic joints bodies and coordinates are the same.

    Attributes per coordinate (length nq, in `joint_names` order):
      nq, joint_names, joint_types ('revolute' | 'continuous' | 'prismatic'), lower/upper (position
      limits, -inf/+inf where none), velocity_limit, effort_limit (+inf where none), damping (viscous
      friction F_v), friction (Coulomb friction F_s), armature (the rotor inertia reflected through the
      gearbox, kg m^2 or kg: every algorithm uses M(q) + diag(armature), as Pinocchio's model.armature;
      default 0). A mimicking joint's limits, friction and armature are
      folded into its coordinate's: lower_i <= m q + o <= upper_i intersects the coordinate's
      position limits, |m q̇| <= v_i bounds its velocity (v_i / |m|), and its friction torques
      projected by G^T add exactly m^2 F_v,i (viscous) and |m| F_s,i (Coulomb), its armature m^2 a_i.
      Its effort limit is
      not folded (the effort at a mimicking joint is the coupling's internal force, not a
      command): the coordinate keeps the effort limit of its own joint.
    Attributes per body (length n_bodies, body order, parent[i] < i):
      n_bodies, body_joint_names / body_joint_types (the joint moving each body, mimicking ones
      included), link_names (the body moved by each joint), parent (int, -1 = base),
      body_coordinate (c_i), body_multiplier (m_i), body_offset (o_i), T_tree, axis, mass, com,
      inertia_com.
    Others: mimic (mapping: mimicking joint name -> (followed independent joint, multiplier, offset),
      chains resolved; empty without mimic joints), frame_names (every frame: the root link, every body
      and every fixed link kept by name, e.g. 'tool0'), root_link, tip_frame (default frame for f_tip
      and task-space quantities; on a tree with several leaves choose it: see load_urdf), gravity (3,)
      in the base frame. body_positions(q) / body_velocities(qd) give every body joint's value.

    Everything a Model stores is O(n) in the number of bodies: the ancestor relation is the parent
    array alone (support() walks it).
    """

    __slots__ = ("nq", "joint_names", "joint_types", "link_names", "parent", "frame_names",
                 "root_link", "tip_frame", "gravity", "lower", "upper", "velocity_limit",
                 "effort_limit", "damping", "friction", "T_tree", "axis", "mass", "com",
                 "inertia_com", "frame_body", "frame_placement", "_packed", "_frame_index",
                 "_joint_index", "_data", "_square", "n_bodies", "body_joint_names", "body_joint_types",
                 "mimic", "body_coordinate", "body_multiplier", "body_offset", "_body_limits", "armature")

    def __init__(self, *, joint_names, joint_types, link_names, parent, T_tree, axis, mass, com,
                 inertia_com, frame_names, frame_body, frame_placement, root_link, tip_frame,
                 gravity=(0.0, 0.0, -9.81), lower=None, upper=None, velocity_limit=None,
                 effort_limit=None, damping=None, friction=None, armature=None, mimic=None):
        """Build a model from per-body arrays (n bodies, nf frames).

        joint_names, joint_types, link_names, parent and the limits (lower, upper, velocity_limit,
        effort_limit, damping, friction, armature) have one entry per body: its joint's, mimicking joints
        included. mimic: {mimicking joint: (followed joint, multiplier, offset)} (None: none); a
        joint that follows a mimicking joint is resolved to the independent one (multipliers and
        offsets composed); ValueError naming the joints for an unknown followed joint or a cycle.
        T_tree (n,4,4): pose of body frame {i} in its parent's frame at q = 0. axis (n,3): joint
        axis in {i}. mass (n,), com (n,3) centre of mass in {i}, inertia_com (n,3,3) rotational
        inertia about the centre of mass in {i}'s axes. frame_body (nf,) body index (-1 = base) and
        frame_placement (nf,4,4) pose of each named frame in its body's frame. ValueError for
        anything the module docstring refuses (bounds, singular M at q = 0).
        """
        n = len(joint_names)
        set_ = object.__setattr__
        set_(self, "n_bodies", n)
        set_(self, "body_joint_names", tuple(joint_names))
        set_(self, "body_joint_types", tuple(joint_types))
        set_(self, "link_names", tuple(link_names))
        set_(self, "parent", _frozen(parent, np.int64))
        set_(self, "T_tree", _frozen(T_tree).reshape(n, 4, 4))
        set_(self, "axis", _frozen(axis).reshape(n, 3))
        set_(self, "mass", _frozen(mass).reshape(n))
        set_(self, "com", _frozen(com).reshape(n, 3))
        set_(self, "inertia_com", _frozen(inertia_com).reshape(n, 3, 3))
        set_(self, "frame_names", tuple(frame_names))
        set_(self, "frame_body", _frozen(frame_body, np.int64))
        set_(self, "frame_placement", _frozen(frame_placement).reshape(-1, 4, 4))
        set_(self, "root_link", root_link)
        set_(self, "tip_frame", tip_frame)
        set_(self, "gravity", _frozen(check_gravity(gravity)))
        inf = np.full(n, np.inf)
        set_(self, "_body_limits", dict(
            lower=_frozen(-inf if lower is None else lower), upper=_frozen(inf if upper is None else upper),
            velocity_limit=_frozen(inf if velocity_limit is None else velocity_limit),
            effort_limit=_frozen(inf if effort_limit is None else effort_limit),
            damping=_frozen(np.zeros(n) if damping is None else damping),
            friction=_frozen(np.zeros(n) if friction is None else friction),
            armature=_frozen(np.zeros(n) if armature is None else armature)))
        set_(self, "_frame_index", {name: f for f, name in enumerate(self.frame_names)})
        self._validate()
        self._set_coordinates(resolve_mimic(mimic or {}, self.body_joint_names))
        set_(self, "_square", (self.nq, self.nq))   # the shape of M and C, built once (not per call)
        set_(self, "_joint_index", {name: i for i, name in enumerate(self.joint_names)})
        packed = self._pack()
        packed.setflags(write=False)
        set_(self, "_packed", packed)
        check_mass_matrix(self, Data(self).buffer)     # M(0) positive definite: the ABA's pivots
        set_(self, "_data", Data(self))

    def _set_coordinates(self, mimic):
        """The coordinates (independent joints, in body order), each body's (c_i, m_i, o_i), and the
        per-coordinate limits and friction with the mimicking joints' folded in (class docstring)."""
        set_ = object.__setattr__
        names = self.body_joint_names
        for name, (followed, m, o) in mimic.items():
            if not (np.isfinite(m) and np.isfinite(o)):
                raise ValueError(f"joint {name!r} mimics {followed!r} with multiplier {m!r} and offset "
                                 f"{o!r}: both must be finite")
        independent = [i for i, name in enumerate(names) if name not in mimic]
        coordinate_of = {names[i]: k for k, i in enumerate(independent)}
        c = np.array([coordinate_of[mimic[name][0] if name in mimic else name] for name in names],
                     dtype=np.int64)
        mult = np.array([float(mimic[name][1]) if name in mimic else 1.0 for name in names])
        offset = np.array([float(mimic[name][2]) if name in mimic else 0.0 for name in names])
        set_(self, "mimic", MappingProxyType({name: (f, float(m), float(o))
                                              for name, (f, m, o) in mimic.items()}))
        set_(self, "body_coordinate", _frozen(c, np.int64))
        set_(self, "body_multiplier", _frozen(mult))
        set_(self, "body_offset", _frozen(offset))
        set_(self, "nq", len(independent))
        set_(self, "joint_names", tuple(names[i] for i in independent))
        set_(self, "joint_types", tuple(self.body_joint_types[i] for i in independent))
        b = self._body_limits
        folded = {key: np.array(values[independent], dtype=float) for key, values in b.items()}
        for i, name in enumerate(names):
            if name not in mimic:
                continue
            k, m, o = int(c[i]), mult[i], offset[i]
            folded["damping"][k] += m * m * b["damping"][i]
            folded["friction"][k] += abs(m) * b["friction"][i]
            folded["armature"][k] += m * m * b["armature"][i]     # its rotor's ½ a_i (m q̇)² of kinetic energy
            if m == 0.0:            # a joint held at its offset: no bound on the coordinate
                continue
            lo, hi = (b["lower"][i] - o) / m, (b["upper"][i] - o) / m
            if m < 0:
                lo, hi = hi, lo
            folded["lower"][k] = max(folded["lower"][k], lo)
            folded["upper"][k] = min(folded["upper"][k], hi)
            folded["velocity_limit"][k] = min(folded["velocity_limit"][k], b["velocity_limit"][i] / abs(m))
            if folded["lower"][k] > folded["upper"][k]:
                followed = names[independent[k]]
                raise ValueError(f"joint {name!r} mimics {followed!r} (q = {m:g} q_{followed} + {o:g}): its "
                                 f"position limits [{b['lower'][i]:g}, {b['upper'][i]:g}] leave no position "
                                 f"of {followed!r} within both joints' limits")
        for key, values in folded.items():
            set_(self, key, _frozen(values))

    def __setattr__(self, name, value):
        raise AttributeError(f"Model is immutable: cannot set {name!r}")

    def __repr__(self):
        mimic = f", mimic={dict(self.mimic)}" if self.mimic else ""
        return (f"Model(nq={self.nq}, root_link={self.root_link!r}, tip_frame={self.tip_frame!r}, "
                f"joints={list(self.joint_names)}{mimic})")

    def body_positions(self, q):
        """Every body joint's position q_i = m_i q[c_i] + o_i (n_bodies,), in body_joint_names order,
        from the coordinates q (nq,): what the simulator publishes for the mimicking joints."""
        q = _checks.vector(self, q, "q")
        return self.body_multiplier * q[self.body_coordinate] + self.body_offset

    def body_velocities(self, qd):
        """Every body joint's velocity (or acceleration) m_i q̇[c_i] (n_bodies,), body_joint_names
        order, from the coordinates' qd (nq,)."""
        qd = _checks.vector(self, qd, "qd")
        return self.body_multiplier * qd[self.body_coordinate]

    def coordinate_map(self):
        """(G, o): the constant map from the coordinates to the bodies' joint values, q_body = G q + o,
        G (n_bodies, nq) with G[i, c_i] = m_i, o (n_bodies,). Without mimic joints G = 1, o = 0."""
        G = np.zeros((self.n_bodies, self.nq))
        G[np.arange(self.n_bodies), self.body_coordinate] = self.body_multiplier
        return G, self.body_offset.copy()

    # -- lookups ----------------------------------------------------------------------------
    def joint_index(self, name):
        """Index of joint `name` in q; ValueError for an unknown joint."""
        try:
            return self._joint_index[name]
        except (KeyError, TypeError):
            if isinstance(name, str) and name in self.mimic:
                followed, m, o = self.mimic[name]
                raise ValueError(f"joint {name!r} mimics {followed!r} (q = {m:g} q_{followed} + {o:g}): it "
                                 f"has no coordinate of its own; the coordinates are "
                                 f"{list(self.joint_names)}") from None
            raise ValueError(f"unknown joint {name!r}; the model has {list(self.joint_names)}") from None

    def has_frame(self, name):
        return name in self._frame_index

    def frame_index(self, frame=None):
        """Index of a named frame (default: tip_frame); ValueError for an unknown frame."""
        if frame is None:
            frame = self.tip_frame
        try:
            return self._frame_index[frame]
        except (KeyError, TypeError):
            raise ValueError(f"unknown frame {frame!r}; the model has frames "
                             f"{list(self.frame_names)}") from None

    def support(self, frame=None):
        """Bodies that move `frame` (the body's ancestors including itself; body indices), base first: a
        walk up the parent array, O(depth)."""
        b = int(self.frame_body[self.frame_index(frame)])
        chain = []
        while b >= 0:
            chain.append(b)
            b = int(self.parent[b])
        return tuple(reversed(chain))

    @property
    def is_chain(self):
        """True when every body's parent is the previous body (an open chain)."""
        return bool(np.all(self.parent == np.arange(-1, self.n_bodies - 1)))

    # -- construction ---------------------------------------------------------------------------
    def _validate(self):
        """The checks of model_checks.py, except M's (after packing), on the per-body arrays.
        Vectorised: O(n)."""
        check_bodies(self)
        check_inertia(lambda i: f"link {self.link_names[i]!r}", self.mass, self.inertia_com)
        check_frames(self)
        check_limits(self.body_joint_names, self._body_limits)

    def _pack(self):
        """The packed array of the kernels. Each body frame is re-expressed in a frame turned by C_i
        so that its joint axis is z (C_i e_z = a_i); tree transforms, inertias and frame placements
        follow, so every joint is Rz(q) or Tz(q) in the kernels. Vectorised over bodies and frames."""
        n, nf = self.n_bodies, len(self.frame_names)
        C = _rotations_to_z(self.axis)
        CT = C.transpose(0, 2, 1)
        C_of = np.concatenate([C, np.eye(3)[None]])         # C_of[-1]: the base's frame is not turned
        CpT = C_of[self.parent].transpose(0, 2, 1)
        packed = np.zeros((max(n, 1) + nf, MODEL_WIDTH))
        body = packed[:n]
        body[:, COL_R:COL_R + 9] = (CpT @ self.T_tree[:, :3, :3] @ C).reshape(n, 9)
        body[:, COL_P:COL_P + 3] = (CpT @ self.T_tree[:, :3, 3:])[:, :, 0]
        body[:, COL_TYPE] = [PRISMATIC if t == "prismatic" else REVOLUTE for t in self.body_joint_types]
        body[:, COL_PARENT] = self.parent
        # a run of ancestors i, i-1, ... ends at the last body whose parent is not the body before it
        i = np.arange(n)
        body[:, COL_RUN] = np.maximum.accumulate(np.where(self.parent == i - 1, 0, i)) if n else 0
        m, c = self.mass, self.com
        body[:, COL_MASS] = m
        body[:, COL_H:COL_H + 3] = (CT @ (m[:, None] * c)[:, :, None])[:, :, 0]
        Io = self.inertia_com + parallel_axis(m, c)       # parallel-axis theorem: I_o = I_c + m([c]^T [c])
        body[:, COL_IO:COL_IO + 9] = (CT @ Io @ C).reshape(n, 9)
        body[:, COL_C:COL_C + 9] = C.reshape(n, 9)
        body[:, COL_COORD] = self.body_coordinate
        body[:, COL_MULT] = self.body_multiplier
        body[:, COL_OFFSET] = self.body_offset
        body[:, COL_ARMATURE] = self._body_limits["armature"]
        packed[0, COL_N] = n
        packed[0, COL_NQ] = self.nq
        packed[0, COL_MIMIC] = 1.0 if self.mimic else 0.0
        packed[0, COL_GRAVITY:COL_GRAVITY + 3] = self.gravity
        frames = packed[max(n, 1):]
        CbT = C_of[self.frame_body].transpose(0, 2, 1)
        frames[:, FCOL_BODY] = self.frame_body
        frames[:, FCOL_R:FCOL_R + 9] = (CbT @ self.frame_placement[:, :3, :3]).reshape(nf, 9)
        frames[:, FCOL_P:FCOL_P + 3] = (CbT @ self.frame_placement[:, :3, 3:])[:, :, 0]
        return packed

    def replace(self, **changes):
        """A new Model with some constructor arguments changed (e.g. gravity): the constructor's
        arguments, per body (the limits too: each body joint's own, before folding)."""
        args = dict(joint_names=self.body_joint_names, joint_types=self.body_joint_types,
                    link_names=self.link_names, parent=self.parent, T_tree=self.T_tree,
                    axis=self.axis, mass=self.mass, com=self.com, inertia_com=self.inertia_com,
                    frame_names=self.frame_names, frame_body=self.frame_body,
                    frame_placement=self.frame_placement, root_link=self.root_link,
                    tip_frame=self.tip_frame, gravity=self.gravity, mimic=dict(self.mimic),
                    **self._body_limits)
        args.update(changes)
        return Model(**args)


def with_armature(model, values):
    """A new Model with the armature `values`: the rotor inertia reflected through each joint's gearbox
    (kg m^2 for a revolute joint, kg for a prismatic one; a motor of inertia I_m behind a gear ratio r
    gives r^2 I_m), which every algorithm adds to the mass matrix, M(q) + diag(armature), as Pinocchio's
    model.armature: τ_i += a_i q̈_i in the RNEA, D_i += a_i in the ABA's pivots, ∂τ/∂q̈ = M + diag(a).

    values: nq non-negative finite numbers in model.joint_names order, or a mapping {joint name: value}
    that changes the named joints only; ValueError naming `armature` (or the joint) otherwise. With
    mimic joints each coordinate's armature is its own joint's (the mimicking joints' set to 0)."""
    current = np.array(model.armature, dtype=float)
    if isinstance(values, dict) or isinstance(values, MappingProxyType):
        for name, value in values.items():
            k = model.joint_index(name)
            current[k] = _checks.scalar(value, f"armature[{name!r}]", minimum=0.0)
        values = current
    values = _checks.real_array(values, "armature", f"{model.nq} numbers (kg m^2 or kg), one per joint")
    if values.shape != (model.nq,) or not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError(f"armature must be {model.nq} finite non-negative numbers (kg m^2 or kg) in "
                         f"model.joint_names order, got {np.asarray(values).tolist()!r}")
    independent = np.array([name not in model.mimic for name in model.body_joint_names], dtype=bool)
    body = np.where(independent, values[model.body_coordinate], 0.0)
    return model.replace(armature=body)


def resolve_mimic(mimic, joint_names):
    """{mimicking joint: (independent joint, multiplier, offset)} from `mimic` ({joint: (followed joint,
    multiplier, offset)}, q_joint = multiplier q_followed + offset): a joint that follows a mimicking
    joint is resolved to the independent one, A -> B -> C giving (C, m_A m_B, m_A o_B + o_A). ValueError
    naming the joints when a followed joint is not in `joint_names` or the joints form a cycle."""
    known = set(joint_names)
    resolved = {}
    for name in mimic:
        if name not in known:
            raise ValueError(f"mimic: unknown joint {name!r}")
        path, m, o, current = [name], 1.0, 0.0, name
        while current in mimic:
            followed, m_f, o_f = mimic[current]     # q_current = m_f q_followed + o_f
            m, o = m * m_f, m * o_f + o
            if followed in path:
                cycle = " -> ".join(repr(j) for j in path[path.index(followed):] + [followed])
                raise ValueError(f"mimic joints form a cycle: {cycle} (each mimics the next); one of them "
                                 "must be independent")
            path.append(followed)
            current = followed
        if current not in known:
            chain = f" (chain {' -> '.join(map(repr, path))})" if len(path) > 2 else ""
            raise ValueError(f"joint {path[-2]!r} mimics joint {current!r}, which is not a moving joint of "
                             f"the model{chain}")
        resolved[name] = (current, m, o)
    return resolved


def _rotations_to_z(axes):
    """Rotations C_i with C_i e_z = a_i (unit axes a_i, (n, 3) -> (n, 3, 3)); the identity for
    a = e_z, axis permutations for the other coordinate axes."""
    a = np.asarray(axes, dtype=float).reshape(-1, 3)
    helper = np.eye(3)[np.argmin(np.abs(a), axis=1)]      # the basis vector least aligned with a
    x = np.cross(helper, a)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    C = np.stack([x, np.cross(a, x), a], axis=2)
    C[np.isclose(a, (0.0, 0.0, 1.0)).all(axis=1)] = np.eye(3)
    return C


class Data:
    """Preallocated workspace for the kernels: one per thread (the Model holds a default one).

    `buffer` is one float64 array: the model's packed constants in its first MODEL_WIDTH columns,
    the per-body scratch of the recursions after them (so a compiled call takes a single array for
    both). Nothing in the hot path allocates except the returned results.

    Calls without `data=` share the model's default Data safely between Python threads: every
    single-state kernel is compiled without nogil, so it holds the GIL for its whole call, and uses
    the workspace only within that call (results go to new arrays). They are serialised, not run in
    parallel; for parallel work, or under NUMBA_DISABLE_JIT=1 (uncompiled kernels switch threads
    mid-call), give each thread its own Data(model). The batch calls (the *_trajectory calls, the
    regressor stacks, linearize_trajectory) release the GIL and split their states across threads
    (set_num_threads): each range of states works in its own copy of the buffer (with `data=` too),
    never in a Data another thread uses; the optimal-control passes work in the problem's own Data.
    compute_all_terms(..., data=d) returns d's own result arrays.
    """

    __slots__ = ("buffer", "model", "all_terms_arrays", "control_arrays", "derivative_scratch")

    def __init__(self, model):
        # a model with mimic joints: nq more columns for M_r in its forward dynamics (kernels/layout.py)
        buffer = np.zeros((model._packed.shape[0], DATA_WIDTH + (model.nq if model.mimic else 0)))
        buffer[:, :MODEL_WIDTH] = model._packed
        object.__setattr__(self, "buffer", buffer)
        object.__setattr__(self, "model", model)
        # compute_all_terms's results with this Data (allocated on its first use, then refilled)
        object.__setattr__(self, "all_terms_arrays", None)
        # task_space_control's intermediate terms (allocated on its first use; never returned)
        object.__setattr__(self, "control_arrays", None)
        # forward_dynamics_derivatives' intermediate arrays (allocated on its first use; never returned)
        object.__setattr__(self, "derivative_scratch", None)

    def __setattr__(self, name, value):
        raise AttributeError("Data is fixed to its model: make a new Data(model)")
