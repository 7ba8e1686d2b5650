"""The tracking window's shortcuts: a lone whole ball read from its mask's moments (and
only such a ball), and the table interior looked up instead of projected; rendered frames
of the synthetic camera."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from foosball.geometry import default_table
from foosball.vision.calibration import BallProjector, calibrate
from foosball.vision.config import DetectorConfig
from foosball.vision.detector import BallDetector
from foosball.vision.field import FieldRegion
from foosball.vision.synthetic import (
    BALL_BGR,
    LAYOUT,
    SynthCamera,
    ball_pixel,
    render,
    render_with_truth,
)

CAMERA = SynthCamera()
TABLE = default_table()


@pytest.fixture(scope="module")
def projector() -> BallProjector:
    return BallProjector(calibrate(render(CAMERA, None), LAYOUT, TABLE.ball.radius,
                                   focal_px=CAMERA.focal))


@pytest.fixture(scope="module")
def detector(projector) -> BallDetector:
    field = FieldRegion(projector, TABLE)
    return BallDetector(DetectorConfig(), "bgr", (CAMERA.width, CAMERA.height),
                        radius_at=projector.radius_px, on_table=field.contains,
                        field_mask=field.mask(), table_interior=field.centre_mask())


def both_ways(detector: BallDetector, projector: BallProjector, image: np.ndarray,
              u: float, v: float, half: int = 14):
    """(outlines' answer, tracking answer, was the lone-ball path taken)."""
    by_outline = detector.search_window(image, u, v, half)
    radius = projector.radius_px(u, v)
    tracked = detector.search_window(image, u, v, half, radius)
    x0, y0, _, _ = detector.last_window  # type: ignore[misc]
    lone = detector._lone_ball(detector._last_mask, x0, y0, radius) is not None
    return by_outline, tracked, lone


@pytest.mark.parametrize("xy", [(0.0, 0.0), (0.31, 0.12), (-0.45, -0.25), (0.2, -0.3)])
def test_a_lone_whole_ball_is_read_from_its_moments_where_its_outline_would_put_it(
        xy, detector, projector):
    image = render(CAMERA, xy, seed=4)
    u, v = ball_pixel(CAMERA, *xy)
    by_outline, tracked, lone = both_ways(detector, projector, image, u + 3, v - 2)
    assert lone and by_outline is not None and tracked is not None and not tracked.partial
    assert math.hypot(tracked.u - by_outline.u, tracked.v - by_outline.v) < 0.06
    assert math.hypot(tracked.u - u, tracked.v - v) < 0.3


def test_a_partly_hidden_ball_is_left_to_the_outlines(detector, projector):
    x, y = 0.2, -0.1
    image, visible = render_with_truth(CAMERA, (x, y),
                                       occluder=(x - 0.05, y - 0.05, x - 0.008, y + 0.05))
    assert 0.6 < visible < 0.9
    u, v = ball_pixel(CAMERA, x, y)
    by_outline, tracked, lone = both_ways(detector, projector, image, u, v)
    assert not lone
    assert tracked == by_outline and tracked is not None and tracked.partial


def test_a_second_blob_in_the_window_is_left_to_the_outlines(detector, projector):
    xy = (-0.1, 0.1)
    image = render(CAMERA, xy, seed=2)
    u, v = ball_pixel(CAMERA, *xy)
    cv2.circle(image, (round(u) + 11, round(v) - 10), 1, BALL_BGR, -1)  # an orange speck
    by_outline, tracked, lone = both_ways(detector, projector, image, u, v)
    assert not lone
    assert tracked == by_outline and tracked is not None


def test_a_ball_cut_by_the_window_s_edge_is_left_to_the_outlines(detector, projector):
    xy = (0.1, 0.05)
    image = render(CAMERA, xy, seed=1)
    u, v = ball_pixel(CAMERA, *xy)
    radius = projector.radius_px(u, v)
    # A window whose edge runs through the ball: the mask holds less than its disc.
    by_outline, tracked, lone = both_ways(detector, projector, image, u + radius + 6, v,
                                          half=int(radius) + 4)
    assert not lone
    assert tracked == by_outline


def test_the_table_interior_lookup_never_says_on_table_where_the_projection_says_not(
        detector, projector):
    field = FieldRegion(projector, TABLE)
    rng = np.random.default_rng(5)
    inside = 0
    for u, v in rng.uniform((0, 0), (CAMERA.width - 1, CAMERA.height - 1), (20_000, 2)):
        interior = detector._table_interior[int(v) * CAMERA.width + int(u)]  # type: ignore[index]
        if interior:
            inside += 1
            assert field.contains(u, v), (u, v)
    assert inside > 5_000  # most of the field is interior
