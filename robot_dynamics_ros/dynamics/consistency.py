"""Physical consistency of inertial parameters: the pseudo-inertia (Wensing, Kim and Slotine, RA-L 2017).

A body's ten parameters π = (m, h = m c, I_o) (identification.py's order: I_xx, I_xy, I_yy, I_xz, I_yz,
I_zz about the frame's origin) belong to some distribution of mass in space exactly when its
pseudo-inertia

    J = ∫ (r, 1)(r, 1)ᵀ dm = [[½ tr(I_o) 1 − I_o, h], [hᵀ, m]]                  (4 x 4)

is positive semi-definite: then m ≥ 0 and, for m > 0, the principal moments about the centre of mass
satisfy the triangle inequalities (a point mass, a rod and a plate on the boundary). J is linear in π,
so "J ⪰ 0" is a linear matrix inequality, and least squares under it is a convex (semidefinite) program.
"""
from __future__ import annotations

import numpy as np

# where each entry of a 3x3 rotational inertia sits in (I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)
PIN_ORDER = np.array([[0, 1, 3], [1, 2, 4], [3, 4, 5]])


def pseudo_inertia(pi_body: np.ndarray) -> np.ndarray:
    """J (4, 4) of one body's ten parameters (module docstring)."""
    m, h, I_o = pi_body[0], pi_body[1:4], np.asarray(pi_body[4:])[PIN_ORDER]
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I_o) * np.eye(3) - I_o
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def pseudo_inertia_expression(b):
    """J of ten cvxpy expressions b (the same layout): an affine 4 x 4 cvxpy expression."""
    import cvxpy as cp

    m, hx, hy, hz = b[0], b[1], b[2], b[3]
    Ixx, Ixy, Iyy, Ixz, Iyz, Izz = b[4], b[5], b[6], b[7], b[8], b[9]
    half_trace = 0.5 * (Ixx + Iyy + Izz)
    return cp.bmat([[half_trace - Ixx, -Ixy, -Ixz, hx],
                    [-Ixy, half_trace - Iyy, -Iyz, hy],
                    [-Ixz, -Iyz, half_trace - Izz, hz],
                    [hx, hy, hz, m]])


def solve(problem):
    """problem.solve with Clarabel (an interior-point conic solver); its "may be inaccurate" warning is not
    passed on: callers check what they rely on (the bodies' consistency) or fit noisy data, for which the
    solver's reduced tolerances are ample."""
    import warnings

    import cvxpy as cp

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        problem.solve(solver=cp.CLARABEL)
