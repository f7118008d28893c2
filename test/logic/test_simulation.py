"""robot_dynamics_ros.logic.simulation without ROS: a fake wall clock drives the pacing, lock-step,
timeouts, pause/reset, waiting for the first command and failure handling that simulator_node
wires to topics and a timer."""

import math
from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_ros import dynamics as rd
from robot_dynamics_ros.dynamics.limits import enforce_position_limits, saturate_effort
from robot_dynamics_ros.logic.rigid_body_engine import RigidBodyEngine
from robot_dynamics_ros.logic.simulation import FAST_BUDGET, LOCKSTEP_STREAK, Simulation

DT = 0.001
# A pendulum swinging about y under gravity from q = 0 (horizontal), stops at ±0.5 rad.
PENDULUM = (Path(__file__).resolve().parents[1] / "data" / "pendulum.urdf").read_text()


@pytest.fixture(scope='module')
def pendulum():
    return rd.load_urdf(PENDULUM)


class FakeClock:
    """Wall time under the test's control; ``per_read`` advances it at every read."""

    def __init__(self, per_read=0.0):
        self.t = 100.0
        self.per_read = per_read

    def __call__(self):
        self.t += self.per_read
        return self.t


class Recorder:
    """A Report that keeps (level, key, message)."""

    def __init__(self):
        self.messages = []

    def warn(self, key, message):
        self.messages.append(('warn', key, message))

    def warning(self, message):
        self.messages.append(('warning', None, message))

    def error(self, message):
        self.messages.append(('error', None, message))

    def keys(self):
        return [key for _, key, _ in self.messages]

    def text(self):
        return '\n'.join(message for _, _, message in self.messages)


def _simulation(model, clock=None, published=None, command_source=None, engine_type=RigidBodyEngine,
                **settings):
    """A Simulation of ``model`` at DT; ``published`` collects (steps, q, qd, tau) per state.

    It integrates from the start (wait_for_command false) unless the test asks otherwise: the
    pacing tests watch the pendulum fall without a controller."""
    settings.setdefault('wait_for_command', False)
    clock = clock or FakeClock()
    report = Recorder()
    sim = None

    def publish(state):
        if published is not None:
            published.append((state.steps, state.q.copy(), state.qd.copy(), state.tau.copy()))
    sim = Simulation(DT, publish=publish, report=report, clock=clock,
                     command_source=command_source, engine_type=engine_type, **settings)
    sim.set_model(model)
    return sim, clock, report


def _replay(model, q, qd, steps, tau=None, f_tip=None):
    """The simulation's loop, offline: rk4 step + joint stops, ``steps`` times."""
    tau = np.zeros(model.nq) if tau is None else saturate_effort(model, tau)[0]
    for _ in range(steps):
        q, qd = rd.rk4_step(model, q, qd, tau, DT, f_tip=f_tip,
                            frame=None if f_tip is None else model.tip_frame, friction=True)
        q, qd = enforce_position_limits(model, q, qd)
    return q, qd


def _run(sim, clock, wall_seconds, tick_every=DT):
    """Tick as a timer of period ``tick_every`` would, for ``wall_seconds`` of fake wall time."""
    for _ in range(round(wall_seconds / tick_every)):
        clock.t += tick_every
        sim.tick()


# -- pacing ---------------------------------------------------------------------------------

@pytest.mark.parametrize('rtf', [1.0, 2.5])
def test_real_time_factor_sets_simulated_seconds_per_wall_second(pendulum, rtf):
    sim, clock, report = _simulation(pendulum, real_time_factor=rtf)
    _run(sim, clock, 1.0)
    assert abs(sim.sim_time - rtf) <= 3 * DT, sim.sim_time
    assert sim.dropped == 0.0 and not report.messages


