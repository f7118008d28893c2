"""What a controller node says about itself on /diagnostics (ROS-free): its mode in a few words and the
start-up effort-convention check's part (nodes/controller.py is the wiring)."""
from __future__ import annotations

from robot_dynamics_ros.logic.diagnostics import ERROR

__all__ = ['controller_mode', 'convention_check']


def controller_mode(verdict, enabled, stale, tracking):
    """The mode: 'checking the effort convention' (no ``verdict`` of the start-up check yet: nothing
    commanded); 'refused: ...' (the check failed); 'disabled'; 'stale-hold' (``stale`` joint states: the
    gravity-only holding torque); else, as ``tracking()`` says, 'tracking' (a reference moves the arm),
    'holding' (it holds still) or 'enabled' (None: not known)."""
    if verdict is None:
        return 'checking the effort convention'
    if not verdict.allows_commands:
        return 'refused: the efforts contradict the hardware profile'
    if not enabled:
        return 'disabled'
    if stale:
        return 'stale-hold'
    moving = tracking()
    if moving is None:
        return 'enabled'
    return 'tracking' if moving else 'holding'


def convention_check(verdict, check):
    """``(text, problems)`` of the start-up check: what it waits for (``check``, the
    logic.hardware.EffortConventionCheck under way, None before a joint state) or its ``verdict``;
    an ERROR when the verdict forbids commands."""
    if verdict is None:
        return (check.waiting if check is not None else 'waiting for a joint state'), []
    problems = [] if verdict.allows_commands else [(ERROR, f'commands nothing: {verdict.message}')]
    return f'{verdict.status}: {verdict.message}', problems
