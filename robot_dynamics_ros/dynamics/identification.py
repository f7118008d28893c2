"""Identification: the dynamics are linear in the inertial parameters, τ = Y(q, q̇, q̈) π.

Per body, in model order (`model.link_names`), π_j = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz,
I_yz, I_zz): mass (kg), first moment (kg m) and rotational inertia about the origin of the body's URDF
link frame (kg m², I_o = I_c + m [c]^T [c]), in that frame's axes: Pinocchio's order and frames, so
results compare one to one. Fixed links are merged into the body they hang from, as in the model.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy import empty  # (not np.empty: one attribute lookup less per call)
from numpy.typing import ArrayLike

from . import _checks, threads
from .consistency import PIN_ORDER, pseudo_inertia, pseudo_inertia_expression, solve
from .inertia import check_inertia, lump_inertias, parallel_axis, rigid_body_error, triangle_error
from .kernels import entries as _k
from .model import Data, Model

__all__ = ["joint_torque_regressor", "joint_torque_regressor_trajectory", "inertial_parameters",
           "with_inertial_parameters", "with_payload", "identify_payload", "identify_payload_from_log",
           "PayloadEstimate"]

_PIN_ORDER = PIN_ORDER       # where each entry of a 3x3 rotational inertia sits in π's six

DEFAULT_CUTOFF = 5.0    # Hz: identify_payload_from_log's low-pass; exciting trajectories stay below ~2 Hz
FILTER_ORDER = 4        # its Butterworth order: gain 1/sqrt(1 + (f/f_c)^(2 FILTER_ORDER)), applied twice
EDGE_PERIODS = 3        # cutoff periods dropped at each end of a log
#: States per range at least when a regressor stack splits across threads (≥ 0.15 ms: threads.py) on a
#: 7-joint arm: the whole regressor (1.3 µs per state), and identify_payload's one body's columns with
#: the model's τ (0.6 µs per state).
MIN_CHUNK = 128
PAYLOAD_MIN_CHUNK = 256


def joint_torque_regressor(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                           data: Data | None = None) -> np.ndarray:
    """Y (n, 10 n_bodies) with τ = Y π (inverse_dynamics = Y @ inertial_parameters(model)): row i the
    joint torque, columns 10 j ... 10 j + 9 body j's parameters (module docstring). q, qd, qdd (n,) in
    model.joint_names order. One compiled pass (kernels/regressor.py): RNEA's forward recursion
    (eqs. 9.53-9.55), then each body's wrench per unit parameter, F = G V̇ − [ad_V]^T G V, carried to
    its ancestors' joints (eqs. 9.56-9.57). With mimic joints the rows are the coordinates' (G^T Y)."""
    Y = empty((model.nq, 10 * model.n_bodies))
    try:
        _k.joint_torque_regressor(_checks.buffer(model, data), q, qd, qdd, Y, empty(model.nq))
    except _checks.KERNEL_ERRORS as error:
        q, qd, qdd = _checks.retry_args(model, error, (q, "q"), (qd, "qd"), (qdd, "qdd"))
        return joint_torque_regressor(model, q, qd, qdd, data)
    return Y


def joint_torque_regressor_trajectory(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike,
                                      data: Data | None = None) -> np.ndarray:
    """Y (N, n, 10 n_bodies): joint_torque_regressor of each of N states (rows of q, qd, qdd: (N, n)) in
    one compiled loop per range of states (threads.py: get_num_threads() ranges at most, none under
    MIN_CHUNK states); the same Y for any thread count."""
    q, qd, qdd = (_states(model, value, name) for value, name in ((q, "q"), (qd, "qd"), (qdd, "qdd")))
    _same_count(q, qd, qdd)
    Y = empty((q.shape[0], model.nq, 10 * model.n_bodies))
    buf = _checks.buffer(model, data)

    def rows(start, stop, workspace):   # one range of states, in its own copy of the workspace, τ scratch
        _k.joint_torque_regressor_batch(workspace, q[start:stop], qd[start:stop], qdd[start:stop],
                                        Y[start:stop], empty(model.nq))
    threads.run_chunks(q.shape[0], rows, MIN_CHUNK, buf)
    return Y


def _states(model, value, name):
    """An (N, n) array of finite samples (_checks.array), or a ValueError naming it."""
    return _checks.array(model, value, name, (None, model.nq))


def _same_count(*arrays):
    if len({a.shape[0] for a in arrays}) != 1:
        raise ValueError(f"q, qd, qdd and tau must have the same number of samples, got "
                         f"{[a.shape[0] for a in arrays]}")


def inertial_parameters(model: Model) -> np.ndarray:
    """π (10 n_bodies,): every body's (m, m c, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz) with the rotational
    inertia about the URDF link frame's origin, I_o = I_c + m ([c]^T [c]) (parallel axis), in model
    order: τ = joint_torque_regressor(model, q, qd, qdd) @ inertial_parameters(model)."""
    m, c = model.mass, model.com
    I_o = model.inertia_com + parallel_axis(m, c)
    pi = np.column_stack([m, m[:, None] * c, I_o[:, 0, 0], I_o[:, 0, 1], I_o[:, 1, 1], I_o[:, 0, 2],
                          I_o[:, 1, 2], I_o[:, 2, 2]])
    return pi.reshape(-1)


def with_inertial_parameters(model: Model, pi: ArrayLike) -> Model:
    """A new Model with the inertial parameters π (10 n_bodies,; inertial_parameters' layout) instead of
    the model's. A body's ten zeros leave it massless; any other parameters must be a rigid body (mass > 0,
    inertia about the centre of mass positive definite, triangle inequalities), else a ValueError naming
    the body."""
    n = model.n_bodies
    pi = _checks.real_array(pi, "pi", f"a vector of {10 * n} inertial parameters")
    if pi.shape != (10 * n,) or not np.isfinite(pi).all():
        raise ValueError(f"pi must be {10 * n} finite numbers (10 per body), got shape {pi.shape}")
    blocks = pi.reshape(n, 10)
    mass = blocks[:, 0].copy()
    com = np.zeros((n, 3))
    inertia_com = np.zeros((n, 3, 3))
    for j in range(n):
        if not blocks[j].any():
            continue
        I_o = blocks[j, 4:][_PIN_ORDER]
        com[j] = blocks[j, 1:4] / mass[j] if mass[j] > 0 else np.nan
        inertia_com[j] = I_o - parallel_axis(mass[j:j + 1], com[j:j + 1])[0] if mass[j] > 0 else I_o
        problem = rigid_body_error(mass[j], inertia_com[j])
        if problem:
            raise ValueError(f"pi: body {j} ({model.link_names[j]!r}): {problem}")
    return model.replace(mass=mass, com=com, inertia_com=inertia_com)


def _frame_in_body(model, frame):
    """(body index, R_bf, p_bf) of a frame (default tip frame); ValueError for a frame on the base."""
    name = model.tip_frame if frame is None else frame
    f = model.frame_index(name)
    body = int(model.frame_body[f])
    if body < 0:
        raise ValueError(f"frame {name!r} is on the base: a payload there moves with no joint")
    T = model.frame_placement[f]
    return body, T[:3, :3], T[:3, 3]


def with_payload(model: Model, mass: float, com: ArrayLike, inertia: ArrayLike | None = None,
                 frame: str | None = None) -> Model:
    """A new Model with a rigid payload attached at `frame` (default model.tip_frame): `mass` (kg, ≥ 0),
    `com` (3,) its centre of mass in the frame's coordinates (m), `inertia` (3, 3) its rotational inertia
    about the centre of mass in the frame's axes (kg m²; None = a point mass; positive semi-definite, its
    principal moments satisfying the triangle inequalities, else a ValueError). It is lumped onto the body
    that carries the frame (parallel-axis theorem: inertia.lump_inertias). Mass 0 returns the model itself
    (nothing added, nothing removed)."""
    mass = _checks.scalar(mass, "mass", minimum=0.0)
    com = _checks.real_array(com, "com", "3 numbers")
    if com.shape != (3,) or not np.isfinite(com).all():
        raise ValueError(f"com must be 3 finite numbers (m, in the frame's coordinates), got shape "
                         f"{com.shape}")
    if inertia is None:
        inertia = np.zeros((3, 3))
    else:
        inertia = _checks.real_array(inertia, "inertia", "a 3x3 matrix")
        if inertia.shape != (3, 3):
            raise ValueError(f"inertia must be a 3x3 matrix (kg m^2 about the centre of mass), got shape "
                             f"{inertia.shape}")
        check_inertia(lambda k: "inertia", [mass], inertia[None])
        error = triangle_error(np.linalg.eigvalsh(inertia))
        if error is not None:
            raise ValueError(f"inertia: {error}")
    body, R, p = _frame_in_body(model, frame)
    if mass == 0.0:
        return model
    parts = np.array([body, body])
    total, centre, about_com = lump_inertias(
        parts, np.array([model.mass[body], mass]), np.array([model.com[body], R @ com + p]),
        np.array([model.inertia_com[body], R @ inertia @ R.T]), model.n_bodies)
    new_mass, new_com, new_inertia = (np.array(x) for x in (model.mass, model.com, model.inertia_com))
    new_mass[body], new_com[body], new_inertia[body] = total[body], centre[body], about_com[body]
    return model.replace(mass=new_mass, com=new_com, inertia_com=new_inertia)


@dataclass(frozen=True)
class PayloadEstimate:
    """identify_payload's answer: mass (kg), com (3,) in the frame's coordinates (m), inertia (3, 3) about
    the com in the frame's axes (kg m²), residual_rms (N·m: of τ − τ_model − Y π over all samples and
    joints), condition (of the regressor with unit-norm columns: large = the motion did not excite the
    payload's parameters), consistent (whether the estimate is a rigid body), projected (whether least
    squares gave none and the estimate is the best fit among rigid bodies)."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    residual_rms: float
    condition: float
    consistent: bool
    projected: bool = False


