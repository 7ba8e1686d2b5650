"""Calibration as a person does it at the table: the layout documented, an example to
edit, a layout that does not fit refused with what to check, the ball's diameter set."""

from __future__ import annotations

import json
import math
import re

import cv2
import pytest

from foosball.cli import main
from foosball.geometry import default_table
from foosball.lab.vision.synthetic import LAYOUT, SynthCamera, ball_pixel, render
from foosball.vision.calibration import (
    CalibrationRefused,
    Marker,
    MarkerLayout,
    calibrate,
    load_calibration,
)
from foosball.vision.config import (
    DetectorConfig,
    FilterConfig,
    VisionConfigError,
    parse_settings,
)
from foosball.vision.tracker import BallTracker, TrackStatus

CAMERA = SynthCamera()
RADIUS = 0.0173


def relaid(change) -> MarkerLayout:
    """LAYOUT with each marker rebuilt by change(id, x, y) -> Marker."""
    markers = []
    for m in LAYOUT.markers:
        x = sum(c[0] for c in m.corners) / 4
        y = sum(c[1] for c in m.corners) / 4
        markers.append(change(m.marker_id, x, y))
    return MarkerLayout(tuple(markers))


@pytest.fixture(scope="module")
def markers_frame():
    return render(CAMERA, None)


def test_the_help_documents_the_layout_and_the_example_calibrates_the_simulated_table(
        tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["vision", "calibrate", "--help"])
    text = capsys.readouterr().out
    for key in ("id", "x, y", "size", "yaw", "corners", "height", "layout-example"):
        assert key in text
    example = tmp_path / "markers.json"
    assert main(["vision", "layout-example", "--output", str(example)]) == 0
    # The example is where the simulator puts its markers: a person edits it to measure.
    from foosball.sim.vision_source import sim_calibration_frame

    image, _, focal = sim_calibration_frame()
    cv2.imwrite(str(tmp_path / "table.png"), image)
    output = tmp_path / "calibration.json"
    assert main(["vision", "calibrate", str(tmp_path / "table.png"), "--markers",
                 str(example), "--focal-px", str(focal), "--output", str(output)]) == 0
    assert load_calibration(output).reprojection_rms_px < 1.0


@pytest.mark.parametrize(("change", "hint"), [
    (lambda i, x, y: Marker.square(i, x, y, 0.08, math.pi if i == 1 else 0.0),
     r"marker 1 lies at yaw -?[0-2] deg, the layout says 180 deg"),
    (lambda i, x, y: Marker.square(i, x, y, 0.05),
     r"marker 0 measures (79|80|81) mm, the layout says 50 mm"),
    (lambda i, x, y: Marker.square({0: 1, 1: 0}.get(i, i), x, y, 0.08),
     "ids at the wrong places"),
])
def test_a_layout_that_does_not_fit_is_refused_with_what_to_check(markers_frame, change, hint):
    with pytest.raises(CalibrationRefused, match="reprojection RMS") as refused:
        calibrate(markers_frame, relaid(change), RADIUS, focal_px=CAMERA.focal)
    assert re.search(hint, str(refused.value))


def test_the_cli_refuses_and_keeps_no_file(markers_frame, tmp_path, capsys):
    cv2.imwrite(str(tmp_path / "m.png"), markers_frame)
    turned = relaid(lambda i, x, y: Marker.square(i, x, y, 0.08, math.pi / 2))
    (tmp_path / "turned.json").write_text(json.dumps(turned.to_json()))
    code = main(["vision", "calibrate", str(tmp_path / "m.png"), "--markers",
                 str(tmp_path / "turned.json"), "--focal-px", str(CAMERA.focal),
                 "--output", str(tmp_path / "never.json")])
    assert code == 1
    assert "yaw" in capsys.readouterr().err
    assert not (tmp_path / "never.json").exists()


def test_the_ball_diameter_is_a_setting(markers_frame):
    assert parse_settings({"ball_diameter": 0.036}).ball_diameter == 0.036
    with pytest.raises(VisionConfigError, match="ball_diameter"):
        parse_settings({"ball_diameter": 0.36})
    calibration = calibrate(markers_frame, LAYOUT, RADIUS, focal_px=CAMERA.focal)
    big = 0.018  # a 36 mm ball
    tracker = BallTracker(DetectorConfig(), FilterConfig(), calibration, default_table(),
                          ball_diameter=2 * big)
    assert tracker.projector.calibration.ball_radius == big
    standard = BallTracker(DetectorConfig(), FilterConfig(), calibration, default_table())
    u, v = ball_pixel(CAMERA, 0.5, 0.27, big)
    assert tracker.projector.radius_px(u, v) == pytest.approx(
        standard.projector.radius_px(u, v) * big / default_table().ball.radius, rel=0.01)
    result = tracker.process(render(CAMERA, (0.5, 0.27), radius=big), 0)
    assert result.status is TrackStatus.DETECTED
    assert math.hypot(result.x - 0.5, result.y - 0.27) < 0.0015
