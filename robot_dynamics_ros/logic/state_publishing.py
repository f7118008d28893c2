"""robot_state_publisher's rules, ROS-free: which joint transforms go out, when, and stamped with what.

``StatePublishing(tree, publish_frequency, ignore_timestamp)`` over a ``dynamics.KinematicTree``:

- ``fixed_transforms()``: (parent link, child link, T (4, 4)) of every fixed joint, sent once on
  /tf_static (transient local: late subscribers get them).
- ``update(names, positions, stamp_ns)`` for each /joint_states message: stores the finite positions
  of the tree's independent moving joints (joints missing from a message keep their last value; names
  the tree lacks are ignored), and returns the transforms to send on /tf, stamped with the message's
  stamp, or None when the message is rate-limited. What goes out: every moving joint with a value
  (the independent ones and the mimic joints of those, q = multiplier q_followed + offset), each as
  its parent link -> child link transform T_origin · exp([S] q).
- Rate (as robot_state_publisher): a message goes out when its stamp is at least 1 / publish_frequency
  after the oldest last-published stamp of the tree's joints it names, or when it names one never
  published (so the first message always goes out); publish_frequency 0 = every message. A stamp
  older than that (time went backwards: a bag looping, a simulator reset) clears the last-published
  stamps and goes out.
  ``ignore_timestamp``: every message goes out, whatever its stamp. A message naming none of the
  tree's independent joints sends nothing. A mimic joint's own value in a message is not used: it
  follows its joint.

Floating and planar joints have no scalar position and are not sent (robot_state_publisher skips them).
"""
import math

__all__ = ['StatePublishing']


class StatePublishing:
    """robot_state_publisher's rules for one tree (module docstring)."""

    def __init__(self, tree, publish_frequency=20.0, ignore_timestamp=False):
        if not (math.isfinite(publish_frequency) and publish_frequency >= 0.0):
            raise ValueError(f'publish_frequency must be a finite number >= 0 (Hz), '
                             f'got {publish_frequency!r}')
        self.tree = tree
        self.interval_ns = 0 if publish_frequency == 0.0 else int(round(1e9 / publish_frequency))
        self.ignore_timestamp = bool(ignore_timestamp)
        self.positions = {}                  # independent joint -> last finite position
        self._last_published_ns = {}         # independent joint -> stamp of its last sending, ns
        self._independent = frozenset(tree.moving_joints)
        self._moving = [j for j in tree.joints if j.moves]

    def fixed_transforms(self):
        """[(parent, child, T_parent,child)] of the fixed joints."""
        return [(j.parent, j.child, j.origin.copy()) for j in self.tree.joints if j.type == 'fixed']

    def update(self, names, positions, stamp_ns):
        """The message's positions stored; [(parent, child, T)] to send stamped ``stamp_ns``, or None
        (rate-limited). ``names``, ``positions``: equal lengths (the caller checks); non-finite
        positions are skipped (the caller warns)."""
        named = [name for name in names if name in self._independent]
        for name, q in zip(names, positions):
            if name in self._independent and math.isfinite(q):
                self.positions[name] = float(q)
        if not named or not self._due(named, stamp_ns):
            return None
        for name in named:
            self._last_published_ns[name] = stamp_ns
        values = self.tree.joint_positions(self.positions)
        return [(j.parent, j.child, j.transform(values[j.name])) for j in self._moving if j.name in values]

    def _due(self, named, stamp_ns):
        if self.ignore_timestamp or any(name not in self._last_published_ns for name in named):
            return True
        last = min(self._last_published_ns[name] for name in named)
        if stamp_ns < last:                  # time went backwards: start again
            self._last_published_ns.clear()
            return True
        return stamp_ns >= last + self.interval_ns
