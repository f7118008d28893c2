"""URDF -> Model, in two jobs: reading and checking the document (parse.py: the XML checked element by
element as urdf_parser_py checks it, returned as plain records) and building the dynamics model from
those records (build.py: kinematic trees, fixed-joint merging, chain selection with locked joints,
mimic joints). tree.py holds what both the builder and the whole-tree kinematics (kinematic_tree.py)
need of the records: elements by name, the root, depth-first order, origins, axes, joint motion.
"""
from .build import load_urdf
from .parse import parse_document, robot_name
from .tree import joint_motion

__all__ = ["load_urdf", "parse_document", "robot_name", "joint_motion"]
