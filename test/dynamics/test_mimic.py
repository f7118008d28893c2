"""Mimic joints: a joint with <mimic joint="B" multiplier="m" offset="o"/> has no coordinate of its own,
q = m q_B + o, and every algorithm works in the independent coordinates.

The reference is the same robot loaded WITHOUT the <mimic> element (every joint free: the
full-coordinate model) and the map written out here by hand, by joint name: G (n_full x n_r) with
G[i, k] = m_i where body joint i follows coordinate k (1 for k's own joint) and the offset o. Then
q_full = G q + o, q̇_full = G q̇, q̈_full = G q̈ and M_r = Gᵀ M G, τ_r = Gᵀ τ, J_r = J G, J̇_r = J̇ G,
C_r = Gᵀ C G, ∂M_r/∂q_k = Σ_i G_ik Gᵀ (∂M/∂q_i) G; poses and energies are equal. Nothing of the
loader's or the model's mimic code is used on the reference side.

Robots: an arm with a parallel gripper (two prismatic fingers, one mimicking the other with
multiplier +1 on a reversed axis, or -1 on the same axis) and a chain with a coupled revolute joint
in its middle (multiplier -0.5, offset 0.3), so that the coordinates after it are not the bodies'.
"""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

from _residuals import EXACT, FD, assert_close, measure, torque_scale

H = 1e-6
REFERENCES = ("space", "body", "world_aligned")


# -- URDFs ---------------------------------------------------------------------------------------
def _inertial(rng):
    m = rng.uniform(0.3, 2.0)
    A = rng.normal(size=(3, 3)) * 0.05
    I = A @ A.T + 0.01 * np.eye(3)
    c = rng.normal(size=3) * 0.05
    return (f'<inertial><origin xyz="{c[0]} {c[1]} {c[2]}"/><mass value="{m}"/>'
            f'<inertia ixx="{I[0, 0]}" ixy="{I[0, 1]}" ixz="{I[0, 2]}" iyy="{I[1, 1]}" iyz="{I[1, 2]}" '
            f'izz="{I[2, 2]}"/></inertial>')


def _urdf(joints, seed, with_mimic=True):
    """URDF text of the joints [(name, type, parent, child, xyz, rpy, axis, extra XML, mimic XML)],
    each child link with a seeded inertial; the <mimic> elements left out when with_mimic is False."""
    rng = np.random.default_rng(seed)
    links = ["base_link"] + [j[3] for j in joints]
    text = ['<robot name="mimic_test">']
    for link in links:
        inertial = _inertial(rng) if link not in ("base_link", "tool0") else ""
        text.append(f'<link name="{link}">{inertial}</link>')
    for name, kind, parent, child, xyz, rpy, axis, extra, mimic in joints:
        text.append(f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                    f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>{extra}'
                    f'{mimic if with_mimic else ""}</joint>')
    text.append("</robot>")
    return "\n".join(text)


def gripper_joints(multiplier):
    """A 2-joint arm, a wrist and a parallel gripper: finger_r mimics finger_l (on the reversed axis for
    multiplier +1, on the same axis for -1, so that the fingers close symmetrically)."""
    axis_r = "0 -1 0" if multiplier > 0 else "0 1 0"
    return [
        ("shoulder", "revolute", "base_link", "upper", "0 0 0.1", "0 0 0", "0 0 1",
         '<limit effort="50" velocity="2" lower="-3" upper="3"/>'
         '<dynamics damping="0.2" friction="0.1"/>', ""),
        ("elbow", "revolute", "upper", "fore", "0.3 0 0.05", "0.3 0 0", "0 1 0",
         '<limit effort="30" velocity="2" lower="-3" upper="3"/>', ""),
        ("wrist", "continuous", "fore", "hand", "0.25 0 0", "0 0.2 0", "1 0 0",
         '<dynamics damping="0.05"/>', ""),
        ("finger_l", "prismatic", "hand", "left", "0.05 0.01 0", "0 0 0", "0 1 0",
         '<limit effort="20" velocity="0.2" lower="-0.01" upper="0.04"/>'
         '<dynamics damping="0.5" friction="0.3"/>',
         ""),
        ("finger_r", "prismatic", "hand", "right", "0.05 -0.01 0", "0 0 0", axis_r,
         '<limit effort="20" velocity="0.1" lower="0" upper="0.035"/>'
         '<dynamics damping="0.4" friction="0.2"/>',
         f'<mimic joint="finger_l" multiplier="{multiplier}"/>'),
        ("tcp", "fixed", "hand", "tool0", "0.1 0 0", "0 0 0", "1 0 0", "", ""),
    ]


