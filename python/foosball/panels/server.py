"""The web server every panel uses: static page, one WebSocket, token-checked actions.

A panel agent's web page IS its hardware for the runtime (foosball.runtime): what the
operator does on the page comes in as samples, what the core wants shown goes out as the
actuation. This module is that hardware, the same for the game panel and the supervisory
panel; it knows nothing about either.

How a panel uses it::

    server = PanelServer(static_dir, port=8080, token=panel_token(key),
                         actions={"start", "pause"}, name="game_panel")
    hardware = PanelHardware(server)         # starts the server on its own thread
    runtime = AgentRuntime(core, endpoint, settings, hardware=hardware)

- `static_dir` holds the page: ``index.html`` is served at ``/``, every other file under
  ``/static/`` (no build step, nothing from a CDN).
- The core's `Outputs.actuation` is a dict ``{topic: JSON-able data}``; `PanelHardware.act`
  publishes the topics whose data changed since the last call. Each browser gets every
  topic once when it connects and then the changed ones, as one text frame per send:
  ``{"topics": {"ball": {...}, "game": {...}}}``. A slow browser skips to the newest data
  instead of queueing old frames (only the latest of each topic is kept).
- The page sends actions as ``{"action": "start", "token": "...", "args": {...}, "id": 7}``
  on the WebSocket (or POSTs the same JSON to ``/api/action``). An action needs the
  installation's panel token; viewing never does. Each one is logged with the remote address
  and the time, accepted or refused, and answered with ``{"reply": {"id": 7, "accepted":
  true|false, "reason": "..."}}``. Accepted actions are what `PanelHardware.sense` returns
  (a tuple of `PanelAction`), for the core to judge (a START during a FAULT is the core's
  to refuse, not the server's).

The token: `panel_token(wire_key)` is an HMAC-SHA256 of a fixed label keyed with the
installation's wire key, so every board of one installation has the same token, nobody
without the key can make it, and a new wire key makes a new token. Agents write it to
``/data/foosball/panel.token`` (mode 0600) for the operator; ``python -m foosball.panels
token --key-file /data/foosball/wire.key`` prints it on any machine that holds the key.

aiohttp runs on its own thread with its own event loop; `publish` and `actions` are safe to
call from any thread.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import logging
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from foosball.files import write_atomically

log = logging.getLogger(__name__)

TOKEN_LABEL = b"foosball panel token v1"
TOKEN_FILE = "/data/foosball/panel.token"
MAX_ACTION_BYTES = 4096  # an action is a small JSON object; anything larger is refused
MAX_QUEUED_ACTIONS = 64


def panel_token(wire_key: bytes) -> str:
    """The installation's panel token: HMAC-SHA256(wire key, TOKEN_LABEL), its first 80
    bits in base32, grouped for reading aloud (``abcd-efgh-ijkl-mnop``)."""
    digest = hmac.new(wire_key, TOKEN_LABEL, hashlib.sha256).digest()
    text = base64.b32encode(digest[:10]).decode().lower()
    return "-".join(text[i:i + 4] for i in range(0, len(text), 4))


def _normalise(token: str) -> str:
    return "".join(c for c in token.lower() if c.isalnum())


def token_matches(expected: str, given: Any) -> bool:
    """Constant-time comparison, ignoring case, dashes and spaces."""
    if not isinstance(given, str) or len(given) > 128:
        return False
    return hmac.compare_digest(_normalise(expected).encode(), _normalise(given).encode())


def write_token_file(path: str | Path, token: str) -> None:
    """Leave the token where the operator can read it (root only), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, (token + "\n").encode(), mode=0o600)


def installation_token(wire_key: bytes, token_file: str = "") -> str:
    """The panel token, also left in `token_file` when given. A panel whose file cannot be
    written still runs: the token can be printed from the key elsewhere."""
    token = panel_token(wire_key)
    if token_file:
        try:
            write_token_file(token_file, token)
        except OSError as exc:
            log.warning("cannot write the panel token to %s: %s", token_file, exc)
    return token


@dataclass(frozen=True, slots=True)
class PanelAction:
    """One accepted operator action: what, with which arguments, from whom, when."""

    name: str
    args: Mapping[str, Any]
    remote: str  # the browser's address as the server saw it
    wall_time: float  # time.time() when the server accepted it

    @property
    def when(self) -> str:
        return datetime.fromtimestamp(self.wall_time, UTC).isoformat(timespec="seconds")


