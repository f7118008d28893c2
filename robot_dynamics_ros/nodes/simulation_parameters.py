"""simulator_node's parameters of the simulation (the model's: model_source; the hardware's:
hardware_parameters; engine 'mujoco''s: mujoco_wiring): declared, checked before a set, and read as the
Simulation's settings (``logic/simulation.DEFAULT_SETTINGS``) and initial state. simulator_node's
docstring says what each one does.
"""

import math

import numpy as np

from robot_dynamics_ros.dynamics.limits import clip_positions
from robot_dynamics_ros.logic.input_guard import MAX_ABS_POSITION
from robot_dynamics_ros.logic.simulation import DEFAULT_SETTINGS
from robot_dynamics_ros.nodes.common import describe, float_array

__all__ = ['declare_simulation_parameters', 'check_simulation_parameters', 'simulation_settings',
           'initial_state']

_FINITE = ('publish_rate', 'real_time_factor', 'command_timeout', 'external_wrench_timeout',
           'lockstep_timeout')


def declare_simulation_parameters(node, integrators):
    """Declare on ``node`` the parameters of the Simulation (``integrators``: the engine's names), ``dt``,
    ``publish_clock`` and ``initial_positions``."""
    node.declare_parameter('integrator', 'rk4', describe(
        'Integration method of the forward dynamics.',
        additional_constraints=f'one of {sorted(integrators)}'))
    node.declare_parameter('dt', 0.001, describe(
        'Integration step, s of simulated time.', read_only=True, min_value=1e-6,
        max_value=0.1))
    node.declare_parameter('friction', True, describe(
        'Apply the URDF joint damping (viscous) and friction (Coulomb).'))
    node.declare_parameter('publish_rate', 100.0, describe(
        'joint_states rate, Hz of simulated time.', min_value=0.1, max_value=10000.0))
    node.declare_parameter('publish_clock', False, describe(
        'Publish the simulated time on /clock and stamp messages with it.', read_only=True))
    node.declare_parameter('real_time_factor', 1.0, describe(
        'Simulated seconds per wall-clock second; 0 = as fast as possible.', min_value=0.0,
        max_value=1000.0))
    node.declare_parameter('initial_positions', [], describe(
        'Initial joint positions in joint order (start-up and ~/reset); [] = zeros clipped '
        'into the position limits.', dynamic_typing=True,
        additional_constraints='[] or n finite numbers'))
    node.declare_parameter('command_timeout', 0.5, describe(
        "Simulated seconds without a command after which the hardware reacts as its profile says "
        "(the profile's own timeout when shorter): 'ros2_control' applies zero effort.",
        min_value=1e-6))
    node.declare_parameter('external_wrench_timeout', 0.0, describe(
        'Simulated seconds an external wrench is applied after its message (0 = until the '
        'next message).', min_value=0.0))
    node.declare_parameter('wait_for_command', True, describe(
        'Do not integrate after start-up or ~/reset until the first effort command arrives '
        '(the state is published meanwhile); false = the arm moves under gravity at once.'))
    node.declare_parameter('lockstep_timeout', 0.05, describe(
        'Wall-clock seconds the simulation waits at most for the command answering a joint '
        'state (lock-step with the controller); 0 = never wait.', min_value=0.0,
        max_value=60.0))


def check_simulation_parameters(params, integrators, model):
    """ValueError when a parameter of ``params`` (a set) does not fit: an integrator not in
    ``integrators``, ``initial_positions`` of another size than ``model``'s (None: any) or too large, a
    non-finite rate or timeout (the ranges of the descriptors check the rest)."""
    for p in params:
        if p.name == 'integrator' and p.value not in integrators:
            raise ValueError(f'integrator must be one of {sorted(integrators)}, got {p.value!r}')
        if p.name == 'initial_positions':
            values = float_array('initial_positions', p.value)
            if np.any(np.abs(values) >= MAX_ABS_POSITION):
                raise ValueError(f'initial_positions must be below {MAX_ABS_POSITION:g} in magnitude')
            if model is not None and values.size not in (0, model.nq):
                raise ValueError(f'initial_positions must have 0 or {model.nq} entries, got {values.size}')
        if p.name in _FINITE and not math.isfinite(p.value):
            raise ValueError(f'{p.name} must be finite')


def simulation_settings(node):
    """The Simulation's settings from ``node``'s parameters of the same names."""
    return {name: node.get_parameter(name).value for name in DEFAULT_SETTINGS}


def initial_state(node, model, to_model, to_order):
    """(q0, qd0) in model order from ``node``'s ``initial_positions`` (joint order; ``to_model``,
    ``to_order``: the index maps between it and model order), clipped into the limits; zeros (logged)
    when they do not fit the model."""
    n = model.nq
    values = float_array('initial_positions', node.get_parameter('initial_positions').value)
    if values.size == 0:
        q0 = np.zeros(n)
    elif values.size == n and np.all(np.abs(values) < MAX_ABS_POSITION):
        q0 = values[to_model]
    else:
        node.get_logger().error(f'initial_positions has {values.size} entries for {n} joints '
                                f'(or one beyond {MAX_ABS_POSITION:g}): using zeros')
        q0 = np.zeros(n)
    clipped = clip_positions(model, q0)
    if values.size and not np.array_equal(clipped, q0):
        node.get_logger().warning('initial_positions outside the position limits: clipped to '
                                  f'{clipped[to_order].tolist()}')
    return clipped, np.zeros(n)
