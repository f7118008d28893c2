"""Model building: linear in the number of bodies, refuses what is not a tree or not physical, and names
the element or argument at fault.

The regression tests of the reliability probe on main: a cycle of joints hung load_urdf; Model kept
a tuple of ancestors per body (quadratic: 2.1 GB at 10k links); arguments of the wrong kind gave a
TypeError; an origin at 1e300 m, an all-zero Glist or a joint that moves nothing were accepted, and
ABA then returned NaN or 3e17 where the mass-matrix route raised. Memory is compared between sizes,
never timed (machines are noisy); the one deadline is a hang guard, far above the milliseconds the
loads take."""
import contextlib
import gc
import re
import signal
import sys
import tracemalloc

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

from _random_trees import long_chain_urdf, random_state, random_tree


def _link(name, mass=1.0, inertia=(0.1, 0.1, 0.1), xyz="0 0 0"):
    ixx, iyy, izz = inertia
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial></link>')


def _joint(name, parent, child, kind="revolute", xyz="0 0 0.1", axis="0 0 1"):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/><limit effort="1" velocity="1" lower="-1" upper="1"/>'
            '</joint>')


def _robot(*elements):
    return '<robot name="r">' + "".join(elements) + "</robot>"


@contextlib.contextmanager
def _deadline(seconds):
    """TimeoutError if the block is still running after `seconds` (SIGALRM: pytest runs tests in the
    main thread). Guards against hangs; not a timing assertion."""
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- cycles (probe item 3) --------------------------------------------------------------------------------
# base -j1-> a;  b -j2-> c -j3-> b (a cycle no root reaches), d hangs below it
CYCLE = _robot(_link("base"), _link("a"), _link("b"), _link("c"), _link("d"), _joint("j1", "base", "a"),
               _joint("j2", "b", "c"), _joint("j3", "c", "b"), _joint("j4", "c", "d"))
# every link in a cycle: no root at all
ALL_CYCLE = _robot(_link("a"), _link("b"), _link("c"), _joint("j1", "a", "b"), _joint("j2", "b", "c"),
                   _joint("j3", "c", "a"))


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM")
@pytest.mark.parametrize("urdf,root_link,joints", [
    (CYCLE, None, ("j2", "j3")), (CYCLE, "b", ("j2", "j3")), (CYCLE, "d", ("j2", "j3")),
    (CYCLE, "a", ("j2", "j3")), (ALL_CYCLE, None, ("j1", "j2", "j3")), (ALL_CYCLE, "b", ("j1", "j2", "j3")),
], ids=["unreached-cycle", "root-in-cycle", "root-below-cycle", "root-elsewhere", "no-root",
        "no-root-given-root"])
def test_a_cycle_of_joints_raises_value_error_naming_it(urdf, root_link, joints):
    """Before: an endless loop (_pose_from_urdf_root), or a list growing without bound when root_link
    was in the cycle."""
    with _deadline(10), pytest.raises(ValueError, match="cycle") as error:
        rd.load_urdf(urdf, root_link=root_link)
    assert set(re.findall(r"'(j\d)'", str(error.value))) == set(joints), str(error.value)


