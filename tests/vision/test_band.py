"""The compiled colour threshold (`foosball.vision._band`, built by the package's install)
against OpenCV: every colour, rendered frames, windows at the frame's edges, the field
clip, YUYV through `ColourThreshold`, the mask's sums, and arguments it must refuse."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from foosball.lab.vision.bench import to_yuyv
from foosball.lab.vision.synthetic import SynthCamera, ball_pixel, render
from foosball.vision._band import band_mask, mask_sums
from foosball.vision.config import DetectorConfig
from foosball.vision.detector import BallDetector, ColourThreshold

CAMERA = SynthCamera()
DEFAULT = DetectorConfig()
# (hue_low, hue_high, sat_low, sat_high, val_low, val_high): the default ball band, all of
# HSV, a band through red, the widened band of the user, one single colour.
BANDS = [
    (DEFAULT.hue_low, DEFAULT.hue_high, DEFAULT.sat_low, DEFAULT.sat_high, DEFAULT.val_low,
     DEFAULT.val_high),
    (0, 179, 0, 255, 0, 255),
    (170, 8, 100, 255, 50, 255),
    (5, 25, 150, 255, 80, 255),
    (90, 90, 37, 37, 200, 200),
]


def opencv_mask(bgr: np.ndarray, band: tuple[int, ...]) -> np.ndarray:
    """What the detector's threshold was before the compiled call: cvtColor + inRange."""
    hsv = cv2.cvtColor(np.ascontiguousarray(bgr), cv2.COLOR_BGR2HSV)
    h_lo, h_hi, s_lo, s_hi, v_lo, v_hi = band
    hue_bands = [(h_lo, 179), (0, h_hi)] if h_lo > h_hi else [(h_lo, h_hi)]
    mask = np.zeros(bgr.shape[:2], np.uint8)
    for lo, hi in hue_bands:
        mask |= cv2.inRange(hsv, np.array([lo, s_lo, v_lo], np.uint8),
                            np.array([hi, s_hi, v_hi], np.uint8))
    return mask


def reference_sums(mask: np.ndarray) -> tuple[int, ...]:
    ys, xs = np.nonzero(mask)
    xs, ys = xs.astype(np.int64), ys.astype(np.int64)
    return (len(xs), int(xs.sum()), int(ys.sum()), int((xs * xs).sum()), int((xs * ys).sum()),
            int((ys * ys).sum()))


def threshold(image: np.ndarray, x0: int, y0: int, cols: int, rows: int,
              band: tuple[int, ...], clip: np.ndarray | None = None):
    out = np.full(max(1, rows * cols), 7, np.uint8)
    sums = band_mask(image, x0, y0, cols, rows, bytes(band), out, clip, x0, y0)
    return out[:rows * cols].reshape(rows, cols), sums


@pytest.fixture(scope="module")
def every_colour() -> np.ndarray:
    """All 2^24 BGR colours as a 4096 x 4096 image."""
    code = np.arange(1 << 24, dtype="<u4")  # bytes B, G, R, 0
    return np.ascontiguousarray(code.view(np.uint8).reshape(4096, 4096, 4)[:, :, :3])


@pytest.mark.parametrize("band", BANDS)
def test_every_colour_is_in_the_band_exactly_when_opencv_says_so(every_colour, band):
    mask, sums = threshold(every_colour, 0, 0, 4096, 4096, band)
    expected = opencv_mask(every_colour, band)
    assert np.array_equal(mask, expected)
    assert sums[0] == np.count_nonzero(expected)


def test_hue_saturation_and_value_are_opencv_s_to_the_bit():
    """Each single value of each channel as a band, on 65536 random colours: the pixels
    taken are those whose OpenCV HSV has that value."""
    colours = np.random.default_rng(3).integers(0, 256, (256, 256, 3), dtype=np.uint8)
    hsv = cv2.cvtColor(colours, cv2.COLOR_BGR2HSV)
    for channel, top in ((0, 179), (1, 255), (2, 255)):
        for value in range(top + 1):
            band = [0, 179, 0, 255, 0, 255]
            band[2 * channel] = band[2 * channel + 1] = value
            mask, _ = threshold(colours, 0, 0, 256, 256, tuple(band))
            assert np.array_equal(mask > 0, hsv[:, :, channel] == value), (channel, value)