def coupled_chain_joints():
    """A 5-joint chain whose third joint mimics the second: q3 = -0.5 q2 + 0.3."""
    return [
        ("j1", "revolute", "base_link", "l1", "0 0 0.1", "0 0 0", "0 0 1",
         '<limit effort="50" velocity="2" lower="-3" upper="3"/>'
         '<dynamics damping="0.3" friction="0.2"/>', ""),
        ("j2", "revolute", "l1", "l2", "0.05 0 0.2", "0.4 0 0", "0 1 0",
         '<limit effort="50" velocity="2" lower="-2" upper="2"/><dynamics damping="0.1"/>', ""),
        ("j3", "revolute", "l2", "l3", "0.3 0.02 0", "0 -0.2 0.1", "0 1 0",
         '<limit effort="50" velocity="3" lower="-0.5" upper="1.5"/><dynamics damping="0.2" friction="0.4"/>',
         '<mimic joint="j2" multiplier="-0.5" offset="0.3"/>'),
        ("j4", "prismatic", "l3", "l4", "0.25 0 0", "0 0 0.3", "1 0 0",
         '<limit effort="50" velocity="1" lower="-0.2" upper="0.2"/>', ""),
        ("j5", "revolute", "l4", "l5", "0.1 0 0", "0.1 0.2 0.3", "0 0 1", "", ""),
        ("tcp", "fixed", "l5", "tool0", "0.05 0 0.02", "0 0 0", "1 0 0", "", ""),
    ]


ROBOTS = {
    "gripper+1": (gripper_joints(1.0), 1),
    "gripper-1": (gripper_joints(-1.0), 2),
    "coupled-chain": (coupled_chain_joints(), 3),
}


def _hand_map(joints, full, reduced):
    """(G, o) by joint name from the URDF's own <mimic> numbers, written out here."""
    numbers = {}
    for name, *_, mimic in joints:
        if mimic:
            followed = mimic.split('joint="')[1].split('"')[0]
            m = float(mimic.split('multiplier="')[1].split('"')[0]) if "multiplier" in mimic else 1.0
            o = float(mimic.split('offset="')[1].split('"')[0]) if "offset" in mimic else 0.0
            numbers[name] = (followed, m, o)
    G = np.zeros((full.nq, reduced.nq))
    o = np.zeros(full.nq)
    for i, name in enumerate(full.joint_names):
        followed, m, off = numbers.get(name, (name, 1.0, 0.0))
        G[i, list(reduced.joint_names).index(followed)] = m
        o[i] = off
    return G, o


@pytest.fixture(params=list(ROBOTS), scope="module")
def robot(request):
    """(name, reduced model, full model, G, o)."""
    joints, seed = ROBOTS[request.param]
    reduced = rd.load_urdf(_urdf(joints, seed))
    full = rd.load_urdf(_urdf(joints, seed, with_mimic=False))
    G, o = _hand_map(joints, full, reduced)
    return request.param, reduced, full, G, o


def _states(model, seed, count=3):
    rng = np.random.default_rng(seed)
    prismatic = np.array([t == "prismatic" for t in model.joint_types])
    for _ in range(count):
        q = np.where(prismatic, rng.uniform(-0.02, 0.04, model.nq), rng.uniform(-2.0, 2.0, model.nq))
        yield q, rng.normal(size=model.nq), rng.normal(size=model.nq)


