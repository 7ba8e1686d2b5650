"""Both panels carry a status line while a board's update is under way."""

from __future__ import annotations

from foosball.agents.game_panel import GamePanelCore
from foosball.agents.runtime import Inputs
from foosball.agents.supervisory_panel import SupervisoryCore
from foosball.geometry import default_table
from foosball.panels.supervisory import topics
from foosball.wire.catalogue import OtaStatus

INSTALLING = OtaStatus(board="vision", slot="rootfs.0", state="installing", progress=60.0,
                       text="Copying image to rootfs.1", version="1.0", primary="rootfs.0")
LINE = "vision: update installing 60%: Copying image to rootfs.1"


def test_the_game_panel_shows_an_update_in_progress() -> None:
    core = GamePanelCore(default_table())
    assert core.step(Inputs(0.0)).actuation["updates"] == {"lines": []}
    assert core.step(Inputs(0.1, (INSTALLING,))).actuation["updates"] == {"lines": [LINE]}


def test_the_supervisory_panel_shows_an_update_in_progress() -> None:
    core = SupervisoryCore(default_table())
    assert topics(core.step(Inputs(0.0)).actuation)["updates"] == {"lines": []}
    assert topics(core.step(Inputs(0.1, (INSTALLING,))).actuation)["updates"] == {
        "lines": [LINE]}