# -- linear building (probe item 4) -----------------------------------------------------------------------
def _stored_bytes(obj, seen=None):
    """Bytes that obj and everything it refers to hold, each object once (numpy arrays by their
    buffers, views by their base)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return sys.getsizeof(obj) if obj.base is None else _stored_bytes(obj.base, seen)
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        return size + sum(_stored_bytes(k, seen) + _stored_bytes(v, seen) for k, v in obj.items())
    if isinstance(obj, (tuple, list)):
        return size + sum(_stored_bytes(x, seen) for x in obj if not isinstance(x, (int, float)))
    slots = getattr(type(obj), "__slots__", ())
    return size + sum(_stored_bytes(getattr(obj, name), seen) for name in slots if hasattr(obj, name))


def _traced_peak(text):
    """Peak bytes allocated while load_urdf builds the model (tracemalloc: numpy's buffers included)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        rd.load_urdf(text)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_model_memory_is_linear_in_the_number_of_bodies():
    """A 10k-link chain's model holds, and building it peaks at, about 4 times what a 2.5k-link chain's
    does (linear), not 16 times: before, every body kept the tuple of its ancestors (0.6 s and 175 MB
    at 1k links, 12 s and 2.1 GB at 10k, out of memory at 100k)."""
    small_text, large_text = long_chain_urdf(2_500, seed=1), long_chain_urdf(10_000, seed=1)
    small, large = rd.load_urdf(small_text), rd.load_urdf(large_text)
    assert _stored_bytes(large) / _stored_bytes(small) < 6, (_stored_bytes(small), _stored_bytes(large))
    # the ancestor relation is the parent array: support() walks it
    assert large.support("tool0") == tuple(range(10_000))
    assert large.support("link5000") == tuple(range(5_000))
    assert large.support("base_link") == ()
    small_peak, large_peak = _traced_peak(small_text), _traced_peak(large_text)
    assert large_peak / small_peak < 6, (small_peak, large_peak)


def test_kernels_run_on_a_20k_link_chain():
    """No recursion anywhere: gravity torques, ABA and RNEA on a chain far deeper than Python's
    recursion limit; ABA and RNEA agree (q̈ = M^-1 (τ - b), then τ = M q̈ + b)."""
    model = rd.load_urdf(long_chain_urdf(20_000, seed=2))
    rng = np.random.default_rng(3)
    q, qd = 0.1 * random_state(model, rng)[0], 0.1 * rng.normal(size=model.nq)
    tau = rng.normal(size=model.nq)
    g = rd.gravity_torques(model, q)
    qdd = rd.forward_dynamics(model, q, qd, tau)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(qdd))
    back = rd.inverse_dynamics(model, q, qd, qdd)
    assert np.abs(back - tau).max() <= 1e-8 * max(1.0, np.abs(g).max())
    assert np.all(np.isfinite(rd.frame_pose(model, q, "tool0")))
    # K = ½ q̇ᵀ M q̇ in O(n) memory (before: every link's body Jacobian, (n, 6, n) = 19 GB here);
    # M q̇ = τ(q, 0, q̈ = q̇) - g(q) (eq. 9.81)
    rd.kinetic_energy(model, q, qd)         # loads (or compiles) the kernel outside the window
    gc.collect()
    tracemalloc.start()
    try:
        K = rd.kinetic_energy(model, q, qd)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, peak
    M_qd = rd.inverse_dynamics(model, q, np.zeros(model.nq), qd) - g
    assert abs(K - 0.5 * qd @ M_qd) <= 1e-9 * abs(K), (K, 0.5 * qd @ M_qd)


# -- arguments of the wrong kind (probe item 8) -----------------------------------------------------------
CHAIN = random_tree(400, 4, chain=True)        # joint1..joint4, link1..link4, tool0


@pytest.mark.parametrize("kwargs,name", [
    (dict(locked_joints={"joint2": None}), "locked_joints"),
    (dict(locked_joints={"joint2": "0.5"}), "locked_joints"),
    (dict(locked_joints={"joint2": [0.1]}), "locked_joints"),
    (dict(locked_joints={"joint2": np.inf}), "locked_joints"),
    (dict(locked_joints=["joint2"]), "locked_joints"),
    (dict(locked_joints="joint2"), "locked_joints"),
    (dict(root_link=["base_link"]), "root_link"),
    (dict(root_link=0), "root_link"),
    (dict(tip_link=("tool0",)), "tip_link"),
    (dict(gravity=(0.0, 0.0, -1e300)), "gravity"),
], ids=lambda x: None if isinstance(x, dict) else x)
def test_argument_of_the_wrong_kind_raises_value_error_naming_it(kwargs, name):
    """Before: TypeError (float(None), an unhashable list as a link name)."""
    with pytest.raises(ValueError, match=rf"(?<![\w]){re.escape(name)}(?![\w])"):
        rd.load_urdf(CHAIN.to_urdf(), **kwargs)


def test_locked_positions_of_any_real_type_are_accepted():
    text = CHAIN.to_urdf()
    expected = rd.load_urdf(text, locked_joints={"joint2": 0.5, "joint3": 0.0})
    for value, zero in ((np.float32(0.5), 0), (np.float64(0.5), np.int64(0))):
        model = rd.load_urdf(text, locked_joints={"joint2": value, "joint3": zero})
        np.testing.assert_array_equal(model._packed, expected._packed)


