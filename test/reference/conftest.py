"""Shared fixtures of the reference tests: real URDFs, (our model, Pinocchio model) pairs, joint-order
and spatial-vector-order permutations, seeded states, and a comparison that records its errors.

Conventions bridged here (and nowhere in the core):
  * joint order: matched BY NAME (Pinocchio's model.names[1:]); `Pair.perm[i]` is the Pinocchio
    velocity index of our joint i. Never assumed to be the same order.
  * spatial vectors: ours are angular first (ω, v) / (m, f), Pinocchio's linear first (v, ω) / (f, m):
    rows [3:6, 0:3] (ANG_FIRST).
  * continuous joints: Pinocchio stores (cos θ, sin θ) in q (JointModelRUBZ, nq = 2, nv = 1).
  * Jacobian references: ours "space" / "body" / "world_aligned" = Pinocchio WORLD / LOCAL /
    LOCAL_WORLD_ALIGNED.

Every comparison goes through the `check` fixture: |ours - ref|max <= tol * max(1, |ref|max), and the
measured error is recorded per (quantity, robot). Run with `-s` to get the table at the end of the run.
"""
from __future__ import annotations

import os
import sysconfig
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from robot_dynamics_ros import dynamics as rd  # noqa: E402

ROBOTS_DIR = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                          "robots")
URDF = {
    "panda": os.path.join(ROBOTS_DIR, "panda_description", "urdf", "panda.urdf"),
    "ur5": os.path.join(ROBOTS_DIR, "ur_description", "urdf", "ur5_robot.urdf"),
    "ur10": os.path.join(ROBOTS_DIR, "ur_description", "urdf", "ur10_robot.urdf"),
    "xarm7": os.path.join(ROBOTS_DIR, "xarm_description", "urdf", "xarm7.urdf"),
    "kinova": os.path.join(ROBOTS_DIR, "kinova_description", "robots", "kinova.urdf"),
}

ANG_FIRST = np.array([3, 4, 5, 0, 1, 2])       # Pinocchio (linear first) rows -> ours (angular first)
TOL = 1e-9                                     # relative to max(1, |reference|max)
PANDA_FINGERS = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
CUSTOM_GRAVITY = (1.5, -2.0, -9.0)


# ---------------------------------------------------------------------------------------------
# Robots: how each pair is built, ours and Pinocchio's side by side
# ---------------------------------------------------------------------------------------------

def _pin_reduced(path, locked, gravity=None):
    """Pinocchio model of `path` with the joints in `locked` ({name: position}) removed
    (pin.buildReducedModel at that configuration)."""
    full = pin.buildModelFromUrdf(path)
    if gravity is not None:
        full.gravity.linear = np.asarray(gravity, dtype=float)
    if not locked:
        return full
    q_ref = pin.neutral(full)
    ids = []
    for name, value in locked.items():
        jid = full.getJointId(name)
        assert jid < full.njoints, f"{name} not in {path}"
        ids.append(jid)
        q_ref[full.joints[jid].idx_q] = value
    return pin.buildReducedModel(full, ids, q_ref)


