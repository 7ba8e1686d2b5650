"""The tracker's BallStates against where the live table's ball really was, frame by frame
(matched by capture stamp: the tracker's BallState carries its frame's stamp)."""

from __future__ import annotations

import math
import time

from robot.api import logger
from robot.api.deco import keyword

from foosball.wire.catalogue import BallState, BallStatus, SafetyState
from rig_keywords.context import SimulatedTable
from rig_keywords.truth import Truth
from rig_keywords.waiting import wait_until

IN_SIGHT = 0.5  # a ball this much in sight is one the tracker must report
WHOLE = 0.9  # a ball this much in sight is measured as a whole one (the rest: edge pixels)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return math.nan
    index = min(len(ordered) - 1, max(0, math.ceil(pct / 100 * len(ordered)) - 1))
    return ordered[index]


def _error_check(what: str, matched: list[tuple[Truth, float]], limit: float,
                 pct: float) -> str:
    """Logs the error figures of `matched` (truth, error in mm) and where the misses were;
    returns what failed ("" when `pct` % are within `limit`, or there are no frames)."""
    if not matched:
        logger.info(f"{what}: no detected frames")
        return ""
    errors = [e for _, e in matched]
    inside = 100.0 * sum(1 for e in errors if e <= limit) / len(errors)
    summary = (f"{what}: error over {len(errors)} detected frames: p50 "
               f"{percentile(errors, 50):.2f} mm, p95 {percentile(errors, 95):.2f} mm, p99 "
               f"{percentile(errors, 99):.2f} mm, max {max(errors):.2f} mm; {inside:.1f} % "
               f"within {limit:g} mm")
    logger.info(summary)
    outside = [(t, e) for t, e in matched if e > limit]
    if outside:  # where the misses were: one spot, or everywhere
        logger.info(f"{len(outside)} frames over {limit:g} mm (truth x, y; share in sight; "
                    "error mm): " + "; ".join(f"({t.x:+.3f}, {t.y:+.3f}) {t.visible:.2f} "
                                              f"{e:.1f}" for t, e in outside[::5]))
    return f"{summary} (wanted {pct:g} %)" if inside < pct else ""


