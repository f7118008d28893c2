"""The simulator's rigid-body engine, ROS-free: the package's own forward dynamics of the model.

Every ``step`` (``dt`` of simulated time) integrates the equation of motion

    M(q) q̈ + c(q, q̇) + g(q) + friction(q̇) + Jᵀ(q) F_tip = τ

(Modern Robotics eq. 9.81 in the numbering of the draft the core follows; F_tip is the wrench the
robot exerts on the environment at the tip frame) with the core's ``rk4_step`` /
``semi_implicit_euler_step`` / ``euler_step``, then enforces the joint position limits (hard stops:
``limits.enforce_position_limits``). It is the default engine and the fast path; ``logic/
mujoco_engine.py`` is the other one.

The engine protocol (what ``logic/simulation.Simulation`` calls; joint vectors in model order). The
engine's type (its class, or a factory with the same three members: ``nodes/mujoco_wiring.py``):

- ``integrators``: the integrator names its engines take;
- ``Engine(model, dt, integrator)``: an engine simulating ``model`` in steps of ``dt`` s;
- ``Engine.warm_up_calls(model, dt, integrator, friction)``: the calls ``step`` makes on ``model``, as
  ``f(q, qd)``, to compile them ahead of time (before the model is simulated).

An engine:

- ``name``; ``set_integrator(name)`` (ValueError for one not in ``integrators``);
- ``q``, ``qd``: the arm's state; ``reset(q, qd)``;
- ``step(tau, f_tip=None, friction=False)``: one step of dt under the applied torque τ and the wrench
  F_tip (m, f) at the tip frame (None: none); friction: the model's joint damping and Coulomb friction.
  FloatingPointError (or a non-finite state) is a divergence (the Simulation starts again from the
  initial state, still); any other exception a failed step (the Simulation pauses);
- ``hold()``: one step on the brakes (the arm stays, at rest); ``holding_torques()``: the torque that
  holds it there, g(q);
- ``set_model(model)``: the same arm with other inertias (payload, armature), from the current state.

>>> import numpy as np
>>> from robot_dynamics_ros import dynamics as rd
>>> model = rd.from_modern_robotics(
...     [np.eye(4), np.eye(4)], [np.diag([0.1, 0.1, 0.1, 1.0, 1.0, 1.0])],
...     np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]).T)
>>> engine = RigidBodyEngine(model, 0.001)
>>> engine.reset(np.zeros(1), np.zeros(1))
>>> engine.step(np.array([0.1]))          # q̈ = τ / I_zz = 1 rad/s² for 1 ms
>>> engine.qd.round(6).tolist()
[0.001]
"""

import numpy as np

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.limits import enforce_position_limits

__all__ = ['INTEGRATORS', 'RigidBodyEngine']

INTEGRATORS = {
    'rk4': 'rk4_step',
    'semi_implicit_euler': 'semi_implicit_euler_step',
    'euler': 'euler_step',
}


class RigidBodyEngine:
    """The package's forward dynamics of ``model`` (module docstring), steps of ``dt`` s."""

    name = 'rigid_body'
    integrators = tuple(INTEGRATORS)

    def __init__(self, model, dt, integrator='rk4'):
        self.model, self.dt = model, float(dt)
        self.set_integrator(integrator)
        self.q = self.qd = np.zeros(model.nq)

    def set_integrator(self, name):
        if name not in INTEGRATORS:
            raise ValueError(f'integrator must be one of {sorted(INTEGRATORS)}, got {name!r}')
        self._step = getattr(rd, INTEGRATORS[name])

    def set_model(self, model):
        self.model = model

    def reset(self, q, qd):
        self.q, self.qd = np.array(q, dtype=np.float64), np.array(qd, dtype=np.float64)

    def step(self, tau, f_tip=None, friction=False):
        q, qd = self._step(self.model, self.q, self.qd, tau, self.dt, f_tip=f_tip,
                           frame=None if f_tip is None else self.model.tip_frame,
                           friction=True if friction else None)
        self.q, self.qd = enforce_position_limits(self.model, q, qd)

    def hold(self):
        self.qd = np.zeros(self.model.nq)

    def holding_torques(self):
        return rd.gravity_torques(self.model, self.q)

    @staticmethod
    def warm_up_calls(model, dt, integrator='rk4', friction=True):
        """The calls ``step`` makes on ``model`` (with and without a wrench at the tip), as ``f(q, qd)``."""
        step, f_tip = getattr(rd, INTEGRATORS[integrator]), np.zeros(6)
        friction = True if friction else None
        return (lambda q, qd: step(model, q, qd, qd, dt, friction=friction),
                lambda q, qd: step(model, q, qd, qd, dt, f_tip=f_tip, frame=model.tip_frame,
                                   friction=friction))