@dataclass
class ServerCounters:
    clients: int = 0
    connections: int = 0
    frames_sent: int = 0
    accepted: int = 0
    refused: Counter[str] = field(default_factory=Counter)


class _Client:
    def __init__(self, ws: web.WebSocketResponse, topics: Iterable[str]) -> None:
        self.ws = ws
        self.pending: set[str] = set(topics)
        self.ready = asyncio.Event()
        if self.pending:
            self.ready.set()


class PanelServer:
    def __init__(
        self,
        static_dir: str | Path,
        *,
        token: str,
        actions: Iterable[str],
        host: str = "0.0.0.0",
        port: int = 8080,
        name: str = "panel",
        wall_time: Callable[[], float] = time.time,
    ) -> None:
        self.static_dir = Path(static_dir)
        if not (self.static_dir / "index.html").is_file():
            raise ValueError(f"{self.static_dir}: no index.html")
        self.token = token
        self.allowed = frozenset(actions)
        self.host, self.requested_port, self.name = host, port, name
        self.wall_time = wall_time
        self.counters = ServerCounters()
        self._latest: dict[str, str] = {}  # topic -> its newest data, already JSON text
        self._clients: set[_Client] = set()
        self._actions: deque[PanelAction] = deque()
        self._actions_ready = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self.on_action: Callable[[], None] | None = None  # called (any thread) per action

    # -- life --------------------------------------------------------------------------
    def start(self, timeout_s: float = 10.0) -> None:
        """Listen (on its own thread); returns once the socket is bound, raises if not."""
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            # SIGTERM and SIGINT are the main thread's (the agent's stop): delivered here
            # they would wait for the main thread to notice, which it may not soon.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._listen())
            except BaseException as exc:  # bind failed: hand it to start()
                failure.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._shutdown())
                loop.close()

        self._thread = threading.Thread(target=run, name=f"{self.name}-web", daemon=True)
        self._thread.start()
        if not started.wait(timeout_s):
            raise RuntimeError(f"{self.name}: web server did not start in {timeout_s} s")
        if failure:
            raise failure[0]
        log.info("%s: serving http://%s:%d/", self.name, self.host, self.port)

    @property
    def port(self) -> int:
        assert self._port is not None, "not started"
        return self._port

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5.0)

    # -- what the panel does -------------------------------------------------------------
    def publish(self, topics: Mapping[str, Any]) -> None:
        """Send these topics to every browser (and to every browser that connects later).
        Serialised here, on the caller's thread; the event loop only copies text."""
        if not topics:
            return
        texts = {topic: json.dumps(data, separators=(",", ":"), allow_nan=False)
                 for topic, data in topics.items()}
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed under us
                loop.call_soon_threadsafe(self._mark, texts)

    def actions(self, timeout_s: float) -> tuple[PanelAction, ...]:
        """The actions accepted since the last call, waiting up to `timeout_s` for one."""
        with self._actions_ready:
            if not self._actions and timeout_s > 0:
                self._actions_ready.wait(timeout_s)
            out = tuple(self._actions)
            self._actions.clear()
        return out

    # -- inside the event loop ---------------------------------------------------------
    async def _listen(self) -> None:
        app = web.Application(client_max_size=MAX_ACTION_BYTES)
        app.router.add_get("/", self._index)
        app.router.add_get("/ws", self._websocket)
        app.router.add_post("/api/action", self._post_action)
        app.router.add_static("/static/", self.static_dir, follow_symlinks=False)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.requested_port, reuse_address=True)
        await site.start()
        addresses = self._runner.addresses  # the bound port, when 0 was asked for
        self._port = addresses[0][1] if addresses else self.requested_port

    async def _shutdown(self) -> None:
        for client in list(self._clients):
            with contextlib.suppress(Exception):
                await client.ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def _mark(self, texts: dict[str, str]) -> None:
        self._latest.update(texts)
        for client in self._clients:
            client.pending.update(texts)
            client.ready.set()

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(self.static_dir / "index.html",
                                headers={"Cache-Control": "no-cache"})

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(heartbeat=10.0, max_msg_size=MAX_ACTION_BYTES,
                                   compress=False)
        await ws.prepare(request)
        client = _Client(ws, self._latest)
        self._clients.add(client)
        self.counters.connections += 1
        self.counters.clients = len(self._clients)
        pump = asyncio.create_task(self._pump(client))
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    reply = self._submit(request.remote or "?", msg.data)
                    await ws.send_str(json.dumps({"reply": reply}))
                elif msg.type == WSMsgType.ERROR:
                    break
        finally:
            pump.cancel()
            self._clients.discard(client)
            self.counters.clients = len(self._clients)
        return ws

    async def _pump(self, client: _Client) -> None:
        """Send what changed, newest data only, one frame at a time."""
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            while not client.ws.closed:
                await client.ready.wait()
                client.ready.clear()
                topics, client.pending = client.pending, set()
                body = ",".join(f"{json.dumps(t)}:{self._latest[t]}" for t in sorted(topics))
                await client.ws.send_str('{"topics":{' + body + "}}")
                self.counters.frames_sent += 1

    async def _post_action(self, request: web.Request) -> web.StreamResponse:
        try:
            text = await request.text()
        except (ValueError, web.HTTPException):
            text = ""
        reply = self._submit(request.remote or "?", text)
        return web.json_response(reply, status=200 if reply["accepted"] else 403)

    def _submit(self, remote: str, text: str) -> dict[str, Any]:
        """Check one action from a browser; queue it for the core when it passes."""
        try:
            request = json.loads(text)
        except (TypeError, ValueError):
            request = None
        ident = request.get("id") if isinstance(request, dict) else None
        ident = ident if isinstance(ident, int) and not isinstance(ident, bool) else None
        name = request.get("action") if isinstance(request, dict) else None
        args = request.get("args", {}) if isinstance(request, dict) else None
        wall = self.wall_time()
        when = datetime.fromtimestamp(wall, UTC).isoformat(timespec="seconds")
        code, reason = "", ""
        if not isinstance(request, dict) or not isinstance(name, str):
            code, reason = "malformed", "not an action"
        elif name not in self.allowed:
            code, reason = "unknown", f"no action {name[:40]!r}"
        elif not isinstance(args, dict):
            code, reason = "malformed", "args must be an object"
        elif not token_matches(self.token, request.get("token")):
            code, reason = "token", "missing or wrong panel token"
        if reason:
            self.counters.refused[code] += 1
            log.warning("%s: refused %r from %s at %s: %s", self.name,
                        str(name)[:40], remote, when, reason)
            return {"id": ident, "action": name if isinstance(name, str) else None,
                    "accepted": False, "reason": reason}
        assert isinstance(name, str) and isinstance(args, dict)
        action = PanelAction(name, args, remote, wall)
        log.info("%s: %s %s from %s at %s", self.name, name, json.dumps(args)[:200],
                 remote, when)
        with self._actions_ready:
            if len(self._actions) >= MAX_QUEUED_ACTIONS:
                self.counters.refused["busy"] += 1
                return {"id": ident, "action": name, "accepted": False,
                        "reason": "busy: too many actions waiting"}
            self._actions.append(action)
            self._actions_ready.notify()
        if self.on_action is not None:
            self.on_action()
        self.counters.accepted += 1
        return {"id": ident, "action": name, "accepted": True, "reason": ""}


