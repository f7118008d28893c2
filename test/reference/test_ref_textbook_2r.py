r"""The planar 2R arm of Modern Robotics §9.1.1 in closed form, derived here from its Lagrangian.

THIS DRAFT OF THE CHAPTER PRINTS THE CLOSED FORM WITH TYPOS, so the test does not use the printed
equations: it uses the ones derived below from the kinetic and potential energy given in the text,
and `test_printed_equations_do_not_match` shows the printed ones disagree (backing this note).

Setup (the text's): point masses m1, m2 at the ends of links of lengths L1, L2; joint angles θ1
(link 1 from the x axis) and θ2 (link 2 relative to link 1); motion in the x-y plane; gravity of
magnitude g along -y. Shorthand: s1 = sin θ1, c1 = cos θ1, s2, c2 likewise, s12 = sin(θ1 + θ2),
c12 = cos(θ1 + θ2).

Positions and velocities (as printed):
    p1 = (L1 c1, L1 s1)                       ṗ1 = (-L1 s1, L1 c1) θ̇1
    p2 = (L1 c1 + L2 c12, L1 s1 + L2 s12)     ṗ2 = (-L1 s1 θ̇1 - L2 s12 (θ̇1+θ̇2), L1 c1 θ̇1 + L2 c12 (θ̇1+θ̇2))

Kinetic energy. K1 = ½ m1 |ṗ1|² = ½ m1 L1² θ̇1². For link 2,
    |ṗ2|² = L1² θ̇1² + L2² (θ̇1+θ̇2)² + 2 L1 L2 θ̇1 (θ̇1+θ̇2) (s1 s12 + c1 c12)
          = L1² θ̇1² + L2² (θ̇1+θ̇2)² + 2 L1 L2 c2 θ̇1 (θ̇1+θ̇2)          [cos(θ12 - θ1) = c2]
          = (L1² + 2 L1 L2 c2 + L2²) θ̇1² + 2 (L2² + L1 L2 c2) θ̇1 θ̇2 + L2² θ̇2²,
so K2 = ½ m2 |ṗ2|², with m2 multiplying EVERY term (the draft's parenthesisation puts m2 on the
first term only). Hence K = ½ θ̇ᵀ M(θ) θ̇ with
    M11 = m1 L1² + m2 (L1² + 2 L1 L2 c2 + L2²)  = (m1 + m2) L1² + m2 (2 L1 L2 c2 + L2²)
    M12 = M21 = m2 (L1 L2 c2 + L2²)
    M22 = m2 L2².
Potential energy (as printed): P = m1 g L1 s1 + m2 g (L1 s1 + L2 s12).

Euler-Lagrange, τ_i = d/dt ∂L/∂θ̇_i - ∂L/∂θ_i with L = K - P (eq. 9.8). M depends on θ2 only:
    ∂M11/∂θ2 = -2 m2 L1 L2 s2,   ∂M12/∂θ2 = -m2 L1 L2 s2,   ∂M22/∂θ2 = 0.
Write h = m2 L1 L2 s2.
  i = 1: ∂L/∂θ̇1 = M11 θ̇1 + M12 θ̇2;  d/dt = M11 θ̈1 + M12 θ̈2 - 2h θ̇1 θ̇2 - h θ̇2²;
         ∂L/∂θ1 = -∂P/∂θ1 = -((m1 + m2) g L1 c1 + m2 g L2 c12).
  i = 2: ∂L/∂θ̇2 = M12 θ̇1 + M22 θ̇2;  d/dt = M12 θ̈1 + M22 θ̈2 - h θ̇1 θ̇2;
         ∂L/∂θ2 = ½ θ̇ᵀ (∂M/∂θ2) θ̇ - ∂P/∂θ2 = -h θ̇1² - h θ̇1 θ̇2 - m2 g L2 c12.
Therefore (the θ̇1θ̇2 terms of τ2 cancel):
    τ1 = M11 θ̈1 + M12 θ̈2 - h (2 θ̇1 θ̇2 + θ̇2²) + (m1 + m2) g L1 c1 + m2 g L2 c12
    τ2 = M12 θ̈1 + M22 θ̈2 + h θ̇1²                  + m2 g L2 c12.
The draft prints (typos marked):
    τ1: M12 with cos θ1 instead of cos θ2;
    τ2: "- m2 L1 L2 θ̇1 θ̇2 s2" instead of "+ m2 L1 L2 θ̇1² s2", and "- m2 g L2 c12" instead of "+".

Christoffel symbols (eq. 9.13, Γ_ijk = ½(∂m_ij/∂θ_k + ∂m_ik/∂θ_j - ∂m_jk/∂θ_i)), 1-based:
    Γ112 = Γ121 = ½ ∂M11/∂θ2 = -h,   Γ122 = ∂M12/∂θ2 - ½ ∂M22/∂θ1 = -h,   Γ211 = -½ ∂M11/∂θ2 = h,
    Γ111 = Γ212 = Γ221 = Γ222 = 0,
which reproduce c1 = -h (2 θ̇1 θ̇2 + θ̇2²) and c2 = h θ̇1² (eq. 9.12). The Coriolis matrix
C_ij = Σ_k Γ_ijk θ̇_k (eq. 9.87) is
    C = [[-h θ̇2, -h (θ̇1 + θ̇2)], [h θ̇1, 0]],
and Ṁ - 2C = [[0, h (2θ̇1 + θ̇2)], [-h (2θ̇1 + θ̇2), 0]] is skew-symmetric (Proposition 9.1).
Gravity torques g(θ) = ∂P/∂θ = ((m1 + m2) g L1 c1 + m2 g L2 c12,  m2 g L2 c12).

The arm is built twice: from Mlist/Glist/Slist (from_modern_robotics; point masses as
G = diag(0, 0, 0, m, m, m): no rotational inertia about their centres) and as a URDF string.
"""
import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd

