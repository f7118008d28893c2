"""The demos: each a module with ``main(opts)`` (joint_space_demo, task_space_demo, payload_demo,
lqr_demo, identify_demo), what they share in ``recording``, and the dispatcher ``__main__``
(``python -m robot_dynamics_ros.demos``, ``make demo``)."""
