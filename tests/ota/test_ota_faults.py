"""OTA faults on a simulated pole board (real `rauc service`, the real update agent, the
real `foosball ota push`; rauc_env.py), each with what the person pushing sees (issue 28):

- RAUC killed mid-install and started again: the push fails saying so, a later push works;
- two pushes to one board at once: the second is refused, the first completes;
- a server that stalls mid-download: the install fails within `download_stall_s`.
"""

from __future__ import annotations

import http.server
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from foosball.ota.push import BundleServer
from foosball.wire.catalogue import OtaCommand
from foosball.wire.endpoint import Endpoint
from tests.ota.conftest import BOOT_S, StatusLog, booted_healthy, ota_cli, ota_cli_started
from tests.ota.rauc_env import (
    Keys,
    Lan,
    RebootWatcher,
    SimBoard,
    StallingSlot,
    make_bundle,
    needs_rauc,
)

pytestmark = needs_rauc()


def push(lan: Lan, bundle: Path, *options: str) -> subprocess.Popen[str]:
    """`foosball ota push BUNDLE --boards pole`, started."""
    return ota_cli_started(lan, "push", str(bundle), "--boards", "pole", "--http-host",
                           "127.0.0.1", *options)


def finished(process: subprocess.Popen[str], title: str,
             timeout_s: float = 120) -> tuple[int, list[str]]:
    """Its exit code and lines, once done; shown (pytest -rP) as what the person saw."""
    out, _ = process.communicate(timeout=timeout_s)
    print(f"--- {title} (exit {process.returncode})\n{out}")
    return process.returncode, out.splitlines()


def show_status_and_log(lan: Lan, board: SimBoard) -> None:
    """What `foosball ota status` says now, and the update agent's log (pytest -rP)."""
    status = ota_cli(lan, "status", "--wait", "1.5")
    print(f"--- foosball ota status (exit {status.returncode})\n{status.stdout}")
    print("--- the update agent's log, last lines\n"
          + "\n".join(board.log("update_agent").splitlines()[-8:]))


@pytest.fixture
def watched(make_board: Callable[..., SimBoard]) -> Iterator[Callable[[SimBoard], SimBoard]]:
    """A board whose reboot requests are carried out (as systemd does)."""
    watchers: list[RebootWatcher] = []

    def watch(board: SimBoard) -> SimBoard:
        watchers.append(RebootWatcher([board]))
        return board

    yield watch
    for watcher in watchers:
        watcher.stop()
        assert not watcher.errors


def test_rauc_restarted_mid_install_fails_the_push_at_once_and_a_later_push_works(
        make_board: Callable[..., SimBoard], watched: Callable[[SimBoard], SimBoard],
        dev_keys: Keys, lan: Lan, statuses: StatusLog, tmp_path: Path) -> None:
    board = watched(make_board("pole"))
    bundle = make_bundle(tmp_path / "foosball-bundle-pole-sim.raucb", dev_keys,
                         board.compatible, "2.0", image_size=1 << 20)
    booted_healthy(board, statuses)
    slot_b = StallingSlot(board.slot_files["B"], after=256 * 1024)  # RAUC held mid-write

    first = push(lan, bundle, "--timeout", "90")
    assert slot_b.stalled.wait(BOOT_S), "RAUC never wrote the slot"
    statuses.wait("pole", lambda s: "Copying image" in s.text, BOOT_S)
    board.restart_rauc()  # a crash, and systemd starting it again
    slot_b.settle()

    code, lines = finished(first, "foosball ota push, RAUC restarted mid-write")
    show_status_and_log(lan, board)
    assert code == 1, lines
    assert lines[-1].startswith("pole      slot rootfs.0, version 1.0: failed: RAUC restarted "
                                "during the install"), lines
    assert board.uboot()["BOOT_ORDER"] == "A"  # B marked bad before its write; A runs on
    since = statuses.mark()
    code, lines = finished(push(lan, bundle, "--timeout", "90"), "the next push")
    assert code == 0, lines
    assert lines[-1] == "pole      slot rootfs.1, version 2.0: updated", lines
    assert "downloading" in statuses.states("pole")[-6:]
    assert statuses.wait("pole", lambda s: s.state == "updated", 5, since).slot == "rootfs.1"


def test_a_second_push_to_a_busy_board_is_refused_and_the_first_completes(
        make_board: Callable[..., SimBoard], watched: Callable[[SimBoard], SimBoard],
        dev_keys: Keys, lan: Lan, statuses: StatusLog, tmp_path: Path) -> None:
    board = watched(make_board("pole"))
    bundle = make_bundle(tmp_path / "foosball-bundle-pole-sim.raucb", dev_keys,
                         board.compatible, "2.0", image_size=1 << 20)
    booted_healthy(board, statuses)

    pushes = [push(lan, bundle, "--timeout", "90") for _ in range(2)]  # at once
    results = sorted(finished(p, f"push {n} of 2") for n, p in enumerate(pushes, 1))
    show_status_and_log(lan, board)

    (ok, ok_lines), (refused, refused_lines) = results
    assert (ok, refused) == (0, 1), results
    assert ok_lines[-1] == "pole      slot rootfs.1, version 2.0: updated", ok_lines
    assert refused_lines[-1].startswith("pole      slot rootfs.0, version 1.0: refused: busy: "),\
        refused_lines
    assert board.boots == ["A", "B"]


class StallingServer:
    """An HTTP server that sends a bundle's headers and its first `after` bytes, then
    nothing more (a laptop gone to sleep, a cable pulled behind a switch)."""

    def __init__(self, bundle: Path, after: int) -> None:
        data = bundle.read_bytes()
        release = self.release = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the standard library's name
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[:after])
                self.wfile.flush()
                release.wait(120)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/pole.raucb"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_download_that_stalls_fails_within_the_stall_time_and_the_next_install_works(
        make_board: Callable[..., SimBoard], dev_keys: Keys, lan: Lan, tool: Endpoint,
        statuses: StatusLog, tmp_path: Path) -> None:
    stall_s = 2.0
    board = make_board("pole", agent_settings={"download_stall_s": stall_s})
    bundle = make_bundle(tmp_path / "pole.raucb", dev_keys, board.compatible, "2.0",
                         image_size=1 << 20)
    stalling, good = StallingServer(bundle, after=64 * 1024), BundleServer({"pole": bundle},
                                                                            "127.0.0.1")
    try:
        booted_healthy(board, statuses)
        tool.send(OtaCommand(board="pole", action="install", url=stalling.url))
        statuses.wait("pole", lambda s: s.state == "downloading" and s.progress > 0, BOOT_S)
        progressed = time.monotonic()
        failed = statuses.wait("pole", lambda s: s.state == "failed", BOOT_S)
        show_status_and_log(lan, board)
        # The stall time, and some for a loaded machine (the status goes out every 0.5 s)
        assert time.monotonic() - progressed < stall_s + 5
        assert failed.text.startswith("download failed: no data for 2 s from the server "
                                      f"(stalled at 65536 of {bundle.stat().st_size} bytes)")
        assert failed.url == stalling.url
        assert not (board.root / "data/ota/bundle.raucb").exists()
        assert board.rauc().properties()["Operation"] == "idle"  # RAUC never saw it

        tool.send(OtaCommand(board="pole", action="install", url=good.url("pole")))
        installed = statuses.wait("pole", lambda s: s.state == "installed", BOOT_S)
        assert (installed.primary, installed.url) == ("rootfs.1", good.url("pole"))
    finally:
        stalling.close()
        good.close()
