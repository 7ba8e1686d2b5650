"""The ball's colour learnt from frames of it rolling; a white ball on a light field, seen
obliquely, found by the background detector where no colour band can find it."""

from __future__ import annotations

import json

import cv2
import pytest

from foosball.cli import main
from foosball.vision.calibration import write_calibration
from foosball.vision.config import THRESHOLD_FIELDS, DetectorConfig, load_thresholds
from foosball.vision.evaluate import evaluate

WHITE_BAND = DetectorConfig(hue_low=0, hue_high=179, sat_low=0, sat_high=70, val_low=150)


def _scene(frames: int, seed: int, light: bool):
    from foosball.sim.render import CameraConfig, Palette
    from foosball.vision.sim_source import sim_eval_frames

    if not light:
        return sim_eval_frames(frames, seed, "shots")
    oblique = CameraConfig(position=(0.0, -0.15, 1.12), pitch=-0.12, roll=0.02)
    white_on_light = Palette(ball=(245.0, 245.0, 245.0), field=(200, 212, 205))
    return sim_eval_frames(frames, seed, "shots", camera=oblique, palette=white_on_light)


@pytest.fixture(scope="module")
def orange():
    return _scene(140, 3, light=False)


@pytest.fixture(scope="module")
def white():
    return _scene(200, 3, light=True)


def _learn(frames, calibration, folder, capsys, *extra) -> tuple[int, str, str]:
    folder.mkdir()
    for i, frame in enumerate(frames):
        cv2.imwrite(str(folder / f"{i:03d}.png"), frame.image)
    write_calibration(calibration, folder.parent / "calibration.json")
    code = main(["vision", "learn-colour", str(folder), "--calibration",
                 str(folder.parent / "calibration.json"), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_band_is_learnt_from_the_rolling_ball_and_tracks_it(orange, tmp_path, capsys):
    frames, calibration = orange
    thresholds, mask = tmp_path / "thresholds.json", tmp_path / "mask.png"
    code, out, _ = _learn(frames[:60], calibration, tmp_path / "clip", capsys, "--output",
                          str(thresholds), "--mask", str(mask), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["ball_share_in_band"] > 0.85 and report["table_share_in_band"] < 0.002
    assert set(json.loads(thresholds.read_text())) == set(THRESHOLD_FIELDS)
    assert cv2.imread(str(mask)).shape == (480, 1280, 3)  # the frame beside its mask
    learnt = load_thresholds(str(thresholds), DetectorConfig())
    result = evaluate(frames[60:], calibration, detector_cfg=learnt)
    assert result["detection_rate"] >= 0.97 and result["false_detections"] == 0


def test_a_ball_coloured_like_the_field_is_refused(white, tmp_path, capsys):
    frames, calibration = white
    code, _, err = _learn(frames[:60], calibration, tmp_path / "clip", capsys,
                          "--output", str(tmp_path / "never.json"))
    assert code == 1
    assert "cannot tell the ball from the table" in err and "background" in err
    assert not (tmp_path / "never.json").exists()


def test_the_background_detector_finds_a_white_ball_on_a_light_field(white):
    frames, calibration = white
    by_colour = evaluate(frames, calibration, detector_cfg=WHITE_BAND)
    assert by_colour["detection_rate"] < 0.1  # the band holds the whole field
    by_background = evaluate(frames, calibration,
                             detector_cfg=DetectorConfig(**{
                                 **{f: getattr(WHITE_BAND, f) for f in THRESHOLD_FIELDS},
                                 "method": "background"}))
    # The model forms over its first 7 x 8 frames; the ball is found after that.
    assert by_background["detection_rate"] >= 0.7  # 56 of the 200 frames form the model
    assert by_background["false_detections"] <= 2
    assert by_background["position_error"]["p50_mm"] < 3.5


def test_the_ball_s_own_band_with_its_rim_centres_the_background_detector(white):
    """Refused for colour, the learning still gives the ball's own band, rim included (its
    shaded side): the background detector's mask then holds the whole ball and its centre
    is not pulled to the lit side."""
    from dataclasses import replace

    from foosball.geometry import default_table
    from foosball.vision.calibration import BallProjector
    from foosball.vision.field import FieldRegion
    from foosball.vision.learn import LearnError, learn_colour

    frames, calibration = white
    projector = BallProjector(calibration)
    field = FieldRegion(projector, default_table()).mask()
    with pytest.raises(LearnError) as refused:
        learn_colour([f.image for f in frames[:60]], DetectorConfig(), field,
                     projector.radius_px)
    band = refused.value.band
    assert band is not None and (band.hue_low, band.hue_high) == (0, 179)
    result = evaluate(frames[60:], calibration, detector_cfg=replace(band, method="background"))
    assert result["detection_rate"] >= 0.7 and result["false_detections"] == 0
    assert result["position_error"]["p50_mm"] < 1.1, result["position_error"]
