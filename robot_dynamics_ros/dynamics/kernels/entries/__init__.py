"""The compiled entry points: the only kernels called from Python, one per public call.

    declare.py        the entry decorator (each name is numba's dispatcher, compiled for its declared
                      signature on its first call), the messages of the checks
    signatures.py     the argument types of the signatures
    rigid_body.py     inverse and forward dynamics, M(q), the momentum and its observer, C(q, q̇), ∂M/∂q
    frames.py         poses, Jacobians, task-space inertia and control, all terms of a state, log(T)
    sensitivities.py  derivatives of the dynamics, linearisation, regressors
    stepping.py       integration steps, simulation and batches of rollouts
    ddp_passes.py     optimal control: cost and gaps, derivatives, backward and forward passes (ddp.py)


Each checks its arguments (sizes, finiteness, and that each vector is an array object it reads
right: native.py; the Python layer then says which argument was wrong, _checks.py), calls one
algorithm, which is inlined into it (jit.inline), and checks that its results are finite: finite
arguments can still overflow (q̇ ~ 1e155 squares to inf in the Coriolis terms, and inf - inf is NaN;
a step too long for the integrator diverges), and a NaN must not be returned as an answer. That
raises a ValueError saying which quantity overflowed and from which arguments (OVERFLOW_*); a loop
over the n or n² results costs nanoseconds. Explicit signatures: anything but C-contiguous float64
arrays is refused with a TypeError instead of compiling a new specialisation. Results are written
into arrays the caller allocates: returning a fresh array from compiled code costs more (boxing) than
a 7-joint RNEA. `d` is a Data buffer, both the packed model (`mb`) and the workspace (`w`), see
layout.py. Vectors of joint values have one entry per coordinate (nq, n_coordinates; layout.py says
how mimic joints map them to bodies); forward dynamics of a model with mimic joints goes through M_r
(integrators.fd_mimic) instead of the ABA. The batch entry points (rnea_batch, aba_batch, crba_batch,
the regressor batches, linearize_batch) and the optimal-control passes release the GIL: their callers
give each call a workspace no other thread uses (threads.py: one copy per range of states); the
single-state entry points hold it, so calls from several threads may share the model's default Data.
"""
from ..kinematics import REF_BODY, REF_SPACE, REF_WORLD_ALIGNED  # noqa: F401  (codes the entries take)
from ..linearize import (  # noqa: F401  (codes the entries return)
    STATUS_NOT_POSITIVE_DEFINITE as LINEARIZE_NOT_POSITIVE_DEFINITE,
    STATUS_OVERFLOW as LINEARIZE_OVERFLOW,
)
from ..time_step import (  # noqa: F401  (codes the entries take)
    FD_NOT_POSITIVE_DEFINITE,
    METHOD_EULER,
    METHOD_RK4,
    METHOD_SEMI_IMPLICIT,
)
from .ddp_passes import (  # noqa: F401
    ocp_cost,
    ocp_derivatives,
    ocp_iteration,
)
from .declare import (  # noqa: F401  (the messages the public modules raise or compare)
    ENTRY_NAMES,
    NOT_POSITIVE_DEFINITE,
    NOTICE,
    OVERFLOW_B,
    OVERFLOW_BETA,
    OVERFLOW_C,
    OVERFLOW_CM,
    OVERFLOW_DERIVATIVES,
    OVERFLOW_DJ,
    OVERFLOW_DM,
    OVERFLOW_FD_DERIVATIVES,
    OVERFLOW_G,
    OVERFLOW_J,
    OVERFLOW_LAMBDA,
    OVERFLOW_LOG,
    OVERFLOW_M,
    OVERFLOW_OBSERVER,
    OVERFLOW_P,
    OVERFLOW_POSE,
    OVERFLOW_POSE_ERROR,
    OVERFLOW_QDD,
    OVERFLOW_QDD_TIP,
    OVERFLOW_REGRESSOR,
    OVERFLOW_SIMULATION,
    OVERFLOW_STEP,
    OVERFLOW_TASK_CONTROL,
    OVERFLOW_TAU,
    OVERFLOW_TAU_TIP,
    OVERFLOW_TERMS,
    SINGULAR_TASK_SPACE,
    compile_entries,
)
from .frames import (  # noqa: F401
    all_terms,
    body_poses,
    frame_pose,
    jacobian,
    jacobian_derivative,
    log_transform,
    pose_error,
    task_space_control,
    task_space_inertia,
)
from .rigid_body import (  # noqa: F401
    aba,
    aba_batch,
    aba_tip,
    bias,
    coriolis,
    coriolis_matrix,
    crba,
    crba_batch,
    fd_via_mass_matrix,
    gravity,
    mass_matrix_derivatives,
    momentum,
    momentum_balance,
    observer_start,
    observer_update,
    rnea,
    rnea_batch,
    rnea_tip,
)
from .sensitivities import (  # noqa: F401
    aba_derivatives,
    body_regressor_batch,
    joint_torque_regressor,
    joint_torque_regressor_batch,
    linearize_batch,
    linearize_trajectory,
    rnea_derivatives,
)
from .stepping import (  # noqa: F401
    simulate,
    simulate_batch,
    step,
)
