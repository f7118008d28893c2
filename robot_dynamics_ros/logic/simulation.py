"""The simulator's stepping, pacing and lock-step logic, ROS-free (``simulator_node`` is its wiring).

Every step (``dt`` of simulated time) an engine integrates the equation of motion

    M(q) q̈ + c(q, q̇) + g(q) + friction(q̇) + Jᵀ(q) F_tip = τ

(Modern Robotics eq. 9.81 in the numbering of the draft the core follows; F_tip is the wrench the
robot exerts on the environment at the tip frame): the package's own forward dynamics
(``logic/rigid_body_engine.py``, the default, which also documents the engine protocol) or MuJoCo's,
with contacts (``logic/mujoco_engine.py``; ``engine_type``). Simulated time = steps × dt. All vectors
are in model joint order (``model.joint_names``); mapping to a message's joint order is the node's
business.

Pacing (``logic/pacing.py``, ``pacing``): ``tick()`` is called periodically (period ``tick_period()``); in
real time (real_time_factor > 0) it steps the simulated time the wall clock owes, returning right after a
state publication (so a controller answers each state before the simulation runs on); at
real_time_factor 0 for at most ``FAST_BUDGET`` s of wall time. After a publication it may wait for the
command answering it (lock-step, at most ``lockstep_timeout`` s of wall time). Wall time is read from
``clock`` (default ``time.monotonic``; tests pass a fake clock), never a ROS clock.

Nothing moves that nobody commanded:

- ``wait_for_command`` (default true): after start-up (``set_model``), ``reset()`` and a
  divergence, the simulation is *still*: it does not integrate, it publishes its state (the
  initial one, zero velocity, the effort g(q) that holds it there, as brakes would) at
  ``publish_rate`` per wall second so a controller can start, and the first effort command
  (``command()``) sets it going. Without it the arm would fall under gravity before a controller
  answers, and a controller would then hold wherever it ended
  up. A reset in lock-step, while the answer to the last state is still awaited, skips that
  answer when it comes: it was computed before the reset (for the state before it), and applied
  to the reset state it would give the arm a kick; the command after it, answering the reset
  state, sets the simulation going. With false, it integrates from the start (zero effort until a
  command comes).
- paused (``set_paused``): no step, no publication (simulated time stands still, and so does a
  /clock made from it); resumed, it goes on from the same state.

What the engine steps under: ``logic/applied_forces.py`` (``AppliedForces``, ``forces``): the
torque the arm's drives apply for the commands, τ_applied = sat(τ_command + τ_firmware(q, q̇)) by the
emulated hardware's firmware (``hardware``), its reaction to a command timeout ('brake': the engine
steps on the brakes, ``hold()``), and the external wrench at the tip.

Example (wall time is a number the caller moves on; a 1-joint arm):
    >>> import numpy as np
    >>> from robot_dynamics_ros import dynamics as rd
    >>> model = rd.from_modern_robotics(
    ...     [np.eye(4), np.eye(4)], [np.diag([0.1, 0.1, 0.1, 1.0, 1.0, 1.0])],
    ...     np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]).T)
    >>> wall, published = [0.0], []
    >>> sim = Simulation(0.001, clock=lambda: wall[0], publish_rate=100.0,
    ...                  publish=lambda state: published.append(state.steps))
    >>> sim.set_model(model)
    >>> sim.tick(), sim.steps, published    # still (wait_for_command): the initial state only
    (False, 0, [0])
    >>> sim.command(np.zeros(1))            # the first command sets it going
    >>> wall[0] = 0.005         # 5 ms of wall time at real_time_factor 1: 5 steps owed
    >>> sim.tick(), sim.steps   # the first state is due at once: the tick returns after it
    (True, 1)
    >>> sim.tick(), sim.steps   # the 4 steps still owed; the next state is due at step 10
    (True, 5)
    >>> published
    [0, 1]
"""

import dataclasses
import logging
import math
import time

import numpy as np

from robot_dynamics_ros.dynamics.limits import clip_positions
from robot_dynamics_ros.logic.applied_forces import AppliedForces
from robot_dynamics_ros.logic.pacing import FAST_BUDGET, LOCKSTEP_STREAK, Pacing
from robot_dynamics_ros.logic.rigid_body_engine import RigidBodyEngine

