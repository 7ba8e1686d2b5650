"""The Camera tab's guided calibration in real Chromium: the real game panel (core, web
server, runtime) whose [game_panel] names the simulator's rendered camera (`camera_source =
"sim"`, the six markers drawn) and a marker layout in which marker 4 was measured 2 cm
wrong. Look shows the frame and the markers found; Calibrate refuses naming marker 4, draws
its residual over the field and saves nothing. Waits have deadlines."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from foosball.panels.game_page import GamePanelSettings, open_game_panel
from foosball.vision.calibration import Marker
from foosball.wire.catalogue import Agent
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport
from tests.conftest import screenshots_dir
from tests.panels.game_rig import KEY, NEEDS_CHROMIUM, SAFETY, TABLE, panel_page, wait_for

pytest.importorskip("selenium.webdriver", reason="needs selenium (the test extra)")
pytest.importorskip("foosball.sim.vision_source", reason="needs the simulator")
from selenium.webdriver.common.by import By

from foosball.sim.render import CameraConfig
from foosball.sim.vision_source import marker_layout

pytestmark = NEEDS_CHROMIUM

DOCS = screenshots_dir()  # docs/panels only when asked (tests/conftest.py)
MOVED = 4  # the marker measured 2 cm wrong


@contextlib.contextmanager
def calibration_panel(tmp: Path, moved: int | None) -> Iterator[Any]:
    """The game panel on the simulator's camera, its layout with marker `moved` 2 cm off
    in x (None: the layout as drawn), its calibration file holding a good one."""
    layout = marker_layout()
    wrong = dataclasses.replace(layout, markers=tuple(
        Marker(m.marker_id, tuple((x + 0.02, y) for x, y in m.corners))
        if m.marker_id == moved else m for m in layout.markers))
    markers_file = tmp / "markers.json"
    markers_file.write_text(json.dumps(wrong.to_json()))
    output = tmp / "camera.json"
    output.write_text('{"the good one": true}\n')
    runtime = open_game_panel(
        TABLE, GamePanelSettings(port=0, host="127.0.0.1", token_file=str(tmp / "panel.token"),
                                 camera_source="sim", markers_file=str(markers_file),
                                 calibration_file=str(output),
                                 focal_px=CameraConfig().fx),
        Endpoint(MemoryTransport(MemoryHub()), WireCodec(KEY, Agent.GAME_PANEL)), KEY, SAFETY,
        health=None)
    thread = threading.Thread(target=runtime.run, name="game_panel", daemon=True)
    thread.start()
    try:
        yield SimpleNamespace(url=f"http://127.0.0.1:{runtime.hardware.server.port}/",
                              output=output)
    finally:
        runtime.stop()
        thread.join(timeout=5.0)
        runtime.endpoint.close()


@pytest.fixture(scope="module")
def panel(tmp_path_factory) -> Iterator[Any]:
    with calibration_panel(tmp_path_factory.mktemp("game-panel-calibration"), MOVED) as panel:
        yield panel


@pytest.fixture(scope="module")
def page(panel: Any, tmp_path_factory) -> Iterator[Any]:
    with panel_page(panel, tmp_path_factory.mktemp("chromium-profile")) as driver:
        driver.find_element(By.CSS_SELECTOR, '[data-tab="calib-tab"]').click()
        yield driver


def text(page: Any, element_id: str) -> str:
    return page.find_element(By.ID, element_id).text


def test_look_then_calibrate_refuses_the_moved_marker_naming_it(panel, page):
    assert page.find_element(By.ID, "calib-view").is_displayed()
    page.find_element(By.ID, "look").click()
    wait_for(lambda: "found 0, 1, 2, 3, 4, 5" in text(page, "calib-frame-note"), 60,
             "the frame and its markers on the page")
    assert page.execute_script("return document.getElementById('calib-frame').naturalWidth") \
        == 640
    assert "found 6 of the layout's 6 markers" in text(page, "calib-text")
    page.find_element(By.ID, "calibrate").click()
    verdict = wait_for(lambda: (t := text(page, "calib-verdict")).startswith("REFUSED") and t,
                       60, "the verdict on the page")
    assert verdict.startswith(f"REFUSED: marker {MOVED} is ")
    assert "from where the layout says" in verdict and "centre lies again" in verdict
    row = page.find_element(By.CSS_SELECTOR, f'#calib-markers tr[data-marker="{MOVED}"]')
    assert "blamed" in row.get_attribute("class") and "over" in row.get_attribute("class")
    others = page.find_elements(By.CSS_SELECTOR, "#calib-markers tr.over")
    assert [r.get_attribute("data-marker") for r in others] == [str(MOVED)]
    assert page.execute_script("return window.panelCalib.drawn") >= 1
    assert "nothing saved" in text(page, "calib-file")
    assert json.loads(panel.output.read_text()) == {"the good one": True}
    DOCS.mkdir(parents=True, exist_ok=True)
    page.save_screenshot(str(DOCS / "game-panel-camera-calibration-800x480.png"))


def test_a_correct_layout_is_accepted_saved_and_the_old_file_kept(tmp_path):
    with calibration_panel(tmp_path, None) as panel, \
            panel_page(panel, tmp_path / "chromium-profile") as page:
        page.find_element(By.CSS_SELECTOR, '[data-tab="calib-tab"]').click()
        page.find_element(By.ID, "look").click()
        wait_for(lambda: "found 0, 1, 2, 3, 4, 5" in text(page, "calib-frame-note"), 60,
                 "the frame and its markers on the page")
        page.find_element(By.ID, "calibrate").click()
        verdict = wait_for(lambda: (t := text(page, "calib-verdict")).startswith("ACCEPTED")
                           and t, 60, "the verdict on the page")
        assert f"saved to {panel.output}" in verdict and "camera.json.prev" in verdict
        assert page.find_elements(By.CSS_SELECTOR, "#calib-markers tr.over") == []
        assert json.loads((tmp_path / "camera.json.prev").read_text()) == {"the good one": True}
        assert json.loads(panel.output.read_text())["marker_ids"] == [0, 1, 2, 3, 4, 5]
        page.save_screenshot(str(tmp_path / "accepted.png"))
        DOCS.mkdir(parents=True, exist_ok=True)
        page.save_screenshot(str(DOCS / "game-panel-camera-accepted-800x480.png"))