# -- the model ------------------------------------------------------------------------------------
def test_mimic_joints_have_no_coordinate(robot):
    name, reduced, full, G, o = robot
    mimicking = [j for j in full.joint_names if j not in reduced.joint_names]
    assert len(mimicking) == 1 and reduced.nq == full.nq - 1
    assert reduced.n_bodies == full.nq and reduced.body_joint_names == full.joint_names
    assert set(reduced.mimic) == set(mimicking)
    G_model, o_model = reduced.coordinate_map()
    assert np.array_equal(G_model, G) and np.array_equal(o_model, o)
    for q, qd, _ in _states(reduced, 1):
        assert np.array_equal(reduced.body_positions(q), G @ q + o)
        assert np.array_equal(reduced.body_velocities(qd), G @ qd)
    with pytest.raises(ValueError, match=f"{mimicking[0]}.*mimics"):
        reduced.joint_index(mimicking[0])


def test_limits_and_friction_fold_into_the_followed_coordinate(robot):
    """lower_i <= m q + o <= upper_i intersects the coordinate's limits, |m q̇| <= v_i bounds its velocity,
    and the projected friction torques Gᵀ(F_v ∘ G q̇ + F_s ∘ sgn(G q̇)) equal the folded coefficients'."""
    name, reduced, full, G, o = robot
    for k in range(reduced.nq):
        rows = np.flatnonzero(G[:, k])
        lo, hi, v = -np.inf, np.inf, np.inf
        for i in rows:
            m = G[i, k]
            a, b = (full.lower[i] - o[i]) / m, (full.upper[i] - o[i]) / m
            lo, hi = max(lo, min(a, b)), min(hi, max(a, b))
            v = min(v, full.velocity_limit[i] / abs(m))
        assert (reduced.lower[k], reduced.upper[k], reduced.velocity_limit[k]) == pytest.approx((lo, hi, v))
        own = full.joint_names.index(reduced.joint_names[k])
        assert reduced.effort_limit[k] == full.effort_limit[own]      # not folded (documented)
    for q, qd, qdd in _states(reduced, 2):
        projected = G.T @ rd.friction_torques(full, G @ qd)
        assert_close("mimic: friction folded = G^T friction(G qd)", rd.friction_torques(reduced, qd),
                     projected, EXACT)
        assert_close("mimic: ID with friction = G^T ID_full with friction",
                     rd.inverse_dynamics(reduced, q, qd, qdd, friction=True),
                     G.T @ rd.inverse_dynamics(full, G @ q + o, G @ qd, G @ qdd, friction=True), EXACT)


