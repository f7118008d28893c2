"""inverse_dynamics_derivatives and forward_dynamics_derivatives against Pinocchio's computeRNEADerivatives
and computeABADerivatives (1e-9 relative) on arms of example-robot-data and on random trees (prismatic
and continuous joints, branches, arbitrary axes) loaded by both from the same URDF text."""
import pathlib
import sys

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "dynamics"))
from _random_trees import random_tree

pin = pytest.importorskip("pinocchio")

ARMS = ["ur5", "ur10", "panda_locked", "xarm7", "kinova", "ur5_gravity", "panda"]


def _pin_abad(pm, pd, q, v, tau):
    pin.computeABADerivatives(pm, pd, q, v, tau)
    Minv = np.array(pd.Minv)
    Minv = np.triu(Minv) + np.triu(Minv, 1).T          # Pinocchio fills the upper triangle
    return np.array(pd.ddq_dq), np.array(pd.ddq_dv), Minv


@pytest.mark.parametrize("pair", ARMS, indirect=True)
def test_derivatives_are_pinocchios_on_arms(pair, check):
    m = pair.model
    for q, qd, qdd in zip(*pair.states(4, seed=7)):
        dq, dqd = rd.inverse_dynamics_derivatives(m, q, qd, qdd)
        p_dq, p_dqd, p_M = pin.computeRNEADerivatives(pair.pm, pair.pd, pair.pin_q(q), pair.pin_v(qd),
                                                      pair.pin_v(qdd))
        check("dtau/dq", pair.name, dq, pair.mat(p_dq))
        check("dtau/dqd", pair.name, dqd, pair.mat(p_dqd))
        tau = rd.inverse_dynamics(m, q, qd, qdd)
        a_q, a_qd, a_tau = rd.forward_dynamics_derivatives(m, q, qd, tau)
        p_q, p_qd, p_Minv = _pin_abad(pair.pm, pair.pd, pair.pin_q(q), pair.pin_v(qd), pair.pin_v(tau))
        check("dqdd/dq", pair.name, a_q, pair.mat(p_q))
        check("dqdd/dqd", pair.name, a_qd, pair.mat(p_qd))
        check("dqdd/dtau = M^-1", pair.name, a_tau, pair.mat(p_Minv))


def _tree_pair(seed, n):
    """Our model and Pinocchio's of one random tree, with (perm, q_slices) as in conftest.make_pair."""
    xml = random_tree(seed, n).to_urdf()
    model, pm = rd.load_urdf(xml, mimic=False), pin.buildModelFromXML(xml)
    joints = [pm.joints[pm.getJointId(j)] for j in model.joint_names]
    return model, pm, np.array([j.idx_v for j in joints]), [(j.idx_q, j.nq) for j in joints]


@pytest.mark.parametrize("seed", range(5))
def test_derivatives_are_pinocchios_on_random_trees(seed, check):
    model, pm, perm, q_slices = _tree_pair(300 + seed, 8)
    pd = pm.createData()
    types = set(model.joint_types)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-1, 1, (3, model.nq))
        pq = np.zeros(pm.nq)
        for (i0, nq), x in zip(q_slices, q):
            pq[i0:i0 + nq] = x if nq == 1 else (np.cos(x), np.sin(x))

        def pv(x):
            out = np.zeros(pm.nv)
            out[perm] = x
            return out

        def mat(X):
            return np.asarray(X)[np.ix_(perm, perm)]

        name = f"random tree {seed} ({', '.join(sorted(types))})"
        p_dq, p_dqd, _ = pin.computeRNEADerivatives(pm, pd, pq, pv(qd), pv(qdd))
        dq, dqd = rd.inverse_dynamics_derivatives(model, q, qd, qdd)
        check("dtau/dq", name, dq, mat(p_dq))
        check("dtau/dqd", name, dqd, mat(p_dqd))
        tau = rd.inverse_dynamics(model, q, qd, qdd)
        p_q, p_qd, p_Minv = _pin_abad(pm, pd, pq, pv(qd), pv(tau))
        ours = rd.forward_dynamics_derivatives(model, q, qd, tau)
        for label, x, theirs in zip(("dqdd/dq", "dqdd/dqd", "dqdd/dtau = M^-1"), ours, (p_q, p_qd, p_Minv)):
            check(label, name, x, mat(theirs))
