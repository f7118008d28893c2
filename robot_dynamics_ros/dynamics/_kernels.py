"""The recursive algorithms of Modern Robotics ch. 9 as numba-compiled loops over flat float64 arrays.

Every recursion is written once, here, as a private `_name_into(mb, w, ...)` function that writes its
result into arrays it is given; the public modules call the thin compiled entry points at the end of
this file. `mb` holds the packed model (model.py: one row per body, then one per frame) and `w` the
scratch columns; both are the one Data buffer (columns below). With NUMBA_DISABLE_JIT=1 the same
code runs as plain Python, which is how to single-step the textbook algorithms.

Conventions (the textbook's): spatial vectors angular first, twist V = (w, v), wrench F = (m, f).
Body frame {i} is joint i's frame turned so that the joint axis is z (Model._pack), so the joint
screw is A_i = (e_z, 0) or (0, e_z); (R_i, p_i) is T_{parent(i), i}(q_i) in the workspace.
"""
import numpy as np
from numba import njit, types


# Compiler options of every kernel: cached on disk; no ZeroDivisionError checks (ABA divides by
# D_i > 0); floating-point contraction and reassociation (FMA, vectorised sums), but not the
# no-NaN / no-inf assumptions, so the finiteness checks of the inputs stay. No reference-counting
# runtime (numba's NRT, option `_nrt`): the algorithms write into arrays they are given and
# allocate nothing, so neither their array arguments (a MemInfo malloc, incref and free each, about
# 25 ns, at every call from Python) nor their array views (w[i, W_V:W_V + 6]) need counting; the
# caller owns every array for the whole call. Only entry points that return new arrays enable it.
_OPTS = dict(cache=True, error_model="numpy", fastmath={"contract", "reassoc", "nsz", "arcp"}, _nrt=False)
# Small helpers are inlined into their callers at numba's IR level: array views passed to a called
# function cost reference counting (several times the arithmetic of a 3x3 product), inlined ones
# are pruned. The algorithms themselves (the _*_into functions) stay calls, which keeps compile
# times reasonable.
_INLINE = dict(_OPTS, inline="always")

# Packed model layout (model.py builds it): one row per body, then one row per frame.
REVOLUTE = 0
PRISMATIC = 1

# Column layout of one body row of the packed model array. Each body's frame here is its joint
# frame turned so that the joint axis is z (model.py: Model._pack), which makes every joint a
# rotation about / translation along z: T_{parent,i}(q) = T_tree Rz(q) (or Tz(q)).
COL_R = 0          # 9: rotation of T_tree (row-major)
COL_P = 9          # 3: translation of T_tree
COL_TYPE = 12      # 1: REVOLUTE or PRISMATIC
COL_PARENT = 13    # 1: parent body index, -1 for the base
COL_MASS = 14      # 1: m
COL_H = 15         # 3: h = m c
COL_IO = 18        # 9: rotational inertia about the origin of {i} (row-major)
COL_C = 27         # 9: rotation from the URDF body frame to this z-axis frame (row-major)
COL_RUN = 36       # 1: first body of the run of ancestors i, i-1, ..., COL_RUN (each the parent
                   #    of the one before), so ancestor loops count down instead of chasing links
COL_N = 37         # row 0 only: number of bodies n
COL_GRAVITY = 38   # row 0 only: gravity vector (3) in the base frame
MODEL_WIDTH = 41
# Frame rows (after the n body rows): body index, then the placement in that body's frame.
FCOL_BODY = 0
FCOL_R = 1
FCOL_P = 10



# Scratch columns of the Data buffer, per body row, after the model's columns (the Data buffer is
# the packed model followed by the workspace, so one array carries both into a compiled call).
W_R = MODEL_WIDTH           # 9  rotation of T_{parent,i}(q)
W_P = MODEL_WIDTH + 9       # 3  translation of T_{parent,i}(q)
W_V = MODEL_WIDTH + 12      # 6  twist V_i (body coords; base coords in ABA, Coriolis)
W_A = MODEL_WIDTH + 18      # 6  acceleration Vdot_i (body coords; base coords in ABA)
W_F = MODEL_WIDTH + 24      # 6  wrench F_i (body coords)
W_Y = MODEL_WIDTH + 30      # 36 scratch 6x6 (Coriolis factor: G ad_V)
W_U = MODEL_WIDTH + 66      # 6  U_i = I^A_i S_i (ABA)
W_D = MODEL_WIDTH + 72      # 1  1 / D_i, D_i = S_i^T U_i (ABA)
W_UU = MODEL_WIDTH + 73     # 1  u_i = tau_i - S_i^T p^A_i (ABA)
W_PA = MODEL_WIDTH + 74     # 6  bias wrench p^A_i in base coords (ABA)
W_C = MODEL_WIDTH + 80      # 6  velocity-product acceleration c_i in base coords (ABA)
W_R0 = MODEL_WIDTH + 86     # 9  rotation of T_{0,i}(q)
W_P0 = MODEL_WIDTH + 95     # 3  translation of T_{0,i}(q)
W_CM = MODEL_WIDTH + 98     # 13 composite rigid-body inertia (m, h, I_o as 3x3) in {i} (CRBA)
W_S0 = MODEL_WIDTH + 111    # 6  joint screw axis in base coords, S_i = Ad_{T_0i} A_i
W_I0 = MODEL_WIDTH + 117    # 36 spatial inertia in base coords (composite in Coriolis, articulated in ABA)
W_B0 = MODEL_WIDTH + 153    # 36 Coriolis factor B_i in base coords (composite after the backward pass)
W_SD = MODEL_WIDTH + 189    # 6  dS_i/dt = ad_{V_i} S_i in base coords
W_X = MODEL_WIDTH + 195     # 6  scratch vector
DATA_WIDTH = MODEL_WIDTH + 201


# ---------------------------------------------------------------------------------------------
# small spatial-algebra helpers (3-vectors and 6-vectors stored in flat arrays at offsets)
# ---------------------------------------------------------------------------------------------

@njit(**_INLINE)
def _n_bodies(mb):
    return int(mb[0, COL_N])


@njit(**_INLINE)
def _parent(mb, i):
    return int(mb[i, COL_PARENT])


@njit(**_INLINE)
def _run_start(mb, i):
    """Ancestors of body i come in runs of consecutive indices: i, i-1, ..., _run_start(mb, i), then
    the parent of _run_start(mb, i) and its run. Looping over a run by counting keeps the parent
    links (a load and a conversion per step) off the loop's critical path."""
    return int(mb[i, COL_RUN])


@njit(**_INLINE)
def _joint_transform_into(mb, w, i, qi):
    """T_{parent,i}(q_i) = T_tree exp([A_i] q_i)  (eqs. 9.35, 9.50), stored as (R, p) in w[i].

    With the joint axis along z: R = R_tree Rz(q), p = p_tree (revolute); R = R_tree,
    p = p_tree + q R_tree e_z (prismatic).
    """
    if mb[i, COL_TYPE] == PRISMATIC:
        for r in range(3):
            w[i, W_R + 3 * r] = mb[i, COL_R + 3 * r]
            w[i, W_R + 3 * r + 1] = mb[i, COL_R + 3 * r + 1]
            w[i, W_R + 3 * r + 2] = mb[i, COL_R + 3 * r + 2]
            w[i, W_P + r] = mb[i, COL_P + r] + qi * mb[i, COL_R + 3 * r + 2]
        return
    s, c = np.sin(qi), np.cos(qi)
    t00, t01, t02 = mb[i, COL_R], mb[i, COL_R + 1], mb[i, COL_R + 2]     # all read, then all written
    t10, t11, t12 = mb[i, COL_R + 3], mb[i, COL_R + 4], mb[i, COL_R + 5]
    t20, t21, t22 = mb[i, COL_R + 6], mb[i, COL_R + 7], mb[i, COL_R + 8]
    px, py, pz = mb[i, COL_P], mb[i, COL_P + 1], mb[i, COL_P + 2]
    w[i, W_R], w[i, W_R + 1], w[i, W_R + 2] = c * t00 + s * t01, c * t01 - s * t00, t02
    w[i, W_R + 3], w[i, W_R + 4], w[i, W_R + 5] = c * t10 + s * t11, c * t11 - s * t10, t12
    w[i, W_R + 6], w[i, W_R + 7], w[i, W_R + 8] = c * t20 + s * t21, c * t21 - s * t20, t22
    w[i, W_P], w[i, W_P + 1], w[i, W_P + 2] = px, py, pz


