"""logic.background_job.BackgroundJob: latest wins, errors reach the caller, cancel, close while a work
runs, no thread left behind."""
import threading
import time

import pytest

from robot_dynamics_ros.logic.background_job import BackgroundJob


def _poll_until(job, timeout=10.0):
    deadline = time.monotonic() + timeout
    while (outcome := job.poll()) is None:
        assert time.monotonic() < deadline, 'no outcome'
        time.sleep(1e-3)
    return outcome


def _gate():
    """A work that runs until the event is set, and the event."""
    go = threading.Event()
    return (lambda: go.wait(10.0) and 'gated'), go


def test_one_work_runs_and_its_value_comes_back_once():
    job = BackgroundJob('test')
    assert not job.active and job.poll() is None
    assert job.submit(lambda: 41 + 1, tag='a') is None
    outcome = _poll_until(job)
    assert (outcome.tag, outcome.value, outcome.error, outcome.superseded) == ('a', 42, None, False)
    assert outcome.result() == 42
    assert job.poll() is None and not job.active
    assert job.close(1.0)


def test_latest_wins_one_running_one_pending():
    job = BackgroundJob('test')
    gated, go = _gate()
    ran = []
    job.submit(gated, tag='first')
    assert job.wait(0.05) is False and job.running
    assert job.submit(lambda: ran.append('second'), tag='second') is None
    replaced = job.submit(lambda: ran.append('third') or 'third', tag='third')
    assert replaced.tag == 'second'                     # never run: the newer pending one replaced it
    go.set()
    first = _poll_until(job)
    assert (first.tag, first.value, first.superseded) == ('first', 'gated', True)
    third = _poll_until(job)                            # the pending one started when first was polled
    assert (third.tag, third.value, third.superseded) == ('third', 'third', False)
    assert ran == ['third'] and not job.active
    assert job.close(1.0)


def test_a_finished_outcome_is_not_overwritten_before_it_is_polled():
    job = BackgroundJob('test')
    job.submit(lambda: 1, tag='one')
    assert job.wait(10.0)
    job.submit(lambda: 2, tag='two')                    # waits: 'one' is not polled yet
    time.sleep(0.02)
    assert _poll_until(job).tag == 'one'
    assert _poll_until(job).value == 2
    job.close(1.0)


def test_an_error_reaches_the_caller():
    job = BackgroundJob('test')

    def fail():
        raise ValueError('bad waypoints')
    job.submit(fail, tag='x')
    outcome = _poll_until(job)
    assert isinstance(outcome.error, ValueError) and outcome.value is None
    with pytest.raises(ValueError, match='bad waypoints'):
        outcome.result()
    job.submit(lambda: 'still works')                   # the worker survives an error
    assert _poll_until(job).value == 'still works'
    job.close(1.0)


def test_cancel_supersedes_the_running_work_and_drops_the_pending_one():
    job = BackgroundJob('test')
    gated, go = _gate()
    job.submit(gated, tag='running')
    job.submit(lambda: 'never', tag='pending')
    dropped = job.cancel()
    assert dropped.tag == 'pending'
    assert job.cancel() is None
    go.set()
    outcome = _poll_until(job)
    assert outcome.tag == 'running' and outcome.superseded
    assert job.poll() is None and not job.active
    job.submit(lambda: 'after')                        # a submit after a cancel is current
    assert not _poll_until(job).superseded
    job.close(1.0)


def test_close_while_running_does_not_hang_and_leaves_no_thread():
    before = set(threading.enumerate())
    job = BackgroundJob('test-close', niceness=5)
    gated, go = _gate()
    job.submit(gated)
    job.submit(lambda: 'dropped')
    assert job.close(timeout=0.05) is False             # the work under way cannot be interrupted
    with pytest.raises(RuntimeError, match='closed'):
        job.submit(lambda: None)
    go.set()
    assert job.close(timeout=10.0)
    assert set(threading.enumerate()) <= before
    outcome = job.poll()                               # what finished is still delivered
    assert outcome is not None and outcome.value == 'gated'
    assert job.poll() is None                          # the pending one was dropped


def test_a_job_never_submitted_to_has_no_thread():
    before = threading.active_count()
    job = BackgroundJob('idle')
    assert threading.active_count() == before
    assert job.close(0.0)
