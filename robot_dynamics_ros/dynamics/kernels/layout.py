"""The one array every kernel reads and writes, and its columns (how kernels are compiled: jit/).

A Data buffer (model.py) is one C-contiguous float64 array with one row per body i = 0..n-1 (at
least one row), then one row per named frame. Its first MODEL_WIDTH columns hold the packed model
(constants, written once by Model._pack); the columns after them are the workspace: each holds ONE
quantity of body i, named for the quantity and the frame whose coordinates it is in:

    ..._PARENT  T_{λ(i),i}: body i's pose in its parent's frame
    ..._BASE    coordinates of the fixed base frame {0}
    ..._BODY    coordinates of body i's own frame {i}

Body frame {i} is joint i's frame turned so that the joint axis is z (Model._pack), so the screw
axis of joint i in {i} is A_i = (e_z, 0) (revolute) or (0, e_z) (prismatic), and
T_{λ(i),i}(q_i) = T_tree,i exp([A_i] q_i)  (eqs. 9.35, 9.50) is T_tree Rz(q_i) or T_tree Tz(q_i).

Coordinates and bodies (mimic joints): q has one entry per independent coordinate, nq <= n. Body i
moves with coordinate c_i as  q_i = m_i q[c_i] + o_i,  q̇_i = m_i q̇[c_i],  q̈_i = m_i q̈[c_i]  (COL_COORD,
COL_MULT, COL_OFFSET); a body whose joint mimics another shares that joint's coordinate. The outputs are
the projections onto the coordinates by the constant map G (G[i, c_i] = m_i): τ_r = G^T τ, M_r = G^T M G,
J_r = J G. Without mimic joints c_i = i, m_i = 1, o_i = 0 and the kernels take the direct path (a flag,
COL_MIMIC, read once per call), so those models compute exactly what they computed before. A model with
mimic joints has, after DATA_WIDTH, nq more columns (W_MIMIC_M): the nq x nq matrix of its forward
dynamics, which goes through M_r (CRBA) and a Cholesky solve (ABA assumes one coordinate per body).

One array per compiled call keeps numba's dispatch cheap (each array argument costs tens of ns);
inside, kernels read rows as tuples of floats (rows.py), which stay in registers.
"""
import numpy as np

from .jit import inline
from .native import is_native_ndarray

# ---- joint types -----------------------------------------------------------------------------
REVOLUTE = 0
PRISMATIC = 1

# ---- packed model: one body row ----------------------------------------------------------------
COL_R = 0          # 9: rotation of T_tree (row-major)
COL_P = 9          # 3: translation of T_tree
COL_TYPE = 12      # 1: REVOLUTE or PRISMATIC
COL_PARENT = 13    # 1: parent body λ(i), -1 for the base
COL_MASS = 14      # 1: m
COL_H = 15         # 3: h = m c (first mass moment) in {i}
COL_IO = 18        # 9: rotational inertia about the origin of {i}, in {i} (row-major)
COL_C = 27         # 9: rotation from the URDF body frame to this z-axis frame (row-major)
COL_RUN = 36       # 1: first body of the run of ancestors i, i-1, ..., COL_RUN (each the parent
                   #    of the one before), so ancestor loops count down instead of chasing links
COL_N = 37         # row 0 only: number of bodies n
COL_GRAVITY = 38   # row 0 only: gravity vector (3) in {0}
COL_COORD = 41     # 1: coordinate c_i that moves body i (i without mimic joints)
COL_MULT = 42      # 1: multiplier m_i: q_i = m_i q[c_i] + o_i (1 without mimic joints)
COL_OFFSET = 43    # 1: offset o_i (0 without mimic joints)
COL_NQ = 44        # row 0 only: number of coordinates nq (= n without mimic joints)
COL_MIMIC = 45     # row 0 only: 1 when some body's joint mimics another (c_i != i or m_i != 1 or o_i != 0)
COL_ARMATURE = 46  # 1: a_i, the armature of body i's joint (rotor inertia through the gearbox): M + diag(a)
MODEL_WIDTH = 47
# ---- packed model: one frame row (after the body rows) ------------------------------------------
FCOL_BODY = 0      # 1: body the frame is fixed to (-1 = the base)
FCOL_R = 1         # 9: rotation of the frame's placement in its body's frame
FCOL_P = 10        # 3: translation of the placement

