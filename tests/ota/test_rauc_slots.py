"""The update agent and a real `rauc service` on a private system bus, with file slots and
the simulated U-Boot boot counter as RAUC's custom bootloader backend (rauc_env.py).

Each test is one simulated pole board: its update agent takes the OtaCommand from a laptop
on the agent LAN (UDP on loopback), RAUC installs from the laptop's HTTP server, and the
board's reboots are carried out as the real board's systemd and U-Boot would.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from foosball.ota.push import BundleServer
from foosball.wire.catalogue import OtaCommand
from foosball.wire.endpoint import Endpoint
from tests.ota.conftest import BOOT_S, StatusLog, booted_healthy, marked_good
from tests.ota.rauc_env import (
    Keys,
    RebootWatcher,
    SimBoard,
    StallingSlot,
    dm_verity_skip_reason,
    make_bundle,
    needs_rauc,
    run,
    tampered_copy,
    wait_for,
)

pytestmark = needs_rauc()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def serve() -> Iterator[Callable[[Path], str]]:
    """The laptop's HTTP server: a bundle in, its URL out."""
    servers: list[BundleServer] = []

    def url(bundle: Path) -> str:
        servers.append(BundleServer({"pole": bundle}, "127.0.0.1"))
        return servers[-1].url("pole")

    yield url
    for server in servers:
        server.close()


@pytest.fixture
def reboots(make_board: Callable[..., SimBoard]) -> Iterator[Callable[[SimBoard], None]]:
    watchers: list[RebootWatcher] = []

    def watch(board: SimBoard) -> None:
        watchers.append(RebootWatcher([board]))

    yield watch
    for watcher in watchers:
        watcher.stop()
        assert not watcher.errors


def install(tool: Endpoint, board: SimBoard, url: str) -> None:
    tool.send(OtaCommand(board=board.name, action="install", url=url))


def test_a_signed_bundle_goes_to_the_inactive_slot_only_and_is_marked_good_after_reboot(
        make_board: Callable[..., SimBoard], dev_keys: Keys, tool: Endpoint,
        statuses: StatusLog, serve: Callable[[Path], str],
        reboots: Callable[[SimBoard], None], tmp_path: Path) -> None:
    board = make_board("pole")
    bundle = make_bundle(tmp_path / "pole-2.0.raucb", dev_keys, board.compatible, "2.0")
    slot_a = sha256(board.slot_files["A"])
    reboots(board)
    booted_healthy(board, statuses)
    assert board.bootloader_writes() == ["set-state A good"]  # the first boot, judged

    install(tool, board, serve(bundle))
    installed = statuses.wait("pole", lambda s: s.state == "installed", BOOT_S)
    assert (installed.slot, installed.primary) == ("rootfs.0", "rootfs.1")
    updated = statuses.wait("pole", lambda s: s.state == "updated", BOOT_S)

    assert (updated.slot, updated.version, updated.primary) == ("rootfs.1", "2.0", "rootfs.1")
    assert board.boots == ["A", "B"]
    assert sha256(board.slot_files["A"]) == slot_a  # the running slot untouched
    assert sha256(board.slot_files["B"]) == sha256(bundle.with_suffix(".img"))
    marked_good(board, "B")
    assert board.uboot()["BOOT_B_LEFT"] == "3"
    assert board.bootloader_writes() == ["set-state A good", "set-state B bad",
                                         "set-primary B", "set-state B good"]
    assert board.uboot()["BOOT_ORDER"] == "B A"
    assert statuses.states("pole")[-5:] == ["installing", "installed", "rebooting",
                                            "checking", "updated"]


def untrusted(keys: Keys, stranger: Keys, board: SimBoard, out: Path) -> Path:
    return make_bundle(out, stranger, board.compatible, "2.0")


def tampered(keys: Keys, stranger: Keys, board: SimBoard, out: Path) -> Path:
    return tampered_copy(make_bundle(out.with_suffix(".orig"), keys, board.compatible, "2.0"),
                         out)


