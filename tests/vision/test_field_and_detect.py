"""Nothing outside the playing field is a candidate, except the goal mouths; `vision
detect` reads folders and videos and filters like the tracker."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from foosball.cli import main
from foosball.geometry import default_table
from foosball.lab.vision.evaluate import evaluate
from foosball.lab.vision.synthetic import BALL_BGR, LAYOUT, SynthCamera, render
from foosball.vision.calibration import calibrate, write_calibration
from foosball.vision.config import DetectorConfig, FilterConfig
from foosball.vision.tracker import BallTracker

CAMERA = SynthCamera()
TABLE = default_table()
RADIUS = TABLE.ball.radius
# The user's widened band (hue 5-25, saturation from 160, value from 80, and a little
# more): it takes in the simulator's wooden frame, speckled by sensor noise.
WIDE = DetectorConfig(hue_low=5, hue_high=25, sat_low=150, val_low=80)


@pytest.fixture(scope="module")
def calibration():
    return calibrate(render(CAMERA, None), LAYOUT, RADIUS, focal_px=CAMERA.focal)


def speckled_frame(ball: tuple[float, float] | None, seed: int = 0) -> np.ndarray:
    """The ball on the field and 1-pixel ball-coloured dots all over the border."""
    rng = np.random.default_rng(seed)
    dots = []
    for _ in range(300):
        x, y = rng.uniform(-0.75, 0.75), rng.uniform(-0.45, 0.45)
        if abs(x) > 0.62 or abs(y) > 0.36:  # off the field (and its goal mouths)
            u, v = CAMERA.project(np.array([[x, y, 0.0]]))[0]
            dots.append((int(u), int(v), 1, BALL_BGR))
    return render(CAMERA, ball, extra_blobs=dots, seed=seed)


def test_the_wooden_frame_in_a_wide_band_never_makes_a_false_ball():
    from foosball.sim.vision_source import sim_eval_frames

    frames, calibration = sim_eval_frames(160, 2, "shots")
    tracker = BallTracker(WIDE, FilterConfig(), calibration, TABLE)
    frame_pixels = cv2.bitwise_and(tracker.detector.frame_mask(frames[0].image, (640, 480)),
                                   cv2.bitwise_not(tracker.field.mask()))
    assert np.count_nonzero(frame_pixels) > 100  # the band does take in the frame
    report = evaluate(frames, calibration, detector_cfg=WIDE)
    # Before the field mask: 2 false balls here, position p95 610 mm.
    assert report["false_detections"] == 0
    assert report["detection_rate"] >= 0.9  # (the default band: 1.0)
    assert report["position_error"]["p95_mm"] < 3.5  # (the default band: 1.9 mm)


def test_noise_dots_around_the_field_do_not_hide_the_ball(calibration):
    tracker = BallTracker(DetectorConfig(), FilterConfig(), calibration, TABLE)
    for seed in range(3):
        found = tracker.detector.search_frame(speckled_frame((0.31, -0.2), seed))
        assert found is not None
        assert tracker.projector.to_table(found.u, found.v) == pytest.approx((0.31, -0.2),
                                                                             abs=0.002)
        assert tracker.detector.search_frame(speckled_frame(None, seed)) is None


@pytest.mark.parametrize(("x", "y", "candidate"), [
    (0.63, 0.0, True),  # in the goal mouth, past the goal line
    (0.63, 0.2, False),  # beyond the end wall beside the goal
    (0.2, 0.37, False),  # beyond the side wall
    (0.55, 0.3, True),  # in a corner of the field
])
def test_only_the_field_and_the_goal_mouths_hold_candidates(calibration, x, y, candidate):
    tracker = BallTracker(DetectorConfig(), FilterConfig(), calibration, TABLE)
    u, v = CAMERA.project(np.array([[x, y, RADIUS]]))[0]
    radius = tracker.projector.radius_px(u, v)
    frame = render(CAMERA, None, extra_blobs=[(round(u), round(v), round(radius), BALL_BGR)])
    assert (tracker.detector.search_frame(frame) is not None) is candidate


def test_detect_reads_a_folder_and_a_video_one_json_line_per_frame(calibration, tmp_path,
                                                                    capsys):
    write_calibration(calibration, tmp_path / "calibration.json")
    folder = tmp_path / "frames"
    folder.mkdir()
    balls = [(0.31 - 0.01 * i, -0.2) for i in range(3)]
    video = cv2.VideoWriter(str(tmp_path / "clip.avi"), cv2.VideoWriter.fourcc(*"MJPG"),
                            200.0, (CAMERA.width, CAMERA.height))
    for i, ball in enumerate(balls):
        image = speckled_frame(ball, i)
        cv2.imwrite(str(folder / f"{i:03d}.png"), image)
        video.write(image)
    video.release()
    code = main(["vision", "detect", str(folder), str(tmp_path / "clip.avi"),
                 "--calibration", str(tmp_path / "calibration.json")])
    assert code == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["source"].endswith("frames"), e["frame"]) for e in lines[:3]] == [
        (True, 0), (True, 1), (True, 2)]
    assert [e["frame"] for e in lines[3:]] == [0, 1, 2]
    for entry, ball in zip(lines, balls + balls, strict=True):
        assert entry["found"]
        assert entry["table_m"] == pytest.approx(ball, abs=0.003)
    code = main(["vision", "detect", str(folder), "--track", "--calibration",
                 str(tmp_path / "calibration.json")])
    assert code == 0
    tracked = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["status"] for e in tracked] == ["DETECTED"] * 3
