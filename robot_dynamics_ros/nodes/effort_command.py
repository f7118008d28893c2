"""The controllers' output: ``effort_controller/commands`` (std_msgs/Float64MultiArray), the topic of
ros2_control's JointGroupEffortController (and simulator_node's input).

τ in model order goes out in the controller's joint order, saturated at the URDF effort limits (a
warning once per joint when it is), and only when finite: nothing non-finite reaches the arm.
"""

import numpy as np
from std_msgs.msg import Float64MultiArray

from robot_dynamics_ros.dynamics.limits import effort_limits, saturate_effort
from robot_dynamics_ros.nodes.conversions import all_finite, float64_field, vector_to_multiarray

__all__ = ['EffortCommand', 'COMMAND_TOPIC']

COMMAND_TOPIC = 'effort_controller/commands'


class EffortCommand:
    """The effort command publisher of a controller node."""

    def __init__(self, node, throttle):
        self._publisher = node.create_publisher(Float64MultiArray, COMMAND_TOPIC, 10)
        self._throttle = throttle
        self._model = self._to_order = self._msg = None

    def reset(self, model, to_order):
        """A new model; ``to_order``: model order -> the controller's joint order (index_map)."""
        self._model, self._to_order = model, to_order
        self._msg = None if model is None else vector_to_multiarray(np.zeros(model.nq))
        self._limit = None if model is None else effort_limits(model)

    def publish(self, tau):
        """Saturate τ (model order), check it is finite, publish it in joint order; True when published."""
        if not all_finite(tau):
            self._throttle.warn('nonfinite/tau', 'computed torque is not finite: nothing published')
            return False
        if not (np.abs(tau) <= self._limit).all():      # (the common case needs no clamping)
            tau, saturated = saturate_effort(self._model, tau)
            self._warn_saturated(saturated)
        self._msg.data = float64_field(tau[self._to_order])
        self._publisher.publish(self._msg)
        return True

    def _warn_saturated(self, saturated):
        for i in np.flatnonzero(saturated):
            name = self._model.joint_names[i]
            self._throttle.once(f'saturated/{name}',
                                f'effort of {name} saturated at its URDF limit '
                                f'{self._limit[i]:g} (warned once per joint)')

    def publish_zero(self):
        """One all-zero command (an effort controller that keeps its last command stops applying it)."""
        if self._model is not None:
            self._publisher.publish(vector_to_multiarray(np.zeros(self._model.nq)))