def identify_payload(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, tau: ArrayLike,
                     frame: str | None = None, consistent: bool = True) -> PayloadEstimate:
    """The payload at `frame` (default tip frame) that explains the torques: from N samples (q, q̇, q̈, τ:
    (N, n) each, τ the measured joint torques), least squares of τ − τ_model = Y_b π_p, where τ_model is
    the model's inverse dynamics and Y_b the regressor's ten columns of the body b carrying the frame
    (the payload's parameters about b's origin; both in one compiled loop per range of samples, the
    ranges across threads as in joint_torque_regressor_trajectory), the columns scaled to unit norm;
    then π_p moved to the frame (with_payload's inverse).

    consistent (default): when least squares gives no rigid body (a negative mass, an inertia about the
    centre of mass that is not positive semi-definite or breaks the triangle inequality: what noise does to
    a point mass, whose inertia is zero), the answer is the best fit among rigid bodies instead (the same
    least squares under the pseudo-inertia's J ⪰ 0: consistency.py) and `projected` says so; a mass at 0
    there means the data show no payload. Every answer is then one that with_payload (and the nodes'
    payload parameters) accept."""
    q, qd, qdd, tau = (_states(model, value, name)
                       for value, name in ((q, "q"), (qd, "qd"), (qdd, "qdd"), (tau, "tau")))
    _same_count(q, qd, qdd, tau)
    body, R, p = _frame_in_body(model, frame)
    N = q.shape[0]
    Y_body, tau_model = empty((N, model.nq, 10)), empty((N, model.nq))
    buf = _checks.buffer(model)

    def rows(start, stop, workspace):   # one compiled loop per range of states, in its own workspace
        _k.body_regressor_batch(workspace, q[start:stop], qd[start:stop], qdd[start:stop], body,
                                Y_body[start:stop], tau_model[start:stop])
    threads.run_chunks(N, rows, PAYLOAD_MIN_CHUNK, buf)
    Y = Y_body.reshape(N * model.nq, 10)
    residual = (tau - tau_model).reshape(-1)
    scale = np.linalg.norm(Y, axis=0)
    scale[scale == 0.0] = 1.0
    solution, _, _, singular = np.linalg.lstsq(Y / scale, residual, rcond=None)   # (its SVD's values too)
    pi = solution / scale
    condition = float(singular[0] / singular[-1]) if singular[-1] > 0 else np.inf
    residual_rms = float(np.sqrt(np.mean((residual - Y @ pi) ** 2))) if residual.size else 0.0
    projected = False
    if consistent and not _payload_is_rigid(pi):
        pi = _nearest_rigid_payload(Y / scale, residual, scale)
        projected = True
        residual_rms = float(np.sqrt(np.mean((residual - Y @ pi) ** 2))) if residual.size else 0.0
    mass, c_body, I_c_body = _payload_from_parameters(pi, clean=projected)
    inertia = R.T @ I_c_body @ R
    inertia = 0.5 * (inertia + inertia.T)
    return PayloadEstimate(mass=mass, com=R.T @ (c_body - p) if mass > 0 or not projected else np.zeros(3),
                           inertia=inertia, residual_rms=residual_rms, condition=condition,
                           consistent=_payload_is_rigid(pi) or projected, projected=projected)


