"""The MuJoCo demo (``python -m robot_dynamics_ros.demos --mujoco``): its targets, the world it reads, the
observer's lag it compares through, and one real run."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros.cli.resources import default_urdf, world_file
from robot_dynamics_ros.demos import mujoco_demo

ROOT = Path(__file__).resolve().parents[2]


def test_targets_press_slide_and_lift_in_the_start_orientation():
    start = np.eye(4)
    start[:3, :3] = np.diag([1.0, -1.0, -1.0])          # tool z down
    start[:3, 3] = (-0.49, -0.13, 0.49)
    targets = mujoco_demo.press_slide_lift_targets(start, touch_z=0.425, depth=0.02, slide=0.1)
    assert [label for label, _ in targets] == ['press', 'slide', 'lift']
    for _, T in targets:
        np.testing.assert_array_equal(T[:3, :3], start[:3, :3])
        assert T[0, 3] == start[0, 3]
    (_, press), (_, slide), (_, lift) = targets
    np.testing.assert_allclose([press[1, 3], press[2, 3]], [-0.13, 0.405])
    np.testing.assert_allclose([slide[1, 3], slide[2, 3]], [-0.03, 0.405])
    np.testing.assert_allclose([lift[1, 3], lift[2, 3]], [-0.03, 0.49])


def test_the_table_and_the_tool_ball_of_the_shipped_files():
    assert mujoco_demo.table_top(world_file('table.xml')) == pytest.approx(0.40)
    radius, centre = mujoco_demo.tool_ball(default_urdf().read_text())
    assert radius == 0.025 and not centre.any()


def test_observer_lag_is_a_first_order_response():
    """A step through K/(s + K) sampled every 2 ms: 1 − e^(−K t), to Tustin's O((K dt)²)."""
    stamps = np.arange(0, 200_000_000, 2_000_000)
    y = mujoco_demo.observer_lag(stamps, np.ones((stamps.size, 2)), 50.0)
    t = stamps * 1e-9
    np.testing.assert_allclose(y[1:, 0], 1.0 - np.exp(-50.0 * t[1:]), atol=0.01)
    assert y[0, 0] == 0.0 and y[-1, 1] == pytest.approx(1.0, abs=1e-4)


@pytest.mark.ros
@pytest.mark.slow
def test_mujoco_demo_runs(tmp_path, spare_domain):
    """`python -m robot_dynamics_ros.demos --mujoco`: exit 0 (the press, the contact detected and released,
    the estimate within --max-relative-error of MuJoCo's contact torques), the report and the PNG."""
    pytest.importorskip('mujoco')
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get('PYTHONPATH')) if p))
    env['ROS_DOMAIN_ID'] = str(spare_domain())
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.demos', '--mujoco', '--no-viewer', '--slide', '0.08',
         '--dwell', '0.2', '--output', str(tmp_path / 'demo.png')],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    png = tmp_path / 'demo_mujoco.png'
    assert str(png) in result.stdout and png.is_file()
    assert '~/contact: false -> true' in result.stdout, result.stdout
    raw, lagged = map(float, re.search(r'all joints: RMS error ([\d.]+) % .*?; ([\d.]+) % against',
                                       result.stdout).groups())
    assert raw < 6.0 and lagged < 2.0, result.stdout
