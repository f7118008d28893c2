"""The controllers' output: ``effort_controller/commands`` (std_msgs/Float64MultiArray), the topic of
ros2_control's JointGroupEffortController (and simulator_node's input).

τ, the full joint torque in model order, is saturated at the URDF effort limits (a warning once per
joint when it is), less what the hardware's firmware adds to every command itself (the hardware
profile, ``robot_dynamics_ros.logic.hardware``: τ_command = τ − τ_firmware(q, q̇), eq. 1 there, by the
arm's model without its payload), and goes out in the controller's joint order, only when finite:
nothing non-finite reaches the arm. Nothing goes out until the start-up check of the effort
convention (``verdict``, set by the controller) allows it.
"""

import numpy as np
from std_msgs.msg import Float64MultiArray

from robot_dynamics_ros.dynamics.limits import effort_limits, saturate_effort
from robot_dynamics_ros.nodes.conversions import all_finite, float64_field, vector_to_multiarray

__all__ = ['EffortCommand', 'COMMAND_TOPIC']

COMMAND_TOPIC = 'effort_controller/commands'


class EffortCommand:
    """The effort command publisher of a controller node; ``hardware``: its HardwareParameters."""

    def __init__(self, node, throttle, hardware):
        self._publisher = node.create_publisher(Float64MultiArray, COMMAND_TOPIC, 10)
        self._throttle = throttle
        self._hardware = hardware
        self._model = self._to_order = self._msg = None
        #: the start-up check's CheckResult (logic.hardware); None: not decided yet (nothing is sent)
        self.verdict = None

    def reset(self, model, to_order):
        """A new model; ``to_order``: model order -> the controller's joint order (index_map)."""
        self._model, self._to_order = model, to_order
        self._msg = None if model is None else vector_to_multiarray(np.zeros(model.nq))
        self._limit = None if model is None else effort_limits(model)

    def _allowed(self):
        """The start-up check has allowed commands (/diagnostics says what it waits for meanwhile)."""
        return self.verdict is not None and self.verdict.allows_commands

    def publish(self, tau, q, qd):
        """Saturate the full torque τ (model order), take off the firmware's terms at the measured q,
        q̇, check it is finite, publish it in joint order; True when published."""
        if not self._allowed():
            return False
        conventions = self._hardware.conventions()
        if conventions is None:
            self._throttle.warn('command/hardware', 'no hardware conventions (a parameter does not fit '
                                                    'the model): nothing published')
            return False
        if not all_finite(tau):
            self._throttle.warn('nonfinite/tau', 'computed torque is not finite: nothing published')
            return False
        if not (np.abs(tau) <= self._limit).all():      # (the common case needs no clamping)
            tau, saturated = saturate_effort(self._model, tau)
            self._warn_saturated(saturated)
        command = conventions.command(self._hardware.firmware_model, tau, q, qd)
        if not all_finite(command):
            self._throttle.warn('nonfinite/tau', 'command less the firmware terms is not finite: '
                                                 'nothing published')
            return False
        self._msg.data = float64_field(command[self._to_order])
        self._publisher.publish(self._msg)
        return True

    def _warn_saturated(self, saturated):
        for i in np.flatnonzero(saturated):
            name = self._model.joint_names[i]
            self._throttle.once(f'saturated/{name}',
                                f'effort of {name} saturated at its URDF limit '
                                f'{self._limit[i]:g} (warned once per joint)')

    def publish_zero(self):
        """One all-zero command (an effort controller that keeps its last command stops applying it;
        on an arm whose firmware compensates gravity the arm then floats, on any other it falls)."""
        if self._model is not None and self._allowed():
            self._publisher.publish(vector_to_multiarray(np.zeros(self._model.nq)))
