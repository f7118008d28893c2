"""The simulator's stepping, pacing and lock-step logic, ROS-free (``simulator_node`` is its wiring).

Every step (``dt`` of simulated time) an engine integrates the equation of motion

    M(q) q̈ + c(q, q̇) + g(q) + friction(q̇) + Jᵀ(q) F_tip = τ

(Modern Robotics eq. 9.81 in the numbering of the draft the core follows; F_tip is the wrench the
robot exerts on the environment at the tip frame): the package's own forward dynamics
(``logic/rigid_body_engine.py``, the default, which also documents the engine protocol) or MuJoCo's,
with contacts (``logic/mujoco_engine.py``; ``engine_factory``). Simulated time = steps × dt. All vectors
are in model joint order (``model.joint_names``); mapping to a message's joint order is the node's
business.

Wall time (seconds, any origin) is read from ``clock`` (default ``time.monotonic``; tests pass a
fake clock), never a ROS clock. ``tick()`` is called periodically (period ``tick_period()``):

- real_time_factor > 0: each tick adds the wall time elapsed since the last tick × the factor to
  the simulated time owed, and steps while a step is owed, returning right after a state
  publication (so a controller answers each state before the simulation runs on). Owing more
  than two publication periods, the excess is dropped with a warning (the simulation then runs
  slower than real time, as Gazebo does, rather than open loop in one burst).
- real_time_factor 0: each tick steps for at most ``FAST_BUDGET`` s of wall time.

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

The hardware's firmware (``hardware``: ``robot_dynamics_ros.logic.hardware.Conventions``; default the
'ros2_control' profile, a command applied as it is): the torque applied is the command plus what
that firmware adds, by the simulated arm's model without its payload (``firmware_model``: the firmware
knows the arm, not what it carries),

    τ_applied = sat(τ_command + τ_firmware(q, q̇))                     (logic/hardware.py, eq. 1)

so a simulated Franka or Kinova holds still under a zero command. The firmware's friction
compensation applies only with ``friction`` (an arm without friction has none to compensate).
No command for ``command_timeout`` s (or the hardware's own, when shorter): the hardware's
``on_command_timeout``, 'zero_command' (the firmware's terms only: an arm that compensates gravity
floats, any other falls) or 'brake' (the arm stops where it is and holds, as a reflex or protective
stop does, until the next command).

Lock-step: after a publication the simulation may wait (at most ``lockstep_timeout`` s of wall
time, without stepping) for the next command. In real time it does so once commands have answered
``LOCKSTEP_STREAK`` states in a row; at real_time_factor 0 whenever ``command_source()`` says some
node publishes commands. A wait that times out ends lock-step until the next command arrives.

Example (wall time is a number the caller moves on; a 1-joint arm):
    >>> import numpy as np
    >>> from robot_dynamics_ros import dynamics as rd
    >>> model = rd.from_modern_robotics(
    ...     [np.eye(4), np.eye(4)], [np.diag([0.1, 0.1, 0.1, 1.0, 1.0, 1.0])],
    ...     np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]).T)
    >>> wall, published = [0.0], []
    >>> sim = Simulation(0.001, clock=lambda: wall[0], publish_rate=100.0,
    ...                  publish=lambda: published.append(sim.steps))
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

import logging
import math
import time

import numpy as np

from robot_dynamics_ros.dynamics.limits import clip_positions, saturate_effort
from robot_dynamics_ros.logic.hardware import resolve
from robot_dynamics_ros.logic.rigid_body_engine import INTEGRATORS, RigidBodyEngine

__all__ = ['Simulation', 'Report', 'INTEGRATORS', 'ENGINES', 'DEFAULT_SETTINGS', 'FAST_BUDGET',
           'LOCKSTEP_STREAK', 'mimic_joint_states']

ENGINES = ('rigid_body', 'mujoco')   # simulator_node's engines: logic/rigid_body_engine.py, mujoco_engine.py
FAST_BUDGET = 0.01      # s of wall time spent stepping per tick at real_time_factor 0
LOCKSTEP_STREAK = 3     # real time: states answered in a row before the simulation waits
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
        publish: ``publish()`` is called whenever a state is due (read ``q``, ``qd``, ``tau``,
            ``sim_time``), and at ``publish_rate`` (wall time) while still.
        report: a ``Report`` (default: ``logging``).
        initial_state: ``initial_state()`` -> (q0, q̇0) in model order, read at every reset
            (default: zeros clipped into the position limits, zero velocity).
        command_source: ``command_source()`` -> True when some node publishes commands (used at
            real_time_factor 0 to decide whether to wait for them; default: never).
        clock: wall-clock seconds (default ``time.monotonic``).
        hardware: the Conventions of the emulated hardware (default: 'ros2_control').
        engine_factory: ``engine_factory(model, dt, integrator)`` -> the engine that simulates
            ``model`` (the protocol of ``logic/rigid_body_engine.py``); default ``RigidBodyEngine``.
        integrators: the integrator names the engines take (default: the rigid-body engine's).
        **settings: the keys of ``DEFAULT_SETTINGS`` (see ``configure``).
    """

    def __init__(self, dt, *, publish=None, report=None, initial_state=None, command_source=None,
                 clock=time.monotonic, hardware=None, engine_factory=None, integrators=None,
                 **settings):
        dt = float(dt)
        if not (math.isfinite(dt) and dt > 0.0):
            raise ValueError(f'dt must be finite and > 0, got {dt}')
        self.dt = dt
        self._publish = publish or (lambda: None)
        self.report = report or Report()
        self._initial_state = initial_state or self._default_initial_state
        self._command_source = command_source or (lambda: False)
        self.clock = clock
        self.settings = dict(DEFAULT_SETTINGS)
        self._engine_factory = engine_factory
        self.integrators = tuple(INTEGRATORS) if integrators is None else tuple(integrators)
        self.engine = None                      # the engine simulating the model (set_model)
        self.steps = 0                          # simulated time = steps * dt
        self._next_publish_steps = 0.0
        self._last_publish_steps = None         # step count of the last publication
        self.configure(**settings)

        self.model = None
        self.hardware = resolve() if hardware is None else hardware
        self.firmware_model = None              # the arm as its firmware knows it (no payload)
        self.braked = False                     # 'brake' after a command timeout, until a command
        self.q = self.qd = self.tau = None      # model order; tau: the torque applied
        self.paused = False
        self.still = False                      # waits for a command before integrating
        self.dropped = 0.0                      # simulated seconds dropped (CPU too slow)
        self._command = None                    # (n,) model order
        self._command_steps = 0                 # step count when the command arrived
        self._command_timed_out = True
        self._command_seq = 0                   # valid commands received
        self._f_tip = None                      # wrench the robot exerts on the environment
        self._wrench_steps = 0
        self._sim_budget = 0.0                  # simulated seconds owed to real time
        self._published = False                 # the last step published a state
        self._lockstep = True                   # rtf 0: wait for commands (until a timeout)
        self._awaiting = None                   # (command_seq, since) while waiting
        self._skip_commands = 0                 # still: commands computed before the reset
        self._answered = 0                      # consecutive states answered by a command
        self._seq_at_publication = 0            # command_seq when the last state was published
        self._last_wall = self.clock()
        self._last_still_publish = -math.inf

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
        self._last_wall = self.clock()
        if clear_budget:
            self._sim_budget = 0.0

    # -- model and state --------------------------------------------------------------------
    @property
    def sim_time(self):
        """Simulated time in seconds."""
        return self.steps * self.dt

    def set_model(self, model, firmware_model=None):
        """Simulate ``model`` from its initial state (None: no model, nothing is simulated);
        ``firmware_model``: the arm as its firmware knows it (default: ``model``). The engine is made
        by ``engine_factory``: its ValueError (a world or mesh it cannot use) leaves no model."""
        self.model = self.engine = None
        self.firmware_model = model if firmware_model is None else firmware_model
        if model is None:
            self.q = self.qd = self.tau = None
            return
        factory = self._engine_factory or RigidBodyEngine
        self.engine = factory(model, self.dt, self.settings['integrator'])
        self.model = model
        self._reset_state()

    def replace_model(self, model, firmware_model=None):
        """Simulate ``model``, the same robot (joints, limits) with other inertias (a payload
        attached or removed), from the current state on: nothing is reset."""
        self.model = model
        self.engine.set_model(model)
        if firmware_model is not None:
            self.firmware_model = firmware_model

    def warm_up_calls(self, model=None):
        """The step calls the rigid-body engine makes on ``model`` (default: its own), as ``f(q, qd)``
        (to compile them ahead of time); none with another engine."""
        if self._engine_factory is not None:
            return ()
        model = self.model if model is None else model
        return RigidBodyEngine(model, self.dt, self.settings['integrator']).warm_up_calls(
            self.settings['friction'])

    def _default_initial_state(self):
        n = self.model.nq
        return clip_positions(self.model, np.zeros(n)), np.zeros(n)

    def _reset_state(self):
        # lock-step: the answer to the last state is on its way; it was not computed for this one
        answer_due = self._awaiting is not None and self._awaiting[0] == self._command_seq
        self._skip_commands = int(answer_due and self.settings['wait_for_command'])
        self.engine.reset(*self._initial_state())
        self.q, self.qd = self.engine.q, self.engine.qd
        # still, as on its brakes before a controller starts: the sensors read the torque that holds it
        self.tau = self.engine.holding_torques()
        self.braked = False
        self._command = None
        self._command_timed_out = True
        self._f_tip = None
        self._awaiting = None
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
        self._sim_budget = 0.0
        return True

    def set_paused(self, paused):
        """Pause (the state is frozen, nothing is published) or resume from the same state."""
        self.paused = bool(paused)
        self._last_wall = self.clock()
        self._sim_budget = 0.0
        self._awaiting = None

    # -- inputs -----------------------------------------------------------------------------
    def command(self, tau):
        """A joint effort command (n,), model order, finite; applied (saturated at the effort
        limits) until the next one or for ``command_timeout`` s of simulated time. While still,
        the first command sets the simulation going, except the answer to the state before a
        reset that lock-step was awaiting: it is skipped."""
        if self.still and self._skip_commands:
            self._skip_commands -= 1
            return
        self._command = np.asarray(tau, dtype=np.float64)
        self._command_steps = self.steps
        self._command_timed_out = False
        self.braked = False
        self._command_seq += 1
        self._lockstep = True
        if self.still:
            self.still = False
            self._sim_budget = 0.0              # owe nothing for the time spent still

    def apply_wrench(self, on_robot):
        """The wrench (m, f) the environment exerts ON the robot at the tip frame, in the tip
        frame, finite; all zero removes it. Applied until the next one or, if
        ``external_wrench_timeout`` > 0, for that many simulated seconds."""
        on_robot = np.asarray(on_robot, dtype=np.float64)
        # The core's f_tip is the wrench the robot exerts ON the environment (eq. 9.81): minus
        # the wrench the environment exerts on the robot, angular first.
        self._f_tip = None if not on_robot.any() else -on_robot
        self._wrench_steps = self.steps

    # -- the loop ---------------------------------------------------------------------------
    def tick(self):
        """Advance the simulation as the pacing allows (see module docstring).

        Returns False when nothing was stepped because there is no model, the simulation is
        paused, still (``wait_for_command``) or waits for a command (lock-step); True otherwise.
        """
        now = self.clock()
        elapsed, self._last_wall = now - self._last_wall, now
        if self.model is None or self.paused:
            return False
        if self.still:
            if now - self._last_still_publish >= 1.0 / self.settings['publish_rate']:
                self._last_still_publish = now
                self._publish()
            return False
        rtf = self.settings['real_time_factor']
        if rtf > 0.0:
            # Owe at most two publication periods: beyond that, simulated time is dropped (the
            # simulation runs slower than real time, as Gazebo does) rather than simulated in one
            # open-loop burst that a controller could not react to.
            publish_period = 1.0 / self.settings['publish_rate']
            limit = 2.0 * max(publish_period, self.dt)
            self._sim_budget += elapsed * rtf
            if self._sim_budget > limit:
                self.dropped += self._sim_budget - limit
                self._sim_budget = limit
                if self.dropped > 0.05:
                    self.report.warn('lag', f'simulation slower than real_time_factor {rtf:g}: '
                                            f'{self.dropped:.3f} s of simulated time dropped so '
                                            'far (CPU overloaded, or waiting for a controller)')
        if self._waiting_for_command(now):
            return False
        if rtf > 0.0:
            # Stop after publishing a state: the controller answers it before the simulation
            # runs on (the tick is due again at once if behind).
            while self._sim_budget >= self.dt * (1 - 1e-9):
                self._sim_budget -= self.dt
                if not self._step() or self._published:
                    break
        else:
            deadline = now + FAST_BUDGET
            while self.clock() < deadline and self._step():
                if self._awaiting is not None:
                    break
        return True

    @property
    def waiting(self):
        """True while the simulation waits for the command answering the last state."""
        return self._awaiting is not None

    def _waiting_for_command(self, now):
        """Lock-step: True while the simulation waits for the answer to the last state."""
        if self._awaiting is None:
            return False
        seq, since = self._awaiting
        if self._command_seq != seq:
            self._awaiting = None
            return False
        timeout = self.settings['lockstep_timeout']
        if now - since < timeout:
            return True
        self._awaiting = None
        self._answered = 0
        self._lockstep = False
        self.report.warn('lockstep', f'no command within {timeout:g} s of a joint state '
                                     '(lockstep_timeout): running on without waiting for '
                                     'commands')
        return False

    def _after_publication(self):
        """Decide whether to wait for the command answering the state just published.

        Real time (real_time_factor > 0): once a controller has answered LOCKSTEP_STREAK
        consecutive states each before the next one (a controller on every joint state), wait
        for its answer, so a controller descheduled by a busy CPU cannot leave the simulation
        running open loop. A slower (timer-driven) controller never builds the streak and is not
        waited for. As fast as possible (0): wait whenever some node publishes commands, until a
        wait times out (then again after the next command).
        """
        answered = self._command_seq != self._seq_at_publication
        self._answered = self._answered + 1 if answered else 0
        self._seq_at_publication = self._command_seq
        if self.settings['real_time_factor'] > 0.0:
            wait = self._answered >= LOCKSTEP_STREAK
        else:
            wait = self._lockstep and self._command_source()
        if wait and self.settings['lockstep_timeout'] > 0.0:
            self._awaiting = (self._command_seq, self.clock())

    def command_timeout(self):
        """Simulated s without a command before the hardware reacts: ``command_timeout``, or the
        hardware's own when it is shorter."""
        own = self.hardware.command_timeout
        return min(self.settings['command_timeout'], own) if own > 0.0 else self.settings['command_timeout']


    def _applied_effort(self):
        """τ_applied = sat(τ_command + τ_firmware) (module docstring); after a command timeout the
        hardware's reaction (a 'brake' is applied by ``_step``)."""
        timeout = self.command_timeout()
        if self._command is not None and self.steps - self._command_steps > timeout / self.dt:
            self._command = None
            if not self._command_timed_out:
                self._command_timed_out = True
                # (a hardware that keeps the last command: zero, the simulator's own safety)
                self.braked = self.hardware.on_command_timeout == 'brake'
                self.report.warning(
                    f'no effort command for {timeout:g} s of simulated time: '
                    + ('the arm brakes and holds where it is (the hardware\'s reaction, '
                       f"hardware_profile '{self.hardware.profile}')" if self.braked else
                       'applying zero effort' + ('' if self.hardware.full_torque_commands else
                                                 " plus the firmware's compensation")))
        command = np.zeros(self.model.nq) if self._command is None else self._command
        if not self.hardware.full_torque_commands:      # τ_firmware(q, q̇) added (module docstring)
            command = command + self.hardware.firmware_torques(self.firmware_model, self.q, self.qd,
                                                               friction=self.settings['friction'])
        tau, saturated = saturate_effort(self.model, command)
        for i in np.flatnonzero(saturated):
            self.report.warn(f'saturated/{i}', f'effort of {self.model.joint_names[i]} '
                                               f'saturated at {abs(tau[i]):g}')
        return tau

    def _external_f_tip(self):
        timeout = self.settings['external_wrench_timeout']
        if (self._f_tip is not None and timeout > 0.0
                and (self.steps - self._wrench_steps) * self.dt > timeout):
            self._f_tip = None
        return self._f_tip

    def _step(self):
        """One engine step of dt; publish when due. False on failure."""
        self.tau = self._applied_effort()
        try:
            if self.braked:     # held by the brakes: the sensors read the torque that holds the arm
                self.engine.hold()
                self.tau = self.engine.holding_torques()
            else:
                self.engine.step(self.tau, self._external_f_tip(), self.settings['friction'])
            q, qd = self.engine.q, self.engine.qd
            if not (np.isfinite(q).all() and np.isfinite(qd).all()):
                raise FloatingPointError('non-finite state')
        except FloatingPointError as exc:   # diverged (the engines' protocol): start again, still
            self.report.error(f'the simulation diverged ({exc}): reset to the initial state; consider '
                              'a smaller dt or rk4')
            self._reset_state()
            return False
        except Exception as exc:  # a failing step must not end the simulation
            self.paused = True
            self.report.error(f'integration step failed ({type(exc).__name__}: {exc}): '
                              'simulation paused (~/reset, then ~/pause false, to continue)')
            return False
        self.q, self.qd = q, qd
        return self._advance()

    def _advance(self):
        """Count the step taken; publish when due. True."""
        self.steps += 1
        self._published = self.steps >= self._next_publish_steps
        if self._published:
            self._publish()
            self._after_publication()
            self._last_publish_steps = self.steps
            self._next_publish_steps = max(self._next_publish_steps + self._publish_period_steps(),
                                           self.steps + 0.5)
        return True
