"""robot_dynamics_ros.logic.contact_estimation without ROS: when the observer starts again, the time step
from the stamps, the tare, the contact flag and the wrench, on the pendulum and a 6-joint arm."""

from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.logic.contact_estimation import ContactEstimation

UR5E = Path(__file__).resolve().parents[2] / 'urdf' / 'ur5e.urdf'
MS = 1_000_000          # ns


@pytest.fixture(scope='module')
def arm():
    return rd.load_urdf(str(UR5E), tip_link='tool0')


def _still(arm, tau_ext):
    """A still arm's state and the measured torques that hold it against gravity and tau_ext."""
    q = np.array([0.2, -1.2, 1.1, -1.3, -1.4, 0.3])
    return q, np.zeros(arm.nq), rd.gravity_torques(arm, q) - tau_ext


def test_converges_to_the_external_torque_and_recovers_the_wrench(arm):
    wrench = np.array([0.5, -0.2, 0.1, 8.0, -4.0, 10.0])
    q = _still(arm, 0.0)[0]
    q, qd, tau = _still(arm, rd.jacobian(arm, q, 'tool0', 'body').T @ wrench)
    e = ContactEstimation(arm, [50.0], [2.0], frame='tool0')
    first = e.update(q, qd, tau, 1000 * MS)
    assert first.restarted == 'first state' and not first.contact and np.all(first.tau_ext == 0.0)
    for k in range(1, 2001):
        estimate = e.update(q, qd, tau, (1000 + k) * MS)
    assert estimate.restarted is None and estimate.contact
    np.testing.assert_allclose(estimate.wrench, wrench, atol=1e-9)


def test_restarts_on_a_stamp_going_back_a_gap_or_a_request_and_skips_a_repeated_stamp(arm):
    q, qd, tau = _still(arm, np.full(6, 1.0))
    e = ContactEstimation(arm, 50.0, 0.5, state_timeout=0.1)
    e.update(q, qd, tau, 0)
    assert e.update(q, qd, tau, 10 * MS).restarted is None
    assert e.update(q, qd, tau, 10 * MS) is None                      # dt = 0: nothing new
    assert 'went back' in e.update(q, qd, tau, 5 * MS).restarted
    assert e.update(q, qd, tau, 15 * MS).restarted is None
    assert 'state_timeout' in e.update(q, qd, tau, 216 * MS).restarted
    e.restart('a jump')
    assert e.update(q, qd, tau, 217 * MS).restarted == 'a jump'
    for k in range(1, 500):
        estimate = e.update(q, qd, tau, (217 + k) * MS)
    assert estimate.contact and estimate.wrench is None               # no frame: no wrench
    np.testing.assert_allclose(estimate.tau_ext, 1.0, atol=1e-9)


def test_zero_tares_and_thresholds_are_per_joint(arm):
    tau_ext = np.array([0.0, 3.0, 0.0, 0.0, 0.0, 0.0])
    q, qd, tau = _still(arm, tau_ext)
    e = ContactEstimation(arm, 50.0, [10.0, 2.0, 10.0, 10.0, 10.0, 10.0])
    assert not e.zero()                                               # nothing to tare yet
    for k in range(1000):
        estimate = e.update(q, qd, tau, k * MS)
    assert estimate.contact
    e.threshold = [10.0, 4.0, 10.0, 10.0, 10.0, 10.0]
    assert not e.update(q, qd, tau, 1000 * MS).contact
    assert e.zero()
    np.testing.assert_allclose(e.update(q, qd, tau, 1001 * MS).tau_ext, 0.0, atol=1e-9)


def test_bad_settings_and_states_are_refused_and_change_nothing(arm):
    q, qd, tau = _still(arm, np.zeros(6))
    e = ContactEstimation(arm, 50.0, 1.0)
    e.update(q, qd, tau, 0)
    for name, value in (('gain', 0.0), ('gain', [1.0, 2.0]), ('threshold', -1.0), ('threshold', np.nan)):
        with pytest.raises(ValueError, match=name):
            setattr(e, name, value)
    with pytest.raises(ValueError, match='state_timeout'):
        e.state_timeout = 0.0
    with pytest.raises(ValueError, match='tau'):
        e.update(q, qd, np.r_[np.nan, tau[1:]], MS)
    assert e.update(q, qd, tau, MS).restarted is None                 # the bad state changed nothing
    e.friction = True                                                 # another observer: a restart
    assert e.update(q, qd, tau, 2 * MS).restarted == 'friction changed'
