"""logic/stamps: header stamps <-> integer nanoseconds, exact."""
from types import SimpleNamespace

from robot_dynamics_ros.logic.stamps import sec_nanosec, stamp_ns


def test_stamp_ns_is_exact():
    assert stamp_ns(SimpleNamespace(sec=1_700_000_000, nanosec=999_999_999)) == 1_700_000_000_999_999_999


def test_round_trip_and_negative_times():
    for ns in (0, 1, 999_999_999, 1_000_000_000, 1_764_288_000_123_456_789):
        sec, nanosec = sec_nanosec(ns)
        assert 0 <= nanosec < 1_000_000_000
        assert stamp_ns(SimpleNamespace(sec=sec, nanosec=nanosec)) == ns
    assert sec_nanosec(-1) == (-1, 999_999_999)      # before the epoch: nanosec stays non-negative
