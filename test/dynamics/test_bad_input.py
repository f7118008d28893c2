"""Bad input raises ValueError naming the argument (or the URDF element); reasonable input forms
(lists, tuples, integer and float32 arrays, strided views, big-endian and misaligned arrays) are
accepted and give the float64 result; finite input whose result overflows raises a ValueError saying
what overflowed; a model keeps working after any of these errors. test_fuzz_core.py fuzzes the same
property over every public function."""
import re

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

from _fresh_python import run_python
from _random_trees import Joint, Link, random_state, random_tree

TREE = random_tree(300, 6, chain=True)      # square Jacobian: task_space_inertia needs no damping
MODEL = rd.load_urdf(TREE.to_urdf())
N = MODEL.nq
Q, QD, QDD = random_state(MODEL, np.random.default_rng(1))
TAU = np.linspace(-2.0, 2.0, N)

# (name, function, vector arguments, other arguments)
CALLS = [
    ("inverse_dynamics", rd.inverse_dynamics, dict(q=Q, qd=QD, qdd=QDD), dict(f_tip=np.ones(6))),
    ("forward_dynamics", rd.forward_dynamics, dict(q=Q, qd=QD, tau=TAU), dict(f_tip=np.ones(6))),
    ("forward_dynamics_via_mass_matrix", rd.forward_dynamics_via_mass_matrix, dict(q=Q, qd=QD, tau=TAU),
     dict(f_tip=np.ones(6))),
    ("mass_matrix", rd.mass_matrix, dict(q=Q), {}),
    ("mass_matrix_via_jacobians", rd.mass_matrix_via_jacobians, dict(q=Q), {}),
    ("gravity_torques", rd.gravity_torques, dict(q=Q), {}),
    ("coriolis_forces", rd.coriolis_forces, dict(q=Q, qd=QD), {}),
    ("bias_forces", rd.bias_forces, dict(q=Q, qd=QD), {}),
    ("coriolis_matrix", rd.coriolis_matrix, dict(q=Q, qd=QD), {}),
    ("christoffel_symbols", rd.christoffel_symbols, dict(q=Q), {}),
    ("mass_matrix_derivatives", rd.mass_matrix_derivatives, dict(q=Q), {}),
    ("kinetic_energy", rd.kinetic_energy, dict(q=Q, qd=QD), {}),
    ("potential_energy", rd.potential_energy, dict(q=Q), {}),
    ("closed_form_dynamics", lambda model, **kw: rd.closed_form_dynamics(model, **kw).M, dict(q=Q, qd=QD),
     {}),
    ("frame_pose", rd.frame_pose, dict(q=Q), dict(frame="tool0")),
    ("jacobian", rd.jacobian, dict(q=Q), dict(frame="tool0")),
    ("jacobian_derivative", rd.jacobian_derivative, dict(q=Q, qd=QD), dict(frame="tool0")),
    ("task_space_inertia", rd.task_space_inertia, dict(q=Q), {}),
    ("task_space_bias", rd.task_space_bias, dict(q=Q, qd=QD), {}),
    ("computed_torque", rd.computed_torque, dict(q=Q, qd=QD, q_des=QD, qd_des=QDD, qdd_des=TAU),
     dict(kp=4.0, kd=2.0)),
    ("friction_torques", rd.friction_torques, dict(qd=QD), {}),
    ("euler_step", rd.euler_step, dict(q=Q, qd=QD, tau=TAU), dict(dt=0.01)),
    ("semi_implicit_euler_step", rd.semi_implicit_euler_step, dict(q=Q, qd=QD, tau=TAU), dict(dt=0.01)),
    ("rk4_step", rd.rk4_step, dict(q=Q, qd=QD, tau=TAU), dict(dt=0.01)),
    ("simulate", lambda model, **kw: rd.simulate(model, **kw).q, dict(q0=Q, qd0=QD, tau=TAU),
     dict(dt=0.01, steps=3)),
]


