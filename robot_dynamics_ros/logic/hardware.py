"""The hardware's torque conventions, ROS-free: what the robot's firmware adds to every effort command,
what its measured efforts contain, and what it does when commands stop.

Every node works on the **full joint torque** inside (τ = M q̈ + c + g + friction + Jᵀ F_tip, eq. 9.81
in the numbering of the draft the core follows); this module converts at the node's boundary:

- **commands** (the controllers' ``effort_controller/commands``): the firmware of many torque-controlled
  arms adds terms of its own to every command (Franka gravity and motor friction, KUKA FRI its gravity
  compensation g(q), UR's torque control gravity and scaled friction). The command sent is what is
  left to add:

      τ_command = τ_full − [gravity] g(q) − [coriolis] c(q, q̇)                          (1)

  computed with our model at the measured state, so that the joints apply τ_full whatever the
  hardware. Friction is the exception: a firmware that compensates it supplies the joints' friction
  torques itself, from its own (fresher) velocity,

      τ_firmware = [gravity] g(q) + [coriolis] c(q, q̇) + [friction] (s_v ⊙ F_v q̇ + s_c ⊙ F_s sgn(q̇))

  (F_v, F_s: the URDF's <dynamics damping friction>; s_v, s_c: the firmware's per-joint friction
  scales, ones unless the vendor uses them), so the controllers add none of their own then
  (``adds_friction``) and take none out: subtracting a Coulomb term of a velocity a few milliseconds
  older than the firmware's would only chatter by ±F_s at rest.
- **measured efforts** (``/joint_states`` effort; the estimators, the payload and arm identification):

      τ_reported = effort_scale ⊙ (effort − effort_offset)                               (2)
      τ_full = τ_reported                     (measured_effort 'full': what a torque sensor reads)
      τ_full = τ_reported + g_fw(q)           (measured_effort 'gravity_compensated')     (3)

  (g_fw: gravity by the arm's model without its payload: the firmware knows the arm, not its load).

  ('current': the efforts are motor currents, no torques; nothing reads them as torques.)
- **command timing**: the rate the hardware needs (``command_rate``, Hz) and what it does after
  ``command_timeout`` s without a command (``on_command_timeout``, ON_COMMAND_TIMEOUT).

``PROFILES`` names the documented sets (doc/hardware.md gives the vendors' sources); explicit fields
override a profile (``resolve``). ``EffortConventionCheck`` is the start-up check: before a controller
commands anything it compares the measured efforts at rest with what its convention predicts
(``check_effort_convention``).

Example:
    >>> conventions = resolve('franka')
    >>> sorted(conventions.firmware_compensates), conventions.measured_effort
    (['friction', 'gravity'], 'full')
    >>> resolve('franka', firmware_compensates=['none']).firmware_compensates
    frozenset()
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from robot_dynamics_ros import dynamics as rd

__all__ = ['HardwareProfile', 'Conventions', 'PROFILES', 'TERMS', 'MEASURED_EFFORTS', 'ON_COMMAND_TIMEOUT',
           'DEFAULT_PROFILE', 'resolve', 'check_effort_convention', 'EffortConventionCheck',
           'CheckResult', 'REST_VELOCITY', 'REST_STATES', 'MIN_JOINT_GRAVITY', 'MIN_GRAVITY',
           'FIT_MARGIN', 'command_rate_problem']

#: The terms a firmware may add to every effort command.
TERMS = ('gravity', 'friction', 'coriolis')
#: What a measured effort may contain: the joint torque ('full'), the joint torque less the firmware's
#: gravity compensation ('gravity_compensated'), or no torque at all ('current': motor currents, as
#: ur_robot_driver publishes them; no model turns them into joint torques, so nothing reads them).
MEASURED_EFFORTS = ('full', 'gravity_compensated', 'current')
#: What the hardware does when commands stop: 'keep_last' (it goes on applying the last command, as
#: ros2_control's forward controllers do), 'zero_command' (the firmware's own terms only: an arm that
#: compensates gravity floats, any other falls), 'brake' (the robot stops and holds, as a reflex or
#: protective stop does).
ON_COMMAND_TIMEOUT = ('keep_last', 'zero_command', 'brake')
DEFAULT_PROFILE = 'ros2_control'


@dataclasses.dataclass(frozen=True)
class HardwareProfile:
    """One arm's documented conventions (doc/hardware.md gives the sources: vendor documentation and
    driver code, with their versions).

    ``firmware_compensates``: subset of TERMS; ``viscous_scale``, ``coulomb_scale``: the firmware's
    friction scales (per joint; None = ones); ``measured_effort``: one of MEASURED_EFFORTS;
    ``command_rate``: Hz the hardware needs (0: none); ``command_timeout``: s without a command before
    the hardware reacts (0: not documented, or never); ``on_command_timeout``: one of
    ON_COMMAND_TIMEOUT; ``summary``: one line for logs and the documentation.
    """
    name: str
    firmware_compensates: frozenset
    measured_effort: str
    command_rate: float
    command_timeout: float
    on_command_timeout: str
    summary: str
    viscous_scale: tuple | None = None
    coulomb_scale: tuple | None = None


PROFILES = {p.name: p for p in (
    HardwareProfile('ros2_control', frozenset(), 'full', 0.0, 0.0, 'keep_last',
                    'a ros2_control effort interface that applies the command as it is (Gazebo, '
                    'MuJoCo, simulator_node): full torque commanded and measured; the forward '
                    'controller keeps applying the last command'),
    HardwareProfile('franka', frozenset({'gravity', 'friction'}), 'full', 1000.0, 0.02, 'brake',
                    'Franka FR3 (libfranka 0.21, franka_ros2 3.4): torque commands without gravity and '
                    'motor friction; tau_J, the link-side torque sensors, as effort; 1 kHz, 20 missed '
                    'cycles stop the robot (communication_constraints_violation)'),
    HardwareProfile('ur', frozenset({'gravity', 'friction'}), 'current', 500.0, 0.04, 'brake',
                    "Universal Robots e-Series direct torque control (PolyScope >= 5.25.1; "
                    "ur_robot_driver's forward_effort_controller): the controller adds gravity and "
                    'scaled friction; efforts are motor currents (A); 500 Hz, robot_receive_timeout '
                    '0.04 s then stopj', viscous_scale=(0.9, 0.9, 0.8, 0.9, 0.9, 0.9),
                    coulomb_scale=(0.8, 0.8, 0.7, 0.8, 0.8, 0.8)),
    HardwareProfile('kinova', frozenset(), 'full', 1000.0, 0.0, 'brake',
                    'Kinova Gen3 low-level torque mode (Kortex API): no gravity compensation in '
                    'low-level mode; joint torque sensors as effort; 1 kHz (ros2_kortex 0.2.6 has no '
                    'effort interface)'),
    HardwareProfile('kuka_fri', frozenset({'gravity'}), 'full', 500.0, 0.0, 'brake',
                    'KUKA LBR FRI torque mode (kuka_drivers 2.0): a torque overlay superimposed on '
                    "the controller's gravity compensation; measured torques as effort; the FRI "
                    'session stops commanding when the connection quality drops'),
)}


@dataclasses.dataclass(frozen=True)
class Conventions:
    """The conventions a node applies: a profile with its overrides (``resolve``), and the per-joint
    arrays in model order (None: ones / zeros). Converts commands (1) and measured efforts (2, 3)."""
    profile: str
    firmware_compensates: frozenset
    measured_effort: str
    command_rate: float
    command_timeout: float
    on_command_timeout: str
    viscous_scale: np.ndarray | None = None     # s_v of (1), (n,) model order; None = ones
    coulomb_scale: np.ndarray | None = None     # s_c of (1)
    effort_scale: np.ndarray | None = None      # of (2); None = ones
    effort_offset: np.ndarray | None = None     # of (2); None = zeros

    @property
    def full_torque_commands(self):
        """True when a command is applied as it is (nothing added by the firmware)."""
        return not self.firmware_compensates

    @property
    def adds_friction(self):
        """True when the firmware supplies the joints' friction torques (the controllers add none)."""
        return 'friction' in self.firmware_compensates

    def left_to_firmware(self, model, q, qd):
        """[gravity] g(q) + [coriolis] c(q, q̇): the firmware's terms a command leaves out (1); (n,) for
        one state, (N, n) for N states in rows (by the RNEA over all of them at once: g = RNEA(q, 0, 0),
        g + c = RNEA(q, q̇, 0))."""
        gravity, coriolis = ('gravity' in self.firmware_compensates, 'coriolis' in self.firmware_compensates)
        if np.ndim(q) == 2:
            zeros = np.zeros_like(q)
            if coriolis:
                g_c = rd.inverse_dynamics_trajectory(model, q, qd, zeros)
                return g_c if gravity else g_c - rd.inverse_dynamics_trajectory(model, q, zeros, zeros)
            return rd.inverse_dynamics_trajectory(model, q, zeros, zeros) if gravity else zeros
        tau = np.zeros(model.nq)
        if gravity:
            tau += rd.gravity_torques(model, q)
        if coriolis:
            tau += rd.coriolis_forces(model, q, qd)
        return tau

    def firmware_torques(self, model, q, qd, friction=True):
        """τ_firmware(q, q̇), (n,) model order: what the firmware adds to every command, by our model
        (a simulator emulating it); ``friction`` False: without the friction compensation (an arm
        without friction has none to compensate). Zeros when it adds nothing."""
        tau = self.left_to_firmware(model, q, qd)
        if friction and self.adds_friction:
            viscous, coulomb = model.damping, model.friction
            if self.viscous_scale is not None:
                viscous = viscous * self.viscous_scale
            if self.coulomb_scale is not None:
                coulomb = coulomb * self.coulomb_scale
            tau += rd.friction_torques(model, qd, viscous, coulomb)
        return tau

    def command(self, model, tau_full, q, qd):
        """τ_command of (1): what to send for the joint torque ``tau_full`` (without friction when the
        firmware compensates it: ``adds_friction``)."""
        if not self.firmware_compensates - {'friction'}:
            return tau_full
        return tau_full - self.left_to_firmware(model, q, qd)

    def reported_torque(self, effort):
        """τ_reported = effort_scale ⊙ (effort − effort_offset) (2), (n,) model order."""
        tau = np.asarray(effort, dtype=np.float64)
        if self.effort_offset is not None:
            tau = tau - self.effort_offset
        if self.effort_scale is not None:
            tau = tau * self.effort_scale
        return tau

    @property
    def efforts_are_torques(self):
        """False when the measured efforts are no joint torques ('current'): nothing may read them."""
        return self.measured_effort != 'current'

    def full_torque(self, model, effort, q):
        """τ_full of (3) from a measured effort at q: the joint torque the dynamics works with.
        ValueError when the efforts are no torques (``efforts_are_torques``)."""
        if not self.efforts_are_torques:
            raise ValueError(f"the measured efforts are motor currents (measured_effort 'current', "
                             f"hardware_profile '{self.profile}'), not joint torques")
        tau = self.reported_torque(effort)
        if self.measured_effort == 'gravity_compensated':
            tau = tau + rd.gravity_torques(model, q)
        return tau

    def measured(self, model, tau_full, q):
        """The effort this hardware reports for the applied joint torque ``tau_full`` at q: the
        inverse of ``full_torque`` (a simulator emulating the hardware). For 'current' there is no
        motor model: the torque divided by ``effort_scale`` stands in for the current."""
        tau = np.array(tau_full, dtype=np.float64)
        if self.measured_effort == 'gravity_compensated':
            tau -= rd.gravity_torques(model, q)
        if self.effort_scale is not None:
            tau /= self.effort_scale
        if self.effort_offset is not None:
            tau += self.effort_offset
        return tau

    def describe(self):
        """The conventions in a few words (logs, /diagnostics)."""
        added = ', '.join(t for t in TERMS if t in self.firmware_compensates) or 'nothing'
        return (f"hardware_profile '{self.profile}': the firmware adds {added} to the commands; "
                f'measured efforts are {self.measured_effort}')


