from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from foosball.geometry import default_table
from foosball.lab.vision.seed_pipeline import SeedPipeline
from foosball.lab.vision.synthetic import (
    BALL_BGR,
    LAYOUT,
    SynthCamera,
    ball_pixel,
    render,
    render_with_truth,
)
from foosball.vision._band import mask_sums
from foosball.vision.calibration import BallProjector, calibrate
from foosball.vision.config import DetectorConfig, VisionConfigError
from foosball.vision.detector import BallDetector, ColourThreshold
from foosball.vision.field import FieldRegion

CAMERA = SynthCamera()
RADIUS = 0.0173
TABLE = default_table()


@pytest.fixture(scope="module")
def projector() -> BallProjector:
    image = render(CAMERA, None)
    return BallProjector(calibrate(image, LAYOUT, RADIUS,
                                   focal_px=CAMERA.focal))


def detector(projector: BallProjector | None = None, cfg: DetectorConfig | None = None,
             pixel_format: str = "bgr") -> BallDetector:
    return BallDetector(cfg or DetectorConfig(), pixel_format, (CAMERA.width, CAMERA.height),
                        radius_at=projector.radius_px if projector else None)


@pytest.mark.parametrize("xy", [(0.0, 0.0), (0.31, 0.12), (-0.55, -0.3), (0.52, 0.27)])
def test_whole_frame_and_window_find_the_ball_to_a_fraction_of_a_pixel(xy, projector):
    image = render(CAMERA, xy, seed=3)
    true_u, true_v = ball_pixel(CAMERA, *xy)
    det = detector(projector)
    found = det.search_frame(image)
    # Near the corners the wide-angle view draws the ball as an ellipse: still whole.
    assert found is not None and not found.partial
    assert math.hypot(found.u - true_u, found.v - true_v) < 0.3
    windowed = det.search_window(image, true_u + 6, true_v - 4, 24)
    assert windowed is not None
    assert (windowed.u, windowed.v) == pytest.approx((found.u, found.v), abs=1e-9)


def test_no_ball_no_detection(projector):
    image = render(CAMERA, None, seed=5)
    det = detector(projector)
    assert det.search_frame(image) is None
    assert det.search_window(image, 320, 240, 64) is None
    assert SeedPipeline(DetectorConfig(), (640, 480)).detect(image) is None


def test_blob_filter_rejects_specks_big_patches_and_lines(projector):
    image = render(CAMERA, None, seed=1)
    cv2.circle(image, (100, 200), 2, BALL_BGR, -1)  # speck: too small
    cv2.circle(image, (300, 300), 40, BALL_BGR, -1)  # big orange patch: too large
    cv2.line(image, (400, 100), (440, 115), BALL_BGR, 3)  # a line: too eccentric
    cfg = DetectorConfig()
    assert detector(projector, cfg).search_frame(image) is None
    assert SeedPipeline(cfg, (640, 480)).detect(image) is None
    # Each filter is what rejects its blob: loosen it and the blob passes.
    line_only = render(CAMERA, None, seed=1)
    cv2.line(line_only, (400, 100), (440, 115), BALL_BGR, 3)
    loose = DetectorConfig(max_eccentricity=1.0, min_density=0.0)
    assert SeedPipeline(loose, (640, 480)).detect(line_only) is not None


def test_matches_the_seed_pipeline(projector):
    for i, xy in enumerate([(0.1, 0.2), (-0.4, 0.05), (0.5, -0.25)]):
        image = render(CAMERA, xy, seed=i)
        ours = detector(projector).search_frame(image)
        seed = SeedPipeline(DetectorConfig(), (640, 480)).detect(image)
        assert ours is not None and seed is not None
        assert (ours.u, ours.v) == pytest.approx((seed.u, seed.v), abs=1e-6)


