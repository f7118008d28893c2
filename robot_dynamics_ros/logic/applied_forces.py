"""What acts on the simulated arm at a step, ROS-free: the joint torque its drives apply for the effort
commands, and the external wrench at its tip (``logic/simulation.py`` steps the engine under them).

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
stop does, until the next command: ``braked``; the Simulation then steps its engine on the brakes).

The external wrench: the wrench (m, f) the environment exerts ON the robot at the tip frame, in the tip
frame; the core's F_tip (eq. 9.81) is the one the robot exerts on the environment, its opposite.
``wrench_on_robot`` is the one in force and ``wrench_since`` the step from which it (or none) has acted:
a new wrench, its removal, its timeout or a reset change it (the simulator's ground truth of the push).

Times are step counts (simulated time = steps × dt); joint vectors in model order.
"""

import numpy as np

from robot_dynamics_ros.dynamics.limits import saturate_effort
from robot_dynamics_ros.logic.hardware import resolve

__all__ = ['AppliedForces']


class AppliedForces:
    """The effort command and the external wrench in force, and what they apply (module docstring).

    Args:
        dt: the simulation's step, s (converts the timeouts, s, to step counts).
        report: where problems go (``simulation.Report``): the saturation of a joint (``warn``), a command
            timeout (``warning``).
        hardware: the Conventions of the emulated hardware (default: 'ros2_control').
    """

    def __init__(self, dt, report, hardware=None):
        self.dt = dt
        self.report = report
        self.hardware = resolve() if hardware is None else hardware
        self.firmware_model = None              # the arm as its firmware knows it (no payload)
        self.braked = False                     # 'brake' after a command timeout, until a command
        self.command_tau = None                 # (n,) the command in force, model order
        self._command_steps = 0                 # step count when the command arrived
        self._command_timed_out = True
        self._f_tip = None                      # wrench the robot exerts on the environment
        self._wrench_steps = 0                  # step count of the last wrench message (its timeout)
        self.wrench_since = 0                   # step count from which the wrench in force (or none) acts

    @property
    def wrench_on_robot(self):
        """(6,) the wrench (m, f) in force ON the robot at the tip, in the tip frame; zeros when none."""
        return np.zeros(6) if self._f_tip is None else -self._f_tip

    def clear(self, steps):
        """No command, no wrench, off the brakes (a reset at step ``steps``)."""
        self.braked = False
        self.command_tau = None
        self._command_timed_out = True
        if self._f_tip is not None:
            self._f_tip, self.wrench_since = None, steps

    def command(self, tau, steps):
        """The effort command ``tau`` (n,), received at step ``steps``: in force from now on."""
        self.command_tau = np.asarray(tau, dtype=np.float64)
        self._command_steps = steps
        self._command_timed_out = False
        self.braked = False

    def apply_wrench(self, on_robot, steps):
        """The wrench (m, f) ON the robot at the tip, in the tip frame, from step ``steps`` on; all zero
        removes it."""
        on_robot = np.asarray(on_robot, dtype=np.float64)
        if not np.array_equal(on_robot, self.wrench_on_robot):
            self.wrench_since = steps           # a change (the same wrench again only renews its timeout)
        # The core's f_tip is the wrench the robot exerts ON the environment (eq. 9.81): minus
        # the wrench the environment exerts on the robot, angular first.
        self._f_tip = None if not on_robot.any() else -on_robot
        self._wrench_steps = steps

    def f_tip(self, steps, timeout):
        """F_tip (m, f) the robot exerts on the environment at step ``steps``, or None: none, or the
        wrench is older than ``timeout`` s (> 0; 0: it holds until the next one)."""
        if (self._f_tip is not None and timeout > 0.0
                and (steps - self._wrench_steps) * self.dt > timeout):
            self._f_tip, self.wrench_since = None, steps
        return self._f_tip

    def command_timeout(self, setting):
        """Simulated s without a command before the hardware reacts: ``setting`` (the Simulation's
        ``command_timeout``), or the hardware's own when it is shorter."""
        own = self.hardware.command_timeout
        return min(setting, own) if own > 0.0 else setting

    def joint_torques(self, model, q, qd, steps, *, command_timeout, friction):
        """τ_applied = sat(τ_command + τ_firmware(q, q̇)) at the state (q, q̇) of step ``steps``
        (module docstring): after ``command_timeout`` s (``command_timeout()``) without a command, the
        hardware's reaction (``braked``: the caller holds the arm)."""
        self._time_out(steps, command_timeout)
        command = np.zeros(model.nq) if self.command_tau is None else self.command_tau
        if not self.hardware.full_torque_commands:      # τ_firmware(q, q̇) added (module docstring)
            command = command + self.hardware.firmware_torques(self.firmware_model, q, qd, friction=friction)
        tau, saturated = saturate_effort(model, command)
        for i in np.flatnonzero(saturated):
            self.report.warn(f'saturated/{i}',
                             f'effort of {model.joint_names[i]} saturated at {abs(tau[i]):g}')
        return tau

    def _time_out(self, steps, timeout):
        """The command in force is dropped ``timeout`` s after it came; the hardware reacts, once."""
        if self.command_tau is None or steps - self._command_steps <= timeout / self.dt:
            return
        self.command_tau = None
        if self._command_timed_out:
            return
        self._command_timed_out = True
        # (a hardware that keeps the last command: zero, the simulator's own safety)
        self.braked = self.hardware.on_command_timeout == 'brake'
        self.report.warning(
            f'no effort command for {timeout:g} s of simulated time: '
            + ('the arm brakes and holds where it is (the hardware\'s reaction, '
               f"hardware_profile '{self.hardware.profile}')" if self.braked else
               'applying zero effort' + ('' if self.hardware.full_torque_commands else
                                         " plus the firmware's compensation")))
