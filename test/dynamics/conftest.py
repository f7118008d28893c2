"""Fixtures for the identity tests: seeded random kinematic trees loaded from URDF text.

TREES covers every size n = 1..12 once, each from its own seed; the trees mix revolute, continuous
and prismatic joints with random axes and origins, massive links on fixed joints (merged by the
loader), massless fixed frames and a 'tool0' frame (see _random_trees.random_tree).
"""
import functools

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

import _residuals
from _random_trees import random_state, random_tree

TREES = [(100 + n, n) for n in range(1, 13)]          # (seed, number of moving joints)
STATES = 3                                            # random states per tree and identity


@functools.lru_cache(maxsize=None)
def tree_and_model(seed, n, **options):
    tree = random_tree(seed, n, **options)
    return tree, rd.load_urdf(tree.to_urdf())


@pytest.fixture(params=TREES, ids=[f"seed{s}-n{n}" for s, n in TREES])
def case(request):
    """(tree, model, rng): a random tree, its Model, and a generator seeded for the test's states."""
    seed, n = request.param
    tree, model = tree_and_model(seed, n)
    return tree, model, np.random.default_rng(seed + 10_000)


@pytest.fixture
def model(case):
    return case[1]


@pytest.fixture
def states(case):
    """STATES random (q, qd, qdd) for the case's model."""
    _, model, rng = case
    return [random_state(model, rng) for _ in range(STATES)]


def pytest_terminal_summary(terminalreporter):
    if _residuals.largest:
        terminalreporter.section("test/dynamics: largest relative residual per identity")
        width = max(len(k) for k in _residuals.largest)
        for name in sorted(_residuals.largest):
            terminalreporter.write_line(f"{name:<{width}}  {_residuals.largest[name]:.2e}")
    if _residuals.ranges:
        terminalreporter.section("test/dynamics: measured numbers (min .. max)")
        width = max(len(k) for k in _residuals.ranges)
        for name in sorted(_residuals.ranges):
            lo, hi = _residuals.ranges[name]
            terminalreporter.write_line(f"{name:<{width}}  {lo:.3g} .. {hi:.3g}")
