from __future__ import annotations

import json

import cv2
import pytest

from foosball.cli import main
from foosball.geometry import default_table
from foosball.vision.calibration import load_calibration
from foosball.vision.config import parse_settings
from foosball.vision.synthetic import LAYOUT, SynthCamera, ball_pixel, render

CAMERA = SynthCamera()


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scene")
    cv2.imwrite(str(folder / "markers.png"), render(CAMERA, None))
    cv2.imwrite(str(folder / "ball.png"), render(CAMERA, (0.25, -0.12), seed=2))
    cv2.imwrite(str(folder / "empty.png"), render(CAMERA, None, seed=3))
    (folder / "markers.json").write_text(json.dumps(LAYOUT.to_json()))
    return folder


def test_calibrate_then_detect(scene, capsys):
    output = scene / "calibration.json"
    code = main(["vision", "calibrate", str(scene / "markers.png"), "--markers",
                 str(scene / "markers.json"), "--focal-px", str(CAMERA.focal),
                 "--output", str(output), "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["reprojection_rms_px"] < 0.6 and report["markers"] == [0, 1, 2, 3]
    assert load_calibration(output).reprojection_rms_px == pytest.approx(
        report["reprojection_rms_px"], abs=1e-4)

    code = main(["vision", "detect", str(scene / "ball.png"), str(scene / "empty.png"),
                 "--calibration", str(output)])
    assert code == 0
    ball, empty = _json_lines(capsys.readouterr().out)
    assert ball["found"] and not empty["found"]
    u, v = ball_pixel(CAMERA, 0.25, -0.12, default_table().ball.radius)
    assert ball["pixel"] == pytest.approx([u, v], abs=0.4)
    assert ball["table_m"] == pytest.approx([0.25, -0.12], abs=0.0015)


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_calibrate_reports_missing_markers(scene, capsys):
    blank = scene / "blank.png"
    cv2.imwrite(str(blank), render(CAMERA, None)[:, :200])
    code = main(["vision", "calibrate", str(blank), "--markers", str(scene / "markers.json"),
                 "--focal-px", "420", "--output", str(scene / "never.json")])
    assert code == 1
    assert "need at least 4" in capsys.readouterr().err
    assert not (scene / "never.json").exists()


def test_bench_times_both_pipelines(capsys):
    code = main(["vision", "bench", "--scene", "synthetic", "--frames", "40", "--repeats", "1",
                 "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ours_all_frames"]["frames"] == 40
    assert report["seed_style_full_frame"]["frames"] == 40
    assert report["ours_tracking"]["frames"] > 20  # timing figures are reported, not asserted
    second = report["second_paths"]  # the background detector and the rods, same frames
    assert second["human_rods_measurement"]["frames"] == 40
    assert "speedup_background_tracking_median" in second
    blocks = report["in_blocks"]  # the same, in turns of 16 frames
    assert blocks["frames_per_turn"] == 16
    assert blocks["ours_tracking"]["frames"] == report["ours_tracking"]["frames"]


def test_bench_in_blocks_times_every_frame_once_per_pass():
    from foosball.geometry import default_table
    from foosball.vision.bench import time_pipelines
    from foosball.vision.synthetic import synthetic_sequence

    frames, calibration = synthetic_sequence(21, 1)
    report = time_pipelines(frames, calibration, default_table(), repeats=2, block=8)
    assert report["frames_per_turn"] == 8
    assert report["ours_all_frames"]["frames"] == 42  # the last turn has 5 frames
    assert report["seed_style_full_frame"]["frames"] == 42


def test_default_settings_round_trip(capsys):
    assert main(["vision", "settings"]) == 0
    settings = parse_settings(json.loads(capsys.readouterr().out))
    assert settings.detector.hue_low == 7 and settings.filter.max_speed == 25.0


def test_settings_file_errors_name_the_field(tmp_path):
    """vision.json through the one settings parser (foosball.schema): the file, the table
    and the key, as a board file's errors."""
    from foosball.vision.config import VisionConfigError, load_settings

    path = tmp_path / "vision.json"
    for data, says in (
            ({"detector": {"hue_low": "orange"}},
             "vision.json: [detector] hue_low: an integer, not 'orange'"),
            ({"filter": {"gate": -1.0}}, "vision.json: [filter] gate: -1.0 is out of range (> 0)"),
            ({"detector": {"colour": 1}}, "vision.json: [detector]: unknown key colour; known: "),
            ({"camera_timeout_s": 0}, "vision.json: camera_timeout_s: 0 is out of range (> 0 s)"),
            ({"x": 1}, "vision.json: unknown key x; known: ball_diameter, "),
            ({"source": {"kind": "v4l2", "device": 0}},
             "vision.json: [source]: unknown key device; known: kind, options"),
            ({"detector": {"min_area": 2000.0}},
             "vision.json: [detector] min_area: 2000.0 is not below max_area (1200.0)"),
            ({"rods": {"decimation": 3}}, "vision.json: [rods] decimation: one of 1, 2, 4, not 3"),
            ({"detector": {"background_samples": 4}},
             "vision.json: [detector] background_samples: an odd number, not 4")):
        path.write_text(json.dumps(data))
        with pytest.raises(VisionConfigError) as refused:
            load_settings(path)
        assert str(refused.value).startswith(f"{path.parent}/{says}"), str(refused.value)
    path.write_text(json.dumps({"_comment": "a note", "detector": {"_comment": "another",
                                                                   "hue_low": 3}}))
    assert load_settings(path).detector.hue_low == 3  # notes are not settings


def test_calibrate_detect_and_learn_read_the_board_file(scene, tmp_path, capsys):
    """Issue 29: every `--config` failed with an AttributeError. calibrate writes the very
    calibration the board file names, so that file need not exist yet."""
    output = tmp_path / "camera.json"
    board = tmp_path / "board.toml"
    board.write_text(f'[wire]\ntransport = "udp"\n[ball_tracker]\ncalibration = "{output}"\n'
                     '[ball_tracker.source]\nkind = "v4l2"\n'
                     "[ball_tracker.detector]\nmin_area = 20\n")
    code = main(["vision", "calibrate", str(scene / "markers.png"), "--markers",
                 str(scene / "markers.json"), "--focal-px", str(CAMERA.focal),
                 "--output", str(output), "--json", "--config", str(board)])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    code = main(["vision", "detect", str(scene / "ball.png"), "--calibration", str(output),
                 "--config", str(board)])
    assert code == 0, capsys.readouterr().err
    assert _json_lines(capsys.readouterr().out)[0]["found"]
    board.write_text(board.read_text().replace("min_area = 20", "min_area = -5"))
    code = main(["vision", "detect", str(scene / "ball.png"), "--calibration", str(output),
                 "--config", str(board)])
    err = capsys.readouterr().err
    assert code == 1 and f"{board}: [ball_tracker.detector] min_area: -5 is out of range" in err
    assert "Traceback" not in err and "AttributeError" not in err
