"""The recursive algorithms of Modern Robotics ch. 9 as numba-compiled loops, one module per algorithm.

    jit/            how kernels compile: the decorators inline / subroutine / entry; the only code that
                    reaches into numba's internals (linked mode), with a plain @njit fallback
    layout.py       the Data buffer: packed model and workspace columns, one quantity each
    native.py       the array objects the entry points read right (numpy's struct, read in compiled code)
    spatial_algebra.py  twists, wrenches, Ad, ad, spatial inertias, on tuples of floats
    kinematics.py   joint transforms, T_0i, screw axes S_i, twists in {0}, frame poses (eqs. 9.35-9.37, 9.50)
    rnea.py         inverse dynamics, recursive Newton-Euler                            (eqs. 9.53-9.57)
    crba.py         mass matrix, composite rigid bodies                            (eq. 9.61 over subtrees)
    aba.py          forward dynamics, articulated bodies
    frame_jacobians.py  frame Jacobians and their time derivatives
    christoffel.py  Christoffel-consistent Coriolis matrix and ∂M/∂q                    (eqs. 9.87, 9.13)
    linalg.py       Cholesky solves and the task-space inertia                          (eq. 9.98)
    state_terms.py  M, c, g, J, Λ, η of one state from one kinematics pass              (eqs. 9.97-9.99)
    time_step.py    friction and the Euler / semi-implicit Euler / RK4 steps            (§9.3)
    rnea_derivatives.py  ∂τ/∂(q, q̇) by the differentiated RNEA, ∂q̈/∂(q, q̇, τ) from it
    linearize.py    discrete-time linearisation of a step along a trajectory
    ddp.py          box-FDDP's passes over the knots of a reaching task (costs, backward and forward pass)
    box_qp.py       the box-constrained QP of a DDP knot's control step (projected Newton)
    momentum.py     generalized momentum and the momentum observer
    regressor.py    the joint-torque regressor Y(q, q̇, q̈)
    task_space_law.py  the task-space control law
    entries/        the compiled entry points the public modules call (declare.py, then one module per group)

Following a quantity from the public API to the loop: dynamics.inverse_dynamics calls entries.rnea
(entries/rigid_body.py) with the data buffer, q, q̇, q̈ and τ; it checks the arguments and runs
rnea.rnea, the loop of eqs. 9.53-9.57, inlined into it. With NUMBA_DISABLE_JIT=1 the same code
runs as plain Python, which is how to single-step the textbook algorithms.
"""