def wrong_compatible(keys: Keys, stranger: Keys, board: SimBoard, out: Path) -> Path:
    return make_bundle(out, keys, "foosball-sim-vision", "2.0")


def test_bundles_rauc_must_not_trust_are_refused_with_no_slot_switch(
        make_board: Callable[..., SimBoard], dev_keys: Keys, stranger_keys: Keys,
        tool: Endpoint, statuses: StatusLog, serve: Callable[[Path], str],
        tmp_path: Path) -> None:
    board = make_board("pole")
    slots = {b: sha256(f) for b, f in board.slot_files.items()}
    booted_healthy(board, statuses)  # one boot for the three: a refusal changes nothing
    env = board.uboot()
    for make, rauc_says in ((untrusted, "signature"), (tampered, "signature"),
                            (wrong_compatible, "compatible")):
        bundle = make(dev_keys, stranger_keys, board, tmp_path / f"{make.__name__}.raucb")
        since = statuses.mark()
        install(tool, board, serve(bundle))
        failed = statuses.wait("pole", lambda s: s.state == "failed", BOOT_S, since)

        assert rauc_says in failed.text.lower(), (make.__name__, failed.text)
        assert (failed.slot, failed.primary) == ("rootfs.0", "rootfs.0")
        assert board.bootloader_writes() == ["set-state A good"]  # nothing since the boot
        assert board.uboot() == env
        assert {b: sha256(f) for b, f in board.slot_files.items()} == slots
        assert board.rauc().primary() == "rootfs.0"


def test_a_new_slot_whose_agents_never_become_healthy_is_marked_bad_and_rolled_back(
        make_board: Callable[..., SimBoard], dev_keys: Keys, tool: Endpoint,
        statuses: StatusLog, serve: Callable[[Path], str],
        reboots: Callable[[SimBoard], None], tmp_path: Path) -> None:
    board = make_board("pole", health_deadline_s=5.0)
    bundle = make_bundle(tmp_path / "broken.raucb", dev_keys, board.compatible, "2.0-broken",
                         agents_start=False)
    reboots(board)
    booted_healthy(board, statuses)

    install(tool, board, serve(bundle))
    rolling = statuses.wait("pole", lambda s: s.state == "rolling_back", BOOT_S + 10)
    assert rolling.slot == "rootfs.1" and "pole_driver never heard" in rolling.text
    back = statuses.wait("pole", lambda s: s.state == "rolled_back", BOOT_S)

    assert (back.slot, back.version, back.primary) == ("rootfs.0", "1.0", "rootfs.0")
    assert "2.0-broken" in back.text
    assert board.boots == ["A", "B", "A"]
    assert "set-state B bad" in board.bootloader_writes()[-3:]
    assert board.uboot()["BOOT_ORDER"] == "A"
    assert "not_a_key_of_this_release" in board.log("pole_driver")  # why it never came up


def test_a_new_slot_that_never_boots_falls_back_after_its_boot_attempts(
        make_board: Callable[..., SimBoard], dev_keys: Keys, tool: Endpoint,
        statuses: StatusLog, serve: Callable[[Path], str], tmp_path: Path) -> None:
    board = make_board("pole")
    bundle = make_bundle(tmp_path / "hangs.raucb", dev_keys, board.compatible, "2.0-hangs",
                         boots=False)
    booted_healthy(board, statuses)
    install(tool, board, serve(bundle))
    wait_for("the reboot request", board.reboot_requested, BOOT_S)

    # B hangs before userspace every time: nothing marks it good or bad, and the board's
    # watchdog resets it, until U-Boot has spent B's attempts.
    while board.reboot() == "B":
        assert len(board.boots) < 10
    back = statuses.wait("pole", lambda s: s.state == "rolled_back", BOOT_S)

    assert board.boots == ["A", "B", "B", "B", "A"]
    assert (back.slot, back.version) == ("rootfs.0", "1.0")
    assert "2.0-hangs" in back.text


