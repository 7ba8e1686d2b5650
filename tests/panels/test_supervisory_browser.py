"""The supervisory page in real Chromium (Selenium + chromium-driver), against the real
panel server and agent runtime on an in-process wire segment: a stand-in motor driver sends
MotorStatus, EtherCatStatus and an Alarm as the MDA would, and listens for what the panel
sends. Waits have deadlines; nothing sleeps for a fixed time."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from foosball.geometry import default_table
from foosball.panels.server import panel_token
from foosball.panels.supervisory import SupervisoryPanelConfig, open_supervisory_panel
from foosball.runtime import AgentRuntime
from foosball.runtime.settings import SafetySettings
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    AxisStatus,
    DriveCommand,
    DriveControl,
    DriveState,
    EtherCatStatus,
    GameCommand,
    GameControl,
    MotorStatus,
    SlaveState,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport
from tests.conftest import screenshots_dir
from tests.panels.game_rig import CHROMEDRIVER, CHROMIUM, open_chromium

webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium")
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

KEY = bytes(range(32))
# Generous: a loaded test machine may starve a thread for a second; what is tested here is
# the page, not the wire's or the panel's freshness checks (test_supervisory_core does those).
MAX_AGE_S = 30.0
STALE_AFTER_S = 5.0
DOCS = screenshots_dir()  # docs/panels only when asked (tests/conftest.py)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs Debian's chromium and chromium-driver (tools/run-tests installs them)")

STATES = (DriveState.RUNNING, DriveState.RUNNING, DriveState.READY, DriveState.READY,
          DriveState.HOMING, DriveState.ALIGNING, DriveState.FAULT, DriveState.RUNNING)
LINK = EtherCatStatus(link_up=True, slaves=8, expected_slaves=8, al_state=0x08,
                      working_counter=24, expected_working_counter=24, bad_working_counters=3,
                      cycle_period_s=0.005, wakeup_jitter_p99_s=62e-6)
OVERCURRENT = Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.OVERCURRENT,
                    text="drive 6 fault 0x2310 (overcurrent)", latched=True, axis=6)


@dataclass(frozen=True)
class Scene:
    """What the stand-in MDA reports: the drives, the segment, the cause it repeats."""

    states: tuple[DriveState, ...] = STATES
    fault_axis: int = 6  # overcurrent on this axis (-1: none)
    link: EtherCatStatus = LINK
    alarm: Alarm = OVERCURRENT
    bad_per_status: int = 0  # working counters gone bad between two EtherCatStatus


# Axis 5's slave (position 6) stopped exchanging process data: the MDA latched the working
# counter's alarm and quick-stopped every axis; its recovery read found the slave in SAFE-OP
# with the SyncManager watchdog's code (the values tests/ethercat/test_field_drives.py sees).
WKC_LOSS = Scene(
    states=(DriveState.QUICK_STOP,) * 8, fault_axis=-1, bad_per_status=10,
    link=dataclasses.replace(LINK, al_state=0x14, working_counter=21, bad_working_counters=412,
                             slaves_not_op=(SlaveState(6, 0x14, 0x001B, "Sync manager watchdog",
                                                       0, 0),)),
    alarm=Alarm(source=Agent.MOTOR_DRIVER, code=AlarmCode.WORKING_COUNTER,
                text="working counter 21, expected 24, for 4 cycles", latched=True, axis=-1))


def motor_status(t: float, scene: Scene) -> MotorStatus:
    """Eight axes that move with time, one of them in fault (overcurrent) unless none."""
    return MotorStatus(axes=tuple(
        AxisStatus(axis=a, state=scene.states[a],
                   position=round(1.0 + a + 0.5 * math.sin(t + a), 4),
                   velocity=round(3.0 * math.cos(t + a), 3)
                   if scene.states[a] == DriveState.RUNNING else 0.0,
                   current=0.8 if a == scene.fault_axis else 0.25,
                   fault_code=0x2310 if a == scene.fault_axis else 0)
        for a in range(8)))


class MotorDriverStandIn:
    """Sends what the MDA sends at its 20 Hz, on its own thread; keeps what it hears."""

    def __init__(self, hub: MemoryHub, scene: Scene = Scene()) -> None:
        self.scene = scene
        self.endpoint = Endpoint(MemoryTransport(hub),
                                 WireCodec(KEY, Agent.MOTOR_DRIVER, max_age_s=MAX_AGE_S))
        self.heard: list[Any] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mda-stand-in", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        t0 = time.monotonic()
        scene = self.scene
        cycle = 0
        while not self._stop.wait(0.05):
            self.endpoint.send(motor_status(time.monotonic() - t0, scene))
            self.endpoint.send(dataclasses.replace(scene.link, bad_working_counters=(
                scene.link.bad_working_counters + cycle * scene.bad_per_status)))
            if cycle % 2 == 0:  # a present cause's Alarm repeats every 100 ms
                self.endpoint.send(scene.alarm)
            cycle += 1
            self.heard.extend(r.message for r in self.endpoint.receive())

    def game_controls(self) -> list[GameControl]:
        return [m for m in list(self.heard) if isinstance(m, GameControl)]

    def drive_controls(self) -> list[Any]:
        return [m for m in list(self.heard) if isinstance(m, DriveControl)]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.endpoint.close()


@contextlib.contextmanager
def serve_panel(scene: Scene = Scene()) -> Iterator[tuple[str, MotorDriverStandIn]]:
    hub = MemoryHub()
    endpoint = Endpoint(MemoryTransport(hub),
                        WireCodec(KEY, Agent.SUPERVISORY_PANEL, max_age_s=MAX_AGE_S))
    # Only the MDA is watched: the other agents are not on this segment.
    settings = SafetySettings(deadlines={Agent.MOTOR_DRIVER: 0.5})
    runtime: AgentRuntime = open_supervisory_panel(
        default_table(), endpoint, SupervisoryPanelConfig(
            port=0, host="127.0.0.1", token_file="", stale_after_s=STALE_AFTER_S),
        settings, wire_key=KEY)
    port = runtime.hardware.panel.server.port  # type: ignore[union-attr]
    stop = threading.Event()
    thread = threading.Thread(target=runtime.run, kwargs={"should_stop": stop.is_set},
                              name="spa", daemon=True)
    thread.start()
    mda = MotorDriverStandIn(hub, scene)
    try:
        yield f"http://127.0.0.1:{port}/", mda
    finally:
        mda.close()
        stop.set()
        thread.join(timeout=5)
        endpoint.close()


@pytest.fixture
def panel() -> Iterator[tuple[str, MotorDriverStandIn]]:
    with serve_panel() as served:
        yield served


@pytest.fixture
def drive_panel() -> Iterator[tuple[str, MotorDriverStandIn]]:
    with serve_panel() as served:
        yield served


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One Chromium for the module (the game panel's helper), at the board's 800x480."""
    driver = open_chromium(800, 480, user_data_dir=tmp_path_factory.mktemp("chromium"))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(autouse=True)
