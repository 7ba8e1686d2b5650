from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from foosball.agents.ball_tracker import BallTrackerCore, Camera, calibration_status
from foosball.geometry import default_table
from foosball.lab.vision.synthetic import LAYOUT, SynthCamera, render
from foosball.runtime import AgentRuntime, Inputs
from foosball.runtime.settings import SafetySettings
from foosball.vision.calibration import Calibration, calibrate
from foosball.vision.config import VisionConfigError, VisionSettings
from foosball.vision.sources import CapturedFrame, MemorySource
from foosball.vision.tracker import BallTracker
from foosball.wire.catalogue import (
    Agent,
    AlarmCode,
    BallState,
    BallStatus,
    CalibrationStatus,
    Heartbeat,
    SafetyState,
    VisionConfig,
    VisionPreview,
)
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport

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


def tick(now_ns: int, frame: CapturedFrame | None = None, messages: tuple = ()) -> Inputs:
    """The runtime's Inputs for one turn at `now_ns` on the board's monotonic clock."""
    return Inputs(now_ns * 1e-9, messages, frame)


def camera_lost(output) -> list:
    return [c for c in output.causes if c.code is AlarmCode.CAMERA_LOST]


def of_type(output, cls):
    return [m for m in output.messages if isinstance(m, cls)]


def test_one_ball_state_per_frame_with_the_capture_time(calibration, frames):
    agent = core(calibration)
    states = []
    for i, image in enumerate(frames):
        frame = CapturedFrame(image, 1_000_000_000 + i * 5 * MS, 40 + i)
        out = agent.step(tick(2_000_000_000 + i * 5 * MS, frame=frame))
        [state] = of_type(out, BallState)
        assert state.capture_time == frame.capture_time_ns
        assert state.frame == frame.index
        states.append(state)
    assert all(s.status is BallStatus.DETECTED for s in states)
    assert states[0].covariance[2] > 10.0  # one sighting: the velocity is not known yet
    assert states[-1].x == pytest.approx(-0.2 + 0.07, abs=0.002)
    assert states[-1].vx == pytest.approx(2.0, abs=0.2)  # 10 mm per 5 ms


def test_the_calibration_is_reported_at_start_then_every_second(calibration, frames):
    agent = core(calibration)
    reported_at = []
    for k in range(500):  # 2.5 s of 5 ms turns, a frame in every other one
        frame = CapturedFrame(frames[k % 8], k * 5 * MS, k) if k % 2 else None
        out = agent.step(tick(k * 5 * MS, frame=frame))
        reported_at += [k * 5 for _ in of_type(out, CalibrationStatus)]
    assert reported_at == [0, 1000, 2000]  # ms: at once, before any frame, then at 1 Hz
    status = agent.calibration_status
    assert status.made_at == round(calibration.created.timestamp() * 1e9)
    assert status.reprojection_rms_px == calibration.reprojection_rms_px
    assert status.reprojection_max_px == calibration.reprojection_max_px
    assert status.table_rms_m == calibration.table_rms_m
    assert (status.width, status.height, status.markers) == (640, 480, 4)


def test_a_calibration_file_without_its_time_is_reported_as_made_at_zero(calibration):
    assert calibration_status(dataclasses.replace(calibration, created=None)).made_at == 0


def test_the_state_is_boot_until_the_first_frame(calibration, frames):
    agent = core(calibration)
    assert agent.step(tick(0)).state is SafetyState.BOOT
    assert agent.step(tick(5 * MS, CapturedFrame(frames[0], 0, 0))).state is SafetyState.READY


def test_camera_loss_is_a_cause_until_frames_come_back(calibration, frames):
    agent = core(calibration)  # camera_timeout_s 0.05
    agent.step(tick(0, CapturedFrame(frames[0], 0, 0)))
    present = [bool(camera_lost(agent.step(tick(k * 5 * MS)))) for k in range(1, 30)]
    assert present == [False] * 10 + [True] * 19  # after 50 ms without a frame
    out = agent.step(tick(200 * MS, CapturedFrame(frames[1], 5 * MS, 1)))
    assert of_type(out, BallState) and not camera_lost(out)
    assert agent.state is SafetyState.READY


def test_no_frame_at_all_after_start_up_is_a_camera_loss(calibration):
    agent = core(calibration, startup_grace_s=0.5)
    assert not camera_lost(agent.step(tick(0)))
    assert not camera_lost(agent.step(tick(400 * MS)))
    assert "no camera frame for 600 ms" in camera_lost(agent.step(tick(600 * MS)))[0].text


