"""The hardware-profile parameters every node declares (the conventions themselves:
``robot_dynamics_ros.logic.hardware``; the vendors' values and sources: doc/hardware.md).

- ``hardware_profile`` (string, default 'ros2_control'): 'ros2_control', 'franka', 'ur', 'kinova',
  'kuka_fri' (``logic.hardware.PROFILES``).
- ``firmware_compensates`` (string array; [] = the profile's, ['none'] = nothing): the terms the
  robot adds to every effort command itself, from 'gravity', 'friction', 'coriolis'.
- ``firmware_viscous_scale``, ``firmware_coulomb_scale`` (double arrays, one per joint in the node's
  joint order, >= 0; [] = the profile's, else ones): the scales of the firmware's friction
  compensation (UR's FrictionModelParameters), applied to the model's URDF friction.
- ``measured_effort`` (string; '' = the profile's): what ``/joint_states`` effort contains, 'full'
  (the applied joint torque), 'gravity_compensated' (τ − g(q)) or 'current' (motor currents, no
  torques: the estimator and the payload identification then refuse them).
- ``effort_scale`` (double array, one per joint, non-zero; [] = ones): joint torque = effort_scale ×
  (measured effort − effort_offset) before the convention (effort_offset: model_source's; a negative
  scale flips a sensor's sign).

In the controllers and the simulator they are read-only (a change of the conventions under a running
arm would step its torque); in dynamics_node and external_torque_estimator they are settable at run
time. Values that do not fit (an unknown profile or term, a wrong number of scales) are refused with
the reason at run time; at start-up they are an error and the node has no conventions
(``conventions()`` is None): a controller then commands nothing.
"""

from robot_dynamics_ros.logic.hardware import DEFAULT_PROFILE, MEASURED_EFFORTS, PROFILES, TERMS, resolve
from robot_dynamics_ros.logic.input_guard import bounded
from robot_dynamics_ros.nodes.common import describe, float_array, parameter_validator, string_list
from robot_dynamics_ros.nodes.conversions import index_map

__all__ = ['HardwareParameters', 'HARDWARE_PARAMETERS']

HARDWARE_PARAMETERS = ('hardware_profile', 'firmware_compensates', 'firmware_viscous_scale',
                       'firmware_coulomb_scale', 'measured_effort', 'effort_scale')
_PER_JOINT = ('firmware_viscous_scale', 'firmware_coulomb_scale', 'effort_scale')


