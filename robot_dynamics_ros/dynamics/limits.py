"""Actuator and joint limits: effort saturation and position-limit enforcement (pure numpy).

Used by the simulator (after every integrator step) and by the computed-torque controller (before
publishing). No dynamics here, only the box constraints a URDF declares:

    |tau_i| <= model.effort_limit[i]                       (<limit effort=...>)
    model.lower[i] <= q_i <= model.upper[i]                (<limit lower=... upper=...>)

Joint vectors are in ``model.joint_names`` order. Only the attributes ``effort_limit``, ``lower``
and ``upper`` of the model are read, so any object carrying them works (the unit tests use a
``types.SimpleNamespace``).

Examples:
    >>> from types import SimpleNamespace
    >>> import numpy as np
    >>> m = SimpleNamespace(effort_limit=np.array([10.0, np.inf]), lower=np.array([-1.0, -np.inf]),
    ...                     upper=np.array([1.0, np.inf]))
    >>> tau, sat = saturate_effort(m, [12.0, 1e6])
    >>> tau.tolist(), sat.tolist()
    ([10.0, 1000000.0], [True, False])
    >>> q, qd = enforce_position_limits(m, [1.5, 3.0], [2.0, 2.0])
    >>> q.tolist(), qd.tolist()
    ([1.0, 3.0], [0.0, 2.0])
"""

import numpy as np

from . import _checks

__all__ = ['effort_limits', 'saturate_effort', 'clip_positions', 'enforce_position_limits',
           'at_position_limit']


def effort_limits(model):
    """Per-joint effort bound (n,), N·m or N; +inf where the joint is unlimited.

    A URDF ``effort`` of zero or less is read as "not specified" (urdf parsers default a missing
    attribute to 0, and a joint that can exert no effort at all is never what is meant), so such
    joints are not saturated.
    """
    limit = np.asarray(model.effort_limit, dtype=np.float64)
    return np.where((limit > 0.0) & ~np.isnan(limit), limit, np.inf)


def saturate_effort(model, tau):
    """Clamp ``tau`` to [-effort_limit, effort_limit] per joint.

    Returns ``(tau_saturated, saturated)``: the clamped efforts (a new array) and a boolean mask of
    the joints whose effort was reduced. ``tau`` must be finite (ValueError otherwise).
    """
    limit = effort_limits(model)
    tau = _checks.vector(model, tau, 'tau', limit.shape[0])
    saturated = np.abs(tau) > limit
    return np.clip(tau, -limit, limit), saturated


def clip_positions(model, q):
    """Project ``q`` into the position box [model.lower, model.upper] (a new array)."""
    lower = np.asarray(model.lower, dtype=np.float64)
    upper = np.asarray(model.upper, dtype=np.float64)
    q = _checks.vector(model, q, 'q', lower.shape[0])
    return np.clip(q, lower, upper)


def at_position_limit(model, q):
    """Boolean masks ``(at_lower, at_upper)`` of joints at or beyond their position limits."""
    lower = np.asarray(model.lower, dtype=np.float64)
    upper = np.asarray(model.upper, dtype=np.float64)
    q = _checks.vector(model, q, 'q', lower.shape[0])
    return q <= lower, q >= upper


def enforce_position_limits(model, q, qd):
    """Hard joint stops for a simulator: no joint passes through its position limit.

    Positions beyond a limit are clamped onto it, and the velocity component driving further into
    the limit is set to zero (a perfectly inelastic stop); a velocity pointing back into the range
    is kept, so the joint can leave the limit. Returns new arrays ``(q, qd)``.
    """
    lower = np.asarray(model.lower, dtype=np.float64)
    upper = np.asarray(model.upper, dtype=np.float64)
    n = lower.shape[0]
    q = _checks.vector(model, q, 'q', n)
    qd = _checks.vector(model, qd, 'qd', n).copy()
    at_lower = q <= lower
    at_upper = q >= upper
    qd[at_lower & (qd < 0.0)] = 0.0
    qd[at_upper & (qd > 0.0)] = 0.0
    return np.clip(q, lower, upper), qd
