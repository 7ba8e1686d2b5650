"""The game panel's "learn from the ball": the tracker learns the ball's band from its own
frames on a VisionLearn request, off its step, applies and keeps it, or refuses with the
reason; rendered frames of a real scene, the learning job run where the test says."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from foosball.agents.ball_tracker import (
    LEARN_EVERY,
    BallTrackerCore,
    Camera,
    LearnJob,
    LearnOutcome,
    run_learn_job,
)
from foosball.geometry import default_table
from foosball.runtime import Inputs, Outputs
from foosball.vision.config import DetectorConfig, VisionSettings
from foosball.vision.learn import LearnError
from foosball.vision.sources import CapturedFrame, MemorySource
from foosball.vision.tracker import BallTracker
from foosball.wire import catalogue
from foosball.wire.catalogue import (
    Agent,
    BallState,
    BallStatus,
    LearnStage,
    SchemaError,
    VisionLearn,
)

TABLE = default_table()
WANTED = 16  # frames to learn from: 16 x LEARN_EVERY rendered frames
BLUE = DetectorConfig(hue_low=100, hue_high=120)  # finds no orange ball


def _scene(light: bool):
    from foosball.sim.vision_source import sim_eval_frames, white_ball_frames

    if not light:
        # seed 7: the ball in sight after the learning frames (seed 1's opening changed with the
        # tracker model: a player holds the ball 60 % hidden under a man there)
        return sim_eval_frames(WANTED * LEARN_EVERY + 40, 7, "match")
    return white_ball_frames(WANTED * LEARN_EVERY, 3)


@pytest.fixture(scope="module")
def orange():
    return _scene(light=False)


@pytest.fixture(scope="module")
def white():
    return _scene(light=True)


def request(number: int, frames: int = WANTED) -> VisionLearn:
    return VisionLearn(request=number, stage=LearnStage.REQUEST, frames=frames, hue_low=0,
                       hue_high=0, sat_low=0, sat_high=0, val_low=0, val_high=0,
                       ball_share=0.0, table_share=0.0, text="")


def tracker_core(calibration, detector: DetectorConfig = BLUE) -> BallTrackerCore:
    settings = replace(VisionSettings(), detector=detector)
    return BallTrackerCore(BallTracker(detector, settings.filter, calibration, TABLE), settings)


def frame_turn(core: BallTrackerCore, frame, index: int, messages: tuple = ()) -> Outputs:
    return core.step(Inputs(frame.capture_time_ns * 1e-9, messages,
                            CapturedFrame(frame.image, frame.capture_time_ns, index)))


def of_type(output: Outputs, cls: type) -> list:
    return [m for m in output.messages if isinstance(m, cls)]


def collect_job(core: BallTrackerCore, frames, number: int = 1) -> tuple[LearnJob, int]:
    """Request learning, step frames until the job goes to the hardware; every frame still
    gets its BallState on the way."""
    out = frame_turn(core, frames[0], 0, messages=(request(number),))
    for index, frame in enumerate(frames[1:], start=1):
        assert len(of_type(out, BallState)) == 1
        jobs = [a for a in out.actuation or () if isinstance(a, LearnJob)]
        if jobs:
            return jobs[0], index
        out = frame_turn(core, frame, index)
    raise AssertionError("no learning job")


def test_the_band_is_learnt_from_the_tracker_s_own_frames_then_tracks_the_ball(orange):
    frames, calibration = orange
    core = tracker_core(calibration)
    job, used = collect_job(core, frames)
    assert used == (WANTED - 1) * LEARN_EVERY + 1  # one frame kept in LEARN_EVERY
    # The core never learns in its step: the hardware runs the job (here, right now).
    outcome = run_learn_job(job)
    out = core.step(Inputs(frames[used].capture_time_ns * 1e-9, (), outcome))
    [reply] = of_type(out, VisionLearn)
    assert reply.stage is LearnStage.LEARNT and reply.request == 1
    assert reply.hue_low <= 10 and 18 <= reply.hue_high <= 35  # the orange ball's hues
    assert reply.ball_share > 0.85 and reply.table_share < 0.002
    assert reply.frames >= 3 and "now in use" in reply.text
    [kept] = [a for a in out.actuation if isinstance(a, DetectorConfig)]
    assert (kept.hue_low, kept.hue_high) == (reply.hue_low, reply.hue_high)
    assert core.tracker.detector.cfg == kept  # applied at once
    assert not of_type(out, BallState)  # the outcome's turn has no frame
    detected = visible = 0
    for index, frame in enumerate(frames[used:], start=used):
        [state] = of_type(frame_turn(core, frame, index), BallState)
        if frame.visible_fraction >= 0.5:
            visible += 1
            detected += state.status is BallStatus.DETECTED
    assert visible > 20 and detected >= 0.95 * visible


def test_a_ball_coloured_like_the_field_is_refused_with_the_reason(white):
    frames, calibration = white
    core = tracker_core(calibration, DetectorConfig())
    job, used = collect_job(core, frames, number=7)
    out = core.step(Inputs(frames[used].capture_time_ns * 1e-9, (), run_learn_job(job)))
    [reply] = of_type(out, VisionLearn)
    assert reply.stage is LearnStage.REFUSED and reply.request == 7
    assert "cannot tell the ball from the table" in reply.text
    assert out.actuation is None, "nothing kept"
    assert core.tracker.detector.cfg == DetectorConfig()


def test_for_the_background_detector_the_ball_s_own_band_is_taken(white):
    frames, calibration = white
    core = tracker_core(calibration, DetectorConfig(method="background"))
    job, used = collect_job(core, frames)
    out = core.step(Inputs(frames[used].capture_time_ns * 1e-9, (), run_learn_job(job)))
    [reply] = of_type(out, VisionLearn)
    assert reply.stage is LearnStage.LEARNT and "background detector" in reply.text
    assert (reply.hue_low, reply.hue_high) == (0, 179)  # a white ball: any hue
    assert core.tracker.detector.cfg.sat_high == reply.sat_high


def test_one_request_at_a_time_and_a_reply_for_each(orange):
    frames, calibration = orange
    core = tracker_core(calibration)
    frame_turn(core, frames[0], 0, messages=(request(1),))
    out = frame_turn(core, frames[1], 1, messages=(request(2),))
    [busy] = of_type(out, VisionLearn)
    assert busy.stage is LearnStage.REFUSED and busy.request == 2
    assert "request 1 is under way" in busy.text
    refused = LearnOutcome(1, None, "found a moving, round, ball-sized blob in 1 of 16 frames")
    [reply] = of_type(core.step(Inputs(1.0, (), refused)), VisionLearn)
    assert reply.stage is LearnStage.REFUSED and reply.text.startswith("found a moving")
    out = frame_turn(core, frames[2], 2, messages=(request(3),))  # free again
    assert not of_type(out, VisionLearn) and core.collecting is not None


def test_the_camera_learns_on_a_worker_and_hands_the_outcome_back_as_a_sample():
    image = np.zeros((480, 640, 3), np.uint8)
    camera = Camera(MemorySource([image, image]))

    def refuse():
        raise LearnError("the ball did not move")

    camera.act((LearnJob(4, refuse),))
    assert camera.wait_for_learning(30.0)
    outcome = camera.sense(0.0)
    assert outcome == LearnOutcome(4, None, "the ball did not move")
    assert isinstance(camera.sense(0.0), CapturedFrame)  # then frames as before


def test_vision_learn_travels_both_ways_only_from_its_senders():
    reply = replace(request(5), stage=LearnStage.LEARNT, hue_low=4, hue_high=26, sat_low=169,
                    sat_high=255, val_low=30, val_high=255, frames=14, ball_share=1.0,
                    table_share=0.001, text="learnt from 14 frames with the ball; now in use")
    for message in (request(5), reply):
        assert catalogue.from_body(VisionLearn, catalogue.to_body(message)) == message
    assert catalogue.BY_TYPE_ID[18] is VisionLearn
    for sender in (Agent.GAME_PANEL, Agent.TOOL, Agent.BALL_TRACKER):
        catalogue.check_sender(reply, sender)
    with pytest.raises(SchemaError, match="STRATEGY may not send VisionLearn"):
        catalogue.check_sender(request(5), Agent.STRATEGY)


def test_frames_that_do_not_come_end_the_request_with_the_reason(orange):
    frames, calibration = orange
    core = tracker_core(calibration)
    for index in range(7):  # two frames kept, then the camera stops
        frame_turn(core, frames[index], index, messages=(request(1),) if index == 0 else ())
    started = frames[0].capture_time_ns * 1e-9
    assert not of_type(core.step(Inputs(started + 9.9, ())), VisionLearn)
    [reply] = of_type(core.step(Inputs(started + 10.1, ())), VisionLearn)
    assert reply.stage is LearnStage.REFUSED and reply.request == 1
    assert reply.text.startswith("only 2 of the 16 frames came in 10 s")
    assert core.collecting is None  # a new request may come


def test_a_yuyv_camera_s_frames_are_learnt_from_as_bgr(orange):
    from foosball.lab.vision.bench import to_yuyv

    frames, calibration = orange
    settings = replace(VisionSettings(), detector=BLUE)
    core = BallTrackerCore(BallTracker(BLUE, settings.filter, calibration, TABLE, "yuyv"),
                           settings)
    yuyv = [replace(frame, image=to_yuyv(frame.image)) for frame in frames]
    job, used = collect_job(core, yuyv)
    kept = job.learn.args[0]  # type: ignore[attr-defined]
    assert len(kept) == WANTED and kept[0].shape == frames[0].image.shape  # BGR
    out = core.step(Inputs(frames[used].capture_time_ns * 1e-9, (), run_learn_job(job)))
    [reply] = of_type(out, VisionLearn)
    assert reply.stage is LearnStage.LEARNT, reply.text