def _call(entry, **override):
    _, f, vectors, others = entry
    return f(MODEL, **{**vectors, **others, **override})


def _bad_values():
    nan = np.array(Q)
    nan[2] = np.nan
    inf = np.array(Q)
    inf[-1] = -np.inf
    masked = np.ma.masked_array(Q, mask=np.arange(N) == 1)
    # Before the fix the next five were converted silently: complex to its real part (a
    # ComplexWarning), text through float('1.0'), booleans to 0 and 1, a masked array to its data.
    return {"nan": nan, "inf": inf, "too-long": np.zeros(N + 1), "too-short-list": [0.0] * (N - 1),
            "2-d": np.zeros((N, 1)), "text": "abc", "none": None, "dict": {},
            "complex": Q + 1j, "complex-zero-imaginary": Q.astype(complex),
            "numeric-text": [str(x) for x in Q], "bool": Q > 0, "masked": masked}


def _misreported(cases):
    """The (function-arg-bad) cases that do not raise a ValueError naming the argument."""
    wrong = []
    for entry, arg, bad in cases:
        try:
            _call(entry, **{arg: _bad_values()[bad]})
            wrong.append(f"{entry[0]}({arg}={bad}): no error")
        except ValueError as e:
            if not re.search(rf"(?<![\w]){re.escape(arg)}(?![\w])", str(e)):
                wrong.append(f"{entry[0]}({arg}={bad}): {e}")
        except Exception as e:  # reported as the failure
            wrong.append(f"{entry[0]}({arg}={bad}): {type(e).__name__}: {e}")
    return wrong


@pytest.mark.parametrize("entry", CALLS, ids=[c[0] for c in CALLS])
def test_bad_vector_raises_value_error_naming_it(entry):
    """NaN, ±inf, wrong length (float64 and list), wrong rank, text and None in every vector argument:
    a ValueError whose message names the argument."""
    wrong = _misreported([(entry, arg, bad) for arg in entry[2] for bad in _bad_values()])
    assert not wrong, "\n".join(wrong)


TIP_CALLS = [e for e in CALLS if "f_tip" in e[3]]


@pytest.mark.parametrize("entry", TIP_CALLS, ids=lambda e: e[0])
@pytest.mark.parametrize("bad", [np.zeros(5), [1.0] * 7, np.array([0, 0, np.nan, 0, 0, 0]), np.zeros((6, 1)),
                                 "wrench"],
                         ids=["short", "long-list", "nan", "2-d", "text"])
def test_bad_tip_wrench_names_f_tip(entry, bad):
    with pytest.raises(ValueError, match="f_tip"):
        _call(entry, f_tip=bad)


FRAME_CALLS = [
    ("frame_pose", lambda f: rd.frame_pose(MODEL, Q, f)),
    ("jacobian", lambda f: rd.jacobian(MODEL, Q, f)),
    ("jacobian_derivative", lambda f: rd.jacobian_derivative(MODEL, Q, QD, f)),
    ("task_space_inertia", lambda f: rd.task_space_inertia(MODEL, Q, f)),
    ("task_space_bias", lambda f: rd.task_space_bias(MODEL, Q, QD, f)),
    ("inverse_dynamics", lambda f: rd.inverse_dynamics(MODEL, Q, QD, QDD, f_tip=np.ones(6), frame=f)),
    ("forward_dynamics", lambda f: rd.forward_dynamics(MODEL, Q, QD, TAU, f_tip=np.ones(6), frame=f)),
    ("forward_dynamics_via_mass_matrix",
     lambda f: rd.forward_dynamics_via_mass_matrix(MODEL, Q, QD, TAU, f_tip=np.ones(6), frame=f)),
    ("rk4_step", lambda f: rd.rk4_step(MODEL, Q, QD, TAU, 0.01, f_tip=np.ones(6), frame=f)),
    ("simulate", lambda f: rd.simulate(MODEL, Q, QD, TAU, 0.01, 2, f_tip=np.ones(6), frame=f)),
]


