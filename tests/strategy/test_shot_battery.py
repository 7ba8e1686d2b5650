"""The shot battery: goals per episode beside the save rate, and the angled shot after a pin
(one short episode through the real runner)."""

from __future__ import annotations

from foosball.lab.shots import run_battery


def test_an_angled_shot_after_a_pin_is_struck_and_goals_are_counted_per_episode() -> None:
    report = run_battery("hold", [10.0], 1, 1, 501, show_progress=False, kinds=("pin",))
    (episode,) = report["episodes"]
    assert episode["kind"] == "pin" and episode["shot"]
    assert 7.0 < episode["measured_speed"] < 12.0
    total = report["total"]
    assert total["goals_per_episode"] == episode["goals_against"]
    assert sum(total["goals_against_by_kind"].values()) == episode["goals_against"]
