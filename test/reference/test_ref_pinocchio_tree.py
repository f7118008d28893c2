"""dynamics.kinematic_tree against Pinocchio's frame placements: every link of every robot of
example-robot-data used here (and our UR5e), at seeded random configurations, |ours - Pinocchio|max
<= 1e-9 (Pinocchio with its own mimic joints: the Panda's second finger follows the first)."""
import math
import os
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros.dynamics.kinematic_tree import KinematicTree

pin = pytest.importorskip("pinocchio")

ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
PATHS = {
    "panda": ROBOTS / "panda_description" / "urdf" / "panda.urdf",
    "ur10": ROBOTS / "ur_description" / "urdf" / "ur10_robot.urdf",
    "xarm7": ROBOTS / "xarm_description" / "urdf" / "xarm7.urdf",
    "kinova": ROBOTS / "kinova_description" / "robots" / "kinova.urdf",
    "ur5e": Path(__file__).resolve().parents[2] / "urdf" / "ur5e.urdf",
}


@pytest.mark.parametrize("robot", sorted(PATHS))
def test_every_link_pose_equals_pinocchios(robot):
    path = os.fspath(PATHS[robot])
    tree = KinematicTree.from_urdf(path)
    model = pin.buildModelFromUrdf(path, mimic=True)
    data = model.createData()
    np.random.seed(3)                                   # pin.randomConfiguration's generator
    worst = 0.0
    for _ in range(5):
        q = pin.randomConfiguration(model, -np.pi * np.ones(model.nq), np.pi * np.ones(model.nq))
        positions = {}
        for name in tree.moving_joints:
            joint = model.joints[model.getJointId(name)]
            i = joint.idx_q
            positions[name] = math.atan2(q[i + 1], q[i]) if joint.nq == 2 else q[i]
        pin.framesForwardKinematics(model, data, q)
        poses = tree.link_poses(positions)
        for i, frame in enumerate(model.frames):
            if frame.type == pin.BODY:
                worst = max(worst, np.abs(poses[frame.name] - data.oMf[i].homogeneous).max())
    assert worst <= 1e-9, worst
    assert set(poses) == set(tree.links)
