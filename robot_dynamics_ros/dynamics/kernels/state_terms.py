"""Every joint-space and task-space term of one state from one forward-kinematics pass
(as Pinocchio's computeAllTerms):

    T_{λ(i),i}, T_{0i}, S_i          kinematics.body_poses_in_base, once
    g(q)                             RNEA with q̇ = q̈ = 0                          (eqs. 9.53-9.57)
    c(q, q̇) = C(q, q̇) q̇              RNEA with q̈ = 0 and no gravity
    M(q)                             CRBA
  and at a frame, in a reference (space | body | world_aligned):
    J, dJ/dt                         jacobians.py
    Λ = (J M^-1 J^T + δ 1)^-1        from M = L L^T (linalg.py; eq. 9.98 for square J and δ = 0)
    η = Λ (J M^-1 (c + g) - dJ/dt q̇)  so that F = Λ dV/dt + η                      (eqs. 9.97, 9.99)
"""
from .crba import crba
from .frame_jacobians import jacobian, jacobian_derivative
from .jit import inline
from .kinematics import body_poses_in_base
from .layout import n_coordinates
from .linalg import cholesky_in_place, cholesky_solve_in_place, task_space_inertia_from_cholesky
from .rnea import rnea

STATUS_OK = 0
STATUS_M_NOT_POSITIVE_DEFINITE = 1
STATUS_TASK_SPACE_SINGULAR = 2


def scratch_rows(n):
    """Rows of the all_terms scratch array (its width is max(n, 6))."""
    return 2 * n + 15


@inline
def all_terms(mb, w, q, qd, frame, reference, damping, M, c, g, J, Lam, eta, T, scratch):
    """M, c, g into M (n x n), c (n,), g (n,); with frame >= 0 also J (6 x n), Λ (6 x 6), η (6,) and
    T = T_{0f}; n = nq, the coordinates. scratch: (scratch_rows(n), max(n, 6)). Returns a STATUS_* code
    (the task-space terms are unset unless it is STATUS_OK)."""
    n = n_coordinates(mb)
    body_poses_in_base(mb, w, q)                                                   # the one pass
    rnea(mb, w, q, qd, qd, False, False, True, -1, q, g, poses_known=True)         # g(q)
    rnea(mb, w, q, qd, qd, True, False, False, -1, q, c, poses_known=True)         # c(q, q̇)
    crba(mb, w, q, M, poses_known=True)                                            # M(q)
    if frame < 0:
        return STATUS_OK
    L = scratch[0:n, 0:n]
    dJ = scratch[n:n + 6, 0:n]
    Y = scratch[n + 6:2 * n + 6, 0:6]
    Lam_inv = scratch[2 * n + 6:2 * n + 12, 0:6]
    unit = scratch[2 * n + 12, 0:6]
    Minv_b = scratch[2 * n + 13, 0:n]
    x = scratch[2 * n + 14, 0:6]
    jacobian(mb, w, q, frame, reference, T, J, poses_known=True)
    jacobian_derivative(mb, w, q, qd, frame, reference, T, dJ, poses_known=True)
    for i in range(n):
        for k in range(i + 1):
            L[i, k] = M[i, k]
        Minv_b[i] = c[i] + g[i]
    if not cholesky_in_place(L, n):
        return STATUS_M_NOT_POSITIVE_DEFINITE
    if not task_space_inertia_from_cholesky(L, n, J, damping, Y, Lam_inv, unit, Lam):
        return STATUS_TASK_SPACE_SINGULAR
    cholesky_solve_in_place(L, n, Minv_b)                                          # M^-1 (c + g)
    for r in range(6):                                                             # J M^-1 b - dJ/dt q̇
        s = 0.0
        for k in range(n):
            s += J[r, k] * Minv_b[k] - dJ[r, k] * qd[k]
        x[r] = s
    for r in range(6):                                                             # η = Λ x
        s = 0.0
        for k in range(6):
            s += Lam[r, k] * x[k]
        eta[r] = s
    return STATUS_OK