@pytest.mark.parametrize("cut", [-0.012, -0.008, -0.005])
def test_partly_hidden_ball_centre_from_its_own_arc(projector, cut):
    x, y = 0.2, -0.1
    # A man's foot over the ball's -x side up to `cut` from its centre: 60-85 % visible.
    image, visible = render_with_truth(CAMERA, (x, y),
                                       occluder=(x - 0.05, y - 0.05, x + cut, y + 0.05))
    assert 0.55 < visible < 0.9
    true_u, true_v = ball_pixel(CAMERA, x, y)
    found = detector(projector).search_frame(image)
    assert found is not None and found.partial
    assert math.hypot(found.u - true_u, found.v - true_v) < 0.7
    centroid = SeedPipeline(DetectorConfig(), (640, 480)).detect(image)
    assert centroid is not None
    assert math.hypot(centroid.u - true_u, centroid.v - true_v) > 0.7  # what we avoided


def test_a_foot_across_the_middle_leaves_two_fragments_merged(projector):
    x, y = -0.1, 0.15
    image = render(CAMERA, (x, y), occluder=(x - 0.005, y - 0.05, x + 0.005, y + 0.05))
    true_u, true_v = ball_pixel(CAMERA, x, y)
    found = detector(projector, DetectorConfig(min_area=15, min_perimeter=10)).search_frame(image)
    assert found is not None and found.partial
    assert math.hypot(found.u - true_u, found.v - true_v) < 0.8


def test_yuyv_frames_give_the_bgr_result(projector):
    xy = (0.22, -0.18)
    bgr = render(CAMERA, xy, noise=0)
    yuv = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV)
    yuyv = np.empty((bgr.shape[0], bgr.shape[1], 2), np.uint8)
    yuyv[:, :, 0] = yuv[:, :, 0]
    yuyv[:, 0::2, 1] = yuv[:, 0::2, 1]
    yuyv[:, 1::2, 1] = yuv[:, 0::2, 2]
    ours = detector(projector, pixel_format="yuyv").search_frame(yuyv)
    true_u, true_v = ball_pixel(CAMERA, *xy)
    assert ours is not None
    assert math.hypot(ours.u - true_u, ours.v - true_v) < 0.6


def test_hue_band_wrapping_through_red():
    cfg = DetectorConfig(hue_low=170, hue_high=8)
    threshold = ColourThreshold(cfg, "bgr", 4, 4)
    pixels = np.array([[[0, 0, 255], [40, 0, 255], [0, 60, 255], [255, 0, 0]]], np.uint8)
    hues = cv2.cvtColor(pixels, cv2.COLOR_BGR2HSV)[0, :, 0]
    expected = [(h >= 170 or h <= 8) for h in hues]
    assert list(threshold.mask(pixels)[0] > 0) == expected
    assert any(expected) and not all(expected)


def test_bad_configuration_is_refused():
    with pytest.raises(VisionConfigError, match="sat_low"):
        DetectorConfig(sat_low=200, sat_high=100).validate()
    with pytest.raises(VisionConfigError, match="hue_high"):
        DetectorConfig(hue_high=180).validate()


@pytest.mark.parametrize("cut", [0.002, 0.004])
def test_less_than_half_visible_centre_from_the_known_radius(projector, cut):
    """A rod over the ball's -x side past its centre: 30-45 % shows. The cap's own arc and
    the ball's radius from the calibration put the centre far closer than the centroid."""
    x, y = -0.15, 0.08
    image, visible = render_with_truth(CAMERA, (x, y),
                                       occluder=(x - 0.05, y - 0.05, x + cut, y + 0.05))
    assert 0.25 < visible < 0.5
    true_u, true_v = ball_pixel(CAMERA, x, y)
    found = detector(projector, DetectorConfig(min_area=15, min_perimeter=10)).search_frame(image)
    assert found is not None and found.partial
    assert math.hypot(found.u - true_u, found.v - true_v) < 1.5
    centroid = SeedPipeline(DetectorConfig(min_area=15, min_perimeter=10), (640, 480)).detect(
        image)
    assert centroid is not None
    assert math.hypot(centroid.u - true_u, centroid.v - true_v) > 2.5