def test_states_are_the_core_integrator_steps_at_publish_rate(pendulum):
    published = []
    sim, clock, _ = _simulation(pendulum, published=published, publish_rate=100.0)
    _run(sim, clock, 0.6)
    steps = [p[0] for p in published]
    # The first state right after the first step, then every 10 steps (10 ms of simulated time).
    assert steps[:4] == [1, 10, 20, 30] and set(np.diff(steps[1:])) == {10}
    for n, q, qd, tau in published:
        q_ref, qd_ref = _replay(pendulum, np.zeros(1), np.zeros(1), n)
        np.testing.assert_allclose(q, q_ref, atol=1e-12, err_msg=f'step {n}')
        np.testing.assert_allclose(qd, qd_ref, atol=1e-12)
        assert tau.tolist() == [0.0]
    # The swing ends on the 0.5 rad stop and stays there.
    assert published[-1][1][0] == 0.5 and published[-1][2][0] == 0.0


def test_a_backlog_beyond_two_publication_periods_is_dropped(pendulum):
    sim, clock, report = _simulation(pendulum, publish_rate=100.0)
    clock.t += 1.0                      # one tick after 1 s of wall time (a stalled process)
    for _ in range(100):                # the ticks that follow at once
        sim.tick()
    # 2 publication periods (20 ms) simulated, the rest dropped with a warning.
    assert sim.steps == 20
    assert sim.dropped == pytest.approx(0.98)
    assert report.keys() == ['lag'] and '0.980 s of simulated time dropped' in report.text()


def test_as_fast_as_possible_is_bounded_by_the_tick_budget_not_by_wall_time(pendulum):
    clock = FakeClock(per_read=1e-5)    # every read of the wall clock costs 10 µs
    published = []
    sim, clock, report = _simulation(pendulum, clock, published, real_time_factor=0.0)
    assert sim.tick_period() == 0.0
    start = clock.t
    assert sim.tick()
    wall = clock.t - start
    # One tick steps for FAST_BUDGET s of wall time: here ~1 s simulated in ~10 ms.
    assert FAST_BUDGET <= wall < FAST_BUDGET + 1e-4
    assert sim.sim_time > 50 * wall, (sim.sim_time, wall)
    assert set(np.diff([p[0] for p in published[1:]])) == {10}
    assert not report.messages


def test_a_new_publish_rate_takes_effect_at_once(pendulum):
    """publish_rate 0.1 Hz, then back to 100 Hz: the next state comes one new period after the
    last one, not at the time the 0.1 Hz rate had set (10 s of simulated time later)."""
    published = []
    sim, clock, _ = _simulation(pendulum, published=published, publish_rate=100.0)
    _run(sim, clock, 0.05)
    sim.configure(publish_rate=0.1)
    n, steps = len(published), sim.steps
    _run(sim, clock, 0.5)
    assert len(published) <= n + 1, 'still publishing at 100 Hz'
    sim.configure(publish_rate=100.0)
    n, steps = len(published), sim.steps
    _run(sim, clock, 0.05)
    assert len(published) >= n + 4, f'{len(published) - n} states in 50 ms at 100 Hz'
    # The overdue state at the next step, then every 10 steps, as after a reset.
    assert [p[0] for p in published[n:n + 3]] == [steps + 1, steps + 10, steps + 20]
    # Slower: the next state one new period after the last one.
    sim.configure(publish_rate=20.0)
    last = published[-1][0]
    _run(sim, clock, 0.2)
    assert [p[0] for p in published if p[0] > last][:2] == [last + 50, last + 100]


def test_tick_period():
    sim = Simulation(DT, clock=FakeClock())
    assert sim.tick_period() == 0.001
    sim.configure(publish_rate=2000.0)
    assert sim.tick_period() == 0.0005
    sim.configure(real_time_factor=0.0)
    assert sim.tick_period() == 0.0
    assert Simulation(0.0001, clock=FakeClock()).tick_period() == 0.001


# -- lock-step ------------------------------------------------------------------------------