# -- physically meaningless or overflowing numbers (probe item 10) ----------------------------------------
def _one_link(link=None, joint=None):
    return _robot(_link("base"), link or _link("a"), joint or _joint("j1", "base", "a"))


@pytest.mark.parametrize("urdf,match", [
    (_one_link(joint=_joint("j1", "base", "a", xyz="1e300 0 0")), r"'j1'.*origin"),
    (_one_link(joint=_joint("j1", "base", "a", xyz="0 1e6 0")), r"'j1'.*origin"),
    (_one_link(joint=_joint("j1", "base", "a", xyz="0 0 nan")), r"'j1'.*origin"),
    (_one_link(link=_link("a", xyz="0 0 2e6")), r"'a'.*origin"),
    (_one_link(link=_link("a", mass=1e300)), r"'a'.*mass"),
    (_one_link(link=_link("a", mass=np.nan)), r"'a'.*mass"),
    (_one_link(link=_link("a", inertia=(1e300, 1e300, 1e300))), r"'a'.*inertia"),
    (_one_link(link=_link("a", inertia=(1.0, 1.0, -0.5))), r"'a'.*positive semi-definite"),
], ids=["origin-1e300", "origin-1e6", "origin-nan", "inertial-origin-2e6", "mass-1e300", "mass-nan",
        "inertia-1e300", "inertia-indefinite"])
def test_meaningless_urdf_numbers_raise_value_error_naming_the_element(urdf, match):
    """Before, the 1e300 origin loaded: ABA gave NaN while the mass-matrix route gave 100."""
    with pytest.raises(ValueError, match=match):
        rd.load_urdf(urdf)


def test_values_within_the_bounds_load():
    """Just inside model.MAX_LENGTH, a 1e9 kg mass and a massless link with inertia about one axis
    only (as ANYmal's and HyQ's URDFs have; the triangle inequality is not required)."""
    rd.load_urdf(_one_link(joint=_joint("j1", "base", "a", xyz="0 0 999999.0")))
    rd.load_urdf(_one_link(link=_link("a", mass=1e9)))
    rd.load_urdf(_robot(_link("base"), _link("a"), _link("flat", mass=0.0, inertia=(0.0, 0.0, 3e-3)),
                        _joint("j1", "base", "a"), _joint("fixed", "a", "flat", kind="fixed")))


# the textbook's 3-link example (test_ref_modern_robotics): Mlist, Glist, Slist
MLIST = [np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.089159], [0, 0, 0, 1]], float),
         np.array([[0, 0, 1, 0.28], [0, 1, 0, 0.13585], [-1, 0, 0, 0], [0, 0, 0, 1]], float),
         np.array([[1, 0, 0, 0], [0, 1, 0, -0.1197], [0, 0, 1, 0.395], [0, 0, 0, 1]], float),
         np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.14225], [0, 0, 0, 1]], float)]
GLIST = [np.diag([0.010267, 0.010267, 0.00666, 3.7, 3.7, 3.7]),
         np.diag([0.22689, 0.22689, 0.0151074, 8.393, 8.393, 8.393]),
         np.diag([0.0494433, 0.0494433, 0.004095, 2.275, 2.275, 2.275])]
SLIST = np.array([[0, 0, 1, 0, 0, 0], [0, 1, 0, -0.089, 0, 0], [0, 1, 0, -0.089, 0, 0.425]], float).T


def _edited(items, i, value):
    items = [np.array(x) for x in items]
    items[i] = value
    return items


def _moved(M, x):
    M = np.array(M)
    M[0, 3] = x
    return M


def _scaled(M, s):
    M = np.array(M)
    M[:3, :3] *= s
    return M


