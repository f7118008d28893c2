"""The LQR demo (``make demo DEMO_ARGS=--lqr``): an LQR designed from linearize brings the UR5e back to its
pose, and linearize agrees with central differences of rk4_step; its figure is drawn."""
from robot_dynamics_ros.demos import lqr_demo
from robot_dynamics_ros.demos.__main__ import main as demo_main


def test_the_lqr_demo_holds_the_arm_and_draws_its_figure(tmp_path, capsys):
    assert demo_main(["--lqr", "--output", str(tmp_path / "demo.png")]) == 0
    out = capsys.readouterr().out
    assert "linearize against central differences" in out
    assert (tmp_path / "demo_lqr.png").stat().st_size > 10_000


def test_the_lqr_gain_stabilises_the_linearisation():
    """The closed loop A − B K of the demo's design has every eigenvalue inside the unit circle."""
    import numpy as np

    from robot_dynamics_ros import dynamics as rd
    from robot_dynamics_ros.cli import resources
    model = rd.load_urdf(resources.default_urdf(), tip_link="tool0")
    tau_eq = rd.gravity_torques(model, lqr_demo.POSE)
    A, B = rd.linearize(model, lqr_demo.POSE, np.zeros(6), tau_eq, lqr_demo.DT)
    K = lqr_demo.lqr_gain(A, B)
    assert np.abs(np.linalg.eigvals(A - B @ K)).max() < 1.0
