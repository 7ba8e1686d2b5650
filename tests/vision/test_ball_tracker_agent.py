from __future__ import annotations

import numpy as np
import pytest

from foosball.agents.ball_tracker import BallTrackerCore, Health, TrackerInput, run
from foosball.geometry import default_table
from foosball.vision.calibration import Calibration, calibrate
from foosball.vision.config import VisionSettings
from foosball.vision.sources import CapturedFrame, MemorySource
from foosball.vision.synthetic import LAYOUT, SynthCamera, render
from foosball.vision.tracker import BallTracker
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    BallState,
    BallStatus,
    Heartbeat,
    SafetyState,
    VisionConfig,
    VisionPreview,
)

TABLE = default_table()
CAMERA = SynthCamera()
MS = 1_000_000


@pytest.fixture(scope="module")
def calibration() -> Calibration:
    return calibrate(render(CAMERA, None), LAYOUT, TABLE.ball.radius, focal_px=CAMERA.focal)


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    return [render(CAMERA, (-0.2 + 0.01 * i, 0.05), seed=i) for i in range(8)]


def core(calibration: Calibration, **kwargs) -> BallTrackerCore:
    settings = VisionSettings()
    tracker = BallTracker(settings.detector, settings.filter, calibration, TABLE)
    return BallTrackerCore(tracker, settings, **kwargs)


def panel(**changes) -> VisionConfig:
    values = {"hue_low": 5, "hue_high": 22, "sat_low": 140, "sat_high": 255, "val_low": 110,
                  "val_high": 255, "min_area": 40.0, "max_area": 1200.0, "min_density": 0.3,
                  "max_eccentricity": 0.93, "preview": False}
    return VisionConfig(**(values | changes))


def of_type(output, cls):
    return [m for m in output.messages if isinstance(m, cls)]


def test_one_ball_state_per_frame_with_the_capture_time(calibration, frames):
    agent = core(calibration)
    states = []
    for i, image in enumerate(frames):
        frame = CapturedFrame(image, 1_000_000_000 + i * 5 * MS, 40 + i)
        out = agent.step(TrackerInput(now_ns=2_000_000_000 + i * 5 * MS, frame=frame))
        [state] = of_type(out, BallState)
        assert state.capture_time == frame.capture_time_ns
        assert state.frame == frame.index
        states.append(state)
    assert all(s.status is BallStatus.DETECTED for s in states)
    assert states[0].covariance[2] > 10.0  # one sighting: the velocity is not known yet
    assert states[-1].x == pytest.approx(-0.2 + 0.07, abs=0.002)
    assert states[-1].vx == pytest.approx(2.0, abs=0.2)  # 10 mm per 5 ms


def test_heartbeat_every_period_and_states(calibration, frames):
    agent = core(calibration, heartbeat_period_s=0.01)
    beats = []
    for k in range(10):  # steps every 5 ms, no frame yet
        beats += of_type(agent.step(TrackerInput(now_ns=k * 5 * MS, health=Health(12.0, 30.0,
                                                                                    55.0))),
                         Heartbeat)
    assert len(beats) == 5
    assert beats[0].agent is Agent.BALL_TRACKER and beats[0].state is SafetyState.BOOT
    assert beats[0].cpu_load == 12.0 and beats[0].temperature == 55.0
    agent.step(TrackerInput(now_ns=60 * MS, frame=CapturedFrame(frames[0], 0, 0)))
    [beat] = of_type(agent.step(TrackerInput(now_ns=70 * MS)), Heartbeat)
    assert beat.state is SafetyState.READY


def test_camera_loss_raises_one_latched_alarm(calibration, frames):
    agent = core(calibration)  # camera_timeout_s 0.05
    agent.step(TrackerInput(now_ns=0, frame=CapturedFrame(frames[0], 0, 0)))
    alarms = []
    for k in range(1, 30):
        alarms += of_type(agent.step(TrackerInput(now_ns=k * 5 * MS)), Alarm)
    [alarm] = alarms
    assert alarm.code is AlarmCode.CAMERA_LOST and alarm.latched
    assert alarm.source is Agent.BALL_TRACKER
    assert agent.state is SafetyState.FAULT
    out = agent.step(TrackerInput(now_ns=200 * MS, frame=CapturedFrame(frames[1], 5 * MS, 1)))
    assert of_type(out, BallState) and agent.state is SafetyState.READY