__all__ = ['Simulation', 'SimulatedState', 'Report', 'ENGINES', 'DEFAULT_SETTINGS', 'FAST_BUDGET',
           'LOCKSTEP_STREAK', 'mimic_joint_states']

ENGINES = ('rigid_body', 'mujoco')   # simulator_node's engines: logic/rigid_body_engine.py, mujoco_engine.py
DEFAULT_SETTINGS = {
    'integrator': 'rk4',              # one of the engine's integrators
    'friction': True,                 # URDF joint damping and Coulomb friction
    'publish_rate': 100.0,            # states per simulated second
    'real_time_factor': 1.0,          # simulated s per wall s; 0 = as fast as possible
    'command_timeout': 0.5,           # simulated s without a command: the hardware's reaction
    'external_wrench_timeout': 0.0,   # simulated s a wrench is applied; 0 = until the next one
    'lockstep_timeout': 0.05,         # wall s waited for the command answering a state; 0 = never
    'wait_for_command': True,         # still after start-up and reset until the first command
}


@dataclasses.dataclass(frozen=True)
class SimulatedState:
    """A state the Simulation publishes: after ``steps`` steps (``sim_time`` = steps × dt, s), the joint
    positions ``q``, velocities ``qd`` and the torque applied ``tau`` (while still or braked: the torque
    that holds the arm), model order; ``wrench`` (6,), the external wrench (m, f) in force ON the robot at the
    tip, in the tip frame (zeros: none), acting since simulated time ``wrench_since`` (s)."""

    steps: int
    sim_time: float
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    wrench: np.ndarray
    wrench_since: float


def mimic_joint_states(model, q, qd):
    """``(names, positions, velocities)`` of the model's mimicking joints (body order) at the state
    (q, q̇) of its coordinates: q_i = m_i q[c_i] + o_i, q̇_i = m_i q̇[c_i] (``Model.body_positions``).
    What a simulator publishes for them beside the coordinates; empty without mimic joints.

    >>> from robot_dynamics_ros import dynamics as rd
    >>> link = ('<link name="{}"><inertial><mass value="0.1"/><inertia ixx="1e-4" ixy="0" ixz="0" '
    ...         'iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>')
    >>> finger = ('<joint name="{}" type="prismatic"><parent link="hand"/><child link="{}"/>'
    ...           '<axis xyz="0 1 0"/>{}</joint>')
    >>> model = rd.load_urdf('<robot name="gripper"><link name="hand"/>' + link.format('left')
    ...                      + link.format('right') + finger.format('left_finger', 'left', '')
    ...                      + finger.format('right_finger', 'right', '<mimic joint="left_finger" '
    ...                                      'multiplier="-1" offset="0.5"/>') + '</robot>')
    >>> model.joint_names, model.body_joint_names
    (('left_finger',), ('left_finger', 'right_finger'))
    >>> mimic_joint_states(model, np.array([0.25]), np.array([0.125]))
    (('right_finger',), array([0.25]), array([-0.125]))
    """
    if not model.mimic:
        return (), np.zeros(0), np.zeros(0)
    rows = [i for i, name in enumerate(model.body_joint_names) if name in model.mimic]
    names = tuple(model.body_joint_names[i] for i in rows)
    return names, model.body_positions(q)[rows], model.body_velocities(qd)[rows]


class Report:
    """Where a Simulation reports problems; this default logs through ``logging``.

    ``warn(key, message)`` is a recurring problem (the node throttles it per key);
    ``warning(message)`` and ``error(message)`` are single events.
    """

    def __init__(self, logger=None):
        self._logger = logger or logging.getLogger(__name__)

    def warn(self, key, message):
        self._logger.warning(message)

    def warning(self, message):
        self._logger.warning(message)

    def error(self, message):
        self._logger.error(message)


