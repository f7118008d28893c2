"""Spatial algebra on tuples of floats (Modern Robotics ch. 3 and 8), angular first.

A twist V = (w, v) and a wrench F = (m, f) are 6-tuples; a rotation R is a 9-tuple (row-major);
a pose T = (R, p) is passed as its rotation and translation. A rigid body's spatial inertia is kept
as its ten inertial parameters (m, h, I_o): mass, first mass moment h = m c and the upper triangle
(xx, xy, xz, yy, yz, zz) of the rotational inertia about the frame's origin, so that

    G = [[I_o, [h]], [[h]^T, m 1]]    (eq. 9.41 moved off the centre of mass)

Every helper is inlined into the kernels that call it; the tuples stay in registers.

    [Ad_T^-1] V     = (R^T w, R^T (v + w x p))             twist in {a} -> in {b}, T = T_ab (eq. 3.83)
    [Ad_T^-1]^T F   = (R m + p x R f, R f)                 wrench in {b} -> in {a}
    [ad_V] X        = (w x wX, v x wX + w x vX)            the Lie bracket [V, X] (eq. 9.28)
    -[ad_V]^T P     = (w x m + v x f, w x f)               P = (m, f)  (eq. 9.31)
"""
import numpy as np

from .jit import inline
from .layout import COL_MASS

ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


# ---- 3-vectors and rotations ---------------------------------------------------------------------
@inline
def cross(a, b):
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


