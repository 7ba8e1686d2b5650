"""The game panel's guided camera calibration, the ball tracker's part: on a CameraCalibration
request the tracker takes its next frame (the simulator's rendered camera with its six
markers), runs the job where the test says (as its worker does), and replies: FOUND with
each marker, REFUSED naming a marker measured 2 cm wrong (nothing saved, the old mapping
kept), ACCEPTED (saved where it reads its calibration, the old file kept, and mapped with
at once); BUSY while it learns or a match is playing. The core is stepped with the clock
passed in."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from foosball.agents.ball_tracker import (
    BallTrackerCore,
    CalibrationJob,
    CalibrationOutcome,
    Camera,
    run_calibration_job,
)
from foosball.geometry import default_table
from foosball.runtime import Inputs, Outputs
from foosball.vision import calibration_report
from foosball.vision.calibration import Marker, MarkerLayout, load_calibration
from foosball.vision.config import VisionSettings
from foosball.vision.sources import CapturedFrame, MemorySource
from foosball.vision.tracker import BallTracker
from foosball.wire.catalogue import (
    Agent,
    BallState,
    CalibrationStage,
    CalibrationStatus,
    CameraCalibration,
    CameraSnapshot,
    GameState,
    LearnStage,
    MarkerSeen,
    SafetyState,
    VisionLearn,
)
from foosball.wire.codec import MAX_FRAME, WireCodec

pytest.importorskip("foosball.sim.vision_source", reason="needs the simulator")
from foosball.sim.vision_source import sim_calibration, sim_calibration_frame

TABLE = default_table()
CODEC = WireCodec(bytes(range(32)), Agent.BALL_TRACKER)


@pytest.fixture(scope="module")
def scene() -> tuple[np.ndarray, MarkerLayout, float]:
    return sim_calibration_frame(seed=5)


def moved(layout: MarkerLayout, marker_id: int, dx: float, dy: float) -> MarkerLayout:
    """The layout a person mis-measured: one marker's corners shifted (m)."""
    return dataclasses.replace(layout, markers=tuple(
        Marker(m.marker_id, tuple((x + dx, y + dy) for x, y in m.corners))
        if m.marker_id == marker_id else m for m in layout.markers))


def tracker(tmp: Path, layout: MarkerLayout | None, focal: float) -> BallTrackerCore:
    """The tracker as its board runs it: the simulator's calibration (slightly off: made
    at another seed), the layout file and focal length in its settings."""
    markers = tmp / "markers.json"
    if layout is not None:
        markers.write_text(json.dumps(layout.to_json()))
    settings = VisionSettings(markers_file=str(markers), focal_px=focal)
    old = dataclasses.replace(sim_calibration(seed=1), created=None)
    return BallTrackerCore(BallTracker(settings.detector, settings.filter, old, TABLE),
                           settings)


def request(number: int, stage: CalibrationStage) -> CameraCalibration:
    return CameraCalibration(request=number, stage=stage, width=0, height=0,
                             reprojection_rms_px=0.0, reprojection_limit_px=0.0,
                             table_rms_m=0.0, focal_px=0.0, limit_mm=0.0, snapshot_parts=0,
                             text="")


def of_type(output: Outputs, cls: type) -> list[Any]:
    return [m for m in output.messages if isinstance(m, cls)]


class Turns:
    """The core stepped as its runtime does, frames at 200 fps (the clock passed in)."""

    def __init__(self, core: BallTrackerCore, image: np.ndarray) -> None:
        self.core, self.image = core, image
        self.now, self.index = 100.0, 0
        self.sent: list[Any] = []

    def frame(self, *messages: Any) -> Outputs:
        self.now += 0.005
        self.index += 1
        out = self.core.step(Inputs(self.now, messages, CapturedFrame(
            self.image, round(self.now * 1e9), self.index)))
        self.sent += out.messages
        return out

    def outcome(self, outcome: CalibrationOutcome) -> Outputs:
        self.now += 0.001
        out = self.core.step(Inputs(self.now, (), outcome))
        self.sent += out.messages
        return out

    def ask(self, stage: CalibrationStage, number: int = 1,
            save_to: Path | str = "") -> tuple[CameraCalibration, bytes]:
        """A request, the next frame's job run, the reply and the snapshot it sends."""
        first = self.frame(request(number, stage))
        assert of_type(first, CameraCalibration) == []  # waiting for the next frame
        jobs = [a for a in first.actuation or () if isinstance(a, CalibrationJob)]
        if not jobs:
            jobs = [a for a in self.frame().actuation or () if isinstance(a, CalibrationJob)]
        [job] = jobs
        assert job.request == number and job.stage is stage
        out = self.outcome(run_calibration_job(job, save_to))
        [answer] = of_type(out, CameraCalibration)
        parts = of_type(out, CameraSnapshot)
        while len(parts) < answer.snapshot_parts:
            more = of_type(self.frame(), CameraSnapshot)
            assert len(more) == 1  # one part a turn, beside that turn's BallState
            parts += more
        assert [p.part for p in parts] == list(range(answer.snapshot_parts))
        for message in (answer, *parts):
            assert len(CODEC.encode(message)) <= MAX_FRAME
        return answer, b"".join(p.jpeg for p in parts)


