"""robot_dynamics_ros.logic.task_frame without ROS: the frame of task-space outputs on chains and on
trees with several tips (the Panda with its fingers)."""

import sys
import sysconfig
from pathlib import Path

import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.task_frame import leaf_links, task_frame

ROOT = Path(__file__).resolve().parents[2]
PANDA_URDF = (Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix' / 'share'
              / 'example-robot-data' / 'robots' / 'panda_description' / 'urdf' / 'panda.urdf')


def test_a_chain_has_one_tip_the_core_default():
    model = rd.load_urdf(str(ROOT / 'urdf' / 'ur5e.urdf'))
    assert leaf_links(model) == ['wrist_3_link']
    assert task_frame(model) == (model.tip_frame, None)
    assert task_frame(rd.load_urdf(str(ROOT / 'urdf' / 'ur5e.urdf'), tip_link='tool0'),
                      'tool0') == ('tool0', None)


@pytest.mark.skipif(not PANDA_URDF.exists(), reason='example-robot-data not installed')
def test_a_tree_with_several_tips_needs_tip_link():
    model = rd.load_urdf(str(PANDA_URDF))
    assert sorted(leaf_links(model)) == ['panda_leftfinger', 'panda_rightfinger']
    frame, reason = task_frame(model)
    assert frame is None
    assert "2 tips ['panda_leftfinger', 'panda_rightfinger']" in reason and 'tip_link' in reason
    chain = rd.load_urdf(str(PANDA_URDF), tip_link='panda_hand_tcp')
    assert task_frame(chain, 'panda_hand_tcp') == ('panda_hand_tcp', None)
    # the fingers locked (a node's `joints` parameter): one tip again
    arm = rd.load_urdf(str(PANDA_URDF), locked_joints={'panda_finger_joint1': 0.0,
                                                       'panda_finger_joint2': 0.0})
    assert task_frame(arm) == (arm.tip_frame, None)


if __name__ == '__main__':
    sys.exit(pytest.main([__file__]))
