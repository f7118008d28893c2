"""Demo (``python -m robot_dynamics_ros.demos --lqr``, ``make demo DEMO_ARGS=--lqr``): an LQR designed
from the analytical linearisation holds the UR5e at a pose, from a start knocked away from it (ROS-free:
the core's ``linearize`` and ``simulate``).

1. Linearises one RK4 step of the arm (dt = 2 ms) at the pose, held by its gravity torque:
   x⁺ ≈ A x + B τ, x = (q, q̇) (``linearize``), and checks A and B against central differences of the step.
2. Designs a discrete LQR on (A, B) by Riccati iteration (numpy), and simulates the arm (``simulate``, the
   same RK4 step) from the pose plus ``START_OFFSET`` rad per joint and a joint velocity, under
   τ = g(q_eq) − K (x − x_eq).
3. Prints the error, the check and the time of ``linearize_trajectory`` over a 100-step horizon; draws
   out/demo_lqr.png (joint errors, torques and velocities against time).

Exit code 0 when the LQR brings every joint within 1e-4 rad of the pose in the run and the linearisation
agrees with the differences to 1e-6 relative; 1 otherwise.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.cli import resources

DT = 0.002                                  # s, the step the LQR is designed on and simulated with
DURATION = 3.0                              # s
POSE = np.array([0.3, -1.2, 1.4, -1.6, -1.5, 0.2])          # rad, UR5e joints
START_OFFSET = 0.15                         # rad added to every joint at the start
START_VELOCITY = 0.5                        # rad/s of every joint at the start
STATE_WEIGHTS = (100.0, 1.0)                # Q = diag(100 (positions), 1 (velocities)), R = 0.01
TORQUE_WEIGHT = 0.01


def lqr_gain(A, B, state_weights=STATE_WEIGHTS, torque_weight=TORQUE_WEIGHT, iterations=3000):
    """K of the discrete LQR u = −K x on x⁺ = A x + B u, by Riccati iteration."""
    n = B.shape[1]
    Q = np.diag([state_weights[0]] * n + [state_weights[1]] * n)
    R, P = torque_weight * np.eye(n), np.eye(2 * n)
    for _ in range(iterations):
        K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        P = Q + A.T @ P @ (A - B @ K)
    return K


def linearization_error(model, A, B, q, tau, dt):
    """max relative difference of linearize's (A, B) at (q, 0, tau) against central differences (step 1e-6)
    of rk4_step."""
    n = model.nq
    x0 = np.concatenate([q, np.zeros(n)])

    def step(x, u):
        return np.concatenate(rd.rk4_step(model, x[:n], x[n:], u, dt))

    h = 1e-6
    A_fd = np.column_stack([(step(x0 + h * e, tau) - step(x0 - h * e, tau)) / (2 * h) for e in np.eye(2 * n)])
    B_fd = np.column_stack([(step(x0, tau + h * e) - step(x0, tau - h * e)) / (2 * h) for e in np.eye(n)])
    return max(np.abs(A - A_fd).max() / np.abs(A_fd).max(), np.abs(B - B_fd).max() / np.abs(B_fd).max())


def main(opts) -> int:
    model = rd.load_urdf(resources.default_urdf(), tip_link="tool0")
    n = model.nq
    tau_eq = rd.gravity_torques(model, POSE)
    A, B = rd.linearize(model, POSE, np.zeros(n), tau_eq, DT)
    K = lqr_gain(A, B)
    check = linearization_error(model, A, B, POSE, tau_eq, DT)
    x_eq = np.concatenate([POSE, np.zeros(n)])
    q0, qd0 = POSE + START_OFFSET, np.full(n, START_VELOCITY)
    steps = int(round(DURATION / DT))

    def lqr(t, q, qd):
        return tau_eq - K @ (np.concatenate([q, qd]) - x_eq)

    run_lqr = rd.simulate(model, q0, qd0, lqr, DT, steps)
    tau_lqr = np.array([lqr(t, q, qd) for t, q, qd in zip(run_lqr.t, run_lqr.q, run_lqr.qd)])
    Q, QD, TAU = np.tile(POSE, (100, 1)), np.zeros((100, n)), np.tile(tau_eq, (100, 1))
    rd.linearize_trajectory(model, Q, QD, TAU, DT)
    start = time.perf_counter()
    rd.linearize_trajectory(model, Q, QD, TAU, DT)
    horizon_ms = (time.perf_counter() - start) * 1e3
    final_error = np.abs(run_lqr.q[-1] - POSE).max()
    print(f"LQR (Q = diag({STATE_WEIGHTS[0]:g}, {STATE_WEIGHTS[1]:g}), R = {TORQUE_WEIGHT:g}) from "
          f"{START_OFFSET} rad and {START_VELOCITY} rad/s off the pose: max joint error after {DURATION:g} s "
          f"{final_error:.2e} rad, peak torque {np.abs(tau_lqr - tau_eq).max():.1f} N·m above g(q)")
    print(f"linearize against central differences of rk4_step: {check:.1e} relative; "
          f"linearize_trajectory over 100 steps: {horizon_ms:.2f} ms")
    if not opts.no_plot:
        path = draw(run_lqr, tau_lqr, tau_eq, model.joint_names, final_error, check,
                    Path(opts.output).with_name("demo_lqr.png"))
        print(f"figure: {path}")
    return 0 if final_error < 1e-4 and check < 1e-6 else 1


def draw(run_lqr, tau_lqr, tau_eq, names, final_error, check, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from robot_dynamics_ros.demos.recording import save_figure

    fig, axes = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    for j, name in enumerate(names):
        axes[0].semilogy(run_lqr.t, np.abs(run_lqr.q[:, j] - POSE[j]) + 1e-12, label=name)
        axes[1].plot(run_lqr.t, tau_lqr[:, j] - tau_eq[j], label=name)
        axes[2].plot(run_lqr.t, run_lqr.qd[:, j], label=name)
    axes[0].set_ylabel("|q − q_eq| [rad]")
    axes[0].set_title(f"LQR from linearize (RK4, dt = {DT * 1e3:g} ms): error after {DURATION:g} s "
                      f"{final_error:.1e} rad; A, B vs differences {check:.0e}")
    axes[1].set_ylabel("τ − g(q_eq) [N·m]")
    axes[2].set_ylabel("q̇ [rad/s]")
    axes[2].set_xlabel("t [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8, ncol=3)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)