M1, M2, L1, L2, GRAV = 1.3, 0.8, 0.7, 0.45, 9.81
TOL = 1e-12


# ---------------------------------------------------------------------------------------------
# the derived closed form
# ---------------------------------------------------------------------------------------------

def mass_matrix_2r(th):
    c2 = np.cos(th[1])
    m12 = M2 * (L1 * L2 * c2 + L2 ** 2)
    return np.array([[(M1 + M2) * L1 ** 2 + M2 * (2 * L1 * L2 * c2 + L2 ** 2), m12], [m12, M2 * L2 ** 2]])


def coriolis_2r(th, thd):
    h = M2 * L1 * L2 * np.sin(th[1])
    return np.array([-h * (2 * thd[0] * thd[1] + thd[1] ** 2), h * thd[0] ** 2])


def gravity_2r(th):
    c1, c12 = np.cos(th[0]), np.cos(th[0] + th[1])
    return np.array([(M1 + M2) * GRAV * L1 * c1 + M2 * GRAV * L2 * c12, M2 * GRAV * L2 * c12])


def tau_2r(th, thd, thdd):
    return mass_matrix_2r(th) @ thdd + coriolis_2r(th, thd) + gravity_2r(th)


def christoffel_2r(th):
    h = M2 * L1 * L2 * np.sin(th[1])
    G = np.zeros((2, 2, 2))
    G[0, 0, 1] = G[0, 1, 0] = G[0, 1, 1] = -h
    G[1, 0, 0] = h
    return G


def coriolis_matrix_2r(th, thd):
    h = M2 * L1 * L2 * np.sin(th[1])
    return np.array([[-h * thd[1], -h * (thd[0] + thd[1])], [h * thd[0], 0.0]])


def kinetic_energy_2r(th, thd):
    return 0.5 * thd @ mass_matrix_2r(th) @ thd


def potential_energy_2r(th):
    return M1 * GRAV * L1 * np.sin(th[0]) + M2 * GRAV * (L1 * np.sin(th[0]) + L2 * np.sin(th[0] + th[1]))


