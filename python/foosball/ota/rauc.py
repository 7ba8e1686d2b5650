"""The update agent's hardware: RAUC's D-Bus API (de.pengutronix.rauc.Installer, through
jeepney), the pending-update record on /data, and the reboot.

`RaucClient` is the D-Bus client, one blocking call per method (`foosball ota` tests use it
too). `RaucHardware` gives the core a `RaucView` each turn and carries out its `Request`s on
a worker thread of its own, so a slow D-Bus call never holds up the agent's step loop.
`BundleDownload` fetches a bundle to `state_dir` on a thread of its own, and gives up when
the server sends nothing for `download_stall_s`.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import queue
import shutil
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from jeepney import DBusAddress, MatchRule, Properties, new_method_call
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import DBusConnection, open_dbus_connection
from jeepney.wrappers import DBusErrorResponse, unwrap_msg

from foosball.files import write_atomically
from foosball.ota.core import Download, Pending, RaucView, Request, UpdateAgentConfig

log = logging.getLogger(__name__)

INSTALLER = DBusAddress("/", bus_name="de.pengutronix.rauc",
                        interface="de.pengutronix.rauc.Installer")
COMPLETED = MatchRule(type="signal", interface=INSTALLER.interface, member="Completed",
                      path="/")
CALL_TIMEOUT_S = 10.0
POLL_PERIOD_S = 0.25  # RAUC's properties and slots, read this often
RECONNECT_S = 1.0
CHUNK = 64 * 1024
SPACE_RESERVE = 16 << 20  # left free on state_dir's file system after a download


class DownloadError(RuntimeError):
    """A download that cannot go on; the message says why, for people."""


class RaucError(RuntimeError):
    """A D-Bus call to RAUC failed; the message is RAUC's."""


class RaucTimeout(RaucError):
    """RAUC did not answer (busy in a bootloader call, or gone)."""


