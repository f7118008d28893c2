"""joint_torque_regressor against Pinocchio's computeJointTorqueRegressor (the same parameters, frames
and order), and Y π = τ with inertial_parameters against Pinocchio's dynamic parameters and RNEA."""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

pin = pytest.importorskip("pinocchio")

ARMS = ["ur5", "panda_locked", "xarm7", "kinova", "panda_chain_hand", "ur5_wrist3_at_0.7", "ur5_gravity"]


def _columns(pair):
    """Pinocchio's regressor columns in our body order (body j: joint perm[j] + 1 of Pinocchio)."""
    return np.concatenate([np.arange(10) + 10 * int(pair.perm[j]) for j in range(pair.model.n_bodies)])


@pytest.mark.parametrize("pair", ARMS, indirect=True)
def test_regressor_is_pinocchios(pair, check):
    m = pair.model
    columns = _columns(pair)
    pin_pi = np.concatenate([pair.pm.inertias[int(pair.perm[j]) + 1].toDynamicParameters()
                             for j in range(m.n_bodies)])
    check("inertial_parameters", pair.name, rd.inertial_parameters(m), pin_pi)
    for q, qd, qdd in zip(*pair.states(4, seed=3)):
        Y = rd.joint_torque_regressor(m, q, qd, qdd)
        Y_pin = pin.computeJointTorqueRegressor(pair.pm, pair.pd, pair.pin_q(q), pair.pin_v(qd),
                                                pair.pin_v(qdd))
        expected = np.asarray(Y_pin)[pair.perm][:, columns]
        check("joint_torque_regressor", pair.name, Y, expected)
        check("Y pi = tau", pair.name, Y @ rd.inertial_parameters(m), rd.inverse_dynamics(m, q, qd, qdd))


@pytest.mark.parametrize("pair", ["ur5", "panda_locked", "xarm7"], indirect=True)
def test_with_payload_is_pinocchios_body_appended_to_the_frames_joint(pair, check):
    """with_payload at the tip frame against Pinocchio's appendBodyToJoint (the payload's inertia placed
    by the frame's placement in its joint's frame), inverse dynamics on random states."""
    m = pair.model
    mass, com, inertia = 1.7, np.array([0.02, -0.01, 0.06]), np.array([[0.011, 0.001, 0.0],
                                                                      [0.001, 0.013, -0.002],
                                                                      [0.0, -0.002, 0.009]])
    ours = rd.with_payload(m, mass, com, inertia)
    pm = pin.Model(pair.pm)
    frame = pm.frames[pair.frame_id(m.tip_frame)]
    pm.appendBodyToJoint(frame.parentJoint, pin.Inertia(mass, com, inertia), frame.placement)
    pd = pm.createData()
    for q, qd, qdd in zip(*pair.states(3, seed=5)):
        expected = pair.vec(pin.rnea(pm, pd, pair.pin_q(q), pair.pin_v(qd), pair.pin_v(qdd)))
        check("with_payload: inverse dynamics", pair.name, rd.inverse_dynamics(ours, q, qd, qdd), expected)
