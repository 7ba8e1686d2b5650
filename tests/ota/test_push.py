"""`foosball ota push` and `foosball ota status` against three simulated boards (processes:
each board's bus, RAUC, agent and update agent; one agent LAN, UDP on loopback)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.ota.conftest import BOOT_S, StatusLog, marked_good, ota_cli
from tests.ota.rauc_env import Keys, Lan, RebootWatcher, SimBoard, make_bundle, needs_rauc

pytestmark = needs_rauc()

ORDER = ("pole", "vision", "strategy")


@pytest.fixture
def three_boards(make_board: Callable[..., SimBoard],
                 statuses: StatusLog) -> Iterator[dict[str, SimBoard]]:
    # A healthy boot takes 2-4 s on a loaded machine: the deadline leaves room for it.
    boards = {name: make_board(name, health_deadline_s=8.0) for name in ORDER}
    watcher = RebootWatcher(list(boards.values()))
    for board in boards.values():
        board.power_on()
    for board in boards.values():  # booted in parallel, then each judged healthy
        statuses.wait(board.name, lambda s: s.state == "idle", BOOT_S)
        marked_good(board, "A")
    yield boards
    watcher.stop()
    assert not watcher.errors


def bundles_for(boards: dict[str, SimBoard], keys: Keys, out: Path,
                broken: str = "") -> list[str]:
    """One bundle per board, named as meta-foosball names them, version 2.0 ("broken": a
    board whose new image's agents never start)."""
    return [str(make_bundle(out / f"foosball-bundle-{name}-sim.raucb", keys, b.compatible,
                            "2.0", agents_start=name != broken)) for name, b in boards.items()]


def test_push_updates_three_boards_with_a_progress_bar_each(
        three_boards: dict[str, SimBoard], dev_keys: Keys, lan: Lan, tmp_path: Path) -> None:
    before = ota_cli(lan, "status", "--wait", "1.5")
    assert before.returncode == 0, before.stderr
    for name in ORDER:
        assert f"{name:<9} rootfs.0   1.0" in before.stdout, before.stdout

    pushed = ota_cli(lan, "push", *bundles_for(three_boards, dev_keys, tmp_path),
                      "--boards", ",".join(ORDER), "--http-host", "127.0.0.1")

    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    lines = pushed.stdout.splitlines()
    for name in ORDER:
        bars = [line for line in lines if line.startswith(f"{name:<9} [")]
        # (a 256 KiB image installs between two statuses: its bar may jump from 0 to 100 %)
        assert any("downloading" in line for line in bars), pushed.stdout
        assert any("installing" in line for line in bars), pushed.stdout
        assert any("[####################] 100% installed" in line for line in bars), \
            pushed.stdout
        assert f"{name:<9} slot rootfs.1, version 2.0: updated" in lines, pushed.stdout
        assert three_boards[name].boots == ["A", "B"]
    after = ota_cli(lan, "status", "--wait", "1.5")
    for name in ORDER:
        assert f"{name:<9} rootfs.1   2.0          rootfs.1   updated" in after.stdout, \
            after.stdout


def test_a_staged_roll_out_stops_at_the_first_failing_board(
        three_boards: dict[str, SimBoard], dev_keys: Keys, lan: Lan, tmp_path: Path) -> None:
    strategy_writes = three_boards["strategy"].bootloader_writes()

    pushed = ota_cli(lan, "push", *bundles_for(three_boards, dev_keys, tmp_path, "vision"),
                      "--boards", ",".join(ORDER), "--staged", "--http-host", "127.0.0.1")

    assert pushed.returncode == 1, pushed.stdout + pushed.stderr
    lines = pushed.stdout.splitlines()
    assert "pole      slot rootfs.1, version 2.0: updated" in lines, pushed.stdout
    assert any(line.startswith("vision    slot rootfs.0, version 1.0: rolled_back: 2.0 on "
                               "rootfs.1 did not become healthy") for line in lines), \
        pushed.stdout
    assert "strategy  slot rootfs.0, version 1.0: not updated (roll-out stopped)" in lines
    assert lines[-1] == "staged roll-out stopped at vision"
    assert three_boards["pole"].boots == ["A", "B"]
    assert three_boards["vision"].boots == ["A", "B", "A"]
    assert three_boards["strategy"].boots == ["A"]
    assert three_boards["strategy"].bootloader_writes() == strategy_writes  # never touched
