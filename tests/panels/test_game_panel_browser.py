"""The game panel in real Chromium (Selenium + chromium-driver) against the real panel
agent, web server and strategy agent on one in-process wire segment (tests/panels/game_rig).
Waits have deadlines; nothing sleeps for a fixed time to let something happen.

Screenshots at the board display's 800x480 go to docs/panels/."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import pytest

from foosball.wire.catalogue import (
    BallStatus,
    GameCommand,
    GameState,
    RodCommand,
    SafetyState,
    VisionConfig,
)
from tests.conftest import screenshots_dir
from tests.panels.game_rig import (
    CALIBRATION,
    CHROMEDRIVER,
    CHROMIUM,
    TABLE,
    TOKEN,
    Rig,
    panel_page,
    wait_for,
)

pytest.importorskip("selenium.webdriver", reason="needs selenium (the test extra)")
from selenium.webdriver.common.by import By

pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="needs Debian's chromium and chromium-driver "
                                       "(tools/run-tests installs them as root)")

DOCS = screenshots_dir()  # docs/panels only when asked (tests/conftest.py)
HALF_L = TABLE.field.half_length


@pytest.fixture(scope="module")
def rig(tmp_path_factory) -> Iterator[Rig]:
    rig = Rig(tmp_path_factory.mktemp("game-panel"))
    try:
        yield rig
    finally:
        rig.close()


@pytest.fixture(scope="module")
def browser(rig: Rig, tmp_path_factory) -> Iterator[Any]:
    with panel_page(rig, tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


@pytest.fixture
def page(rig: Rig, browser: Any) -> Any:
    """Every test starts with no match running, a circling ball and the Game tab shown."""
    rig.alarm_on = False
    rig.halted = None
    rig.control(GameCommand.STOP)

    def ready() -> bool:
        # A fault left by a test that failed half way (or a stall of this loaded machine)
        # is restarted once its causes are gone, as an operator would.
        if rig.panel.latch.faulted and not rig.panel.view.causes:
            rig.control(GameCommand.RESTART)
        return state_shown(browser) == "READY"

    wait_for(ready, 10, "READY")
    rig.ball.circling = True
    browser.find_element(By.CSS_SELECTOR, '[data-tab="game-tab"]').click()
    return browser


def state_shown(driver: Any) -> str:
    return driver.find_element(By.ID, "state").text


def game_states(rig: Rig, since: float) -> list[SafetyState]:
    return [m.state for m in rig.listener.of(GameState, since)]


def severe(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_page_loads_to_scale_with_no_console_errors(rig, page):
    assert page.execute_script("return [innerWidth, innerHeight]") == [800, 480]
    wait_for(lambda: page.execute_script("return window.panelStats.drawn > 5"), 5, "drawing")
    assert severe(page) == []
    assert page.title == "Foosball - game panel"
    # No horizontal or vertical scrolling on the board's display.
    assert page.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    ) == [800, 480]


def ball_px(driver: Any) -> dict[str, float]:
    return driver.execute_script("return window.panelStats.ballPx")


def pixel(driver: Any, x: float, y: float) -> list[int]:
    return driver.execute_script(
        "const c = document.getElementById('field').getContext('2d');"
        "return Array.from(c.getImageData(arguments[0], arguments[1], 1, 1).data);", x, y)


def test_the_ball_moves_on_the_field_as_ball_states_arrive(rig, page):
    rig.ball.circling = False

    def drawn_at(x: float, y: float) -> dict[str, float]:
        rig.ball.play([(x, y, BallStatus.DETECTED)] * 40)
        return wait_for(lambda: page.execute_script(
            "const s = window.panelStats, b = s.lastBall;"
            "return b && b.x === arguments[0] && b.y === arguments[1] && s.ballPx;", x, y),
            5, f"the ball drawn at ({x}, {y})")

    first = drawn_at(-0.3, 0.1)
    second = drawn_at(0.3, -0.1)
    # x towards the human's goal is to the right, y up; 0.6 m apart in x, 0.2 m in y.
    dx, dy = second["x"] - first["x"], second["y"] - first["y"]
    assert dx > 0 and dy > 0 and dy / dx == pytest.approx(0.2 / 0.6, rel=0.05)
    assert pixel(page, second["x"], second["y"])[:3] == [255, 152, 0]  # orange is drawn


def clicked(driver: Any, button: str) -> None:
    wait_for(lambda: driver.find_element(By.ID, button).is_enabled(), 5, f"{button} enabled")
    driver.find_element(By.ID, button).click()


def moving(command: RodCommand) -> bool:
    return any(t.translation_speed > 0 or t.rotation_speed > 0 for t in command.rods)


def test_start_and_pause_move_the_game_and_the_strategy_follows(rig, page):
    since = ready = time.monotonic()
    wait_for(lambda: rig.listener.of(RodCommand, ready), 5, "hold commands in READY")
    assert not any(moving(c) for c in rig.listener.of(RodCommand, ready))  # READY: holds

    clicked(page, "start")
    wait_for(lambda: SafetyState.PLAYING in game_states(rig, since), 5, "PLAYING on the wire")
    started = time.monotonic()
    wait_for(lambda: any(moving(c) for c in rig.listener.of(RodCommand, started)), 5,
             "the strategy playing")
    wait_for(lambda: state_shown(page) == "PLAYING", 5)

    clicked(page, "pause")
    wait_for(lambda: SafetyState.PAUSED in game_states(rig, started), 5, "PAUSED on the wire")
    paused = time.monotonic() + 0.1  # what was in flight has landed
    wait_for(lambda: time.monotonic() > paused + 0.3 and rig.listener.of(RodCommand, paused),
             5, "commands after the pause")
    assert not any(moving(c) for c in rig.listener.of(RodCommand, paused))  # holding again
    assert state_shown(page) == "PAUSED"
    log = page.find_element(By.ID, "log").text
    assert "127.0.0.1 pause: sent" in log and "127.0.0.1 start: sent" in log


def reload(page: Any) -> None:
    page.refresh()
    wait_for(lambda: page.execute_script("return window.panelStats.connected"), 10,
             "the page's WebSocket")
    wait_for(lambda: state_shown(page) == "READY", 5, "READY")


def test_without_the_token_the_controls_are_drawn_disabled_and_refused(rig, page):
    page.execute_script("localStorage.removeItem('panelToken')")
    try:
        reload(page)
        start = page.find_element(By.ID, "start")
        assert not start.is_enabled() and "no panel token" in start.get_attribute("title")
        assert page.find_element(By.ID, "view-only").is_displayed()
        assert not page.find_element(By.ID, "score-robot-up").is_enabled()
        since = time.monotonic()
        page.execute_script("send('start')")  # what a page of its own could send
        wait_for(lambda: "refused" in page.find_element(By.ID, "notice").text, 5,
                 "the refusal shown")
        assert "missing or wrong panel token" in page.find_element(By.ID, "notice").text
        replies = page.execute_script("return window.panelStats.replies")
        assert replies[-1]["accepted"] is False
        assert rig.panel.hardware.server.counters.refused["token"] >= 1
        assert SafetyState.PLAYING not in game_states(rig, since)
        assert state_shown(page) == "READY"
    finally:
        page.execute_script("localStorage.setItem('panelToken', arguments[0])", TOKEN)
        reload(page)
    assert page.find_element(By.ID, "start").is_enabled()
    assert not page.find_element(By.ID, "view-only").is_displayed()


def test_a_goal_updates_the_score(rig, page):
    clicked(page, "start")
    wait_for(lambda: state_shown(page) == "PLAYING", 5)
    rig.ball.circling = False
    shot = [(0.45 + 0.01 * i, 0.02, BallStatus.DETECTED) for i in range(15)]
    shot += [(HALF_L + 0.01, 0.02, BallStatus.PREDICTED)] * 3
    shot += [(0.0, 0.0, BallStatus.LOST)] * 60  # 0.3 s at 200 Hz: the goal stands
    rig.ball.play(shot)
    wait_for(lambda: page.find_element(By.ID, "score-robot").text == "1", 5, "robot 1")
    assert page.find_element(By.ID, "score-human").text == "0"
    assert [m.score_robot for m in rig.listener.of(GameState)][-1] == 1
    rig.ball.play([(0.0, 0.0, BallStatus.DETECTED)] * 5
                  + [(-HALF_L - 0.01, -0.03, BallStatus.DETECTED)] * 3
                  + [(0.0, 0.0, BallStatus.LOST)] * 60)
    wait_for(lambda: page.find_element(By.ID, "score-human").text == "1", 5, "human 1")
    rig.ball.circling = True
    wait_for(lambda: len(page.execute_script("return window.panelStats.lastBall.trail")) > 50,
             5, "a trail")
    DOCS.mkdir(parents=True, exist_ok=True)
    page.save_screenshot(str(DOCS / "game-panel-800x480.png"))


def test_the_operator_corrects_the_score_on_the_page(rig, page):
    clicked(page, "start")  # the goal test's match goes on (1:1), or a new one
    wait_for(lambda: state_shown(page) == "PLAYING", 5)
    robot = int(page.find_element(By.ID, "score-robot").text)
    clicked(page, "score-robot-up")
    wait_for(lambda: page.find_element(By.ID, "score-robot").text == str(robot + 1), 5,
             "the corrected score")
    assert [m.score_robot for m in rig.listener.of(GameState)][-1] == robot + 1
    assert "127.0.0.1 score robot +1: sent" in page.find_element(By.ID, "log").text
    clicked(page, "score-robot-down")
    wait_for(lambda: page.find_element(By.ID, "score-robot").text == str(robot), 5,
             "the score put back")


def test_an_uncertain_goal_is_asked_on_the_page_and_counted_in_one_press(rig, page):
    clicked(page, "start")
    wait_for(lambda: state_shown(page) == "PLAYING", 5)
    robot = int(page.find_element(By.ID, "score-robot").text)
    rig.ball.circling = False

    def vanish_near_the_robot_s_goal_then_no_serve() -> None:
        rig.ball.play([(0.3, 0.0, BallStatus.DETECTED)] * 5  # back in the field
                      + [(0.568, 0.08, BallStatus.DETECTED)] * 3  # rolling in, then hidden
                      + [(0.0, 0.0, BallStatus.LOST)] * 600)  # 3 s at 200 Hz: no serve
        wait_for(lambda: page.find_element(By.ID, "uncertain-goal").is_displayed(), 10,
                 "the question on the page")
    vanish_near_the_robot_s_goal_then_no_serve()
    assert "Goal for the robot?" in page.find_element(By.ID, "uncertain-text").text
    assert page.find_element(By.ID, "score-robot").text == str(robot)  # not counted yet
    clicked(page, "goal-count")
    wait_for(lambda: page.find_element(By.ID, "score-robot").text == str(robot + 1), 5,
             "the goal counted")
    wait_for(lambda: not page.find_element(By.ID, "uncertain-goal").is_displayed(), 5,
             "the question gone")
    assert [m.score_robot for m in rig.listener.of(GameState)][-1] == robot + 1
    vanish_near_the_robot_s_goal_then_no_serve()
    clicked(page, "goal-dismiss")
    wait_for(lambda: not page.find_element(By.ID, "uncertain-goal").is_displayed(), 5,
             "the question dismissed")
    assert page.find_element(By.ID, "score-robot").text == str(robot + 1)
    assert "goal robot dismissed: sent" in page.find_element(By.ID, "log").text
    rig.ball.circling = True


def test_a_fault_shows_its_causes_and_restart_waits_until_they_are_gone(rig, page):
    clicked(page, "start")
    wait_for(lambda: state_shown(page) == "PLAYING", 5)
    since = time.monotonic()
    rig.alarm_on = True
    wait_for(lambda: state_shown(page) == "FAULT", 5, "FAULT shown")
    assert SafetyState.FAULT in game_states(rig, since)
    causes = page.find_element(By.ID, "causes")
    wait_for(lambda: "motor_driver: overcurrent on axis 3" in causes.text, 5)
    restart = page.find_element(By.ID, "restart")
    assert restart.is_displayed() and not restart.is_enabled()
    assert not page.find_element(By.ID, "start").is_enabled()
    [state] = [m for m in rig.listener.of(GameState, since) if m.state == SafetyState.FAULT][:1]
    assert "overcurrent on axis 3" in state.alarm_text
    for _ in range(3):  # while the cause lasts, restart stays disabled
        time.sleep(0.2)
        assert not restart.is_enabled()
    DOCS.mkdir(parents=True, exist_ok=True)
    page.save_screenshot(str(DOCS / "game-panel-fault-800x480.png"))

    rig.alarm_on = False  # the cause is gone: its alarm repeats stop
    wait_for(lambda: restart.is_enabled(), 5, "restart enabled once every cause is gone")
    assert "every cause is gone" in causes.text
    restarted = time.monotonic()
    restart.click()
    wait_for(lambda: state_shown(page) == "PAUSED", 5, "out of FAULT, the match paused")
    assert SafetyState.PAUSED in game_states(rig, restarted)
    assert not rig.panel.latch.faulted and not rig.strategy.latch.faulted


def test_a_halted_drive_pauses_the_match_and_the_page_names_it(rig, page):
    clicked(page, "start")
    wait_for(lambda: state_shown(page) == "PLAYING", 5)
    since = time.monotonic()
    rig.halted = 3  # "halt" on drive 3's row of the supervisory panel
    drives = page.find_element(By.ID, "drives")
    wait_for(lambda: state_shown(page) == "PAUSED", 5, "PAUSED shown")
    assert SafetyState.PAUSED in game_states(rig, since)
    wait_for(lambda: drives.text.startswith("HALTED: drive 3 (defence rotation)"), 5,
             "the halted drive named")
    assert "warn" in drives.get_attribute("class")
    clock = page.find_element(By.ID, "clock").text
    assert not page.find_element(By.ID, "start").is_enabled()
    rig.halted = None  # released, and homed again
    wait_for(lambda: drives.text == "READY", 5, "the drives READY again")
    assert page.find_element(By.ID, "start").is_enabled()
    assert state_shown(page) == "PAUSED" and page.find_element(By.ID, "clock").text == clock


def calibration_shown(driver: Any) -> dict[str, Any]:
    """The calibration lines as the page has them (whichever tab is shown)."""
    return driver.execute_script(
        "const line = document.getElementById('calibration');"
        "return {text: line.textContent, warn: line.classList.contains('warn'),"
        " details: document.getElementById('calibration-details').textContent,"
        " warnings: document.getElementById('calibration-warnings').textContent};")


def test_the_calibration_status_and_its_warnings_are_shown(rig, page):
    good = "Calibration: rms 0.42 px (max 0.97 px), made 2026-11-30 09:12 UTC"
    try:
        shown = wait_for(lambda: (c := calibration_shown(page))["text"] == good and c, 5,
                         "the stand-in tracker's calibration")
        assert not shown["warn"] and shown["warnings"] == ""
        assert shown["details"] == "640x480, 4 markers, 1.1 mm rms on the table"

        rig.ball.calibration = dataclasses.replace(CALIBRATION, reprojection_rms_px=2.31,
                                                   reprojection_max_px=5.8)
        shown = wait_for(lambda: (c := calibration_shown(page))["warn"] and c, 5, "a warning")
        assert shown["text"].startswith("Calibration: rms 2.31 px (max 5.80 px)")
        assert "reprojection error 2.31 px rms is above 1.5 px: calibrate again" in \
            shown["warnings"]
        assert page.find_element(By.ID, "calibration-warnings").is_displayed()
        DOCS.mkdir(parents=True, exist_ok=True)
        page.save_screenshot(str(DOCS / "game-panel-calibration-800x480.png"))

        rig.ball.calibration = None  # the tracker stopped: after 3.5 s the page says so
        shown = wait_for(lambda: (c := calibration_shown(page))["text"] ==
                         "Calibration: not reported" and c, 8, "not reported")
        assert shown["warn"] and "not reported by the ball tracker" in shown["warnings"]
    finally:
        rig.ball.calibration = CALIBRATION
    wait_for(lambda: calibration_shown(page)["text"] == good, 5, "reported again")


def test_a_threshold_change_reaches_the_tracker_and_the_preview_updates(rig, page):
    from tests.panels.game_vision import tracker_runtime

    rig.ball.circling = False
    rig.ball.calibration = None  # the real tracker reports its own
    rig.start_tracker(tracker_runtime(rig))
    try:
        status = rig.tracker.core.calibration_status
        made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(status.made_at * 1e-9))
        real = (f"Calibration: rms {round(status.reprojection_rms_px, 2):.2f} px (max "
                f"{round(status.reprojection_max_px, 2):.2f} px), made {made}")
        wait_for(lambda: calibration_shown(page)["text"] == real, 5,
                 "the real tracker's calibration")
        page.find_element(By.CSS_SELECTOR, '[data-tab="vision-tab"]').click()
        since = time.monotonic()
        page.find_element(By.ID, "preview-on").click()
        wait_for(lambda: [m for m in rig.listener.of(VisionConfig, since) if m.preview], 5,
                 "VisionConfig with the preview on")
        lit = wait_for(lambda: (p := page.execute_script("return window.panelStats.preview"))
                       and p["set"] >= 4 and p, 10, "a mask preview with the ball in it")
        page.save_screenshot(str(DOCS / "game-panel-vision-800x480.png"))
        # Hue band on blue: the orange ball leaves the mask.
        since = time.monotonic()
        page.execute_script(
            "const s = document.getElementById('v-hue_low'); s.value = 100;"
            "s.dispatchEvent(new Event('change'));"
            "const t = document.getElementById('v-hue_high'); t.value = 130;"
            "t.dispatchEvent(new Event('change'));")
        wait_for(lambda: [m for m in rig.listener.of(VisionConfig, since)
                          if (m.hue_low, m.hue_high) == (100, 130)], 5, "the new thresholds")
        wait_for(lambda: rig.tracker.core.detector_cfg.hue_low == 100, 5, "tracker applied")
        wait_for(lambda: (p := page.execute_script("return window.panelStats.preview"))
                 and p["frame"] > lit["frame"] and p["set"] == 0, 10, "an empty mask")
        assert page.find_element(By.ID, "v-hue_low-value").text == "100"
    finally:
        rig.stop_tracker()
        rig.ball.calibration = CALIBRATION
        page.execute_script(
            "const s = document.getElementById('v-hue_low'); s.value = 7;"
            "s.dispatchEvent(new Event('change'));"
            "const t = document.getElementById('v-hue_high'); t.value = 22;"
            "t.dispatchEvent(new Event('change'));")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency_window(rig: Rig, page: Any, seconds: float) -> tuple[float, list[float]]:
    """BallStates/s sent and the page's ball latencies (ms) over one window."""
    page.execute_script("window.panelStats.latencies = []")
    sent, started = rig.ball.sent, time.monotonic()
    wait_for(lambda: time.monotonic() - started > seconds, seconds + 2)
    rate = (rig.ball.sent - sent) / (time.monotonic() - started)
    return rate, page.execute_script("return window.panelStats.latencies")