def test_real_time_waits_for_a_controller_that_answered_every_state(pendulum):
    published = []
    sim, clock, report = _simulation(pendulum, published=published, lockstep_timeout=0.05)
    answered = 0

    def run_answering(wall_seconds):
        nonlocal answered
        for _ in range(round(wall_seconds / DT)):
            clock.t += DT
            sim.tick()
            if len(published) > answered:      # a controller answers each new state
                answered = len(published)
                sim.command([0.0])
    run_answering(0.1)
    assert len(published) >= LOCKSTEP_STREAK + 2
    assert abs(sim.steps - 100) <= 1, 'an answered state delayed the simulation'
    assert not report.messages
    # The controller stops answering: after its last answered streak the simulation waits
    # (no step) for lockstep_timeout of wall time, then runs on without waiting.
    _run(sim, clock, 0.02)
    steps = sim.steps
    assert sim.waiting
    _run(sim, clock, 0.025)
    assert sim.steps == steps, 'stepped while waiting for the answer'
    _run(sim, clock, 0.03)
    assert sim.steps > steps and not sim.waiting
    assert report.keys().count('lockstep') == 1
    _run(sim, clock, 0.2)                   # no streak any more: no further wait
    assert report.keys().count('lockstep') == 1


def test_real_time_does_not_wait_for_a_slower_controller(pendulum):
    published = []
    sim, clock, report = _simulation(pendulum, published=published, lockstep_timeout=60.0)
    answered = 0
    for _ in range(500):
        clock.t += DT
        sim.tick()
        if len(published) > answered + 1:      # answers every other state only
            answered = len(published)
            sim.command([0.0])
        assert not sim.waiting
    assert abs(sim.steps - 500) <= 1 and not report.messages


@pytest.mark.parametrize('timeout', [0.0, 0.05])
def test_as_fast_as_possible_waits_for_commands_when_someone_publishes_them(pendulum, timeout):
    clock = FakeClock(per_read=1e-5)
    published = []
    sim, clock, report = _simulation(pendulum, clock, published, real_time_factor=0.0,
                                     lockstep_timeout=timeout, command_source=lambda: True)
    sim.tick()
    if timeout == 0.0:                      # 0: never waits
        assert len(published) > 50 and not sim.waiting
        return
    # A state, then the wait for its answer: one state per command, as fast as they come.
    assert len(published) == 1 and sim.waiting
    for k in range(5):
        sim.command([0.0])
        assert sim.tick() and len(published) == k + 2
    assert not sim.tick()                   # no answer: waits (no step) ...
    clock.t += timeout
    assert sim.tick() and len(published) > 50   # ... until the timeout, then runs on
    assert report.keys().count('lockstep') == 1
    sim.command([0.0])                      # a command starts lock-step again
    n = len(published)
    sim.tick()
    assert len(published) == n + 1 and sim.waiting


def test_as_fast_as_possible_without_a_command_source_never_waits(pendulum):
    clock = FakeClock(per_read=1e-5)
    published = []
    sim, clock, _ = _simulation(pendulum, clock, published, real_time_factor=0.0)
    sim.command([0.0])
    sim.tick()
    assert len(published) > 50 and not sim.waiting


def test_pause_resume_clear_the_wait(pendulum):
    clock = FakeClock(per_read=1e-5)
    sim, clock, _ = _simulation(pendulum, clock, [], real_time_factor=0.0,
                                command_source=lambda: True)
    sim.tick()
    assert sim.waiting
    sim.set_paused(True)
    sim.set_paused(False)
    assert not sim.waiting


# -- inputs ---------------------------------------------------------------------------------

def test_commands_are_saturated_held_and_time_out(pendulum):
    published = []
    sim, clock, report = _simulation(pendulum, published=published, command_timeout=0.1)
    sim.command([25.0])                 # above the 10 N·m limit
    _run(sim, clock, 0.05)
    assert published[-1][3].tolist() == [10.0]
    assert set(report.keys()) == {'saturated/0'}
    _run(sim, clock, 0.1)               # > command_timeout of simulated time: zero effort
    assert published[-1][3].tolist() == [0.0]
    warnings = [m for level, _, m in report.messages if level == 'warning']
    assert len(warnings) == 1 and 'applying zero effort' in warnings[0]
    _run(sim, clock, 0.1)
    assert len([m for m in report.messages if m[0] == 'warning']) == 1, 'warned twice'


