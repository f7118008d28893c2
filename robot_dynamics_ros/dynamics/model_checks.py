"""What a Model refuses: the bounds of its numbers, and a mass matrix singular at q = 0.

A Model refuses (ValueError naming the joint, link or frame) numbers that mean nothing physically
or overflow the recursions (an origin at 1e300 m made ABA return NaN while M^-1 gave 100): every
number finite; tree transforms and frame placements rigid (|R^T R - 1| <= 1e-6, det R > 0) with
|p| < MAX_LENGTH = 1e6 m; centres of mass |c| < 1e6 m; masses 0 <= m <= MAX_MASS = 1e12 kg;
rotational inertias symmetric, positive semi-definite (within 1e-12 relative) with entries at most
MAX_INERTIA = 1e24 kg m^2 (inertia.check_inertia); |gravity| <= MAX_GRAVITY = 1e6 m/s^2; joint names
unique. No robot comes near the bounds. The triangle inequality of the principal moments is not
required: real URDFs break it (ANYmal's and HyQ's point-like links carry inertia about one axis only).

M(q) must be positive definite. Construction checks it at q = 0 by the pivots of the articulated-
body algorithm (kernels/aba.py), D_i = S_i^T G^A_i S_i + a_i (a_i: the joint's armature; det M = prod D_i;
G^A_i is the articulated inertia of the subtree at i): a pivot at most PIVOT_RTOL = 1e-10 times the
trace of the matching 3x3 block of G^A_i in {i} (rotational for a revolute joint, translational for a
prismatic one) names joint i. det M(q) is analytic in q, so M is either singular for every q -- a
joint that moves only massless bodies, bodies with no inertia about its axis, or only what other
joints already move (two coaxial joints with nothing between them) -- which this finds, or singular
on a measure-zero set of configurations (massless gimbal links at gimbal lock), which it finds only
if q = 0 is in that set. Cost O(n).
"""
from __future__ import annotations

import numpy as np

from .kernels import entries as _k
from .kernels.layout import (
    COL_ARMATURE,
    COL_MIMIC,
    COL_NQ,
    W_GA_BASE,
    W_P_BASE,
    W_S_BASE,
    W_U_BASE,
)

#: Bounds of a model's numbers (SI); see the module docstring.
MAX_LENGTH = 1e6                            # m: |translation| of transforms, |centre of mass|
MAX_MASS = 1e12                             # kg, per body
MAX_INERTIA = MAX_MASS * MAX_LENGTH ** 2    # kg m^2: |entries| of a rotational inertia
MAX_GRAVITY = 1e6                           # m/s^2
PIVOT_RTOL = 1e-10                          # M(0) singular when D_i <= PIVOT_RTOL * (scale of G^A_i)

_MOVING = ("revolute", "continuous", "prismatic")


def first(bad):
    """The index of the first True in the boolean array `bad`."""
    return int(np.flatnonzero(bad)[0])


def check_unique(names, what):
    seen = set()
    for name in names:
        if name in seen:
            raise ValueError(f"duplicate {what} name {name!r}: {what} names must be unique")
        seen.add(name)


def check_gravity(gravity):
    """gravity (3,) as floats; ValueError unless a finite 3-vector of at most MAX_GRAVITY m/s^2."""
    gravity = np.asarray(gravity, dtype=float)
    bounded = gravity.shape == (3,) and np.all(np.abs(gravity) <= MAX_GRAVITY)    # False for NaN too
    if not bounded or np.linalg.norm(gravity) > MAX_GRAVITY:
        raise ValueError(f"gravity must be a finite 3-vector (base frame) of at most {MAX_GRAVITY:g} "
                         f"m/s^2, got {gravity.tolist()!r}")
    return gravity


def check_transforms(label, T):
    """ValueError naming label(i) unless every T[i] (k, 4, 4) is a rigid transform: finite, last row
    (0, 0, 0, 1), rotation orthonormal within 1e-6 with det +1, |translation| < MAX_LENGTH (m)."""
    T = np.asarray(T, dtype=float).reshape(-1, 4, 4)
    if not T.size:
        return
    finite = np.isfinite(T).all(axis=(1, 2))
    if not finite.all():
        raise ValueError(f"{label(first(~finite))} must be finite")
    R = T[:, :3, :3]
    error = np.abs(R.transpose(0, 2, 1) @ R - np.eye(3)).max(axis=(1, 2))
    last_row = np.abs(T[:, 3] - (0.0, 0.0, 0.0, 1.0)).max(axis=1)
    bad = (error > 1e-6) | (np.linalg.det(R) <= 0) | (last_row > 1e-9)
    if bad.any():
        i = first(bad)
        raise ValueError(f"{label(i)} must be a rigid transform (rotation with R^T R = 1 and det R = +1, "
                         f"last row 0 0 0 1), got {T[i].tolist()}")
    with np.errstate(over="ignore"):            # |1e300| overflows to inf: refused below
        distance = np.linalg.norm(T[:, :3, 3], axis=1)
    if np.any(distance >= MAX_LENGTH):
        i = first(distance >= MAX_LENGTH)
        raise ValueError(f"{label(i)}: translation must be shorter than {MAX_LENGTH:g} m, "
                         f"got {T[i, :3, 3].tolist()}")