def rendered_frame(xy: tuple[float, float]) -> tuple[np.ndarray, tuple[float, float]]:
    return render(CAMERA, xy, seed=5), ball_pixel(CAMERA, *xy)


@pytest.mark.parametrize("corner", ["top left", "bottom right", "left edge", "middle"])
def test_windows_of_a_rendered_frame_up_to_its_edges(corner):
    """Windows touching the frame's edges and corners, with the ball in them (the ball
    rendered near that edge), against OpenCV on the same pixels, with and without a clip."""
    image, (u, v) = rendered_frame((0.0, 0.0))
    height, width = image.shape[:2]
    if corner == "top left":
        x0, y0 = 0, 0
    elif corner == "bottom right":
        x0, y0 = width - 40, height - 30
    elif corner == "left edge":
        x0, y0 = 0, 200
    else:
        x0, y0 = int(u) - 20, int(v) - 15
    # Put the ball's pixels into the window, so the band has something to find there.
    ball = image[int(v) - 12:int(v) + 12, int(u) - 12:int(u) + 12].copy()
    image[y0 + 3:y0 + 27, x0 + 8:x0 + 32] = ball
    clip = np.zeros((height, width), np.uint8)
    clip[:, :x0 + 20] = 255  # the window's left half only
    for band in BANDS[:3]:
        expected = opencv_mask(image[y0:y0 + 30, x0:x0 + 40], band)
        assert np.count_nonzero(expected) > 0 or band != BANDS[0]
        mask, sums = threshold(image, x0, y0, 40, 30, band)
        assert np.array_equal(mask, expected)
        assert sums == reference_sums(expected)
        clipped, clipped_sums = threshold(image, x0, y0, 40, 30, band, clip)
        expected_clipped = expected & clip[y0:y0 + 30, x0:x0 + 40]
        assert np.array_equal(clipped, expected_clipped)
        assert clipped_sums == reference_sums(expected_clipped)


def test_the_whole_frame_and_a_strided_view():
    image, _ = rendered_frame((0.2, -0.1))
    mask, sums = threshold(image, 0, 0, image.shape[1], image.shape[0], BANDS[0])
    expected = opencv_mask(image, BANDS[0])
    assert np.array_equal(mask, expected) and sums == reference_sums(expected)
    every_other = image[1::2, ::3]  # rows and pixels apart in memory
    threshold_ = ColourThreshold(DEFAULT, "bgr", every_other.shape[0], every_other.shape[1])
    assert np.array_equal(threshold_.mask(every_other), opencv_mask(every_other, BANDS[0]))


def test_an_empty_window_and_a_window_without_the_ball():
    image, _ = rendered_frame((0.2, -0.1))
    mask, sums = threshold(image, 100, 100, 0, 0, BANDS[0])
    assert mask.size == 0 and sums == (0, 0, 0, 0, 0, 0)
    mask, sums = threshold(image, 600, 10, 40, 40, BANDS[0])  # beside the table
    assert not mask.any() and sums == (0, 0, 0, 0, 0, 0)