def test_external_wrench_is_applied_as_minus_f_tip_and_times_out(pendulum):
    published = []
    sim, clock, _ = _simulation(pendulum, published=published, external_wrench_timeout=0.05)
    on_robot = np.array([0.0, 1.5, 0.0, 0.0, 0.0, 2.0])     # (m, f) in the tip frame
    sim.apply_wrench(on_robot)
    _run(sim, clock, 0.03)
    n, q, qd, _ = published[-1]
    q_ref, qd_ref = _replay(pendulum, np.zeros(1), np.zeros(1), n, f_tip=-on_robot)
    np.testing.assert_allclose(q, q_ref, atol=1e-12)
    np.testing.assert_allclose(qd, qd_ref, atol=1e-12)
    q_free, _ = _replay(pendulum, np.zeros(1), np.zeros(1), n)
    assert abs(q_free[0] - q[0]) > 1e-5, 'the wrench made no difference'
    _run(sim, clock, 0.05)
    timeout = sim.settings['external_wrench_timeout']
    assert sim.forces.f_tip(sim.steps, timeout) is None, 'still applied after external_wrench_timeout'
    sim.apply_wrench(on_robot)
    sim.apply_wrench(np.zeros(6))        # a zero wrench removes it
    assert sim.forces.f_tip(sim.steps, timeout) is None


def test_the_state_says_which_wrench_is_in_force_and_since_when(pendulum):
    """SimulatedState.wrench / wrench_since (simulator_node's ~/applied_wrench): they change when a
    different wrench arrives, when it times out and on a reset; the same wrench again only renews it."""
    sim, clock, _ = _simulation(pendulum, external_wrench_timeout=0.05)
    state = sim.state()
    assert not state.wrench.any() and state.wrench_since == 0.0
    _run(sim, clock, 0.02)
    on_robot = np.array([0.0, 1.5, 0.0, 0.0, 0.0, 2.0])
    applied_at = sim.steps
    sim.apply_wrench(on_robot)
    _run(sim, clock, 0.02)
    state = sim.state()
    np.testing.assert_array_equal(state.wrench, on_robot)
    assert state.wrench_since == applied_at * DT
    renewed_at = sim.steps
    sim.apply_wrench(on_robot)                      # the same wrench: its timeout starts again
    assert sim.state().wrench_since == applied_at * DT
    _run(sim, clock, 0.04)                          # 0.06 s after it arrived, 0.04 s after the renewal
    assert sim.state().wrench.any(), 'timed out from the first message, not the renewal'
    _run(sim, clock, 0.03)
    state = sim.state()
    assert not state.wrench.any(), 'still in force after external_wrench_timeout'
    # it ended at the first step more than 0.05 s after the renewal
    assert state.wrench_since == pytest.approx((renewed_at + 51) * DT, abs=1.5 * DT)
    sim.apply_wrench(np.zeros(6))                   # no wrench, and none was in force: no change
    assert sim.state().wrench_since == state.wrench_since
    sim.apply_wrench(-on_robot)
    assert sim.reset()
    state = sim.state()
    assert not state.wrench.any() and state.wrench_since == sim.steps * DT


# -- pause, reset, failures -----------------------------------------------------------------

def test_pause_freezes_and_publishes_nothing_resume_goes_on_from_the_same_state(pendulum):
    published = []
    sim, clock, _ = _simulation(pendulum, published=published, publish_rate=100.0)
    _run(sim, clock, 0.1)
    sim.set_paused(True)
    n, steps, q, qd = len(published), sim.steps, sim.q.copy(), sim.qd.copy()
    _run(sim, clock, 1.0)
    assert sim.steps == steps and len(published) == n, 'stepped or published while paused'
    sim.set_paused(False)
    _run(sim, clock, 0.05)
    # resumed from the frozen state: the same states as a run that never paused
    k, q_now, qd_now, _ = published[-1]
    q_ref, qd_ref = _replay(pendulum, q, qd, k - steps)
    np.testing.assert_allclose(q_now, q_ref, atol=1e-12)
    np.testing.assert_allclose(qd_now, qd_ref, atol=1e-12)
    # reset keeps the simulated time
    sim.set_paused(True)
    steps = sim.steps
    assert sim.reset() and sim.steps == steps and sim.q.tolist() == [0.0]
    sim.set_paused(False)
    _run(sim, clock, 0.05)
    assert published[-1][0] > steps