def board_display(browser: Any) -> Iterator[None]:
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 800, "height": 480, "deviceScaleFactor": 1, "mobile": False})
    browser.get_log("browser")  # what an earlier test's page logged is not this test's
    yield
    browser.get("about:blank")  # its server is gone: its page must not keep reconnecting


def wait_for(driver: Any, what: str, condition: Any, timeout_s: float = 30.0) -> Any:
    try:
        return WebDriverWait(driver, timeout_s, poll_frequency=0.05).until(
            lambda d: condition(d))
    except TimeoutException:
        shown = driver.execute_script(
            "const r = document.getElementById('result');"
            "const c = document.getElementById('connection');"
            "return (c ? c.textContent : '') + ' | ' + (r ? r.textContent : '')")
        raise AssertionError(f"not within {timeout_s} s: {what} (page: {shown})") from None


def text(driver: Any, css: str) -> str:
    return str(driver.find_element(By.CSS_SELECTOR, css).text)


def console_errors(driver: Any) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE"]


def test_the_page_shows_axes_and_link_and_halt_all_needs_the_token(panel, browser) -> None:
    url, mda = panel
    browser.get(url)
    wait_for(browser, "the WebSocket connects", lambda d: text(d, "#connection") == "live")
    wait_for(browser, "eight axes with their states",
             lambda d: [text(d, f"#axis-{a} td.state") for a in range(8)]
             == ["running", "running", "ready", "ready", "homing", "aligning", "fault",
                 "running"])
    assert text(browser, "#axis-0 td.label") == "goalkeeper translation"
    assert text(browser, "#axis-6 td.fault") == "0x2310 overcurrent"
    assert text(browser, "#axis-1 td.pos-m") == "–"  # no metres for a rotation axis
    first, metres = browser.execute_script(  # one moment: both from the same update
        "const row = document.getElementById('axis-0');"
        "return [row.querySelector('.pos-rad').textContent,"
        " row.querySelector('.pos-m').textContent]")
    goalkeeper = default_table().robot_rods[0]
    assert float(metres) == pytest.approx(
        goalkeeper.zero_offset + float(first) * goalkeeper.metres_per_motor_radian(), abs=2e-4)
    wait_for(browser, "positions follow the MotorStatus messages",
             lambda d: text(d, "#axis-0 td.pos-rad") != first)
    wait_for(browser, "link statistics", lambda d: text(d, "#link-slaves") == "8 / 8")
    assert text(browser, "#link-al") == "OP"
    assert text(browser, "#link-wkc") == "24 / 24"
    assert text(browser, "#link-up") == "up"
    assert text(browser, "#link-jitter") == "62 µs"
    assert text(browser, "#link-cycle") == "5.00 ms"
    assert text(browser, "#link-badge") == "healthy"
    wait_for(browser, "the MDA's alarm latched FAULT here too",
             lambda d: text(d, "#safety") == "FAULT")
    assert "OVERCURRENT axis 6" in text(browser, "#alarms")
    wait_for(browser, "what latched it, and that its cause is still there",
             lambda d: text(d, "#fault-text") == "alarm from motor_driver: drive 6 fault "
             "0x2310 (overcurrent) · 1 cause(s) present")
    assert console_errors(browser) == []

    browser.find_element(By.ID, "halt-all").click()  # no token typed
    wait_for(browser, "halt all refused",
             lambda d: "refused: missing or wrong panel token" in text(d, "#result"))
    assert mda.game_controls() == []

    browser.find_element(By.ID, "token").send_keys(panel_token(KEY))
    browser.find_element(By.ID, "halt-all").click()
    wait_for(browser, "GameControl STOP and a halt of every drive on the wire",
             lambda d: mda.game_controls() and len(mda.drive_controls()) == 8)
    assert mda.game_controls() == [GameControl(GameCommand.STOP)]
    assert mda.drive_controls() == [DriveControl(a, DriveCommand.HALT) for a in range(8)]
    wait_for(browser, "the action is logged with who and what",
             lambda d: "127.0.0.1: halt all – sent GameControl STOP, DriveControl HALT to "
                       "drives 0-7" in text(d, "#actions"))
    assert "halt all: accepted" in text(browser, "#result")

    # Per drive: DriveControl HALT for that axis on the wire.
    halt_3 = browser.find_element(By.CSS_SELECTOR, "#axis-3 button.drive-halt")
    assert halt_3.is_enabled()
    halt_3.click()
    wait_for(browser, "DriveControl HALT of axis 3 on the wire",
             lambda d: len(mda.drive_controls()) == 9)
    assert mda.drive_controls()[-1] == DriveControl(axis=3, command=DriveCommand.HALT)

    # One screen at 800x480: nothing scrolls.
    size = browser.execute_script(
        "return [innerWidth, innerHeight, document.documentElement.scrollWidth,"
        " document.documentElement.scrollHeight]")
    assert size[:2] == [800, 480]
    assert size[2] <= 800 and size[3] <= 480, size
    DOCS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(DOCS / "supervisory-800x480.png"))
    assert console_errors(browser) == []