@njit(**_INLINE)
def _motion_to_child(w, i, src, s, dst, d):
    """dst = Ad_{T_{i,parent}} src: a twist in parent coords re-expressed in {i} (eq. 9.54).

    w_i = R^T w,  v_i = R^T (v + w x p).
    """
    wx, wy, wz = src[s], src[s + 1], src[s + 2]
    px, py, pz = w[i, W_P], w[i, W_P + 1], w[i, W_P + 2]
    vx = src[s + 3] + wy * pz - wz * py
    vy = src[s + 4] + wz * px - wx * pz
    vz = src[s + 5] + wx * py - wy * px
    r00, r01, r02 = w[i, W_R], w[i, W_R + 1], w[i, W_R + 2]      # all read, then all written
    r10, r11, r12 = w[i, W_R + 3], w[i, W_R + 4], w[i, W_R + 5]
    r20, r21, r22 = w[i, W_R + 6], w[i, W_R + 7], w[i, W_R + 8]
    dst[d], dst[d + 1], dst[d + 2] = (r00 * wx + r10 * wy + r20 * wz, r01 * wx + r11 * wy + r21 * wz,
                                      r02 * wx + r12 * wy + r22 * wz)
    dst[d + 3], dst[d + 4], dst[d + 5] = (r00 * vx + r10 * vy + r20 * vz, r01 * vx + r11 * vy + r21 * vz,
                                          r02 * vx + r12 * vy + r22 * vz)


@njit(**_INLINE)
def _force_moved(T, ro, po, src, s, dst, d, add):
    """dst (+)= Ad_{T_{i,j}}^T src: a wrench in frame {i} re-expressed in frame {j}, where (R, p) =
    T_{j,i} is stored at T[ro:ro+9], T[po:po+3] (eq. 9.56 with {j} the parent).

    f' = R f,  m' = R m + p x f'. With add False dst is overwritten (src may be dst).
    """
    fx = T[ro] * src[s + 3] + T[ro + 1] * src[s + 4] + T[ro + 2] * src[s + 5]
    fy = T[ro + 3] * src[s + 3] + T[ro + 4] * src[s + 4] + T[ro + 5] * src[s + 5]
    fz = T[ro + 6] * src[s + 3] + T[ro + 7] * src[s + 4] + T[ro + 8] * src[s + 5]
    mx = T[ro] * src[s] + T[ro + 1] * src[s + 1] + T[ro + 2] * src[s + 2]
    my = T[ro + 3] * src[s] + T[ro + 4] * src[s + 1] + T[ro + 5] * src[s + 2]
    mz = T[ro + 6] * src[s] + T[ro + 7] * src[s + 1] + T[ro + 8] * src[s + 2]
    px, py, pz = T[po], T[po + 1], T[po + 2]
    mx += py * fz - pz * fy
    my += pz * fx - px * fz
    mz += px * fy - py * fx
    if add:
        dst[d] += mx
        dst[d + 1] += my
        dst[d + 2] += mz
        dst[d + 3] += fx
        dst[d + 4] += fy
        dst[d + 5] += fz
    else:
        dst[d], dst[d + 1], dst[d + 2], dst[d + 3], dst[d + 4], dst[d + 5] = mx, my, mz, fx, fy, fz


@njit(**_INLINE)
def _rigid_inertia_apply(m, hx, hy, hz, i00, i01, i02, i11, i12, i22, x, s, dst, d):
    """dst = G x for the spatial inertia G = [[I_o, [h]], [[h]^T, m 1]] (eq. 9.41) given by its ten
    parameters (m, h, upper triangle of the symmetric I_o), x = (w, v) at x[s:s+6]."""
    wx, wy, wz, vx, vy, vz = x[s], x[s + 1], x[s + 2], x[s + 3], x[s + 4], x[s + 5]
    dst[d] = i00 * wx + i01 * wy + i02 * wz + hy * vz - hz * vy
    dst[d + 1] = i01 * wx + i11 * wy + i12 * wz + hz * vx - hx * vz
    dst[d + 2] = i02 * wx + i12 * wy + i22 * wz + hx * vy - hy * vx
    dst[d + 3] = m * vx - (hy * wz - hz * wy)
    dst[d + 4] = m * vy - (hz * wx - hx * wz)
    dst[d + 5] = m * vz - (hx * wy - hy * wx)


@njit(**_INLINE)
def _inertia_times(mb, i, x, s, dst, d):
    """dst = G_i x for body i's spatial inertia in {i} (eq. 9.41)."""
    o = COL_MASS
    _rigid_inertia_apply(mb[i, o], mb[i, o + 1], mb[i, o + 2], mb[i, o + 3], mb[i, o + 4], mb[i, o + 5],
                         mb[i, o + 6], mb[i, o + 8], mb[i, o + 9], mb[i, o + 12], x, s, dst, d)


@njit(**_INLINE)
def _axis_dot(mb, i, x, s):
    """A_i^T x for the joint screw A_i = (e_z, 0) (revolute) or (0, e_z) (prismatic) in {i}."""
    return x[s + 5] if mb[i, COL_TYPE] == PRISMATIC else x[s + 2]


@njit(**_INLINE)
def _add_axis(mb, i, scale, x, s):
    """x += A_i * scale."""
    x[s + (5 if mb[i, COL_TYPE] == PRISMATIC else 2)] += scale


@njit(**_INLINE)
def _add_ad_axis(mb, i, scale, V, s, x, d):
    """x += [ad_V] A_i * scale = [V, A_i] scale  (the Lie bracket of eq. 9.55); with a = e_z,
    w x a = (w_y, -w_x, 0)."""
    if mb[i, COL_TYPE] == PRISMATIC:   # [V, (0, a)] = (0, w x a)
        x[d + 3] += V[s + 1] * scale
        x[d + 4] -= V[s] * scale
    else:                              # [V, (a, 0)] = (w x a, v x a)
        x[d] += V[s + 1] * scale
        x[d + 1] -= V[s] * scale
        x[d + 3] += V[s + 4] * scale
        x[d + 4] -= V[s + 3] * scale


@njit(**_INLINE)
def _neg_ad_dual(V, s, P, p, x, d, add):
    """x (+)= -[ad_V]^T P = (w x m + v x f, w x f)  for V = (w, v), P = (m, f)  (eq. 9.31); with add
    False x is overwritten."""
    wx, wy, wz, vx, vy, vz = V[s], V[s + 1], V[s + 2], V[s + 3], V[s + 4], V[s + 5]
    mx, my, mz, fx, fy, fz = P[p], P[p + 1], P[p + 2], P[p + 3], P[p + 4], P[p + 5]
    r0 = wy * mz - wz * my + vy * fz - vz * fy
    r1 = wz * mx - wx * mz + vz * fx - vx * fz
    r2 = wx * my - wy * mx + vx * fy - vy * fx
    r3, r4, r5 = wy * fz - wz * fy, wz * fx - wx * fz, wx * fy - wy * fx
    if add:
        x[d] += r0
        x[d + 1] += r1
        x[d + 2] += r2
        x[d + 3] += r3
        x[d + 4] += r4
        x[d + 5] += r5
    else:
        x[d], x[d + 1], x[d + 2], x[d + 3], x[d + 4], x[d + 5] = r0, r1, r2, r3, r4, r5


@njit(**_INLINE)
def _frame_wrench_to_body(mb, f, F, x, d):
    """x[d:d+6] += wrench F given in frame f's coordinates, re-expressed in its body's frame."""
    r = _n_bodies_rows(mb) + f
    mx = my = mz = 0.0
    fx = fy = fz = 0.0
    for k in range(3):
        mx += mb[r, FCOL_R + k] * F[k]
        my += mb[r, FCOL_R + 3 + k] * F[k]
        mz += mb[r, FCOL_R + 6 + k] * F[k]
        fx += mb[r, FCOL_R + k] * F[3 + k]
        fy += mb[r, FCOL_R + 3 + k] * F[3 + k]
        fz += mb[r, FCOL_R + 6 + k] * F[3 + k]
    px, py, pz = mb[r, FCOL_P], mb[r, FCOL_P + 1], mb[r, FCOL_P + 2]
    x[d] += mx + py * fz - pz * fy
    x[d + 1] += my + pz * fx - px * fz
    x[d + 2] += mz + px * fy - py * fx
    x[d + 3] += fx
    x[d + 4] += fy
    x[d + 5] += fz


@njit(**_INLINE)
def _n_bodies_rows(mb):
    """Row of the first frame in the packed model (bodies occupy max(n, 1) rows)."""
    return max(_n_bodies(mb), 1)


@njit(**_INLINE)
def _frame_body(mb, f):
    return int(mb[_n_bodies_rows(mb) + f, FCOL_BODY])