@pytest.mark.parametrize("Mlist,Glist,Slist,match", [
    (MLIST, [np.zeros((6, 6))] * 3, SLIST, r"'joint1'.*mass"),
    (MLIST, _edited(GLIST, 2, np.zeros((6, 6))), SLIST, r"'joint3'.*mass"),
    (_edited(MLIST, 1, _moved(MLIST[1], 1e300)), GLIST, SLIST, r"Mlist\[1\].*1e\+06 m"),
    (_edited(MLIST, 2, _scaled(MLIST[2], 2.0)), GLIST, SLIST, r"Mlist\[2\].*rigid"),
    (_edited(MLIST, 0, np.full((4, 4), np.nan)), GLIST, SLIST, r"Mlist\[0\]"),
    (MLIST, _edited(GLIST, 0, np.full((6, 6), np.nan)), SLIST, r"Glist\[0\]"),
    (MLIST, _edited(GLIST, 1, np.diag([1.0, 1.0, -0.5, 2.0, 2.0, 2.0])), SLIST, r"Glist\[1\].*positive"),
    (MLIST, _edited(GLIST, 1, np.diag([1.0, 1.0, 1.0, 1e300, 1e300, 1e300])), SLIST, r"Glist\[1\].*mass"),
    (MLIST, GLIST, np.where(SLIST == 0.425, np.nan, SLIST), "Slist"),
], ids=["zero-Glist", "zero-last-G", "Mlist-1e300", "Mlist-not-rigid", "Mlist-nan", "Glist-nan",
        "Glist-indefinite", "Glist-mass-1e300", "Slist-nan"])
def test_meaningless_modern_robotics_lists_raise_value_error_naming_the_element(Mlist, Glist, Slist, match):
    """Before, an all-zero Glist was accepted and forward_dynamics returned NaN."""
    with pytest.raises(ValueError, match=match):
        rd.from_modern_robotics(Mlist, Glist, Slist)


# -- duplicate names (probe item 11) ----------------------------------------------------------------------
@pytest.mark.parametrize("urdf,match", [
    (_robot(_link("base"), _link("a"), _link("b"), _joint("j", "base", "a"), _joint("j", "a", "b")),
     r"duplicate joint name 'j'"),
    (_robot(_link("base"), _link("a"), _link("a", mass=5.0), _joint("j", "base", "a")),
     r"duplicate link name 'a'"),
], ids=["joint", "link"])
def test_duplicate_names_raise_value_error_naming_them(urdf, match):
    """Before: accepted (a node could never address both joints; the last link of a name won)."""
    with pytest.raises(ValueError, match=match):
        rd.load_urdf(urdf)


def test_model_refuses_duplicate_joint_names():
    model = rd.load_urdf(CHAIN.to_urdf())
    names = list(model.joint_names)
    names[2] = names[0]
    with pytest.raises(ValueError, match=rf"duplicate joint name '{names[0]}'"):
        model.replace(joint_names=names)


# -- a joint that moves nothing: M singular (probe item 11) -----------------------------------------------
FLAT = _link("a", mass=0.0, inertia=(0.1, 0.1, 0.0))              # no inertia about z
POINT = _link("a", mass=1.0, inertia=(0.0, 0.0, 0.0))             # a point mass at the origin
SINGULAR = {
    # massless, inertia about x and y only; the joint turns about z
    "no-inertia-about-the-axis": (_robot(_link("base"), FLAT, _joint("j1", "base", "a", xyz="0 0 0")), "j1"),
    # the axis through a point mass: it does not move
    "point-mass-on-the-axis": (_robot(_link("base"), POINT, _joint("j1", "base", "a")), "j1"),
    # ...also about a tilted axis (rounding, not exact zeros: before, ABA gave ~1e17 here)
    "point-mass-on-a-tilted-axis": (_robot(_link("base"), _link("a", inertia=(0, 0, 0), xyz="0.1 0.2 0.3"),
                                           _joint("j1", "base", "a", axis="1 2 3")), "j1"),
    # a prismatic joint that moves only rotational inertia
    "prismatic-moves-no-mass": (_robot(_link("base"), _link("a", mass=0.0),
                                       _joint("j1", "base", "a", kind="prismatic")), "j1"),
    # two coaxial joints with a massless link between: j1 moves nothing that j2 does not
    "coaxial-joints": (_robot(_link("base"), _link("m", mass=0.0, inertia=(0, 0, 0)), _link("b"),
                              _joint("j1", "base", "m"), _joint("j2", "m", "b", xyz="0 0 0")), "j1"),
    # a z-y-z gimbal of massless links is singular at q = 0 (axes 1 and 3 coincide there)
    "zyz-gimbal-at-zero": (_robot(_link("base"), _link("g1", mass=0.0, inertia=(0, 0, 0)),
                                  _link("g2", mass=0.0, inertia=(0, 0, 0)), _link("b"),
                                  _joint("j1", "base", "g1"),
                                  _joint("j2", "g1", "g2", xyz="0 0 0", axis="0 1 0"),
                                  _joint("j3", "g2", "b", xyz="0 0 0")), "j1"),
}


