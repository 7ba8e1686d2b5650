"""`foosball ota push` and `foosball ota status`: the laptop's side of an update.

The laptop is on the agent LAN with the installation key. It finds the boards by their
update agents' OtaStatus (each sends one a second), serves the bundles over HTTP from a
path no one can guess, and sends each board an OtaCommand to install from its URL. A board
follows through on its own (install, reboot at a safe moment, health check, mark good or
roll back); the tool follows its OtaStatus and draws a progress bar per board. Staged
(`--staged`), the boards go one after another, each only once the one before it came back
healthy on its new slot, and the first failure stops the roll-out.

`Rollout` is the bookkeeping without I/O (statuses in, what to send and when it is over
out), so it is tested without a LAN; `push()` and `status()` are the I/O around it.
"""

from __future__ import annotations

import contextlib
import fcntl
import http.server
import secrets
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from foosball.ota.core import UNDER_WAY, UpdatePhase
from foosball.wire.catalogue import OtaCommand, OtaStatus

BOARDS = ("pole", "vision", "strategy")
RESEND_S = 1.0  # an install command not yet acknowledged is sent again this often


class PushError(ValueError):
    """The command line cannot be carried out; the message says why."""


def assign_bundles(bundles: Sequence[str], boards: Sequence[str]) -> dict[str, Path]:
    """Which bundle goes to which board: `BOARD=PATH`, or the one board whose name is in the
    file's name (meta-foosball's foosball-bundle-<board>-<machine>.raucb)."""
    assigned: dict[str, Path] = {}
    for item in bundles:
        board, sep, path = item.partition("=")
        if not sep:
            path = item
            named = [b for b in boards if b in Path(item).name]
            if len(named) != 1:
                raise PushError(f"{item}: cannot tell which board it is for (name one: "
                                f"BOARD={item})")
            board = named[0]
        if board not in boards:
            raise PushError(f"{item}: board {board!r} is not in --boards {','.join(boards)}")
        if board in assigned:
            raise PushError(f"two bundles for {board}")
        if not Path(path).is_file():
            raise PushError(f"{path}: no such file")
        assigned[board] = Path(path)
    missing = [b for b in boards if b not in assigned]
    if missing:
        raise PushError(f"no bundle for {', '.join(missing)}")
    return assigned


@dataclass
class BoardRollout:
    board: str
    url: str
    sent: bool = False  # an install command went out
    last_sent_s: float = -1e9
    acknowledged: bool = False  # the board left its old outcome: it took the command
    status: OtaStatus | None = None
    target: str = ""  # the slot the install made primary
    outcome: str = ""  # "" while going on; UPDATED, or what failed
    reason: str = ""

    @property
    def done(self) -> bool:
        return bool(self.outcome)

    @property
    def ok(self) -> bool:
        return self.outcome == UpdatePhase.UPDATED