def tau_2r_as_printed(th, thd, thdd):
    """The draft's printed equations, typos included."""
    s2, c1, c2, c12 = np.sin(th[1]), np.cos(th[0]), np.cos(th[1]), np.cos(th[0] + th[1])
    t1 = (((M1 + M2) * L1 ** 2 + M2 * (2 * L1 * L2 * c2 + L2 ** 2)) * thdd[0]
          + M2 * (L1 * L2 * c1 + L2 ** 2) * thdd[1] - 2 * M2 * L1 * L2 * thd[0] * thd[1] * s2
          - M2 * L1 * L2 * thd[1] ** 2 * s2 + (M1 + M2) * L1 * GRAV * c1 + M2 * GRAV * L2 * c12)
    t2 = (M2 * (L1 * L2 * c2 + L2 ** 2) * thdd[0] + M2 * L2 ** 2 * thdd[1]
          - M2 * L1 * L2 * thd[0] * thd[1] * s2 - M2 * GRAV * L2 * c12)
    return np.array([t1, t2])


def kinetic_energy_2r_as_printed(th, thd):
    """K1 + K2 with the draft's parenthesisation of K2 (m2 on the first term only)."""
    c2 = np.cos(th[1])
    K1 = 0.5 * M1 * L1 ** 2 * thd[0] ** 2
    K2 = 0.5 * (M2 * (L1 ** 2 + 2 * L1 * L2 * c2 + L2 ** 2) * thd[0] ** 2
                + 2 * (L2 ** 2 + L1 * L2 * c2) * thd[0] * thd[1] + L2 ** 2 * thd[1] ** 2)
    return K1 + K2


# ---------------------------------------------------------------------------------------------
# the arm, two ways
# ---------------------------------------------------------------------------------------------

def arm_from_modern_robotics(gravity=(0.0, -GRAV, 0.0)):
    """{1} at mass 1, {2} at mass 2, {3} (end effector) = {2}; joints about z through the origin and
    through (L1, 0, 0): S1 = (0,0,1, 0,0,0), S2 = (0,0,1, -(z × L1 x̂)) = (0,0,1, 0,-L1,0)."""
    def T(x):
        out = np.eye(4)
        out[0, 3] = x
        return out
    Mlist = [T(L1), T(L2), np.eye(4)]
    Glist = [np.diag([0, 0, 0, M1, M1, M1]), np.diag([0, 0, 0, M2, M2, M2])]
    Slist = np.array([[0, 0, 1, 0, 0, 0], [0, 0, 1, 0, -L1, 0]], dtype=float).T
    return rd.from_modern_robotics(Mlist, Glist, Slist, gravity=gravity)


ARM_URDF = f"""<?xml version="1.0"?>
<robot name="planar_2r">
  <link name="base"/>
  <link name="link1">
    <inertial><origin xyz="{L1} 0 0"/><mass value="{M1}"/>
      <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>
  </link>
  <link name="link2">
    <inertial><origin xyz="{L2} 0 0"/><mass value="{M2}"/>
      <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>
  </link>
  <link name="tip"/>
  <joint name="joint1" type="continuous"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/></joint>
  <joint name="joint2" type="continuous"><parent link="link1"/><child link="link2"/>
    <origin xyz="{L1} 0 0"/><axis xyz="0 0 1"/></joint>
  <joint name="tip_joint" type="fixed"><parent link="link2"/><child link="tip"/>
    <origin xyz="{L2} 0 0"/></joint>
</robot>"""


def arm_from_urdf(gravity=(0.0, -GRAV, 0.0)):
    return rd.load_urdf(ARM_URDF, gravity=gravity)


BUILDERS = {"from_modern_robotics": arm_from_modern_robotics, "urdf": arm_from_urdf}


@pytest.fixture(params=BUILDERS, scope="module")
def arm(request):
    return request.param, BUILDERS[request.param]()


def states(count=12, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-np.pi, np.pi, (count, 2)), rng.normal(scale=2.0, size=(count, 2)),
            rng.normal(scale=3.0, size=(count, 2)))


# ---------------------------------------------------------------------------------------------

