"""Rigid-body dynamics of robot arms (Modern Robotics ch. 9) with ROS 2 nodes."""
