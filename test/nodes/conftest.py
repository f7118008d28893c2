"""Fixtures for the node tests (see _node_harness): one isolated rclpy context per module."""

import pytest

pytest.importorskip('rclpy')

from _node_harness import UR5E_URDF, Harness


@pytest.fixture(scope='module')
def ros(spare_domain):
    harness = Harness(spare_domain())           # a domain of this worker's own (test/conftest.py)
    yield harness
    harness.close()


@pytest.fixture
def graph(ros):
    """The module's harness; the nodes a test added are destroyed after it."""
    yield ros
    ros.remove_all()
    ros.logs.clear()


@pytest.fixture(scope='session')
def ur5e_xml():
    return UR5E_URDF.read_text()


@pytest.fixture(scope='session')
def ur5e_model():
    from robot_dynamics_ros import dynamics as rd
    return rd.load_urdf(str(UR5E_URDF))