@dataclass
class Rollout:
    """The roll-out's state: OtaStatus in (`observe`), commands out (`due`)."""

    boards: list[BoardRollout]
    staged: bool
    timeout_s: float
    started_s: dict[str, float] = field(default_factory=dict)

    def current(self) -> list[BoardRollout]:
        """The boards being updated now: staged, the first not done; else all not done."""
        if self.staged and any(b.done and not b.ok for b in self.boards):
            return []
        waiting = [b for b in self.boards if not b.done]
        return waiting[:1] if self.staged else waiting

    @property
    def over(self) -> bool:
        return not self.current()

    def shown(self, status: OtaStatus) -> bool:
        """Whether the status belongs on this tool's bars: not another tool's refusal."""
        return status.state != UpdatePhase.REFUSED or any(
            b.board == status.board and b.url == status.url for b in self.boards)

    def observe(self, status: OtaStatus, now_s: float) -> None:
        for board in self.boards:
            if board.board == status.board and not board.done:
                board.status = status
                self._follow(board, status)

    def _follow(self, board: BoardRollout, status: OtaStatus) -> None:
        state = status.state
        if not board.sent:
            return
        # A status names the install it is about: another tool's push to the same board
        # (its refusal, its install) is not this roll-out's.
        ours = status.url == board.url
        if state == UpdatePhase.REFUSED:
            if ours:
                board.outcome, board.reason = UpdatePhase.REFUSED, status.text
            return
        if state in UNDER_WAY:
            if not ours:
                return
            board.acknowledged = True
            if state == UpdatePhase.INSTALLED or (state == UpdatePhase.REBOOTING
                                                  and not board.target):
                board.target = status.primary
            return
        if not board.acknowledged:
            return  # still its outcome of before this command
        if state == UpdatePhase.UPDATED:
            board.outcome = UpdatePhase.UPDATED
        elif state in (UpdatePhase.FAILED, UpdatePhase.ROLLED_BACK, UpdatePhase.UNHEALTHY):
            board.outcome, board.reason = state, status.text
        elif state == UpdatePhase.IDLE and board.target and status.slot != board.target:
            board.outcome, board.reason = UpdatePhase.ROLLED_BACK, status.text

    def due(self, now_s: float) -> list[OtaCommand]:
        """Install commands to send now (again, while a board has not taken it)."""
        out = []
        for board in self.current():
            self.started_s.setdefault(board.board, now_s)
            if now_s - self.started_s[board.board] > self.timeout_s:
                board.outcome = "timeout"
                board.reason = f"no outcome within {self.timeout_s:.0f} s"
                continue
            status = board.status
            # Sent when the board is free, or busy with another tool's install: then it
            # refuses this one, and says so (a board checking its boot is free soon).
            ready = status is not None and (
                status.state not in UNDER_WAY | {UpdatePhase.CHECKING}
                or (status.state in UNDER_WAY and status.url != board.url))
            if ready and not board.acknowledged and now_s - board.last_sent_s >= RESEND_S:
                board.sent, board.last_sent_s = True, now_s
                out.append(OtaCommand(board=board.board, action="install", url=board.url))
        return out


# -- progress on the terminal --------------------------------------------------------------


def progress_line(board: str, status: OtaStatus | None, width: int = 20) -> str:
    if status is None:
        return f"{board:<9} {'':-<{width}}   -  waiting for its update agent"
    filled = round(status.progress / 100 * width)
    bar = "#" * filled + "-" * (width - filled)
    return (f"{board:<9} [{bar}] {status.progress:3.0f}% {status.state}: "
            f"{status.text}"[:160])


class ProgressView:
    """One bar per board: redrawn in place on a terminal, a line per change elsewhere."""

    def __init__(self, boards: Sequence[str], out: IO[str]) -> None:
        self.boards = list(boards)
        self.out = out
        self.tty = out.isatty()
        self._shown: dict[str, str] = {}
        self._drawn = False

    def show(self, statuses: dict[str, OtaStatus | None]) -> None:
        lines = {b: progress_line(b, statuses.get(b)) for b in self.boards}
        if self.tty:
            if self._drawn:
                self.out.write(f"\x1b[{len(self.boards)}F")  # back to the first bar
            self.out.write("".join(f"\x1b[2K{lines[b]}\n" for b in self.boards))
            self._drawn = True
        else:
            for board in self.boards:
                # A line per change of state, or of progress by 10 points
                key = _coarse(statuses.get(board))
                if self._shown.get(board) != key:
                    self._shown[board] = key
                    self.out.write(lines[board] + "\n")
        self.out.flush()


def _coarse(status: OtaStatus | None) -> str:
    if status is None:
        return ""
    return f"{status.state} {int(status.progress // 10)} {status.slot} {status.text[:40]}"


# -- serving the bundles ------------------------------------------------------------------------