def test_still_until_the_first_command_publishing_the_initial_state(pendulum):
    """wait_for_command: after start-up no step until a command arrives; the initial state is
    published at publish_rate per wall second meanwhile, exactly as given, at rest, with the effort
    that holds it there, g(q), as its brakes would (what a controller's start-up check reads)."""
    published = []
    start = (np.array([0.3]), np.zeros(1))
    sim = Simulation(DT, clock=FakeClock(), publish=lambda state: published.append(
        (state.steps, state.q.copy(), state.qd.copy(), state.tau.copy())), initial_state=lambda: start,
        publish_rate=50.0)
    clock = sim.clock
    sim.set_model(pendulum)
    assert sim.still and sim.settings['wait_for_command']
    _run(sim, clock, 1.0)
    assert sim.steps == 0 and 49 <= len(published) <= 51, len(published)
    g = rd.gravity_torques(pendulum, start[0])
    assert abs(g[0]) > 0.1
    assert all(p[0] == 0 and p[1].tolist() == [0.3] and p[2].tolist() == [0.0]
               and p[3].tolist() == g.tolist() for p in published)
    # No simulated time is owed for the wait: the first command starts it from now.
    sim.command([0.0])
    assert not sim.still
    _run(sim, clock, 0.1)
    assert 95 <= sim.steps <= 100, sim.steps
    n, q, qd, _ = published[-1]
    q_ref, qd_ref = _replay(pendulum, np.array([0.3]), np.zeros(1), n)
    np.testing.assert_allclose(q, q_ref, atol=1e-12)
    np.testing.assert_allclose(qd, qd_ref, atol=1e-12)


def test_reset_is_still_until_the_next_command_and_pause_wins(pendulum):
    published = []
    sim, clock, _ = _simulation(pendulum, published=published, wait_for_command=True)
    sim.command([0.0])
    _run(sim, clock, 0.1)
    assert sim.q[0] > 0.01, 'the pendulum did not swing'
    sim.reset()
    n, steps = len(published), sim.steps
    _run(sim, clock, 0.2)
    assert sim.steps == steps and sim.q.tolist() == [0.0] and sim.qd.tolist() == [0.0]
    assert len(published) - n >= 15 and all(p[1].tolist() == [0.0] for p in published[n:])
    # Paused while still: nothing at all; resumed: still again until the command.
    sim.set_paused(True)
    n = len(published)
    _run(sim, clock, 0.2)
    assert len(published) == n
    sim.set_paused(False)
    _run(sim, clock, 0.05)
    assert sim.steps == steps and len(published) > n
    sim.command([0.0])
    _run(sim, clock, 0.05)
    assert sim.steps > steps
    # A reset while lock-step awaits the answer to the last state: that answer, computed for the
    # state before the reset, is skipped; the next command (the answer to the reset state) goes.
    sim.configure(real_time_factor=0.0)
    sim.pacing.command_source = lambda: True
    sim.command([0.0])
    clock.t += DT
    sim.tick()
    assert sim.waiting
    sim.reset()
    steps = sim.steps
    sim.command([3.0])                  # the late answer to the state before the reset
    assert sim.still and sim.forces.command_tau is None
    clock.t += DT
    sim.tick()
    assert sim.steps == steps
    sim.command([0.0])
    assert not sim.still
    clock.t += DT
    sim.tick()
    assert sim.steps > steps and sim.tau.tolist() == [0.0]
    # wait_for_command false: a reset integrates at once
    sim.configure(wait_for_command=False, real_time_factor=1.0)
    sim.reset()
    steps = sim.steps
    _run(sim, clock, 0.05)
    assert sim.steps > steps


