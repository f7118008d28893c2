"""One way to run work off a node's executor: a latest-wins background job (ROS-free).

Three pieces of work are too slow for an executor callback and run here: the computed-torque
controller's interpolation of a long reference (nodes/computed_torque_node.py), the build of a robot
model from a description that arrives on the topic (nodes/model_source.py) and the MPC's warm re-plans
(logic/model_predictive.py, for nodes/mpc_controller.py).

How work leaves and re-enters a node's executor (the one rule, for all three):

1. Out: the executor thread calls ``submit(work, tag)``. ``work`` is a function of no arguments that
   reads only what was handed to it when it was made (copies, immutable models, a problem the
   executor does not touch meanwhile): it never touches the node.
2. In: the executor thread calls ``poll()``, from a timer that runs only while ``active`` (the
   controller's reference, the model source), or from the control step (the MPC). ``poll`` returns
   the ``Outcome`` of a finished work once: its ``tag``, its ``value`` or the ``error`` it raised
   (never lost: ``Outcome.result()`` raises it), and ``superseded``: a newer ``submit`` or a
   ``cancel`` came after it was submitted, so the caller drops it (refusing, say, the action goal
   its tag names). The node acts on an outcome in its executor thread only.

Bounded, latest wins: at most one work runs and one waits. A ``submit`` while one runs makes the new
one the pending one and returns the ``Submission`` it replaced, never run (its tag, for the caller to
refuse). The pending one starts when the running one's outcome has been polled, so a finished outcome
is never overwritten either.

One worker thread per job, started by the first submit (``niceness`` added to its niceness on
Linux, so that on busy cores the scheduler runs the control path first; ``idle``: the thread under
Linux's SCHED_IDLE policy instead, which any other thread that wakes preempts at once, where a niced
thread keeps the core until the next scheduler tick), daemon, ended by
``close(timeout)``: it finishes the work under way (a Python thread cannot be interrupted), so
``close`` waits at most ``timeout`` s for it and never hangs; the thread then ends by itself.
Python threads share the GIL: the executor runs between the worker's bytecodes and while the worker
is in a compiled loop that releases it (the solver's); a C call that holds the GIL delays it.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ['BackgroundJob', 'Outcome', 'Submission']


@dataclass(frozen=True)
class Submission:
    """A work submitted: ``tag`` (the caller's: what the work is for), ``generation`` (the job's
    count of submits and cancels when it was submitted)."""
    work: Callable[[], Any]
    tag: Any
    generation: int


@dataclass(frozen=True)
class Outcome:
    """What a work came to: its ``tag``, its ``value`` (None after an error) or the ``error`` it raised,
    and whether it was ``superseded`` (a submit or cancel came after it)."""
    tag: Any
    value: Any
    error: BaseException | None
    superseded: bool

    def result(self):
        """The value, or raise the work's error."""
        if self.error is not None:
            raise self.error
        return self.value


class BackgroundJob:
    """A latest-wins background job (module docstring): ``submit``, ``poll``, ``wait``, ``cancel``,
    ``close``; ``running`` while a work runs, ``active`` while there is anything to poll for."""

    def __init__(self, name: str, niceness: int = 0, idle: bool = False):
        self.name = name
        self.niceness = int(niceness)
        self.idle = bool(idle)
        self._lock = threading.Condition()
        self._generation = 0
        self._running: Submission | None = None      # handed to the worker, not finished
        self._pending: Submission | None = None      # waits for the running one's outcome to be polled
        self._finished = None                        # (submission, value, error), not polled yet
        self._thread: threading.Thread | None = None
        self._closed = False

    # -- the executor's side -----------------------------------------------------------------------
    def submit(self, work: Callable[[], Any], tag: Any = None) -> Submission | None:
        """Run ``work()`` in the worker thread, now if it is free, else after the work under way (whose
        outcome is then ``superseded``); returns the pending Submission this one replaced (never run),
        or None. RuntimeError after ``close``."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f'background job {self.name!r} is closed')
            self._generation += 1
            submission = Submission(work, tag, self._generation)
            replaced = self._pending
            if self._running is None and self._finished is None:
                self._pending = None
                self._start(submission)
            else:
                self._pending = submission
            return replaced

    def poll(self) -> Outcome | None:
        """The outcome of the work that finished, once (then the pending work starts); None while
        nothing finished."""
        with self._lock:
            finished, self._finished = self._finished, None
            if finished is None:
                return None
            if self._pending is not None and not self._closed:
                following, self._pending = self._pending, None
                self._start(following)
            submission, value, error = finished
            return Outcome(submission.tag, value, error, submission.generation != self._generation)

    def cancel(self) -> Submission | None:
        """Supersede the work under way (its outcome still comes, ``superseded``) and drop the pending
        one, which is returned (never run; None if there was none)."""
        with self._lock:
            self._generation += 1
            dropped, self._pending = self._pending, None
            return dropped

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no work runs (its outcome is ready to poll); False if ``timeout`` s passed first."""
        with self._lock:
            return self._lock.wait_for(lambda: self._running is None, timeout)

    @property
    def running(self) -> bool:
        """A work runs in the worker thread now."""
        return self._running is not None

    @property
    def active(self) -> bool:
        """A work runs, waits, or finished and was not polled yet: what a polling timer runs for."""
        return self._running is not None or self._pending is not None or self._finished is not None

    def close(self, timeout: float | None = None) -> bool:
        """No more submits; the pending work is dropped; the worker thread ends after the work under way
        (at most ``timeout`` s waited for it; None: until it ends). True if the thread has ended."""
        with self._lock:
            self._closed = True
            self._pending = None
            self._lock.notify_all()
            thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    # -- the worker's side -------------------------------------------------------------------------
    def _start(self, submission: Submission):
        """(lock held) Hand ``submission`` to the worker thread, starting the thread the first time."""
        self._running = submission
        if self._thread is None:
            self._thread = threading.Thread(target=self._work_forever, name=self.name, daemon=True)
            self._thread.start()
        self._lock.notify_all()

    def _work_forever(self):
        if self.idle:
            try:                        # Linux: the calling thread's policy
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            except (AttributeError, OSError):
                pass
        elif self.niceness:
            try:                        # Linux: a thread's own niceness (its TID)
                tid = threading.get_native_id()
                os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + self.niceness)
            except (AttributeError, OSError):
                pass
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._running is not None or self._closed)
                submission = self._running
                if submission is None:          # closed, nothing under way
                    return
            value, error = None, None
            try:
                value = submission.work()
            except Exception as exc:            # delivered to the caller by poll()
                error = exc
            with self._lock:
                self._finished = (submission, value, error)
                self._running = None
                self._lock.notify_all()
                if self._closed:
                    return
