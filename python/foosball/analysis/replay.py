"""`foosball replay FILE`: a recorded match played again on the game panel's page.

The page is the game panel's own (panels/static/game), served by the same web server, and
what it shows is made by the game panel's own core (GamePanelCore) from the recorded
messages, so a replay looks as the match did; only the game line (state, score, clock,
alarm text) is the recorded GameState, because the core would otherwise judge the game
again from what it is fed. Nothing is sent on the wire: a replay has no endpoint at all.

`ReplayClock` is the pure part: where in the recording we are for a given wall time, with
pause, seek and speed. `Replay` feeds the core what is due and hands the page its topics
plus a "replay" topic, which the page's replay bar (static/game/replay.js) shows and
drives with the "replay" action: {"command": "pause" | "play" | "seek" | "speed",
"to": seconds, "speed": factor}.
"""

from __future__ import annotations

import bisect
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from foosball.agents.game_panel import GamePanelCore
from foosball.geometry import default_table
from foosball.recording.format import Recording
from foosball.runtime import Inputs
from foosball.wire.catalogue import GameState

log = logging.getLogger(__name__)

SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
PAGE_PERIOD_S = 0.02  # the page is sent what changed 50 times a second
LEAD_IN_S = 1.0  # after a seek, the core is fed this much before the target (the trail)


@dataclass
class ReplayClock:
    """Recording time (s from its first record) as a function of the wall clock."""

    duration_s: float
    speed: float = 1.0
    paused: bool = False
    _at_s: float = 0.0  # the position at `_since`
    _since: float = 0.0  # the wall time of the last change

    def position(self, wall_s: float) -> float:
        if self.paused:
            return self._at_s
        return min(self.duration_s, self._at_s + (wall_s - self._since) * self.speed)

    def _rebase(self, wall_s: float) -> None:
        self._at_s, self._since = self.position(wall_s), wall_s

    def pause(self, wall_s: float) -> None:
        self._rebase(wall_s)
        self.paused = True

    def play(self, wall_s: float) -> None:
        self._rebase(wall_s)
        if self._at_s >= self.duration_s:
            self._at_s = 0.0  # played to the end: again from the start
        self.paused = False

    def seek(self, to_s: float, wall_s: float) -> None:
        self._at_s, self._since = min(max(0.0, to_s), self.duration_s), wall_s

    def set_speed(self, speed: float, wall_s: float) -> None:
        self._rebase(wall_s)
        self.speed = speed

    def finished(self, wall_s: float) -> bool:
        return self.position(wall_s) >= self.duration_s