def test_a_payload_set_while_still_or_braked_is_in_the_efforts_at_once(pendulum):
    """Still (or on the brakes) nothing steps: the effort read is the torque that holds the arm as it is
    now, g(q) of the model with the payload from the moment it is attached, not that of the last reset."""
    published = []
    start = (np.array([0.3]), np.zeros(1))
    sim = Simulation(DT, clock=FakeClock(), initial_state=lambda: start, publish_rate=50.0,
                     publish=lambda state: published.append(state.tau.copy()))
    clock = sim.clock
    sim.set_model(pendulum)
    carried = rd.with_payload(pendulum, mass=0.5, com=[0.5, 0.0, 0.0], frame='arm')
    g_arm, g_carried = rd.gravity_torques(pendulum, start[0]), rd.gravity_torques(carried, start[0])
    assert abs(g_carried[0] - g_arm[0]) > 0.1
    _run(sim, clock, 0.05)
    np.testing.assert_allclose(published[-1], g_arm, atol=1e-12)
    sim.replace_model(carried)
    assert sim.still
    np.testing.assert_allclose(sim.tau, g_carried, atol=1e-12)
    _run(sim, clock, 0.05)
    np.testing.assert_allclose(published[-1], g_carried, atol=1e-12)
    sim.replace_model(pendulum)                         # removed: the arm's own again
    np.testing.assert_allclose(sim.tau, g_arm, atol=1e-12)
    # on the brakes (a 'brake' hardware after its command timeout), between two steps
    sim.forces.braked = True
    sim.replace_model(carried)
    np.testing.assert_allclose(sim.tau, g_carried, atol=1e-12)


def test_initial_state_is_read_at_every_reset(pendulum):
    start = [np.array([0.2]), np.zeros(1)]
    sim = Simulation(DT, clock=FakeClock(), initial_state=lambda: tuple(start))
    sim.set_model(pendulum)
    assert sim.q.tolist() == [0.2]
    start[0] = np.array([-0.1])
    sim.reset()
    assert sim.q.tolist() == [-0.1]
    # Without initial_state: zeros clipped into the position limits.
    sim = Simulation(DT, clock=FakeClock())
    sim.set_model(rd.load_urdf(PENDULUM.replace('lower="-0.5"', 'lower="0.2"')))
    assert sim.q.tolist() == [0.2]


class _FaultyEngine(RigidBodyEngine):
    """The rigid-body engine whose steps fail (raise) or diverge (NaN), as ``fault`` says."""

    fault = None

    def step(self, tau, f_tip=None, friction=False):
        if self.fault == 'raise':
            raise ValueError('boom')
        if self.fault == 'nan':
            self.q = np.full(self.model.nq, math.nan)
            return
        super().step(tau, f_tip, friction)


def test_a_failing_step_pauses_a_diverging_one_resets(pendulum):
    sim, clock, report = _simulation(pendulum, engine_type=_FaultyEngine)
    _run(sim, clock, 0.02)
    sim.engine.fault = 'raise'
    steps = sim.steps
    clock.t += DT
    sim.tick()
    assert sim.paused and sim.steps == steps
    assert 'integration step failed (ValueError: boom)' in report.text()
    sim.engine.fault = 'nan'
    sim.set_paused(False)
    sim.command([1.0])
    clock.t += DT
    sim.tick()
    assert 'diverged' in report.text() and sim.q.tolist() == [0.0] and not sim.paused
    assert sim.forces.command_tau is None, 'the reset keeps a command'


def test_no_model():
    sim = Simulation(DT, clock=FakeClock())
    assert not sim.tick() and not sim.reset() and sim.steps == 0


@pytest.mark.parametrize('settings', [
    {'integrator': 'verlet'}, {'publish_rate': 0.0}, {'real_time_factor': -1.0},
    {'lockstep_timeout': math.inf}, {'command_timeout': math.nan}, {'unknown': 1.0}])
def test_bad_settings_are_refused_and_change_nothing(settings):
    sim = Simulation(DT, clock=FakeClock())
    before = dict(sim.settings)
    with pytest.raises(ValueError):
        sim.configure(**settings)
    assert sim.settings == before
    with pytest.raises(ValueError):
        Simulation(0.0)