@pytest.mark.parametrize("urdf,joint", SINGULAR.values(), ids=SINGULAR.keys())
def test_joint_that_makes_the_mass_matrix_singular_raises_naming_it(urdf, joint):
    """Before: loaded; ABA returned inf or 3e17 and simulate reached 1.5e15 rad in 0.1 s, while
    forward_dynamics_via_mass_matrix raised. Locking the joint makes the same URDF load."""
    with pytest.raises(ValueError, match=rf"joint '{joint}'.*mass matrix would be singular"):
        rd.load_urdf(urdf)
    rest = rd.load_urdf(urdf, locked_joints={joint: 0.3})
    assert joint not in rest.joint_names
    if rest.nq:
        np.linalg.cholesky(rd.mass_matrix(rest, np.full(rest.nq, 0.4)))


def test_every_singular_joint_is_named_the_one_nearest_the_base_first():
    """A joint that moves nothing above another one, beside a regular branch: a zero pivot's U U^T / D
    (NaN) spoils its ancestors' pivots in the ABA, so the check runs it again with that joint's pivot
    taken out (model_checks.check_mass_matrix): the regular joint is not named, both singular ones are."""
    urdf = _robot(_link("base"), _link("arm"), _link("m1", mass=0.0, inertia=(0, 0, 0)),
                  _link("m2", mass=0.0, inertia=(0, 0, 0)), _link("side"),
                  _joint("j0", "base", "arm"), _joint("j1", "arm", "m1", axis="1 0 0"),
                  _joint("j2", "m1", "m2", kind="prismatic"), _joint("j3", "arm", "side", axis="0 1 0"))
    with pytest.raises(ValueError, match=r"^joint 'j1' moves no mass .*singular \(also 'j2'\)\. Lock"):
        rd.load_urdf(urdf)
    model = rd.load_urdf(urdf, locked_joints={"j1": 0.0, "j2": 0.0})
    assert model.joint_names == ("j0", "j3")


NOT_SINGULAR = {
    # a universal joint: a massless cross between two orthogonal axes, then a body
    "massless-cross": _robot(_link("base"), _link("cross", mass=0.0, inertia=(0, 0, 0)), _link("b"),
                             _joint("j1", "base", "cross", axis="1 0 0"),
                             _joint("j2", "cross", "b", xyz="0 0 0", axis="0 1 0")),
    # an x-y-z gimbal of massless links: singular only at q2 = ±π/2, not at q = 0
    "xyz-gimbal": _robot(_link("base"), _link("g1", mass=0.0, inertia=(0, 0, 0)),
                         _link("g2", mass=0.0, inertia=(0, 0, 0)), _link("b"),
                         _joint("j1", "base", "g1", axis="1 0 0"),
                         _joint("j2", "g1", "g2", xyz="0 0 0", axis="0 1 0"),
                         _joint("j3", "g2", "b", xyz="0 0 0")),
    # a massless link whose fixed child carries the mass
    "mass-behind-a-fixed-joint": _robot(_link("base"), _link("a", mass=0.0, inertia=(0, 0, 0)), _link("tip"),
                                        _joint("j1", "base", "a"), _joint("f", "a", "tip", kind="fixed")),
    # a point mass off the axis, no rotational inertia anywhere
    "point-mass-off-the-axis": _robot(_link("base"), _link("a", inertia=(0, 0, 0), xyz="0.5 0 0"),
                                      _joint("j1", "base", "a")),
}


@pytest.mark.parametrize("urdf", NOT_SINGULAR.values(), ids=NOT_SINGULAR.keys())
def test_massless_links_that_leave_the_mass_matrix_regular_load(urdf):
    model = rd.load_urdf(urdf)
    q = np.full(model.nq, 0.3)
    np.linalg.cholesky(rd.mass_matrix(model, q))
    tau = np.linspace(0.5, 1.0, model.nq)
    np.testing.assert_allclose(rd.forward_dynamics(model, q, q, tau),
                               rd.forward_dynamics_via_mass_matrix(model, q, q, tau), rtol=1e-9, atol=1e-12)