def test_window_threshold_reuses_its_buffers():
    threshold = ColourThreshold(DetectorConfig(), "bgr", 64, 64)
    image = render(CAMERA, (0.1, 0.1))
    first = threshold.mask(image[100:140, 200:240])
    second = threshold.mask(image[300:330, 50:80])
    assert np.shares_memory(first, second)  # one buffer, views of the window's size
    assert second.shape == (30, 30)


# --- the tracking window's shortcuts: a lone whole ball read from its mask's moments (and
# only such a ball), the table interior looked up instead of projected ----------------


@pytest.fixture(scope="module")
def tracking_detector(projector) -> BallDetector:
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
    rows, cols = detector._last_mask.shape
    lone = detector._lone_ball(mask_sums(detector._last_mask), rows, cols, x0, y0,
                               radius) is not None
    return by_outline, tracked, lone


@pytest.mark.parametrize("xy", [(0.0, 0.0), (0.31, 0.12), (-0.45, -0.25), (0.2, -0.3)])
def test_a_lone_whole_ball_is_read_from_its_moments_where_its_outline_would_put_it(
        xy, tracking_detector, projector):
    image = render(CAMERA, xy, seed=4)
    u, v = ball_pixel(CAMERA, *xy)
    by_outline, tracked, lone = both_ways(tracking_detector, projector, image, u + 3, v - 2)
    assert lone and by_outline is not None and tracked is not None and not tracked.partial
    assert math.hypot(tracked.u - by_outline.u, tracked.v - by_outline.v) < 0.06
    assert math.hypot(tracked.u - u, tracked.v - v) < 0.3


def test_a_partly_hidden_ball_is_left_to_the_outlines(tracking_detector, projector):
    x, y = 0.2, -0.1
    image, visible = render_with_truth(CAMERA, (x, y),
                                       occluder=(x - 0.05, y - 0.05, x - 0.008, y + 0.05))
    assert 0.6 < visible < 0.9
    u, v = ball_pixel(CAMERA, x, y)
    by_outline, tracked, lone = both_ways(tracking_detector, projector, image, u, v)
    assert not lone
    assert tracked == by_outline and tracked is not None and tracked.partial


def test_a_second_blob_in_the_window_is_left_to_the_outlines(tracking_detector,
                                                              projector):
    xy = (-0.1, 0.1)
    image = render(CAMERA, xy, seed=2)
    u, v = ball_pixel(CAMERA, *xy)
    cv2.circle(image, (round(u) + 11, round(v) - 10), 1, BALL_BGR, -1)  # an orange speck
    by_outline, tracked, lone = both_ways(tracking_detector, projector, image, u, v)
    assert not lone
    assert tracked == by_outline and tracked is not None


def test_a_ball_cut_by_the_window_s_edge_is_left_to_the_outlines(tracking_detector,
                                                                  projector):
    xy = (0.1, 0.05)
    image = render(CAMERA, xy, seed=1)
    u, v = ball_pixel(CAMERA, *xy)
    radius = projector.radius_px(u, v)
    # A window whose edge runs through the ball: the mask holds less than its disc.
    by_outline, tracked, lone = both_ways(tracking_detector, projector, image,
                                          u + radius + 6, v, half=int(radius) + 4)
    assert not lone
    assert tracked == by_outline


def test_the_table_interior_lookup_never_says_on_table_where_the_projection_says_not(
        tracking_detector, projector):
    field = FieldRegion(projector, TABLE)
    rng = np.random.default_rng(5)
    inside = 0
    for u, v in rng.uniform((0, 0), (CAMERA.width - 1, CAMERA.height - 1), (20_000, 2)):
        interior = tracking_detector._table_interior[  # type: ignore[index]
            int(v) * CAMERA.width + int(u)]
        if interior:
            inside += 1
            assert field.contains(u, v), (u, v)
    assert inside > 5_000  # most of the field is interior