def check_bodies(model):
    """The per-body arrays of a Model under construction: one entry per body, parents before children,
    moving joint types, unique joint and frame names, unit axes, finite numbers, rigid transforms, centres
    of mass within MAX_LENGTH. (Inertias: inertia.check_inertia; frames and limits: below.)"""
    n = model.n_bodies
    if not (len(model.body_joint_types) == len(model.link_names) == len(model.parent) == n):
        raise ValueError("joint_names, joint_types, link_names and parent must have one entry per joint")
    bad = np.flatnonzero((model.parent < -1) | (model.parent >= np.arange(n)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"parent[{i}] = {model.parent[i]}: bodies must be topologically ordered "
                         "(parent < child)")
    for name, t in zip(model.body_joint_names, model.body_joint_types):
        if t not in _MOVING:
            raise ValueError(f"joint {name!r}: unsupported type {t!r}")
    check_unique(model.body_joint_names, "joint")
    check_unique(model.frame_names, "frame")
    norms = np.linalg.norm(model.axis, axis=1)
    if n and not np.allclose(norms, 1.0, atol=1e-9):
        bad = model.body_joint_names[int(np.argmax(np.abs(norms - 1.0)))]
        raise ValueError(f"joint {bad!r}: axis must be a unit vector")
    for arr, what in ((model.T_tree, "T_tree"), (model.mass, "mass"), (model.com, "com"),
                      (model.inertia_com, "inertia_com"), (model.frame_placement, "frame_placement")):
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{what} must be finite")
    check_transforms(lambda i: f"joint {model.body_joint_names[i]!r}: tree transform T_tree[{i}]",
                     model.T_tree)
    check_transforms(lambda f: f"frame {model.frame_names[f]!r}: placement", model.frame_placement)
    with np.errstate(over="ignore"):
        far = np.flatnonzero(np.linalg.norm(model.com, axis=1) >= MAX_LENGTH)
    if far.size:
        raise ValueError(f"link {model.link_names[far[0]]!r}: centre of mass must lie within "
                         f"{MAX_LENGTH:g} m of the body frame, got {model.com[far[0]].tolist()}")


def check_frames(model):
    """One body index in [-1, n) per frame, and the tip frame among the frames."""
    fb = model.frame_body
    if len(fb) != len(model.frame_names) or np.any((fb < -1) | (fb >= model.n_bodies)):
        raise ValueError("frame_body must hold one body index in [-1, n) per frame")
    if model.tip_frame not in model.frame_names:
        raise ValueError(f"tip frame {model.tip_frame!r} is not a frame of the model")


def check_limits(names, limits):
    """The per-body limits {lower, upper, velocity_limit, effort_limit, damping, friction, armature} of
    the body joints `names`: one number each, friction and limits non-negative, armature at most
    MAX_INERTIA, lower <= upper."""
    n = len(names)
    for key, what in (("damping", "damping"), ("friction", "friction"),
                      ("velocity_limit", "velocity limit"), ("effort_limit", "effort limit")):
        values = limits[key]
        if values.shape != (n,) or np.any(np.isnan(values)) or np.any(values < 0):
            bad = [name for name, v in zip(names, np.atleast_1d(values)) if not v >= 0]
            raise ValueError(f"joint {bad[0] if bad else '?'!r}: {what} must be non-negative (one per joint)")
    armature = limits["armature"]
    if armature.shape != (n,) or not np.all((armature >= 0) & (armature <= MAX_INERTIA)):
        bad = [name for name, v in zip(names, np.atleast_1d(armature)) if not 0 <= v <= MAX_INERTIA]
        raise ValueError(f"joint {bad[0] if bad else '?'!r}: armature must be a finite non-negative number "
                         f"of at most {MAX_INERTIA:g} (kg m^2 or kg; one per joint)")
    for key in ("lower", "upper"):
        if limits[key].shape != (n,) or np.any(np.isnan(limits[key])):
            raise ValueError(f"{key} position limits must be numbers (one per joint)")
    if np.any(limits["lower"] > limits["upper"]):
        bad = names[int(np.argmax(limits["lower"] > limits["upper"]))]
        raise ValueError(f"joint {bad!r}: lower position limit exceeds upper limit")


# -- the mass matrix at q = 0 ---------------------------------------------------------------------------
def _skew(x):
    """[x] of each row of x (k, 3): (k, 3, 3)."""
    S = np.zeros(x.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -x[..., 2], x[..., 1], -x[..., 0]
    S[..., 1, 0], S[..., 2, 0], S[..., 2, 1] = x[..., 2], -x[..., 1], x[..., 0]
    return S


def _pivot_scales(w, prismatic):
    """tr B_i (n,): the trace of the rotational (revolute) or translational (prismatic) 3x3 block of
    G^A_i in {i}, from the ABA's workspace rows w: G^A_i in {0} (W_GA_BASE) and the position p_i of
    {i} in {0} (W_P_BASE). With G^A_i in {i} = Ad^T G^A_i,0 Ad, Ad = [[R, 0], [[p] R, R]], the traces are
    tr(G_ww + G_wv [p] - [p] G_vw - [p] G_vv [p]) and tr(G_vv) (rotation leaves traces unchanged)."""
    n = len(w)
    G = w[:, W_GA_BASE:W_GA_BASE + 36].reshape(n, 6, 6)
    P = _skew(w[:, W_P_BASE:W_P_BASE + 3])
    G_ww, G_wv, G_vw, G_vv = G[:, :3, :3], G[:, :3, 3:], G[:, 3:, :3], G[:, 3:, 3:]
    rotational = G_ww + G_wv @ P - P @ G_vw - P @ G_vv @ P
    return np.where(prismatic, np.trace(G_vv, axis1=1, axis2=2), np.trace(rotational, axis1=1, axis2=2))


def _without_singular_below(bad, parent):
    """The entries of `bad` (n,) with no True entry in their subtree below them (parent[i] < i)."""
    below = np.zeros(len(bad), dtype=bool)
    for i in range(len(bad) - 1, -1, -1):
        if parent[i] >= 0 and (bad[i] or below[i]):
            below[parent[i]] = True
    return bad & ~below


def check_mass_matrix(model, buffer):
    """ValueError naming the joint(s) whose articulated-body pivot D_i = S_i^T G^A_i S_i + a_i is
    numerically zero at q = 0 (module docstring). `buffer`: a fresh Data buffer of the model (scratch).

    The ABA (kernels/aba.py) runs at q = q̇ = τ = 0 on the full-body model (every body joint a
    coordinate of its own, the mimic map dropped: M_r = G^T M G is positive definite when M is, G
    having full column rank; a mimicking joint that moves no mass is refused although M_r might be
    regular, conservative), and D_i and G^A_i are read from its workspace. A zero pivot's U_i U_i^T / D_i
    (inf or NaN) spoils its ancestors' pivots, so the singular joints are found from the tips: those with
    no singular joint below them, then the ABA again with their armature at +inf (1/D_i = 0: nothing
    taken out of G^A_i, which passes whole to the parent), until no new one is found."""
    n = model.n_bodies
    if n == 0:
        return
    buffer[0, COL_NQ], buffer[0, COL_MIMIC] = n, 0.0       # the full-body model
    zeros, qdd = np.zeros(n), np.empty(n)
    armature = buffer[:n, COL_ARMATURE]
    prismatic = np.array([t == "prismatic" for t in model.body_joint_types], dtype=bool)
    parent = model.parent.tolist()
    pivots = {}                                             # singular joint -> S_i^T G^A_i S_i
    while True:
        with np.errstate(all="ignore"):
            try:
                _k.aba(buffer, zeros, zeros, zeros, qdd)
            except ValueError:                              # q̈ not finite: a zero pivot, found below
                pass
            w = buffer[:n]
            pivot = np.einsum("ij,ij->i", w[:, W_S_BASE:W_S_BASE + 6], w[:, W_U_BASE:W_U_BASE + 6])
            regular = pivot + armature > PIVOT_RTOL * (_pivot_scales(w, prismatic) + armature)
        bad = ~regular & np.isfinite(armature)
        if not bad.any():
            break
        new = _without_singular_below(bad, parent)
        pivots.update({int(i): float(pivot[i]) for i in np.flatnonzero(new)})
        armature[new] = np.inf
    if pivots:
        _raise_singular(model, sorted(pivots), pivots)


def _raise_singular(model, singular, pivots):
    """The ValueError of check_mass_matrix, saying why joint singular[0] (the one nearest the base)
    moves nothing: a massless subtree, or inertia that other joints already move."""
    mass = model.mass.copy()                            # subtree sums, leaves first (parent < child)
    inertia = np.abs(model.inertia_com).sum(axis=(1, 2))
    for i, p in reversed(list(enumerate(model.parent.tolist()))):
        if p >= 0:
            mass[p] += mass[i]
            inertia[p] += inertia[i]
    i = singular[0]
    name, link = model.body_joint_names[i], model.link_names[i]
    others = ", ".join(repr(model.body_joint_names[j]) for j in singular[1:4])
    also = f" (also {others})" if others else ""
    if mass[i] == 0 and (model.body_joint_types[i] == "prismatic" or inertia[i] == 0):
        why = f"moves no mass (link {link!r} and everything after it are massless)"
    else:
        why = (f"moves no inertia about its axis that the joints after it do not already move "
               f"(link {link!r} and everything after it; articulated-body pivot D = {pivots[i]:.3g} "
               "at q = 0)")
    raise ValueError(f"joint {name!r} {why}: the mass matrix would be singular{also}. Lock the joint "
                     "(load_urdf's locked_joints) or give those links mass and inertia")