def test_look_replies_with_every_marker_found_and_the_annotated_frame(scene, tmp_path):
    image, layout, focal = scene
    turns = Turns(tracker(tmp_path, layout, focal), image)
    answer, jpeg = turns.ask(CalibrationStage.LOOK)
    assert answer.stage is CalibrationStage.FOUND and answer.request == 1
    assert (answer.width, answer.height) == (640, 480)
    assert answer.text.startswith("found 6 of the layout's 6 markers")
    assert [m.marker for m in answer.markers] == [0, 1, 2, 3, 4, 5]
    assert all(m.seen is MarkerSeen.FOUND for m in answer.markers)
    found = calibration_report.look(image, layout).found
    for m in answer.markers:  # the pixel centre and the layout's place on the table
        u, v = np.asarray(found[m.marker]).mean(axis=0)
        assert abs(m.u - u) <= 1 and abs(m.v - v) <= 1
    shown = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert shown.shape[:2] == (240, 320)
    assert 2 <= answer.snapshot_parts <= 12  # a few KB
    assert len(of_type(Outputs(tuple(turns.sent)), BallState)) >= 3  # tracking went on


def test_a_covered_marker_is_reported_in_view_not_found_with_where_it_should_be(scene,
                                                                                tmp_path):
    image, layout, focal = scene
    covered = image.copy()
    corners = np.array(calibration_report.look(image, layout).found[3], dtype=np.int32)
    cv2.fillConvexPoly(covered, corners, (40, 40, 40))
    answer, _ = Turns(tracker(tmp_path, layout, focal), covered).ask(CalibrationStage.LOOK)
    [missing] = [m for m in answer.markers if m.seen is not MarkerSeen.FOUND]
    assert missing.marker == 3 and missing.seen is MarkerSeen.NOT_FOUND
    u, v = corners.mean(axis=0)
    assert abs(missing.u - u) < 4 and abs(missing.v - v) < 4


def test_a_marker_measured_2_cm_wrong_is_refused_naming_it_and_nothing_changes(scene,
                                                                              tmp_path):
    image, layout, focal = scene
    core = tracker(tmp_path, moved(layout, 4, 0.02, 0.0), focal)
    output = tmp_path / "camera.json"
    output.write_text('{"good": true}\n')
    before = core.tracker
    answer, _ = Turns(core, image).ask(CalibrationStage.CALIBRATE, save_to=output)
    assert answer.stage is CalibrationStage.REFUSED
    assert answer.text.startswith("marker 4 is ") and "from where the layout says" in answer.text
    by_id = {m.marker: m for m in answer.markers}
    assert [i for i, m in by_id.items() if m.blamed] == [4]
    assert 14 <= np.hypot(by_id[4].dx_mm, by_id[4].dy_mm) <= 26 and by_id[4].dx_mm < -10
    others = [m for i, m in by_id.items() if i != 4]
    assert all(m.checked and m.without_blamed and np.hypot(m.dx_mm, m.dy_mm) < 5
               for m in others)
    # the CLI's text (calibrate's own), within the message's limit
    cli = calibration_report.attempt(image, moved(layout, 4, 0.02, 0.0), TABLE.ball.radius,
                                     focal_px=focal).text
    assert cli.startswith(answer.text.removesuffix("..."))
    assert json.loads(output.read_text()) == {"good": True}
    assert not (tmp_path / "camera.json.prev").exists()
    assert core.tracker is before


def test_an_accepted_calibration_is_saved_and_mapped_with_at_once(scene, tmp_path):
    image, layout, focal = scene
    core = tracker(tmp_path, layout, focal)
    output = tmp_path / "camera.json"
    output.write_text('{"old": true}\n')
    turns = Turns(core, image)
    turns.frame()
    before = core.tracker
    assert core.calibration_status.made_at == 0  # the old one says not when it was made
    answer, _ = turns.ask(CalibrationStage.CALIBRATE, save_to=output)
    assert answer.stage is CalibrationStage.ACCEPTED, answer.text
    assert f"saved to {output}" in answer.text and "camera.json.prev" in answer.text
    assert 0 < answer.reprojection_rms_px < answer.reprojection_limit_px
    assert answer.focal_px == pytest.approx(focal)
    assert all(m.checked and np.hypot(m.dx_mm, m.dy_mm) < 3 for m in answer.markers)
    saved = load_calibration(output)
    assert saved.marker_ids == (0, 1, 2, 3, 4, 5)
    assert json.loads((tmp_path / "camera.json.prev").read_text()) == {"old": True}
    # the new calibration maps the ball now, and the panel is told at once
    assert core.tracker is not before
    assert np.allclose(core.tracker.projector.calibration.plane_from_pixel,
                       saved.plane_from_pixel)
    [status] = [m for m in turns.sent if isinstance(m, CalibrationStatus) and m.made_at]
    assert status.made_at == round(saved.created.timestamp() * 1e9)
    assert core.calibration_status == status
    assert of_type(turns.frame(), BallState)  # tracking on with it