def _payload_from_parameters(pi, clean=False):
    """(mass, com, inertia about the com) in the body frame of ten payload parameters (about its origin).
    clean: rounding-level repairs of a consistent solver answer: a mass at the solver's tolerance is none,
    the inertia's principal moments clipped at 0 and to the triangle inequality."""
    mass = float(pi[0])
    if clean and mass <= 1e-9 * max(1.0, float(np.abs(pi).max())):
        return 0.0, np.zeros(3), np.zeros((3, 3))
    c_body = pi[1:4] / mass if mass != 0.0 else np.zeros(3)
    I_c_body = pi[4:][_PIN_ORDER] - (parallel_axis(np.array([mass]), c_body[None])[0] if mass != 0 else 0.0)
    if clean:
        moments, axes = np.linalg.eigh(0.5 * (I_c_body + I_c_body.T))
        moments = np.maximum(moments, 0.0)
        moments[2] = min(moments[2], moments[0] + moments[1])
        I_c_body = (axes * moments) @ axes.T
    return mass, c_body, I_c_body


def _payload_is_rigid(pi):
    """Whether ten payload parameters are a rigid body's or none (a pseudo-inertia ⪰ 0, within rounding:
    what with_payload accepts, a point mass included)."""
    J = pseudo_inertia(pi)
    return bool(np.linalg.eigvalsh(J)[0] >= -1e-12 * max(1.0, float(np.abs(J).max())))