def test_no_frame_at_all_after_start_up_is_a_camera_loss(calibration):
    agent = core(calibration, startup_grace_s=0.5)
    assert not of_type(agent.step(TrackerInput(now_ns=0)), Alarm)
    assert not of_type(agent.step(TrackerInput(now_ns=400 * MS)), Alarm)
    assert of_type(agent.step(TrackerInput(now_ns=600 * MS)), Alarm)


def test_panel_thresholds_apply_and_bad_ones_are_ignored(calibration, frames):
    agent = core(calibration)
    # Hue band on blue: the orange ball disappears.
    agent.step(TrackerInput(now_ns=0, messages=(panel(hue_low=100, hue_high=130),)))
    for i, image in enumerate(frames[:3]):
        out = agent.step(TrackerInput(now_ns=i * 5 * MS, frame=CapturedFrame(image, i * 5 * MS, i)))
        assert of_type(out, BallState)[0].status is BallStatus.LOST
    agent.step(TrackerInput(now_ns=20 * MS, messages=(panel(sat_low=250, sat_high=10),)))
    assert agent.rejected_configs == 1
    assert agent.detector_cfg.hue_low == 100
    agent.step(TrackerInput(now_ns=25 * MS, messages=(panel(),)))
    statuses = [of_type(agent.step(TrackerInput(now_ns=(30 + 5 * i) * MS, frame=CapturedFrame(
        image, (30 + 5 * i) * MS, 10 + i))), BallState)[0].status for i, image in enumerate(frames)]
    assert statuses[-1] is BallStatus.DETECTED


def test_preview_mask_on_request_one_part_per_frame(calibration, frames):
    agent = core(calibration, preview_size=(160, 120))
    agent.step(TrackerInput(now_ns=0, messages=(panel(preview=True),)))
    parts = []
    for i, image in enumerate(frames[:4]):
        out = agent.step(TrackerInput(now_ns=i * 5 * MS, frame=CapturedFrame(image, i * 5 * MS, i)))
        assert len(of_type(out, VisionPreview)) == 1
        parts += of_type(out, VisionPreview)
    first = [p for p in parts if p.frame == parts[0].frame]
    assert first[0].parts == 3 and [p.part for p in first] == [0, 1, 2]  # 160*120/8 = 2400 B
    mask = np.unpackbits(np.frombuffer(b"".join(p.mask for p in first), np.uint8))
    mask = mask.reshape(120, 160)
    _ys, xs = np.nonzero(mask)
    assert 0 < len(xs) < 60  # the ball, a few pixels at this scale
    agent.step(TrackerInput(now_ns=30 * MS, messages=(panel(preview=False),)))
    out = agent.step(TrackerInput(now_ns=35 * MS, frame=CapturedFrame(frames[5], 35 * MS, 5)))
    assert not of_type(out, VisionPreview)


class FakeEndpoint:
    def __init__(self, inbox):
        self.inbox = list(inbox)
        self.sent = []

    def receive(self, timeout=0.0):
        out, self.inbox = self.inbox, []
        return out

    def send(self, message):
        self.sent.append(message)


class Received:
    def __init__(self, message):
        self.message = message


def test_run_adapter_moves_frames_and_messages(calibration, frames, clock):
    agent = core(calibration)
    source = MemorySource(frames, fps=200.0)
    endpoint = FakeEndpoint([Received(panel(preview=True))])

    def tick():
        clock.advance(0.005)
        return clock()

    run(agent, source, endpoint, tick, lambda: False, health=lambda: Health())
    states = [m for m in endpoint.sent if isinstance(m, BallState)]
    assert [s.frame for s in states] == list(range(len(frames)))
    assert [s.capture_time for s in states] == [round(i * 5e6) for i in range(len(frames))]
    assert any(isinstance(m, VisionPreview) for m in endpoint.sent)
    assert any(isinstance(m, Heartbeat) for m in endpoint.sent)


def test_a_frame_of_the_wrong_size_is_an_alarm_not_a_position(calibration, frames):
    agent = core(calibration)
    small = np.zeros((240, 320, 3), np.uint8)
    out = agent.step(TrackerInput(now_ns=0, frame=CapturedFrame(small, 0, 0)))
    [alarm] = of_type(out, Alarm)
    assert alarm.code is AlarmCode.CAMERA_LOST and "320x240" in alarm.text
    assert not of_type(out, BallState)
    assert not of_type(agent.step(TrackerInput(now_ns=5 * MS, frame=CapturedFrame(small, 5, 1))),
                       Alarm)  # raised once
    out = agent.step(TrackerInput(now_ns=10 * MS, frame=CapturedFrame(frames[0], 10 * MS, 2)))
    assert of_type(out, BallState) and agent.state is SafetyState.READY