# -- every algorithm against the hand projection ----------------------------------------------------
def test_joint_space_terms_are_projections_of_the_full_model(robot):
    name, r, f, G, o = robot
    for q, qd, qdd in _states(r, 3):
        qf, qdf, qddf = G @ q + o, G @ qd, G @ qdd
        Mf = rd.mass_matrix(f, qf)
        scale = torque_scale(Mf, qdf)
        assert_close("mimic: M_r = G^T M G", rd.mass_matrix(r, q), G.T @ Mf @ G, EXACT)
        assert_close("mimic: M_r via Jacobians", rd.mass_matrix_via_jacobians(r, q), G.T @ Mf @ G, EXACT)
        assert_close("mimic: tau_r = G^T tau", rd.inverse_dynamics(r, q, qd, qdd),
                     G.T @ rd.inverse_dynamics(f, qf, qdf, qddf), EXACT, floor=scale)
        assert_close("mimic: g_r = G^T g", rd.gravity_torques(r, q), G.T @ rd.gravity_torques(f, qf), EXACT,
                     floor=scale)
        assert_close("mimic: c_r = G^T c", rd.coriolis_forces(r, q, qd), G.T @ rd.coriolis_forces(f, qf, qdf),
                     EXACT, floor=scale)
        assert_close("mimic: b_r = G^T b", rd.bias_forces(r, q, qd), G.T @ rd.bias_forces(f, qf, qdf), EXACT,
                     floor=scale)
        Cf = rd.coriolis_matrix(f, qf, qdf)
        assert_close("mimic: C_r = G^T C G", rd.coriolis_matrix(r, q, qd), G.T @ Cf @ G, EXACT,
                     floor=float(np.abs(Mf).max() * np.abs(qdf).max()))
        dMf = rd.mass_matrix_derivatives(f, qf)
        dMr = np.stack([G.T @ np.einsum("ijl,l->ij", dMf, G[:, k]) @ G for k in range(r.nq)], axis=2)
        assert_close("mimic: dM_r/dq_r = sum_i G_ik G^T dM/dq_i G", rd.mass_matrix_derivatives(r, q), dMr,
                     EXACT, floor=float(np.abs(Mf).max()))
        assert_close("mimic: K_r = K_full", rd.kinetic_energy(r, q, qd), rd.kinetic_energy(f, qf, qdf), EXACT)
        p_r, beta_r = rd.momentum_balance(r, q, qd)
        p_f, beta_f = rd.momentum_balance(f, qf, qdf)
        assert_close("mimic: p_r = G^T p", p_r, G.T @ p_f, EXACT, floor=scale)
        assert_close("mimic: beta_r = G^T beta = C_r^T qd_r - g_r", beta_r, G.T @ beta_f, EXACT, floor=scale)
        assert_close("mimic: P_r = P_full", rd.potential_energy(r, q), rd.potential_energy(f, qf), EXACT,
                     floor=1.0)
        cf = rd.closed_form_dynamics(r, q, qd)
        assert_close("mimic: closed-form M_r", cf.M, G.T @ Mf @ G, EXACT)
        assert_close("mimic: closed-form c_r", cf.c, G.T @ rd.coriolis_forces(f, qf, qdf), 1e-9, floor=scale)
        assert_close("mimic: closed-form g_r", cf.g, G.T @ rd.gravity_torques(f, qf), 1e-9, floor=scale)
        tau = G.T @ rd.inverse_dynamics(f, qf, qdf, qddf)
        qdd_r = np.linalg.solve(G.T @ Mf @ G, tau - G.T @ rd.bias_forces(f, qf, qdf))
        assert_close("mimic: FD_r = (G^T M G)^-1 G^T (tau - b)", rd.forward_dynamics(r, q, qd, tau), qdd_r,
                     1e-9, floor=1.0)


def test_kinematics_are_those_of_the_full_model(robot):
    name, r, f, G, o = robot
    for q, qd, _ in _states(r, 4):
        qf, qdf = G @ q + o, G @ qd
        for frame in r.frame_names:
            assert_close("mimic: frame pose", rd.frame_pose(r, q, frame), rd.frame_pose(f, qf, frame), EXACT,
                         floor=1.0)
            for ref in REFERENCES:
                assert_close("mimic: J_r = J G", rd.jacobian(r, q, frame, ref),
                             rd.jacobian(f, qf, frame, ref) @ G, EXACT, floor=1.0)
                assert_close("mimic: dJ_r = dJ G", rd.jacobian_derivative(r, q, qd, frame, ref),
                             rd.jacobian_derivative(f, qf, qdf, frame, ref) @ G, EXACT, floor=1.0)