def test_panel_thresholds_apply_and_bad_ones_are_ignored(calibration, frames):
    agent = core(calibration)
    # Hue band on blue: the orange ball disappears.
    agent.step(tick(0, messages=(panel(hue_low=100, hue_high=130),)))
    for i, image in enumerate(frames[:3]):
        out = agent.step(tick(i * 5 * MS, CapturedFrame(image, i * 5 * MS, i)))
        assert of_type(out, BallState)[0].status is BallStatus.LOST
    agent.step(tick(20 * MS, messages=(panel(sat_low=250, sat_high=10),)))
    assert agent.rejected_configs == 1
    assert agent.detector_cfg.hue_low == 100
    agent.step(tick(25 * MS, messages=(panel(),)))
    statuses = [of_type(agent.step(tick((30 + 5 * i) * MS, CapturedFrame(
        image, (30 + 5 * i) * MS, 10 + i))), BallState)[0].status for i, image in enumerate(frames)]
    assert statuses[-1] is BallStatus.DETECTED


def test_preview_mask_on_request_one_part_per_frame(calibration, frames):
    agent = core(calibration, preview_size=(160, 120))
    agent.step(tick(0, messages=(panel(preview=True),)))
    parts = []
    for i, image in enumerate(frames[:4]):
        out = agent.step(tick(i * 5 * MS, CapturedFrame(image, i * 5 * MS, i)))
        assert len(of_type(out, VisionPreview)) == 1
        parts += of_type(out, VisionPreview)
    first = [p for p in parts if p.frame == parts[0].frame]
    assert first[0].parts == 3 and [p.part for p in first] == [0, 1, 2]  # 160*120/8 = 2400 B
    mask = np.unpackbits(np.frombuffer(b"".join(p.mask for p in first), np.uint8))
    mask = mask.reshape(120, 160)
    _ys, xs = np.nonzero(mask)
    assert 0 < len(xs) < 60  # the ball, a few pixels at this scale
    agent.step(tick(30 * MS, messages=(panel(preview=False),)))
    out = agent.step(tick(35 * MS, CapturedFrame(frames[5], 35 * MS, 5)))
    assert not of_type(out, VisionPreview)


def test_runs_in_the_runtime_with_the_camera_as_its_hardware(calibration, frames, clock):
    hub = MemoryHub()
    key = bytes(range(32))
    vision = Endpoint(MemoryTransport(hub), WireCodec(key, Agent.BALL_TRACKER, clock=clock))
    panel_end = Endpoint(MemoryTransport(hub), WireCodec(key, Agent.GAME_PANEL, clock=clock))
    runtime = AgentRuntime(core(calibration), vision, SafetySettings(deadlines={}),
                           hardware=Camera(MemorySource(frames, fps=200.0)),
                           monotonic=lambda: clock() * 1e-9, wall_ns=clock, health=None)
    panel_end.send(panel(preview=True))
    for _ in range(len(frames) + 1):
        clock.advance(0.005)
        runtime.io_turn(0.0)
        runtime.work_turn(0.0)
        runtime.io_turn(0.0)
    sent = [r.message for r in panel_end.receive(0.0)]
    states = [m for m in sent if isinstance(m, BallState)]
    assert [s.frame for s in states] == list(range(len(frames)))
    assert [s.capture_time for s in states] == [round(i * 5e6) for i in range(len(frames))]
    assert any(isinstance(m, VisionPreview) for m in sent)
    assert [m for m in sent if isinstance(m, CalibrationStatus)] == [
        calibration_status(calibration)]  # once: the run is shorter than a second
    beats = [m for m in sent if isinstance(m, Heartbeat)]
    assert beats and beats[-1].agent is Agent.BALL_TRACKER and beats[-1].state is \
        SafetyState.READY


def test_a_frame_of_the_wrong_size_is_a_camera_loss_not_a_position(calibration, frames):
    agent = core(calibration)
    small = np.zeros((240, 320, 3), np.uint8)
    out = agent.step(tick(0, CapturedFrame(small, 0, 0)))
    [cause] = camera_lost(out)
    assert "320x240" in cause.text
    assert not of_type(out, BallState)
    assert camera_lost(agent.step(tick(5 * MS, CapturedFrame(small, 5, 1))))  # still present
    out = agent.step(tick(10 * MS, CapturedFrame(frames[0], 10 * MS, 2)))
    assert of_type(out, BallState) and not camera_lost(out)
    assert agent.state is SafetyState.READY


def test_thresholds_tuned_on_the_panel_are_kept_on_the_board(calibration, tmp_path):
    from foosball.vision.config import load_thresholds

    kept = tmp_path / "thresholds.json"
    agent = core(calibration)
    camera = Camera(MemorySource([np.zeros((480, 640, 3), np.uint8)]), str(kept))
    camera.act(agent.step(tick(0, messages=(panel(hue_low=3, hue_high=25),))).actuation)
    assert agent.step(tick(5 * MS)).actuation is None, "kept once, not every turn"
    restored = load_thresholds(str(kept), VisionSettings().detector)
    assert (restored.hue_low, restored.hue_high) == (3, 25)
    camera.act(agent.step(tick(10 * MS, messages=(panel(sat_low=250, sat_high=10),))).actuation)
    assert load_thresholds(str(kept), VisionSettings().detector) == restored, \
        "a refused config replaces nothing"
    kept.write_text('{"hue_low": 3}')
    with pytest.raises(VisionConfigError, match=r"thresholds\.json"):
        load_thresholds(str(kept), VisionSettings().detector)
