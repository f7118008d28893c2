"""Property-based fuzzing of every public function of the core (robot_dynamics_ros.dynamics.__all__).

The property: any input either raises a ValueError that names an argument it was given, or returns
finite results equal to those from the same values given as native float64 C-contiguous arrays.
Never another exception type for a bad argument, never a NaN or inf out of finite input.

Each case replaces one or two arguments of a good call (the others keep their values) by a drawn
value in a drawn form, and knows what that form must do:

- forms that keep the values (int, float32, long double, big-endian, misaligned, strided, Fortran-
  ordered, read-only, masked with nothing masked, object arrays and lists of floats, tuples, ndarray
  subclasses) must give exactly what the float64 array of the same values gives (both raise a
  ValueError, or both return the same numbers);
- refused forms (complex, even with a zero imaginary part; booleans; text; masked entries; objects
  that are not numbers; wrong shapes: 0-d, empty, too long, one dimension too many; None where an
  array is required; dicts) must raise a ValueError naming the argument.

Values mix ordinary numbers with extreme finite ones (±1e155, whose squares overflow; ±1e300; the
largest double; -0.0; subnormals) and NaN/inf. A message names an argument when the argument's name
appears in it as a word (test_bad_input._misreported's rule).

Size: EXAMPLES hypothesis examples of CASES cases each per function, 2000 cases (FUZZ_EXAMPLES in
the environment changes EXAMPLES). The model is a 6-joint random chain (revolute, continuous and
prismatic joints; square Jacobian, so that the task-space calls need no damping). The last test runs
every array form as the very first call of a fresh process: numba's dispatcher types unusual arrays
through a process-wide cache whose first entry decides what later arrays are read as
(kernels/native.py).
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from robot_dynamics_ros import dynamics as rd

from _array_forms import misaligned, read_only
from _fresh_python import run_python
from _random_trees import random_state, random_tree

MODEL = rd.load_urdf(random_tree(300, 6, chain=True).to_urdf())
OTHER = rd.load_urdf(random_tree(301, 3).to_urdf())
N = MODEL.nq
K = 3                                    # states of the trajectory calls
Q, QD, QDD = random_state(MODEL, np.random.default_rng(1))
TAU = np.linspace(-2.0, 2.0, N)
WRENCH = np.array([1.0, -2.0, 0.5, 3.0, 0.0, -1.0])
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", 200))     # per function, each of CASES cases
CASES = 10               # cases per hypothesis example: its fixed cost (~6 ms) shared by several calls
FUZZ = settings(derandomize=True, deadline=None, database=None, max_examples=EXAMPLES,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


class _Refused:
    def __repr__(self):
        return "REFUSED"


REFUSED = _Refused()     # the canonical value of a form that must raise a ValueError naming its argument


# -- values ------------------------------------------------------------------------------------------
EXTREME = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, 1e155, -1e155, 1e300, -1e300,
           1.7976931348623157e308, -1.7976931348623157e308]
NON_FINITE = [math.nan, math.inf, -math.inf]


def _floats(ordinary, extreme=tuple(EXTREME)):
    """Mostly `ordinary` numbers, some extreme finite ones, a few NaN and inf."""
    return st.integers(0, 19).flatmap(lambda i: ordinary if i < 14 else st.sampled_from(extreme) if i < 19
                                      else st.sampled_from(NON_FINITE))


SPECIAL = EXTREME + NON_FINITE


def _values(shape):
    """Float64 values of `shape`: uniform numbers (drawn from a seed: cheaper to generate than one
    hypothesis draw per entry), some filled with one extreme or non-finite value, some with one or
    two entries replaced by such values."""
    size = int(np.prod(shape))

    def build(seed, scale, fill, specials):
        v = np.random.default_rng(seed).uniform(-scale, scale, size)
        if fill is not None:
            v[:] = fill
        for i, x in specials:
            v[i] = x
        return v.reshape(shape)
    return st.builds(build, st.integers(0, 2 ** 16), st.sampled_from([1.0, 10.0, 1e3]),
                     st.sampled_from([None] * 2 * len(SPECIAL) + SPECIAL),
                     st.lists(st.tuples(st.integers(0, size - 1), st.sampled_from(SPECIAL)), max_size=2))


# -- forms of an array: value -> (what is passed, its float64 values or REFUSED) ---------------------
class Subclass(np.ndarray):
    """An ndarray subclass with nothing to say about its values."""


def _integers(a, dtype, low, high):
    w = np.round(np.clip(np.nan_to_num(a, nan=0.0, posinf=0.0, neginf=0.0), low, high)).astype(dtype)
    return w, w.astype(np.float64)


def _cast(a, dtype):
    with np.errstate(over="ignore"):
        w = a.astype(dtype)
    return w, w.astype(np.float64)


def _masked(a):
    mask = np.zeros(a.shape, bool)
    mask.flat[0] = True
    return np.ma.masked_array(a, mask=mask)


def _first_replaced(a, value):
    out = a.tolist()
    inner = out
    while isinstance(inner[0], list):
        inner = inner[0]
    inner[0] = value
    return out


ARRAY_FORMS = {
    "float64": lambda a: (a.copy(), a),
    "list": lambda a: (a.tolist(), a),
    "tuple": lambda a: (tuple(map(tuple, a.tolist())) if a.ndim == 2 else tuple(a.tolist()), a),
    "list-of-numpy-floats": lambda a: (list(a), a),
    "object": lambda a: (np.array(a.tolist(), dtype=object), a),
    "int64": lambda a: _integers(a, np.int64, -2.0 ** 53, 2.0 ** 53),
    "int32": lambda a: _integers(a, np.int32, -2.0 ** 31, 2.0 ** 31 - 1),
    "uint8": lambda a: _integers(a, np.uint8, 0, 255),
    "float32": lambda a: _cast(a, np.float32),
    "float16": lambda a: _cast(a, np.float16),
    "longdouble": lambda a: (a.astype(np.longdouble), a),
    "big-endian": lambda a: (a.astype(">f8"), a),
    "big-endian-read-only": lambda a: (read_only(a.astype(">f8")), a),
    "misaligned": lambda a: (misaligned(a), a),
    "misaligned-read-only": lambda a: (misaligned(a, writeable=False), a),
    "strided": lambda a: (np.repeat(a, 2, axis=-1)[..., ::2], a),
    "reversed-view": lambda a: (a[..., ::-1].copy()[..., ::-1], a),
    "fortran": lambda a: (np.asfortranarray(np.stack([a, a], axis=-1))[..., 0] if a.ndim == 1
                          else np.asfortranarray(a), a),
    "read-only": lambda a: (read_only(a), a),
    "masked-nothing-masked": lambda a: (np.ma.masked_array(a, mask=np.zeros(a.shape, bool)), a),
    "masked-nomask": lambda a: (np.ma.masked_array(a), a),
    "subclass": lambda a: (a.copy().view(Subclass), a),
    # refused
    "complex": lambda a: (a + 1j, REFUSED),
    "complex-zero-imaginary": lambda a: (a.astype(complex), REFUSED),
    "bool": lambda a: (a > 0, REFUSED),
    "text-list": lambda a: (np.vectorize(repr, otypes=[object])(a).tolist(), REFUSED),
    "text-array": lambda a: (a.astype(str), REFUSED),
    "masked": lambda a: (_masked(a), REFUSED),
    "object-with-none": lambda a: (_first_replaced(a, None), REFUSED),
    "huge-int": lambda a: (_first_replaced(a, 10 ** 400), REFUSED),
    "0-d": lambda a: (np.array(a.flat[0]), REFUSED),
    "numpy-scalar": lambda a: (np.float64(a.flat[0]), REFUSED),
    "empty": lambda a: (np.empty((0,) * a.ndim), REFUSED),
    "too-long": lambda a: (np.concatenate([a, a[..., :1]], axis=-1), REFUSED),
    "extra-dimension": lambda a: (a[None], REFUSED),
    "none": lambda a: (None, REFUSED),
    "dict": lambda a: ({}, REFUSED),
    "string": lambda a: ("1.0", REFUSED),
}


def _array(shape, optional=False, scalar=False):
    """An array argument of `shape` in any form; None means "absent" when `optional`; a 0-d array or
    numpy scalar is a number when `scalar` (gains, friction coefficients)."""
    def form(values, name):
        if name == "none" and optional:
            return None, None
        obj, canonical = ARRAY_FORMS[name](values)
        if scalar and name in ("0-d", "numpy-scalar"):
            return obj, float(values.flat[0])
        if isinstance(canonical, np.ndarray) and canonical.shape != shape:      # the values changed shape
            canonical = REFUSED
        return obj, canonical
    return st.builds(form, _values(shape), st.sampled_from(list(ARRAY_FORMS)))


# -- forms of a number ---------------------------------------------------------------------------------
def _number_forms(x):
    """(value, canonical) for a number x in the forms a number can take."""
    forms = [(x, x), (np.float64(x), x), (np.array(x), x), (np.ma.masked_array(x), x),
             (complex(x, 0.0), REFUSED), (complex(x, 1.0), REFUSED), (True, REFUSED), (str(x), REFUSED),
             ([x], REFUSED), (np.array([x]), REFUSED), (None, REFUSED), (np.ma.masked, REFUSED),
             ({}, REFUSED)]
    with np.errstate(over="ignore"):
        forms.append((np.float32(x), float(np.float32(x))))
    if math.isfinite(x):
        forms.append((Fraction(x), x))
        if x == int(x) and abs(x) < 2 ** 62:
            forms += [(int(x), x), (np.int64(x), x)]
    return st.sampled_from(forms)


def _number(ordinary, extreme):
    return _floats(ordinary, extreme).flatmap(_number_forms)


DT = _number(st.floats(0.0, 0.05), [0.0, 5e-324, 1e-300, 1.0, 10.0, 1e155, 1e300, 1.7976931348623157e308,
                                    -0.0, -0.01, -1e300])
DAMPING = _number(st.floats(0.0, 10.0), [0.0, 5e-324, 1e-300, 1e155, 1e300, 1.7976931348623157e308, -0.0,
                                         -1e-3, -1e300])
STEPS = st.one_of(
    st.integers(0, 4).flatmap(lambda k: st.sampled_from([(k, k), (float(k), k), (np.int64(k), k)])),
    st.sampled_from([(v, REFUSED) for v in (1e12, 10 ** 30, math.inf, math.nan, -1, 2.5, True, "3", None,
                                            3 + 0j, [3])]))


def _gain():
    return st.one_of(_number(st.floats(0.0, 100.0), EXTREME), _array((N,), scalar=True),
                     _array((N, N), scalar=True))


def _coefficient(optional=False):
    """A friction coefficient: a number or a per-joint vector; None (the URDF's) when `optional`."""
    coefficient = st.one_of(_number(st.floats(0.0, 1.0), [0.0, 5e-324, 1e155, 1e300, -0.1]),
                            _array((N,), optional=optional, scalar=True))
    return coefficient.map(lambda c: (None, None) if optional and c[0] is None else c)


def _pair(viscous, coulomb):
    canonical = REFUSED if viscous[1] is REFUSED or coulomb[1] is REFUSED else (viscous[1], coulomb[1])
    return (viscous[0], coulomb[0]), canonical


FRICTION = st.one_of(st.sampled_from([(None, None), (False, False), (True, True), ("yes", REFUSED),
                                      ((0.1,), REFUSED), ((0.1, 0.1, 0.1), REFUSED), ({}, REFUSED),
                                      (3.0, REFUSED)]),
                     st.builds(_pair, _coefficient(), _coefficient()))


def _options(valid, invalid):
    return st.sampled_from([(v, v) for v in valid] + [(v, REFUSED) for v in invalid])


FRAME = _options([None, "tool0", MODEL.tip_frame, *MODEL.frame_names[:3]], ["nowhere", 3, {}, b"tool0", 1j])
REFERENCE = _options(["space", "body", "world_aligned"], ["spatial", None, 0, {}])
METHOD = _options(["rk4", "euler", "semi_implicit_euler"], ["midpoint", None, 2])
DATA = _options([None, rd.Data(MODEL)], [rd.Data(OTHER), "data", 3])


# -- the functions -----------------------------------------------------------------------------------
V, W, T = _array((N,)), _array((6,), optional=True), _array((K, N))
TIP_TRAJECTORY = st.one_of(_array((6,), optional=True), _array((K, 6), optional=True))
STATE = dict(q=(Q, V), qd=(QD, V))
TRAJ = dict(q=(np.tile(Q, (K, 1)), T), qd=(np.tile(QD, (K, 1)), T))
TIP = dict(f_tip=(WRENCH, W), frame=("tool0", FRAME))
EXTRAS = dict(friction=(None, FRICTION), data=(None, DATA))
FRAMED = dict(frame=("tool0", FRAME), reference=("space", REFERENCE), data=(None, DATA))
TASK = dict(FRAMED, damping=(0.0, DAMPING))
STEP = dict(STATE, tau=(TAU, V), dt=(0.01, DT), **TIP, **EXTRAS)

T_DES = rd.frame_pose(MODEL, QD, "tool0")       # a reachable pose (that of another configuration)
TASK_GAIN = st.one_of(_number(st.floats(0.0, 100.0), EXTREME), _array((6,), scalar=True),
                      _array((6, 6), scalar=True))

# name: (function, {argument: (good value, strategy)}, arguments whose shapes must agree)
FUNCTIONS = {
    "inverse_dynamics": (rd.inverse_dynamics, dict(STATE, qdd=(QDD, V), **TIP, **EXTRAS), ()),
    "inverse_dynamics_trajectory": (rd.inverse_dynamics_trajectory,
                                    dict(TRAJ, qdd=(np.tile(QDD, (K, 1)), T), f_tip=(WRENCH, TIP_TRAJECTORY),
                                         frame=("tool0", FRAME), **EXTRAS), ("q", "qd", "qdd", "f_tip")),
    "gravity_torques": (rd.gravity_torques, dict(q=(Q, V), data=(None, DATA)), ()),
    "coriolis_forces": (rd.coriolis_forces, dict(STATE, data=(None, DATA)), ()),
    "bias_forces": (rd.bias_forces, dict(STATE, data=(None, DATA)), ()),
    "mass_matrix": (rd.mass_matrix, dict(q=(Q, V), data=(None, DATA)), ()),
    "mass_matrix_via_jacobians": (rd.mass_matrix_via_jacobians, dict(q=(Q, V), data=(None, DATA)), ()),
    "mass_matrix_trajectory": (rd.mass_matrix_trajectory, dict(q=(np.tile(Q, (K, 1)), T), data=(None, DATA)),
                               ()),
    "coriolis_matrix": (rd.coriolis_matrix, dict(STATE, data=(None, DATA)), ()),
    "christoffel_symbols": (rd.christoffel_symbols, dict(q=(Q, V), data=(None, DATA)), ()),
    "mass_matrix_derivatives": (rd.mass_matrix_derivatives, dict(q=(Q, V), data=(None, DATA)), ()),
    "closed_form_dynamics": (rd.closed_form_dynamics, dict(STATE, data=(None, DATA)), ()),
    "kinetic_energy": (rd.kinetic_energy, dict(STATE, data=(None, DATA)), ()),
    "potential_energy": (rd.potential_energy, dict(q=(Q, V), data=(None, DATA)), ()),
    "forward_dynamics": (rd.forward_dynamics, dict(STATE, tau=(TAU, V), **TIP, **EXTRAS), ()),
    "forward_dynamics_via_mass_matrix": (rd.forward_dynamics_via_mass_matrix,
                                         dict(STATE, tau=(TAU, V), **TIP, **EXTRAS), ()),
    "forward_dynamics_trajectory": (rd.forward_dynamics_trajectory,
                                    dict(TRAJ, tau=(np.tile(TAU, (K, 1)), T), **EXTRAS), ("q", "qd", "tau")),
    "friction_torques": (rd.friction_torques, dict(qd=(QD, V), viscous=(None, _coefficient(optional=True)),
                                                   coulomb=(None, _coefficient(optional=True))), ()),
    "frame_pose": (rd.frame_pose, dict(q=(Q, V), frame=("tool0", FRAME), data=(None, DATA)), ()),
    "jacobian": (rd.jacobian, dict(q=(Q, V), **FRAMED), ()),
    "jacobian_derivative": (rd.jacobian_derivative, dict(STATE, **FRAMED), ()),
    "task_space_inertia": (rd.task_space_inertia, dict(q=(Q, V), **TASK), ()),
    "task_space_bias": (rd.task_space_bias, dict(STATE, **TASK), ()),
    "compute_all_terms": (rd.compute_all_terms, dict(STATE, **TASK), ()),
    "computed_torque": (rd.computed_torque, dict(STATE, q_des=(QD, V), qd_des=(QDD, V), qdd_des=(TAU, V),
                                                 kp=(4.0, _gain()), kd=(2.0, _gain()), **EXTRAS), ()),
    "euler_step": (rd.euler_step, STEP, ()),
    "semi_implicit_euler_step": (rd.semi_implicit_euler_step, STEP, ()),
    "rk4_step": (rd.rk4_step, STEP, ()),
    "simulate": (rd.simulate, dict(q0=(Q, V), qd0=(QD, V), tau=(TAU, st.one_of(V, _array((3, N)))),
                                   dt=(0.01, DT), steps=(3, STEPS), method=("rk4", METHOD), **TIP, **EXTRAS),
                 ("tau", "steps")),
    "simulate_batch": (rd.simulate_batch, dict(q0=(np.tile(Q, (K, 1)), T), qd0=(np.tile(QD, (K, 1)), T),
                                               tau=(np.tile(TAU, (K, 3, 1)), _array((K, 3, N))),
                                               dt=(0.01, DT), method=("rk4", METHOD),
                                               f_tip=(WRENCH, TIP_TRAJECTORY), frame=("tool0", FRAME),
                                               friction=(None, FRICTION)), ("q0", "qd0", "tau")),
    "saturate_effort": (rd.saturate_effort, dict(tau=(TAU, V)), ()),
    "momentum_balance": (rd.momentum_balance, dict(STATE, data=(None, DATA)), ()),
    "task_space_control": (rd.task_space_control,
                           dict(STATE, T_des=(T_DES, _array((4, 4))), V_des=(WRENCH, W), Vdot_des=(WRENCH, W),
                                kp=(100.0, TASK_GAIN), kd=(20.0, TASK_GAIN), frame=("tool0", FRAME),
                                nullspace_q=(Q, _array((N,), optional=True)),
                                nullspace_kp=(10.0, _number(st.floats(0.0, 100.0), EXTREME)),
                                damping=(0.0, DAMPING), data=(None, DATA)), ()),
    "pose_error": (rd.pose_error, dict(q=(Q, V), T_des=(T_DES, _array((4, 4))), frame=("tool0", FRAME),
                                       data=(None, DATA)), ()),
    "joint_torque_regressor": (rd.joint_torque_regressor, dict(STATE, qdd=(QDD, V), data=(None, DATA)), ()),
    "inverse_dynamics_derivatives": (rd.inverse_dynamics_derivatives,
                                     dict(STATE, qdd=(QDD, V), **TIP, **EXTRAS), ()),
    "forward_dynamics_derivatives": (rd.forward_dynamics_derivatives,
                                     dict(STATE, tau=(TAU, V), **TIP, **EXTRAS), ()),
    "linearize": (rd.linearize, dict(STATE, tau=(TAU, V), dt=(0.01, DT), method=("rk4", METHOD),
                                     data=(None, DATA)), ()),
    "linearize_trajectory": (rd.linearize_trajectory,
                             dict(TRAJ, tau=(np.tile(TAU, (K, 1)), T), dt=(0.01, DT), method=("rk4", METHOD),
                                  data=(None, DATA)), ("q", "qd", "tau")),
    "joint_torque_regressor_trajectory": (rd.joint_torque_regressor_trajectory,
                                          dict(TRAJ, qdd=(np.tile(QDD, (K, 1)), T), data=(None, DATA)),
                                          ("q", "qd", "qdd")),
    "external_wrench": (rd.external_wrench, dict(q=(Q, V), tau_ext=(TAU, V), frame=("tool0", FRAME),
                                                 reference=("body", REFERENCE), damping=(0.0, DAMPING),
                                                 data=(None, DATA)), ()),
    "enforce_position_limits": (rd.enforce_position_limits, dict(q=(Q, V), qd=(QD, V)), ()),
}


def test_every_public_function_is_fuzzed():
    """Everything in __all__ but the classes, the model loaders and builders (their inputs are files,
    other libraries' models and inertial parameters, refused by name in test_identification.py),
    identify_payload, identify_payload_from_log (a dataclass of N samples: their bad input is tested
    there too), effort_limits and inertial_parameters (no argument but the model; effort_limits' +inf
    means "no limit"), and the whole-robot identification's functions (recordings, files and model
    builders: with_armature's bad input in test_ref_pinocchio_armature.py, the others' in
    test_robot_identification.py, test_excitation.py and test_write_urdf.py), and optimal control's
    problem, solver and solution (a problem object and horizons of states: their bad input in
    test_optimal_control.py), and the thread count's setter and getter (no model: set_num_threads' bad
    values in test_thread_count.py)."""
    classes_and_loaders = {"Model", "Data", "AllTerms", "SimulationResult", "ClosedFormDynamics", "load_urdf",
                           "MomentumObserver",
                           "from_modern_robotics", "to_modern_robotics", "effort_limits",
                           "inertial_parameters", "with_inertial_parameters", "with_payload",
                           "identify_payload", "identify_payload_from_log", "PayloadEstimate",
                           "with_armature", "base_parameters", "BaseParameters", "identify_robot",
                           "RobotEstimate", "excitation_trajectory", "ExcitationTrajectory",
                           "JointTrajectoryPoints", "write_urdf", "ReachingProblem", "solve_optimal_control",
                           "OptimalControlSolution", "set_num_threads", "get_num_threads"}
    assert set(rd.__all__) - classes_and_loaders == set(FUNCTIONS)


# -- the property ----------------------------------------------------------------------------------------
def _arrays(result):
    """The numbers a function returned, as float arrays copied now (a Data's arrays are reused)."""
    if result is None:
        return []
    if dataclasses.is_dataclass(result):
        return [a for f in dataclasses.fields(result) for a in _arrays(getattr(result, f.name))]
    if isinstance(result, tuple):
        return [a for r in result for a in _arrays(r)]
    return [np.array(result, dtype=float)]


def _outcome(function, arguments):
    """The copied results of function(MODEL, **arguments), or the exception it raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)     # a value changed silently
        warnings.simplefilter("error", DeprecationWarning)
        try:
            return _arrays(function(MODEL, **arguments))
        except Exception as error:          # judged by the caller
            return error


def _names(message, names):
    return any(re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", message) for name in names)


def _check(name, drawn):
    """The property for one example: `drawn` maps the replaced arguments to (value, canonical)."""
    function, arguments, linked = FUNCTIONS[name]
    given_values = {a: drawn[a][0] if a in drawn else good for a, (good, _) in arguments.items()}
    float64_values = {a: drawn[a][1] if a in drawn else good for a, (good, _) in arguments.items()}
    if "f_tip" in arguments and given_values["f_tip"] is None:     # frame says where f_tip acts: unread
        float64_values["frame"] = given_values["frame"]
    refused = [a for a in drawn if float64_values[a] is REFUSED]
    call = f"{name}({', '.join(f'{a}={_describe(drawn[a][0])}' for a in drawn)})"
    got = _outcome(function, given_values)
    if isinstance(got, BaseException):
        assert isinstance(got, ValueError), f"{call}: {type(got).__name__}: {got}"
        # Shapes that must agree (q and qd of a trajectory): a changed shape may be blamed on either.
        blamed = set(drawn) | (set(linked) if set(drawn) & set(linked) else set())
        assert _names(str(got), blamed), f"{call}: the message names none of {blamed}: {got}"
        if not refused:
            assert isinstance(_outcome(function, float64_values), ValueError), (
                f"{call} raised {got!r}; the same values as float64 arrays do not")
        return
    assert not refused, f"{call} accepted {refused}: returned {got}"
    assert all(np.isfinite(a).all() for a in got), f"{call} returned non-finite results {got}"
    expected = _outcome(function, float64_values)
    assert not isinstance(expected, BaseException), f"{call} returned; the float64 arrays raise {expected!r}"
    assert len(got) == len(expected) and all(np.array_equal(g, e) for g, e in zip(got, expected)), (
        f"{call}: results differ from the float64 arrays' ({got} vs {expected})")


def _describe(value):
    if isinstance(value, np.ndarray):
        flags = value.flags
        return (f"{type(value).__name__}(dtype={value.dtype}, shape={value.shape}, C={flags.c_contiguous}, "
                f"aligned={flags.aligned}, writeable={flags.writeable}, values={np.asarray(value).tolist()})")
    return repr(value)


def _draws(name):
    """Which arguments to replace (one or two) and their (value, canonical)."""
    arguments = FUNCTIONS[name][1]
    names = sorted(arguments)
    return st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True).flatmap(
        lambda chosen: st.fixed_dictionaries({a: arguments[a][1] for a in chosen}))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # numpy's overflow warnings, on purpose
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_any_input_raises_value_error_naming_it_or_gives_the_float64_result(name):
    @FUZZ
    @given(cases=st.lists(_draws(name), min_size=CASES, max_size=CASES))
    def check(cases):
        for drawn in cases:
            _check(name, drawn)
    check()


def test_the_good_calls_are_good():
    """The unreplaced arguments give finite results (so that a replaced one is what is judged)."""
    for name, (function, arguments, _) in FUNCTIONS.items():
        got = _outcome(function, {a: good for a, (good, _) in arguments.items()})
        assert not isinstance(got, BaseException), f"{name}: {got!r}"


# -- every array form as the first call of a fresh process -------------------------------------------------
def fresh_process_forms():
    """In this process (which must not have called a kernel with an array yet): for each array form,
    a forked child makes it the first inverse_dynamics call (q, qd and qdd in that form), then passes
    every other form as q, and reports what differs from the float64 result. Forked children start
    from the same untouched numba dispatcher state, as a fresh process does, without importing again."""
    failures = []
    for first in ARRAY_FORMS:
        read, write = os.pipe()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:                                  # the child: report, then leave without cleanup
            os.close(read)
            calls = [{a: ARRAY_FORMS[first](v) for a, v in (("q", Q), ("qd", QD), ("qdd", QDD))}]
            calls += [dict(q=ARRAY_FORMS[form](Q), qd=(QD, QD), qdd=(QDD, QDD)) for form in ARRAY_FORMS
                      if form != first]
            lines = [f"{first} first, then q {_describe(c['q'][0])}: {problem}"
                     for c in calls for problem in _fresh_problems(c)]
            os.write(write, "\n".join(lines).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            failures += [line for line in pipe.read().splitlines() if line]
        os.waitpid(pid, 0)
    print("\n".join(failures) if failures else "ok")


def _fresh_problems(call):
    """What is wrong with inverse_dynamics(MODEL, **values of `call`), judged by the canonical values."""
    refused = [a for a, (_, canonical) in call.items() if canonical is REFUSED]
    got = _outcome(rd.inverse_dynamics, {a: v for a, (v, _) in call.items()})
    if isinstance(got, BaseException):
        if not isinstance(got, ValueError):
            return [f"{type(got).__name__}: {got}"]
        if not refused:
            return [f"refused: {got}"]
        return [] if _names(str(got), refused) else [f"the message names none of {refused}: {got}"]
    if refused:
        return [f"accepted, returned {got}"]
    expected = rd.inverse_dynamics(MODEL, **{a: canonical for a, (_, canonical) in call.items()})
    return [] if np.array_equal(got[0], expected) else [f"returned {got[0]} instead of {expected}"]


@pytest.mark.slow
def test_every_array_form_as_the_first_call_of_a_fresh_process():
    """Before native.py, a misaligned q (or a read-only one) first made every later big-endian q read as
    native bytes (wrong torques; an all-NaN big-endian q passed), a big-endian q first made misaligned
    ones raise TypeError, and a masked q first raised numba's NumbaTypeError."""
    run = run_python("""
        import test_fuzz_core
        test_fuzz_core.fresh_process_forms()
    """, timeout=600)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), (run.stdout[-3000:], run.stderr[-2000:])
