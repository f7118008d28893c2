"""Time stamps as integer nanoseconds: the one conversion of a header stamp.

ROS time stamps (builtin_interfaces/msg/Time, and the Time of a message rosbags deserialised) are a
pair (sec, nanosec); the nodes, demos and tools compare and subtract them as one integer count of
nanoseconds, t = sec·10⁹ + nanosec, exact in Python's integers (a float of seconds would lose the
nanoseconds after about 104 days).
"""
from __future__ import annotations

NS_PER_S = 1_000_000_000


def stamp_ns(stamp) -> int:
    """``stamp`` (anything with integer ``sec`` and ``nanosec``: builtin_interfaces/msg/Time, a
    header's ``stamp``) in ns: sec·10⁹ + nanosec."""
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def sec_nanosec(ns: int) -> tuple[int, int]:
    """The (sec, nanosec) of a time in ns (nanosec in [0, 10⁹)), for a builtin_interfaces/msg/Time."""
    return divmod(int(ns), NS_PER_S)