def _nearest_rigid_payload(Y_scaled, residual, scale):
    """argmin ‖Y π − r‖² over the payloads with a pseudo-inertia J(π) ⪰ 0 (consistency.py): a semidefinite
    program in the scaled unknowns x = π · scale (cvxpy, Clarabel)."""
    import cvxpy as cp

    x = cp.Variable(10)
    J = pseudo_inertia_expression(cp.multiply(1.0 / scale, x))
    problem = cp.Problem(cp.Minimize(cp.sum_squares(Y_scaled @ x - residual)), [0.5 * (J + J.T) >> 0])
    solve(problem)
    if x.value is None:
        raise ValueError(f"the payload's consistent fit failed: the solver reports {problem.status!r}")
    return x.value / scale


def identify_payload_from_log(model: Model, t: ArrayLike, q: ArrayLike, tau: ArrayLike,
                              frame: str | None = None, cutoff: float = DEFAULT_CUTOFF) -> PayloadEstimate:
    """identify_payload from a recording with positions and efforts but no accelerations: t (N,) the
    samples' times (s, strictly increasing, any spacing: a log's stamps), q and tau (N, n) in
    model.joint_names order, tau the measured joint torques (N·m; N for prismatic joints; minus the
    friction torques if the joints have friction the model leaves out).

    The filter, stated: q and τ are resampled (linear interpolation) onto a uniform grid of the median
    spacing dt, extended at both ends by odd reflection (x(t0 − s) = 2 x(t0) − x(t0 + s), which keeps
    the signal and its slope continuous), and multiplied in the frequency domain by
    |H(f)|² = 1 / (1 + (f / cutoff)^(2·FILTER_ORDER)): an order-FILTER_ORDER Butterworth low-pass run
    forward and backward, zero phase, so the filtered signals are not delayed. Then q̇ and q̈ are central
    differences (second order) of the filtered q, and the same filter on τ keeps the torques and the
    accelerations matched (the regression is not biased by filtering one side only). The reflection
    flips q̈ at the ends; the filter spreads that jump over about two cutoff periods, so the first and
    last EDGE_PERIODS cutoff periods (EDGE_PERIODS ⌈1/(cutoff dt)⌉ samples each) are dropped, and so
    is as much around each gap in the stamps (dropped messages: filtered_log).

    cutoff (Hz) must be below the Nyquist frequency 1/(2 dt); choose it above the trajectory's
    frequencies (a few Hz for an exciting trajectory) and below the noise."""
    q_f, qd, qdd, tau_f = filtered_log(model, t, q, tau, cutoff)
    return identify_payload(model, q_f, qd, qdd, tau_f, frame)


GAP_FACTOR = 5.0        # a spacing above GAP_FACTOR times the median is a gap (dropped samples)