def test_busy_while_learning_and_learning_refused_while_calibrating(scene, tmp_path):
    image, layout, focal = scene
    core = tracker(tmp_path, layout, focal)
    turns = Turns(core, image)
    learn = VisionLearn(request=7, stage=LearnStage.REQUEST, frames=5, hue_low=0,
                        hue_high=0, sat_low=0, sat_high=0, val_low=0, val_high=0,
                        ball_share=0.0, table_share=0.0, text="")
    turns.frame(learn)
    [busy] = of_type(turns.frame(request(1, CalibrationStage.LOOK)), CameraCalibration)
    assert busy.stage is CalibrationStage.BUSY and "learning request 7" in busy.text
    core.collecting = None  # the learning ended
    out = turns.frame(request(2, CalibrationStage.CALIBRATE))
    [job] = [a for a in out.actuation if isinstance(a, CalibrationJob)]
    [refused] = of_type(turns.frame(dataclasses.replace(learn, request=8)), VisionLearn)
    assert refused.stage is LearnStage.REFUSED and "calibration request 2" in refused.text
    [busy] = of_type(turns.frame(request(3, CalibrationStage.LOOK)), CameraCalibration)
    assert busy.stage is CalibrationStage.BUSY and "calibration request 2" in busy.text
    [answer] = of_type(turns.outcome(run_calibration_job(job)), CameraCalibration)
    assert answer.request == 2 and answer.stage is CalibrationStage.ACCEPTED
    assert "not saved" in answer.text  # no calibration file given here


def test_calibrate_is_refused_while_a_match_is_playing_look_is_not(scene, tmp_path):
    image, layout, focal = scene
    turns = Turns(tracker(tmp_path, layout, focal), image)
    playing = GameState(state=SafetyState.PLAYING, score_robot=0, score_human=0, clock_s=1.0,
                        alarm_text="")
    turns.frame(playing)
    [busy] = of_type(turns.frame(request(1, CalibrationStage.CALIBRATE)), CameraCalibration)
    assert busy.stage is CalibrationStage.BUSY and "match is playing" in busy.text
    answer, _ = turns.ask(CalibrationStage.LOOK, 2)
    assert answer.stage is CalibrationStage.FOUND


def test_no_layout_file_and_no_frame_fail_saying_why(scene, tmp_path):
    image, _, focal = scene
    core = tracker(tmp_path, None, focal)
    turns = Turns(core, image)
    answer, _ = turns.ask(CalibrationStage.LOOK)
    assert answer.stage is CalibrationStage.FAILED and "markers.json" in answer.text
    out = core.step(Inputs(turns.now + 0.01, (request(2, CalibrationStage.LOOK),)))
    assert of_type(out, CameraCalibration) == []
    [late] = of_type(core.step(Inputs(turns.now + 10.1, ())), CameraCalibration)
    assert late.stage is CalibrationStage.FAILED and "no camera frame" in late.text


def test_the_cameras_worker_runs_the_job_and_saves_where_the_tracker_reads(scene, tmp_path):
    """The hardware: the job on its worker thread, its outcome the sample of a turn."""
    image, layout, focal = scene
    core = tracker(tmp_path, layout, focal)
    output = tmp_path / "camera.json"
    camera = Camera(MemorySource([image] * 400), calibration_file=str(output))
    now = 100.0
    out = core.step(Inputs(now, (request(1, CalibrationStage.CALIBRATE),), camera.sense(1.0)))
    answers: list[CameraCalibration] = []
    frames = 0
    while not answers and now < 130.0:
        camera.act(out.actuation)
        if frames:  # the job took a frame and runs on its worker: let it end (turns cost no
            assert camera.wait_for_learning(10.0)  # real time here, so a loaded machine could
        now += 0.005  # run every one before it did); its outcome is a later turn's sample
        sample = camera.sense(1.0)
        frames += isinstance(sample, CapturedFrame)
        out = core.step(Inputs(now, (), sample))
        answers += of_type(out, CameraCalibration)
    [answer] = answers
    assert answer.stage is CalibrationStage.ACCEPTED, answer.text
    assert load_calibration(output).marker_ids == (0, 1, 2, 3, 4, 5)
    assert frames >= 1
    camera.close()
