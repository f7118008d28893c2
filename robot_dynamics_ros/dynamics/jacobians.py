"""Frame poses, Jacobians and their time derivatives (space, body and world-aligned forms).

Twists are angular first, V = (ω, v) in rad/s and m/s; positions in m.
"""
from __future__ import annotations

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks
from .kernels import entries as _k
from .model import Data, Model
from .spatial import adjoint

REFERENCES = {"space": _k.REF_SPACE, "body": _k.REF_BODY, "world_aligned": _k.REF_WORLD_ALIGNED}


def reference_code(reference):
    return _checks.choice(REFERENCES, reference, "reference")


def frame_pose(model: Model, q: ArrayLike, frame: str | None = None, data: Data | None = None) -> np.ndarray:
    """T_{0f}(q) (4, 4): pose of a named frame (default model.tip_frame) in the root frame {0}
    (eq. 9.37), position in m."""
    T = empty((4, 4))
    try:
        _k.frame_pose(_checks.buffer(model, data), q, model.frame_index(frame), T)
    except _checks.KERNEL_ERRORS as error:
        (q,) = _checks.retry_args(model, error, (q, "q"))
        return frame_pose(model, q, frame, data)
    return T


def jacobian(model: Model, q: ArrayLike, frame: str | None = None, reference: str = "space",
             data: Data | None = None) -> np.ndarray:
    """J(q) (6, n) of a named frame (default model.tip_frame): V = J q̇ with V = (ω, v) angular first.

    reference "space": the space Jacobian J_s (columns S_j = Ad_{T_0j} A_j, twist in the root frame);
    "body": J_b = [Ad_{T_f0}] J_s, the twist in the frame's own coordinates;
    "world_aligned": origin at the frame, axes of the root frame (ω in root axes, v = ṗ_f).
    Columns of joints that do not move the frame are zero. With mimic joints the columns are those of
    the independent coordinates, J_r = J G (a mimicking joint's column, times its multiplier, adds to
    the column of the joint it follows).
    """
    J = empty((6, model.nq))
    try:
        _k.jacobian(_checks.buffer(model, data), q, model.frame_index(frame), reference_code(reference), J)
    except _checks.KERNEL_ERRORS as error:
        (q,) = _checks.retry_args(model, error, (q, "q"))
        return jacobian(model, q, frame, reference, data)
    return J


def jacobian_derivative(model: Model, q: ArrayLike, qd: ArrayLike, frame: str | None = None,
                        reference: str = "space", data: Data | None = None) -> np.ndarray:
    """J̇(q, q̇) (6, n) = dJ/dt of jacobian(model, q, frame, reference), so that the frame's
    acceleration is V̇ = J q̈ + J̇ q̇ in the same reference (eq. 9.92)."""
    dJ = empty((6, model.nq))
    try:
        _k.jacobian_derivative(_checks.buffer(model, data), q, qd, model.frame_index(frame),
                               reference_code(reference), dJ)
    except _checks.KERNEL_ERRORS as error:
        q, qd = _checks.retry_args(model, error, (q, "q"), (qd, "qd"))
        return jacobian_derivative(model, q, qd, frame, reference, data)
    return dJ


def body_jacobians(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """J_ib(q) (n, 6, n): the body Jacobian of every body frame {i} (the frame joint i moves, eq. 9.60),
    so that V_i = J_ib q̇ is link i's twist in {i}. From each link's named frame f on body i:
    J_ib = [Ad_{T_if}] J_fb, T_if the frame's fixed placement on the body. One per body (n_bodies, 6, nq)
    with a mimic joint's body included, columns of the coordinates."""
    q = _checks.vector(model, q, "q")
    out = empty((model.n_bodies, 6, model.nq))
    for i, link in enumerate(model.link_names):
        f = model.frame_index(link)
        out[i] = adjoint(model.frame_placement[f]) @ jacobian(model, q, link, reference="body", data=data)
    return out