def filtered_log(model: Model, t: ArrayLike, q: ArrayLike, tau: ArrayLike, cutoff: float = DEFAULT_CUTOFF,
                 coulomb: bool = False, times: bool = False):
    """(q, q̇, q̈, τ) (each (M, n), on a uniform grid) from a recording's stamps t (N,), positions q and
    efforts tau (N, n): identify_payload_from_log's zero-phase low-pass and central differences, the
    first and last EDGE_PERIODS cutoff periods dropped, and so are the grid points within as much of a
    gap in the stamps (a spacing above GAP_FACTOR times the median: dropped messages), where the
    interpolation would invent a motion. ValueError naming t, q, tau or cutoff.

    coulomb: also return, fifth, sgn(q̇) through the same low-pass: the Coulomb friction column filtered
    as the torque it explains was (a jump at each reversal that the filter spreads over the τ samples
    around it, which the unfiltered sgn would not match). times: also return, last, the times (M,) of the
    kept grid points (s, as t)."""
    t = _checks.real_array(t, "t", "an (N,) array of times in seconds")
    if t.ndim != 1 or t.size < 3 or not np.isfinite(t).all() or not (np.diff(t) > 0).all():
        raise ValueError(f"t must be N >= 3 finite, strictly increasing times (s), got shape {t.shape}")
    q, tau = (_states(model, value, name) for value, name in ((q, "q"), (tau, "tau")))
    if not q.shape[0] == tau.shape[0] == t.size:
        raise ValueError(f"t, q and tau must have the same number of samples, got {t.size}, {q.shape[0]} "
                         f"and {tau.shape[0]}")
    dt = float(np.median(np.diff(t)))
    cutoff = _checks.scalar(cutoff, "cutoff", minimum=0.0)
    if not 0.0 < cutoff < 0.5 / dt:
        raise ValueError(f"cutoff must be > 0 and below the Nyquist frequency 1/(2 dt) = {0.5 / dt:g} Hz of "
                         f"the samples (median spacing dt = {dt:g} s), got {cutoff:g}")
    grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1)
    edge = EDGE_PERIODS * int(np.ceil(1.0 / (cutoff * dt)))
    if grid.size <= 2 * edge + 2:
        raise ValueError(f"the log is too short for cutoff = {cutoff:g} Hz: {t[-1] - t[0]:g} s, it needs "
                         f"more than {2 * EDGE_PERIODS} cutoff periods ({2 * edge * dt:g} s)")
    q_f, tau_f = (_zero_phase_lowpass(_resample(t, x, grid), dt, cutoff) for x in (q, tau))
    qd = np.gradient(q_f, dt, axis=0)       # (x[k+1] − x[k−1]) / (2 dt)
    qdd = np.gradient(qd, dt, axis=0)
    keep = np.zeros(grid.size, dtype=bool)
    keep[edge:grid.size - edge] = True
    gaps = np.flatnonzero(np.diff(t) > GAP_FACTOR * dt)
    for k in gaps:                          # the gap [t_k, t_k+1] and the filter's reach on both sides
        keep[(grid > t[k] - edge * dt) & (grid < t[k + 1] + edge * dt)] = False
    if not keep.any():
        raise ValueError(f"t: no samples left after dropping {edge * dt:g} s at each end and around the "
                         f"{gaps.size} gaps in the stamps (spacings above {GAP_FACTOR:g} times the median)")
    result = (q_f[keep], qd[keep], qdd[keep], tau_f[keep])
    if coulomb:
        result += (_zero_phase_lowpass(np.sign(qd), dt, cutoff)[keep],)
    return result + (grid[keep],) if times else result


def _resample(t, x, grid):
    """x (N, n) sampled at t, linearly interpolated at grid (its own samples where t is the grid)."""
    return np.column_stack([np.interp(grid, t, column) for column in x.T])


def _zero_phase_lowpass(x, dt, cutoff):
    """x (N, n) on a uniform grid of spacing dt through |H(f)|² = 1 / (1 + (f/cutoff)^(2 FILTER_ORDER)),
    zero phase, in the frequency domain, each end extended by odd reflection (see
    identify_payload_from_log)."""
    pad = min(x.shape[0] - 1, 2 * EDGE_PERIODS * int(np.ceil(1.0 / (cutoff * dt))))
    extended = np.concatenate([2.0 * x[0] - x[pad:0:-1], x, 2.0 * x[-1] - x[-2:-pad - 2:-1]])
    f = np.fft.rfftfreq(extended.shape[0], dt)
    gain = 1.0 / (1.0 + (f / cutoff) ** (2 * FILTER_ORDER))
    filtered = np.fft.irfft(np.fft.rfft(extended, axis=0) * gain[:, None], n=extended.shape[0], axis=0)
    return filtered[pad:pad + x.shape[0]]