# ---- workspace: one body row ---------------------------------------------------------------------
_w = MODEL_WIDTH
W_R_PARENT = _w         # 9  rotation of T_{λ(i),i}(q_i)                      (every algorithm)
W_P_PARENT = _w + 9     # 3  translation of T_{λ(i),i}(q_i)
W_V_BODY = _w + 12      # 6  twist V_i in {i}                                  (RNEA)
W_VDOT_BODY = _w + 18   # 6  acceleration dV_i/dt in {i}
W_F_BODY = _w + 24      # 6  wrench F_i that body i's joint transmits, in {i}
W_R_BASE = _w + 30      # 9  rotation of T_{0i}(q)                            (base-frame kinematics)
W_P_BASE = _w + 39      # 3  translation of T_{0i}(q)
W_S_BASE = _w + 42      # 6  screw axis S_i = Ad_{T_0i} A_i in {0}: space Jacobian column i
W_V_BASE = _w + 48      # 6  twist V_i in {0}                                  (ABA, Coriolis, dJ/dt)
W_SDOT_BASE = _w + 54   # 6  dS_i/dt = [V_i, S_i] in {0}
W_VDOT_BASE = _w + 60   # 6  acceleration dV_i/dt in {0}                       (ABA)
W_GA_BASE = _w + 66     # 36 articulated-body inertia G^A_i in {0}, row-major
W_PA_BASE = _w + 102    # 6  articulated-body bias wrench p^A_i in {0}
W_U_BASE = _w + 108     # 6  U_i = G^A_i S_i in {0}
W_INV_D = _w + 114      # 1  1 / D_i, D_i = S_i^T U_i + a_i
W_U_TORQUE = _w + 115   # 1  u_i = tau_i - S_i^T p^A_i
W_GC_BODY = _w + 116    # 10 composite rigid-body inertia of the subtree at i, ten parameters in {i} (CRBA)
W_GC_BASE = _w + 126    # 36 composite spatial inertia of the subtree at i in {0}, row-major (Coriolis)
W_BC_BASE = _w + 162    # 36 composite Coriolis factor B^c_i in {0}, row-major (Coriolis)
# the derivative pass's own columns (rnea_derivatives.py, christoffel.py): ABA's, which that pass does not use
W_PHI_BASE = W_PA_BASE  # 6  φ_i = [V̇_λ, S_i] + [V_λ, ψ_i] in {0}
W_Y_BASE = W_U_BASE     # 6  Y_i = −[ad_{S_i}]^T F_i + G^c_i φ_i + 2 B^c_i ψ_i in {0}
DATA_WIDTH = _w + 198
W_MIMIC_M = DATA_WIDTH  # nq (models with mimic joints only): M_r, then its Cholesky factor (forward dynamics)


# ---- reading the packed model --------------------------------------------------------------------
@inline
def n_bodies(mb):
    return int(mb[0, COL_N])


@inline
def n_coordinates(mb):
    """nq: the length of q (independent coordinates); n_bodies(mb) without mimic joints."""
    return int(mb[0, COL_NQ])


@inline
def has_mimic(mb):
    """True when some body's joint mimics another: the kernels then map coordinates to bodies."""
    return mb[0, COL_MIMIC] != 0.0


@inline
def body_position(mb, q, i, mimic):
    """q_i = m_i q[c_i] + o_i of body i's joint; q[i] itself without mimic joints."""
    if mimic:
        return mb[i, COL_MULT] * q[int(mb[i, COL_COORD])] + mb[i, COL_OFFSET]
    return q[i]


@inline
def body_rate(mb, x, i, mimic):
    """x_i = m_i x[c_i]: body i's joint velocity or acceleration from the coordinates' (G constant);
    x[i] itself without mimic joints."""
    if mimic:
        return mb[i, COL_MULT] * x[int(mb[i, COL_COORD])]
    return x[i]


@inline
def coordinate(mb, i):
    """c_i: the coordinate that moves body i."""
    return int(mb[i, COL_COORD])


@inline
def multiplier(mb, i):
    """m_i: body i's joint moves m_i times its coordinate."""
    return mb[i, COL_MULT]


@inline
def armature(mb, i):
    """a_i: the armature of body i's joint, which adds a_i q̈_i to its torque (M + diag(a))."""
    return mb[i, COL_ARMATURE]


@inline
def parent(mb, i):
    return int(mb[i, COL_PARENT])


@inline
def is_prismatic(mb, i):
    return mb[i, COL_TYPE] == PRISMATIC


@inline
def run_start(mb, i):
    """Ancestors of body i come in runs of consecutive indices: i, i-1, ..., run_start(mb, i), then
    the parent of run_start(mb, i) and its run. Looping over a run by counting keeps the parent
    links (a load and a conversion per step) off the loop's critical path."""
    return int(mb[i, COL_RUN])


@inline
def frame_row(mb, f):
    """Row of frame f in the packed model (bodies occupy max(n, 1) rows)."""
    return max(n_bodies(mb), 1) + f


@inline
def frame_body(mb, f):
    return int(mb[frame_row(mb, f), FCOL_BODY])


# ---- argument checks -------------------------------------------------------------------------------
@inline
def all_finite(x):
    """True when no entry of x is NaN or inf (np.isfinite: the fastmath flags here keep NaN/inf
    semantics, but an arithmetic test such as x - x == 0 would be folded away by reassociation).

    A matrix is summed first: a NaN or an infinity among its entries makes the sum NaN or infinite
    in any order of addition (NaN + v = NaN, inf - inf = NaN), and the sum vectorises, where the loop
    below does not; only when the sum is not finite (a bad entry, or finite entries whose sum
    overflows) are the entries looked at. A vector is looked at directly: the summing loop made the
    RNEA entry point slower (doc/performance.md, "Design measurements")."""
    if x.ndim > 1:
        s = 0.0
        for v in x.flat:
            s += v
        if np.isfinite(s):
            return True
    for v in x.flat:
        if not np.isfinite(v):
            return False
    return True


@inline
def non_negative(x):
    """True when every entry of the vector x is >= 0 (NaN is not)."""
    for v in x:
        if not v >= 0.0:
            return False
    return True


@inline
def check_vector(d, x, n):
    """x is a finite vector of length n, and an array object the kernels read right: exactly a
    numpy.ndarray like the Data buffer d, aligned, in native byte order (native.py says why the
    signatures do not ensure that)."""
    if x.shape[0] != n or not is_native_ndarray(x, d) or not all_finite(x):
        raise ValueError("invalid input vector")


@inline
def check_state(d, q, qd):
    """nq, after checking q and qd as vectors of length nq (the model's coordinates) of the Data buffer d."""
    n = n_coordinates(d)
    check_vector(d, q, n)
    check_vector(d, qd, n)
    return n
