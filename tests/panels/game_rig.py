"""A strategy board's agents on one in-process wire segment, for the game panel's browser
tests: the real game panel (core, web server, runtime), the real strategy agent in its
runtime, stand-ins for the pole and motor drivers (RodStatus, MotorStatus, Alarms), a ball
feeder that sends BallStates as the tracker does, optionally the real ball tracker on
synthetic camera frames, and a listener that keeps everything said on the wire."""

from __future__ import annotations

import contextlib
import math
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from foosball.agents.strategy import make_core
from foosball.geometry import default_table
from foosball.panels.game_page import GamePanelSettings, open_game_panel
from foosball.panels.server import panel_token
from foosball.runtime import AgentRuntime
from foosball.runtime.settings import SafetySettings
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    AxisStatus,
    BallState,
    BallStatus,
    CalibrationStatus,
    DriveState,
    GameControl,
    MotorStatus,
    RodId,
    RodPosition,
    RodStatus,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport

KEY = bytes(range(100, 132))
TOKEN = panel_token(KEY)
TABLE = default_table()
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
# A browser test module's mark: skipped where Chromium is not installed.
NEEDS_CHROMIUM = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                    reason="needs Debian's chromium and chromium-driver "
                                           "(tools/run-tests installs them as root)")
# Nobody's heartbeat deadline is watched here: the segment has no motor driver or tracker
# processes to beat; the faults under test come from Alarms.
SAFETY = SafetySettings(deadlines={}, startup_grace_s=60.0)
# What the stand-in tracker reports of its calibration, as a tracker does every second.
CALIBRATION = CalibrationStatus(
    made_at=round(datetime(2026, 11, 30, 9, 12, 5, tzinfo=UTC).timestamp() * 1e9),
    reprojection_rms_px=0.42, reprojection_max_px=0.97, table_rms_m=0.0011, width=640,
    height=480, markers=4)


def wait_for(condition: Callable[[], Any], timeout_s: float = 5.0, what: str = "") -> Any:
    """Poll until `condition()` is truthy (returns it) or fail after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what or condition}")
        time.sleep(0.01)


class Periodic:
    """A function called every `period_s` on its own thread until stop()."""

    def __init__(self, period_s: float, tick: Callable[[int], None], name: str) -> None:
        self.period_s, self.tick = period_s, tick
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        start = time.monotonic()
        n = 0
        while not self._stop.is_set():
            self.tick(n)
            n += 1
            delay = start + n * self.period_s - time.monotonic()
            if delay > 0:
                self._stop.wait(delay)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)


class BallFeeder:
    """BallStates at `rate_hz`, stamped with the wall clock at sending (as a tracker stamps
    a frame's capture): a ball circling the field, or a scripted list of states; and the
    `calibration` every second (None: says nothing of it)."""

    def __init__(self, endpoint: Endpoint, rate_hz: float = 200.0) -> None:
        self.endpoint = endpoint
        self.rate_hz = rate_hz
        self.frame = 0
        self.script: list[tuple[float, float, BallStatus]] = []
        self.circling = False
        self.sent = 0
        self.calibration: CalibrationStatus | None = CALIBRATION
        self._lock = threading.Lock()
        self._periodic = Periodic(1.0 / rate_hz, self._tick, "ball-feeder")

    def _tick(self, n: int) -> None:
        calibration = self.calibration
        if calibration is not None and n % round(self.rate_hz) == 0:
            self.endpoint.send(calibration)
        with self._lock:
            if self.script:
                x, y, status = self.script.pop(0)
                vx = vy = 0.0
            elif self.circling:
                t = n / self.rate_hz
                w = 1.5
                x, y = 0.4 * math.cos(w * t), 0.2 * math.sin(w * t)
                vx, vy = -0.4 * w * math.sin(w * t), 0.2 * w * math.cos(w * t)
                status = BallStatus.DETECTED
            else:
                return
        self.frame += 1
        self.endpoint.send(BallState(capture_time=time.time_ns(), frame=self.frame, x=x, y=y,
                                     vx=vx, vy=vy, covariance=(1e-6, 1e-6, 1e-2, 1e-2),
                                     status=status))
        self.sent += 1

    def play(self, states: list[tuple[float, float, BallStatus]]) -> None:
        with self._lock:
            self.script = list(states)

    @property
    def idle(self) -> bool:
        with self._lock:
            return not self.script

    def stop(self) -> None:
        self._periodic.stop()


class Listener:
    """Everything said on the segment, with the monotonic time it was heard."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.heard: list[tuple[float, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="listener", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            for received in self.endpoint.receive(0.05):
                with self._lock:
                    self.heard.append((time.monotonic(), received.message))

    def of(self, cls: type, since: float = 0.0) -> list[Any]:
        with self._lock:
            return [m for t, m in self.heard if t >= since and isinstance(m, cls)]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)