def test_ball_to_page_latency_at_200_ball_states_per_second(rig, page, record_property):
    """From a BallState on the wire (its capture time, stamped as it is sent) to the frame
    that drew it, measured in the page. Over 5 s windows; a window disturbed by other load
    on the machine is measured again, three windows at most, each one printed."""
    rig.ball.circling = True
    wait_for(lambda: page.execute_script("return window.panelStats.drawn > 20"), 5)
    windows = []
    for _ in range(3):
        rate, latencies = latency_window(rig, page, 5.0)
        p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        windows.append((p99, p50, rate, len(latencies)))
        print(f"\nball state -> drawn on the page: {len(latencies)} frames at {rate:.0f} "
              f"BallStates/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(latencies):.1f} ms")
        assert rate > 180 and len(latencies) > 100
        if p99 <= 50.0:
            break
    p99, p50 = min(windows)[:2]
    record_property("ball_to_page_p50_ms", round(p50, 1))
    record_property("ball_to_page_p99_ms", round(p99, 1))
    assert p99 <= 50.0, windows


def test_the_layout_fits_a_laptop_browser(rig, page):
    laptop = {"width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": False}
    page.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", laptop)
    try:
        frames = page.execute_script("return window.panelStats.frames")
        wait_for(lambda: page.execute_script("return window.panelStats.frames") > frames + 5,
                 5, "redrawn at the new size")
        assert page.execute_script("return [document.documentElement.scrollWidth, "
                                   "document.documentElement.scrollHeight]") == [1366, 768]
        field = page.find_element(By.ID, "field").size
        assert field["width"] > 900 and field["height"] > 600  # the field takes the room
        page.save_screenshot(str(DOCS / "game-panel-1366x768.png"))
    finally:
        page.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                             laptop | {"width": 800, "height": 480})
    assert severe(page) == []