def test_a_yuyv_window_is_thresholded_as_opencv_converts_it():
    """A YUYV window goes through OpenCV's YUYV -> BGR, then the compiled band test: the
    same as converting the whole frame with OpenCV and thresholding the window there."""
    image, (u, v) = rendered_frame((-0.3, 0.2))
    yuyv = to_yuyv(image)
    as_opencv_sees_it = cv2.cvtColor(yuyv, cv2.COLOR_YUV2BGR_YUYV)
    field = np.zeros(image.shape[:2], np.uint8)
    field[:, int(u):] = 255
    threshold_ = ColourThreshold(DEFAULT, "yuyv", 48, 48)
    for x0, y0 in ((int(u) & ~1) - 20, int(v) - 20), (0, 0), (640 - 48, 480 - 48):
        expected = opencv_mask(as_opencv_sees_it[y0:y0 + 40, x0:x0 + 48], BANDS[0])
        expected &= field[y0:y0 + 40, x0:x0 + 48]
        mask, sums = threshold_.window(yuyv, x0, y0, 48, 40, field)
        assert np.array_equal(mask, expected)
        assert sums == reference_sums(expected)
    mask, _ = threshold_.window(yuyv, (int(u) & ~1) - 20, int(v) - 20, 48, 40)
    assert np.count_nonzero(mask) > 100  # the ball is in that window


def test_mask_sums_are_the_moments_opencv_computes():
    image, (u, v) = rendered_frame((0.1, 0.1))
    mask = opencv_mask(image, BANDS[0])[int(v) - 30:int(v) + 30, int(u) - 40:int(u) + 40]
    count, sx, sy, sxx, sxy, syy = mask_sums(mask)
    m = cv2.moments(mask, binaryImage=True)
    assert count > 100
    assert (count, sx, sy, sxx, sxy, syy) == (m["m00"], m["m10"], m["m01"], m["m20"],
                                              m["m11"], m["m02"])
    assert mask_sums(mask[::2, 10:50]) == reference_sums(mask[::2, 10:50])  # rows apart


def test_arguments_that_would_read_or_write_outside_are_refused():
    image, _ = rendered_frame((0.0, 0.0))
    out = np.empty(40 * 40, np.uint8)
    band = bytes(BANDS[0])
    for x0, y0 in ((-1, 0), (0, -1), (601, 0), (0, 441)):
        with pytest.raises(ValueError, match="not inside"):
            band_mask(image, x0, y0, 40, 40, band, out, None, x0, y0)
    with pytest.raises(ValueError, match="smaller than the window"):
        band_mask(image, 0, 0, 41, 40, band, out, None, 0, 0)
    with pytest.raises(ValueError, match="clip"):
        band_mask(image, 0, 0, 40, 40, band, out, np.zeros((30, 30), np.uint8), 0, 0)
    with pytest.raises(ValueError, match="3 channels"):
        band_mask(np.zeros((40, 40, 2), np.uint8), 0, 0, 40, 40, band, out, None, 0, 0)
    with pytest.raises(ValueError, match="uint8"):
        band_mask(image.astype(np.float32), 0, 0, 40, 40, band, out, None, 0, 0)
    with pytest.raises(TypeError, match="6 bytes"):
        band_mask(image, 0, 0, 40, 40, band[:5], out, None, 0, 0)
    with pytest.raises(BufferError):
        band_mask(image, 0, 0, 40, 40, band, b"read-only" * 200, None, 0, 0)


@pytest.mark.parametrize("pixel_format", ["bgr", "yuyv"])
def test_the_panel_s_preview_mask_is_the_same_band(pixel_format):
    image, _ = rendered_frame((0.25, 0.1))
    cfg = DetectorConfig(hue_low=170, hue_high=20)  # through red: the ball and more
    frame = to_yuyv(image) if pixel_format == "yuyv" else image
    preview = BallDetector(cfg, pixel_format, (CAMERA.width, CAMERA.height)).frame_mask(
        frame, (320, 240))
    bgr = cv2.cvtColor(frame, cv2.COLOR_YUV2BGR_YUYV) if pixel_format == "yuyv" else image
    small = cv2.resize(bgr, (320, 240), interpolation=cv2.INTER_NEAREST)
    expected = opencv_mask(small, (170, 20, cfg.sat_low, cfg.sat_high, cfg.val_low,
                                   cfg.val_high))
    assert np.count_nonzero(expected) > 10
    assert np.array_equal(preview, expected)