def _specs():
    """name -> (URDF path, our model factory, Pinocchio model factory). Lazy: built on first use."""
    P, U5 = URDF["panda"], URDF["ur5"]
    return {
        # Panda with the fingers locked (the 7-dof arm) and the full tree with its two finger branches
        "panda_locked": (P, lambda: rd.load_urdf(P, locked_joints=PANDA_FINGERS),
                         lambda: _pin_reduced(P, PANDA_FINGERS)),
        # (mimic=False: finger_joint2 free, as in Pinocchio's buildModel without mimic; the mimic
        # Panda is compared in test_ref_pinocchio_mimic.py)
        "panda": (P, lambda: rd.load_urdf(P, mimic=False), lambda: _pin_reduced(P, {})),
        "ur5": (U5, lambda: rd.load_urdf(U5), lambda: _pin_reduced(U5, {})),
        "ur10": (URDF["ur10"], lambda: rd.load_urdf(URDF["ur10"]), lambda: _pin_reduced(URDF["ur10"], {})),
        "xarm7": (URDF["xarm7"], lambda: rd.load_urdf(URDF["xarm7"]),
                  lambda: _pin_reduced(URDF["xarm7"], {})),
        # Kinova Jaco: three continuous joints (Pinocchio: (cos, sin) in q)
        "kinova": (URDF["kinova"], lambda: rd.load_urdf(URDF["kinova"]),
                   lambda: _pin_reduced(URDF["kinova"], {})),
        # chain selection root -> tip: the fingers are off the chain and locked at 0
        "panda_chain_link8": (P, lambda: rd.load_urdf(P, root_link="panda_link0", tip_link="panda_link8"),
                              lambda: _pin_reduced(P, PANDA_FINGERS)),
        "panda_chain_hand": (P, lambda: rd.load_urdf(P, root_link="panda_link0", tip_link="panda_hand"),
                             lambda: _pin_reduced(P, PANDA_FINGERS)),
        # a joint locked away from zero
        "ur5_wrist3_at_0.7": (U5, lambda: rd.load_urdf(U5, locked_joints={"wrist_3_joint": 0.7}),
                              lambda: _pin_reduced(U5, {"wrist_3_joint": 0.7})),
        # a gravity vector that is not (0, 0, -9.81)
        "ur5_gravity": (U5, lambda: rd.load_urdf(U5, gravity=CUSTOM_GRAVITY),
                        lambda: _pin_reduced(U5, {}, gravity=CUSTOM_GRAVITY)),
        "panda_gravity": (P, lambda: rd.load_urdf(P, gravity=CUSTOM_GRAVITY, mimic=False),
                          lambda: _pin_reduced(P, {}, gravity=CUSTOM_GRAVITY)),
    }


ROBOTS = tuple(_specs())


@dataclass
class Pair:
    """Our Model and Pinocchio's for the same robot, with the maps between their conventions."""
    name: str
    path: str                   # the URDF file
    model: rd.Model
    pm: "pin.Model"
    pd: "pin.Data" = field(repr=False)
    perm: np.ndarray            # perm[i]: Pinocchio v index of our joint i
    q_slices: list              # per our joint: (idx_q, nq) in Pinocchio's q

    @property
    def n(self):
        return self.model.nq

    # -- our arrays -> Pinocchio's ------------------------------------------------------------
    def pin_q(self, q):
        """Pinocchio configuration of our joint positions q (continuous joints as (cos, sin))."""
        out = np.zeros(self.pm.nq)
        for (i0, nq), qi in zip(self.q_slices, q):
            if nq == 1:
                out[i0] = qi
            else:
                out[i0], out[i0 + 1] = np.cos(qi), np.sin(qi)
        return out

    def pin_v(self, x):
        """A joint-velocity-space vector (q̇, q̈, τ) in Pinocchio's order."""
        out = np.zeros(self.pm.nv)
        out[self.perm] = x
        return out

    # -- Pinocchio's arrays -> ours -----------------------------------------------------------
    def vec(self, x):
        return np.asarray(x)[self.perm]

    def mat(self, X):
        return np.asarray(X)[np.ix_(self.perm, self.perm)]

    def jac(self, J):
        """A (6, nv) Pinocchio Jacobian -> ours: angular rows first, joints in our order."""
        return np.asarray(J)[ANG_FIRST][:, self.perm]

    def frame_id(self, name):
        """Pinocchio frame of URDF link `name` (its BODY frame)."""
        fid = self.pm.getFrameId(name, pin.BODY)
        assert fid < len(self.pm.frames), f"{self.name}: Pinocchio has no body frame {name!r}"
        return fid

    # -- seeded states ---------------------------------------------------------------------------
    def states(self, count=8, seed=0):
        """(q, q̇, q̈) of shape (count, n): q uniform within the joint limits (±π where unlimited),
        q̇ ~ N(0, 1), q̈ ~ N(0, 2²)."""
        rng = np.random.default_rng([seed, sum(map(ord, self.name))])
        lo = np.maximum(self.model.lower, -np.pi)
        hi = np.minimum(self.model.upper, np.pi)
        q = rng.uniform(lo, hi, size=(count, self.n))
        return q, rng.normal(size=(count, self.n)), 2.0 * rng.normal(size=(count, self.n))


def make_pair(name):
    path, ours, theirs = _specs()[name]
    model, pm = ours(), theirs()
    names = list(pm.names[1:])
    assert sorted(names) == sorted(model.joint_names), (name, names, model.joint_names)
    perm, q_slices = [], []
    for j in model.joint_names:
        joint = pm.joints[pm.getJointId(j)]
        assert joint.nv == 1, f"{name}: joint {j} has nv = {joint.nv}"
        perm.append(joint.idx_v)
        q_slices.append((joint.idx_q, joint.nq))
    return Pair(name, path, model, pm, pm.createData(), np.array(perm), q_slices)