@njit(**_INLINE)
def _all_finite(x):
    """True when no entry of x is NaN or inf (np.isfinite: the fastmath flags here keep NaN/inf
    semantics, but an arithmetic test such as x - x == 0 would be folded away by reassociation)."""
    for v in x.flat:
        if not np.isfinite(v):
            return False
    return True


@njit(**_INLINE)
def _check_vector(x, n):
    if x.shape[0] != n or not _all_finite(x):
        raise ValueError("invalid input vector")


# ---------------------------------------------------------------------------------------------
# Recursive Newton-Euler inverse dynamics (eqs. 9.53-9.57)
# ---------------------------------------------------------------------------------------------

@njit(**_OPTS)
def _rnea_into(mb, w, q, qd, qdd, use_qd, use_qdd, gravity, frame, f_tip, tau):
    """tau = M(q) qdd + c(q, qd) + g(q) + J^T F_tip, by recursive Newton-Euler (eqs. 9.53-9.57).

    use_qd / use_qdd False treat qd / qdd as zero; gravity False drops g(q). frame >= 0 applies the
    tip wrench f_tip (the wrench the robot exerts on its environment, in frame coordinates) there.
    Base: V_0 = 0, Vdot_0 = (0, -g), so gravity enters as an upward acceleration of the base.
    """
    n = _n_bodies(mb)
    base = w[0, W_X:W_X + 6]   # scratch for the base acceleration (read before body 0 overwrites it)
    for i in range(n):
        _joint_transform_into(mb, w, i, q[i])                                  # (9.53)
        p = _parent(mb, i)
        V, A = w[i, W_V:W_V + 6], w[i, W_A:W_A + 6]
        if p < 0:
            for k in range(3):
                base[k] = 0.0
                base[3 + k] = -mb[0, COL_GRAVITY + k] if gravity else 0.0
            for k in range(6):     # a loop of known length: `V[:] = 0.0` would call memset
                V[k] = 0.0
            _motion_to_child(w, i, base, 0, A, 0)
        else:
            if use_qd:
                _motion_to_child(w, i, w[p], W_V, V, 0)                       # (9.54)
            _motion_to_child(w, i, w[p], W_A, A, 0)                           # (9.55)
        if use_qd:
            _add_axis(mb, i, qd[i], V, 0)
            _add_ad_axis(mb, i, qd[i], V, 0, A, 0)
        if use_qdd:
            _add_axis(mb, i, qdd[i], A, 0)
        F = w[i, W_F:W_F + 6]
        _inertia_times(mb, i, A, 0, F, 0)                                     # G_i Vdot_i
        if use_qd:
            P = w[i, W_X:W_X + 6]
            _inertia_times(mb, i, V, 0, P, 0)                                 # P_i = G_i V_i
            _neg_ad_dual(V, 0, P, 0, F, 0, True)                              # - ad_V^T P_i  (9.56)
    if frame >= 0:
        b = _frame_body(mb, frame)
        if b >= 0:
            _frame_wrench_to_body(mb, frame, f_tip, w[b], W_F)                # F_{n+1} = F_tip
    for i in range(n - 1, -1, -1):
        tau[i] = _axis_dot(mb, i, w[i], W_F)                                  # (9.57)
        p = _parent(mb, i)
        if p >= 0:
            _force_moved(w[i], W_R, W_P, w[i], W_F, w[p], W_F, True)          # (9.56)


# ---------------------------------------------------------------------------------------------
# Composite-rigid-body algorithm for M(q)
# ---------------------------------------------------------------------------------------------

@njit(**_INLINE)
def _moved_rigid_inertia(T, ro, po, src, s):
    """The rigid-body inertia (m, h, I_o) at src[s:], moved by the pose (R, p) stored in
    T[ro:ro+9], T[po:po+3] (the coordinates of the body's frame in the destination frame), as
    (m, h', upper triangle of I_o': xx, xy, xz, yy, yz, zz): scalars, which stay in registers.

    Every particle x maps to x' = R x + p, so h' = R h + m p and
    I_o' = -sum m [x']^2 = R I_o R^T - ([Rh][p] + [p][Rh]) - m [p]^2
         = R I_o R^T + 2 (g.p) 1 - p g^T - g p^T + m (|p|^2 1 - p p^T),  g = R h.
    """
    m = src[s]
    r00, r01, r02 = T[ro], T[ro + 1], T[ro + 2]
    r10, r11, r12 = T[ro + 3], T[ro + 4], T[ro + 5]
    r20, r21, r22 = T[ro + 6], T[ro + 7], T[ro + 8]
    px, py, pz = T[po], T[po + 1], T[po + 2]
    hx, hy, hz = src[s + 1], src[s + 2], src[s + 3]
    gx = r00 * hx + r01 * hy + r02 * hz
    gy = r10 * hx + r11 * hy + r12 * hz
    gz = r20 * hx + r21 * hy + r22 * hz
    i00, i01, i02 = src[s + 4], src[s + 5], src[s + 6]
    i11, i12, i22 = src[s + 8], src[s + 9], src[s + 12]       # I_o is symmetric
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
    # (R U)[a, b] + the translation terms, upper triangle then mirrored
    a00 = r00 * u00 + r01 * u10 + r02 * u20 + gp2 + mpp - 2.0 * px * gx - m * px * px
    a11 = r10 * u01 + r11 * u11 + r12 * u21 + gp2 + mpp - 2.0 * py * gy - m * py * py
    a22 = r20 * u02 + r21 * u12 + r22 * u22 + gp2 + mpp - 2.0 * pz * gz - m * pz * pz
    a01 = r00 * u01 + r01 * u11 + r02 * u21 - px * gy - gx * py - m * px * py
    a02 = r00 * u02 + r01 * u12 + r02 * u22 - px * gz - gx * pz - m * px * pz
    a12 = r10 * u02 + r11 * u12 + r12 * u22 - py * gz - gy * pz - m * py * pz
    return m, gx + m * px, gy + m * py, gz + m * pz, a00, a01, a02, a11, a12, a22


@njit(**_INLINE)
def _add_moved_rigid_inertia(T, ro, po, src, s, dst, d):
    """dst[d:d+13] += the rigid-body inertia (m, h, I_o) at src[s:] moved by (R, p) (see
    _moved_rigid_inertia)."""
    m, hx, hy, hz, a00, a01, a02, a11, a12, a22 = _moved_rigid_inertia(T, ro, po, src, s)
    dst[d] += m
    dst[d + 1] += hx
    dst[d + 2] += hy
    dst[d + 3] += hz
    dst[d + 4] += a00
    dst[d + 5] += a01
    dst[d + 6] += a02
    dst[d + 7] += a01
    dst[d + 8] += a11
    dst[d + 9] += a12
    dst[d + 10] += a02
    dst[d + 11] += a12
    dst[d + 12] += a22


@njit(**_INLINE)
def _body_inertia_params(mb, i, dst, d):
    """dst = (m, h, I_o) of body i in {i}."""
    for k in range(13):
        dst[d + k] = mb[i, COL_MASS + k]


@njit(**_INLINE)
def _rigid_inertia_times_axis(mb, i, I, s, dst, d):
    """dst = G A_i for a rigid-body inertia G = (m, h, I_o) at I[s:s+13] and body i's joint screw."""
    m, hx, hy = I[s], I[s + 1], I[s + 2]
    if mb[i, COL_TYPE] == PRISMATIC:   # G (0, e_z) = (h x e_z, m e_z)
        dst[d], dst[d + 1], dst[d + 2] = hy, -hx, 0.0
        dst[d + 3], dst[d + 4], dst[d + 5] = 0.0, 0.0, m
    else:                              # G (e_z, 0) = (I_o e_z, e_z x h)
        dst[d], dst[d + 1], dst[d + 2] = I[s + 6], I[s + 9], I[s + 12]
        dst[d + 3], dst[d + 4], dst[d + 5] = -hy, hx, 0.0