def test_point_masses_are_accepted(arm):
    """G = diag(0, 0, 0, m, m, m) (no rotational inertia about the centre of mass) is a valid link,
    and the mass matrix stays positive definite: det M = m1 m2 L1² L2² + m2² L1² L2² s2² > 0, even
    at θ2 = 0 where link 2's mass lies on joint 2's lever arm."""
    name, model = arm
    assert model.nq == 2
    np.testing.assert_allclose(model.mass, [M1, M2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(model.inertia_com, 0.0, atol=1e-15)
    for th2 in (0.0, np.pi / 2, np.pi):
        M = rd.mass_matrix(model, np.array([0.3, th2]))
        assert np.linalg.eigvalsh(M)[0] > 0.0, (name, th2)
        np.testing.assert_allclose(np.linalg.det(M), M1 * M2 * L1 ** 2 * L2 ** 2
                                   + M2 ** 2 * L1 ** 2 * L2 ** 2 * np.sin(th2) ** 2, rtol=1e-12)


def test_against_derived_closed_form(arm, check):
    name, model = arm
    robot = f"2R {name}"
    for th, thd, thdd in zip(*states()):
        check("2R inverse_dynamics", robot, rd.inverse_dynamics(model, th, thd, thdd), tau_2r(th, thd, thdd),
              tol=TOL)
        check("2R mass_matrix", robot, rd.mass_matrix(model, th), mass_matrix_2r(th), tol=TOL)
        check("2R coriolis_forces", robot, rd.coriolis_forces(model, th, thd), coriolis_2r(th, thd), tol=TOL)
        check("2R gravity_torques", robot, rd.gravity_torques(model, th), gravity_2r(th), tol=TOL)
        check("2R christoffel_symbols", robot, rd.christoffel_symbols(model, th), christoffel_2r(th), tol=TOL)
        check("2R coriolis_matrix", robot, rd.coriolis_matrix(model, th, thd), coriolis_matrix_2r(th, thd),
              tol=TOL)
        check("2R potential_energy", robot, rd.potential_energy(model, th), potential_energy_2r(th), tol=TOL)
        check("2R forward_dynamics", robot, rd.forward_dynamics(model, th, thd, tau_2r(th, thd, thdd)), thdd,
              tol=1e-10)


def test_kinetic_energy_and_mass_matrix_via_jacobians(arm, check):
    """Eqs. 9.59-9.61 on the 2R arm. For from_modern_robotics the named frames 'link{i}' are offset
    from the joint (body) frames, which once paired the wrong Jacobian with each inertia."""
    name, model = arm
    for th, thd, _ in zip(*states(seed=4)):
        check("2R kinetic_energy", f"2R {name}", rd.kinetic_energy(model, th, thd),
              kinetic_energy_2r(th, thd), tol=TOL)
        check("2R mass_matrix_via_jacobians", f"2R {name}", rd.mass_matrix_via_jacobians(model, th),
              mass_matrix_2r(th), tol=TOL)


def test_tip_frame_is_the_second_mass(arm, check):
    """The end-effector frame sits at mass 2: p = (L1 c1 + L2 c12, L1 s1 + L2 s12, 0)."""
    name, model = arm
    tip = {"from_modern_robotics": "end_effector", "urdf": "tip"}[name]
    for th in states(4, seed=1)[0]:
        p = [L1 * np.cos(th[0]) + L2 * np.cos(th.sum()), L1 * np.sin(th[0]) + L2 * np.sin(th.sum()), 0.0]
        check("2R frame_pose", f"2R {name}", rd.frame_pose(model, th, tip)[:3, 3], p, tol=TOL)


def kinetic_energy_from_velocities(th, thd):
    """K = ½ m1 |ṗ1|² + ½ m2 |ṗ2|² with the text's ṗ1, ṗ2 (module docstring), not through M(θ)."""
    w1, w12 = thd[0], thd[0] + thd[1]
    p1d = L1 * w1 * np.array([-np.sin(th[0]), np.cos(th[0])])
    p2d = p1d + L2 * w12 * np.array([-np.sin(th[0] + th[1]), np.cos(th[0] + th[1])])
    return 0.5 * M1 * p1d @ p1d + 0.5 * M2 * p2d @ p2d


def tau_euler_lagrange(th, thd, thdd, h=1e-6):
    """τ = d/dt ∂L/∂θ̇ − ∂L/∂θ (eq. 9.8) for L = K − P of the text's velocities and potential energy,
    numerically, bypassing the derivation above. K is a quadratic form in θ̇, so ∂L/∂θ̇ = A(θ) θ̇ with
    A_ij = K(e_i + e_j) − K(e_i) − K(e_j) (exact up to rounding); d/dt of it along
    (θ, θ̇) → (θ ± hθ̇, θ̇ ± hθ̈) and ∂L/∂θ are central differences (error ~h², ε|L|/h ~ 1e-9)."""
    E = np.eye(2)

    def A(x):
        K = [[kinetic_energy_from_velocities(x, E[i] + E[j]) for j in range(2)] for i in range(2)]
        k = [kinetic_energy_from_velocities(x, e) for e in E]
        return np.array(K) - np.add.outer(k, k)

    def L(x, xd):
        return kinetic_energy_from_velocities(x, xd) - potential_energy_2r(x)

    ddt = (A(th + h * thd) @ (thd + h * thdd) - A(th - h * thd) @ (thd - h * thdd)) / (2 * h)
    dL = np.array([(L(th + h * e, thd) - L(th - h * e, thd)) / (2 * h) for e in E])
    return ddt - dL


def test_euler_lagrange_of_the_texts_energies(arm, check):
    """The package against the text's kinetic and potential energy through eq. 9.8 evaluated
    numerically (not through the closed form derived by hand above, so a slip shared by that
    derivation and the package is caught): inverse_dynamics, kinetic_energy and potential_energy.
    (This replaces self-checks of the derived closed form that called no package code; the package
    satisfies c = Σ Γ θ̇θ̇, Ṁ = C + Cᵀ and g = ∂P/∂θ in test/dynamics, and equals that closed form
    in test_against_derived_closed_form.)"""
    name, model = arm
    robot = f"2R {name}"
    for th, thd, thdd in zip(*states(6, seed=2)):
        check("2R kinetic_energy (text's velocities)", robot, rd.kinetic_energy(model, th, thd),
              kinetic_energy_from_velocities(th, thd), tol=TOL)
        check("2R potential_energy (text's P)", robot, rd.potential_energy(model, th),
              potential_energy_2r(th), tol=TOL)
        check("2R inverse_dynamics vs Euler-Lagrange of the text's L (FD, tol 1e-7)", robot,
              rd.inverse_dynamics(model, th, thd, thdd), tau_euler_lagrange(th, thd, thdd), tol=1e-7)


def test_printed_equations_do_not_match(arm):
    """The draft's printed τ1, τ2 disagree with the dynamics (each of the three typos on its own), and
    its K2 parenthesisation disagrees with the kinetic energy whenever m2 != 1."""
    name, model = arm
    for th, thd, thdd in zip(*states(6, seed=3)):
        ours = rd.inverse_dynamics(model, th, thd, thdd)
        printed = tau_2r_as_printed(th, thd, thdd)
        assert abs(printed[0] - ours[0]) > 1e-3 and abs(printed[1] - ours[1]) > 1e-3
        assert abs(rd.kinetic_energy(model, th, thd) - kinetic_energy_2r_as_printed(th, thd)) > 1e-6
    # one typo at a time, each isolated by the state that exposes it alone
    th, z = np.array([0.4, 1.1]), np.zeros(2)
    # τ1's cos θ1 (for cos θ2) shows with θ̈2 only, gravity off
    flat = BUILDERS[name](gravity=(0.0, 0.0, 0.0))
    assert abs(rd.inverse_dynamics(flat, th, z, [0.0, 1.0])[0]
               - (tau_2r_as_printed(th, z, [0.0, 1.0]) - gravity_2r(th))[0]) > 1e-2
    # τ2's velocity term shows with θ̇1 only (printed: 0; true: h θ̇1²), gravity off
    assert abs(rd.inverse_dynamics(flat, th, [1.0, 0.0], z)[1]
               - (tau_2r_as_printed(th, [1.0, 0.0], z) - gravity_2r(th))[1]) > 1e-2
    # τ2's gravity sign shows at rest
    assert abs(rd.inverse_dynamics(model, th, z, z)[1] - tau_2r_as_printed(th, z, z)[1]) > 1e-2
