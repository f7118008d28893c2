"""The control step of a DDP knot: a box-constrained quadratic program (Tassa et al., ICRA 2014),

    x = argmin_{lo ≤ x ≤ hi} ½ x^T H x + g^T x,

by projected Newton steps (Bertsekas 1982). From x = clamp(0), each iteration

    grad = H x + g;   free: the variables not held at a bound by their gradient
                      (not: x_i ≤ lo_i with grad_i > 0, or x_i ≥ hi_i with grad_i < 0)
    H_ff = L L^T (Cholesky on the free rows and columns),  step_f = -H_ff^-1 grad_f,  step_c = 0
    x ← clamp(x + α step), α = 1, ½, ¼, ... the first with value(x⁺) ≤ value(x) + 10⁻⁴ α grad^T step (Armijo)

until |grad_f|² < 10⁻²⁴, no α is accepted, or x stops moving (50 iterations at most). Without limits
the first Newton step is the answer. The free set and L at the end give the feedback gains (ddp.py).
"""
from .jit import inline
from .linalg import cholesky_in_place, cholesky_solve_in_place


@inline
def box_value(H, g, x):
    """½ x^T H x + g^T x."""
    n = g.shape[0]
    v = 0.0
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += H[i, j] * x[j]
        v += x[i] * (0.5 * s + g[i])
    return v


@inline
def free_factor(H, free, L):
    """The Cholesky factor of H's rows and columns where free (packed to the first m rows and columns
    of L); returns m, or -1 when that block is not positive definite."""
    n = free.shape[0]
    m = 0
    for i in range(n):
        if free[i]:
            mc = 0
            for j in range(n):
                if free[j]:
                    L[m, mc] = H[i, j]
                    mc += 1
            m += 1
    if not cholesky_in_place(L, m):
        return -1
    return m


@inline
def gather_free(x, free, scale, packed):
    """packed[:m] = scale x_f: the entries of x where free, in order (m of them)."""
    c = 0
    for i in range(free.shape[0]):
        if free[i]:
            packed[c] = scale * x[i]
            c += 1


@inline
def scatter_free(packed, free, x):
    """x_f = packed[:m] where free, x_c = 0 elsewhere: gather_free's inverse, the clamped entries zeroed."""
    c = 0
    for i in range(free.shape[0]):
        if free[i]:
            x[i] = packed[c]
            c += 1
        else:
            x[i] = 0.0


@inline
def gradient_and_free_set(H, g, lo, hi, limited, x, grad, free):
    """grad = H x + g and the free set (module docstring; every variable when not limited) into grad and
    free; returns |grad_f|², the squared norm of the gradient on the free variables."""
    n = g.shape[0]
    free_norm = 0.0
    for i in range(n):
        s = g[i]
        for j in range(n):
            s += H[i, j] * x[j]
        grad[i] = s
        free[i] = not limited or not ((x[i] <= lo[i] and s > 0.0) or (x[i] >= hi[i] and s < 0.0))
        if free[i]:
            free_norm += s * s
    return free_norm


@inline
def projected_line_search(H, g, lo, hi, x, step_, grad, trial):
    """The Armijo search along the projected path: trial = clamp(x + α step) for α = 1, ½, ¼, ... > 10⁻¹⁰,
    the first with value(trial) ≤ value(x) + 10⁻⁴ α grad^T step. False when none is accepted."""
    n = g.shape[0]
    value = box_value(H, g, x)
    slope = 0.0
    for i in range(n):
        slope += grad[i] * step_[i]
    alpha = 1.0
    while alpha > 1e-10:
        for i in range(n):
            trial[i] = min(max(x[i] + alpha * step_[i], lo[i]), hi[i])
        if box_value(H, g, trial) <= value + 1e-4 * alpha * slope:
            return True
        alpha *= 0.5
    return False


@inline
def move_to(x, trial):
    """x = trial; True when no entry moved (the iteration has converged)."""
    still = True
    for i in range(x.shape[0]):
        if trial[i] != x[i]:
            still = False
        x[i] = trial[i]
    return still


@inline
def box_qp(H, g, lo, hi, limited, x, free, L, grad, step_, trial, rhs):
    """x = argmin ½ x^T H x + g^T x over lo ≤ x ≤ hi (any x when not limited) by projected Newton
    steps on the free variables (module docstring), from x = 0 clamped; free marks them at the end and L
    holds the Cholesky factor of H on them. Returns the number of free variables, or -1 when H is not
    positive definite on them. Scratch: grad, step_, trial, rhs (n each)."""
    n = g.shape[0]
    for i in range(n):
        x[i] = min(max(0.0, lo[i]), hi[i]) if limited else 0.0
    for _ in range(50):
        free_norm = gradient_and_free_set(H, g, lo, hi, limited, x, grad, free)
        m = free_factor(H, free, L)
        if m < 0:
            return -1
        if free_norm < 1e-24:
            return m
        gather_free(grad, free, -1.0, rhs)
        cholesky_solve_in_place(L, m, rhs)                              # step_f = -H_ff^-1 grad_f
        scatter_free(rhs, free, step_)
        if not limited:
            for i in range(n):
                x[i] += step_[i]
            return m
        if not projected_line_search(H, g, lo, hi, x, step_, grad, trial) or move_to(x, trial):
            return m
    return free_factor(H, free, L)