@njit(**_OPTS)
def _crba_into(mb, w, q, M):
    """M(q) by the composite-rigid-body algorithm (Featherstone): with I^c_i the inertia of the
    subtree of body i and S_i the joint screws in base coordinates {0},
        M_ij = S_j^T Ad_{T_0i}^-T (I^c_i A_i)   for every j supporting i (M_ji the same),
    which is eq. 9.61 / 9.82 summed over subtrees; zero across branches. The composites are
    accumulated leaf to root in the bodies' own frames as ten-parameter rigid bodies (m, h, I_o: 13
    numbers); each wrench I^c_i A_i is moved to {0} once, so every entry is one 6-vector product.
    """
    n = _n_bodies(mb)
    if n > 0 and _run_start(mb, n - 1) != 0:
        M[:, :] = 0.0         # a tree: bodies on different branches do not couple
    _world_kinematics_inlined(mb, w, q)      # (a call here costs a tenth of a 6-joint CRBA)
    for i in range(n):
        _body_inertia_params(mb, i, w[i], W_CM)
    for i in range(n - 1, -1, -1):
        p = _parent(mb, i)
        if p >= 0:
            _add_moved_rigid_inertia(w[i], W_R, W_P, w[i], W_CM, w[p], W_CM)
    for i in range(n):
        x = w[i, W_X:W_X + 6]
        _rigid_inertia_times_axis(mb, i, w[i], W_CM, x, 0)                    # I^c_i A_i in {i}
        _force_moved(w[i], W_R0, W_P0, x, 0, x, 0, False)                     # ... in {0}
        f0, f1, f2, f3, f4, f5 = x[0], x[1], x[2], x[3], x[4], x[5]
        j = i
        while j >= 0:
            start = _run_start(mb, j)
            for k in range(j, start - 1, -1):
                mik = (w[k, W_S0] * f0 + w[k, W_S0 + 1] * f1 + w[k, W_S0 + 2] * f2
                       + w[k, W_S0 + 3] * f3 + w[k, W_S0 + 4] * f4 + w[k, W_S0 + 5] * f5)
                M[i, k] = mik
                M[k, i] = mik
            j = _parent(mb, start)


# ---------------------------------------------------------------------------------------------
# Articulated-body algorithm (Featherstone) for the forward dynamics
# ---------------------------------------------------------------------------------------------

@njit(**_OPTS)
def _aba_into(mb, w, q, qd, tau, frame, f_tip, qdd):
    """qdd = M^-1 (tau - c - g - J^T F_tip) by the articulated-body algorithm (Featherstone), O(n).

    Every quantity is in base coordinates {0}, so an articulated inertia passes to the parent
    without a change of frame. With S_i the joint screw in {0} (space Jacobian column):
    Pass 1 (base to tips): V_i = V_parent + S_i qd_i, c_i = [V_i, S_i] qd_i (= dS_i/dt qd_i),
      I^A_i = G_i (in {0}), p^A_i = -ad_{V_i}^T G_i V_i, and + F_tip on the tip's body.
    Pass 2 (tips to base): U = I^A S, D = S^T U, u = tau - S^T p^A; the parent receives
      I^a = I^A - U U^T / D and p^a = p^A + I^a c + U u / D.
    Pass 3 (base to tips): Vdot_i = Vdot_parent + c_i with Vdot_0 = (0, -g),
      qdd_i = (u - U^T Vdot_i) / D, Vdot_i += S_i qdd_i.
    """
    n = _n_bodies(mb)
    for i in range(n):
        _world_body_into(mb, w, i, q[i])
        p = _parent(mb, i)
        qdi = qd[i]
        V = w[i, W_V:W_V + 6]
        for k in range(6):
            V[k] = (w[p, W_V + k] if p >= 0 else 0.0) + w[i, W_S0 + k] * qdi
        c = w[i, W_C:W_C + 6]
        _bracket(V, 0, w[i], W_S0, c, 0)
        for k in range(6):
            c[k] *= qdi
        m, hx, hy, hz, i00, i01, i02, i11, i12, i22 = _world_inertia_into(mb, w, i)    # I^A_i = G_i
        P = w[i, W_X:W_X + 6]
        _rigid_inertia_apply(m, hx, hy, hz, i00, i01, i02, i11, i12, i22, V, 0, P, 0)  # G_i V_i
        _neg_ad_dual(V, 0, P, 0, w[i], W_PA, False)    # written, not added: no zero fill
    if frame >= 0:
        b = _frame_body(mb, frame)
        if b >= 0:
            x = w[b, W_X:W_X + 6]
            for k in range(6):
                x[k] = 0.0
            _frame_wrench_to_body(mb, frame, f_tip, x, 0)
            _force_moved(w[b], W_R0, W_P0, x, 0, w[b], W_PA, True)
    for i in range(n - 1, -1, -1):
        IA = w[i, W_I0:W_I0 + 36]
        U = w[i, W_U:W_U + 6]
        pA = w[i, W_PA:W_PA + 6]
        S = w[i, W_S0:W_S0 + 6]
        D = 0.0
        u = tau[i]
        for r in range(6):
            acc = 0.0
            for k in range(6):
                acc += IA[6 * r + k] * S[k]
            U[r] = acc                                        # U = I^A S
            D += S[r] * acc
            u -= S[r] * pA[r]
        inv_D = 1.0 / D
        w[i, W_D] = inv_D
        w[i, W_UU] = u
        p = _parent(mb, i)
        if p < 0:
            continue
        c0, c1, c2, c3, c4, c5 = w[i, W_C], w[i, W_C + 1], w[i, W_C + 2], w[i, W_C + 3], w[i, W_C + 4], w[i, W_C + 5]
        v0, v1, v2, v3, v4, v5 = U[0] * inv_D, U[1] * inv_D, U[2] * inv_D, U[3] * inv_D, U[4] * inv_D, U[5] * inv_D
        e = u * inv_D - (v0 * c0 + v1 * c1 + v2 * c2 + v3 * c3 + v4 * c4 + v5 * c5)     # (u - U^T c) / D
        IAp = w[p, W_I0:W_I0 + 36]
        for r in range(6):     # a row is read whole before the parent's is written: free scheduling
            a0, a1, a2, a3, a4, a5 = IA[6 * r], IA[6 * r + 1], IA[6 * r + 2], IA[6 * r + 3], IA[6 * r + 4], IA[6 * r + 5]
            b0, b1, b2, b3, b4, b5 = IAp[6 * r], IAp[6 * r + 1], IAp[6 * r + 2], IAp[6 * r + 3], IAp[6 * r + 4], IAp[6 * r + 5]
            ur = U[r]
            # p^a = p^A + I^A c + U (u - U^T c) / D ;  I^a = I^A - U U^T / D
            w[p, W_PA + r] += pA[r] + ur * e + a0 * c0 + a1 * c1 + a2 * c2 + a3 * c3 + a4 * c4 + a5 * c5
            IAp[6 * r], IAp[6 * r + 1], IAp[6 * r + 2] = b0 + a0 - ur * v0, b1 + a1 - ur * v1, b2 + a2 - ur * v2
            IAp[6 * r + 3], IAp[6 * r + 4], IAp[6 * r + 5] = b3 + a3 - ur * v3, b4 + a4 - ur * v4, b5 + a5 - ur * v5
    for i in range(n):
        p = _parent(mb, i)
        A = w[i, W_A:W_A + 6]
        for k in range(6):
            if p >= 0:
                A[k] = w[p, W_A + k] + w[i, W_C + k]
            else:
                A[k] = (-mb[0, COL_GRAVITY + k - 3] if k >= 3 else 0.0) + w[i, W_C + k]
        acc = 0.0
        for k in range(6):
            acc += w[i, W_U + k] * A[k]
        qddi = (w[i, W_UU] - acc) * w[i, W_D]
        qdd[i] = qddi
        for k in range(6):
            A[k] += w[i, W_S0 + k] * qddi


# ---------------------------------------------------------------------------------------------
# Forward kinematics in base coordinates, Jacobians
# ---------------------------------------------------------------------------------------------

@njit(**_OPTS)
def _world_kinematics_into(mb, w, q):
    """T_{0i} = T_{0,parent} T_{parent,i} for every body (eq. 9.37) and the base-frame screw axes
    S_i = Ad_{T_0i} A_i (the columns of the space Jacobian)."""
    for i in range(_n_bodies(mb)):
        _world_body_into(mb, w, i, q[i])


