"""The simulator's pacing against the wall clock and its lock-step with a controller, ROS-free
(``logic/simulation.py`` steps; this module says how much it may step and when it waits).

Wall time (seconds, any origin) is read from ``clock`` (default ``time.monotonic``; tests pass a
fake clock), never a ROS clock. The Simulation's ``tick()`` is called periodically:

- real_time_factor > 0: each tick adds the wall time elapsed since the last tick × the factor to
  the simulated time owed (``budget``), and steps while a step is owed, returning right after a state
  publication (so a controller answers each state before the simulation runs on). Owing more
  than two publication periods, the excess is dropped (``dropped``) with a warning (the simulation
  then runs slower than real time, as Gazebo does, rather than open loop in one burst).
- real_time_factor 0: each tick steps for at most ``FAST_BUDGET`` s of wall time.

Lock-step: after a publication the simulation may wait (at most ``lockstep_timeout`` s of wall
time, without stepping) for the next command. In real time it does so once commands have answered
``LOCKSTEP_STREAK`` states in a row; at real_time_factor 0 whenever ``command_source()`` says some
node publishes commands. A wait that times out ends lock-step until the next command arrives.
"""

__all__ = ['Pacing', 'FAST_BUDGET', 'LOCKSTEP_STREAK']

FAST_BUDGET = 0.01      # s of wall time spent stepping per tick at real_time_factor 0
LOCKSTEP_STREAK = 3     # real time: states answered in a row before the simulation waits


class Pacing:
    """The simulated time owed to the wall clock and the lock-step wait (module docstring).

    Args:
        clock: wall-clock seconds.
        report: where problems go (``simulation.Report``): time dropped, a wait timed out (``warn``).
        command_source: ``command_source()`` -> True when some node publishes commands.
    """

    def __init__(self, clock, report, command_source):
        self.clock, self.report, self.command_source = clock, report, command_source
        self.budget = 0.0                       # simulated seconds owed to real time
        self.dropped = 0.0                      # simulated seconds dropped (CPU too slow)
        self.command_seq = 0                    # commands received
        self._last_wall = clock()
        self._lockstep = True                   # rtf 0: wait for commands (until a timeout)
        self._awaiting = None                   # (command_seq, since) while waiting
        self._answered = 0                      # consecutive states answered by a command
        self._seq_at_publication = 0            # command_seq when the last state was published

    def elapsed(self):
        """(now, wall seconds since the last call or ``resync``)."""
        now = self.clock()
        elapsed, self._last_wall = now - self._last_wall, now
        return now, elapsed

    def resync(self, clear_budget=True):
        """Measure wall time from now; owe no simulated time (unless ``clear_budget`` is false)."""
        self._last_wall = self.clock()
        if clear_budget:
            self.owe_nothing()

    def owe(self, sim_seconds, limit, real_time_factor):
        """Owe ``sim_seconds`` more of simulated time, at most ``limit`` s (two publication periods):
        beyond that, simulated time is dropped rather than simulated in one open-loop burst that a
        controller could not react to."""
        self.budget += sim_seconds
        if self.budget > limit:
            self.dropped += self.budget - limit
            self.budget = limit
            if self.dropped > 0.05:
                self.report.warn('lag', f'simulation slower than real_time_factor {real_time_factor:g}: '
                                        f'{self.dropped:.3f} s of simulated time dropped so far (CPU '
                                        'overloaded, or waiting for a controller)')

    def take_step(self, dt):
        """Real time: True, and ``dt`` s owed less, while a step of ``dt`` s is owed."""
        if self.budget < dt * (1 - 1e-9):
            return False
        self.budget -= dt
        return True

    def owe_nothing(self):
        """No simulated time owed (after a reset, or time spent still)."""
        self.budget = 0.0

    def command_arrived(self):
        """A command came: it answers the state awaited, and lock-step resumes."""
        self.command_seq += 1
        self._lockstep = True

    @property
    def waiting(self):
        """True while the simulation waits for the command answering the last state."""
        return self._awaiting is not None

    def answer_due(self):
        """True while the answer to the last state is awaited and has not come."""
        return self._awaiting is not None and self._awaiting[0] == self.command_seq

    def stop_waiting(self):
        self._awaiting = None

    def waiting_for_command(self, now, timeout):
        """Lock-step: True while the simulation waits for the answer to the last state, at most
        ``timeout`` wall s (then lock-step ends, with a warning, until the next command)."""
        if self._awaiting is None:
            return False
        seq, since = self._awaiting
        if self.command_seq != seq:
            self._awaiting = None
            return False
        if now - since < timeout:
            return True
        self._awaiting = None
        self._answered = 0
        self._lockstep = False
        self.report.warn('lockstep', f'no command within {timeout:g} s of a joint state '
                                     '(lockstep_timeout): running on without waiting for '
                                     'commands')
        return False

    def after_publication(self, real_time, timeout):
        """Decide whether to wait (at most ``timeout`` wall s; 0: never) for the command answering the
        state just published.

        Real time (``real_time``: real_time_factor > 0): once a controller has answered LOCKSTEP_STREAK
        consecutive states each before the next one (a controller on every joint state), wait
        for its answer, so a controller descheduled by a busy CPU cannot leave the simulation
        running open loop. A slower (timer-driven) controller never builds the streak and is not
        waited for. As fast as possible: wait whenever some node publishes commands, until a
        wait times out (then again after the next command).
        """
        answered = self.command_seq != self._seq_at_publication
        self._answered = self._answered + 1 if answered else 0
        self._seq_at_publication = self.command_seq
        if real_time:
            wait = self._answered >= LOCKSTEP_STREAK
        else:
            wait = self._lockstep and self.command_source()
        if wait and timeout > 0.0:
            self._awaiting = (self.command_seq, self.clock())
