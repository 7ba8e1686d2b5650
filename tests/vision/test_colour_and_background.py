"""The ball's colour learnt from frames of it rolling; a white ball on a light field, seen
obliquely, found by the background detector where no colour band can find it."""

from __future__ import annotations

import json

import cv2
import pytest

from foosball.cli import main
from foosball.sim.vision_source import WHITE_BALL_BAND, sim_eval_frames, white_ball_frames
from foosball.vision.calibration import write_calibration
from foosball.vision.config import (
    COLOUR_FIELDS,
    THRESHOLD_FIELDS,
    DetectorConfig,
    load_thresholds,
)
from foosball.vision.evaluate import evaluate

WHITE_BAND = WHITE_BALL_BAND


def _scene(frames: int, seed: int, light: bool):
    return white_ball_frames(frames, seed) if light else sim_eval_frames(frames, seed, "shots")


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
    assert set(json.loads(thresholds.read_text())["detector"]) == set(COLOUR_FIELDS)
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


def _background_tracker(frames, calibration):
    """The tracker with the background detector and the band the learning hands over when
    it refuses (as `benchmarks/vision_tables.py` does), and the frames after the learning."""
    from dataclasses import replace

    from foosball.geometry import default_table
    from foosball.vision.calibration import BallProjector
    from foosball.vision.config import FilterConfig
    from foosball.vision.field import FieldRegion
    from foosball.vision.learn import LearnError, learn_colour
    from foosball.vision.tracker import BallTracker

    projector = BallProjector(calibration)
    field = FieldRegion(projector, default_table()).mask()
    with pytest.raises(LearnError) as refused:
        learn_colour([f.image for f in frames[:60]], DetectorConfig(), field,
                     projector.radius_px)
    band = replace(refused.value.band, method="background")
    return band, BallTracker(band, FilterConfig(), calibration, default_table()), frames[60:]


def test_a_white_ball_in_full_view_is_read_whole_by_the_background_detector(white):
    """Its mask lacks the shaded side (too dark for the band) and, where it matches the
    field, some of the lit side, so the blob looked cut and was fitted as a partly hidden
    ball (16 of 26 fully visible balls here before, position p95 2.94 mm over the run);
    the disc test reads it whole (1 of 26; 1.14 mm over the run with the edge fit below)."""
    import math

    from foosball.vision.tracker import TrackStatus

    frames, calibration = white
    band, tracker, after = _background_tracker(frames, calibration)
    taken_partial = in_view = 0
    errors = []
    for frame in after:
        result = tracker.process(frame.image, frame.capture_time_ns)
        if result.status == TrackStatus.DETECTED and frame.visible_fraction >= 0.999:
            in_view += 1
            taken_partial += result.detection.partial
            errors.append(math.hypot(result.x - frame.ball_xy[0], result.y - frame.ball_xy[1]))
    assert in_view >= 20
    assert taken_partial <= 0.1 * in_view, (taken_partial, in_view)
    assert sorted(errors)[int(0.95 * len(errors))] < 0.002
    result = evaluate(after, calibration, detector_cfg=band)
    assert result["false_detections"] == 0 and result["detection_rate"] >= 0.75
    assert result["position_error"]["p95_mm"] < 2.2, result["position_error"]


def test_a_white_ball_cut_by_the_window_s_edge_is_found_whole_around_it(white):
    """A window placed by a wrong prediction (after a bounce) cuts the ball: the background
    detector looks again around what it found and reads the ball whole, within 0.6 px."""
    frames, calibration = white
    _, tracker, after = _background_tracker(frames, calibration)
    projector = tracker.projector
    tried = 0
    for frame in after:
        tracker.process(frame.image, frame.capture_time_ns)  # the model forms and follows
        if not tracker.detector.ready or frame.visible_fraction < 0.999 or tried >= 5:
            continue
        u, v, metres_per_px = projector.to_pixel_and_scale(*frame.ball_xy)
        radius = projector.calibration.ball_radius / metres_per_px
        # A window whose right edge runs through the ball's middle.
        found = tracker.detector.search_window(frame.image, u - 12, v, 12, radius)
        if found is None:
            continue
        tried += 1
        assert not found.partial
        assert abs(found.u - u) < 0.6 and abs(found.v - v) < 0.6, (found, u, v)
    assert tried >= 3


def test_a_white_ball_partly_hidden_is_fitted_to_its_edge_against_the_table(white):
    """Where the ball meets the table the difference from the model is its own rim, so a
    partly hidden ball is fitted there, not to its mask's outline, which lacks the shaded
    side (measured on this scene's balls less than 95 % visible: p95 0.87 mm, max 1.9 mm
    from the truth; 3.04 and 6.9 mm before)."""
    import math

    from foosball.vision.tracker import TrackStatus

    frames, calibration = white
    _, tracker, after = _background_tracker(frames, calibration)
    errors = []
    for frame in after:
        result = tracker.process(frame.image, frame.capture_time_ns)
        if result.status == TrackStatus.DETECTED and 0.0 < frame.visible_fraction < 0.95:
            x, y = tracker.projector.to_table(result.detection.u, result.detection.v)
            errors.append(math.hypot(x - frame.ball_xy[0], y - frame.ball_xy[1]))
    assert len(errors) >= 30
    assert sorted(errors)[int(0.95 * len(errors))] < 0.0015, sorted(errors)[-5:]
    assert max(errors) < 0.003