@njit(**_INLINE)
def _world_body_into(mb, w, i, qi):
    """T_{0i} and S_i of body i (see _world_kinematics_into), from its parent's."""
    _joint_transform_into(mb, w, i, qi)
    p = _parent(mb, i)
    if p < 0:
        for k in range(9):
            w[i, W_R0 + k] = w[i, W_R + k]
        for k in range(3):
            w[i, W_P0 + k] = w[i, W_P + k]
    else:              # R_0i = R_0p R, p_0i = p_0p + R_0p p: operands read before any result is written
        a00, a01, a02 = w[p, W_R0], w[p, W_R0 + 1], w[p, W_R0 + 2]
        a10, a11, a12 = w[p, W_R0 + 3], w[p, W_R0 + 4], w[p, W_R0 + 5]
        a20, a21, a22 = w[p, W_R0 + 6], w[p, W_R0 + 7], w[p, W_R0 + 8]
        b00, b01, b02 = w[i, W_R], w[i, W_R + 1], w[i, W_R + 2]
        b10, b11, b12 = w[i, W_R + 3], w[i, W_R + 4], w[i, W_R + 5]
        b20, b21, b22 = w[i, W_R + 6], w[i, W_R + 7], w[i, W_R + 8]
        px, py, pz = w[i, W_P], w[i, W_P + 1], w[i, W_P + 2]
        ox, oy, oz = w[p, W_P0], w[p, W_P0 + 1], w[p, W_P0 + 2]
        w[i, W_R0], w[i, W_R0 + 1], w[i, W_R0 + 2] = (a00 * b00 + a01 * b10 + a02 * b20, a00 * b01 + a01 * b11 + a02 * b21,
                                                      a00 * b02 + a01 * b12 + a02 * b22)
        w[i, W_R0 + 3], w[i, W_R0 + 4], w[i, W_R0 + 5] = (a10 * b00 + a11 * b10 + a12 * b20, a10 * b01 + a11 * b11 + a12 * b21,
                                                          a10 * b02 + a11 * b12 + a12 * b22)
        w[i, W_R0 + 6], w[i, W_R0 + 7], w[i, W_R0 + 8] = (a20 * b00 + a21 * b10 + a22 * b20, a20 * b01 + a21 * b11 + a22 * b21,
                                                          a20 * b02 + a21 * b12 + a22 * b22)
        w[i, W_P0], w[i, W_P0 + 1], w[i, W_P0 + 2] = (ox + a00 * px + a01 * py + a02 * pz, oy + a10 * px + a11 * py + a12 * pz,
                                                      oz + a20 * px + a21 * py + a22 * pz)
    sx, sy, sz = w[i, W_R0 + 2], w[i, W_R0 + 5], w[i, W_R0 + 8]     # R e_z
    px, py, pz = w[i, W_P0], w[i, W_P0 + 1], w[i, W_P0 + 2]
    if mb[i, COL_TYPE] == PRISMATIC:      # S = (0, R a)
        w[i, W_S0], w[i, W_S0 + 1], w[i, W_S0 + 2] = 0.0, 0.0, 0.0
        w[i, W_S0 + 3], w[i, W_S0 + 4], w[i, W_S0 + 5] = sx, sy, sz
    else:                                 # S = (R a, p x R a)
        w[i, W_S0], w[i, W_S0 + 1], w[i, W_S0 + 2] = sx, sy, sz
        w[i, W_S0 + 3] = py * sz - pz * sy
        w[i, W_S0 + 4] = pz * sx - px * sz
        w[i, W_S0 + 5] = px * sy - py * sx


@njit(**_OPTS)
def _frame_pose_into(mb, w, frame, T):
    """T (4x4) = T_{0,f} = T_{0,b} T_{b,f} of frame f on body b; world kinematics must be current."""
    r = _n_bodies_rows(mb) + frame
    b = int(mb[r, FCOL_BODY])
    T[:] = 0.0
    T[3, 3] = 1.0
    for i in range(3):
        for j in range(3):
            if b < 0:
                T[i, j] = mb[r, FCOL_R + 3 * i + j]
            else:
                T[i, j] = (w[b, W_R0 + 3 * i] * mb[r, FCOL_R + j] + w[b, W_R0 + 3 * i + 1] * mb[r, FCOL_R + 3 + j]
                           + w[b, W_R0 + 3 * i + 2] * mb[r, FCOL_R + 6 + j])
        if b < 0:
            T[i, 3] = mb[r, FCOL_P + i]
        else:
            T[i, 3] = (w[b, W_P0 + i] + w[b, W_R0 + 3 * i] * mb[r, FCOL_P] + w[b, W_R0 + 3 * i + 1] * mb[r, FCOL_P + 1]
                       + w[b, W_R0 + 3 * i + 2] * mb[r, FCOL_P + 2])


REF_SPACE = 0
REF_BODY = 1
REF_WORLD_ALIGNED = 2


@njit(**_INLINE)
def _change_reference(T, reference, x, s):
    """Re-express a base-coordinates twist x[s:s+6] (space form) in the requested reference at frame T.

    body: Ad_{T^-1} x = (R^T w, R^T (v + w x p)); world_aligned: (w, v + w x p), the velocity of the
    point p with base axes; space: unchanged.
    """
    if reference == REF_SPACE:
        return
    wx, wy, wz = x[s], x[s + 1], x[s + 2]
    px, py, pz = T[0, 3], T[1, 3], T[2, 3]
    vx = x[s + 3] + wy * pz - wz * py
    vy = x[s + 4] + wz * px - wx * pz
    vz = x[s + 5] + wx * py - wy * px
    if reference == REF_WORLD_ALIGNED:
        x[s + 3], x[s + 4], x[s + 5] = vx, vy, vz
        return
    for c in range(3):
        x[s + c] = T[0, c] * wx + T[1, c] * wy + T[2, c] * wz
        x[s + 3 + c] = T[0, c] * vx + T[1, c] * vy + T[2, c] * vz


@njit(**_OPTS)
def _jacobian_into(mb, w, q, frame, reference, T, J):
    """J (6 x n): space Jacobian columns S_j for the joints supporting the frame (eq. 5.11 of the
    book, used in eq. 9.61), then re-expressed in the requested reference; T receives T_{0f}."""
    _world_kinematics_into(mb, w, q)
    _frame_pose_into(mb, w, frame, T)
    J[:, :] = 0.0
    b = _frame_body(mb, frame)
    col = w[0, W_X:W_X + 6]
    while b >= 0:
        for k in range(6):
            col[k] = w[b, W_S0 + k]
        _change_reference(T, reference, col, 0)
        for k in range(6):
            J[k, b] = col[k]
        b = _parent(mb, b)


@njit(**_OPTS)
def _jacobian_derivative_into(mb, w, q, qd, frame, reference, T, dJ):
    """dJ/dt (6 x n) of the frame Jacobian in the requested reference.

    Space: dS_j/dt = [V_j, S_j] with V_j the base-coords twist of body j. Body: d/dt(Ad_{T^-1} J_s)
    = Ad_{T^-1} dJ_s - [V_b, J_b]. World-aligned: (dw_j, dv_j + dw_j x p + w_j x pdot), pdot the
    velocity of the frame origin.
    """
    n = _n_bodies(mb)
    _world_kinematics_into(mb, w, q)
    _frame_pose_into(mb, w, frame, T)
    for i in range(n):                     # V_i (base coords) and dS_i/dt = [V_i, S_i]
        p = _parent(mb, i)
        for k in range(6):
            w[i, W_V + k] = (w[p, W_V + k] if p >= 0 else 0.0) + w[i, W_S0 + k] * qd[i]
        _bracket(w[i], W_V, w[i], W_S0, w[i], W_SD)
    dJ[:, :] = 0.0
    b = _frame_body(mb, frame)
    if b < 0:
        return
    Vf = w[b, W_V:W_V + 6]     # twist of the frame (base coords, space form) = V_b
    px, py, pz = T[0, 3], T[1, 3], T[2, 3]
    # velocity of the frame origin: pdot = v + w x p
    pdx = Vf[3] + Vf[1] * pz - Vf[2] * py
    pdy = Vf[4] + Vf[2] * px - Vf[0] * pz
    pdz = Vf[5] + Vf[0] * py - Vf[1] * px
    col = w[0, W_X:W_X + 6]    # scratch 6-vectors of the workspace
    tmp = w[0, W_F:W_F + 6]
    j = b
    while j >= 0:
        for k in range(6):
            col[k] = w[j, W_SD + k]
        if reference == REF_WORLD_ALIGNED:
            _change_reference(T, reference, col, 0)
            sx, sy, sz = w[j, W_S0], w[j, W_S0 + 1], w[j, W_S0 + 2]
            col[3] += sy * pdz - sz * pdy
            col[4] += sz * pdx - sx * pdz
            col[5] += sx * pdy - sy * pdx
        elif reference == REF_BODY:
            # Ad_{T^-1}(dS_j - [V_f, S_j]) = Ad_{T^-1} dS_j - [V_b, J_b,j]
            _bracket(Vf, 0, w[j], W_S0, tmp, 0)
            for k in range(6):
                col[k] -= tmp[k]
            _change_reference(T, reference, col, 0)
        for k in range(6):
            dJ[k, j] = col[k]
        j = _parent(mb, j)


