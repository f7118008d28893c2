"""Interleaved timeit measurement of (ours, Pinocchio) pairs.

Every case is a pair of calls on the same inputs. One *round* runs, for every case, a
`timeit.Timer(...).timeit(number)` of ours and of Pinocchio's back to back (which goes first
alternates from round to round and case to case), so slow drifts of the machine (other processes,
frequency changes) hit both sides alike. Round r uses input set r mod K, so both sides see the same
K random states. Per call = round time / number (a per-round mean); the figure reported is the
MEDIAN over rounds of these per-round means; the ratio is the median over rounds of the paired
per-round ratios ours/Pinocchio (the JSON also keeps the ratio of the medians). `number` is
calibrated once per side so that a round lasts about `round_s`. timeit switches the garbage
collector off while timing; the statement is a plain call `f(a0, a1, ...)` on pre-bound globals
(no lambda, no argument unpacking).
"""
import statistics
import time
import timeit


def make_timer(fn, args):
    names = [f"a{i}" for i in range(len(args))]
    env = {"f": fn, **dict(zip(names, args))}
    return timeit.Timer(f"f({', '.join(names)})", globals=env)


def calibrate(timer, round_s):
    """Loops per round so that one round takes about round_s (at least 1)."""
    number = 1
    while True:
        t = timer.timeit(number)
        if t >= 0.2 * round_s or number >= 1 << 22:
            return max(1, int(round(number * round_s / max(t, 1e-9))))
        number *= 4


class Case:
    """A named pair of calls: `ours(*ours_args[k])` vs `pin(*pin_args[k])` for input sets k."""

    def __init__(self, name, ours, ours_args, pin, pin_args, target=None, note=""):
        self.name, self.target, self.note = name, target, note
        self.ours_timers = [make_timer(ours, a) for a in ours_args]
        self.pin_timers = [make_timer(pin, a) for a in pin_args] if pin is not None else None
        self.ours_t, self.pin_t = [], []
        self.error = None

    def result(self):
        r = {"ours_s": _median(self.ours_t), "ours_min_s": min(self.ours_t, default=None),
             "ours_p25_s": _q(self.ours_t, 0), "ours_p75_s": _q(self.ours_t, 2),
             "rounds": len(self.ours_t), "target": self.target, "note": self.note}
        if self.pin_timers is not None:
            r.update(pin_s=_median(self.pin_t), pin_min_s=min(self.pin_t, default=None),
                     pin_p25_s=_q(self.pin_t, 0), pin_p75_s=_q(self.pin_t, 2))
            # Paired: the two sides of a round ran back to back on the same state, under the same
            # machine conditions; the median of the per-round ratios is robust to load drifts.
            pairs = [o / p for o, p in zip(self.ours_t, self.pin_t) if p > 0]
            r["ratio"] = _median(pairs)
            r["ratio_p25"], r["ratio_p75"] = (_q(pairs, 0), _q(pairs, 2)) if pairs else (None, None)
            r["ratio_of_medians"] = r["ours_s"] / r["pin_s"] if r["ours_s"] and r["pin_s"] else None
            if self.target is not None and r["ratio"] is not None:
                r["met"] = r["ratio"] <= self.target
        if self.error:
            r["error"] = self.error
        return r


def _median(xs):
    return statistics.median(xs) if xs else None


def _q(xs, i):
    return statistics.quantiles(xs, n=4)[i] if len(xs) >= 2 else _median(xs)


def run_interleaved(cases, rounds, round_s, warmup_s=0.05):
    """Measure every case for `rounds` rounds, interleaved (see module docstring)."""
    live = []
    for c in cases:
        try:
            for timers in (c.ours_timers, c.pin_timers or []):
                for t in timers:                      # warm-up: every input set once, then a while
                    t.timeit(1)
            deadline = time.perf_counter() + warmup_s
            while time.perf_counter() < deadline:
                c.ours_timers[0].timeit(1)
                if c.pin_timers:
                    c.pin_timers[0].timeit(1)
            c.ours_number = calibrate(c.ours_timers[0], round_s)
            c.pin_number = calibrate(c.pin_timers[0], round_s) if c.pin_timers else None
            live.append(c)
        except Exception as exc:                      # a broken function must not stop the run
            c.error = f"{type(exc).__name__}: {exc}"
    for r in range(rounds):
        for ci, c in enumerate(live):
            k = r % len(c.ours_timers)
            sides = [(c.ours_timers[k], c.ours_number, c.ours_t)]
            if c.pin_timers:
                sides.append((c.pin_timers[k], c.pin_number, c.pin_t))
            if (r + ci) % 2:
                sides.reverse()
            for timer, number, out in sides:
                out.append(timer.timeit(number) / number)
    return {c.name: c.result() for c in cases}