_PAIRS = {}


def get_pair(name):
    if name not in _PAIRS:
        _PAIRS[name] = make_pair(name)
    return _PAIRS[name]


@pytest.fixture(params=ROBOTS)
def pair(request):
    """One (ours, Pinocchio) robot pair; narrow with
    @pytest.mark.parametrize('pair', [...], indirect=True)."""
    return get_pair(request.param)


@pytest.fixture(scope="session")
def pairs():
    """get_pair(name) -> the cached Pair."""
    return get_pair


# ---------------------------------------------------------------------------------------------
# Comparison with error bookkeeping
# ---------------------------------------------------------------------------------------------

ERRORS = defaultdict(lambda: [0.0, 0.0])        # (quantity, robot) -> [max abs error, max |ref|]


class Checker:
    """check(quantity, robot, ours, ref, tol=TOL): assert |ours - ref|max <= tol·max(1, |ref|max) and
    record the error. Returns the absolute error."""

    def __call__(self, quantity, robot, ours, ref, tol=TOL):
        ours, ref = np.asarray(ours, dtype=float), np.asarray(ref, dtype=float)
        assert ours.shape == ref.shape, f"{quantity} [{robot}]: shape {ours.shape} != reference {ref.shape}"
        assert np.all(np.isfinite(ours)), f"{quantity} [{robot}]: non-finite values"
        err = float(np.max(np.abs(ours - ref))) if ours.size else 0.0
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
        entry = ERRORS[(quantity, robot)]
        entry[0] = max(entry[0], err)
        entry[1] = max(entry[1], scale)
        bound = tol * max(1.0, scale)
        assert err <= bound, (f"{quantity} [{robot}]: max |ours - reference| = {err:.3e} > {bound:.3e} "
                              f"(tol {tol:g} x max(1, |reference|max = {scale:.3e}))")
        return err


@pytest.fixture(scope="session")
def check():
    return Checker()


def error_table():
    """The recorded errors as text: one table for the Pinocchio robot pairs, one for the rest (the
    textbook's 2R arm, the Modern Robotics examples); one line per quantity, one column per robot,
    and the worst error relative to max(1, |reference|max) over the line."""
    if not ERRORS:
        return ""
    out = ["max |ours - reference| per quantity and robot; 'worst rel' = max over the row of "
           "error / max(1, |reference|max) (tolerance 1e-9 unless the quantity says otherwise)"]
    for robots in ([r for r in ROBOTS if any(k[1] == r for k in ERRORS)],
                   sorted({r for _, r in ERRORS} - set(ROBOTS))):
        if not robots:
            continue
        quantities = sorted({q for q, r in ERRORS if r in robots})
        width = max(len(q) for q in quantities)
        cols = [max(9, len(r)) for r in robots]
        out.append("")
        out.append(" " * width + " | " + " | ".join(f"{r:>{c}}" for r, c in zip(robots, cols))
                   + " | worst rel")
        for q in quantities:
            cells, worst = [], 0.0
            for r, c in zip(robots, cols):
                if (q, r) in ERRORS:
                    err, scale = ERRORS[(q, r)]
                    worst = max(worst, err / max(1.0, scale))
                    cells.append(f"{err:>{c}.1e}")
                else:
                    cells.append(" " * c)
            out.append(f"{q:<{width}} | " + " | ".join(cells) + f" | {worst:9.1e}")
    return "\n".join(out)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if ERRORS and config.getoption("capture", None) == "no":
        terminalreporter.section("test/reference: measured errors")
        terminalreporter.write_line(error_table())


# ---------------------------------------------------------------------------------------------
# Independent reading of <dynamics> from the URDF text
# ---------------------------------------------------------------------------------------------

def urdf_joint_dynamics(path):
    """{joint name: (damping, friction)} read straight from the XML (missing attribute = 0)."""
    out = {}
    for joint in ET.parse(path).getroot().findall("joint"):     # not <transmission><joint>
        dyn = joint.find("dynamics")
        d = float(dyn.get("damping", 0.0)) if dyn is not None else 0.0
        f = float(dyn.get("friction", 0.0)) if dyn is not None else 0.0
        out[joint.get("name")] = (d, f)
    return out


@pytest.fixture(scope="session")
def joint_dynamics_from_xml():
    return urdf_joint_dynamics
