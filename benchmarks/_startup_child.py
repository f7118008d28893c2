"""Child process of the start-up benchmark: prints one JSON line of CLOCK_MONOTONIC timestamps.

    python benchmarks/_startup_child.py PANDA_URDF

The parent records time.monotonic() just before it starts this process (CLOCK_MONOTONIC is one
clock for every process of the machine), so `t_script - t_spawn` is interpreter start-up
(including the ROS wheels' re-exec). Then: `import robot_dynamics_ros.dynamics`, load_urdf, and
the first and second call of each public function (the first call pays numba compilation or cache
loading if anything is still lazy).
"""
import json
import sys
import time

t_script = time.monotonic()
import numpy as np

t_numpy = time.monotonic()
import robot_dynamics_ros.dynamics as rd

t_import = time.monotonic()
model = rd.load_urdf(sys.argv[1], locked_joints={"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0})
t_load = time.monotonic()

n = model.nq
q = np.array([0.0, -0.785398, 0.0, -2.356194, 0.0, 1.570796, 0.785398])
qd = np.linspace(-0.5, 0.5, n)
qdd = np.linspace(1.0, -1.0, n)
tau = np.linspace(-2.0, 2.0, n)
Q = np.tile(q, (20, 1))
T = np.tile(tau, (20, 1))
calls = {
    "inverse_dynamics": lambda: rd.inverse_dynamics(model, q, qd, qdd),
    "mass_matrix": lambda: rd.mass_matrix(model, q),
    "forward_dynamics": lambda: rd.forward_dynamics(model, q, qd, tau),
    "gravity_torques": lambda: rd.gravity_torques(model, q),
    "coriolis_forces": lambda: rd.coriolis_forces(model, q, qd),
    "bias_forces": lambda: rd.bias_forces(model, q, qd),
    "coriolis_matrix": lambda: rd.coriolis_matrix(model, q, qd),
    "jacobian": lambda: rd.jacobian(model, q, model.tip_frame),
    "task_space_inertia": lambda: rd.task_space_inertia(model, q, model.tip_frame),
    "computed_torque": lambda: rd.computed_torque(model, q, qd, q, qd * 0, qdd * 0, 100.0, 20.0),
    "rk4_step": lambda: rd.rk4_step(model, q, qd, tau, 1e-3),
    "simulate": lambda: rd.simulate(model, q, qd, T, 1e-3, 20),
    "inverse_dynamics_trajectory": lambda: rd.inverse_dynamics_trajectory(model, Q, Q * 0, Q * 0),
    "mass_matrix_trajectory": lambda: rd.mass_matrix_trajectory(model, Q),
    "forward_dynamics_trajectory": lambda: rd.forward_dynamics_trajectory(model, Q, Q * 0, T),
}
first, second, errors = {}, {}, {}
for name, call in calls.items():
    try:
        t0 = time.monotonic()
        call()
        t1 = time.monotonic()
        call()
        t2 = time.monotonic()
        first[name], second[name] = t1 - t0, t2 - t1
    except Exception as exc:  # report, do not stop
        errors[name] = f"{type(exc).__name__}: {exc}"
t_end = time.monotonic()
print(json.dumps(dict(t_script=t_script, t_numpy=t_numpy, t_import=t_import, t_load=t_load, t_end=t_end,
                      first=first, second=second, errors=errors)))
