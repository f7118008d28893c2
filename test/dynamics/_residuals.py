"""Relative residuals of the identities: assert them and remember the largest seen (printed at the end
of the run by conftest.pytest_terminal_summary, so the measured margins are visible)."""
import numpy as np

# Tolerances, relative to the max-norm of the reference side.
EXACT = 1e-10    # two exact algorithms in floating point: rounding only (observed ~1e-14 .. 1e-12)
FD = 1e-6        # central finite differences, h = 1e-6: truncation ~h² and rounding ~ε/h ≈ 1e-10

largest = {}     # name -> largest residual seen
ranges = {}      # name -> (smallest, largest) of a measured number (slopes, drifts)


def residual(a, b, scale=None, floor=0.0):
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = max(float(np.max(np.abs(b))) if scale is None else float(scale), floor)
    return float(np.max(np.abs(a - b))) / max(scale, 1e-300) if a.size else 0.0


def measure(name, value):
    lo, hi = ranges.get(name, (np.inf, -np.inf))
    ranges[name] = (min(lo, float(value)), max(hi, float(value)))
    return value


def record(name, value):
    largest[name] = max(largest.get(name, -np.inf), float(value))
    return value


def assert_close(name, a, b, rtol, scale=None, floor=0.0):
    """|a − b|_max ≤ rtol · max(|b|_max (or scale), floor); the residual is recorded under `name`.

    floor: the natural magnitude of the quantity, for identities whose sides may vanish exactly
    (c(q, q̇) of a single joint, columns of joints that do not move a frame)."""
    r = record(name, residual(a, b, scale, floor))
    assert r <= rtol, (f"{name}: relative residual {r:.3e} > {rtol:.1e}\n"
                       f" a = {np.asarray(a)}\n b = {np.asarray(b)}")


def torque_scale(M, qd=None):
    """Natural size of joint torques c(q, q̇) ~ |M| |q̇|² (for identities whose sides may vanish)."""
    v = 1.0 if qd is None else max(1.0, float(np.max(np.abs(qd))) ** 2)
    return float(np.max(np.abs(M))) * v
