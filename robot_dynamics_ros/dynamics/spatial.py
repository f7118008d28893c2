"""Rigid-body motions and spatial algebra (Modern Robotics ch. 3 and 8), angular first.

Twist V = (w, v), wrench F = (m, f). These numpy helpers serve model construction, the textbook's
parameterisation and the tests; the compiled kernels use their own scalar loops of the same formulas.
"""
import numpy as np


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


def spatial_inertia(mass, com, inertia_com):
    """G in a frame whose origin is off the centre of mass c:
    G = Ad_{T_cb}^T diag(I_c, m 1) Ad_{T_cb} = [[I_c - m[c]^2, m[c]], [-m[c], m 1]] (eq. 9.41 moved)."""
    C = skew(com)
    G = np.zeros((6, 6))
    G[:3, :3] = inertia_com - mass * C @ C
    G[:3, 3:] = mass * C
    G[3:, :3] = -mass * C
    G[3:, 3:] = mass * np.eye(3)
    return G


def exp_twist(S, theta):
    """e^{[S] theta} for a screw axis S = (w, v) with |w| = 1 or (w = 0, |v| = 1) (eq. 3.88)."""
    w, v = np.asarray(S[:3], float), np.asarray(S[3:], float)
    if np.linalg.norm(w) < 1e-12:
        return transform(np.eye(3), v * theta)
    W = skew(w)
    R = np.eye(3) + np.sin(theta) * W + (1 - np.cos(theta)) * W @ W
    G = np.eye(3) * theta + (1 - np.cos(theta)) * W + (theta - np.sin(theta)) * W @ W
    return transform(R, G @ v)