@njit(**_INLINE)
def _bracket(X, s, Y, t, out, d):
    """out = [ad_X] Y = (wx x wy, vx x wy + wx x vy)  (eq. 9.28)."""
    w1x, w1y, w1z, v1x, v1y, v1z = X[s], X[s + 1], X[s + 2], X[s + 3], X[s + 4], X[s + 5]
    w2x, w2y, w2z, v2x, v2y, v2z = Y[t], Y[t + 1], Y[t + 2], Y[t + 3], Y[t + 4], Y[t + 5]
    out[d] = w1y * w2z - w1z * w2y
    out[d + 1] = w1z * w2x - w1x * w2z
    out[d + 2] = w1x * w2y - w1y * w2x
    out[d + 3] = v1y * w2z - v1z * w2y + w1y * v2z - w1z * v2y
    out[d + 4] = v1z * w2x - v1x * w2z + w1z * v2x - w1x * v2z
    out[d + 5] = v1x * w2y - v1y * w2x + w1x * v2y - w1y * v2x


# ---------------------------------------------------------------------------------------------
# Christoffel-consistent Coriolis matrix (eq. 9.87), O(n^2)
# ---------------------------------------------------------------------------------------------

@njit(**_OPTS)
def _coriolis_matrix_into(mb, w, q, qd, C):
    """C(q, qd) with C_ij = sum_k Gamma_ijk qd_k (eq. 9.87), so that Mdot - 2C is skew-symmetric.

    In base coordinates M = sum_i J_i^T I_i J_i, with J_i's columns the screws S_j (j supports i),
    dS_j/dt = [V_j, S_j] and dI_i/dt = -ad_{V_i}^T I_i - I_i ad_{V_i}. With
    B_i = 1/2 (-ad_{V_i}^T I_i - I_i ad_{V_i} - adbar(I_i V_i)), where adbar(P) X = ad_X^T P is skew,
    B_i + B_i^T = dI_i/dt and B_i V_i = -ad_{V_i}^T I_i V_i, so C = sum_i J_i^T (I_i dJ_i + B_i J_i)
    reproduces c = C qd and Mdot = C + C^T; it is the Christoffel factorisation (Echeandia & Wensing
    2021). Summing I_i and B_i over subtrees (composites I^c, B^c) gives, for j supporting i:
        C_ij = S_i^T (I^c_i dS_j + B^c_i S_j),   C_ji = S_j^T (I^c_i dS_i + B^c_i S_i).
    """
    n = _n_bodies(mb)
    _world_kinematics_into(mb, w, q)
    for i in range(n):
        p = _parent(mb, i)
        for k in range(6):
            w[i, W_V + k] = (w[p, W_V + k] if p >= 0 else 0.0) + w[i, W_S0 + k] * qd[i]
        _bracket(w[i], W_V, w[i], W_S0, w[i], W_SD)
        _world_inertia_into(mb, w, i)
        _coriolis_factor_into(w, i)
    for i in range(n - 1, -1, -1):
        p = _parent(mb, i)
        if p >= 0:
            for k in range(36):
                w[p, W_I0 + k] += w[i, W_I0 + k]
                w[p, W_B0 + k] += w[i, W_B0 + k]
    C[:, :] = 0.0
    for i in range(n):
        Ic = w[i, W_I0:W_I0 + 36]
        Bc = w[i, W_B0:W_B0 + 36]
        y1, y2, Fc = w[i, W_A:W_A + 6], w[i, W_F:W_F + 6], w[i, W_U:W_U + 6]   # free columns here
        for r in range(6):
            a1 = 0.0
            a2 = 0.0
            b1 = 0.0
            for k in range(6):
                a1 += Ic[6 * k + r] * w[i, W_S0 + k]        # (I^c_i S_i)  (symmetric)
                a2 += Bc[6 * k + r] * w[i, W_S0 + k]        # (B^c_i^T S_i)
                b1 += Ic[6 * r + k] * w[i, W_SD + k] + Bc[6 * r + k] * w[i, W_S0 + k]
            y1[r] = a1
            y2[r] = a2
            Fc[r] = b1                                       # I^c_i dS_i + B^c_i S_i
        j = i
        while j >= 0:
            cij = 0.0
            for k in range(6):
                cij += y1[k] * w[j, W_SD + k] + y2[k] * w[j, W_S0 + k]
            C[i, j] = cij
            if j != i:
                cji = 0.0
                for k in range(6):
                    cji += w[j, W_S0 + k] * Fc[k]
                C[j, i] = cji
            j = _parent(mb, j)


@njit(**_INLINE)
def _world_inertia_into(mb, w, i):
    """G_i in base coordinates (the body's inertia moved by T_{0i}) as the 6x6 matrix
    [[I_o, [h]], [[h]^T, m 1]] (eq. 9.41) at W_I0; returns its ten parameters (see
    _moved_rigid_inertia)."""
    m, hx, hy, hz, a00, a01, a02, a11, a12, a22 = _moved_rigid_inertia(w[i], W_R0, W_P0, mb[i], COL_MASS)
    G = w[i, W_I0:W_I0 + 36]
    G[0], G[1], G[2], G[3], G[4], G[5] = a00, a01, a02, 0.0, -hz, hy
    G[6], G[7], G[8], G[9], G[10], G[11] = a01, a11, a12, hz, 0.0, -hx
    G[12], G[13], G[14], G[15], G[16], G[17] = a02, a12, a22, -hy, hx, 0.0
    G[18], G[19], G[20], G[21], G[22], G[23] = 0.0, hz, -hy, m, 0.0, 0.0
    G[24], G[25], G[26], G[27], G[28], G[29] = -hz, 0.0, hx, 0.0, m, 0.0
    G[30], G[31], G[32], G[33], G[34], G[35] = hy, -hx, 0.0, 0.0, 0.0, m
    return m, hx, hy, hz, a00, a01, a02, a11, a12, a22


@njit(**_INLINE)
def _coriolis_factor_into(w, i):
    """B_i = 1/2 (-ad_V^T I - I ad_V - adbar(I V)) at W_B0, for V = (w, v) = w[i, W_V], I = w[i, W_I0].

    With I symmetric, ad_V^T I = (I ad_V)^T, and Y = I ad_V is three cross products per row:
    ad_V = [[w], 0; [v], [w]] and x [w] = x cross w for a row x, so
    Y[r, 0:3] = I[r, 0:3] x w + I[r, 3:6] x v,   Y[r, 3:6] = I[r, 3:6] x w.
    adbar(P) = [[m], [f]; [f], 0] for P = I V = (m, f).
    """
    I = w[i, W_I0:W_I0 + 36]
    B = w[i, W_B0:W_B0 + 36]
    Y = w[i, W_Y:W_Y + 36]
    wx, wy, wz = w[i, W_V], w[i, W_V + 1], w[i, W_V + 2]
    vx, vy, vz = w[i, W_V + 3], w[i, W_V + 4], w[i, W_V + 5]
    for r in range(6):
        a0, a1, a2 = I[6 * r], I[6 * r + 1], I[6 * r + 2]
        b0, b1, b2 = I[6 * r + 3], I[6 * r + 4], I[6 * r + 5]
        Y[6 * r] = a1 * wz - a2 * wy + b1 * vz - b2 * vy
        Y[6 * r + 1] = a2 * wx - a0 * wz + b2 * vx - b0 * vz
        Y[6 * r + 2] = a0 * wy - a1 * wx + b0 * vy - b1 * vx
        Y[6 * r + 3] = b1 * wz - b2 * wy
        Y[6 * r + 4] = b2 * wx - b0 * wz
        Y[6 * r + 5] = b0 * wy - b1 * wx
    for r in range(6):
        for c in range(6):
            B[6 * r + c] = -0.5 * (Y[6 * r + c] + Y[6 * c + r])
    P = w[i, W_X:W_X + 6]
    for r in range(6):
        acc = 0.0
        for k in range(6):
            acc += I[6 * r + k] * w[i, W_V + k]
        P[r] = acc
    # B -= 1/2 adbar(P): subtract the skew blocks [m] (top-left), [f] (top-right, bottom-left)
    _add_skew(B, 0, 0, -0.5, P[0], P[1], P[2])
    _add_skew(B, 0, 3, -0.5, P[3], P[4], P[5])
    _add_skew(B, 3, 0, -0.5, P[3], P[4], P[5])


@njit(**_INLINE)
def _add_skew(M, r, c, scale, x, y, z):
    """M[r:r+3, c:c+3] += scale [x] for a flat 6x6 M."""
    M[6 * r + c + 1] -= scale * z
    M[6 * r + c + 2] += scale * y
    M[6 * (r + 1) + c] += scale * z
    M[6 * (r + 1) + c + 2] -= scale * x
    M[6 * (r + 2) + c] -= scale * y
    M[6 * (r + 2) + c + 1] += scale * x


