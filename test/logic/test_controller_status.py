"""logic.controller_status without ROS: a controller's mode on /diagnostics and the start-up check's
part of its status."""
from types import SimpleNamespace

from robot_dynamics_ros.logic.controller_status import controller_mode, convention_check
from robot_dynamics_ros.logic.diagnostics import ERROR

ALLOWED = SimpleNamespace(allows_commands=True, status='consistent', message='fits')
REFUSED = SimpleNamespace(allows_commands=False, status='contradiction', message='they contradict')


def test_the_mode_in_order_of_precedence():
    assert controller_mode(None, True, True, lambda: True) == 'checking the effort convention'
    assert controller_mode(REFUSED, True, False, lambda: True).startswith('refused')
    assert controller_mode(ALLOWED, False, True, lambda: True) == 'disabled'
    assert controller_mode(ALLOWED, True, True, lambda: True) == 'stale-hold'
    assert controller_mode(ALLOWED, True, False, lambda: True) == 'tracking'
    assert controller_mode(ALLOWED, True, False, lambda: False) == 'holding'
    assert controller_mode(ALLOWED, True, False, lambda: None) == 'enabled'


def test_the_convention_check():
    assert convention_check(None, None) == ('waiting for a joint state', [])
    assert convention_check(None, SimpleNamespace(waiting='3 of 10 states')) == ('3 of 10 states', [])
    assert convention_check(ALLOWED, None) == ('consistent: fits', [])
    text, problems = convention_check(REFUSED, None)
    assert text == 'contradiction: they contradict'
    assert problems == [(ERROR, 'commands nothing: they contradict')]