class PanelHardware:
    """A `PanelServer` as an agent's hardware: sense() = the operator's actions (a tuple,
    or None when none came), act(topics) = publish what changed. act(None), the runtime's
    reaction to a failed step, leaves the page showing the last view.

    sense() waits on `wake`, which the server sets when an action comes, and clears it. A
    panel that shows wire messages as they arrive hands its runtime's wake event to
    `wake_with`, so that a message is stepped (and drawn) at once instead of at the end of
    the wait."""

    def __init__(self, server: PanelServer, start: bool = True) -> None:
        self.server = server
        self.wake = threading.Event()
        server.on_action = self._poke
        self._shown: dict[str, Any] = {}
        if start:
            server.start()

    def wake_with(self, event: threading.Event) -> None:
        self.wake = event

    def _poke(self) -> None:
        self.wake.set()

    def sense(self, timeout_s: float) -> tuple[PanelAction, ...] | None:
        actions = self.server.actions(0)
        if not actions and timeout_s > 0:
            self.wake.wait(timeout_s)
        # The wake-up is spent here, before the actions are read: one set after this line
        # wakes the next turn; left set, every later wait returned at once and the step
        # thread spun at real-time priority after the first action (issue 29).
        self.wake.clear()
        return actions or self.server.actions(0) or None

    def act(self, actuation: Any) -> None:
        if not isinstance(actuation, Mapping):
            return
        shown = self._shown
        changed = {topic: data for topic, data in actuation.items()
                   if shown.get(topic, _UNSET) is not data and shown.get(topic, _UNSET) != data}
        if changed:
            self._shown.update(changed)
            self.server.publish(changed)

    def close(self) -> None:
        self.server.close()


_UNSET = object()
