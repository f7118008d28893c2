"""Jacobians of every frame (bodies, merged fixed links, massless frames, the root) against finite
differences of frame_pose, in all three references; J̇ against a finite difference of J along q̇.
Central differences, h = 1e-6: relative residual ≤ FD (observed ~1e-10)."""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.spatial import adjoint, inverse_transform, skew

from _residuals import EXACT, FD, assert_close

H = 1e-6


def vee(W):
    return np.array([W[2, 1], W[0, 2], W[1, 0]])


def twist_from_pose_derivative(T, Tdot, reference):
    """space: [V_s] = Ṫ T⁻¹; body: [V_b] = T⁻¹ Ṫ; world_aligned: (ω = vee(Ṙ Rᵀ), v = ṗ)."""
    if reference == "space":
        X = Tdot @ np.linalg.inv(T)
        return np.concatenate([vee(X[:3, :3]), X[:3, 3]])
    if reference == "body":
        X = np.linalg.inv(T) @ Tdot
        return np.concatenate([vee(X[:3, :3]), X[:3, 3]])
    return np.concatenate([vee(Tdot[:3, :3] @ T[:3, :3].T), Tdot[:3, 3]])


@pytest.mark.parametrize("reference", ["space", "body", "world_aligned"])
def test_jacobian_equals_finite_difference_of_frame_pose(model, states, reference):
    n = model.nq
    for q, _, _ in states[:2]:
        for frame in model.frame_names:
            T = rd.frame_pose(model, q, frame)
            J_fd = np.column_stack([
                twist_from_pose_derivative(T, (rd.frame_pose(model, q + H * e, frame)
                                               - rd.frame_pose(model, q - H * e, frame)) / (2 * H),
                                           reference) for e in np.eye(n)])
            J = rd.jacobian(model, q, frame, reference=reference)
            assert J.shape == (6, n)
            # floor 1: a unit joint rate moves a frame at ~1 rad/s or m/s; base frames have J = 0
            assert_close(f"J ({reference}) vs FD of frame_pose", J, J_fd, FD, floor=1.0)
            unsupported = [j for j in range(n) if j not in model.support(frame)]
            assert np.all(J[:, unsupported] == 0.0)


def test_jacobian_references_are_related_by_adjoints(model, states):
    """J_b = Ad_{T⁻¹} J_s; world_aligned = [[1, 0], [−[p], 1]] J_s (the twist moved to the frame origin)."""
    for q, _, _ in states:
        for frame in model.frame_names:
            T = rd.frame_pose(model, q, frame)
            Js = rd.jacobian(model, q, frame)
            assert_close("J_b = Ad_{T^-1} J_s", rd.jacobian(model, q, frame, reference="body"),
                         adjoint(inverse_transform(T)) @ Js, EXACT, floor=1.0)
            A = np.eye(6)
            A[3:, :3] = -skew(T[:3, 3])
            assert_close("J_world_aligned = translate(J_s)",
                         rd.jacobian(model, q, frame, reference="world_aligned"), A @ Js, EXACT, floor=1.0)


@pytest.mark.parametrize("reference", ["space", "body", "world_aligned"])
def test_jacobian_derivative_equals_finite_difference_along_velocity(model, states, reference):
    """J̇(q, q̇) = (J(q + h q̇) − J(q − h q̇)) / 2h, every frame."""
    for q, qd, _ in states[:2]:
        for frame in model.frame_names:
            fd = (rd.jacobian(model, q + H * qd, frame, reference)
                  - rd.jacobian(model, q - H * qd, frame, reference)) / (2 * H)
            Jdot = rd.jacobian_derivative(model, q, qd, frame, reference)
            assert_close(f"Jdot ({reference}) vs FD of J", Jdot, fd, FD, floor=np.abs(qd).max())


def test_frame_acceleration_from_jacobian_derivative(model, states):
    """V̇ = J q̈ + J̇ q̇ (eq. 9.92) equals the finite difference of V = J q̇ along the motion
    (q, q̇) → (q ± h q̇, q̇ ± h q̈), body reference at the tip frame."""
    for q, qd, qdd in states:
        frame = model.tip_frame
        V = lambda q_, qd_: rd.jacobian(model, q_, frame, "body") @ qd_  # noqa: E731
        fd = (V(q + H * qd, qd + H * qdd) - V(q - H * qd, qd - H * qdd)) / (2 * H)
        Vdot = (rd.jacobian(model, q, frame, "body") @ qdd
                + rd.jacobian_derivative(model, q, qd, frame, "body") @ qd)
        assert_close("Vdot = J qdd + Jdot qd (FD)", Vdot, fd, FD, floor=1.0)