# ---------------------------------------------------------------------------------------------
# Dense linear algebra for small systems (no allocation, no LAPACK dispatch)
# ---------------------------------------------------------------------------------------------

@njit(**_OPTS)
def _cholesky_in_place(A, n):
    """A[:n,:n] = L with L L^T = A (lower triangle; the upper is left untouched). False if A is not
    positive definite."""
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            return False
        d = np.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    return True


@njit(**_OPTS)
def _cholesky_solve_in_place(L, n, b):
    """b = (L L^T)^-1 b for a vector b."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


# ---------------------------------------------------------------------------------------------
# Integration steps (forward dynamics by ABA)
# ---------------------------------------------------------------------------------------------

@njit(**_INLINE)
def _friction_into(qd, viscous, coulomb, out):
    """out = F_v qd + F_s sgn(qd) (viscous and Coulomb friction, the notes' generalised forces)."""
    for i in range(qd.shape[0]):
        out[i] = viscous[i] * qd[i] + coulomb[i] * np.sign(qd[i])


@njit(**_OPTS)
def _accel_into(mb, w, q, qd, tau, frame, f_tip, viscous, coulomb, tmp, qdd):
    """qdd = FD(q, qd, tau - friction(qd)) (ABA)."""
    _friction_into(qd, viscous, coulomb, tmp)
    for i in range(tau.shape[0]):
        tmp[i] = tau[i] - tmp[i]
    _aba_into(mb, w, q, qd, tmp, frame, f_tip, qdd)


METHOD_EULER = 0
METHOD_SEMI_IMPLICIT = 1
METHOD_RK4 = 2


@njit(**_OPTS)
def _step_into(mb, w, q, qd, tau, dt, method, frame, f_tip, viscous, coulomb, q_out, qd_out, s):
    """One integration step of (q, qd) under tau held constant over dt.

    Euler (the textbook's EulerStep): q' = q + dt qd, qd' = qd + dt qdd.
    Semi-implicit (symplectic) Euler: qd' = qd + dt qdd, q' = q + dt qd'.
    RK4: the classical fourth-order Runge-Kutta on x = (q, qd), xdot = (qd, FD(q, qd, tau)).
    s: scratch (8, n).
    """
    n = q.shape[0]
    k1 = s[0]
    _accel_into(mb, w, q, qd, tau, frame, f_tip, viscous, coulomb, s[7], k1)
    if method == METHOD_EULER:
        for i in range(n):
            q_out[i] = q[i] + dt * qd[i]
            qd_out[i] = qd[i] + dt * k1[i]
        return
    if method == METHOD_SEMI_IMPLICIT:
        for i in range(n):
            qd_out[i] = qd[i] + dt * k1[i]
            q_out[i] = q[i] + dt * qd_out[i]
        return
    qa, va, k2, k3, k4 = s[1], s[2], s[3], s[4], s[5]
    v2, v3 = s[6], q_out   # q_out is free until the end: use it as scratch for v3
    for i in range(n):
        qa[i] = q[i] + 0.5 * dt * qd[i]
        va[i] = qd[i] + 0.5 * dt * k1[i]
    _accel_into(mb, w, qa, va, tau, frame, f_tip, viscous, coulomb, s[7], k2)
    for i in range(n):
        v2[i] = va[i]
        qa[i] = q[i] + 0.5 * dt * v2[i]
        va[i] = qd[i] + 0.5 * dt * k2[i]
    _accel_into(mb, w, qa, va, tau, frame, f_tip, viscous, coulomb, s[7], k3)
    for i in range(n):
        v3[i] = va[i]
        qa[i] = q[i] + dt * v3[i]
        va[i] = qd[i] + dt * k3[i]
    _accel_into(mb, w, qa, va, tau, frame, f_tip, viscous, coulomb, s[7], k4)
    for i in range(n):
        v4 = va[i]
        q_out[i] = q[i] + dt / 6.0 * (qd[i] + 2.0 * v2[i] + 2.0 * v3[i] + v4)
        qd_out[i] = qd[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


# ---------------------------------------------------------------------------------------------
# Compiled entry points (argument checks); one per public call.
# Explicit signatures: anything but C-contiguous float64 arrays is refused with a TypeError instead
# of compiling a new specialisation, and the Python layer converts or explains (_checks.py).
# Results are allocated by the caller: returning a fresh array from compiled code costs more
# (boxing) than a 7-joint RNEA.
# ---------------------------------------------------------------------------------------------

def _inlined(algorithm):
    """The same algorithm compiled to be inlined into its caller: the single-call and batch entry
    points use it (the constant flags, e.g. use_qd=False in gravity, prune their branches, and no
    call is made per state), and CRBA for its world kinematics; the integrators, which call an
    algorithm several times per step, keep the plain call (compile time)."""
    return njit(**_INLINE)(getattr(algorithm, "py_func", algorithm))


def _entry(signature, allocates=False):
    """Declare a compiled entry point with an explicit signature, compiled (or loaded from numba's
    cache) on its first call rather than at import, so a process pays only for the kernels it uses.
    The first call rebinds the module attribute to the compiled dispatcher: later `_kernels.name`
    lookups reach it directly; a reference taken before (`f = _kernels.name`) keeps reaching the
    same dispatcher. `allocates`: the entry point creates arrays (needs numba's NRT)."""
    def declare(fn):
        compiled = None

        def first_call(*args):
            nonlocal compiled
            if compiled is None:
                compiled = njit(signature, **dict(_OPTS, _nrt=allocates))(fn)
                globals()[fn.__name__] = compiled
            return compiled(*args)
        first_call.__name__, first_call.__doc__, first_call.py_func = fn.__name__, fn.__doc__, fn
        return first_call
    return declare


_rnea_inlined = _inlined(_rnea_into)
_crba_inlined = _inlined(_crba_into)
_world_kinematics_inlined = _inlined(_world_kinematics_into)
_aba_inlined = _inlined(_aba_into)
_coriolis_matrix_inlined = _inlined(_coriolis_matrix_into)


_D = types.float64[:, ::1]                                # a Data buffer: packed model | workspace
_V = types.float64[::1]                                   # a result vector
_T = types.float64[:, ::1]                                # a result matrix or trajectory (N, n)
_VI = types.Array(types.float64, 1, "C", readonly=True)   # an input vector (writeable ones convert)
_TI = types.Array(types.float64, 2, "C", readonly=True)   # an input trajectory / matrix
_I = types.int64
_F = types.float64
_B = types.boolean

@_entry(types.none(_D, _VI, _VI, _VI, _V))
def rnea(d, q, qd, qdd, tau):
    mb = w = d      # the Data buffer: model columns and scratch columns (see _kernels header)
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    _check_vector(qdd, n)
    _rnea_inlined(mb, w, q, qd, qdd, True, True, True, -1, q, tau)


@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _V))
def rnea_tip(d, q, qd, qdd, frame, f_tip, tau):
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    _check_vector(qdd, n)
    _check_vector(f_tip, 6)
    _rnea_inlined(mb, w, q, qd, qdd, True, True, True, frame, f_tip, tau)


@_entry(types.none(_D, _VI, _V))
def gravity(d, q, tau):
    """g(q) by RNEA with qd = qdd = 0."""
    mb = w = d
    _check_vector(q, _n_bodies(mb))
    _rnea_inlined(mb, w, q, q, q, False, False, True, -1, q, tau)


@_entry(types.none(_D, _VI, _VI, _V))
def coriolis(d, q, qd, tau):
    """c(q, qd) by RNEA with qdd = 0 and no gravity."""
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    _rnea_inlined(mb, w, q, qd, qd, True, False, False, -1, q, tau)


@_entry(types.none(_D, _VI, _VI, _V))
def bias(d, q, qd, tau):
    """c(q, qd) + g(q) by RNEA with qdd = 0."""
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    _rnea_inlined(mb, w, q, qd, qd, True, False, True, -1, q, tau)


@_entry(types.none(_D, _TI, _TI, _TI, _I, _TI, _T))
def rnea_batch(d, q, qd, qdd, frame, f_tip, tau):
    """RNEA over N states (rows) into tau (N, n); f_tip (N, 6) applied at `frame` when frame >= 0."""
    mb = w = d
    N, n = q.shape
    if n != _n_bodies(mb) or qd.shape != q.shape or qdd.shape != q.shape or tau.shape != q.shape:
        raise ValueError("invalid trajectory shape")
    if frame >= 0 and (f_tip.shape[0] != N or f_tip.shape[1] != 6 or not _all_finite(f_tip)):
        raise ValueError("invalid tip wrench trajectory")
    if not (_all_finite(q) and _all_finite(qd) and _all_finite(qdd)):
        raise ValueError("invalid trajectory values")
    for k in range(N):
        _rnea_inlined(mb, w, q[k], qd[k], qdd[k], True, True, True, frame, f_tip[k if frame >= 0 else 0], tau[k])


