"""Outgoing messages kept serialized: a node refills their numbers in place and publishes the bytes.

A node that publishes the same message shape at every joint state (the same joint names, the same
matrix layout; only the numbers and the stamp change) pays rclpy's conversion of the whole message
to C at every publish, most of a dynamics_node callback. Here the message is serialized once
(rclpy.serialization, the middleware's own CDR); the float64 array that changes and the header stamp
are located in those bytes, and each publish writes the new numbers there and hands the bytes to
Publisher.publish (rclpy's publish_raw), a fraction of the conversion's cost (both measured:
doc/performance.md, section "Nodes").
"""

import struct

import numpy as np
from rclpy.serialization import serialize_message

__all__ = ['SerializedMessage']

_STAMP = struct.Struct('<iI')                     # builtin_interfaces/Time: int32 sec, uint32 nanosec
_STAMP_MARK = (0x5EC0DE01, 0x0ABCDEF1)            # a stamp whose bytes occur nowhere else


class SerializedMessage:
    """``msg`` serialized once; ``values`` is a writeable float64 view of its ``array_field`` inside
    the bytes (same length as the field has in ``msg``), ``set_stamp`` writes header.stamp when
    ``stamped``. ``serialized()`` returns the bytes to publish.

    The field must keep its length: every other field keeps the bytes it had when built. ValueError
    when the field or the stamp cannot be found unambiguously, or the middleware does not serialize
    little-endian CDR (then publish message objects instead).
    """

    def __init__(self, msg, array_field, stamped=False):
        size = len(getattr(msg, array_field))
        marker = np.linspace(1.0, 2.0, size) * np.pi * 1e-200   # distinct values, unlikely bytes
        setattr(msg, array_field, marker)
        if stamped:
            msg.header.stamp.sec, msg.header.stamp.nanosec = _STAMP_MARK
        raw = bytearray(serialize_message(msg))
        if raw[:2] != b'\x00\x01':                   # encapsulation: CDR, little-endian
            raise ValueError(f'unexpected serialization header {bytes(raw[:4])!r}')
        self._raw = raw
        values_at = _find_once(raw, marker.tobytes())
        self.values = np.frombuffer(raw, dtype=np.float64, count=size, offset=values_at)
        self._stamp_at = _find_once(raw, _STAMP.pack(*_STAMP_MARK)) if stamped else None
        self.values[:] = 0.0
        if stamped:
            self.set_stamp(0, 0)

    def set_stamp(self, sec, nanosec):
        _STAMP.pack_into(self._raw, self._stamp_at, sec, nanosec)

    def serialized(self):
        return bytes(self._raw)


def _find_once(raw, pattern):
    at = raw.find(pattern)
    if at < 0 or raw.find(pattern, at + 1) >= 0:
        raise ValueError('field not found exactly once in the serialized message')
    return at
