"""Model (frozen kinematic tree with inertias) and Data (preallocated workspace).

A Model describes a fixed-base kinematic tree of n one-degree-of-freedom joints. Body i is the link
moved by joint i; its frame {i} is the joint frame (the URDF child-link frame), and bodies are
numbered so that parent[i] < i (parent -1 is the fixed base). At q = 0 the pose of {i} in its
parent frame is T_tree[i]; the joint then moves {i} about/along its unit axis a_i (coordinates in
{i}), so the screw axis of joint i in {i} is A_i = (a_i, 0) for a revolute and (0, a_i) for a
prismatic joint, and T_{parent,i}(q_i) = T_tree[i] exp([A_i] q_i)   (eqs. 9.35, 9.50).

Each body's spatial inertia in {i} (angular first, eq. 9.41 moved off the centre of mass) is kept
as the ten numbers (m, h = m c, I_o): mass, first mass moment and rotational inertia about the
origin of {i}, so that  G_i = [[I_o, [h]], [[h]^T, m 1]].

The compiled kernels read the model as one packed float64 array (few arguments per compiled call);
`Model` is the readable, immutable front of that array.
"""
from __future__ import annotations

import numpy as np

# The packed layout lives in the kernel package that reads it, so that changing it invalidates numba's
# on-disk cache (keyed on the kernel package's source: kernels/cache.py).
from .kernels.layout import (
    COL_C,
    COL_GRAVITY,
    COL_H,
    COL_IO,
    COL_MASS,
    COL_N,
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


def _frozen(a, dtype=float):
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


class Model:
    """A fixed-base kinematic tree: joints, frames, inertias, limits. Immutable after construction.

    Attributes (joint arrays in `joint_names` order):
      nq, joint_names, joint_types ('revolute' | 'continuous' | 'prismatic'), link_names (the body
      moved by each joint), parent (int, -1 = base), frame_names (every frame: the root link, every
      body and every fixed link kept by name, e.g. 'tool0'), root_link, tip_frame (default frame for
      f_tip and task-space quantities), gravity (3,) in the base frame, lower/upper (position limits,
      -inf/+inf where none), velocity_limit, effort_limit (+inf where none), damping (viscous
      friction F_v), friction (Coulomb friction F_s).
    """

    __slots__ = ("nq", "joint_names", "joint_types", "link_names", "parent", "frame_names",
                 "root_link", "tip_frame", "gravity", "lower", "upper", "velocity_limit",
                 "effort_limit", "damping", "friction", "T_tree", "axis", "mass", "com",
                 "inertia_com", "frame_body", "frame_placement", "_packed", "_frame_index",
                 "_joint_index", "_data", "_ancestors", "_square")

    def __init__(self, *, joint_names, joint_types, link_names, parent, T_tree, axis, mass, com,
                 inertia_com, frame_names, frame_body, frame_placement, root_link, tip_frame,
                 gravity=(0.0, 0.0, -9.81), lower=None, upper=None, velocity_limit=None,
                 effort_limit=None, damping=None, friction=None):
        """Build a model from per-body arrays (n bodies, nf frames).

        T_tree (n,4,4): pose of body frame {i} in its parent's frame at q = 0. axis (n,3): joint
        axis in {i}. mass (n,), com (n,3) centre of mass in {i}, inertia_com (n,3,3) rotational
        inertia about the centre of mass in {i}'s axes. frame_body (nf,) body index (-1 = base) and
        frame_placement (nf,4,4) pose of each named frame in its body's frame.
        """
        n = len(joint_names)
        set_ = object.__setattr__
        set_(self, "nq", n)
        set_(self, "_square", (n, n))     # the shape of M and C, built once (per call it costs 20 ns)
        set_(self, "joint_names", tuple(joint_names))
        set_(self, "joint_types", tuple(joint_types))
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
        gravity = np.asarray(gravity, dtype=float)
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise ValueError(f"gravity must be a finite 3-vector (base frame), got {gravity.tolist()!r}")
        set_(self, "gravity", _frozen(gravity))
        inf = np.full(n, np.inf)
        set_(self, "lower", _frozen(-inf if lower is None else lower))
        set_(self, "upper", _frozen(inf if upper is None else upper))
        set_(self, "velocity_limit", _frozen(inf if velocity_limit is None else velocity_limit))
        set_(self, "effort_limit", _frozen(inf if effort_limit is None else effort_limit))
        set_(self, "damping", _frozen(np.zeros(n) if damping is None else damping))
        set_(self, "friction", _frozen(np.zeros(n) if friction is None else friction))
        set_(self, "_joint_index", {name: i for i, name in enumerate(self.joint_names)})
        set_(self, "_frame_index", {name: f for f, name in enumerate(self.frame_names)})
        self._validate()
        set_(self, "_packed", _frozen(self._pack()))
        ancestors = []
        for i in range(n):
            chain, j = [], i
            while j >= 0:
                chain.append(j)
                j = int(self.parent[j])
            ancestors.append(tuple(reversed(chain)))
        set_(self, "_ancestors", tuple(ancestors))
        set_(self, "_data", Data(self))

    def __setattr__(self, name, value):
        raise AttributeError(f"Model is immutable: cannot set {name!r}")

    def __repr__(self):
        return (f"Model(nq={self.nq}, root_link={self.root_link!r}, tip_frame={self.tip_frame!r}, "
                f"joints={list(self.joint_names)})")

    # -- lookups ----------------------------------------------------------------------------
    def joint_index(self, name):
        """Index of joint `name` in q; ValueError for an unknown joint."""
        try:
            return self._joint_index[name]
        except KeyError:
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
        """Joints that move `frame` (the body's ancestors including itself), base first."""
        b = int(self.frame_body[self.frame_index(frame)])
        return () if b < 0 else self._ancestors[b]

    @property
    def is_chain(self):
        """True when every body's parent is the previous body (an open chain)."""
        return bool(np.all(self.parent == np.arange(-1, self.nq - 1)))

    # -- construction ---------------------------------------------------------------------------
    def _validate(self):
        n = self.nq
        if not (len(self.joint_types) == len(self.link_names) == len(self.parent) == n):
            raise ValueError("joint_names, joint_types, link_names and parent must have one entry per joint")
        for i, p in enumerate(self.parent):
            if not -1 <= p < i:
                raise ValueError(f"parent[{i}] = {p}: bodies must be topologically ordered (parent < child)")
        for name, t in zip(self.joint_names, self.joint_types):
            if t not in ("revolute", "continuous", "prismatic"):
                raise ValueError(f"joint {name!r}: unsupported type {t!r}")
        norms = np.linalg.norm(self.axis, axis=1)
        if n and not np.allclose(norms, 1.0, atol=1e-9):
            bad = self.joint_names[int(np.argmax(np.abs(norms - 1.0)))]
            raise ValueError(f"joint {bad!r}: axis must be a unit vector")
        for arr, what in ((self.T_tree, "T_tree"), (self.mass, "mass"), (self.com, "com"),
                          (self.inertia_com, "inertia_com"), (self.gravity, "gravity"),
                          (self.frame_placement, "frame_placement")):
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{what} must be finite")
        for i in range(n):
            check_inertia(self.link_names[i], self.mass[i], self.inertia_com[i])
        if len(self.frame_names) != len(set(self.frame_names)):
            raise ValueError("frame names must be unique")
        if self.tip_frame not in self._frame_index:
            raise ValueError(f"tip frame {self.tip_frame!r} is not a frame of the model")
        for values, what in ((self.damping, "damping"), (self.friction, "friction"),
                             (self.velocity_limit, "velocity limit"), (self.effort_limit, "effort limit")):
            if values.shape != (n,) or np.any(np.isnan(values)) or np.any(values < 0):
                bad = [name for name, v in zip(self.joint_names, np.atleast_1d(values)) if not v >= 0]
                name = bad[0] if bad else '?'
                raise ValueError(f"joint {name!r}: {what} must be non-negative (one per joint)")
        if np.any(self.lower > self.upper):
            bad = self.joint_names[int(np.argmax(self.lower > self.upper))]
            raise ValueError(f"joint {bad!r}: lower position limit exceeds upper limit")

    def _pack(self):
        """The packed array of the kernels. Each body frame is re-expressed in a frame turned by C_i
        so that its joint axis is z (C_i e_z = a_i); tree transforms, inertias and frame placements
        follow, so every joint is Rz(q) or Tz(q) in the kernels."""
        n, nf = self.nq, len(self.frame_names)
        C = np.array([_rotation_to_z(a) for a in self.axis]).reshape(n, 3, 3)
        packed = np.zeros((max(n, 1) + nf, MODEL_WIDTH))
        for i in range(n):
            row = packed[i]
            p = self.parent[i]
            Cp = C[p] if p >= 0 else np.eye(3)
            row[COL_R:COL_R + 9] = (Cp.T @ self.T_tree[i, :3, :3] @ C[i]).ravel()
            row[COL_P:COL_P + 3] = Cp.T @ self.T_tree[i, :3, 3]
            row[COL_TYPE] = PRISMATIC if self.joint_types[i] == "prismatic" else REVOLUTE
            row[COL_PARENT] = p
            row[COL_RUN] = packed[i - 1, COL_RUN] if i > 0 and p == i - 1 else i
            m, c = self.mass[i], self.com[i]
            row[COL_MASS] = m
            row[COL_H:COL_H + 3] = C[i].T @ (m * c)
            # parallel-axis theorem: I_o = I_c + m([c]^T [c])
            Io = self.inertia_com[i] + m * (c @ c * np.eye(3) - np.outer(c, c))
            row[COL_IO:COL_IO + 9] = (C[i].T @ Io @ C[i]).ravel()
            row[COL_C:COL_C + 9] = C[i].ravel()
        packed[0, COL_N] = n
        packed[0, COL_GRAVITY:COL_GRAVITY + 3] = self.gravity
        base = max(n, 1)
        for f in range(nf):
            row = packed[base + f]
            b = self.frame_body[f]
            Cb = C[b] if b >= 0 else np.eye(3)
            row[FCOL_BODY] = b
            row[FCOL_R:FCOL_R + 9] = (Cb.T @ self.frame_placement[f, :3, :3]).ravel()
            row[FCOL_P:FCOL_P + 3] = Cb.T @ self.frame_placement[f, :3, 3]
        return packed

    def replace(self, **changes):
        """A new Model with some constructor arguments changed (e.g. gravity)."""
        args = dict(joint_names=self.joint_names, joint_types=self.joint_types,
                    link_names=self.link_names, parent=self.parent, T_tree=self.T_tree,
                    axis=self.axis, mass=self.mass, com=self.com, inertia_com=self.inertia_com,
                    frame_names=self.frame_names, frame_body=self.frame_body,
                    frame_placement=self.frame_placement, root_link=self.root_link,
                    tip_frame=self.tip_frame, gravity=self.gravity, lower=self.lower,
                    upper=self.upper, velocity_limit=self.velocity_limit,
                    effort_limit=self.effort_limit, damping=self.damping, friction=self.friction)
        args.update(changes)
        return Model(**args)


def _rotation_to_z(a):
    """A rotation C with C e_z = a (a unit); the identity for a = e_z, axis permutations for the
    other coordinate axes."""
    a = np.asarray(a, dtype=float)
    k = int(np.argmin(np.abs(a)))          # the basis vector least aligned with a
    helper = np.zeros(3)
    helper[k] = 1.0
    x = np.cross(helper, a)
    x /= np.linalg.norm(x)
    C = np.column_stack([x, np.cross(a, x), a])
    return np.eye(3) if np.allclose(a, (0.0, 0.0, 1.0)) else C


def check_inertia(name, mass, inertia):
    """ValueError unless mass >= 0 and the rotational inertia is symmetric positive semi-definite."""
    inertia = np.asarray(inertia, dtype=float)
    if not np.isfinite(mass) or mass < 0:
        raise ValueError(f"link {name!r}: mass must be a finite non-negative number, got {mass}")
    if not np.all(np.isfinite(inertia)) or not np.allclose(inertia, inertia.T, atol=1e-12):
        raise ValueError(f"link {name!r}: inertia tensor must be finite and symmetric")
    eig = np.linalg.eigvalsh(inertia)
    if eig[0] < -1e-12 * max(1.0, float(np.abs(inertia).max())):
        raise ValueError(f"link {name!r}: inertia tensor is not positive semi-definite (eigenvalues {eig})")


class Data:
    """Preallocated workspace for the kernels: one per thread (the Model holds a default one).

    `buffer` is one float64 array: the model's packed constants in its first MODEL_WIDTH columns,
    the per-body scratch of the recursions after them (so a compiled call takes a single array for
    both). Nothing in the hot path allocates except the returned results.

    Calls without `data=` share the model's default Data safely between Python threads: every
    kernel is compiled without nogil, so it holds the GIL for its whole call, and uses the workspace
    only within that call (results go to new arrays). They are serialised, not run in parallel; for
    parallel work, or under NUMBA_DISABLE_JIT=1 (uncompiled kernels switch threads mid-call), give
    each thread its own Data(model). compute_all_terms(..., data=d) returns d's own result arrays.
    """

    __slots__ = ("buffer", "model", "all_terms_arrays")

    def __init__(self, model):
        buffer = np.zeros((model._packed.shape[0], DATA_WIDTH))
        buffer[:, :MODEL_WIDTH] = model._packed
        object.__setattr__(self, "buffer", buffer)
        object.__setattr__(self, "model", model)
        # compute_all_terms's results with this Data (allocated on its first use, then refilled)
        object.__setattr__(self, "all_terms_arrays", None)

    def __setattr__(self, name, value):
        raise AttributeError("Data is fixed to its model: make a new Data(model)")
