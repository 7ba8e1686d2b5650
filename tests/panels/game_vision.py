"""The real ball tracker agent on synthetic camera frames, for the game panel's tuning test."""

from __future__ import annotations

import threading
import time
from typing import Any

from foosball.agents.ball_tracker import BallTrackerCore
from foosball.lab.vision.synthetic import LAYOUT, SynthCamera, render
from foosball.runtime import AgentRuntime
from foosball.vision.calibration import calibrate
from foosball.vision.config import VisionSettings
from foosball.vision.sources import CapturedFrame
from foosball.vision.tracker import BallTracker
from foosball.wire.catalogue import Agent
from tests.panels.game_rig import SAFETY, TABLE, Rig

FPS = 50.0


class LoopingCamera:
    """A few rendered frames, over and over, at FPS, stamped when they are 'captured'."""

    def __init__(self, images: list[Any]) -> None:
        self.images = images
        self.index = 0
        self.next_s = time.monotonic()
        self._closed = threading.Event()

    def sense(self, timeout_s: float) -> CapturedFrame | None:
        wait = self.next_s - time.monotonic()
        if wait > timeout_s:
            self._closed.wait(timeout_s)
            return None
        if wait > 0:
            self._closed.wait(wait)
        self.next_s = max(self.next_s + 1.0 / FPS, time.monotonic() - 0.1)
        self.index += 1
        image = self.images[self.index % len(self.images)]
        return CapturedFrame(image, time.time_ns(), self.index)

    def act(self, actuation: Any) -> None:
        pass

    def close(self) -> None:
        self._closed.set()


def tracker_runtime(rig: Rig) -> AgentRuntime:
    camera = SynthCamera()
    calibration = calibrate(render(camera, None), LAYOUT, TABLE.ball.radius,
                            focal_px=camera.focal)
    images = [render(camera, (0.1 + 0.002 * i, 0.05), seed=i) for i in range(4)]
    settings = VisionSettings()
    tracker = BallTracker(settings.detector, settings.filter, calibration, TABLE)
    core = BallTrackerCore(tracker, settings)
    return AgentRuntime(core, rig.endpoint(Agent.BALL_TRACKER), SAFETY,
                        hardware=LoopingCamera(images), health=None)
