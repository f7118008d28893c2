"""The textbook's own parameterisation (eqs. 9.35–9.52): Mlist, Glist, Slist ↔ Model."""
import numpy as np

from . import _checks
from .inertia import split_spatial_inertia
from .jacobians import frame_pose
from .kernels import entries as _k
from .model import Model
from .model_checks import check_transforms
from .spatial import adjoint, inverse_transform, transform


def from_modern_robotics(Mlist, Glist, Slist, gravity=(0.0, 0.0, -9.81)):
    """A Model of the n-joint open chain given as in the Modern Robotics library.

    Mlist: n + 1 transforms M_{i-1,i} between the link frames {i} at the home position, the last one
    M_{n,n+1} to the end-effector frame (eq. 9.39). Glist: n spatial inertias G_i in {i} (eq. 9.52).
    Slist: (6, n) screw axes S_i in the base frame at home (eq. 9.36); revolute (|ω| = 1, pitch 0) or
    prismatic (ω = 0, |v| = 1). gravity: in the base frame. ValueError naming the element for a
    non-finite entry, an Mlist entry that is not a rigid transform, a spatial inertia that is not one
    (or not physically valid: mass >= 0, I_c positive semi-definite), anything beyond Model's bounds
    (model_checks.py: |p| < 1e6 m, m <= 1e12 kg), and a model whose mass matrix would be singular (e.g. an
    all-zero Glist: the joints move no mass).

    Each joint's body frame is {i} moved along the joint axis's perpendicular to a point on the axis
    (A_i = Ad_{M_i^-1} S_i, eq. 9.40, becomes a pure rotation or translation axis there). Frames:
    'base' {0}, 'link1'..'linkn' (the frames {i} of Mlist, at the links' reference points) and
    'end_effector' {n+1}, the default tip frame. Joints are named 'joint1'..'jointn'.
    """
    Slist = np.asarray(Slist, dtype=float)
    if Slist.ndim != 2 or Slist.shape[0] != 6:
        raise ValueError(f"Slist must have shape (6, n), got {Slist.shape}")
    if not np.all(np.isfinite(Slist)):
        raise ValueError("Slist must be finite")
    n = Slist.shape[1]
    Mlist = [np.asarray(M, dtype=float) for M in Mlist]
    Glist = [np.asarray(G, dtype=float) for G in Glist]
    if len(Mlist) != n + 1 or any(M.shape != (4, 4) for M in Mlist):
        raise ValueError(f"Mlist must hold n + 1 = {n + 1} transforms (4x4), got {len(Mlist)}")
    if len(Glist) != n or any(G.shape != (6, 6) for G in Glist):
        raise ValueError(f"Glist must hold n = {n} spatial inertias (6x6), got {len(Glist)}")
    check_transforms(lambda i: f"Mlist[{i}]", Mlist)
    home = np.eye(4)
    T_tree, axis, types, offsets, mass, com, inertia = [], [], [], [], [], [], []
    previous_offset = np.zeros(3)
    for i in range(n):
        home = home @ Mlist[i]                                              # M_i (eq. 9.38)
        A = adjoint(inverse_transform(home)) @ Slist[:, i]                  # A_i = Ad_{M_i^-1} S_i (9.40)
        w, v = A[:3], A[3:]
        if np.linalg.norm(w) > 1e-9:
            if abs(np.linalg.norm(w) - 1) > 1e-6 or abs(w @ v) > 1e-6:
                raise ValueError(f"Slist[:, {i}]: revolute screw axes need |ω| = 1 and zero pitch")
            types.append("revolute")
            axis.append(w / np.linalg.norm(w))
            r = np.cross(w, v)                                              # foot of the axis in {i}
        else:
            if abs(np.linalg.norm(v) - 1) > 1e-6:
                raise ValueError(f"Slist[:, {i}]: prismatic screw axes need ω = 0 and |v| = 1")
            types.append("prismatic")
            axis.append(v / np.linalg.norm(v))
            r = np.zeros(3)
        # pose of the body frame (at r in {i}) in the previous body frame (at previous_offset in {i-1})
        T_tree.append(transform(np.eye(3), -previous_offset) @ Mlist[i] @ transform(np.eye(3), r))
        offsets.append(r)
        previous_offset = r
        m, c, Ic = split_spatial_inertia(Glist[i], f"Glist[{i}]")
        mass.append(m)
        com.append(c - r)
        inertia.append(Ic)
    frame_names = ["base"] + [f"link{i + 1}" for i in range(n)] + ["end_effector"]
    frame_body = [-1] + list(range(n)) + [n - 1]
    frame_placement = [np.eye(4)] + [transform(np.eye(3), -r) for r in offsets]
    frame_placement.append(transform(np.eye(3), -offsets[-1]) @ Mlist[n] if n else Mlist[n])
    return Model(joint_names=[f"joint{i + 1}" for i in range(n)], joint_types=types,
                 link_names=[f"link{i + 1}" for i in range(n)], parent=np.arange(-1, n - 1),
                 T_tree=np.array(T_tree).reshape(n, 4, 4), axis=np.array(axis).reshape(n, 3),
                 mass=np.array(mass), com=np.array(com).reshape(n, 3),
                 inertia_com=np.array(inertia).reshape(n, 3, 3), frame_names=frame_names,
                 frame_body=frame_body, frame_placement=np.array(frame_placement), root_link="base",
                 tip_frame="end_effector", gravity=gravity)


def to_modern_robotics(model):
    """(Mlist, Glist, Slist) of an open-chain Model at q = 0, in the textbook's form (eqs. 9.35–9.52):
    link frames {i} at the links' centres of mass with the body frames' axes, so G_i = diag(I_i, m_i 1);
    M_{n,n+1} ends at model.tip_frame. ValueError for branched trees and for mimic joints (the
    textbook's parameters have one independent joint per link)."""
    if not model.is_chain:
        raise ValueError("to_modern_robotics needs an open chain; this model is a branched tree")
    if model.mimic:
        raise ValueError(f"to_modern_robotics needs independent joints; this model has mimic joints "
                         f"{list(model.mimic)}")
    n = model.nq
    q0 = np.zeros(n)
    T0 = _k.body_poses(_checks.buffer(model), q0)
    Slist = np.zeros((6, n))
    homes = []
    for i in range(n):
        A = np.zeros(6)
        r = 3 if model.joint_types[i] == "prismatic" else 0
        A[r:r + 3] = model.axis[i]                                          # A_i = (a, 0) or (0, a)
        Slist[:, i] = adjoint(T0[i]) @ A                                    # S_i = Ad_{M_i} A_i
        homes.append(T0[i] @ transform(np.eye(3), model.com[i]))          # {i} at the centre of mass
    tip = frame_pose(model, q0)
    Mlist, previous = [], np.eye(4)
    for M in homes + [tip]:
        Mlist.append(inverse_transform(previous) @ M)                       # M_{i-1,i} = M_{i-1}^-1 M_i
        previous = M
    Glist = []
    for i in range(n):
        G = np.zeros((6, 6))
        G[:3, :3] = model.inertia_com[i]
        G[3:, 3:] = model.mass[i] * np.eye(3)
        Glist.append(G)
    return Mlist, Glist, Slist