def test_task_space_terms_from_the_projected_matrices(robot):
    """Λ = (J_r M_r⁻¹ J_rᵀ + δ1)⁻¹ and η = Λ(J_r M_r⁻¹ b_r − J̇_r q̇) with the hand projections."""
    name, r, f, G, o = robot
    for q, qd, _ in _states(r, 5):
        qf, qdf = G @ q + o, G @ qd
        Mr = G.T @ rd.mass_matrix(f, qf) @ G
        J = rd.jacobian(f, qf, "tool0", "world_aligned") @ G
        dJ = rd.jacobian_derivative(f, qf, qdf, "tool0", "world_aligned") @ G
        b = G.T @ rd.bias_forces(f, qf, qdf)
        Lam = np.linalg.inv(J @ np.linalg.solve(Mr, J.T) + 0.1 * np.eye(6))
        eta = Lam @ (J @ np.linalg.solve(Mr, b) - dJ @ qd)
        terms = rd.compute_all_terms(r, q, qd, "tool0", "world_aligned", damping=0.1)
        assert_close("mimic: all terms M", terms.M, Mr, EXACT)
        assert_close("mimic: all terms c + g", terms.c + terms.g, b, EXACT, floor=1.0)
        assert_close("mimic: all terms J", terms.J, J, EXACT, floor=1.0)
        assert_close("mimic: task-space inertia", terms.Lambda, Lam, 1e-9)
        assert_close("mimic: task-space inertia (own call)",
                     rd.task_space_inertia(r, q, "tool0", "world_aligned", damping=0.1), Lam, 1e-9)
        assert_close("mimic: task-space bias", terms.eta, eta, 1e-9, floor=1.0)


# -- reduced-coordinate identities ---------------------------------------------------------------------
def test_inverse_and_forward_dynamics_are_inverse(robot):
    name, r, f, G, o = robot
    rng = np.random.default_rng(6)
    for q, qd, qdd in _states(r, 6):
        tau = rd.inverse_dynamics(r, q, qd, qdd)
        assert_close("mimic: FD(ID(qdd)) = qdd", rd.forward_dynamics(r, q, qd, tau), qdd, 1e-9, floor=1.0)
        tau = rng.normal(size=r.nq) * 5.0
        F = rng.normal(size=6)
        for fd in (rd.forward_dynamics, rd.forward_dynamics_via_mass_matrix):
            qdd = fd(r, q, qd, tau, f_tip=F, frame="tool0", friction=True)
            tau_back = rd.inverse_dynamics(r, q, qd, qdd, f_tip=F, frame="tool0", friction=True)
            assert_close("mimic: ID(FD(tau)) = tau", tau_back, tau, 1e-9, floor=1.0)
    q = np.array([x for x, _, _ in _states(r, 7)])
    qd, qdd = np.ones_like(q), np.full_like(q, 0.5)
    tau = rd.inverse_dynamics_trajectory(r, q, qd, qdd)
    assert np.array_equal(tau[1], rd.inverse_dynamics(r, q[1], qd[1], qdd[1]))
    assert np.array_equal(rd.mass_matrix_trajectory(r, q)[2], rd.mass_matrix(r, q[2]))
    assert np.array_equal(rd.forward_dynamics_trajectory(r, q, qd, tau)[0],
                          rd.forward_dynamics(r, q[0], qd[0], tau[0]))


def test_mdot_minus_2c_is_skew_in_reduced_coordinates(robot):
    """Ṁ_r (central difference of the reduced CRBA along q̇) − 2 C_r is skew-symmetric, and
    Ṁ_r = C_r + C_rᵀ."""
    name, r, f, G, o = robot
    for q, qd, _ in _states(r, 8):
        Mdot = (rd.mass_matrix(r, q + H * qd) - rd.mass_matrix(r, q - H * qd)) / (2 * H)
        C = rd.coriolis_matrix(r, q, qd)
        scale = float(np.abs(rd.mass_matrix(r, q)).max() * np.abs(qd).max())
        N = Mdot - 2 * C
        assert_close("mimic: Mdot_r - 2C_r skew (FD)", N + N.T, np.zeros_like(N), FD, floor=scale)
        assert_close("mimic: Mdot_r = C_r + C_r^T (FD)", C + C.T, Mdot, FD, floor=scale)
        assert_close("mimic: C_r qd = c_r", C @ qd, rd.coriolis_forces(r, q, qd), EXACT,
                     floor=scale * np.abs(qd).max())


