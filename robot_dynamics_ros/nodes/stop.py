"""SIGINT and SIGTERM in the nodes, from the process's first moment to its end (standard library only:
the console scripts install it before they import rclpy, numpy and numba).

One StopRequest per process (``install()``) is the handler of both signals throughout: a request made
while the node's module still imports is kept when ``common.run_node`` takes over. The first signal

  - starts a deadline: whatever the process is doing, it exits 0 within STOP_DEADLINE_S (a timer
    thread calls os._exit(0)), and should even that thread not run (a hang holding the GIL), a C
    watchdog (faulthandler) ends it at STOP_BACKSTOP_S;
  - while ``interrupt`` is on (imports, building the model, compiling: start-up), raises
    KeyboardInterrupt where the main thread is, so that start-up ends at once; once the node spins,
    ``interrupt`` is off and the spin loop ends at its next turn on ``requested``.

Where an exception raised by the handler would be printed and dropped instead of propagated (Python
code that C calls back: importlib's module-lock weakref callback, llvmlite's object-cache callbacks
while numba compiles), the handler does not raise; the request is kept (checked before main() and by
run_node) and the deadline ends the process. A second signal changes nothing (Ctrl-C under
``ros2 launch`` reaches a node twice: from the terminal, and forwarded by launch).
"""
import contextlib
import faulthandler
import os
import signal
import sys
import threading

# After SIGINT or SIGTERM a node is gone within this time, whatever it was doing (s).
STOP_DEADLINE_S = 0.9
# ... and, should even the deadline not be reached (a hang that holds the GIL), within this time.
STOP_BACKSTOP_S = 2.0
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """The handler of SIGINT and SIGTERM (module docstring). ``deadline_s``: exit 0 that long after
    the first signal whatever the process does (None: no deadline, for a process that waits for its
    children to stop: bring-up's one process per node); ``signum``: the first signal received."""

    def __init__(self, deadline_s=STOP_DEADLINE_S, interrupt=True):
        self.requested = False
        self.signum = None
        self.deadline_s = deadline_s
        self.interrupt = interrupt  # raise KeyboardInterrupt (start-up), or only set the flag

    def __call__(self, signum, frame):
        if self.requested:          # a second signal: the first one's clean-up goes on
            return
        self.requested = True
        self.signum = signum
        if self.deadline_s is not None:
            deadline = threading.Timer(self.deadline_s, exit_now)
            deadline.daemon = True
            deadline.start()
            faulthandler.dump_traceback_later(max(STOP_BACKSTOP_S, 2 * self.deadline_s), exit=True)
        if self.interrupt and not in_foreign_callback(frame):
            raise KeyboardInterrupt


_current = None


def install():
    """The process's StopRequest, made the handler of SIGINT and SIGTERM (one per process)."""
    global _current
    if _current is None:
        _current = StopRequest()
    for sig in SIGNALS:
        signal.signal(sig, _current)
    return _current


@contextlib.contextmanager
def handling(deadline_s=STOP_DEADLINE_S):
    """SIGINT and SIGTERM handled by a StopRequest (flag only: the caller's loop polls ``requested``)
    for the duration of the block, the previous handlers restored after it. Outside the main thread
    (where signals cannot be handled) the request is only what the caller makes of it. Bring-up's
    loops use it: the same semantics as a node process (a second signal, as a Ctrl-C under
    ``ros2 launch`` delivers, changes nothing; the deadline ends the process)."""
    request = StopRequest(deadline_s, interrupt=False)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in SIGNALS:
            previous[sig] = signal.signal(sig, request)
    try:
        yield request
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def in_foreign_callback(frame):
    """Whether the signal arrived in Python code whose exceptions are printed and dropped instead of
    propagated: a finaliser (``__del__``: llvmlite's objects dispose of their LLVM handles there), a
    weakref callback of importlib's module locks (`_get_module_lock.<locals>.cb`), or llvmlite's
    object-cache hooks, which LLVM calls back through ctypes while numba compiles. Anywhere else
    (numba's compiler, llvmlite's IR builder, a ctypes call into LLVM) the KeyboardInterrupt
    propagates and start-up ends at once."""
    while frame is not None:
        code = frame.f_code
        if code.co_name in FOREIGN_CALLBACKS:
            return True
        if code.co_name == 'cb' and 'importlib._bootstrap' in code.co_filename:
            return True
        frame = frame.f_back
    return False


# The functions C calls back (their exceptions are printed and dropped): finalisers and llvmlite's
# object-cache hooks (llvmlite.binding.executionengine).
FOREIGN_CALLBACKS = frozenset({'__del__', '_raw_object_cache_notify', '_raw_object_cache_getbuffer'})


def exit_now():
    """The deadline of a stop request passed: exit 0 without the rest of the clean-up."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed pipe: nothing left to flush to
            pass
    os._exit(0)
