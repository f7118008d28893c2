"""Rigid-body motions and spatial algebra (Modern Robotics ch. 3 and 8), angular first.

Twist V = (w, v), wrench F = (m, f). These numpy helpers serve model construction, the textbook's
parameterisation, trajectories of poses (pose_profile) and the tests; the compiled kernels use their own
scalar loops of the same formulas (log_transform is the kernels' own, compiled).
"""
import numpy as np

from . import _checks
from .kernels import entries as _k
from .kernels.spatial_algebra import RIGID_TOLERANCE


def skew(x):
    """[x]: the 3x3 skew-symmetric matrix with [x] y = x cross y."""
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def rpy_to_rotation(rpy):
    """URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) (fixed axes x, y, z)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def rotation_quaternion(R):
    """The unit quaternion (w, x, y, z), w >= 0, of a rotation matrix R (3, 3) (Shepperd's method: from
    the largest of 1 + tr R and 1 + 2 R_ii - tr R, so no division by a small number).

    >>> rotation_quaternion(np.eye(3))
    (1.0, 0.0, 0.0, 0.0)
    >>> [round(v, 6) for v in rotation_quaternion(np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]]))]
    [0.707107, 0.0, 0.0, 0.707107]
    """
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = np.asarray(R, dtype=float)[:3, :3].tolist()
    trace = r00 + r11 + r22
    largest = max(trace, r00, r11, r22)
    if largest == trace:
        s = 2.0 * np.sqrt(1.0 + trace)                                   # s = 4 w
        w, x, y, z = 0.25 * s, (r21 - r12) / s, (r02 - r20) / s, (r10 - r01) / s
    elif largest == r00:
        s = 2.0 * np.sqrt(1.0 + 2.0 * r00 - trace)                      # s = 4 x
        w, x, y, z = (r21 - r12) / s, 0.25 * s, (r01 + r10) / s, (r02 + r20) / s
    elif largest == r11:
        s = 2.0 * np.sqrt(1.0 + 2.0 * r11 - trace)                      # s = 4 y
        w, x, y, z = (r02 - r20) / s, (r01 + r10) / s, 0.25 * s, (r12 + r21) / s
    else:
        s = 2.0 * np.sqrt(1.0 + 2.0 * r22 - trace)                      # s = 4 z
        w, x, y, z = (r10 - r01) / s, (r02 + r20) / s, (r12 + r21) / s, 0.25 * s
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    return float(w), float(x), float(y), float(z)


def transform(R, p):
    """The 4x4 homogeneous transform (R, p)."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def inverse_transform(T):
    """T^-1 = (R^T, -R^T p)."""
    R, p = T[:3, :3], T[:3, 3]
    return transform(R.T, -R.T @ p)


def adjoint(T):
    """[Ad_T] = [[R, 0], [[p] R, R]] (eq. 3.83): maps twists in {b} to twists in {a} for T = T_ab."""
    R, p = T[:3, :3], T[:3, 3]
    Ad = np.zeros((6, 6))
    Ad[:3, :3] = R
    Ad[3:, 3:] = R
    Ad[3:, :3] = skew(p) @ R
    return Ad


def ad(V):
    """[ad_V] = [[[w], 0], [[v], [w]]] (eq. 9.29): the Lie bracket [V, .]."""
    A = np.zeros((6, 6))
    A[:3, :3] = skew(V[:3])
    A[3:, 3:] = skew(V[:3])
    A[3:, :3] = skew(V[3:])
    return A


def exp_twist(S, theta):
    """e^{[S] theta} for a screw axis S = (w, v) with |w| = 1 or (w = 0, |v| = 1) (eq. 3.88)."""
    return exp_coordinates(np.asarray(S, dtype=np.float64) * theta)


def exp_coordinates(X):
    """e^{[X]} (4 x 4) for any twist X = (ω, v) = S θ (6,), angular first, θ = |ω| (eq. 3.88 with the unit
    axis folded in): R = 1 + A [ω] + B [ω]², p = (1 + B [ω] + C [ω]²) v with A = sin θ / θ,
    B = (1 - cos θ) / θ², C = (θ - sin θ) / θ³ (their Taylor series below θ = 1e-3). The inverse of
    log_transform."""
    X = np.asarray(X, dtype=np.float64)
    w, v = X[:3], X[3:]
    t2 = float(w @ w)
    if t2 < 1e-6:
        A = 1.0 - t2 / 6.0 + t2 * t2 / 120.0
        B = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
        C = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
    else:
        theta = np.sqrt(t2)
        A, B, C = np.sin(theta) / theta, (1.0 - np.cos(theta)) / t2, (theta - np.sin(theta)) / (t2 * theta)
    W = skew(w)
    W2 = W @ W
    return transform(np.eye(3) + A * W + B * W2, v + B * (W @ v) + C * (W2 @ v))


def log_transform(T):
    """The twist X = S θ (6,), angular first, with e^{[S] θ} = T and 0 <= θ <= π (the textbook's
    MatrixLog6, eqs. 3.91-3.92; near θ = 0 and π as kernels/spatial_algebra.log_transform says): the
    twist that takes the identity to T in unit time, in T's frame and the identity's alike. T: a 4 x 4
    rigid transform (rotation orthonormal with det +1 to 1e-6, last row 0 0 0 1), else a ValueError."""
    X = np.empty(6)
    try:
        _k.log_transform(T, X)
    except _checks.KERNEL_ERRORS:
        _k.log_transform(rigid_transform(T, "T"), X)
    return X


def rigid_transform(T, name):
    """T as a (4, 4) float64 rigid transform the kernels take (rotation orthonormal with det +1 to
    RIGID_TOLERANCE, last row 0 0 0 1), or a ValueError naming it."""
    T = _checks.real_array(T, name, "a 4x4 homogeneous transform")
    if T.shape != (4, 4) or not np.isfinite(T).all():
        raise ValueError(f"{name} must be a finite 4x4 homogeneous transform, got shape {T.shape}"
                         + ("" if T.shape != (4, 4) else " with NaN or inf"))
    R = T[:3, :3]
    if (np.abs(R.T @ R - np.eye(3)).max() > RIGID_TOLERANCE
            or abs(np.linalg.det(R) - 1.0) > RIGID_TOLERANCE
            or np.abs(T[3] - (0.0, 0.0, 0.0, 1.0)).max() > 1e-12):
        raise ValueError(f"{name} is not a rigid transform: its rotation must be orthonormal with "
                         "determinant +1 and its last row 0 0 0 1")
    return _checks._kernel_ready(T)