def test_learn_colour_writes_the_one_colour_file_detect_and_the_board_read(
        orange, tmp_path, capsys):
    """Issue 32: learn-colour's file was refused by `detect --settings` ("unknown keys"),
    and `detect --config` ignored the board's thresholds_file. One format, one loader."""
    frames, calibration = orange
    colour = tmp_path / "colour.json"
    code, _, err = _learn(frames[:60], calibration, tmp_path / "clip", capsys,
                          "--output", str(colour))
    assert code == 0, err
    learnt = load_thresholds(str(colour), DetectorConfig())
    calibration_file = str(tmp_path / "calibration.json")
    clip = tmp_path / "held-out"
    clip.mkdir()
    held_out = frames[90:130]  # the learning's frames 0-59 hold the ball only up to 20
    for i, frame in enumerate(held_out):
        cv2.imwrite(str(clip / f"{i:03d}.png"), frame.image)
    with_ball = sum(frame.ball_xy is not None for frame in held_out)

    def detect(*how: str) -> list[dict]:
        code = main(["vision", "detect", str(clip), "--calibration", calibration_file, *how])
        out, err = capsys.readouterr()
        assert code == 0, err
        return [json.loads(line) for line in out.splitlines()]

    by_settings = detect("--settings", str(colour))
    assert with_ball >= 30
    # per frame (no tracking), among moving men: 31 of the 40 on 2026-12-06
    assert sum(entry["found"] for entry in by_settings) >= 0.7 * with_ball
    assert not any(entry["found"] for entry, frame in zip(by_settings, held_out, strict=True)
                   if frame.ball_xy is None)
    # The board names the same file; detect --config and the agent's loader take it in.
    board = tmp_path / "board.toml"
    board.write_text(f'[wire]\ntransport = "udp"\n[ball_tracker]\ncalibration = '
                     f'"{calibration_file}"\nthresholds_file = "{colour}"\n'
                     '[ball_tracker.source]\nkind = "v4l2"\n'
                     # a band that finds nothing, so only the file's can find the ball
                     "[ball_tracker.detector]\nhue_low = 100\nhue_high = 110\n")
    assert detect("--config", str(board)) == by_settings
    from foosball.config import load_agent_settings
    from foosball.vision.config import with_thresholds_file

    on_board = with_thresholds_file(load_agent_settings(str(board), "ball_tracker"))
    assert on_board.detector == learnt


def test_a_colour_file_kept_before_issue_32_still_reads_and_others_are_refused(tmp_path):
    from foosball.vision.config import VisionConfigError, load_settings, save_thresholds

    old = tmp_path / "old.json"  # what the game panel kept on a board until now
    tuned = DetectorConfig(hue_low=3, hue_high=25, min_area=30.0)
    old.write_text(json.dumps({f: getattr(tuned, f) for f in THRESHOLD_FIELDS}))
    assert load_thresholds(str(old), DetectorConfig()) == tuned
    assert load_settings(old).detector == tuned
    new = tmp_path / "new.json"
    save_thresholds(str(new), tuned)
    assert set(json.loads(new.read_text())) == {"_comment", "detector"}
    assert load_thresholds(str(new), DetectorConfig()) == tuned == load_settings(new).detector
    for wrong, says in (({"detector": {"hue_low": 3}}, r"\[detector\] hue_high: missing"),
                        ({"detector": {**json.loads(new.read_text())["detector"],
                                       "roi_sigmas": 3.0}},
                         r"\[detector\] roi_sigmas: not a colour key"),
                        ({"detector": {}, "filter": {}}, "expected a colour file")):
        new.write_text(json.dumps(wrong))
        with pytest.raises(VisionConfigError, match=says):
            load_thresholds(str(new), DetectorConfig())


def test_the_advice_for_a_ball_coloured_like_the_field_leads_to_a_file_that_tracks_it(
        white, tmp_path, capsys):
    """The refusal says to use --for-background; the file it writes names the background
    detector, so `detect --track --settings` finds the ball with no hand edit."""
    frames, calibration = white
    colour = tmp_path / "colour.json"
    code, out, err = _learn(frames[:60], calibration, tmp_path / "clip", capsys,
                            "--output", str(colour), "--for-background", "--json")
    assert code == 0, err
    assert json.loads(out)["method"] == "background"
    assert json.loads(colour.read_text())["detector"]["method"] == "background"
    clip = tmp_path / "whole"
    clip.mkdir()
    for i, frame in enumerate(frames):
        cv2.imwrite(str(clip / f"{i:03d}.png"), frame.image)
    code = main(["vision", "detect", str(clip), "--calibration",
                 str(tmp_path / "calibration.json"), "--settings", str(colour), "--track"])
    out, err = capsys.readouterr()
    assert code == 0, err
    entries = [json.loads(line) for line in out.splitlines()]
    # the model forms over the first 7 x 8 frames: the ball is found after that
    later = [(e, f) for e, f in zip(entries, frames, strict=True)][64:]
    with_ball = [e for e, f in later if f.ball_xy is not None]
    assert sum(e["found"] for e in with_ball) >= 0.7 * len(with_ball)
    assert sum(e["found"] for e, f in later if f.ball_xy is None) <= 2