def _terms(value):
    """firmware_compensates as a frozenset of TERMS; [] = None (the profile's), ['none'] = nothing."""
    names = [str(v) for v in value]
    if not names:
        return None
    if names == ['none']:
        return frozenset()
    unknown = [n for n in names if n not in TERMS]
    if unknown:
        raise ValueError(f"parameter 'firmware_compensates' names {unknown}: known terms are "
                         f"{list(TERMS)} ([] = the profile's, ['none'] = nothing)")
    if len(set(names)) != len(names):
        raise ValueError(f"parameter 'firmware_compensates' names a term twice: {names}")
    return frozenset(names)


def _per_joint(name, value, n):
    """A per-joint array parameter: None for []; else n finite numbers."""
    values = np.asarray(list(value), dtype=np.float64).ravel()
    if values.size == 0:
        return None
    if n is not None and values.size != n:
        raise ValueError(f"parameter '{name}' must have {n} values, one per joint, or none ([]); "
                         f'got {values.size}')
    if not np.isfinite(values).all():
        raise ValueError(f"parameter '{name}' must be finite, got {values.tolist()[:12]}")
    return values


def resolve(profile=DEFAULT_PROFILE, *, firmware_compensates=(), measured_effort='', viscous_scale=(),
            coulomb_scale=(), effort_scale=(), effort_offset=None, n=None):
    """The Conventions of a named profile with explicit fields overriding it; ValueError naming the
    parameter that is wrong (an unknown profile, term or convention, a wrong number of values).

    ``firmware_compensates``: [] = the profile's, ['none'] = nothing, else names from TERMS.
    ``measured_effort``: '' = the profile's, else one of MEASURED_EFFORTS. The per-joint arrays
    (model order, n values when ``n`` is given; [] = the default): ``viscous_scale``,
    ``coulomb_scale`` (the firmware's friction scales, >= 0; [] = the profile's, else ones),
    ``effort_scale`` (non-zero: a negative one flips a sensor's sign),
    ``effort_offset`` (None or an (n,) array: the sensors' offset, N m).
    """
    if profile not in PROFILES:
        raise ValueError(f"parameter 'hardware_profile' must be one of {sorted(PROFILES)}, got "
                         f'{str(profile)[:64]!r}')
    base = PROFILES[profile]
    terms = _terms(firmware_compensates)
    measured = measured_effort or base.measured_effort
    if measured not in MEASURED_EFFORTS:
        raise ValueError(f"parameter 'measured_effort' must be '' (the profile's) or one of "
                         f'{list(MEASURED_EFFORTS)}, got {str(measured_effort)[:64]!r}')
    scales = {}
    for name, value, default in (('firmware_viscous_scale', viscous_scale, base.viscous_scale),
                                 ('firmware_coulomb_scale', coulomb_scale, base.coulomb_scale)):
        values = _per_joint(name, value, n)
        if values is not None and (values < 0.0).any():
            raise ValueError(f"parameter '{name}' must be >= 0, got {values.tolist()[:12]}")
        if values is None and default is not None and n in (None, len(default)):
            values = np.array(default)      # (the vendor's scales fit its arms' joint count only)
        scales[name] = values
    effort = _per_joint('effort_scale', effort_scale, n)
    if effort is not None and (effort == 0.0).any():
        raise ValueError(f"parameter 'effort_scale' must not be 0 (a negative value flips a sensor's "
                         f'sign), got {effort.tolist()[:12]}')
    return Conventions(profile, base.firmware_compensates if terms is None else terms, measured,
                       base.command_rate, base.command_timeout, base.on_command_timeout,
                       scales['firmware_viscous_scale'], scales['firmware_coulomb_scale'], effort,
                       None if effort_offset is None or not np.any(effort_offset)
                       else np.asarray(effort_offset, dtype=np.float64))


