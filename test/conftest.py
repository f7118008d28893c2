"""ROS 2 domains for the whole suite, one share per pytest-xdist worker.

``make test`` runs the suite on two workers (pytest-xdist, ``-n 2 --dist worksteal``;
``PYTEST_PARALLEL=``: one process), and tests on both start nodes and processes at the same time.
Worker k of W owns the domains d in 1..200 with d % W == k: its own ``ROS_DOMAIN_ID`` (set here,
before any test starts rclpy) and every spare domain its tests hand to a harness or to the processes
they start (``spare_domain``). Two workers therefore never share a domain. Without xdist, W = 1 and
the share is 1..200. Domains above 101 are fine with localhost discovery (their ports stay below 65 535).
"""

import os
import random

import pytest

DOMAINS = range(1, 201)


def _worker():
    """(k, W): this process's worker index and the number of workers (0, 1 without xdist)."""
    name = os.environ.get('PYTEST_XDIST_WORKER', '')           # 'gw0', 'gw1', ...
    count = int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', '1'))
    return (int(name[2:]) if name.startswith('gw') else 0), max(count, 1)


def _share():
    k, count = _worker()
    return [d for d in DOMAINS if d % count == k]


def pytest_configure(config):
    """Each worker's own ROS_DOMAIN_ID: the first domain of its share at or after the one `make test`
    drew (the Makefile's random 1..101, so that runs side by side still differ)."""
    if 'PYTEST_XDIST_WORKER' not in os.environ:
        return
    share = _share()
    drawn = int(os.environ.get('ROS_DOMAIN_ID', '0') or 0)
    os.environ['ROS_DOMAIN_ID'] = str(next((d for d in share if d >= drawn), share[0]))


@pytest.fixture(scope='session')
def spare_domain():
    """A function returning a random domain of this worker's share other than its ROS_DOMAIN_ID: for
    a test's own harness or the processes it starts."""
    own = os.environ.get('ROS_DOMAIN_ID')
    spare = [d for d in _share() if str(d) != own]
    return lambda: random.choice(spare)