class TrackingKeywords:
    def __init__(self, ctx: SimulatedTable) -> None:
        self.ctx = ctx
        self._window: tuple[float, float] | None = None

    @keyword("the ball is tracked")
    def ball_tracked(self, within_s: float = 5.0, longest_s: float = 20.0) -> None:
        """A detected BallState within `within_s` of the ball being in sight (the live table
        plays on through a FAULT, and a ball at rest under a man stays hidden until a rod
        moves it), waiting `longest_s` at most."""
        observer, truth = self.ctx.observer, self.ctx.truth
        since = time.monotonic()

        def detected() -> bool:
            return any(h.message.status == BallStatus.DETECTED
                       for h in observer.since(since, BallState))

        def in_sight_s() -> float:
            return sum(1 for t in truth.since(since) if t.visible >= IN_SIGHT) / self.ctx.fps

        # until seen, or in sight that long unseen (wait_for gives up at longest_s itself)
        observer.wait_for(lambda: detected() or in_sight_s() >= within_s, longest_s)
        if not detected():
            last = next(iter(truth.since(since)[-1:]), None)
            where = (f"last at ({last.x:+.3f}, {last.y:+.3f}), {last.visible:.2f} in sight"
                     if last is not None else "no truth heard")
            raise AssertionError(
                f"no detected BallState in {time.monotonic() - since:.1f} s, the ball in sight "
                f"for {in_sight_s():.1f} s of it ({where}); camera: "
                f"{self.ctx.log_tail('camera', 300)!r}")

    @keyword("the camera takes ${count} frames")
    def frames(self, count: str) -> None:
        """The observation window: the next `count` frames of the live table (at most twice
        their time at the camera's rate) and the tracker's states for them."""
        wanted, truth = int(count), self.ctx.truth
        within_s = 2.0 * wanted / self.ctx.fps + 5.0
        start = time.monotonic()
        wait_until(lambda: len(truth.since(start)) >= wanted, within_s,
                   lambda: f"the camera took {len(truth.since(start))} frames in {within_s:g} "
                           f"s (wanted {wanted}); camera: {self.ctx.log_tail('camera', 300)!r}")
        last = truth.since(start)[wanted - 1]
        # the tracker's state for the window's last frame may still be on its way
        wait_until(lambda: any(h.message.capture_time >= last.t_ns for h in
                               self.ctx.observer.since(last.at_s - 0.5, BallState)), 2.0,
                   lambda: "the tracker sent no BallState for the frames after the window")
        self._window = (start, last.at_s)

    def _pairs(self) -> list[tuple[Truth, BallState | None]]:
        """Every frame of the window that the table told while the game was PLAYING, with
        the tracker's state for it. The table plays on whatever the game does: after a
        FAULT the robot's rods stand still, and a ball that comes to rest under one of its
        men is in play but hidden (seen twice in ten runs: 158 and 353 of 600 frames LOST,
        once with a FAULT from a 50 ms heartbeat gap on this shared machine in the log)."""
        if self._window is None:
            raise AssertionError("no observation window: 'When the camera takes N frames'")
        start, end = self._window
        # a state heard a little after the window may be for a frame in it
        states = {h.message.capture_time: h.message
                  for h in self.ctx.observer.since(start, BallState)}
        told = [t for t in self.ctx.truth.since(start) if t.at_s <= end]
        if not told:
            raise AssertionError("the live table told no truth in the window (camera log: "
                                 f"{self.ctx.log_tail('camera', 300)!r})")
        frames = [frame for frame, state in self.ctx.with_game_state(told)
                  if state == SafetyState.PLAYING]
        if len(frames) < len(told) / 2:
            raise AssertionError(f"the game was PLAYING for {len(frames)} of the window's "
                                 f"{len(told)} frames: {self.ctx.alarms_since(start)}")
        if len(frames) < len(told):
            logger.info(f"{len(told) - len(frames)} of {len(told)} frames while the game was "
                        f"not PLAYING, left out: {self.ctx.alarms_since(start)}")
        return [(t, states.get(t.t_ns)) for t in frames]


    @keyword("the ball is reported in ${pct} % of the frames in which it is in play and "
             "in sight")
    def reported(self, pct: str) -> None:
        """In sight: at least half the ball's pixels seen (a ball at rest under a man is in
        play but hidden, once 203 of 600 frames; the tracker's partial-ball fit needs half
        a ball)."""
        pairs = [(t, s) for t, s in self._pairs() if t.in_play and t.visible >= IN_SIGHT]
        seen = [s for _, s in pairs if s is not None and s.status != BallStatus.LOST]
        share = 100.0 * len(seen) / len(pairs) if pairs else 0.0
        statuses = {status.name: sum(1 for _, s in pairs if s is not None and s.status == status)
                    for status in BallStatus}
        statuses["no state"] = sum(1 for _, s in pairs if s is None)
        logger.info(f"{len(pairs)} frames with the ball in play and in sight: {statuses}")
        if not pairs or share < float(pct):
            logger.info("frames in play the tracker lost (truth x, y; what it said): " + "; ".join(
                f"({t.x:+.3f}, {t.y:+.3f}) {s.status.name[0] if s else '-'}"
                for t, s in pairs[::10] if s is None or s.status == BallStatus.LOST))
            raise AssertionError(f"the ball was reported in {share:.1f} % of {len(pairs)} "
                                 f"frames in play and in sight (wanted {pct} %): {statuses}")

    @keyword("the reported ball is within ${mm} mm of the truth in ${pct} % of the frames "
             "showing the whole ball, and within ${hidden_mm} mm when part of it is hidden")
    def within(self, mm: str, pct: str, hidden_mm: str) -> None:
        """Detected states only (a predicted ball is the filter's guess behind a man). A
        ball partly under a man is fitted from the arc in sight, and one at rest there is
        off by the same few millimetres frame after frame (measured: a still ball 44 % in
        sight, 6.3 mm; one 51 % in sight, 7.0 mm), so the two are held to their own
        bounds: how long the ball rests under a man is the game's, not the tracker's."""
        whole: list[tuple[Truth, float]] = []
        hidden: list[tuple[Truth, float]] = []
        pairs = self._pairs()
        for t, s in pairs:
            if t.in_play and s is not None and s.status == BallStatus.DETECTED:
                error = 1e3 * math.hypot(s.x - t.x, s.y - t.y)
                (whole if t.visible >= WHOLE else hidden).append((t, error))
        if not whole:
            # (CI run 38 failed here once without saying where the ball was)
            told = [t for t, _ in pairs]
            raise AssertionError(
                f"no detected ball state matched a frame showing the whole ball; "
                f"{len(hidden)} detected with part of it hidden, {len(told)} frames while "
                f"PLAYING; the truth every 50th (x, y, in play, share in sight): " + "; ".join(
                    f"({t.x:+.3f}, {t.y:+.3f}, {t.in_play}, {t.visible:.2f})"
                    for t in told[::50]))
        failures = [f for f in (_error_check("the whole ball", whole, float(mm), float(pct)),
                                _error_check("part of the ball hidden", hidden,
                                             float(hidden_mm), float(pct))) if f]
        if failures:
            raise AssertionError("; ".join(failures))

    @keyword("ball states reach the LAN within ${ms} ms of capture in ${pct} % of the frames")
    def latency(self, ms: str, pct: str) -> None:
        """Capture stamp (wall clock) to arrival here; the rig's boards share one clock."""
        wall_minus_mono = time.time_ns() - time.monotonic_ns()
        start, end = self._window or (0.0, 0.0)
        late = [(h.at_s * 1e9 + wall_minus_mono - h.message.capture_time) / 1e6
                for h in self.ctx.observer.since(start, BallState) if h.at_s <= end]
        if not late:
            raise AssertionError("no BallState heard in the window")
        limit = float(ms)
        share = 100.0 * sum(1 for v in late if v <= limit) / len(late)
        summary = (f"capture to LAN over {len(late)} states: p50 {percentile(late, 50):.1f} ms, "
                   f"p99 {percentile(late, 99):.1f} ms, max {max(late):.1f} ms; "
                   f"{share:.1f} % within {limit:g} ms")
        logger.info(summary)
        if share < float(pct):
            raise AssertionError(f"{summary} (wanted {pct} %)")
