"""`foosball ota push`'s bookkeeping without a LAN: which bundle for which board, what to
send when, and when a board's update is over."""

from __future__ import annotations

from pathlib import Path

import pytest

from foosball.ota.progress import UpdatesSeen
from foosball.ota.push import BoardRollout, PushError, Rollout, assign_bundles, progress_line
from foosball.wire.catalogue import OtaStatus


def status(board: str, state: str, slot: str = "rootfs.0", primary: str = "rootfs.0",
           progress: float = 0.0, text: str = "", url: str = "") -> OtaStatus:
    """A board's status about the install this roll-out sent it (or `url`'s)."""
    return OtaStatus(board=board, slot=slot, state=state, progress=progress, text=text,
                     version="1.0", primary=primary, url=url or f"http://h/{board}")


def test_bundles_go_to_the_board_in_their_name_or_the_one_named(tmp_path: Path) -> None:
    pole = tmp_path / "foosball-bundle-pole-stm32mp15-rt.raucb"
    other = tmp_path / "release.raucb"
    for path in (pole, other):
        path.write_bytes(b"x")
    assert assign_bundles([str(pole), f"vision={other}"], ["pole", "vision"]) == {
        "pole": pole, "vision": other}
    with pytest.raises(PushError, match="cannot tell which board"):
        assign_bundles([str(other)], ["pole"])
    with pytest.raises(PushError, match="no bundle for vision"):
        assign_bundles([str(pole)], ["pole", "vision"])
    with pytest.raises(PushError, match="no such file"):
        assign_bundles(["pole=/nonexistent.raucb"], ["pole"])


def rollout(staged: bool) -> Rollout:
    return Rollout([BoardRollout(b, f"http://h/{b}") for b in ("pole", "vision")], staged,
                   timeout_s=100.0)


def test_staged_one_board_at_a_time_until_the_first_failure() -> None:
    out = rollout(staged=True)
    assert out.due(0.0) == []  # no board heard yet
    out.observe(status("pole", "idle"), 0.0)
    out.observe(status("vision", "idle"), 0.0)
    assert [c.board for c in out.due(0.1)] == ["pole"]
    assert out.due(0.5) == []  # not yet again
    assert [c.board for c in out.due(1.2)] == ["pole"]  # not taken yet: again
    for state in ("installing", "installed", "rebooting"):
        out.observe(status("pole", state, primary="rootfs.1"), 2.0)
    assert out.due(3.0) == []
    out.observe(status("pole", "updated", slot="rootfs.1", primary="rootfs.1"), 9.0)
    assert [c.board for c in out.due(9.1)] == ["vision"]
    out.observe(status("vision", "installing"), 9.5)
    out.observe(status("vision", "failed", text="signature"), 10.0)
    assert out.over and [b.outcome for b in out.boards] == ["updated", "failed"]


def test_an_outcome_from_before_the_command_is_not_this_roll_out_s() -> None:
    out = rollout(staged=False)
    out.observe(status("pole", "updated"), 0.0)
    out.observe(status("vision", "failed"), 0.0)
    assert {c.board for c in out.due(0.1)} == {"pole", "vision"}
    out.observe(status("pole", "updated"), 0.2)  # still the old outcome
    assert not out.boards[0].done
    out.observe(status("vision", "refused", text="a game is running (PLAYING)"), 0.2)
    assert out.boards[1].outcome == "refused"


def test_another_tool_s_push_to_the_same_board_is_not_this_roll_out_s() -> None:
    first, second = rollout(staged=False), rollout(staged=False)
    for board in second.boards:
        board.url += "/second"
    other = "http://h/pole"
    for out in (first, second):
        out.observe(status("pole", "idle"), 0.0)
        out.observe(status("vision", "idle"), 0.0)
    assert {c.board for c in first.due(0.1)} == {"pole", "vision"}
    first.observe(status("pole", "downloading", progress=5.0), 0.3)  # the first took it
    # The second, started now, sends to a board busy with another install: it is refused,
    # and only the second takes that refusal for its own.
    second.observe(status("pole", "downloading", progress=5.0, url=other), 0.3)
    assert "pole" in {c.board for c in second.due(0.4)}
    refusal = status("pole", "refused", text="busy: downloading (...)", url=second.boards[0].url)
    for out in (first, second):
        out.observe(refusal, 0.5)
    assert second.boards[0].outcome == "refused"
    assert not first.boards[0].done and first.boards[0].acknowledged
    assert second.shown(refusal) and not first.shown(refusal)
    first.observe(status("pole", "updated", slot="rootfs.1", primary="rootfs.1"), 9.0)
    assert first.boards[0].outcome == "updated"


def test_a_board_back_on_its_old_slot_has_rolled_back_even_if_the_notice_was_missed() -> None:
    out = rollout(staged=False)
    out.observe(status("pole", "idle"), 0.0)
    out.due(0.0)
    out.observe(status("pole", "installed", primary="rootfs.1"), 1.0)
    out.observe(status("pole", "idle", slot="rootfs.0"), 20.0)
    assert out.boards[0].outcome == "rolled_back"


def test_a_board_that_never_finishes_times_out() -> None:
    out = rollout(staged=True)
    out.observe(status("pole", "idle"), 0.0)
    out.due(0.0)
    out.due(101.0)
    assert out.boards[0].outcome == "timeout" and out.over


def test_the_progress_bar() -> None:
    line = progress_line("pole", status("pole", "installing", progress=50.0, text="Copying"))
    assert line == "pole      [##########----------]  50% installing: Copying"


def test_the_panels_line_follows_an_update_through_the_reboot_to_its_outcome() -> None:
    seen = UpdatesSeen(outcome_s=30.0)
    seen.observe(status("pole", "checking", text="waiting for pole_driver up 2 s"), 0.0)
    assert seen.lines(0.0) == []  # a boot's own check is no update
    seen.observe(status("pole", "installing", progress=40.0, text="Copying image"), 1.0)
    assert seen.lines(1.0) == ["pole: update installing 40%: Copying image"]
    seen.observe(status("pole", "rebooting", text="rebooting into rootfs.1"), 2.0)
    assert seen.lines(60.0) == ["pole: update rebooting: rebooting into rootfs.1"]  # silent
    seen.observe(status("pole", "checking", text="waiting for pole_driver up 2 s"), 61.0)
    assert seen.lines(61.0) == ["pole: update checking: waiting for pole_driver up 2 s"]
    seen.observe(status("pole", "updated", text="2.0 on rootfs.1"), 62.0)
    assert seen.lines(62.0) == ["pole: update updated: 2.0 on rootfs.1"]
    assert seen.lines(93.0) == []