def test_the_page_fits_a_laptop_browser_too(panel, browser) -> None:
    url, _ = panel
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 1366, "height": 768, "deviceScaleFactor": 1, "mobile": False})
    browser.get(url)
    wait_for(browser, "axes shown", lambda d: text(d, "#axis-7 td.state") == "running")
    width, height = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    assert width <= 1366 and height <= 768
    DOCS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(DOCS / "supervisory-1366x768.png"))
    assert console_errors(browser) == []


def test_per_drive_halt_and_release_send_drive_control(drive_panel, browser) -> None:
    url, mda = drive_panel
    browser.get(url + "#token=" + panel_token(KEY))  # as `rig up` prints the address
    halt = (By.CSS_SELECTOR, "#axis-3 button.drive-halt")
    wait_for(browser, "the drive buttons enabled", lambda d: d.find_element(*halt).is_enabled())
    # Read into the form, then out of the address bar (issue 29: it stayed there).
    assert browser.execute_script("return location.hash") == ""
    assert "token" not in browser.current_url
    assert browser.find_element(By.ID, "token").get_attribute("value") == panel_token(KEY)
    browser.find_element(*halt).click()
    browser.find_element(By.CSS_SELECTOR, "#axis-6 button.drive-release").click()
    wait_for(browser, "two DriveControl on the wire", lambda d: len(mda.drive_controls()) == 2)
    assert mda.drive_controls() == [DriveControl(3, DriveCommand.HALT),
                                    DriveControl(6, DriveCommand.RELEASE)]
    wait_for(browser, "both logged",
             lambda d: "drive 6 release – sent DriveControl axis=6 RELEASE" in text(d, "#actions")
             and "drive 3 halt – sent DriveControl axis=3 HALT" in text(d, "#actions"))
    assert console_errors(browser) == []


def test_a_working_counter_loss_names_the_slave_it_comes_from(browser) -> None:
    with serve_panel(WKC_LOSS) as (url, _):
        browser.get(url)
        wait_for(browser, "the slave out of OP named under the link statistics",
                 lambda d: text(d, "#link-slaves-out") == "slave 6 (axis 5, midfield "
                 "rotation): SAFE-OP + ERROR, 0x001B Sync manager watchdog")
        assert text(browser, "#link-wkc") == "21 / 24"
        assert text(browser, "#link-al") == "SAFE-OP + ERROR"
        assert text(browser, "#link-badge") == "degraded"
        wait_for(browser, "the working counter's alarm latched FAULT",
                 lambda d: text(d, "#safety") == "FAULT"
                 and "WORKING_COUNTER" in text(d, "#alarms"))
        wait_for(browser, "every axis quick-stopped",
                 lambda d: text(d, "#axis-7 td.state") == "quick stop")
        size = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        assert size[0] <= 800 and size[1] <= 480, size  # still one screen
        DOCS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(DOCS / "supervisory-wkc-loss-800x480.png"))
        assert console_errors(browser) == []