@pytest.mark.parametrize("name,call", FRAME_CALLS, ids=[c[0] for c in FRAME_CALLS])
@pytest.mark.parametrize("frame", ["no_such_link", 3, "TOOL0"])
def test_unknown_frame_raises_value_error(name, call, frame):
    with pytest.raises(ValueError, match=rf"unknown frame {re.escape(repr(frame))}"):
        call(frame)


@pytest.mark.parametrize("call", [
    lambda r: rd.jacobian(MODEL, Q, "tool0", r), lambda r: rd.jacobian_derivative(MODEL, Q, QD, "tool0", r),
    lambda r: rd.task_space_inertia(MODEL, Q, "tool0", r),
    lambda r: rd.task_space_bias(MODEL, Q, QD, "tool0", r)],
    ids=["jacobian", "jacobian_derivative", "task_space_inertia", "task_space_bias"])
@pytest.mark.parametrize("reference", ["spatial", "Body", None, 0])
def test_unknown_reference_raises_value_error(call, reference):
    with pytest.raises(ValueError, match="reference"):
        call(reference)


@pytest.mark.parametrize("call,match", [
    (lambda: rd.task_space_inertia(MODEL, Q, damping=-1e-3), "damping"),
    (lambda: rd.task_space_inertia(MODEL, Q, damping=np.nan), "damping"),
    (lambda: rd.task_space_bias(MODEL, Q, QD, damping=-1.0), "damping"),
    (lambda: rd.inverse_dynamics(MODEL, Q, QD, QDD, friction=(-0.1, 0.0)), "viscous"),
    (lambda: rd.forward_dynamics(MODEL, Q, QD, TAU, friction=(np.full(N, -0.1), 0.0)), "viscous"),
    (lambda: rd.forward_dynamics_via_mass_matrix(MODEL, Q, QD, TAU, friction=(0.0, -0.1)), "coulomb"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, 2, friction=(-0.1, 0.0)), "viscous"),
    (lambda: rd.rk4_step(MODEL, Q, QD, TAU, 0.01, friction=(0.0, -0.1)), "coulomb"),
    (lambda: rd.friction_torques(MODEL, QD, viscous=-1.0), "viscous"),
    (lambda: rd.inverse_dynamics(MODEL, Q, QD, QDD, friction=(np.ones(N - 1), 0.0)), "viscous"),
    (lambda: rd.inverse_dynamics(MODEL, Q, QD, QDD, friction=(np.nan, 0.0)), "viscous"),
    (lambda: rd.inverse_dynamics(MODEL, Q, QD, QDD, friction="yes"), "friction"),
    (lambda: rd.computed_torque(MODEL, Q, QD, Q, QD, QDD, np.ones(N - 1), 1.0), "kp"),
    (lambda: rd.computed_torque(MODEL, Q, QD, Q, QD, QDD, 1.0, np.nan), "kd"),
    (lambda: rd.rk4_step(MODEL, Q, QD, TAU, -0.01), "dt"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, np.inf, 2), "dt"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, -1), "steps"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, 2.5), "steps"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, 2, method="midpoint"), "method"),
    (lambda: rd.simulate(MODEL, Q, QD, np.zeros((2, N)), 0.01, 3), "tau"),
    (lambda: rd.simulate(MODEL, Q, QD, lambda t, q, qd: np.zeros(2), 0.01, 3), "tau"),
    (lambda: rd.simulate(MODEL, Q, QD, lambda t, q, qd: np.full(N, np.nan), 0.01, 3), "tau"),
    (lambda: rd.inverse_dynamics_trajectory(MODEL, np.zeros((3, N)), np.zeros((3, N)), np.zeros((2, N))),
     "qdd"),
    (lambda: rd.inverse_dynamics_trajectory(MODEL, np.zeros((3, N)), np.full((3, N), np.nan),
                                            np.zeros((3, N))), "qd"),
    (lambda: rd.inverse_dynamics_trajectory(MODEL, Q, QD, QDD), "q"),
    (lambda: rd.forward_dynamics_trajectory(MODEL, np.zeros((3, N)), np.zeros((3, N)), np.zeros((3, N - 1))),
     "tau"),
    (lambda: rd.mass_matrix_trajectory(MODEL, np.zeros((3, N + 1))), "q"),
    (lambda: MODEL.joint_index("no_such_joint"), "no_such_joint"),
    # Before the fix: TypeError, OverflowError, MemoryError, or a ValueError not naming the argument.
    (lambda: rd.computed_torque(MODEL, Q, QD, Q, QD, QDD, 1j, 1.0), "kp"),
    (lambda: rd.computed_torque(MODEL, Q, QD, Q, QD, QDD, 1.0, "2"), "kd"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, None), "steps"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, np.inf), "steps"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, 1e12), "steps"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, 10 ** 30), "steps"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, np.nan), "steps"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 0.01, True), "steps"),
    (lambda: rd.saturate_effort(MODEL, {}), "tau"),
    (lambda: rd.enforce_position_limits(MODEL, {}, QD), "q"),
    (lambda: rd.enforce_position_limits(MODEL, Q, {1: 2.0}), "qd"),
    (lambda: rd.rk4_step(MODEL, Q, QD, TAU, "0.01"), "dt"),
    (lambda: rd.task_space_inertia(MODEL, Q, damping=1e-3 + 0j), "damping"),
    (lambda: rd.inverse_dynamics(MODEL, Q, QD, QDD, friction=(0.1j, 0.0)), "viscous"),
    (lambda: rd.inverse_dynamics_trajectory(MODEL, np.zeros((3, N)), np.zeros((3, N)), np.zeros((3, N)),
                                            f_tip=np.ones(6) + 1j), "f_tip"),
], ids=lambda x: "" if isinstance(x, str) else None)
def test_bad_option_raises_value_error_naming_it(call, match):
    with pytest.raises(ValueError, match=rf"(?<![\w]){re.escape(match)}(?![\w])"):
        call()