class Simulation:
    """Forward-dynamics simulation with real-time pacing and lock-step (see module docstring).

    Args:
        dt: integration step, s of simulated time (> 0).
        publish: ``publish(state)`` is called with the ``SimulatedState`` whenever a state is due, and
            at ``publish_rate`` (wall time) while still.
        report: a ``Report`` (default: ``logging``).
        initial_state: ``initial_state()`` -> (q0, q̇0) in model order, read at every reset
            (default: zeros clipped into the position limits, zero velocity).
        command_source: ``command_source()`` -> True when some node publishes commands (used at
            real_time_factor 0 to decide whether to wait for them; default: never).
        clock: wall-clock seconds (default ``time.monotonic``).
        hardware: the Conventions of the emulated hardware (default: 'ros2_control').
        engine_type: what makes the engine (the protocol of ``logic/rigid_body_engine.py``): its
            ``integrators``, ``engine_type(model, dt, integrator)`` -> the engine that simulates ``model``,
            ``engine_type.warm_up_calls(model, dt, integrator, friction)``; default ``RigidBodyEngine``.
        **settings: the keys of ``DEFAULT_SETTINGS`` (see ``configure``).
    """

    def __init__(self, dt, *, publish=None, report=None, initial_state=None, command_source=None,
                 clock=time.monotonic, hardware=None, engine_type=RigidBodyEngine, **settings):
        dt = float(dt)
        if not (math.isfinite(dt) and dt > 0.0):
            raise ValueError(f'dt must be finite and > 0, got {dt}')
        self.dt = dt
        self._publish = publish or (lambda state: None)
        self.report = report or Report()
        self._initial_state = initial_state or self._default_initial_state
        self.clock = clock
        self.pacing = Pacing(clock, self.report, command_source or (lambda: False))
        self.settings = dict(DEFAULT_SETTINGS)
        self._engine_type = engine_type
        self.integrators = tuple(engine_type.integrators)
        self.engine = None                      # the engine simulating the model (set_model)
        self.steps = 0                          # simulated time = steps * dt
        self._next_publish_steps = 0.0
        self._last_publish_steps = None         # step count of the last publication
        self.configure(**settings)

        self.model = None
        self.forces = AppliedForces(dt, self.report, hardware)     # the command and the wrench in force
        self.q = self.qd = self.tau = None      # model order; tau: the torque applied
        self.paused = False
        self.still = False                      # waits for a command before integrating
        self._published = False                 # the last step published a state
        self._skip_commands = 0                 # still: commands computed before the reset
        self._last_still_publish = -math.inf

    hardware = property(lambda self: self.forces.hardware, doc='The Conventions of the emulated hardware.')
    firmware_model = property(lambda self: self.forces.firmware_model,
                              doc='The arm as its firmware knows it (no payload).')
    braked = property(lambda self: self.forces.braked,
                      doc="On the brakes ('brake' after a command timeout), until a command.")
    dropped = property(lambda self: self.pacing.dropped, doc='Simulated seconds dropped (CPU too slow).')
    waiting = property(lambda self: self.pacing.waiting,
                       doc='True while the simulation waits for the command answering the last state.')

    # -- settings ---------------------------------------------------------------------------
    def configure(self, **settings):
        """Change settings (keys of ``DEFAULT_SETTINGS``); ValueError on a bad one (none applied).

        Changing ``real_time_factor`` or ``publish_rate`` changes ``tick_period()``: the caller
        re-creates its timer and calls ``resync()``. A new ``publish_rate`` takes effect at once:
        the next state is due one new period after the last one (at the next step if that is
        already past), not at the time the old rate had set.
        """
        unknown = set(settings) - set(DEFAULT_SETTINGS)
        if unknown:
            raise ValueError(f'unknown settings {sorted(unknown)}')
        new = {**self.settings, **settings}
        if new['integrator'] not in self.integrators:
            raise ValueError(f"integrator must be one of {sorted(self.integrators)}, "
                             f"got {new['integrator']!r}")
        for name in ('publish_rate', 'real_time_factor', 'command_timeout',
                     'external_wrench_timeout', 'lockstep_timeout'):
            value = float(new[name])
            if not math.isfinite(value) or value < 0.0:
                raise ValueError(f'{name} must be finite and >= 0, got {new[name]}')
            new[name] = value
        if new['publish_rate'] <= 0.0 or new['command_timeout'] <= 0.0:
            raise ValueError('publish_rate and command_timeout must be > 0')
        new['friction'] = bool(new['friction'])
        new['wait_for_command'] = bool(new['wait_for_command'])
        rate_changed = new['publish_rate'] != self.settings['publish_rate']
        self.settings = new
        if self.engine is not None:
            self.engine.set_integrator(new['integrator'])
        if not new['wait_for_command']:
            self.still = False
        if rate_changed and self._last_publish_steps is not None:
            self._next_publish_steps = max(self._last_publish_steps + self._publish_period_steps(),
                                           float(self.steps))

    def _publish_period_steps(self):
        return 1.0 / (self.settings['publish_rate'] * self.dt)

    def tick_period(self):
        """Period (wall s) at which to call ``tick()``: 0 (whenever idle) at real_time_factor 0."""
        if self.settings['real_time_factor'] > 0.0:
            return min(max(self.dt, 0.001), 1.0 / self.settings['publish_rate'])
        return 0.0

    def resync(self, clear_budget=True):
        """Measure wall time from now (a new timer, a model loaded); owe no simulated time."""
        self.pacing.resync(clear_budget)

    # -- model and state --------------------------------------------------------------------
    @property
    def sim_time(self):
        """Simulated time in seconds."""
        return self.steps * self.dt

    def state(self):
        """The current ``SimulatedState``."""
        return SimulatedState(self.steps, self.sim_time, self.q, self.qd, self.tau,
                              self.forces.wrench_on_robot, self.forces.wrench_since * self.dt)

    def set_model(self, model, firmware_model=None, hardware=None):
        """Simulate ``model`` from its initial state (None: no model, nothing is simulated);
        ``firmware_model``: the arm as its firmware knows it (default: ``model``); ``hardware``: the
        Conventions of the hardware emulated from now on (default: those in force). The engine is made
        by ``engine_type``: its ValueError (a world or mesh it cannot use) leaves no model."""
        self.model = self.engine = None
        self.forces.firmware_model = model if firmware_model is None else firmware_model
        if hardware is not None:
            self.forces.hardware = hardware
        if model is None:
            self.q = self.qd = self.tau = None
            return
        self.engine = self._engine_type(model, self.dt, self.settings['integrator'])
        self.model = model
        self._reset_state()

    def replace_model(self, model, firmware_model=None):
        """Simulate ``model``, the same robot (joints, limits) with other inertias (a payload
        attached or removed), from the current state on: nothing is reset. Still or braked, the efforts
        read are the torque that holds the arm as it is now."""
        self.model = model
        self.engine.set_model(model)
        if firmware_model is not None:
            self.forces.firmware_model = firmware_model
        if self.still or self.forces.braked:    # no step comes to recompute it
            self.tau = self.engine.holding_torques()

    def warm_up_calls(self, model=None):
        """The calls the engine makes at each step on ``model`` (default: its own), as ``f(q, qd)``
        (to compile them ahead of time; ``engine_type.warm_up_calls``)."""
        model = self.model if model is None else model
        return self._engine_type.warm_up_calls(model, self.dt, self.settings['integrator'],
                                               self.settings['friction'])

    def _default_initial_state(self):
        n = self.model.nq
        return clip_positions(self.model, np.zeros(n)), np.zeros(n)

    def _reset_state(self):
        # lock-step: the answer to the last state is on its way; it was not computed for this one
        self._skip_commands = int(self.pacing.answer_due() and self.settings['wait_for_command'])
        self.engine.reset(*self._initial_state())
        self.q, self.qd = self.engine.q, self.engine.qd
        # still, as on its brakes before a controller starts: the sensors read the torque that holds it
        self.tau = self.engine.holding_torques()
        self.forces.clear(self.steps)
        self.pacing.stop_waiting()
        self._next_publish_steps = float(self.steps)  # publish the new state at once
        self._last_publish_steps = None
        self.still = self.settings['wait_for_command']
        self._last_still_publish = -math.inf

    def reset(self):
        """Back to the initial state, zero velocity, no command or wrench; time runs on. With
        ``wait_for_command``, still until the next command.

        False (nothing done) without a model.
        """
        if self.model is None:
            return False
        self._reset_state()
        self.pacing.owe_nothing()
        return True

    def set_paused(self, paused):
        """Pause (the state is frozen, nothing is published) or resume from the same state."""
        self.paused = bool(paused)
        self.pacing.resync()
        self.pacing.stop_waiting()

    # -- inputs -----------------------------------------------------------------------------
    def command(self, tau):
        """A joint effort command (n,), model order, finite; applied (saturated at the effort
        limits) until the next one or for ``command_timeout`` s of simulated time. While still,
        the first command sets the simulation going, except the answer to the state before a
        reset that lock-step was awaiting: it is skipped."""
        if self.still and self._skip_commands:
            self._skip_commands -= 1
            return
        self.forces.command(tau, self.steps)
        self.pacing.command_arrived()
        if self.still:
            self.still = False
            self.pacing.owe_nothing()           # for the time spent still

    def apply_wrench(self, on_robot):
        """The wrench (m, f) the environment exerts ON the robot at the tip frame, in the tip
        frame, finite; all zero removes it. Applied until the next one or, if
        ``external_wrench_timeout`` > 0, for that many simulated seconds."""
        self.forces.apply_wrench(on_robot, self.steps)

    def command_timeout(self):
        """Simulated s without a command before the hardware reacts: ``command_timeout``, or the
        hardware's own when it is shorter."""
        return self.forces.command_timeout(self.settings['command_timeout'])

    # -- the loop ---------------------------------------------------------------------------
    def tick(self):
        """Advance the simulation as the pacing allows (see module docstring).

        Returns False when nothing was stepped because there is no model, the simulation is
        paused, still (``wait_for_command``) or waits for a command (lock-step); True otherwise.
        """
        now, elapsed = self.pacing.elapsed()
        if self.model is None or self.paused:
            return False
        if self.still:
            if now - self._last_still_publish >= 1.0 / self.settings['publish_rate']:
                self._last_still_publish = now
                self._publish(self.state())
            return False
        rtf, pacing = self.settings['real_time_factor'], self.pacing
        if rtf > 0.0:
            pacing.owe(elapsed * rtf, 2.0 * max(1.0 / self.settings['publish_rate'], self.dt), rtf)
        if pacing.waiting_for_command(now, self.settings['lockstep_timeout']):
            return False
        if rtf > 0.0:
            # Stop after publishing a state: the controller answers it before the simulation
            # runs on (the tick is due again at once if behind).
            while pacing.take_step(self.dt):
                if not self._step() or self._published:
                    break
        else:
            deadline = now + FAST_BUDGET
            while self.clock() < deadline and self._step():
                if pacing.waiting:
                    break
        return True

    def _step(self):
        """One engine step of dt from the state (q, q̇) under the forces applied; publish when due.
        False on failure."""
        settings, steps = self.settings, self.steps
        tau = self.forces.joint_torques(self.model, self.q, self.qd, steps, friction=settings['friction'],
                                        command_timeout=self.command_timeout())
        try:
            if self.forces.braked:  # held by the brakes: the sensors read the torque that holds the arm
                self.engine.hold()
                tau = self.engine.holding_torques()
            else:
                self.engine.step(tau, self.forces.f_tip(steps, settings['external_wrench_timeout']),
                                 settings['friction'])
            q, qd = self.engine.q, self.engine.qd
            if not (np.isfinite(q).all() and np.isfinite(qd).all()):
                raise FloatingPointError('non-finite state')
        except FloatingPointError as exc:   # diverged (the engines' protocol): start again, still
            self.report.error(f'the simulation diverged ({exc}): reset to the initial state; consider '
                              'a smaller dt or rk4')
            self._reset_state()
            return False
        except Exception as exc:  # a failing step must not end the simulation
            self.tau = tau
            self.paused = True
            self.report.error(f'integration step failed ({type(exc).__name__}: {exc}): '
                              'simulation paused (~/reset, then ~/pause false, to continue)')
            return False
        self.q, self.qd, self.tau = q, qd, tau
        return self._advance()

    def _advance(self):
        """Count the step taken; publish when due. True."""
        self.steps += 1
        self._published = self.steps >= self._next_publish_steps
        if self._published:
            self._publish(self.state())
            self.pacing.after_publication(self.settings['real_time_factor'] > 0.0,
                                          self.settings['lockstep_timeout'])
            self._last_publish_steps = self.steps
            self._next_publish_steps = max(self._next_publish_steps + self._publish_period_steps(),
                                           self.steps + 0.5)
        return True
