"""The game panel's Camera tab (agents/game_panel/calibration.py): the page's Look and
Calibrate become CameraCalibration requests to the ball tracker, its replies and the
snapshot's parts become the page's `calibrating` topic. Both cores here, every message
through the wire codec (signed, encoded, decoded) as between the boards; the tracker's job
run where the test says, on the simulator's rendered camera with its six markers."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from foosball.agents.ball_tracker import BallTrackerCore, CalibrationJob, run_calibration_job
from foosball.agents.game_panel import GamePanelCore
from foosball.agents.game_panel.calibration import ANSWER_S
from foosball.geometry import default_table
from foosball.panels.server import PanelAction
from foosball.runtime import Inputs
from foosball.vision.config import VisionSettings
from foosball.vision.sources import CapturedFrame
from foosball.vision.tracker import BallTracker
from foosball.wire.catalogue import (
    Agent,
    AxisStatus,
    CalibrationStage,
    CameraCalibration,
    CameraSnapshot,
    DriveState,
    GameControl,
    MarkerSeen,
    MotorStatus,
)
from foosball.wire.codec import WireCodec
from tests.vision.test_calibration_on_request import moved

pytest.importorskip("foosball.sim.vision_source", reason="needs the simulator")
from foosball.sim.vision_source import sim_calibration, sim_calibration_frame

TABLE = default_table()
KEY = bytes(range(40, 72))
READY = MotorStatus(axes=tuple(AxisStatus(axis=a, state=DriveState.READY, position=0.0,
                                          velocity=0.0, current=0.0, fault_code=0)
                               for a in range(8)))
WALL = 1_700_000_000.0


class Pair:
    """The game panel's core and the tracker's, each message between them through the
    codec; the tracker's jobs run when `run` says (its worker thread's part)."""

    def __init__(self, tmp: Path, layout: Any, focal: float, image: np.ndarray) -> None:
        markers = tmp / "markers.json"
        markers.write_text(json.dumps(layout.to_json()))
        settings = VisionSettings(markers_file=str(markers), focal_px=focal)
        self.tracker = BallTrackerCore(BallTracker(settings.detector, settings.filter,
                                                   sim_calibration(seed=1), TABLE), settings)
        self.panel = GamePanelCore(TABLE)
        self.image, self.now, self.index = image, 10.0, 0
        self.codecs = {Agent.GAME_PANEL: WireCodec(KEY, Agent.GAME_PANEL),
                       Agent.BALL_TRACKER: WireCodec(KEY, Agent.BALL_TRACKER)}
        self.receivers = {Agent.GAME_PANEL: WireCodec(KEY, Agent.BALL_TRACKER),
                          Agent.BALL_TRACKER: WireCodec(KEY, Agent.GAME_PANEL)}
        self.to_panel: list[Any] = [READY]
        self.to_tracker: list[Any] = []
        self.jobs: list[CalibrationJob] = []
        self.bytes: dict[str, int] = {}
        self.topics: dict[str, Any] = {}
        self.echo: tuple[Any, ...] = ()

    def _wire(self, sender: Agent, messages: tuple[Any, ...]) -> list[Any]:
        out = []
        for message in messages:
            frame = self.codecs[sender].encode(message)
            name = type(message).__name__
            self.bytes[name] = max(self.bytes.get(name, 0), len(frame))
            out.append(self.receivers[sender].decode(frame).message)
        return out

    def turn(self, *actions: PanelAction, sensed: Any = None) -> None:
        """One panel step and one tracker step (a frame, or `sensed`)."""
        self.now += 0.01
        self.index += 1
        out = self.panel.step(Inputs(self.now, (*self.echo, *self.to_panel), actions or None,
                                     wall_ns=round((WALL + self.now) * 1e9)))
        self.to_panel = []
        self.echo = tuple(m for m in out.messages if isinstance(m, GameControl))
        self.topics = out.actuation
        self.to_tracker += self._wire(Agent.GAME_PANEL, tuple(
            m for m in out.messages if isinstance(m, CameraCalibration | GameControl)))
        frame = sensed or CapturedFrame(self.image, round(self.now * 1e9), self.index)
        out = self.tracker.step(Inputs(self.now, tuple(self.to_tracker), frame))
        self.to_tracker = []
        self.jobs += [a for a in out.actuation or () if isinstance(a, CalibrationJob)]
        self.to_panel += self._wire(Agent.BALL_TRACKER, tuple(
            m for m in out.messages if isinstance(m, CameraCalibration | CameraSnapshot)))

    def press(self, name: str, save_to: Path | str = "", turns: int = 20) -> dict[str, Any]:
        self.turn(PanelAction(name, {}, "192.0.2.7", WALL + self.now))
        for _ in range(3):
            self.turn()
            if self.jobs:
                break
        if self.jobs:
            job = self.jobs.pop()
            self.turn(sensed=run_calibration_job(job, save_to))
        for _ in range(turns):
            self.turn()
        return self.topics["calibrating"]


@pytest.fixture(scope="module")
def scene() -> tuple[np.ndarray, Any, float]:
    return sim_calibration_frame(seed=5)


def test_look_shows_the_trackers_frame_and_its_markers(scene, tmp_path):
    image, layout, focal = scene
    pair = Pair(tmp_path, layout, focal, image)
    view = pair.topics.get("calibrating") or (pair.turn() or pair.topics["calibrating"])
    assert view["frame"] is None and "press Look" in view["text"]
    view = pair.press("look")
    assert view["asked"] is None
    frame = view["frame"]
    assert (frame["width"], frame["height"]) == (640, 480)
    assert frame["found"] == [0, 1, 2, 3, 4, 5] and frame["missing"] == []
    assert view["text"].startswith("found 6 of the layout's 6 markers")
    shown = cv2.imdecode(np.frombuffer(base64.b64decode(frame["jpeg"]), np.uint8),
                         cv2.IMREAD_COLOR)
    assert shown.shape[:2] == (240, 320) == (frame["jpeg_height"], frame["jpeg_width"])
    assert pair.topics["game"]["notice"].startswith("camera: found 6")
    assert pair.bytes["CameraCalibration"] <= 1500 and pair.bytes["CameraSnapshot"] <= 1500


def test_a_covered_marker_is_listed_missing_with_why(scene, tmp_path):
    image, layout, focal = scene
    covered = image.copy()
    cv2.rectangle(covered, (290, 30), (350, 95), (40, 40, 40), -1)  # over marker 4
    view = Pair(tmp_path, layout, focal, covered).press("look")
    [missing] = view["frame"]["missing"]
    assert missing["id"] == 4 and missing["kind"] == "not_found"
    assert missing["why"].startswith("in view (it should be at (3") and "not found" in \
        missing["why"]


def test_calibrate_refuses_a_marker_2_cm_wrong_naming_it(scene, tmp_path):
    image, layout, focal = scene
    output = tmp_path / "camera.json"
    output.write_text('{"good": true}\n')
    pair = Pair(tmp_path, moved(layout, 2, 0.0, 0.02), focal, image)
    pair.press("look")
    view = pair.press("calibrate", save_to=output)
    result = view["result"]
    assert not result["accepted"] and result["refused"] and result["blamed"] == [2]
    assert result["text"].startswith("marker 2 is ")
    row = next(m for m in result["markers"] if m["id"] == 2)
    assert row["blamed"] and row["over"] and 14 <= row["mm"] <= 26
    assert row["y"] == pytest.approx(-0.38)  # the layout's place (as mis-measured)
    others = [m for m in result["markers"] if m["id"] != 2]
    assert all(m["without"] == 2 and not m["over"] for m in others)
    assert pair.topics["game"]["notice"].startswith("calibrate: REFUSED: marker 2 is")
    assert json.loads(output.read_text()) == {"good": True}


def test_calibrate_accepted_is_saved_by_the_tracker_and_shown(scene, tmp_path):
    image, layout, focal = scene
    output = tmp_path / "camera.json"
    pair = Pair(tmp_path, layout, focal, image)
    view = pair.press("calibrate", save_to=output)  # Look first is not needed
    result = view["result"]
    assert result["accepted"] and result["checked"]
    assert f"saved to {output}" in result["text"]
    assert result["summary"]["focal_px"] == pytest.approx(focal, abs=0.1)
    assert 0 < result["summary"]["reprojection_rms_px"] < result["limit_px"]
    assert all(m["mm"] < 3 for m in result["markers"])
    assert view["frame"]["found"] == [0, 1, 2, 3, 4, 5] and view["frame"]["jpeg"]
    assert output.exists()


def test_refused_while_playing_twice_at_once_and_given_up_unanswered(scene, tmp_path):
    image, layout, focal = scene
    pair = Pair(tmp_path, layout, focal, image)
    pair.turn(PanelAction("look", {}, "192.0.2.7", WALL))
    pair.turn(PanelAction("calibrate", {}, "192.0.2.7", WALL))
    assert pair.topics["game"]["notice"] == "calibrate refused: request 1 is still under way"
    assert pair.topics["calibrating"]["asked"]["request"] == 1
    pair.jobs.clear()  # the tracker never answers (say it restarted)
    pair.tracker.calibrating.running = None
    pair.now += ANSWER_S + 1
    pair.turn()
    view = pair.topics["calibrating"]
    assert view["asked"] is None and "no answer from the ball tracker" in view["text"]
    pair.turn(PanelAction("start", {}, "192.0.2.7", WALL))
    pair.turn()
    assert pair.panel.match == "playing"
    pair.turn(PanelAction("calibrate", {}, "192.0.2.7", WALL))
    assert pair.topics["game"]["notice"] == \
        "calibrate refused: not while a match is playing (stop it first)"


def test_a_busy_tracker_is_shown(scene, tmp_path):
    image, layout, focal = scene
    pair = Pair(tmp_path, layout, focal, image)
    pair.tracker.calibrating.running = 41  # another panel's job under way
    pair.turn(PanelAction("look", {}, "192.0.2.7", WALL))
    pair.turn()
    view = pair.topics["calibrating"]
    assert view["asked"] is None
    assert "the ball tracker is busy: calibration request 41 is under way" in view["text"]
    assert pair.tracker.calibrating.jobs == 0
    assert all(m.stage is not CalibrationStage.FOUND for m in pair.to_panel
               if isinstance(m, CameraCalibration))
    assert MarkerSeen.FOUND == 0
