"""logic.state_publishing: robot_state_publisher's rules without ROS (rate on stamps, time going
backwards, ignore_timestamp, joints keeping their last value, mimic joints, fixed joints)."""
import numpy as np
import pytest

from robot_dynamics_ros.dynamics.kinematic_tree import KinematicTree
from robot_dynamics_ros.logic.state_publishing import StatePublishing

URDF = """<robot name="r">
  <link name="base"/><link name="a"/><link name="b"/><link name="c"/><link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0 0 0.5"/>
    <axis xyz="1 0 0"/><limit effort="1" velocity="1" lower="-1" upper="1"/></joint>
  <joint name="j3" type="revolute"><parent link="a"/><child link="c"/><axis xyz="0 1 0"/>
    <mimic joint="j1" multiplier="-2" offset="0.1"/>
    <limit effort="1" velocity="1" lower="-3" upper="3"/></joint>
  <joint name="fixed_tool" type="fixed"><parent link="b"/><child link="tool"/><origin xyz="0.1 0 0"/></joint>
</robot>"""
MS = 1_000_000


@pytest.fixture
def tree():
    return KinematicTree.from_urdf(URDF)


def test_fixed_joints_are_the_static_transforms(tree):
    (parent, child, T), = StatePublishing(tree).fixed_transforms()
    assert (parent, child) == ("b", "tool")
    np.testing.assert_array_equal(T[:3, 3], [0.1, 0, 0])


def test_moving_and_mimic_joints_with_their_values(tree):
    sent = StatePublishing(tree, 0.0).update(["j1", "j2"], [0.3, 0.2], 0)
    by_child = {child: T for _, child, T in sent}
    assert set(by_child) == {"a", "b", "c"}
    np.testing.assert_allclose(by_child["b"][:3, 3], [0.2, 0, 0.5])
    angle = -2 * 0.3 + 0.1                                         # the mimic joint: m q + o
    np.testing.assert_allclose(by_child["c"][:3, :3], [[np.cos(angle), 0, np.sin(angle)], [0, 1, 0],
                                                       [-np.sin(angle), 0, np.cos(angle)]], atol=1e-15)


def test_rate_limit_on_stamps_backwards_and_ignore_timestamp(tree):
    publishing = StatePublishing(tree, 20.0)
    sent = [k for k in range(0, 200) if publishing.update(["j1", "j2"], [0.0, 0.0], k * MS) is not None]
    assert sent == [0, 50, 100, 150]
    assert publishing.update(["j1", "j2"], [0.0, 0.0], 10 * MS) is not None     # backwards: at once
    assert publishing.update(["j1", "j2"], [0.0, 0.0], 20 * MS) is None
    every = StatePublishing(tree, 20.0, ignore_timestamp=True)
    assert all(every.update(["j1"], [0.0], k * MS) is not None for k in (5, 3, 3, 1))
    assert StatePublishing(tree, 0.0).update(["j1"], [0.0], 0) is not None
    assert StatePublishing(tree, 0.0).update(["other"], [0.0], 0) is None       # none of its joints


def test_joints_missing_keep_their_last_value_and_non_finite_are_skipped(tree):
    publishing = StatePublishing(tree, 0.0)
    assert {child for _, child, _ in publishing.update(["j1"], [0.5], 0)} == {"a", "c"}  # j2 never given
    publishing.update(["j2"], [0.25], 1)
    publishing.update(["j1", "j2"], [float("nan"), 0.3], 2)
    assert publishing.positions == {"j1": 0.5, "j2": 0.3}
    publishing.update(["j3"], [9.0], 3)                             # a mimic joint's own value: unused
    assert publishing.positions == {"j1": 0.5, "j2": 0.3}


def test_bad_publish_frequency_is_refused(tree):
    with pytest.raises(ValueError, match="publish_frequency"):
        StatePublishing(tree, -1.0)