class BundleServer:
    """The bundles over HTTP at http://HOST:PORT/<random>/<board>/<file name>: only what was
    given, only to whoever knows the path (the bundles are signed; the path keeps strangers
    from fetching them)."""

    def __init__(self, bundles: dict[str, Path], host: str, port: int = 0) -> None:
        prefix = "/" + secrets.token_urlsafe(16)
        self.files = {f"{prefix}/{board}/{path.name}": path for board, path in bundles.items()}
        files = self.files

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the standard library's name
                path = files.get(self.path)
                if path is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(path.stat().st_size))
                self.end_headers()
                with path.open("rb") as f, contextlib.suppress(ConnectionError):
                    # (a board that gives up mid-download says why in its OtaStatus)
                    while chunk := f.read(1 << 20):
                        self.wfile.write(chunk)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the progress bars are the output

        self.httpd = http.server.ThreadingHTTPServer((host, port), Handler)
        self.host = host
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def url(self, board: str) -> str:
        path = next(p for p in self.files if p.split("/")[2] == board)
        return f"http://{self.host}:{self.port}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def interface_address(iface: str) -> str | None:
    """The IPv4 address of a network interface, or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            packed = fcntl.ioctl(sock.fileno(), 0x8915,  # SIOCGIFADDR
                                 struct.pack("256s", iface.encode()[:15]))
        except OSError:
            return None
    return socket.inet_ntoa(packed[20:24])


# -- the two commands ------------------------------------------------------------------------


def push(endpoint: Any, bundles: dict[str, Path], boards: Sequence[str], *, http_host: str,
         staged: bool, http_port: int = 0, find_timeout_s: float = 15.0, timeout_s: float = 900.0,
         out: IO[str] = sys.stdout, monotonic: Callable[[], float] = time.monotonic) -> bool:
    """Update `boards` (in that order) with their bundles; True when every one is updated."""
    found = hear_statuses(endpoint, find_timeout_s, boards, monotonic)
    missing = [b for b in boards if b not in found]
    if missing:
        out.write(f"not found on the LAN within {find_timeout_s:.0f} s: {', '.join(missing)} "
                  "(is its update agent running, with this key?)\n")
        return False
    server = BundleServer(bundles, http_host, http_port)
    try:
        rollout = Rollout([BoardRollout(b, server.url(b)) for b in boards], staged, timeout_s)
        view = ProgressView(boards, out)
        statuses: dict[str, OtaStatus | None] = dict(found)
        out.write(f"serving {len(bundles)} bundle(s) at http://{http_host}:{server.port}/; "
                  f"{'staged, ' if staged else ''}order: {', '.join(boards)}\n")
        while not rollout.over:
            for command in rollout.due(monotonic()):
                endpoint.send(command)
            for received in endpoint.receive(0.1):
                if isinstance(received.message, OtaStatus):
                    rollout.observe(received.message, monotonic())
                    if rollout.shown(received.message):
                        statuses[received.message.board] = received.message
            view.show(statuses)
    finally:
        server.close()
    out.write(summary(rollout, statuses))
    return all(b.ok for b in rollout.boards)


def summary(rollout: Rollout, statuses: dict[str, OtaStatus | None]) -> str:
    lines = []
    stopped = next((b for b in rollout.boards if b.done and not b.ok), None)
    for board in rollout.boards:
        status = statuses.get(board.board)
        where = f"slot {status.slot}, version {status.version}" if status else "not heard"
        if board.ok:
            result = "updated"
        elif board.done:
            result = f"{board.outcome}: {board.reason}"
        else:
            result = "not updated (roll-out stopped)" if stopped else "unfinished"
        lines.append(f"{board.board:<9} {where}: {result}")
    if rollout.staged and stopped is not None:
        lines.append(f"staged roll-out stopped at {stopped.board}")
    return "\n".join(lines) + "\n"


def hear_statuses(endpoint: Any, timeout_s: float, boards: Sequence[str] = (),
                  monotonic: Callable[[], float] = time.monotonic) -> dict[str, OtaStatus]:
    """The latest OtaStatus of each board heard within `timeout_s` (sooner, once every one
    of `boards` is heard)."""
    found: dict[str, OtaStatus] = {}
    deadline = monotonic() + timeout_s
    while monotonic() < deadline and not (boards and all(b in found for b in boards)):
        for received in endpoint.receive(0.1):
            if isinstance(received.message, OtaStatus):
                found[received.message.board] = received.message
    return found


def status_table(statuses: dict[str, OtaStatus]) -> str:
    lines = [f"{'board':<9} {'booted':<10} {'version':<12} {'next boot':<10} state"]
    for board in sorted(statuses):
        s = statuses[board]
        lines.append(f"{board:<9} {s.slot:<10} {s.version:<12} {s.primary:<10} {s.state}: "
                     f"{s.text}")
    return "\n".join(lines) + "\n"


def default_http_host(transport: str, iface: str) -> str:
    """Where the boards reach this laptop: its address on the agent LAN's interface; on
    one host (UDP on loopback) the loopback."""
    if transport == "raw":
        address = interface_address(iface)
        if address is None:
            raise PushError(f"{iface} has no IPv4 address: give --http-host")
        return address
    return "127.0.0.1"
