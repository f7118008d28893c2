"""Identification: the dynamics are linear in the inertial parameters, τ = Y(q, q̇, q̈) π.

Per body, in model order (`model.link_names`), π_j = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz,
I_yz, I_zz): mass (kg), first moment (kg m) and rotational inertia about the origin of the body's URDF
link frame (kg m², I_o = I_c + m [c]^T [c]), in that frame's axes: Pinocchio's order and frames, so
results compare one to one. Fixed links are merged into the body they hang from, as in the model.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _checks
from .kernels import entries as _k
from .model import Data, Model

__all__ = ["joint_torque_regressor", "inertial_parameters"]


def joint_torque_regressor(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                           data: Data | None = None) -> np.ndarray:
    """Y (n, 10 n_bodies) with τ = Y π (inverse_dynamics = Y @ inertial_parameters(model)): row i the
    joint torque, columns 10 j ... 10 j + 9 body j's parameters (module docstring). q, qd, qdd (n,) in
    model.joint_names order. One compiled pass (kernels/regressor.py): RNEA's forward recursion
    (eqs. 9.53-9.55), then each body's wrench per unit parameter, F = G V̇ − [ad_V]^T G V, carried to
    its ancestors' joints (eqs. 9.56-9.57). With mimic joints the rows are the coordinates' (G^T Y)."""
    Y = np.empty((model.nq, 10 * model.n_bodies))
    try:
        _k.joint_torque_regressor(model._data.buffer if data is None else _checks.buffer(model, data), q, qd,
                                  qdd, Y, np.empty(model.nq))
    except _checks.KERNEL_ERRORS as error:
        return _checks.retry(error, joint_torque_regressor, model, (q, "q"), (qd, "qd"), (qdd, "qdd"),
                             data=data)
    return Y


def inertial_parameters(model: Model) -> np.ndarray:
    """π (10 n_bodies,): every body's (m, m c, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz) with the rotational
    inertia about the URDF link frame's origin, I_o = I_c + m ([c]^T [c]) (parallel axis), in model
    order: τ = joint_torque_regressor(model, q, qd, qdd) @ inertial_parameters(model)."""
    m, c = model.mass, model.com
    I_o = model.inertia_com + m[:, None, None] * ((c * c).sum(axis=1)[:, None, None] * np.eye(3)
                                                  - c[:, :, None] * c[:, None, :])
    pi = np.column_stack([m, m[:, None] * c, I_o[:, 0, 0], I_o[:, 0, 1], I_o[:, 1, 1], I_o[:, 0, 2],
                          I_o[:, 1, 2], I_o[:, 2, 2]])
    return pi.reshape(-1)
