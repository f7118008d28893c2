"""Frame poses, Jacobians and their time derivatives (space, body and world-aligned forms)."""
import numpy as np

from . import _checks
from . import _kernels as _k

_frame_pose = _k.entry(_k.frame_pose)
_jacobian = _k.entry(_k.jacobian)
_jacobian_derivative = _k.entry(_k.jacobian_derivative)

REFERENCES = {"space": _k.REF_SPACE, "body": _k.REF_BODY, "world_aligned": _k.REF_WORLD_ALIGNED}


def reference_code(reference):
    try:
        return REFERENCES[reference]
    except (KeyError, TypeError):
        raise ValueError(f"reference must be one of {list(REFERENCES)}, got {reference!r}") from None


def frame_pose(model, q, frame=None, data=None):
    """T_{0f}(q) (4, 4): pose of a named frame (default model.tip_frame) in the root frame (eq. 9.37)."""
    T = np.empty((4, 4))
    try:
        if q.strides != (8,):
            raise TypeError
        _frame_pose(model._packed, (data or model._data).work, q, model.frame_index(frame), T)
        return T
    except (AttributeError, TypeError, ValueError):
        if _checks.is_clean(q):
            raise
        return frame_pose(model, _checks.vector(model, q, "q"), frame, data)


def jacobian(model, q, frame=None, reference="space", data=None):
    """J(q) (6, n) of a named frame: V = J q̇ with V = (ω, v) angular first.

    reference "space": the space Jacobian J_s (columns S_j = Ad_{T_0j} A_j, twist in the root frame);
    "body": J_b = [Ad_{T_f0}] J_s, the twist in the frame's own coordinates;
    "world_aligned": origin at the frame, axes of the root frame (ω in root axes, v = ṗ_f).
    Columns of joints that do not move the frame are zero.
    """
    J = np.empty((6, model.nq))
    try:
        if q.strides != (8,):
            raise TypeError
        _jacobian(model._packed, (data or model._data).work, q, model.frame_index(frame), reference_code(reference), J)
        return J
    except (AttributeError, TypeError, ValueError):
        if _checks.is_clean(q):
            raise
        return jacobian(model, _checks.vector(model, q, "q"), frame, reference, data)


def jacobian_derivative(model, q, qd, frame=None, reference="space", data=None):
    """J̇(q, q̇) (6, n) = dJ/dt of jacobian(model, q, frame, reference), so that the frame's
    acceleration is V̇ = J q̈ + J̇ q̇ in the same reference (eq. 9.92)."""
    dJ = np.empty((6, model.nq))
    try:
        if q.strides != (8,) or qd.strides != (8,):
            raise TypeError
        _jacobian_derivative(model._packed, (data or model._data).work, q, qd, model.frame_index(frame),
                             reference_code(reference), dJ)
        return dJ
    except (AttributeError, TypeError, ValueError):
        if _checks.is_clean(q, qd):
            raise
        return jacobian_derivative(model, _checks.vector(model, q, "q"), _checks.vector(model, qd, "qd"),
                                   frame, reference, data)
