"""Joint friction: viscous F_v q̇ plus Coulomb F_s sgn(q̇) (the Lagrangian notes' generalised forces)."""
from __future__ import annotations

from typing import Optional, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .model import Model

#: The `friction` argument of the dynamics calls: None/False (none), True (the URDF's coefficients)
#: or (viscous, coulomb), each a scalar or a per-joint array.
Friction = Optional[Union[bool, Tuple[ArrayLike, ArrayLike]]]


def friction_coefficients(model, friction):
    """(viscous, coulomb) arrays for the `friction` argument of the dynamics calls, or None.

    friction: None/False (no friction), True (the URDF's <dynamics damping friction>), or a pair
    (viscous, coulomb) of scalars or per-joint arrays.
    """
    if friction is None or friction is False:
        return None
    if friction is True:
        return model.damping, model.friction
    try:
        viscous, coulomb = friction
    except (TypeError, ValueError):
        raise ValueError("friction must be None, True or a pair (viscous, coulomb)") from None
    return _coefficient(model, viscous, "viscous"), _coefficient(model, coulomb, "coulomb")


def _coefficient(model, value, name):
    name = f"friction {name} coefficients"
    a = _checks.real_array(value, name, f"a number or a vector of length {model.nq}")
    a = _checks.vector(model, np.full(model.nq, a) if a.ndim == 0 else a, name)
    if np.any(a < 0):
        raise ValueError(f"{name} must be non-negative")
    return a


def applied_friction(model, qd, friction):
    """F_v q̇ + F_s sgn(q̇) for the `friction` argument of the dynamics calls (see
    friction_coefficients); 0.0 without friction. qd: (n,) or (N, n)."""
    coefficients = friction_coefficients(model, friction)
    if coefficients is None:
        return 0.0
    return _checks.finite(coefficients[0] * qd + coefficients[1] * np.sign(qd),
                          "friction torques F_v qd + F_s sgn(qd)", "qd and friction coefficients")


def friction_torques(model: Model, qd: ArrayLike, viscous: ArrayLike | None = None,
                     coulomb: ArrayLike | None = None) -> np.ndarray:
    """τ_f = F_v q̇ + F_s sgn(q̇) (n,): viscous and Coulomb friction torques (the notes' friction terms).

    qd: (n,) joint velocities (rad/s or m/s). viscous (N·m·s/rad or N·s/m), coulomb (N·m or N):
    scalars or per-joint arrays (default: the URDF's damping and friction). The
    returned torques oppose the motion: a motor must supply them in addition to the rigid-body
    torques (inverse dynamics adds them; forward dynamics subtracts them).
    """
    viscous = model.damping if viscous is None else viscous
    coulomb = model.friction if coulomb is None else coulomb
    return applied_friction(model, _checks.vector(model, qd, "qd"), (viscous, coulomb))