def test_passive_simulation_conserves_energy_and_steps_agree(robot):
    """No torque, no friction, RK4 for 1 s at dt = 1 ms: E = K + P constant in the reduced coordinates;
    simulate's first step equals rk4_step's, and Euler steps follow q' = q + dt q̇, q̇' = q̇ + dt FD."""
    name, r, f, G, o = robot
    q0, qd0, _ = next(_states(r, 9))
    traj = rd.simulate(r, q0, qd0, np.zeros(r.nq), 1e-3, 1000, method="rk4")
    E = np.array([rd.kinetic_energy(r, q, qd) + rd.potential_energy(r, q) for q, qd in zip(traj.q, traj.qd)])
    K = max(rd.kinetic_energy(r, q, qd) for q, qd in zip(traj.q, traj.qd))
    drift = measure(f"mimic: passive RK4 energy drift |dE|/Kmax ({name})", np.abs(E - E[0]).max() / K)
    assert drift < 1e-8, drift
    q1, qd1 = rd.rk4_step(r, q0, qd0, np.zeros(r.nq), 1e-3)
    assert np.array_equal(q1, traj.q[1]) and np.array_equal(qd1, traj.qd[1])
    tau = np.full(r.nq, 0.3)
    q1, qd1 = rd.euler_step(r, q0, qd0, tau, 1e-3, friction=True)
    qdd = rd.forward_dynamics(r, q0, qd0, tau, friction=True)
    assert_close("mimic: Euler step", np.concatenate([q1, qd1]),
                 np.concatenate([q0 + 1e-3 * qd0, qd0 + 1e-3 * qdd]), EXACT, floor=1.0)


def test_bad_input_of_full_length_names_q(robot):
    name, r, f, G, o = robot
    full_length = np.zeros(r.n_bodies)
    for call in (lambda: rd.gravity_torques(r, full_length), lambda: rd.mass_matrix(r, full_length),
                 lambda: rd.jacobian(r, full_length, "tool0"),
                 lambda: rd.forward_dynamics(r, full_length, np.zeros(r.nq), np.zeros(r.nq)),
                 lambda: rd.rk4_step(r, full_length, np.zeros(r.nq), np.zeros(r.nq), 1e-3)):
        with pytest.raises(ValueError, match=rf"q must have shape \({r.nq},\)"):
            call()


# -- the loader ---------------------------------------------------------------------------------------------
def _chain_urdf(mimics, extra_joints=()):
    """A chain a, b, c, d of revolute joints; mimics: {joint: (followed, multiplier, offset)}."""
    joints = []
    parent = "base_link"
    for k, name in enumerate(["a", "b", "c", "d", *extra_joints]):
        mimic = ""
        if name in mimics:
            followed, m, o = mimics[name]
            mimic = f'<mimic joint="{followed}" multiplier="{m}" offset="{o}"/>'
        joints.append((name, "revolute", parent, f"l_{name}", f"0.1 {0.02 * k} 0.2", f"0.{k} 0 0",
                       "0 1 0" if k % 2 else "0 0 1", "", mimic))
        parent = f"l_{name}"
    return _urdf(joints, 11)


def test_a_mimic_of_a_mimic_is_resolved_to_the_independent_joint():
    """a mimics b (2, 0.1), b mimics c (-0.5, 0.3): a follows c with 2·(-0.5) = -1 and 2·0.3 + 0.1 = 0.7."""
    chained = rd.load_urdf(_chain_urdf({"a": ("b", 2.0, 0.1), "b": ("c", -0.5, 0.3)}))
    direct = rd.load_urdf(_chain_urdf({"a": ("c", -1.0, 0.7), "b": ("c", -0.5, 0.3)}))
    assert chained.joint_names == ("c", "d")
    assert chained.mimic["a"] == ("c", -1.0, pytest.approx(0.7)) and chained.mimic["b"] == ("c", -0.5, 0.3)
    for q, qd, qdd in _states(chained, 12):
        assert_close("mimic: chained = resolved (M)", rd.mass_matrix(chained, q), rd.mass_matrix(direct, q),
                     EXACT)
        assert_close("mimic: chained = resolved (tau)", rd.inverse_dynamics(chained, q, qd, qdd),
                     rd.inverse_dynamics(direct, q, qd, qdd), EXACT, floor=1.0)