def _plain(value: Any) -> Any:
    """jeepney's (signature, value) variants as plain values."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return value[1]
    return value


class RaucClient:
    def __init__(self, address: str = "SYSTEM") -> None:
        self.connection: DBusConnection = open_dbus_connection(bus=address)

    def call(self, method: str, signature: str | None = None, *body: Any) -> tuple[Any, ...]:
        message = new_method_call(INSTALLER, method, signature, body) if signature else \
            new_method_call(INSTALLER, method)
        return self._send(method, message)

    def _send(self, what: str, message: Any) -> tuple[Any, ...]:
        try:
            reply = self.connection.send_and_get_reply(message, timeout=CALL_TIMEOUT_S)
            return tuple(unwrap_msg(reply))
        except DBusErrorResponse as exc:  # RAUC's own error, or no RAUC on the bus
            raise RaucError(f"{what}: {' '.join(map(str, exc.data)) or exc.name}") from None
        except TimeoutError:
            raise RaucTimeout(f"{what}: no answer in {CALL_TIMEOUT_S:.0f} s") from None

    def install(self, source: str) -> None:
        self.call("InstallBundle", "sa{sv}", source, {})

    def mark(self, state: str, slot: str = "booted") -> str:
        return str(self.call("Mark", "ss", state, slot)[1])

    def properties(self) -> dict[str, Any]:
        values = self._send("properties", Properties(INSTALLER).get_all())[0]
        return {k: _plain(v) for k, v in values.items()}

    def slots(self) -> dict[str, dict[str, Any]]:
        return {name: {k: _plain(v) for k, v in status.items()}
                for name, status in self.call("GetSlotStatus")[0]}

    def primary(self) -> str:
        return str(self.call("GetPrimary")[0])

    def owner(self) -> str:
        """The unique name of the connection that owns RAUC's name (":1.42"): a RAUC
        that restarted has a new one. Asked of the bus daemon, not of RAUC."""
        try:
            reply = self.connection.send_and_get_reply(
                message_bus.GetNameOwner(INSTALLER.bus_name), timeout=CALL_TIMEOUT_S)
            return str(unwrap_msg(reply)[0])
        except DBusErrorResponse:
            raise RaucError("RAUC is not on the bus (its name has no owner)") from None
        except TimeoutError:
            raise RaucTimeout(f"the bus daemon: no answer in {CALL_TIMEOUT_S:.0f} s") from None

    def view(self, previous: RaucView | None = None, slots: bool = True) -> RaucView:
        """RAUC's state as the core sees it (without this agent's own counters). The slots
        are as `previous` had them unless `slots` (reading them runs the bootloader
        backend, fw_printenv on a board, for every slot) and while RAUC installs (it
        answers only its properties then: "already processing a different method")."""
        owner = self.owner()
        props = self.properties()
        progress = props.get("Progress", (0, "", 0))
        view = RaucView(reachable=True, owner=owner, operation=str(props.get("Operation", "")),
                        progress=int(progress[0]), progress_text=str(progress[1]),
                        last_error=str(props.get("LastError", "")))
        if previous is not None and (view.operation != "idle" or not slots):
            return replace(view, booted=previous.booted, primary=previous.primary,
                           versions=previous.versions)
        slots = self.slots()
        try:
            primary = self.primary()
        except RaucError:
            primary = ""  # the bootloader has no primary (every slot bad)
        return replace(view, primary=primary,
                       booted=next((n for n, s in slots.items() if s.get("state") == "booted"),
                                   ""),
                       versions={n: str(s.get("bundle.version", "")) for n, s in slots.items()})

    def close(self) -> None:
        self.connection.close()


def read_version(path: str | Path) -> str:
    """VERSION_ID of an os-release file ("" when it has none)."""
    with contextlib.suppress(OSError):
        for line in Path(path).read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "VERSION_ID":
                return value.strip().strip("\"'")
    return ""


class PendingStore:
    """The update rebooted into, on /data: the next boot judges it."""

    def __init__(self, state_dir: str | Path) -> None:
        self.path = Path(state_dir) / "pending.json"

    def load(self) -> Pending | None:
        try:
            return Pending(**json.loads(self.path.read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def save(self, pending: Pending) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, json.dumps(asdict(pending)).encode())

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


class BundleDownload:
    """One bundle from the laptop's HTTP server to `path`, on a thread: `received`,
    `total`, then `done` or `error`. A server that sends nothing for `stall_s` (the socket's
    timeout, for the connection and for every read) ends it with an error, as does a
    bundle larger than the space left on the file system."""

    def __init__(self, url: str, path: Path, stall_s: float, serial: int) -> None:
        self.url, self.path, self.stall_s, self.serial = url, path, stall_s, serial
        self.received = self.total = 0
        self.done = False
        self.error = ""
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._run, name="download", daemon=True)
        self._thread.start()

    def view(self) -> Download:
        return Download(self.url, self.serial, str(self.path), self.received, self.total,
                        self.done, self.error)

    def cancel(self) -> None:
        self._cancelled.set()
        self._thread.join(timeout=self.stall_s + 1)

    def _run(self) -> None:
        try:
            self._fetch()
        except DownloadError as exc:
            self.error = str(exc)
        except TimeoutError:
            self.error = (f"no data for {self.stall_s:g} s from the server (stalled at "
                          f"{self.received} of {self.total or '?'} bytes)")
        except urllib.error.HTTPError as exc:
            self.error = f"HTTP {exc.code} {exc.reason}"
        except urllib.error.URLError as exc:
            reason = exc.reason
            self.error = (f"no connection within {self.stall_s:g} s" if isinstance(
                reason, TimeoutError | socket.timeout) else f"cannot fetch it: {reason}")
        except http.client.IncompleteRead as exc:
            self.error = (f"the server closed the connection after {self.received} of "
                          f"{self.total} bytes ({exc!r})")
        except (OSError, ValueError, http.client.HTTPException) as exc:
            self.error = f"{type(exc).__name__}: {exc}"
        if self.error:
            log.error("download of %s failed: %s", self.url, self.error)
            self.path.unlink(missing_ok=True)

    def _fetch(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(self.url, timeout=self.stall_s) as response:
            self.total = int(response.headers.get("Content-Length") or 0)
            free = shutil.disk_usage(self.path.parent).free - SPACE_RESERVE
            if self.total > free:
                raise DownloadError(f"no room: the bundle is {self.total >> 20} MiB, "
                                    f"{self.path.parent} has {max(free, 0) >> 20} MiB free "
                                    f"(less a {SPACE_RESERVE >> 20} MiB reserve)")
            # 0600: only root (the agent and RAUC) reads what is about to be installed
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                while not self._cancelled.is_set():
                    chunk = response.read1(CHUNK)  # what has come, not a full CHUNK
                    if not chunk:
                        break
                    out.write(chunk)
                    self.received += len(chunk)
        if self._cancelled.is_set():
            raise DownloadError("cancelled")
        if self.total and self.received != self.total:
            raise DownloadError(f"the server closed the connection after {self.received} of "
                                f"{self.total} bytes")
        log.info("downloaded %s: %d bytes", self.url, self.received)
        self.done = True


class RaucHardware:
    """The update agent's hardware (foosball.runtime.Hardware)."""

    def __init__(self, config: UpdateAgentConfig) -> None:
        self.config = config
        self.store = PendingStore(config.state_dir)
        self.download_path = Path(config.state_dir) / "bundle.raucb"
        self.download_path.unlink(missing_ok=True)  # a download the last run left behind
        self._download: BundleDownload | None = None
        self._downloads = 0
        self._base = RaucView(running_version=read_version(config.version_file),
                              pending=self.store.load())
        self._view = self._base
        self._requests: queue.SimpleQueue[Request] = queue.SimpleQueue()
        self._changed = threading.Event()
        self._stopping = threading.Event()
        self._completed = 0
        self._last_result = 0
        self._failed_calls = 0
        self._call_error = ""
        self._thread = threading.Thread(target=self._work, name="rauc", daemon=True)
        self._thread.start()

    # -- Hardware ---------------------------------------------------------------------------
    def sense(self, timeout_s: float) -> RaucView:
        self._changed.wait(timeout_s)
        self._changed.clear()
        download = self._download
        return replace(self._view, download=download.view() if download else None)

    def act(self, actuation: Iterable[Request] | None) -> None:
        for request in actuation or ():
            self._requests.put(request)

    def close(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=CALL_TIMEOUT_S)
        self._discard_download()

    def _discard_download(self) -> None:
        if self._download is not None:
            self._download.cancel()
            self._download = None
        self.download_path.unlink(missing_ok=True)

    # -- the worker -------------------------------------------------------------------------
    def _work(self) -> None:
        while not self._stopping.is_set():
            try:
                client = RaucClient(self.config.dbus_address)
            except (OSError, ValueError, KeyError) as exc:  # no bus (yet)
                self._publish(reachable=False, error=f"no D-Bus: {exc}")
                self._stopping.wait(RECONNECT_S)
                continue
            try:
                self._serve(client)
            except Exception as exc:  # RAUC gone, the bus gone: try again, never die
                log.warning("RAUC connection lost: %s", exc)
                self._publish(reachable=False, error=str(exc))
                self._stopping.wait(RECONNECT_S)
            finally:
                client.close()

    def _serve(self, client: RaucClient) -> None:
        connection = client.connection
        connection.send_and_get_reply(message_bus.AddMatch(COMPLETED), timeout=CALL_TIMEOUT_S)
        with connection.filter(COMPLETED, bufsize=16) as completions:
            slots_read = False  # the slots change only by an install or a mark
            while not self._stopping.is_set():
                while not self._requests.empty():
                    self._carry_out(client, self._requests.get())
                    slots_read = False
                view = self._refresh(client, slots=not slots_read)
                slots_read = view.operation == "idle"
                try:
                    signal = connection.recv_until_filtered(completions, timeout=POLL_PERIOD_S)
                except TimeoutError:
                    continue
                slots_read = False
                self._completed += 1
                self._last_result = int(signal.body[0])
                log.info("RAUC install completed: result %d", self._last_result)

    def _carry_out(self, client: RaucClient, request: Request) -> None:
        log.info("request: %s %s", request.kind, request.argument)
        try:
            if request.kind == "download":  # not RAUC's work: on a thread of its own
                self._discard_download()
                self._downloads += 1
                self._download = BundleDownload(request.argument, self.download_path,
                                                self.config.download_stall_s, self._downloads)
            elif request.kind == "discard_download":
                self._discard_download()
            elif request.kind == "install":
                client.install(request.argument)
            elif request.kind == "mark":
                log.info("%s", client.mark(request.argument))
            elif request.kind == "save_pending" and request.pending is not None:
                self.store.save(request.pending)
                self._base = replace(self._base, pending=request.pending)
            elif request.kind == "clear_pending":
                self.store.clear()
                self._base = replace(self._base, pending=None)
            elif request.kind == "reboot":
                subprocess.Popen(self.config.reboot_command)  # board.toml names it
        except RaucTimeout:
            if request.kind == "mark":  # a mark must not be lost: again once RAUC answers
                self._requests.put(request)
            raise
        except (RaucError, OSError) as exc:
            log.error("%s failed: %s", request.kind, exc)
            self._failed_calls += 1
            self._call_error = f"{request.kind}: {exc}"[:200]

    def _refresh(self, client: RaucClient, slots: bool) -> RaucView:
        view = client.view(self._view if self._view.reachable else None, slots)
        self._view = replace(view, running_version=self._base.running_version,
                             pending=self._base.pending, completed=self._completed,
                             last_result=self._last_result, failed_calls=self._failed_calls,
                             call_error=self._call_error)
        self._changed.set()
        return view

    def _publish(self, reachable: bool, error: str) -> None:
        # The slots stay as last read: RAUC busy in a bootloader call (it answers nothing
        # meanwhile) has not changed which slot runs.
        last = self._view
        self._view = replace(self._base, reachable=reachable, call_error=error[:200],
                             completed=self._completed, last_result=self._last_result,
                             booted=last.booted, primary=last.primary, versions=last.versions)
        self._changed.set()