@_entry(types.none(_D, _VI, _T))
def crba(d, q, M):
    mb = w = d
    _check_vector(q, _n_bodies(mb))
    _crba_inlined(mb, w, q, M)


@_entry(types.none(_D, _TI, types.float64[:, :, ::1]))
def crba_batch(d, q, M):
    """CRBA over N configurations (rows) into M (N, n, n)."""
    mb = w = d
    N, n = q.shape
    if n != _n_bodies(mb) or M.shape != (N, n, n):
        raise ValueError("invalid trajectory shape")
    if not _all_finite(q):
        raise ValueError("invalid trajectory values")
    for k in range(N):
        _crba_inlined(mb, w, q[k], M[k])


@_entry(types.none(_D, _VI, _VI, _VI, _V))
def aba(d, q, qd, tau, qdd):
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    _check_vector(tau, n)
    _aba_inlined(mb, w, q, qd, tau, -1, q, qdd)


@_entry(types.none(_D, _VI, _VI, _VI, _I, _VI, _V))
def aba_tip(d, q, qd, tau, frame, f_tip, qdd):
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    _check_vector(tau, n)
    _check_vector(f_tip, 6)
    _aba_inlined(mb, w, q, qd, tau, frame, f_tip, qdd)


@_entry(types.none(_D, _TI, _TI, _TI, _T))
def aba_batch(d, q, qd, tau, qdd):
    """ABA over N states (rows) into qdd (N, n)."""
    mb = w = d
    N, n = q.shape
    if n != _n_bodies(mb) or qd.shape != q.shape or tau.shape != q.shape or qdd.shape != q.shape:
        raise ValueError("invalid trajectory shape")
    if not (_all_finite(q) and _all_finite(qd) and _all_finite(tau)):
        raise ValueError("invalid trajectory values")
    for k in range(N):
        _aba_inlined(mb, w, q[k], qd[k], tau[k], -1, q[k], qdd[k])


@_entry(_V(_D, _VI, _VI, _VI, _I, _VI), allocates=True)
def fd_via_mass_matrix(d, q, qd, tau, frame, f_tip):
    """qdd = M^-1 (tau - b) with M = L L^T (the textbook's GetJointAccel, no explicit inverse)."""
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    _check_vector(tau, n)
    _check_vector(f_tip, 6)
    M = np.empty((n, n))
    _crba_into(mb, w, q, M)
    b = np.empty(n)
    zero = np.zeros(n)
    _rnea_into(mb, w, q, qd, zero, True, False, True, frame, f_tip, b)
    for i in range(n):
        b[i] = tau[i] - b[i]
    if not _cholesky_in_place(M, n):
        raise ValueError("mass matrix is not positive definite")
    _cholesky_solve_in_place(M, n, b)
    return b


@_entry(types.none(_D, _VI, _VI, _T))
def coriolis_matrix(d, q, qd, C):
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    _coriolis_matrix_inlined(mb, w, q, qd, C)


@_entry(types.float64[:, :, ::1](_D, _VI), allocates=True)
def mass_matrix_derivatives(d, q):
    """dM/dq_k = C(q, e_k) + C(q, e_k)^T, since Mdot = C + C^T is linear in qd; shape (n, n, n)."""
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    dM = np.empty((n, n, n))
    e = np.zeros(n)
    C = np.empty((n, n))
    for k in range(n):
        e[:] = 0.0
        e[k] = 1.0
        _coriolis_matrix_into(mb, w, q, e, C)
        for i in range(n):
            for j in range(n):
                dM[i, j, k] = C[i, j] + C[j, i]
    return dM


@_entry(types.none(_D, _VI, _I, _T))
def frame_pose(d, q, frame, T):
    mb = w = d
    _check_vector(q, _n_bodies(mb))
    _world_kinematics_into(mb, w, q)
    _frame_pose_into(mb, w, frame, T)


@_entry(types.float64[:, :, ::1](_D, _VI), allocates=True)
def body_poses(d, q):
    """T_{0i} of every body frame as the Model describes it (URDF joint frames), (n, 4, 4)."""
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _world_kinematics_into(mb, w, q)
    T = np.zeros((n, 4, 4))
    for i in range(n):                      # T_0i (z-axis frame) C_i^T: the URDF body frame
        for r in range(3):
            for c in range(3):
                T[i, r, c] = (w[i, W_R0 + 3 * r] * mb[i, COL_C + 3 * c] + w[i, W_R0 + 3 * r + 1] * mb[i, COL_C + 3 * c + 1]
                              + w[i, W_R0 + 3 * r + 2] * mb[i, COL_C + 3 * c + 2])
            T[i, r, 3] = w[i, W_P0 + r]
        T[i, 3, 3] = 1.0
    return T


@_entry(types.none(_D, _VI, _I, _I, _T), allocates=True)
def jacobian(d, q, frame, reference, J):
    mb = w = d
    _check_vector(q, _n_bodies(mb))
    T = np.empty((4, 4))
    _jacobian_into(mb, w, q, frame, reference, T, J)


@_entry(types.none(_D, _VI, _VI, _I, _I, _T), allocates=True)
def jacobian_derivative(d, q, qd, frame, reference, dJ):
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    T = np.empty((4, 4))
    _jacobian_derivative_into(mb, w, q, qd, frame, reference, T, dJ)


@_entry(types.none(_D, _VI, _I, _I, _F, _T), allocates=True)
def task_space_inertia(d, q, frame, reference, damping, Lam):
    """Lambda = (J M^-1 J^T + damping 1)^-1 (eq. 9.98 when J is square and invertible)."""
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    M = np.empty((n, n))
    _crba_into(mb, w, q, M)
    J = np.empty((6, n))
    T = np.empty((4, 4))
    _jacobian_into(mb, w, q, frame, reference, T, J)
    if not _cholesky_in_place(M, n):
        raise ValueError("mass matrix is not positive definite")
    # Y = L^-1 J^T (n x 6), Lambda^-1 = Y^T Y
    Y = np.empty((n, 6))
    for c in range(6):
        for i in range(n):
            s = J[c, i]
            for k in range(i):
                s -= M[i, k] * Y[k, c]
            Y[i, c] = s / M[i, i]
    Li = np.empty((6, 6))
    for r in range(6):
        for c in range(r + 1):
            s = 0.0
            for k in range(n):
                s += Y[k, r] * Y[k, c]
            Li[r, c] = s
            Li[c, r] = s
        Li[r, r] += damping
    if not _cholesky_in_place(Li, 6):
        raise ValueError("J M^-1 J^T is singular at this configuration (redundant or singular arm): pass damping > 0")
    e = np.empty(6)
    for c in range(6):
        e[:] = 0.0
        e[c] = 1.0
        _cholesky_solve_in_place(Li, 6, e)
        for r in range(6):
            Lam[r, c] = e[r]


@_entry(types.none(_D, _VI, _VI, _VI, _F, _I, _I, _VI, _VI, _VI, _V, _V, _T))
def step(d, q, qd, tau, dt, method, frame, f_tip, viscous, coulomb, q_out, qd_out, s):
    """One integration step into (q_out, qd_out); s: scratch (8, n)."""
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q, n)
    _check_vector(qd, n)
    _check_vector(tau, n)
    _check_vector(f_tip, 6)
    _step_into(mb, w, q, qd, tau, dt, method, frame, f_tip, viscous, coulomb, q_out, qd_out, s)


@_entry(types.none(_D, _VI, _VI, _TI, _F, _I, _I, _VI, _VI, _VI, _T, _T, _T))
def simulate(d, q0, qd0, tau, dt, method, frame, f_tip, viscous, coulomb, q, qd, s):
    """(q, qd) trajectories of shape (steps + 1, n) under tau[k] held over step k; s: scratch (8, n)."""
    mb = w = d
    n = _n_bodies(mb)
    _check_vector(q0, n)
    _check_vector(qd0, n)
    steps = tau.shape[0]
    if tau.shape[1] != n or not _all_finite(tau):
        raise ValueError("invalid torque trajectory")
    if q.shape != (steps + 1, n) or qd.shape != q.shape:
        raise ValueError("invalid trajectory shape")
    for i in range(n):
        q[0, i] = q0[i]
        qd[0, i] = qd0[i]
    for k in range(steps):
        _step_into(mb, w, q[k], qd[k], tau[k], dt, method, frame, f_tip, viscous, coulomb, q[k + 1], qd[k + 1], s)

