"""Both panels carry a status line while a board's update is under way."""

from __future__ import annotations

from typing import Any

import pytest

from foosball.agents.game_panel import GamePanelCore
from foosball.agents.supervisory_panel import SupervisoryCore
from foosball.geometry import default_table
from foosball.panels.supervisory import topics
from foosball.runtime import Inputs
from foosball.wire.catalogue import Agent, OtaStatus
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryTransport

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


# -- the supervisory page in Chromium, as the pole board's display shows it -----------------

webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium")
from selenium.webdriver.common.by import By  # noqa: E402

from tests.panels.test_supervisory_browser import (  # noqa: E402
    CHROMEDRIVER,
    CHROMIUM,
    DOCS,
    KEY,
    MAX_AGE_S,
    board_display,
    browser,
    serve_panel,
    wait_for,
)

__all__ = ["board_display", "browser"]  # fixtures, used by name


@pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                    reason="needs Debian's chromium and chromium-driver")
def test_the_supervisory_page_shows_the_update_line(browser: Any) -> None:
    with serve_panel() as (url, mda):
        # An update agent on the panel's segment (serve_panel hands out its stand-in only).
        hub = mda.endpoint.transport._hub  # type: ignore[attr-defined]
        update_agent = Endpoint(MemoryTransport(hub), WireCodec(KEY, Agent.OTA,
                                                                max_age_s=MAX_AGE_S))
        try:
            browser.get(url)
            line = browser.find_element(By.ID, "updates")
            assert not line.is_displayed()
            update_agent.send(INSTALLING)
            wait_for(browser, "the update line", lambda d: line.is_displayed()
                     and line.text == LINE)
            DOCS.mkdir(parents=True, exist_ok=True)
            browser.save_screenshot(str(DOCS / "supervisory-update-800x480.png"))
        finally:
            update_agent.close()
