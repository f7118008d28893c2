"""The joint states of a ROS 2 bag in a model's joint order (JointLog), what identify fits on.

Reads the sensor_msgs/msg/JointState messages of a topic with the pure-Python ``rosbags`` package
(imported only to read a bag): each message's joints matched by name to the model's, a message lacking
one (or its position or effort, or with a non-finite one) skipped and counted; a sample's time is its
header stamp (logic.stamps.stamp_ns), or the bag's receive time when every stamp is zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from robot_dynamics_ros.logic.stamps import stamp_ns

__all__ = ['JOINT_STATE', 'IdentifyError', 'JointLog', 'import_rosbags', 'joint_log', 'read_joint_states']

JOINT_STATE = 'sensor_msgs/msg/JointState'
class IdentifyError(ValueError):
    """A problem with the arguments or the bag: identify's main prints it and exits 2."""


@dataclass(frozen=True)
class JointLog:
    """Joint states in a model's joint order: t (N,) seconds from the first sample, strictly increasing;
    q (N, n) positions (rad, or m for prismatic joints) and tau (N, n) efforts (N m, or N); start_ns the
    first sample's time (ns, of `clock`); skipped the messages left out (a model joint, its position or
    effort missing or not finite), duplicates the samples dropped for repeating an earlier time, messages
    all the messages read; clock 'header' (header stamps) or 'receive' (the bag's receive times: the
    stamps were all zero)."""

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    start_ns: int
    skipped: int
    duplicates: int
    messages: int
    clock: str

    def window(self, start: float | None = None, end: float | None = None) -> JointLog:
        """The samples with start <= t <= end (s from the first sample; None: no bound), t unchanged."""
        keep = np.ones(self.t.size, dtype=bool)
        if start is not None:
            keep &= self.t >= start
        if end is not None:
            keep &= self.t <= end
        return replace(self, t=self.t[keep], q=self.q[keep], tau=self.tau[keep])


def joint_log(messages: Iterable[tuple[int, object]], joint_names: Sequence[str]) -> JointLog:
    """The JointLog of `messages`: pairs (receive time in ns, message), the message with JointState's
    fields header.stamp.sec / .nanosec, name, position and effort (a rosbags message or anything alike).
    Joints are matched by name: columns in `joint_names` order, whatever the message's order; joints not
    in `joint_names` are ignored. A message is skipped (and counted) when it lacks one of `joint_names`,
    or its position or effort array does not reach that joint's index, or one of those values is not
    finite. Time: the header stamp (int ns), or the receive time when every kept stamp is zero; the
    samples are sorted by it (stably: of equal times the first in `messages` is kept, the others counted
    as duplicates). IdentifyError when no message is usable."""
    joint_names = list(joint_names)
    stamps, received, q_rows, tau_rows = [], [], [], []
    total = skipped = 0
    first_names = None
    for receive_ns, msg in messages:
        total += 1
        names = list(msg.name)
        if first_names is None:
            first_names = names
        index = {}
        for k, name in enumerate(names):
            index.setdefault(name, k)
        try:
            columns = [index[name] for name in joint_names]
            q = [float(msg.position[k]) for k in columns]
            tau = [float(msg.effort[k]) for k in columns]
        except (KeyError, IndexError):
            skipped += 1
            continue
        if not all(math.isfinite(x) for x in q + tau):
            skipped += 1
            continue
        stamps.append(stamp_ns(msg.header.stamp))
        received.append(int(receive_ns))
        q_rows.append(q)
        tau_rows.append(tau)
    if not q_rows:
        if total == 0:
            raise IdentifyError('no messages')
        raise IdentifyError(f'none of the {total} messages has a finite position and effort for every joint '
                            f'of the model {joint_names} (the first message names {first_names})')
    clock = 'header' if any(stamps) else 'receive'
    ns = np.array(stamps if clock == 'header' else received, dtype=np.int64)
    order = np.argsort(ns, kind='stable')
    ns = ns[order]
    first = np.concatenate([[True], np.diff(ns) > 0])
    order, ns = order[first], ns[first]
    return JointLog(t=(ns - ns[0]) * 1e-9, q=np.array(q_rows)[order], tau=np.array(tau_rows)[order],
                    start_ns=int(ns[0]), skipped=skipped, duplicates=int((~first).sum()), messages=total,
                    clock=clock)


def import_rosbags():
    """(AnyReader, Stores, get_typestore) from rosbags, imported here so that this module needs it only
    to read a bag."""
    try:
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import Stores, get_typestore
    except ImportError as error:
        raise IdentifyError(f'reading a bag needs the rosbags package ({error}): '
                            'pip install rosbags') from None
    return AnyReader, Stores, get_typestore


def read_joint_states(bag: str | Path, topic: str, joint_names: Sequence[str]) -> JointLog:
    """joint_log of the JointState messages of `topic` in the bag at `bag`. The bag's own
    message definitions are used when it has them, else ROS 2 Humble's (JointState is the same in every
    ROS 2 distribution). IdentifyError for an unreadable bag, a missing topic (naming the topics there),
    a topic of another type or no usable message."""
    AnyReader, Stores, get_typestore = import_rosbags()
    path = Path(bag)
    try:
        reader = AnyReader([path], default_typestore=get_typestore(Stores.ROS2_HUMBLE))
        reader.open()
    except Exception as error:      # rosbags' errors, missing files, bad YAML, a corrupt database
        raise IdentifyError(f'cannot read the bag {str(path)!r}: {error}') from None
    try:
        topics = reader.topics
        if topic not in topics:
            there = ', '.join(f'{name} ({info.msgtype})' for name, info in topics.items()) or 'none'
            raise IdentifyError(f'topic {topic!r} is not in the bag {str(path)!r}; its topics: {there}')
        msgtype = topics[topic].msgtype
        if msgtype != JOINT_STATE:
            raise IdentifyError(f'topic {topic!r} has type {msgtype}, not {JOINT_STATE}')
        connections = [c for c in reader.connections if c.topic == topic]
        messages = _messages(reader, connections, path)
        try:
            return joint_log(messages, joint_names)
        except _BagError:
            raise
        except IdentifyError as error:
            raise IdentifyError(f'{topic}: {error}') from None
        finally:
            messages.close()        # before the reader it reads from
    finally:
        reader.close()


def _messages(reader, connections, path):
    """(receive time ns, message) of the bag's `connections`; rosbags' errors as IdentifyError."""
    try:
        for connection, timestamp, rawdata in reader.messages(connections=connections):
            yield timestamp, reader.deserialize(rawdata, connection.msgtype)
    except Exception as error:      # only the reader's and deserializer's: the consumer's are not thrown here
        raise _BagError(f'cannot read the bag {str(path)!r}: {error}') from None


class _BagError(IdentifyError):
    """The bag could not be read."""
