""""Learn from the ball" in real Chromium: the page's button, the real game panel, the real
ball tracker learning on its camera's worker thread from rendered frames of a rolling
ball, and its answer on the page (tests/panels/game_rig). Waits have deadlines."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from foosball.agents.ball_tracker import BallTrackerCore, Camera
from foosball.lab.vision.synthetic import LAYOUT, SynthCamera, render
from foosball.runtime import AgentRuntime
from foosball.vision.calibration import calibrate
from foosball.vision.config import DetectorConfig, VisionSettings
from foosball.vision.tracker import BallTracker
from foosball.wire.catalogue import Agent, LearnStage, VisionLearn
from tests.conftest import screenshots_dir
from tests.panels.game_rig import NEEDS_CHROMIUM, SAFETY, TABLE, Rig, panel_page, wait_for
from tests.panels.game_vision import LoopingCamera

pytest.importorskip("selenium.webdriver", reason="needs selenium (the test extra)")
from selenium.webdriver.common.by import By

pytestmark = NEEDS_CHROMIUM

DOCS = screenshots_dir()  # docs/panels only when asked (tests/conftest.py)


class RollingSource(LoopingCamera):
    """The looping frames as a FrameSource, for the real Camera (which runs the jobs)."""

    pixel_format = "bgr"

    def read(self, timeout_s: float) -> Any:
        return self.sense(timeout_s)


@pytest.fixture(scope="module")
def rig(tmp_path_factory) -> Iterator[Rig]:
    """The rig with the real tracker, tuned to blue (it sees no ball until it learns),
    on a ball rolling 40 mm a frame across the field and back."""
    rig = Rig(tmp_path_factory.mktemp("game-panel-learning"))
    camera = SynthCamera()
    calibration = calibrate(render(camera, None), LAYOUT, TABLE.ball.radius,
                            focal_px=camera.focal)
    path = [(-0.3 + 0.04 * i, 0.05 - 0.01 * i) for i in range(16)]
    images = [render(camera, xy, seed=i) for i, xy in enumerate(path + path[::-1])]
    blue = DetectorConfig(hue_low=100, hue_high=120)
    settings = VisionSettings(detector=blue)
    core = BallTrackerCore(BallTracker(blue, settings.filter, calibration, TABLE), settings)
    rig.start_tracker(AgentRuntime(core, rig.endpoint(Agent.BALL_TRACKER), SAFETY,
                                   hardware=Camera(RollingSource(images)), health=None))
    try:
        yield rig
    finally:
        rig.close()


@pytest.fixture(scope="module")
def page(rig: Rig, tmp_path_factory) -> Iterator[Any]:
    with panel_page(rig, tmp_path_factory.mktemp("chromium-profile")) as driver:
        driver.find_element(By.CSS_SELECTOR, '[data-tab="vision-tab"]').click()
        yield driver


def learn_shown(page: Any) -> str:
    return page.find_element(By.ID, "learn-state").text


def test_learn_from_the_ball_sets_the_band_and_the_page_shows_it(rig, page):
    since = time.monotonic()
    page.find_element(By.ID, "learn").click()
    [asked] = wait_for(lambda: [m for m in rig.listener.of(VisionLearn, since)
                                if m.stage is LearnStage.REQUEST], 5, "the request")
    wait_for(lambda: "roll the ball" in learn_shown(page), 5, "asked, on the page")
    [answer] = wait_for(lambda: [m for m in rig.listener.of(VisionLearn, since)
                                 if m.stage is not LearnStage.REQUEST], 60, "the answer")
    assert answer.request == asked.request and answer.stage is LearnStage.LEARNT, answer.text
    assert rig.tracker is not None
    assert rig.tracker.core.detector_cfg.hue_high == answer.hue_high  # the tracker uses it
    wait_for(lambda: learn_shown(page).startswith(f"request {asked.request}: learnt (hue "
                                                  f"{answer.hue_low}-{answer.hue_high}"),
             5, "the band, on the page")
    assert page.find_element(By.ID, "v-hue_high-value").text == str(answer.hue_high)
    page.save_screenshot(str(DOCS / "game-panel-learnt-800x480.png"))

