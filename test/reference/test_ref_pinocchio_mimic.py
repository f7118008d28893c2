"""Mimic joints against Pinocchio's own mimic support: the full Panda of example-robot-data, whose
panda_finger_joint2 mimics panda_finger_joint1, loaded by both with mimic joints (8 coordinates:
7 arm joints and finger 1), at seeded random states; |ours - Pinocchio|max <= 1e-9 max(1, |ref|max).

Pinocchio 4.1's crba on a model with mimic joints returns a wrong M (1-6 % off) when its Data object
is reused from an earlier call; a fresh Data gives the right one, so every Pinocchio call here gets
its own Data.
"""
import os
import sysconfig

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

pin = pytest.importorskip("pinocchio")

PANDA = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                     "robots", "panda_description", "urdf", "panda.urdf")
ANG_FIRST = np.array([3, 4, 5, 0, 1, 2])       # Pinocchio (linear first) rows -> ours (angular first)
N_STATES = 6


@pytest.fixture(scope="module")
def panda():
    """(our model, Pinocchio's model, perm: Pinocchio v index of our coordinate i)."""
    model = rd.load_urdf(PANDA)
    pm = pin.buildModelFromUrdf(PANDA, mimic=True)
    perm = np.array([pm.joints[pm.getJointId(name)].idx_v for name in model.joint_names])
    assert model.nq == pm.nq == pm.nv == 8 and sorted(perm) == list(range(8))
    assert model.mimic == {"panda_finger_joint2": ("panda_finger_joint1", 1.0, 0.0)}
    return model, pm, perm


def _states(model):
    rng = np.random.default_rng(41)
    lo, hi = np.maximum(model.lower, -np.pi), np.minimum(model.upper, np.pi)
    for _ in range(N_STATES):
        yield rng.uniform(lo, hi), rng.normal(size=model.nq), 2.0 * rng.normal(size=model.nq)


def test_joint_space_dynamics_equal_pinocchios_mimic_model(panda, check):
    model, pm, perm = panda

    def ours_to_pin(x):
        out = np.zeros(pm.nv)
        out[perm] = x
        return out

    for q, qd, qdd in _states(model):
        pq, pv, pa = ours_to_pin(q), ours_to_pin(qd), ours_to_pin(qdd)
        M = pin.crba(pm, pm.createData(), pq)
        M = (np.triu(M) + np.triu(M, 1).T)[np.ix_(perm, perm)]
        check("M (mimic)", "panda_mimic", rd.mass_matrix(model, q), M)
        tau = pin.rnea(pm, pm.createData(), pq, pv, pa)[perm]
        check("rnea (mimic)", "panda_mimic", rd.inverse_dynamics(model, q, qd, qdd), tau)
        g = pin.computeGeneralizedGravity(pm, pm.createData(), pq)[perm]
        check("g (mimic)", "panda_mimic", rd.gravity_torques(model, q), g)
        b = pin.nonLinearEffects(pm, pm.createData(), pq, pv)[perm]
        check("c + g (mimic)", "panda_mimic", rd.bias_forces(model, q, qd), b)
        check("FD = M^-1 (tau - b) (mimic)", "panda_mimic", rd.forward_dynamics(model, q, qd, tau),
              np.linalg.solve(M, tau - b))
        for frame in ("panda_leftfinger", "panda_rightfinger", "panda_hand_tcp"):
            pd = pm.createData()
            pin.computeJointJacobians(pm, pd, pq)
            pin.updateFramePlacements(pm, pd)
            fid = pm.getFrameId(frame, pin.BODY)
            J = pin.getFrameJacobian(pm, pd, fid, pin.LOCAL)[ANG_FIRST][:, perm]
            check("J body (mimic)", "panda_mimic", rd.jacobian(model, q, frame, reference="body"), J)
            T = pd.oMf[fid].homogeneous
            check("frame pose (mimic)", "panda_mimic", rd.frame_pose(model, q, frame), T)