class Replay:
    """The recorded messages through a GamePanelCore, as the page's topics."""

    def __init__(self, recording: Recording, *, speed: float = 1.0, start_s: float = 0.0,
                 wall: Callable[[], float] = time.monotonic) -> None:
        self.recording = recording
        self.table = recording.table or default_table()
        shown = (*GamePanelCore.reads, GameState)
        self.messages = [(t, m) for t, m in recording.messages if isinstance(m, shown)]
        self.times = [t for t, _ in self.messages]
        self.t0 = self.times[0] if self.times else 0
        duration = (self.times[-1] - self.t0) * 1e-9 if self.times else 0.0
        self.wall = wall
        self.clock = ReplayClock(duration, speed)
        self.clock.seek(start_s, wall())
        self._restart_at(self.clock.position(wall()))

    def _restart_at(self, position_s: float) -> None:
        """A new core, fed from LEAD_IN_S before `position_s` (and the last of each kind of
        message before that, so rods and game are right at once)."""
        self.core = GamePanelCore(self.table)
        self.game: GameState | None = None
        target = self.t0 + round(position_s * 1e9)
        lead = bisect.bisect_left(self.times, target - round(LEAD_IN_S * 1e9))
        latest: dict[type, Any] = {}
        for _, message in self.messages[:lead]:
            latest[type(message)] = message
        self.next = lead
        self._feed(tuple(latest.values()), target)
        self._advance_to(target)

    def _advance_to(self, target_ns: int) -> None:
        end = bisect.bisect_right(self.times, target_ns, lo=self.next)
        batch = tuple(m for _, m in self.messages[self.next:end])
        self.next = end
        self._feed(batch, target_ns)

    def _feed(self, messages: tuple[Any, ...], at_ns: int) -> None:
        for message in messages:
            if isinstance(message, GameState):
                self.game = message
        self.core.step(Inputs((at_ns - self.t0) * 1e-9,
                              tuple(m for m in messages if not isinstance(m, GameState))))

    # -- what the page asks ---------------------------------------------------------------
    def command(self, args: Mapping[str, Any]) -> str:
        """One "replay" action from the page; "" when done, else why not."""
        now = self.wall()
        command = args.get("command")
        if command == "pause":
            self.clock.pause(now)
        elif command == "play":
            if self.clock.finished(now):
                self._restart_at(0.0)
            self.clock.play(now)
        elif command == "seek":
            to = args.get("to")
            if isinstance(to, bool) or not isinstance(to, int | float):
                return "seek needs a number of seconds, 'to'"
            self.clock.seek(float(to), now)
            self._restart_at(self.clock.position(now))
        elif command == "speed":
            speed = args.get("speed")
            if speed not in SPEEDS:
                return f"speed one of {SPEEDS}"
            self.clock.set_speed(float(speed), now)
        else:
            return f"no replay command {command!r}"
        return ""

    # -- one turn -----------------------------------------------------------------------
    def topics(self) -> dict[str, Any]:
        """Advance to now and return the page's topics."""
        position = self.clock.position(self.wall())
        self._advance_to(self.t0 + round(position * 1e9))
        topics = self.core.topics()
        game = dict(topics["game"])
        game["allowed"] = {name: False for name in game["allowed"]}  # nothing to control
        if self.game is not None:
            game.update(state=self.game.state.name, clock_s=round(self.game.clock_s, 1),
                        score={"robot": self.game.score_robot, "human": self.game.score_human},
                        faulted=self.game.alarm_text != "", fault_text=self.game.alarm_text)
        game["notice"] = "replay of a recorded match: nothing is sent to the table"
        topics["game"] = game
        topics["replay"] = {
            "file": self.recording.path, "source": self.recording.source,
            "t_s": round(position, 2), "duration_s": round(self.clock.duration_s, 2),
            "speed": self.clock.speed, "speeds": list(SPEEDS), "paused": self.clock.paused,
            "warnings": self.recording.warnings[:5]}
        return topics


class ReplayPage:
    """The game panel's page served for a Replay: `turn()` answers the page's actions and
    sends it what changed (the CLI calls it in a loop; a test from its own thread)."""

    def __init__(self, replay: Replay, *, host: str, port: int, token: str | None = None
                 ) -> None:
        from foosball.panels.game_page import STATIC
        from foosball.panels.server import PanelHardware, PanelServer

        self.replay = replay
        self.token = token or secrets.token_urlsafe(12)
        self.server = PanelServer(STATIC, token=self.token, actions=("replay",), host=host,
                                  port=port, name="replay")
        self.hardware = PanelHardware(self.server)
        shown = "localhost" if host in ("0.0.0.0", "") else host
        self.url = f"http://{shown}:{self.server.port}/#token={self.token}"

    def turn(self, wait_s: float = PAGE_PERIOD_S) -> None:
        actions = self.hardware.sense(wait_s) or ()
        for action in actions:
            reason = self.replay.command(action.args)
            if reason:
                log.warning("replay: %s", reason)
        self.hardware.act(self.replay.topics())

    def close(self) -> None:
        self.hardware.close()


def serve(replay: Replay, *, host: str, port: int, token: str | None = None,
          should_stop: Callable[[], bool] = lambda: False) -> None:
    """Run the page until `should_stop()` (Ctrl-C in the CLI)."""
    page = ReplayPage(replay, host=host, port=port, token=token)
    try:
        print(f"replay of {replay.recording.path} ({replay.clock.duration_s:.1f} s, "
              f"{replay.recording.source}): {page.url}", flush=True)
        while not should_stop():
            page.turn()
    finally:
        page.close()
