"""A person in a browser plays the human's rods of the live table.

`BrowserPlayer` is a controller for the human side (see `foosball.sim.controllers`): a small
aiohttp server on its own thread serves a page (``static/player/``) and one WebSocket, the
page sends what the person does with keyboard and mouse, and every `step` turns the latest
intent into a RodCommand. The page gets the table's state (ball, every rod's pose, score)
about 30 times a second to draw a top view.

Everything is in the human's own frame, as for any controller: x towards the robot's goal,
y = -table y, translation and rotation mirrored (positive rotation swings the feet towards
the robot's goal). The page draws that frame as it is: the person's goal on the left, y up.

The page's messages (one JSON object each; anything else is ignored):

- ``{"rod": 0..3}``: the active rod (goalkeeper, defence, midfield, attack);
- ``{"move": -1 | 0 | 1}``: a key held moves the active rod down / stops it / up (+y);
- ``{"point": y}``: the pointer's y (m): the active rod's man nearest it goes under it;
- ``{"kick": true}``: the active rod strikes: a fast rotation forward, then back upright;
- ``{"lift": true | false}``: the active rod's feet up (a ball passes under) or down.

Rods the person has not touched are left alone (they hold); a rod keeps its last target
when another one becomes active. Every connected browser plays the same rods.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import math
import signal
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from foosball.geometry import Rod, Table
from foosball.recording.format import WorldState
from foosball.sim.physics import human_rod_limits
from foosball.wire.catalogue import BallState, RodCommand, RodId, RodStatus, RodTarget

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static" / "player"
DEFAULT_PORT = 8090
STATE_PERIOD_S = 1 / 30  # the page's view of the table
MAX_MESSAGE_BYTES = 1024

KEY_SPEED = 0.8  # m/s: a rod moved by a held key
KICK_FORWARD = 2.6  # rad: the strike follows through over the top, fast at the ball
KICK_SPEED = 150.0  # rad/s: about 12 m/s at the ball
KICK_DONE = 1.2  # rad: past the ball: swing back
KICK_TIMEOUT_S = 0.25  # swing back even if the rod never got there (blocked)
LIFT = -1.5  # rad: feet up and back
ROD_IDS = tuple(RodId)


@dataclasses.dataclass
class _RodIntent:
    translation: float | None = None  # own-frame target; None: never touched
    speed: float = 0.0  # cap of the translation move (0: the hands' maximum)
    rotation: float = 0.0  # resting rotation: upright or lifted
    man: int = 0  # the man that follows the pointer
    stop: bool = False  # hold where it is at the next step (a key released)
    kick_requested: bool = False
    kick_started: float | None = None  # s (the controller's clock)
    kick_back: bool = False


class PlayerIntent:
    """What the person wants, from the page's messages; `command` makes the RodCommand.
    No I/O and no clock of its own: the unit under test."""

    def __init__(self, table: Table) -> None:
        # the human's rods in the human's own frame (x and travel mirrored)
        self.rods: list[Rod] = [
            dataclasses.replace(r, x=-r.x, travel_min=-r.travel_max, travel_max=-r.travel_min)
            for r in table.human_rods
        ]
        self.active = 0
        self.moving = 0
        self._state = [_RodIntent() for _ in self.rods]

    def apply(self, message: Mapping[str, Any]) -> bool:
        """One message from the page; False (and nothing changes) if it is not one."""
        if not isinstance(message, Mapping) or len(message) != 1:
            return False
        (kind, value), = message.items()
        if kind == "rod" and _is_int(value) and 0 <= value < len(self.rods):
            if value != self.active:
                self._leave(self.active)
                self.active = value
        elif kind == "move" and _is_int(value) and value in (-1, 0, 1):
            self.moving = value
            rod, state = self.rods[self.active], self._state[self.active]
            if value:
                state.translation = rod.travel_max if value > 0 else rod.travel_min
                state.speed, state.stop = KEY_SPEED, False
            else:
                state.stop = True
        elif kind == "point" and _is_number(value) and abs(value) < 1.0:
            self.moving = 0
            rod, state = self.rods[self.active], self._state[self.active]
            state.man = _man_under(rod, value, state.man)
            state.translation = rod.clamp(rod.translation_for(state.man, value))
            state.speed, state.stop = 0.0, False
        elif kind == "kick" and value is True:
            self._state[self.active].kick_requested = True
        elif kind == "lift" and isinstance(value, bool):
            self._state[self.active].rotation = LIFT if value else 0.0
        else:
            return False
        return True

    def release(self) -> None:
        """Every key and button let go (the page lost focus, the browser went away)."""
        if self.moving:
            self.apply({"move": 0})
        self._state[self.active].rotation = 0.0

    def _leave(self, index: int) -> None:
        """The active rod changes: the one left stops and puts its feet down."""
        state = self._state[index]
        if self.moving:
            state.stop = True
            self.moving = 0
        state.rotation = 0.0

    def command(self, rods: RodStatus, now_ns: int, capture_time: int = 0) -> RodCommand | None:
        """The targets of every rod the person has touched (None: none yet), given the
        rods' measured state in the human's frame."""
        now = now_ns * 1e-9
        measured = {p.rod: p for p in rods.rods}
        targets = []
        for i, state in enumerate(self._state):
            here = measured.get(ROD_IDS[i])
            translation = here.translation if here is not None else 0.0
            rotation = here.rotation if here is not None else 0.0
            if state.stop:  # a key let go: hold where it is now
                state.translation, state.speed, state.stop = translation, 0.0, False
            if state.translation is None:
                if not (state.kick_requested or state.rotation):
                    continue  # never touched: it holds
                state.translation = translation  # kicked or lifted where it stands
            turn, turn_speed = self._rotation(state, rotation, now)
            targets.append(RodTarget(ROD_IDS[i], state.translation, turn, state.speed,
                                     turn_speed))
        if not targets:
            return None
        return RodCommand(ball_capture_time=capture_time, rods=tuple(targets))

    @staticmethod
    def _rotation(state: _RodIntent, rotation: float, now: float) -> tuple[float, float]:
        """(rotation target, speed cap): a kick in progress, else the resting rotation."""
        if state.kick_requested:
            state.kick_requested = False
            if state.kick_started is None:  # a click during a kick does not restart it
                state.kick_started, state.kick_back = now, False
        if state.kick_started is not None:
            if not state.kick_back and (rotation >= KICK_DONE
                                        or now - state.kick_started > KICK_TIMEOUT_S):
                state.kick_back = True
            if not state.kick_back:
                return KICK_FORWARD, KICK_SPEED
            if abs(rotation - state.rotation) > 0.2 and now - state.kick_started < 1.0:
                return state.rotation, 0.0
            state.kick_started = None
        return state.rotation, 0.0


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _man_under(rod: Rod, y: float, current: int) -> int:
    """The man that goes under the pointer: the current one while it can reach y (no
    jumping back and forth where two men's reach overlaps), else the nearest that can."""
    def miss(man: int) -> float:
        wanted = rod.translation_for(man, y)
        return abs(rod.clamp(wanted) - wanted)

    if current < rod.men and miss(current) == 0.0:
        return current
    return min(range(rod.men), key=lambda man: (miss(man), abs(rod.translation_for(man, y))))


class BrowserPlayer:
    """The controller (`step`), the page's server (`start`, `close`, `url`) and the view
    it sends (`show`, called by the live table with the world's state)."""

    def __init__(self, table: Table, *, host: str = "0.0.0.0", port: int = DEFAULT_PORT,
                 static_dir: Path = STATIC_DIR) -> None:
        self.table = table
        self.intent = PlayerIntent(table)
        self.rod_limits = human_rod_limits()  # a person's hands, not the robot's drives
        self.host, self.requested_port, self.static_dir = host, port, static_dir
        self.inputs = 0  # accepted messages
        self.connections = 0
        self._lock = threading.Lock()
        self._state: WorldState | None = None
        self._clients: set[web.WebSocketResponse] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._layout = json.dumps({"layout": self._describe_table()})

    # -- the controller ------------------------------------------------------------------
    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        with self._lock:
            return self.intent.command(rods, now_ns, ball.capture_time)

    def handle(self, text: str) -> bool:
        """One WebSocket message from a page (any thread)."""
        try:
            message = json.loads(text) if len(text) <= MAX_MESSAGE_BYTES else None
        except ValueError:
            message = None
        with self._lock:
            accepted = isinstance(message, dict) and self.intent.apply(message)
            self.inputs += accepted
        return accepted

    def show(self, state: WorldState) -> None:
        """The newest world state, for the pages (sent at most every STATE_PERIOD_S)."""
        self._state = state

    # -- the server ----------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._port is not None, "not started"
        return self._port

    @property
    def url(self) -> str:
        host = "localhost" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}/"

    def start(self, timeout_s: float = 10.0) -> None:
        """Listen on a thread of its own; returns once bound, raises if it cannot bind."""
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            # SIGTERM and SIGINT stay the main thread's (the camera's stop)
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
            loop = self._loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self._listen())
            except BaseException as exc:
                failure.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            sender = loop.create_task(self._send_states())
            try:
                loop.run_forever()
            finally:
                sender.cancel()
                loop.run_until_complete(self._shutdown())
                loop.close()

        self._thread = threading.Thread(target=run, name="browser-player", daemon=True)
        self._thread.start()
        if not started.wait(timeout_s):
            raise RuntimeError(f"browser player: no server after {timeout_s} s")
        if failure:
            raise failure[0]

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5.0)

    async def _listen(self) -> None:
        app = web.Application()
        app.router.add_get("/", self._index)
        app.router.add_get("/ws", self._websocket)
        app.router.add_static("/static/", self.static_dir, follow_symlinks=False)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.requested_port, reuse_address=True)
        await site.start()
        addresses = self._runner.addresses
        self._port = addresses[0][1] if addresses else self.requested_port

    async def _shutdown(self) -> None:
        for ws in list(self._clients):
            with contextlib.suppress(Exception):
                await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(self.static_dir / "index.html",
                                headers={"Cache-Control": "no-cache"})

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(heartbeat=10.0, max_msg_size=MAX_MESSAGE_BYTES)
        await ws.prepare(request)
        await ws.send_str(self._layout)
        self._clients.add(ws)
        self.connections += 1
        log.info("browser player: %s joined", request.remote)
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    self.handle(msg.data)
                elif msg.type == WSMsgType.ERROR:
                    break
        finally:
            self._clients.discard(ws)
            with self._lock:
                self.intent.release()  # a key held when the page went away
        return ws

    async def _send_states(self) -> None:
        sent = None
        while True:
            await asyncio.sleep(STATE_PERIOD_S)
            state = self._state
            if state is None or state is sent or not self._clients:
                continue
            sent = state
            text = json.dumps({"state": self._view(state)}, separators=(",", ":"))
            for ws in list(self._clients):
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await ws.send_str(text)

    # -- what the page draws (the human's frame) -------------------------------------------
    def _describe_table(self) -> dict[str, Any]:
        f, man = self.table.field, self.table.man
        return {
            "length": f.length, "width": f.width, "goal_width": f.goal_width,
            "ball_radius": self.table.ball.radius, "foot_reach": man.foot_reach,
            "rods": [{"x": -rod.x, "team": rod.team, "role": rod.role, "men": rod.men,
                      "spacing": rod.spacing} for rod in self.table.rods],
            "mine": [self.table.rods.index(rod) for rod in self.table.human_rods],
        }

    def _view(self, state: WorldState) -> dict[str, Any]:
        return {
            "t": round(state.time_ns * 1e-9, 3),
            "ball": [round(-state.ball_x, 4), round(-state.ball_y, 4)]
            if state.ball_in_play else None,
            "translations": [round(-t, 4) for t in state.translations],
            "rotations": [round(-r, 3) for r in state.rotations],
            "score": {"robot": state.score_robot, "human": state.score_human},
            "active": self.intent.active,
        }
