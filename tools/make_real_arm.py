"""Write the demo's "real arm": the UR5e of urdf/ur5e.urdf as a real one differs from its URDF.

    python tools/make_real_arm.py      # writes urdf/ur5e_real_arm.urdf and config/ur5e_real_arm.yaml

Every link's mass scaled by up to ±30 %, its centre of mass moved by up to 3 cm per axis, its principal
moments scaled by up to ±30 % about new principal axes (a rigid body still). Per joint, in proportion to
its size (its effort limit E: 150 N m for the UR5e's base, shoulder and elbow, 28 N m for the wrists),
each times a factor in [0.7, 1.3]: Coulomb friction 0.012 E (1.8 and 0.34 N m) and viscous friction
0.006 E (0.9 and 0.17 N m s/rad) in the URDF's <dynamics>; armature 0.003 E (0.45 and 0.084 kg m^2: a
rotor's inertia through a 1:101 harmonic drive, many times a UR wrist link's own) and effort offsets
within ±0.01 E (±1.5 and ±0.28 N m) in the YAML, as the nodes' parameters armature and effort_offset:
the simulator plays this arm with them. Seeded: the files are reproducible; they are
committed, so nothing runs this but a maintainer who wants another arm.
"""
import pathlib

import numpy as np

from robot_dynamics_ros import dynamics as rd

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = ROOT / "urdf" / "ur5e.urdf"
URDF = ROOT / "urdf" / "ur5e_real_arm.urdf"
PARAMETERS = ROOT / "config" / "ur5e_real_arm.yaml"


def real_arm(model, seed=1, spread=0.3):
    """(model, effort offsets) of a real arm that `model` describes only roughly (module docstring)."""
    rng = np.random.default_rng(seed)
    n = model.nq
    size = np.where(np.isfinite(model.effort_limit), model.effort_limit, 100.0)     # E, N m

    def factor():
        return rng.uniform(0.7, 1.3, n)
    rotation = np.linalg.qr(rng.normal(size=(model.n_bodies, 3, 3)))[0]
    moments = np.linalg.eigvalsh(model.inertia_com) * rng.uniform(1 - spread, 1 + spread, (model.n_bodies, 1))
    inertia = np.einsum("bij,bj,bkj->bik", rotation, moments, rotation)
    arm = model.replace(mass=model.mass * rng.uniform(1 - spread, 1 + spread, model.n_bodies),
                        com=model.com + rng.uniform(-0.03, 0.03, model.com.shape),
                        inertia_com=0.5 * (inertia + inertia.transpose(0, 2, 1)),
                        damping=0.006 * size * factor(), friction=0.012 * size * factor())
    return rd.with_armature(arm, 0.003 * size * factor()), 0.01 * size * rng.uniform(-1.0, 1.0, n)


def main():
    arm, offset = real_arm(rd.load_urdf(SOURCE))
    rd.write_urdf(arm, SOURCE, URDF)

    def vector(values):
        return "[" + ", ".join(f"{v:.6f}" for v in values) + "]"
    PARAMETERS.write_text("\n".join([
        "# The demo's \"real arm\" (tools/make_real_arm.py): what urdf/ur5e_real_arm.urdf cannot hold.",
        f"# Joint order: {', '.join(arm.joint_names)}",
        "# armature: rotor inertia through the gearbox (kg m^2); effort_offset: what the effort sensors",
        "# add to the joint torques (N m). Give it to the simulator_node that plays the arm.",
        "/**:",
        "  ros__parameters:",
        f"    armature: {vector(arm.armature)}",
        f"    effort_offset: {vector(offset)}",
        ""]))
    print(f"wrote {URDF} and {PARAMETERS}")


if __name__ == "__main__":
    main()