class HardwareParameters:
    """Declares the hardware parameters on ``node`` (module docstring); ``conventions()`` gives the
    Conventions of the node's current model (``source``: its ModelSource: model, joint order and
    effort_offset), rebuilt when any of them changes. ``runtime``: settable at run time."""

    def __init__(self, node, source, runtime):
        self._node, self._source = node, source
        self._key = self._conventions = None
        self.error = None           # why there are no conventions (a value that does not fit)
        read_only = not runtime
        node.declare_parameter('hardware_profile', DEFAULT_PROFILE, describe(
            "The robot's torque conventions by name (doc/hardware.md): 'ros2_control' (full torque "
            "commanded and measured), 'franka', 'ur', 'kinova', 'kuka_fri'. The fields below override it.",
            read_only=read_only, additional_constraints=f'one of {sorted(PROFILES)}'))
        node.declare_parameter('firmware_compensates', [], describe(
            "Terms the robot's firmware adds to every effort command itself; the commands sent are the "
            "full torque minus them, by the model at the measured state. [] = the profile's, "
            "['none'] = nothing.", read_only=read_only, dynamic_typing=True,
            additional_constraints=f"[], ['none'] or names from {list(TERMS)}"))
        node.declare_parameter('firmware_viscous_scale', [], describe(
            "Per-joint scale of the firmware's viscous friction compensation (of the URDF damping), in "
            "the node's joint order; [] = the profile's, else ones.", read_only=read_only,
            dynamic_typing=True,
            additional_constraints='[] or one finite number >= 0 per joint'))
        node.declare_parameter('firmware_coulomb_scale', [], describe(
            "Per-joint scale of the firmware's Coulomb friction compensation (of the URDF friction); "
            "[] = the profile's, else ones.", read_only=read_only, dynamic_typing=True,
            additional_constraints='[] or one finite number >= 0 per joint'))
        node.declare_parameter('measured_effort', '', describe(
            "What joint_states effort contains: 'full' (the applied joint torque, gravity included), "
            "'gravity_compensated' (the torque minus g(q)) or 'current' (motor currents: not read); "
            "'' = the profile's.", read_only=read_only,
            additional_constraints=f"'' or one of {list(MEASURED_EFFORTS)}"))
        node.declare_parameter('effort_scale', [], describe(
            'Per-joint factor from the measured effort to joint torque, N m per unit (joint torque = '
            'effort_scale (effort - effort_offset)); [] = ones.', read_only=read_only,
            dynamic_typing=True, additional_constraints='[] or one finite non-zero number per joint'))
        if runtime:
            node.add_on_set_parameters_callback(parameter_validator(self._check_parameters))
            node.add_post_set_parameters_callback(self._apply_parameters)

    def _values(self, changes=()):
        values = {name: self._node.get_parameter(name).value for name in HARDWARE_PARAMETERS}
        values.update((p.name, p.value) for p in changes if p.name in values)
        return values

    def _resolve(self, values, model=None, joint_order=(), effort_offset=None):
        """Conventions of the parameter values (per-joint arrays mapped to model order when there is
        a model); ValueError naming the parameter."""
        arrays = {}
        for name in _PER_JOINT:
            array = float_array(name, values[name])
            if model is not None and array.size:
                if array.size != len(joint_order):
                    raise ValueError(f"parameter '{name}' must have {len(joint_order)} values, one per "
                                     f'joint in the order {list(joint_order)}, or none ([]); got '
                                     f'{array.size}')
                array = array[index_map(joint_order, model.joint_names)]
            arrays[name] = array
        return resolve(str(values['hardware_profile']),
                       firmware_compensates=string_list('firmware_compensates',
                                                        values['firmware_compensates']),
                       measured_effort=str(values['measured_effort']),
                       viscous_scale=arrays['firmware_viscous_scale'],
                       coulomb_scale=arrays['firmware_coulomb_scale'],
                       effort_scale=arrays['effort_scale'], effort_offset=effort_offset,
                       n=None if model is None else model.nq)

    def _check_parameters(self, params):
        if not {p.name for p in params} & set(HARDWARE_PARAMETERS):
            return
        source = self._source
        self._resolve(self._values(params), source.model, source.joint_order)

    def _apply_parameters(self, params):
        if {p.name for p in params} & set(HARDWARE_PARAMETERS):
            self._key = None
            conventions = self.conventions()
            if conventions is not None:
                self._node.get_logger().info(conventions.describe())

    @property
    def firmware_model(self):
        """The arm as its firmware knows it: the node's model without the payload (the payload
        parameters tell our model about a load the firmware does not know)."""
        return self._source.base_model

    @property
    def firmware_adds_friction(self):
        """True when the firmware supplies the joints' friction torques: the node's friction
        compensation then adds nothing (logic/hardware.py, eq. 1)."""
        conventions = self.conventions()
        return conventions is not None and conventions.adds_friction

    def conventions(self):
        """The Conventions in force for the current model (None without a model, or when a value
        does not fit it: ``error`` says why, and it is logged once)."""
        source = self._source
        key = (source.model, source.effort_offset)
        if self._key is not None and self._key[0] is key[0] and self._key[1] is key[1]:
            return self._conventions
        self._key = key
        if source.model is None:
            self._conventions, self.error = None, None
            return None
        try:
            self._conventions = self._resolve(self._values(), source.model, source.joint_order,
                                              source.effort_offset)
            self.error = None
        except ValueError as exc:
            self._conventions, self.error = None, bounded(str(exc), 500)
            self._node.get_logger().error(f'{self.error}: no hardware conventions, no commands')
        return self._conventions

    def details(self):
        """(name, value) pairs for /diagnostics."""
        c = self.conventions()
        if c is None:
            return (('hardware_profile', str(self._node.get_parameter('hardware_profile').value)),
                    ('hardware conventions', self.error or 'none (no model)'))
        added = ', '.join(t for t in TERMS if t in c.firmware_compensates) or 'nothing'
        values = [('hardware_profile', c.profile), ('firmware compensates', added),
                  ('measured effort', c.measured_effort)]
        if c.command_rate > 0.0:
            values.append(('hardware command rate (Hz)', f'{c.command_rate:g}'))
            values.append(('hardware command timeout (s)',
                           f'{c.command_timeout:g} ({c.on_command_timeout})'))
        return tuple(values)