def _prismatic_at(value):
    q = np.array(Q)
    q[[t == "prismatic" for t in MODEL.joint_types]] = value
    return q


@pytest.mark.parametrize("call,match", [
    (lambda: rd.inverse_dynamics(MODEL, Q, np.full(N, 1e155), QDD), r"tau.*\bqd\b"),
    (lambda: rd.coriolis_forces(MODEL, Q, np.full(N, 1e155)), r"c\(q, qd\).*\bqd\b"),
    (lambda: rd.forward_dynamics(MODEL, Q, np.full(N, 1e155), TAU), r"qdd.*\bqd\b"),
    (lambda: rd.mass_matrix(MODEL, _prismatic_at(1e300)), r"M\(q\).*\bq\b"),
    (lambda: rd.simulate(MODEL, Q, QD, TAU, 1.0, 50), r"diverged.*\bdt\b"),
    (lambda: rd.rk4_step(MODEL, Q, QD, TAU, 1e300), r"diverged.*\bdt\b"),
    (lambda: rd.inverse_dynamics(MODEL, Q, np.full(N, 2.0), QDD, friction=(1e308, 0.0)), r"friction"),
    (lambda: rd.kinetic_energy(MODEL, Q, np.full(N, 1e155)), r"kinetic energy.*\bqd\b"),
    (lambda: rd.computed_torque(MODEL, Q, QD, Q + 2.0, QD, QDD, 1e308, 1.0), r"kp"),
], ids=["inverse_dynamics", "coriolis_forces", "forward_dynamics", "mass_matrix",
        "simulate", "rk4_step", "friction", "kinetic_energy", "computed_torque"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # numpy says "overflow" too
def test_finite_input_that_overflows_raises_value_error_saying_what(call, match):
    """Before the fix these returned NaN or inf: q̇ = 1e155 squares to inf and inf - inf is NaN; a
    step of 1 s (or 1e300 s) diverges."""
    with pytest.raises(ValueError, match="overflowed|diverged") as error:
        call()
    assert re.search(match, str(error.value)), str(error.value)


def test_task_space_inertia_without_damping_below_six_joints_names_damping():
    model = rd.load_urdf(random_tree(320, 3, chain=True).to_urdf())
    with pytest.raises(ValueError, match="damping"):
        rd.task_space_inertia(model, np.zeros(3))


# -- accepted forms ------------------------------------------------------------------------------
FORMS = {
    "list": list,
    "tuple": tuple,
    "float32": lambda x: np.asarray(x, np.float32),
    "int64": lambda x: np.asarray(x, np.int64),
    "int32": lambda x: np.asarray(x, np.int32),
    "strided-view": lambda x: np.repeat(np.asarray(x, float), 2)[::2],
    "fortran-column": lambda x: np.asfortranarray(np.column_stack([x, x]))[:, 0],
    "reversed-view": lambda x: np.asarray(x, float)[::-1][::-1],
    "read-only": lambda x: _read_only(x),
    # Misaligned before big-endian: after a misaligned array, numba gave big-endian ones the native
    # type code and the kernels read their bytes as native (kernels/native.py).
    "misaligned": lambda x: _misaligned(x),
    "big-endian": lambda x: np.asarray(x, ">f8"),
    "big-endian-read-only": lambda x: _read_only(np.asarray(x, ">f8")),
    "long-double": lambda x: np.asarray(x, np.longdouble),
    "object": lambda x: np.array([float(v) for v in x], dtype=object),
    "masked-nothing-masked": lambda x: np.ma.masked_array(np.asarray(x, float), mask=False),
}


def _read_only(x):
    a = np.array(x)
    a.setflags(write=False)
    return a


def _misaligned(x):
    a = np.zeros(8 * len(x) + 1, np.uint8)[1:].view(np.float64)
    a[:] = x
    return a


def _exact_values(entry):
    """The call's vectors as small positive integers, so that every form (int and float32 included)
    holds exactly the same numbers. Positive on purpose: before 5cfc768 non-negative int64 vectors were
    read as float64 bit patterns (≈ 0) while negative ones (NaN patterns) took the converting path."""
    return {k: np.abs(np.round(v * 2.0)) + 1.0 for k, v in entry[2].items()}


def _form_mismatches(entry, forms):
    values = _exact_values(entry)
    expected = np.asarray(_call(entry, **values), float)
    wrong = []
    for form in forms:
        got = np.asarray(_call(entry, **{k: FORMS[form](v) for k, v in values.items()}), float)
        if not np.array_equal(got, expected):
            wrong.append(f"{entry[0]} with {form} vectors: max difference {np.abs(got - expected).max():.3g}")
    return wrong


@pytest.mark.parametrize("entry", CALLS, ids=[c[0] for c in CALLS])
def test_vector_forms_are_accepted(entry):
    """Lists, tuples, float32/int32/int64 arrays, strided and Fortran-order views, read-only arrays give
    exactly the float64 result."""
    wrong = _form_mismatches(entry, FORMS)
    assert not wrong, "\n".join(wrong)


def test_tip_wrench_forms_are_accepted():
    F = np.array([1.0, -2.0, 3.0, 0.0, 5.0, -1.0])
    expected = rd.inverse_dynamics(MODEL, Q, QD, QDD, f_tip=F)
    for form in ("list", "tuple", "float32", "strided-view", "read-only"):   # int64 below
        np.testing.assert_array_equal(rd.inverse_dynamics(MODEL, Q, QD, QDD, f_tip=FORMS[form](F)), expected)
        np.testing.assert_array_equal(rd.forward_dynamics(MODEL, Q, QD, TAU, f_tip=FORMS[form](F)),
                                      rd.forward_dynamics(MODEL, Q, QD, TAU, f_tip=F))


def test_integer_tip_wrench_is_accepted():
    F = np.array([1, 2, 3, 0, 5, 1])       # non-negative: see _exact_values
    np.testing.assert_array_equal(rd.forward_dynamics(MODEL, Q, QD, TAU, f_tip=F),
                                  rd.forward_dynamics(MODEL, Q, QD, TAU, f_tip=F.astype(float)))


def test_model_still_works_after_errors():
    before = (rd.inverse_dynamics(MODEL, Q, QD, QDD), rd.mass_matrix(MODEL, Q),
              rd.jacobian(MODEL, Q, "tool0"), rd.forward_dynamics(MODEL, Q, QD, TAU),
              rd.coriolis_matrix(MODEL, Q, QD))
    for bad in (np.zeros(N + 1), np.full(N, np.nan), "abc", [1.0] * (N - 1)):
        for call in (lambda: rd.inverse_dynamics(MODEL, bad, QD, QDD),
                     lambda: rd.mass_matrix(MODEL, bad),
                     lambda: rd.forward_dynamics(MODEL, Q, bad, TAU),
                     lambda: rd.coriolis_matrix(MODEL, Q, bad),
                     lambda: rd.jacobian(MODEL, Q, "no_such_frame"),
                     lambda: rd.simulate(MODEL, Q, QD, TAU, -1.0, 3)):
            with pytest.raises(ValueError):
                call()
    after = (rd.inverse_dynamics(MODEL, Q, QD, QDD), rd.mass_matrix(MODEL, Q), rd.jacobian(MODEL, Q, "tool0"),
             rd.forward_dynamics(MODEL, Q, QD, TAU), rd.coriolis_matrix(MODEL, Q, QD))
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)


# -- malformed URDF ------------------------------------------------------------------------------------
BASE = random_tree(105, 3)      # joints joint1..joint3 (continuous), links link1..link3, tool0


def _edited(edit):
    t = BASE.copy()
    edit(t)
    return t.to_urdf()


def _without_mass(urdf, link):
    head, tail = urdf.split(f'<link name="{link}">')
    body, rest = tail.split("</link>", 1)
    body = "\n".join(line for line in body.splitlines() if "<mass " not in line)
    return f'{head}<link name="{link}">{body}</link>{rest}'


def _add_massless_leaf(t):
    """A prismatic joint that moves nothing: its mass matrix column would be zero."""
    j = t.joint("joint1")
    t.links.append(Link("empty"))
    t.joints.append(Joint("joint_empty", "prismatic", "link1", "empty", np.zeros(3), np.zeros(3),
                          axis=np.array([0.0, 0.0, 1.0]), lower=-1.0, upper=1.0, effort=1.0, velocity=1.0,
                          damping=0.0, friction=0.0))
    assert j.child == "link1"


def _set(obj, **attrs):
    for k, v in attrs.items():
        setattr(obj, k, v)


MALFORMED = [
    ("broken-xml", lambda: rd.load_urdf(BASE.to_urdf().replace("</robot>", "")), r"malformed URDF"),
    ("missing-mass", lambda: rd.load_urdf(_without_mass(BASE.to_urdf(), "link1")),
     r"(?s)link\[@name='link1'\].*mass"),
    ("indefinite-inertia",
     lambda: rd.load_urdf(_edited(lambda t: _set(t.link("link2").inertial,
                                                 inertia=np.diag([1.0, 1.0, -0.5])))),
     r"'link2'.*positive"),
    ("negative-mass", lambda: rd.load_urdf(_edited(lambda t: _set(t.link("link2").inertial, mass=-1.0))),
     r"'link2'.*mass"),
    ("floating-joint", lambda: rd.load_urdf(_edited(lambda t: _set(t.joint("joint2"), type="floating"))),
     r"'joint2'.*floating"),
    ("planar-joint", lambda: rd.load_urdf(_edited(lambda t: _set(t.joint("joint2"), type="planar"))),
     r"'joint2'.*planar"),
    ("unknown-joint-type", lambda: rd.load_urdf(_edited(lambda t: _set(t.joint("joint2"), type="ball"))),
     r"(?s)joint\[@name='joint2'\].*ball"),
    ("zero-axis", lambda: rd.load_urdf(_edited(lambda t: _set(t.joint("joint2"), axis=np.zeros(3)))),
     r"'joint2'.*axis"),
    ("unknown-child-link", lambda: rd.load_urdf(_edited(lambda t: _set(t.joint("joint2"), child="link9"))),
     r"'joint2'.*'link9'"),
    ("massless-moving-link", lambda: rd.load_urdf(_edited(_add_massless_leaf)), r"'joint_empty'.*mass"),
    ("two-roots", lambda: rd.load_urdf('<robot name="r"><link name="a"/><link name="b"/></robot>'), r"root"),
    ("no-links", lambda: rd.load_urdf('<robot name="r"></robot>'), r"link"),
    ("missing-file", lambda: rd.load_urdf("/no/such/robot.urdf"), r"/no/such/robot\.urdf"),
    ("unknown-root-link", lambda: rd.load_urdf(BASE.to_urdf(), root_link="nowhere"), r"root_link.*'nowhere'"),
    ("unknown-tip-link", lambda: rd.load_urdf(BASE.to_urdf(), tip_link="nowhere"), r"tip_link.*'nowhere'"),
    ("tip-not-below-root", lambda: rd.load_urdf(BASE.to_urdf(), root_link="link3", tip_link="link1"),
     r"tip_link 'link1'.*root_link 'link3'"),
    ("unknown-locked-joint", lambda: rd.load_urdf(BASE.to_urdf(), locked_joints={"jointX": 0.3}),
     r"locked_joints.*'jointX'"),
    ("non-finite-locked-position", lambda: rd.load_urdf(BASE.to_urdf(), locked_joints={"joint1": np.nan}),
     r"locked_joints.*'joint1'"),
    ("non-finite-gravity", lambda: rd.load_urdf(BASE.to_urdf(), gravity=(0.0, 0.0, np.inf)), r"gravity"),
    ("gravity-wrong-length", lambda: rd.load_urdf(BASE.to_urdf(), gravity=(0.0, -9.81)), r"gravity"),
    ("negative-urdf-damping",
     lambda: rd.load_urdf(_edited(lambda t: _set(t.joint("joint2"), damping=-0.5))),
     r"'joint2'.*damping"),
    ("negative-urdf-friction",
     lambda: rd.load_urdf(_edited(lambda t: _set(t.joint("joint3"), friction=-0.1))),
     r"'joint3'.*friction"),
]
@pytest.mark.parametrize("load,match",
                         [pytest.param(load, match, id=name) for name, load, match in MALFORMED])
def test_malformed_urdf_raises_value_error_naming_the_element(load, match):
    with pytest.raises(ValueError, match=match):
        load()


def test_loader_still_works_after_errors():
    for _, load, _ in MALFORMED:
        with pytest.raises(ValueError):
            load()
    model = rd.load_urdf(BASE.to_urdf())
    np.testing.assert_array_equal(rd.mass_matrix(model, np.ones(3)),
                                  rd.mass_matrix(rd.load_urdf(BASE.to_urdf()), np.ones(3)))


# -- a Data of another model ------------------------------------------------------------------------------
def test_data_of_another_model_raises_value_error():
    """Run in a subprocess: before 5cfc768 the kernels wrote past the smaller workspace (heap
    corruption, the interpreter aborted), which would take the whole test session down."""
    run = run_python("""
        import numpy as np
        from robot_dynamics_ros import dynamics as rd
        from _random_trees import random_tree
        big = rd.load_urdf(random_tree(112, 12).to_urdf())
        small = rd.load_urdf(random_tree(101, 1).to_urdf())
        try:
            for _ in range(50):
                rd.inverse_dynamics(big, np.ones(12), np.ones(12), np.ones(12), data=rd.Data(small))
        except ValueError as e:
            print("ValueError", e)
    """, timeout=120)
    assert run.returncode == 0 and run.stdout.startswith("ValueError") and "data" in run.stdout, (
        run.returncode, run.stdout, run.stderr[-500:])