@pytest.mark.parametrize("mimics,message", [
    ({"b": ("nowhere", 1.0, 0.0)}, r"'b' mimics joint 'nowhere'"),
    ({"a": ("b", 1.0, 0.0), "b": ("c", 1.0, 0.0), "c": ("a", 1.0, 0.0)},
     r"cycle: '\w' -> '\w' -> '\w' -> '\w'"),
    ({"b": ("b", 1.0, 0.0)}, r"cycle: 'b' -> 'b'"),
])
def test_missing_followed_joint_and_cycles_are_refused_naming_the_joints(mimics, message):
    with pytest.raises(ValueError, match=message):
        rd.load_urdf(_chain_urdf(mimics))


def test_mimic_of_a_fixed_joint_is_refused():
    text = _chain_urdf({"b": ("tcp", 1.0, 0.0)}).replace(
        "</robot>", '<link name="tool"/><joint name="tcp" type="fixed"><parent link="l_d"/>'
                    '<child link="tool"/></joint></robot>')
    with pytest.raises(ValueError, match="'b' mimics fixed joint 'tcp'"):
        rd.load_urdf(text)


def test_locking_a_followed_joint_locks_its_mimics():
    """Locking j2 at 0.4 puts j3 (q3 = -0.5 q2 + 0.3) at 0.1: the same robot as the full-coordinate one
    with j2 at 0.4 and j3 at 0.1 locked. Locking j3 alone is refused; locking both consistently is not."""
    joints, seed = ROBOTS["coupled-chain"]
    locked = rd.load_urdf(_urdf(joints, seed), locked_joints={"j2": 0.4})
    by_hand = rd.load_urdf(_urdf(joints, seed, with_mimic=False), locked_joints={"j2": 0.4, "j3": 0.1})
    assert locked.joint_names == by_hand.joint_names == ("j1", "j4", "j5") and not locked.mimic
    q = np.array([0.3, 0.1, -0.7])
    assert_close("mimic: locked follower", rd.mass_matrix(locked, q), rd.mass_matrix(by_hand, q), EXACT)
    assert_close("mimic: locked follower pose", rd.frame_pose(locked, q), rd.frame_pose(by_hand, q), EXACT)
    both = rd.load_urdf(_urdf(joints, seed), locked_joints={"j2": 0.4, "j3": 0.1})
    assert both.joint_names == locked.joint_names
    with pytest.raises(ValueError, match="'j3' mimics 'j2'.*lock 'j2'"):
        rd.load_urdf(_urdf(joints, seed), locked_joints={"j3": 0.1})
    with pytest.raises(ValueError, match="'j3' mimics 'j2'.*locked at 0.2"):
        rd.load_urdf(_urdf(joints, seed), locked_joints={"j2": 0.4, "j3": 0.2})


def test_mimic_false_ignores_mimic_elements():
    joints, seed = ROBOTS["coupled-chain"]
    ignored = rd.load_urdf(_urdf(joints, seed), mimic=False)
    full = rd.load_urdf(_urdf(joints, seed, with_mimic=False))
    assert ignored.joint_names == full.joint_names and not ignored.mimic
    q = np.linspace(-1, 1, full.nq)
    assert np.array_equal(rd.mass_matrix(ignored, q), rd.mass_matrix(full, q))


def test_a_model_without_mimic_maps_every_body_to_itself():
    joints, seed = ROBOTS["coupled-chain"]
    full = rd.load_urdf(_urdf(joints, seed, with_mimic=False))
    assert full.n_bodies == full.nq and not full.mimic and full.body_joint_names == full.joint_names
    G, o = full.coordinate_map()
    assert np.array_equal(G, np.eye(full.nq)) and not o.any()