def test_an_install_killed_mid_write_leaves_the_old_slot_primary_and_bootable(
        make_board: Callable[..., SimBoard], dev_keys: Keys, tool: Endpoint,
        statuses: StatusLog, serve: Callable[[Path], str], tmp_path: Path) -> None:
    board = make_board("pole")
    bundle = make_bundle(tmp_path / "big.raucb", dev_keys, board.compatible, "2.0",
                         image_size=1 << 20)
    slot_a = sha256(board.slot_files["A"])
    booted_healthy(board, statuses)
    slot_b = StallingSlot(board.slot_files["B"], after=256 * 1024)

    install(tool, board, serve(bundle))
    assert slot_b.stalled.wait(BOOT_S), "RAUC never wrote the slot"
    statuses.wait("pole", lambda s: "Copying image" in s.text, BOOT_S)
    board.power_off()  # the power is cut in the middle of the image
    slot_b.settle()

    assert board.bootloader_writes()[-1] == "set-state B bad"  # before it wrote a byte
    since = statuses.mark()
    assert board.power_on() == "A"
    again = statuses.wait("pole", lambda s: s.state == "idle", BOOT_S, since)
    assert (again.slot, again.version, again.primary) == ("rootfs.0", "1.0", "rootfs.0")
    assert sha256(board.slot_files["A"]) == slot_a
    assert board.slot_files["B"].read_bytes()[:1024] != slot_b.old[:1024]  # half-written


@pytest.mark.skipif(dm_verity_skip_reason() is not None, reason=dm_verity_skip_reason() or "")
def test_a_verity_bundle_goes_through_dm_verity_and_a_tampered_one_is_refused_there(
        make_board: Callable[..., SimBoard], dev_keys: Keys, tool: Endpoint,
        statuses: StatusLog, serve: Callable[[Path], str], tmp_path: Path) -> None:
    """The boards accept only verity bundles: RAUC reads the payload through dm-verity,
    which is also what catches a changed payload (`rauc info` checks only the manifest)."""
    board = make_board("pole")
    bundle = make_bundle(tmp_path / "pole-verity.raucb", dev_keys, board.compatible, "2.0",
                         bundle_format="verity")
    booted_healthy(board, statuses)
    writes = board.bootloader_writes()

    install(tool, board, serve(tampered_copy(bundle, tmp_path / "tampered-verity.raucb")))
    failed = statuses.wait("pole", lambda s: s.state == "failed", BOOT_S)
    assert (failed.slot, failed.primary) == ("rootfs.0", "rootfs.0"), failed.text
    assert "set-primary B" not in board.bootloader_writes()[len(writes):]

    since = statuses.mark()
    install(tool, board, serve(bundle))
    installed = statuses.wait("pole", lambda s: s.state == "installed", BOOT_S, since)
    assert (installed.slot, installed.primary) == ("rootfs.0", "rootfs.1")
    assert sha256(board.slot_files["B"]) == sha256(bundle.with_suffix(".img"))


def test_a_verity_bundle_builds_and_rauc_checks_its_signature(dev_keys: Keys,
                                                               tmp_path: Path) -> None:
    """What runs here even without device-mapper: the bundle the test above installs is a
    signed verity bundle (rauc info verifies the manifest's signature against the CA)."""
    bundle = make_bundle(tmp_path / "pole-verity.raucb", dev_keys, "foosball-sim-pole", "2.0",
                         bundle_format="verity")
    conf = tmp_path / "system.conf"  # the boards' keyring rule: a code-signing leaf
    conf.write_text("[system]\ncompatible=foosball-sim-pole\nbootloader=noop\n\n"
                    f"[keyring]\npath={dev_keys.ca_cert}\ncheck-purpose=codesign\n")
    info = run("rauc", "--conf", conf, "info", bundle)  # raises when the signature fails
    assert "Bundle Format: \tverity" in info, info
    with pytest.raises(RuntimeError, match="signature verification failed"):
        run("rauc", "--conf", conf, "info", tampered_copy(bundle, tmp_path / "t.raucb",
                                                          at=len(bundle.read_bytes()) - 64))