# -- the start-up check ----------------------------------------------------------------------------
#: rad/s (m/s): every joint slower than this is at rest (sensor noise on a still arm is ~1e-3).
REST_VELOCITY = 0.05
#: States at rest averaged before a verdict (the measured noise averages down by √REST_STATES).
REST_STATES = 10
#: N m: a joint whose |g_i(q)| is below this tells nothing about the convention (sensor noise and
#: stiction are of this order on the arms of doc/hardware.md)...
MIN_JOINT_GRAVITY = 2.0
#: ...and below this norm of g over the informative joints the check is inconclusive: a wrong
#: convention can then do no more harm than |g(q)| itself, which is small.
MIN_GRAVITY = 5.0
#: The share of g(q) in the measured efforts decides: 'full' predicts 1, 'gravity_compensated' 0.
#: A convention is contradicted when the share is beyond the midpoint by more than this margin
#: (share < 0.25 under 'full', > 0.75 under 'gravity_compensated'), so an unknown effort offset or
#: an unmodelled payload of up to a quarter of g(q) never triggers it.
FIT_MARGIN = 0.25


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The verdict of the start-up check. ``status``: 'consistent' (the efforts fit the convention),
    'contradiction' (they fit the other one: ``fitting`` names it), 'inconclusive' (gravity too small
    at this posture to tell, or the efforts fit neither), 'no_efforts' (the joint states carry none),
    'no_torques' (the efforts are motor currents) or 'skipped' (the controller's
    check_effort_convention is false); only a contradiction holds the commands back. ``share``: the
    share of g(q) in the measured efforts (None when not computed); ``message``: the verdict in words."""
    status: str
    fitting: str | None
    share: float | None
    message: str

    @property
    def allows_commands(self):
        return self.status != 'contradiction'


def check_effort_convention(model, firmware_model, conventions, q, tau_reported):
    """Compare efforts measured at rest with the convention's prediction at q.

    ``tau_reported``: effort_scale ⊙ (effort − offset) (2), averaged over states at rest, model order;
    ``model``: the node's model (with its payload), ``firmware_model``: the arm as its firmware knows
    it (without). At rest the arm's joint torque is g(q) of ``model``; 'full' predicts that,
    'gravity_compensated' predicts it less the firmware's g_fw(q) of ``firmware_model``. The two
    differ by g_fw: on the joints where it is informative (|g_fw,i| >= MIN_JOINT_GRAVITY), the
    least-squares share of g_fw in the efforts

        share = ((τ_J − g_J + g_fw,J) · g_fw,J) / (g_fw,J · g_fw,J)   (1 for 'full', 0 for 'compensated')

    decides, with FIT_MARGIN either side of the midpoint 0.5; |g_fw,J| < MIN_GRAVITY is inconclusive.
    """
    g = rd.gravity_torques(model, q)
    g_fw = g if firmware_model is model else rd.gravity_torques(firmware_model, q)
    informative = np.abs(g_fw) >= MIN_JOINT_GRAVITY
    g_j, gfw_j = g[informative], g_fw[informative]
    tau_j = np.asarray(tau_reported, dtype=np.float64)[informative]
    norm = float(np.linalg.norm(gfw_j))
    if norm < MIN_GRAVITY:
        return CheckResult('inconclusive', None, None,
                           f'gravity too small at this posture to tell the effort convention '
                           f'(|g| = {norm:.2f} N m over the joints with |g_i| >= {MIN_JOINT_GRAVITY:g} N m)')
    share = float((tau_j - g_j + gfw_j) @ gfw_j) / norm ** 2
    fitting = ('full' if share >= 0.5 + FIT_MARGIN else 'gravity_compensated' if share <= 0.5 - FIT_MARGIN
               else None)
    expected = conventions.measured_effort
    shown = round(share, 2) + 0.0       # (never '-0 %')
    said = (f"the measured efforts hold {shown:.0%} of the model's g(q) (|g| = {norm:.1f} N m; "
            f"'full' predicts 100 %, 'gravity_compensated' 0 %)")
    if fitting is None:
        return CheckResult('inconclusive', None, share,
                           f'{said}: they fit neither convention (an effort offset, an unmodelled '
                           'payload?); going on with measured_effort '
                           f"'{expected}'")
    if fitting == expected:
        return CheckResult('consistent', fitting, share, f"{said}: consistent with '{expected}'")
    profiles = sorted(name for name, p in PROFILES.items() if p.measured_effort == fitting)
    hint = (f" (profiles with it: {profiles})" if profiles else
            f" (no named profile has it: set measured_effort: '{fitting}')")
    return CheckResult('contradiction', fitting, share,
                       f"{said}: they contradict measured_effort '{expected}' of "
                       f"{conventions.describe()}; the data fits measured_effort '{fitting}'{hint}")


class EffortConventionCheck:
    """The start-up check over a stream of joint states: ``add(q, qd, effort)`` for each complete
    state (effort None when the message has none) until ``result`` is set.

    The efforts of REST_STATES consecutive states at rest (every |q̇_i| < REST_VELOCITY) are averaged
    and judged by ``check_effort_convention``; motion starts the average again. A state without
    efforts ends the check at once ('no_efforts': nothing to compare, commands allowed)."""

    def __init__(self, model, firmware_model, conventions):
        self.model, self.firmware_model, self.conventions = model, firmware_model, conventions
        self.result = None
        self._sum = np.zeros(model.nq)
        self._count = 0
        self._q = None

    def add(self, q, qd, effort):
        """One complete joint state (model order); returns the result once there is one."""
        if self.result is not None:
            return self.result
        if not self.conventions.efforts_are_torques:
            self.result = CheckResult('no_torques', None, None,
                                      "the measured efforts are motor currents (measured_effort "
                                      "'current'): the effort convention cannot be checked")
            return self.result
        if effort is None:
            self.result = CheckResult('no_efforts', None, None,
                                      'the joint states carry no efforts: the effort convention '
                                      'cannot be checked')
            return self.result
        if not (np.abs(qd) < REST_VELOCITY).all():
            self._sum[:], self._count = 0.0, 0
            return None
        self._sum += self.conventions.reported_torque(effort)
        self._q = q
        self._count += 1
        if self._count >= REST_STATES:
            self.result = check_effort_convention(self.model, self.firmware_model, self.conventions, self._q,
                                                  self._sum / self._count)
        return self.result

    @property
    def waiting(self):
        """What the check waits for, in words (None once it has a result)."""
        if self.result is not None:
            return None
        return (f'waiting for {REST_STATES} joint states at rest (|q̇| < {REST_VELOCITY:g}) to check '
                'the effort convention before the first command')


def command_rate_problem(conventions, rate):
    """A warning when commands at ``rate`` Hz (None: unknown) are slower than the hardware needs."""
    need = conventions.command_rate
    if need <= 0.0 or rate is None or not math.isfinite(rate):
        return None
    if rate < 0.9 * need:
        return (f"commands at {rate:.0f} Hz, slower than the {need:.0f} Hz that hardware_profile "
                f"'{conventions.profile}' needs (after {conventions.command_timeout:g} s without a "
                f'command it does: {conventions.on_command_timeout})')
    return None