def rod_status(n: int) -> RodStatus:
    return RodStatus(rods=tuple(
        RodPosition(rod=RodId(r), translation=round(0.04 * math.sin(0.05 * n + r), 4),
                    rotation=0.0, translation_velocity=0.0, rotation_velocity=0.0)
        for r in range(4)))


def motor_status(halted: int | None = None) -> MotorStatus:
    """Every drive READY, but `halted` in quick stop (the supervisory panel's halt)."""
    return MotorStatus(axes=tuple(AxisStatus(axis=a, state=DriveState.QUICK_STOP if a == halted
                                             else DriveState.READY, position=0.0,
                                             velocity=0.0, current=0.1, fault_code=0)
                                  for a in range(8)))


class Rig:
    def __init__(self, tmp: Path) -> None:
        self.hub = MemoryHub()
        self.started = time.monotonic()
        strategy = make_core("improved", TABLE)
        # A runtime counts its step loop as silent from when it was made: run at once.
        self.strategy = AgentRuntime(strategy, self.endpoint(Agent.STRATEGY), SAFETY,
                                     health=None)
        self.panel = open_game_panel(
            TABLE, GamePanelSettings(port=0, host="127.0.0.1",
                                     token_file=str(tmp / "panel.token")),
            self.endpoint(Agent.GAME_PANEL), KEY, SAFETY, health=None)
        self.runtimes = [self.panel, self.strategy]
        self.threads = [threading.Thread(target=r.run, name=r.agent.name, daemon=True)
                        for r in self.runtimes]
        for thread in self.threads:
            thread.start()
        self.listener = Listener(self.endpoint(Agent.TOOL))
        self.tool = self.endpoint(Agent.TOOL)
        pole = self.endpoint(Agent.POLE_DRIVER)
        mda = self.endpoint(Agent.MOTOR_DRIVER)
        self.alarm_on = False
        self.halted: int | None = None  # a drive the motor driver reports in quick stop
        self._alarm_lock = threading.Lock()
        self.mda_alarms = self.endpoint(Agent.MOTOR_DRIVER)

        def drives(n: int) -> None:
            pole.send(rod_status(n))
            if n % 5 == 0:
                mda.send(motor_status(self.halted))
            if n % 10 == 0 and self.alarm_on:  # the MDA repeats a present cause
                with self._alarm_lock:
                    self.mda_alarms.send(Alarm(source=Agent.MOTOR_DRIVER,
                                               code=AlarmCode.OVERCURRENT,
                                               text="overcurrent on axis 3", latched=True,
                                               axis=3))

        self.drives = Periodic(0.01, drives, "drives")
        self.ball = BallFeeder(self.endpoint(Agent.BALL_TRACKER))
        self.tracker: AgentRuntime | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.panel.hardware.server.port}/"

    def endpoint(self, agent: Agent) -> Endpoint:
        return Endpoint(MemoryTransport(self.hub), WireCodec(KEY, agent))

    def control(self, command: Any) -> None:
        """What `foosball wire send GameControl command=...` sends."""
        self.tool.send(GameControl(command=command))

    def start_tracker(self, tracker: AgentRuntime) -> None:
        self.tracker = tracker
        self.runtimes.append(tracker)
        thread = threading.Thread(target=tracker.run, name="tracker", daemon=True)
        thread.start()
        self.threads.append(thread)

    def stop_tracker(self) -> None:
        if self.tracker is not None:
            self.tracker.stop()

    def close(self) -> None:
        self.ball.stop()
        self.drives.stop()
        for runtime in self.runtimes:
            runtime.stop()
        for thread in self.threads:
            thread.join(timeout=5.0)
        self.listener.stop()
        for runtime in self.runtimes:
            runtime.endpoint.close()


@contextlib.contextmanager
def panel_page(rig: Rig, user_data_dir: Path) -> Iterator[Any]:
    """Chromium on the rig's game panel with the token, its WebSocket connected."""
    driver = open_chromium(user_data_dir=user_data_dir)
    try:
        driver.get(rig.url + "#token=" + TOKEN)
        wait_for(lambda: driver.execute_script("return window.panelStats.connected"), 10,
                 "the page's WebSocket")
        yield driver
    finally:
        driver.quit()


def open_chromium(width: int = 800, height: int = 480, user_data_dir: Path | None = None,
                  binary: str | None = None) -> Any:
    """Debian's headless Chromium (or `binary`, e.g. a wrapper that runs it niced)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary or CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--window-size={width},{height}",
                 f"--user-data-dir={user_data_dir}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    # The board's display: exactly 800x480 CSS pixels of page, whatever the window has.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1,
                            "mobile": False})
    return driver
