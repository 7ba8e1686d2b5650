"""`foosball replay` in real Chromium: the game panel's page with its replay bar, driven
by a person's clicks (pause, seek, speed). Waits have deadlines; nothing sleeps to let
something happen."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from foosball.analysis.replay import Replay, ReplayPage
from foosball.recording.format import read_recording
from foosball.sim.match import Match
from foosball.sim.record import record_match
from tests.conftest import screenshots_dir
from tests.panels.game_rig import CHROMEDRIVER, CHROMIUM, open_chromium, wait_for

pytest.importorskip("selenium.webdriver", reason="needs selenium (the test extra)")
from selenium.webdriver.common.by import By

pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="needs Debian's chromium and chromium-driver "
                                       "(tools/run-tests installs them as root)")

DOCS = screenshots_dir()  # docs/panels only when asked (tests/conftest.py)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ReplayPage, Any]]:
    stream = io.BytesIO()
    match = Match("improved", "club", seed=4, duration=20.0)
    record_match(match, stream, every=4)
    result = match.run()
    page = ReplayPage(Replay(read_recording("sim.cbors", stream.getvalue())),
                      host="127.0.0.1", port=0, token="replay-token")
    stop = threading.Event()
    thread = threading.Thread(target=lambda: [page.turn() for _ in iter(stop.is_set, True)],
                              daemon=True)
    thread.start()
    driver = open_chromium(user_data_dir=tmp_path_factory.mktemp("chromium-replay"))
    try:
        driver.get(page.url)
        yield page, driver, result
    finally:
        driver.quit()
        stop.set()
        thread.join(5.0)
        page.close()


def shown(driver: Any, element: str) -> str:
    return str(driver.find_element(By.ID, element).text)


def test_the_replay_bar_pauses_seeks_and_shows_the_score_then(served: Any) -> None:
    page, driver, result = served
    wait_for(lambda: driver.find_element(By.ID, "replay").is_displayed(), 10,
             "the replay bar")
    assert shown(driver, "replay-file").startswith("simulator: sim.cbors")
    assert not driver.find_element(By.ID, "start").is_enabled()  # nothing to control
    driver.find_element(By.ID, "replay-toggle").click()
    wait_for(lambda: page.replay.clock.paused, 5, "the pause")
    wait_for(lambda: shown(driver, "replay-toggle") == "Play", 5, "the Play button")
    end = page.replay.clock.duration_s
    driver.execute_script("const s = document.getElementById('replay-seek');"
                          "s.value = arguments[0]; s.dispatchEvent(new Event('change'));", end)
    wait_for(lambda: len(set(shown(driver, "replay-time").split(" / "))) == 1, 5,
             "the seek to the end")  # "00:20.0 / 00:20.0"
    score = f"{result.goals_robot}:{result.goals_human}"
    wait_for(lambda: f"{shown(driver, 'score-robot')}:{shown(driver, 'score-human')}"
             == score, 5, f"the final score {score}")
    driver.execute_script("const s = document.getElementById('replay-speed');"
                          "s.value = '4'; s.dispatchEvent(new Event('change'));")
    wait_for(lambda: page.replay.clock.speed == 4.0, 5, "the speed")
    driver.execute_script("const s = document.getElementById('replay-seek');"
                          "s.value = 5; s.dispatchEvent(new Event('change'));")
    wait_for(lambda: shown(driver, "replay-time").startswith("00:05.0"), 5, "the seek back")
    wait_for(lambda: driver.execute_script("return window.panelStats.drawn") > 0, 5,
             "the ball drawn")
    DOCS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(DOCS / "replay-800x480.png"))
