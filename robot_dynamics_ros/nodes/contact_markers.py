"""A simulator's contacts as a visualization_msgs/MarkerArray (``simulator_node``'s ``~/contacts``).

Per contact k (``logic/mujoco_engine.Contact``), three markers in the namespaces

- ``contact_point``: a SPHERE of diameter ``POINT_DIAMETER`` at the contact point p_k;
- ``contact_normal``: an ARROW from p_k to p_k + ``NORMAL_LENGTH`` n_k, the unit normal pointing into
  the arm's body;
- ``contact_force``: an ARROW from p_k to p_k + ``FORCE_SCALE`` f_k, the force the world exerts on the
  arm (f_k = (points[1] − points[0]) / FORCE_SCALE, N);

all in the frame ``frame_id`` (the robot's root link: p and the vectors are expressed in it), after one
DELETEALL marker so that the contacts of the last message disappear. No contact: the DELETEALL only.

>>> import numpy as np
>>> from robot_dynamics_ros.logic.mujoco_engine import Contact
>>> c = Contact('tool0', 'world/table', np.array([0.5, 0, 0]), np.array([0, 0, 1.0]),
...             np.array([0, 0, 20.0]), np.zeros(3), 0.001)
>>> msg = contact_markers([c], None, 'base_link')
>>> [m.ns for m in msg.markers], msg.markers[3].points[1].z
(['', 'contact_point', 'contact_normal', 'contact_force'], 0.2)
"""

import numpy as np
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ['FORCE_SCALE', 'NORMAL_LENGTH', 'POINT_DIAMETER', 'contact_markers']

FORCE_SCALE = 0.01          # m of arrow per N
NORMAL_LENGTH = 0.05        # m
POINT_DIAMETER = 0.015      # m
_COLORS = {'contact_point': (1.0, 0.85, 0.1), 'contact_normal': (0.2, 0.6, 1.0),
           'contact_force': (1.0, 0.25, 0.2)}


def _point(p):
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def _marker(ns, marker_id, kind, frame_id, stamp):
    m = Marker(ns=ns, id=marker_id, type=kind, action=Marker.ADD)
    m.header.frame_id = frame_id
    if stamp is not None:
        m.header.stamp = stamp
    m.pose.orientation.w = 1.0
    m.color.r, m.color.g, m.color.b = _COLORS[ns]
    m.color.a = 1.0
    return m


def contact_markers(contacts, root_pose, frame_id, stamp=None):
    """The MarkerArray of ``contacts`` (module docstring). ``root_pose``: (R, p) of the frame
    ``frame_id`` in the contacts' world (None: the same frame)."""
    R, origin = (np.eye(3), np.zeros(3)) if root_pose is None else root_pose
    clear = Marker(action=Marker.DELETEALL)
    clear.header.frame_id = frame_id
    markers = [clear]
    for k, contact in enumerate(contacts):
        p = R.T @ (contact.position - origin)                 # p_root = Rᵀ (p_world − o)
        point = _marker('contact_point', k, Marker.SPHERE, frame_id, stamp)
        point.pose.position = _point(p)
        point.scale.x = point.scale.y = point.scale.z = POINT_DIAMETER
        markers.append(point)
        for ns, vector in (('contact_normal', NORMAL_LENGTH * contact.normal),
                           ('contact_force', FORCE_SCALE * contact.force)):
            arrow = _marker(ns, k, Marker.ARROW, frame_id, stamp)
            arrow.points = [_point(p), _point(p + R.T @ vector)]
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.006, 0.012, 0.02   # shaft, head diameters, head
            markers.append(arrow)
    return MarkerArray(markers=markers)