@inline
def add3(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


@inline
def rotate(R, x):
    """R x."""
    return (R[0] * x[0] + R[1] * x[1] + R[2] * x[2],
            R[3] * x[0] + R[4] * x[1] + R[5] * x[2],
            R[6] * x[0] + R[7] * x[1] + R[8] * x[2])


@inline
def rotate_back(R, x):
    """R^T x."""
    return (R[0] * x[0] + R[3] * x[1] + R[6] * x[2],
            R[1] * x[0] + R[4] * x[1] + R[7] * x[2],
            R[2] * x[0] + R[5] * x[1] + R[8] * x[2])


@inline
def transpose(R):
    return R[0], R[3], R[6], R[1], R[4], R[7], R[2], R[5], R[8]


@inline
def compose_rotations(A, B):
    """A B for two rotations, or any two 3 x 3 matrices (row-major 9-tuples)."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6], A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@inline
def compose(R_ab, p_ab, R_bc, p_bc):
    """T_ac = T_ab T_bc as (R, p): R_ac = R_ab R_bc, p_ac = p_ab + R_ab p_bc."""
    return compose_rotations(R_ab, R_bc), add3(p_ab, rotate(R_ab, p_bc))


# ---- 6-vectors ---------------------------------------------------------------------------------------
@inline
def add6(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5]


@inline
def scale6(a, s):
    return a[0] * s, a[1] * s, a[2] * s, a[3] * s, a[4] * s, a[5] * s


@inline
def dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


# ---- rigid transforms -----------------------------------------------------------------------------
RIGID_TOLERANCE = 1e-6      # |R^T R - 1| and |det R - 1| of a rigid transform given as a 4x4 array


@inline
def is_rigid_transform(T):
    """Whether the 4x4 array T is a rigid transform: R^T R = 1 and det R = 1 to RIGID_TOLERANCE (entry
    by entry), last row 0 0 0 1 to 1e-12. Assumes finite entries."""
    if max(abs(T[3, 0]), abs(T[3, 1]), abs(T[3, 2]), abs(T[3, 3] - 1.0)) > 1e-12:
        return False
    for a in range(3):
        for b in range(3):
            s = T[0, a] * T[0, b] + T[1, a] * T[1, b] + T[2, a] * T[2, b] - (1.0 if a == b else 0.0)
            if abs(s) > RIGID_TOLERANCE:
                return False
    det = (T[0, 0] * (T[1, 1] * T[2, 2] - T[1, 2] * T[2, 1])
           - T[0, 1] * (T[1, 0] * T[2, 2] - T[1, 2] * T[2, 0])
           + T[0, 2] * (T[1, 0] * T[2, 1] - T[1, 1] * T[2, 0]))
    return abs(det - 1.0) <= RIGID_TOLERANCE


# ---- changes of frame ----------------------------------------------------------------------------------
@inline
def adjoint(R, p, V):
    """[Ad_T] V for T = (R, p) = T_ab: a twist in {b} re-expressed in {a} (eq. 3.83):
    (R w, p x R w + R v)."""
    w_a = rotate(R, (V[0], V[1], V[2]))
    v_a = add3(cross(p, w_a), rotate(R, (V[3], V[4], V[5])))
    return w_a[0], w_a[1], w_a[2], v_a[0], v_a[1], v_a[2]


@inline
def log_transform(R, p):
    """The twist S θ = (ω θ, v θ) with (R, p) = e^{[S] θ} (the textbook's MatrixLog6, eqs. 3.53-3.54,
    3.91-3.92), 0 <= θ <= π, robust near 0 and π: θ = atan2(|vee(R - R^T)|/2, (tr R - 1)/2); near π
    the axis from the symmetric part (R + R^T)/2 - cos θ 1 = (1 - cos θ) ω ω^T;
    v θ = (1 - ½[ωθ] + (1 - (θ/2) cot(θ/2))/θ² [ωθ]²) p."""
    sx, sy, sz = 0.5 * (R[7] - R[5]), 0.5 * (R[2] - R[6]), 0.5 * (R[3] - R[1])         # sin θ ω
    c = 0.5 * (R[0] + R[4] + R[8] - 1.0)
    s = np.sqrt(sx * sx + sy * sy + sz * sz)
    theta = np.arctan2(s, c)
    if theta < 1e-4:                                     # θ / sin θ = 1 + θ²/6 + 7θ⁴/360 + ...
        f = 1.0 + theta * theta / 6.0 + 7.0 * theta ** 4 / 360.0
        w = (sx * f, sy * f, sz * f)
    elif np.pi - theta > 1e-4:
        f = theta / s
        w = (sx * f, sy * f, sz * f)
    else:
        b0, b4, b8 = R[0] - c, R[4] - c, R[8] - c          # diagonal of (1 - cos θ) ω ω^T
        if b0 >= b4 and b0 >= b8:
            col = (b0, 0.5 * (R[3] + R[1]), 0.5 * (R[6] + R[2]))
            bkk = b0
        elif b4 >= b8:
            col = (0.5 * (R[1] + R[3]), b4, 0.5 * (R[7] + R[5]))
            bkk = b4
        else:
            col = (0.5 * (R[2] + R[6]), 0.5 * (R[5] + R[7]), b8)
            bkk = b8
        f = theta / np.sqrt((1.0 - c) * bkk)
        if col[0] * sx + col[1] * sy + col[2] * sz < 0.0:
            f = -f
        w = (col[0] * f, col[1] * f, col[2] * f)
    if theta < 1e-3:                                     # (1 - (θ/2) cot(θ/2))/θ² = 1/12 + θ²/720 + ...
        beta = 1.0 / 12.0 + theta * theta / 720.0 + theta ** 4 / 30240.0
    else:
        beta = (1.0 - 0.5 * theta / np.tan(0.5 * theta)) / (theta * theta)
    wp = cross(w, p)
    wwp = cross(w, wp)
    return (w[0], w[1], w[2], p[0] - 0.5 * wp[0] + beta * wwp[0], p[1] - 0.5 * wp[1] + beta * wwp[1],
            p[2] - 0.5 * wp[2] + beta * wwp[2])


@inline
def adjoint_inverse(R, p, V):
    """[Ad_{T^-1}] V for T = (R, p) = T_ab: a twist in {a} re-expressed in {b} (eq. 9.54 with
    {a} = {i-1}, {b} = {i})."""
    w = (V[0], V[1], V[2])
    v = add3((V[3], V[4], V[5]), cross(w, p))
    w_b = rotate_back(R, w)
    v_b = rotate_back(R, v)
    return w_b[0], w_b[1], w_b[2], v_b[0], v_b[1], v_b[2]


@inline
def adjoint_inverse_transpose(R, p, F):
    """[Ad_{T^-1}]^T F for T = (R, p) = T_ab: a wrench in {b} re-expressed in {a} (eq. 9.56's
    Ad^T_{T_{i+1,i}} F_{i+1} with {a} = {i}, {b} = {i+1})."""
    f = rotate(R, (F[3], F[4], F[5]))
    m = add3(rotate(R, (F[0], F[1], F[2])), cross(p, f))
    return m[0], m[1], m[2], f[0], f[1], f[2]


# ---- Lie brackets ------------------------------------------------------------------------------------
@inline
def ad(V, X):
    """[ad_V] X = [V, X] = (w x w_X, v x w_X + w x v_X)  (eq. 9.28)."""
    w, v = (V[0], V[1], V[2]), (V[3], V[4], V[5])
    wx, vx = (X[0], X[1], X[2]), (X[3], X[4], X[5])
    a = cross(w, wx)
    b = add3(cross(v, wx), cross(w, vx))
    return a[0], a[1], a[2], b[0], b[1], b[2]


@inline
def neg_ad_transpose(V, P):
    """-[ad_V]^T P = (w x m + v x f, w x f) for V = (w, v), P = (m, f)  (eq. 9.31)."""
    w, v = (V[0], V[1], V[2]), (V[3], V[4], V[5])
    m, f = (P[0], P[1], P[2]), (P[3], P[4], P[5])
    a = add3(cross(w, m), cross(v, f))
    b = cross(w, f)
    return a[0], a[1], a[2], b[0], b[1], b[2]


# ---- joint screw axes A_i = (e_z, 0) (revolute) or (0, e_z) (prismatic) in {i} -----------------------
@inline
def axis_dot(prismatic, X):
    """A_i^T X."""
    return X[5] if prismatic else X[2]


@inline
def plus_axis(prismatic, X, s):
    """X + A_i s."""
    if prismatic:
        return X[0], X[1], X[2], X[3], X[4], X[5] + s
    return X[0], X[1], X[2] + s, X[3], X[4], X[5]


@inline
def plus_ad_axis(prismatic, V, X, s):
    """X + [ad_V] A_i s = X + [V, A_i] s  (the bracket of eq. 9.55); with e_z, w x e_z = (w_y, -w_x, 0)."""
    if prismatic:     # [V, (0, e_z)] = (0, w x e_z)
        return X[0], X[1], X[2], X[3] + V[1] * s, X[4] - V[0] * s, X[5]
    return (X[0] + V[1] * s, X[1] - V[0] * s, X[2],          # [V, (e_z, 0)] = (w x e_z, v x e_z)
            X[3] + V[4] * s, X[4] - V[3] * s, X[5])


@inline
def screw_axis_in_base(prismatic, R, p):
    """S_i = [Ad_{T_0i}] A_i: (R e_z, p x R e_z) (revolute) or (0, R e_z) (prismatic)."""
    a = (R[2], R[5], R[8])
    if prismatic:
        return 0.0, 0.0, 0.0, a[0], a[1], a[2]
    v = cross(p, a)
    return a[0], a[1], a[2], v[0], v[1], v[2]


# ---- rigid-body inertias (m, h, I_o) ---------------------------------------------------------------------
@inline
def body_inertia(mb, i):
    """The ten inertial parameters of body i in {i}, from the packed model."""
    o = COL_MASS       # m, h (3), I_o (3x3 row-major)
    return (mb[i, o], mb[i, o + 1], mb[i, o + 2], mb[i, o + 3],
            mb[i, o + 4], mb[i, o + 5], mb[i, o + 6], mb[i, o + 8], mb[i, o + 9], mb[i, o + 12])


@inline
def add_inertias(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4],
            a[5] + b[5], a[6] + b[6], a[7] + b[7], a[8] + b[8], a[9] + b[9])


@inline
def inertia_times(G, X):
    """G X for the spatial inertia G = [[I_o, [h]], [[h]^T, m 1]] (eq. 9.41) and X = (w, v)."""
    m, hx, hy, hz, i00, i01, i02, i11, i12, i22 = G
    wx, wy, wz, vx, vy, vz = X
    return (i00 * wx + i01 * wy + i02 * wz + hy * vz - hz * vy,
            i01 * wx + i11 * wy + i12 * wz + hz * vx - hx * vz,
            i02 * wx + i12 * wy + i22 * wz + hx * vy - hy * vx,
            m * vx - (hy * wz - hz * wy),
            m * vy - (hz * wx - hx * wz),
            m * vz - (hx * wy - hy * wx))


@inline
def inertia_times_axis(prismatic, G):
    """G A_i: (I_o e_z, e_z x h) (revolute) or (h x e_z, m e_z) (prismatic)."""
    m, hx, hy, hz, i00, i01, i02, i11, i12, i22 = G
    if prismatic:
        return hy, -hx, 0.0, 0.0, 0.0, m
    return i02, i12, i22, -hy, hx, 0.0


@inline
def moved_inertia(R, p, G):
    """The inertia G of a body, given in its own frame {b}, re-expressed in frame {a}, where
    (R, p) = T_ab: [Ad_{T_ab}^-1]^T G [Ad_{T_ab}^-1] (eq. 9.42), as ten parameters.

    Every particle x maps to x' = R x + p, so h' = R h + m p and
    I_o' = -sum m [x']^2 = R I_o R^T - ([Rh][p] + [p][Rh]) - m [p]^2
         = R I_o R^T + 2 (g.p) 1 - p g^T - g p^T + m (|p|^2 1 - p p^T),  g = R h.
    """
    m, hx, hy, hz, i00, i01, i02, i11, i12, i22 = G
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
    px, py, pz = p
    gx, gy, gz = rotate(R, (hx, hy, hz))
    # U = I_o R^T, column by column: U[:, c] = I_o (row c of R)
    u00 = i00 * r00 + i01 * r01 + i02 * r02
    u10 = i01 * r00 + i11 * r01 + i12 * r02
    u20 = i02 * r00 + i12 * r01 + i22 * r02
    u01 = i00 * r10 + i01 * r11 + i02 * r12
    u11 = i01 * r10 + i11 * r11 + i12 * r12
    u21 = i02 * r10 + i12 * r11 + i22 * r12
    u02 = i00 * r20 + i01 * r21 + i02 * r22
    u12 = i01 * r20 + i11 * r21 + i12 * r22
    u22 = i02 * r20 + i12 * r21 + i22 * r22
    gp2 = 2.0 * (gx * px + gy * py + gz * pz)
    mpp = m * (px * px + py * py + pz * pz)
    # (R U)[a, b] + the translation terms, upper triangle
    a00 = r00 * u00 + r01 * u10 + r02 * u20 + gp2 + mpp - 2.0 * px * gx - m * px * px
    a11 = r10 * u01 + r11 * u11 + r12 * u21 + gp2 + mpp - 2.0 * py * gy - m * py * py
    a22 = r20 * u02 + r21 * u12 + r22 * u22 + gp2 + mpp - 2.0 * pz * gz - m * pz * pz
    a01 = r00 * u01 + r01 * u11 + r02 * u21 - px * gy - gx * py - m * px * py
    a02 = r00 * u02 + r01 * u12 + r02 * u22 - px * gz - gx * pz - m * px * pz
    a12 = r10 * u02 + r11 * u12 + r12 * u22 - py * gz - gy * pz - m * py * pz
    return m, gx + m * px, gy + m * py, gz + m * pz, a00, a01, a02, a11, a12, a22


@inline
def set_inertia_matrix(w, i, c, G):
    """w[i, c:c+36] = the 6x6 matrix [[I_o, [h]], [[h]^T, m 1]] of G, row-major."""
    m, hx, hy, hz, a00, a01, a02, a11, a12, a22 = G
    M = w[i, c:c + 36]
    M[0], M[1], M[2], M[3], M[4], M[5] = a00, a01, a02, 0.0, -hz, hy
    M[6], M[7], M[8], M[9], M[10], M[11] = a01, a11, a12, hz, 0.0, -hx
    M[12], M[13], M[14], M[15], M[16], M[17] = a02, a12, a22, -hy, hx, 0.0
    M[18], M[19], M[20], M[21], M[22], M[23] = 0.0, hz, -hy, m, 0.0, 0.0
    M[24], M[25], M[26], M[27], M[28], M[29] = -hz, 0.0, hx, 0.0, m, 0.0
    M[30], M[31], M[32], M[33], M[34], M[35] = hy, -hx, 0.0, 0.0, 0.0, m


# ---- 6x6 matrices stored row-major in 36 consecutive entries ---------------------------------------------
@inline
def matrix_times(M, X):
    """M X for a 6x6 matrix M (a flat view of 36) and a 6-tuple X."""
    return (dot6((M[0], M[1], M[2], M[3], M[4], M[5]), X),
            dot6((M[6], M[7], M[8], M[9], M[10], M[11]), X),
            dot6((M[12], M[13], M[14], M[15], M[16], M[17]), X),
            dot6((M[18], M[19], M[20], M[21], M[22], M[23]), X),
            dot6((M[24], M[25], M[26], M[27], M[28], M[29]), X),
            dot6((M[30], M[31], M[32], M[33], M[34], M[35]), X))


@inline
def matrix_transpose_times(M, X):
    """M^T X for a 6x6 matrix M (a flat view of 36) and a 6-tuple X."""
    return (dot6((M[0], M[6], M[12], M[18], M[24], M[30]), X),
            dot6((M[1], M[7], M[13], M[19], M[25], M[31]), X),
            dot6((M[2], M[8], M[14], M[20], M[26], M[32]), X),
            dot6((M[3], M[9], M[15], M[21], M[27], M[33]), X),
            dot6((M[4], M[10], M[16], M[22], M[28], M[34]), X),
            dot6((M[5], M[11], M[17], M[23], M[29], M[35]), X))


@inline
def add_skew(M, r, c, scale, x):
    """M[r:r+3, c:c+3] += scale [x] for a flat 6x6 M and a 3-tuple x."""
    M[6 * r + c + 1] -= scale * x[2]
    M[6 * r + c + 2] += scale * x[1]
    M[6 * (r + 1) + c] += scale * x[2]
    M[6 * (r + 1) + c + 2] -= scale * x[0]
    M[6 * (r + 2) + c] -= scale * x[1]
    M[6 * (r + 2) + c + 1] += scale * x[0]
