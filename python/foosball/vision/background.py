"""The second detector: the ball is what differs from the empty table.

For a ball whose colour is close to the field's (a white ball on a light field, seen
obliquely), no colour band separates it. A background model does: the median of a few
frames taken apart in time (the ball moves, so it is in few of them), then followed with
an approximate running median (each pixel steps one level towards the frame, McFarlane
and Schofield's estimator), never where the ball is. A pixel belongs to the foreground
when its colour differs from the background's by more than `background_threshold` (sum of
the absolute B, G, R differences, saturating at 255) AND its colour is in the detector's
HSV band, taken wide (a white ball: any hue, low saturation, high value; the field passes
it, the background difference refuses the field, the band refuses the moving men, whose
colours are strong). That foreground then goes through the colour detector's blob search
unchanged: size, perimeter, density, eccentricity, the whole/partial decision,
the field mask. Only the mask differs, so the tracker, the filter and the calibration do
not know which detector they have. For a ball coloured like the field, whose band drops its
shaded side, a blob taken as partly hidden gets a second look (`search_window`): in a window
centred on it when its window cut it, then a disc of the ball's size fitted to the mask and
the difference decides whether it is whole, and where; a ball partly hidden indeed is fitted
to its edge against the table.

Costs: the window's difference is three OpenCV calls; the model follows the table one strip
of rows per frame (1 / background_every of the frame), so no frame pays a whole update.
Until the first median is taken (background_samples x background_every frames) it finds
nothing. Moving men differ from the background too: the blob filter's size and roundness
refuse them; a man standing still becomes background within seconds.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import cv2
import numpy as np

from foosball.vision._band import mask_sums
from foosball.vision.config import DetectorConfig
from foosball.vision.detector import (
    EDGE_INSET,
    BallDetector,
    Detection,
    MaskSums,
    _fit_fixed_circle,
)

# Around a found ball this many radii are kept out of the model (its blur, its shadow).
KEEP_OUT_RADII = 2.5
# A partly hidden ball whose centre lies within this many pixels more than a radius of its
# window's edge may only be cut by the window: it is looked for again in a window around it.
EDGE_SLACK_PX = 1.5
# A blob taken as partly hidden is a whole ball when the disc of the ball's size placed best
# on it is at least this share covered by its pixels (holes filled). Measured on the white
# ball on the light field (light 0.6 and 1.0, 1000 frames each): at 0.97, 194 of 310 fully
# visible balls taken as partly hidden pass, and 4 of 267 balls less than 95 % visible.
WHOLE_DISC_COVER = 0.97
# A partly hidden ball's edge against the table is looked for this far (px) either side of
# the ball's circle around the first fit ...
TABLE_EDGE_PX = 3.0
# ... and the table's pixels along it lie this far (px) beyond the ball's image radius: the
# foreground reaches a little past the ball (its blurred rim, the closing). Measured on
# balls in full view (white ball, light field, oblique camera, seed 7, 85 balls per light):
# median 1.06 px at light 0.6, 1.21 px at 1.0.
TABLE_EDGE_BEYOND_PX = 1.1


class BackgroundDetector(BallDetector):
    observes = True

    def __init__(self, cfg: DetectorConfig, pixel_format: str, frame_size: tuple[int, int],
                 **options: Any):
        if pixel_format != "bgr":
            # The model is kept in BGR; a YUYV camera would need its frames converted whole.
            raise ValueError("the background detector needs BGR frames (pixel_format bgr)")
        super().__init__(cfg, pixel_format, frame_size, **options)
        width, height = frame_size
        self._samples: list[np.ndarray] = []
        self._frames_seen = 0
        self.background: np.ndarray | None = None  # BGR, full resolution
        self._small_background = np.empty_like(self._small)
        self._strip = 0
        self._camouflaged = False  # set with the first model
        side = 2 * cfg.roi_max_half
        self._difference = np.empty((side, side, 3), np.uint8)
        self._summed = np.empty((side, side), np.uint8)
        self._window_mask_buffer = np.empty((side, side), np.uint8)
        self._window_foreground = np.empty((side, side), np.uint8)
        self._small_difference = np.empty_like(self._small)
        self._small_summed = np.empty(self._small.shape[:2], np.uint8)
        self._small_mask = np.empty(self._small.shape[:2], np.uint8)
        self._keep_out = np.zeros((height, width), np.uint8)
        self._ones = np.ones((1, 3), np.float32)
        self._close = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
        self._touch = np.ones((3, 3), np.uint8)

    @property
    def ready(self) -> bool:
        return self.background is not None

    def _foreground(self, image: np.ndarray, background: np.ndarray, difference: np.ndarray,
                    summed: np.ndarray, mask: np.ndarray) -> np.ndarray:
        cv2.absdiff(image, background, dst=difference)
        cv2.transform(difference, self._ones, dst=summed)  # B + G + R, saturating at 255
        cv2.threshold(summed, self.cfg.background_threshold, 255, cv2.THRESH_BINARY,
                      dst=mask)
        # A shaded ball differs from the field most at its rim, less in its lit middle,
        # and little where it crosses a white line: close the ring into a disc.
        cv2.morphologyEx(mask, cv2.MORPH_CLOSE, self._close, dst=mask)
        return mask

    def search_window(self, image: np.ndarray, u: float, v: float, half: int,
                      radius: float = 0.0) -> Detection | None:
        """As the colour detector's, with a second look at a ball taken as partly hidden
        when the ball is coloured like the field (camouflaged). Its band is then the
        ball's own, which the field's colour keeps narrow: the mask lacks the ball's shaded
        side (too dark) and, in weak light, some of its lit side (too like the field), and
        an outline fit has only an arc. On the white ball on the light field the worst 5 %
        of the published positions were all such fits (in one measured sample 5 of 13 of a
        ball in full view, 7 of 13 just after a track restart).

        - At the window's edge (the prediction that placed the window is off after a bounce
          the model did not foresee, and the window cuts the ball) it is looked for again
          in a window centred on it.
        - Still partly hidden, the disc test (`_whole_disc`) decides whether it is in fact
          whole, and where its centre is.
        - Partly hidden indeed, its centre is fitted to where it meets the table
          (`_fit_table_edge`) rather than to its mask's outline.

        A coloured ball's band holds its shaded side and its partly hidden fits are good:
        they stand. (The first two steps for every ball improved the coloured cells' p95 by
        up to 0.19 mm but moved one p50 up by 0.0005 mm; the coloured balls stay as they
        were.)"""
        found = super().search_window(image, u, v, half, radius)
        if found is None or not found.partial or not self._camouflaged \
                or self.radius_at is None or self.last_window is None:
            return found
        x0, y0, cols, rows = self.last_window
        ball = self.radius_at(found.u, found.v)
        margin = min(found.u - x0, x0 + cols - 1 - found.u, found.v - y0, y0 + rows - 1 - found.v)
        if margin < ball + EDGE_SLACK_PX:
            again = super().search_window(image, found.u, found.v, int(2 * ball + 4), ball)
            # The same ball (the blob nearest the new window's centre), never another one.
            if again is not None and math.hypot(again.u - found.u, again.v - found.v) <= ball:
                found = again
        if not found.partial:
            return found
        x0, y0, cols, rows = self.last_window
        table = _filled(self._window_foreground[:rows, :cols]) == 0
        return self._whole_disc(found, ball, table) or self._fit_table_edge(found, ball, table) \
            or found

    def _whole_disc(self, found: Detection, ball: float, table: np.ndarray) -> Detection | None:
        """The ball `found` as a whole one, if it is. Its mask (foreground AND the band) lacks
        what is too dark for the band (the shaded side) and, in weak light, what differs
        too little from the field (the lit side), so a fully visible ball often looks cut
        and its outline's fit has only an arc. Here the disc of the ball's image size is
        placed where it covers the most of the mask's pixels (holes filled) and the least of
        the table (pixels no different from the model; a man or a rod in front of the ball
        costs nothing): every centre within a radius of `found` tried at once (one
        correlation), refined to a fraction of a pixel. Nearly filled, it is the whole ball
        and its centre; otherwise None. `table`: the window's pixels no different from the
        model (the foreground's holes filled)."""
        x0, y0, cols, rows = self.last_window  # type: ignore[misc]
        disc = _disc(round(ball - EDGE_INSET, 1))
        half = disc.shape[0] // 2
        fu, fv = found.u - x0, found.v - y0
        # Centres within a radius of the partly hidden fit, the disc inside the window.
        u0, u1 = max(half, math.ceil(fu - ball)), min(cols - 1 - half, math.floor(fu + ball))
        v0, v1 = max(half, math.ceil(fv - ball)), min(rows - 1 - half, math.floor(fv + ball))
        if u0 > u1 or v0 > v1:
            return None
        ball_pixels = _filled(self._last_mask)
        weights = ball_pixels.astype(np.float32)
        weights[table & (ball_pixels == 0)] = -1.0
        # score[j, i]: the disc centred on (u0 + i - 1, v0 + j - 1); a border of -inf, so a
        # peak at the edge of the centres tried is not refined beyond it.
        score = np.full((v1 - v0 + 3, u1 - u0 + 3), -np.inf, np.float32)
        inner = score[1:-1, 1:-1]
        cv2.matchTemplate(weights[v0 - half:v1 + half + 1, u0 - half:u1 + half + 1], disc,
                          cv2.TM_CCORR, result=inner)
        ys, xs = np.ogrid[v0:v1 + 1, u0:u1 + 1]
        inner[(xs - fu) ** 2 + (ys - fv) ** 2 > ball * ball] = -np.inf
        j, i = np.unravel_index(int(np.argmax(score)), score.shape)
        if not math.isfinite(score[j, i]):
            return None
        cx, cy = u0 + i - 1, v0 + j - 1
        patch = ball_pixels[cy - half:cy + half + 1, cx - half:cx + half + 1]
        cover = float((patch * disc).sum()) / float(disc.sum())
        if cover < WHOLE_DISC_COVER:
            return None
        du = _vertex(score[j, i - 1], score[j, i], score[j, i + 1])
        dv = _vertex(score[j - 1, i], score[j, i], score[j + 1, i])
        return Detection(x0 + cx + du, y0 + cy + dv, cover * float(disc.sum()), False)

    def _fit_table_edge(self, found: Detection, ball: float,
                        table: np.ndarray) -> Detection | None:
        """A partly hidden ball's centre from where it meets the table: there the difference
        from the model is the ball's own rim, whatever the band drops (its shaded side), so
        the table's pixels along the foreground's border lie just outside the ball. A circle
        of the ball's radius + `TABLE_EDGE_BEYOND_PX` is fitted to those border pixels within
        `TABLE_EDGE_PX` of the ball's circle around `found`, by the arc points only
        (`_fit_fixed_circle`; a man in front of the ball is foreground, and a rod's edge,
        which is table, runs inside the circle). None when too few such pixels or the fit
        wanders more than 0.75 radius from `found`."""
        x0, y0, _, _ = self.last_window  # type: ignore[misc]
        touching = cv2.dilate((~table).astype(np.uint8), self._touch) > 0
        ys, xs = np.nonzero(table & touching)
        fu, fv = found.u - x0, found.v - y0
        near = np.abs(np.hypot(xs - fu, ys - fv) - ball) <= TABLE_EDGE_PX
        if int(near.sum()) < 8:
            return None
        points = np.stack([xs[near], ys[near]], axis=1).astype(np.float64)
        fit = _fit_fixed_circle(points, (fu, fv), ball + TABLE_EDGE_BEYOND_PX, iterations=8)
        if fit is None or math.hypot(fit[0] - fu, fit[1] - fv) > 0.75 * ball:
            return None
        return Detection(x0 + fit[0], y0 + fit[1], found.area, True)

    def _window_mask(self, image: np.ndarray, x0: int, y0: int, cols: int,
                     rows: int) -> tuple[np.ndarray, MaskSums]:
        mask = self._window_mask_buffer[:rows, :cols]
        if self.background is None:
            mask[:] = 0
            return mask, mask_sums(mask)
        # The foreground is kept for the disc test (`_whole_disc`).
        foreground = self._foreground(image[y0:y0 + rows, x0:x0 + cols],
                                      self.background[y0:y0 + rows, x0:x0 + cols],
                                      self._difference[:rows, :cols],
                                      self._summed[:rows, :cols],
                                      self._window_foreground[:rows, :cols])
        cv2.bitwise_and(foreground, super()._window_mask(image, x0, y0, cols, rows)[0],
                        dst=mask)
        if self._camouflaged:
            # Where the model still holds a man that has moved away, the field shows: it
            # differs and is in the band, but the model there is not (the ball lies on the
            # field).
            in_band, _ = self._window.window(self.background, x0, y0, cols, rows)
            cv2.bitwise_and(mask, in_band, dst=mask)
        return mask, mask_sums(mask)

    def _frame_mask(self, small: np.ndarray) -> np.ndarray:
        if self.background is None:
            self._small_mask[:] = 0
            return self._small_mask
        cv2.resize(self.background, (self._small_cols, self._small_rows),
                   dst=self._small_background, interpolation=cv2.INTER_NEAREST)
        mask = self._foreground(small, self._small_background, self._small_difference,
                                self._small_summed, self._small_mask)
        cv2.bitwise_and(mask, super()._frame_mask(small), dst=mask)
        if not self._camouflaged:
            return mask
        return cv2.bitwise_and(mask, self._whole.mask(self._small_background), dst=mask)

    def frame_mask(self, image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        """The foreground of the whole frame scaled to `size`, for the panel's preview."""
        if self.background is None:
            return np.zeros((size[1], size[0]), np.uint8)
        difference = cv2.absdiff(image, self.background).astype(np.uint16).sum(axis=2)
        mask = np.where(difference > self.cfg.background_threshold, 255, 0).astype(np.uint8)
        return cv2.resize(mask, size, interpolation=cv2.INTER_NEAREST) & super().frame_mask(
            image, size)

    # --- the model -------------------------------------------------------------------------

    def observe(self, image: np.ndarray, ball: Detection | None) -> None:
        cfg = self.cfg
        self._frames_seen += 1
        if self.background is None:
            if self._frames_seen % cfg.background_every == 1 or cfg.background_every == 1:
                self._samples.append(image.copy())
            if len(self._samples) >= cfg.background_samples:
                self.background = np.median(np.stack(self._samples), axis=0).astype(np.uint8)
                self._samples = []
                # A band that takes in much of the table: the ball is coloured like the
                # field, and only the model's own colour tells a ghost from it.
                in_band = BallDetector.frame_mask(self, self.background,
                                                  (self.width, self.height)) > 0
                where = np.ones(in_band.shape, bool) if self.field_mask is None else \
                    self.field_mask > 0
                self._camouflaged = float(in_band[where].mean()) > 0.2
            return
        self._follow(image, ball)

    def _follow(self, image: np.ndarray, ball: Detection | None) -> None:
        """One strip of rows steps one level towards this frame, except around the ball."""
        strips = self.cfg.background_every
        rows = -(-self.height // strips)
        r0 = self._strip * rows
        r1 = min(self.height, r0 + rows)
        self._strip = (self._strip + 1) % strips
        background = self.background[r0:r1]  # type: ignore[index]
        frame = image[r0:r1]
        brighter = cv2.compare(frame, background, cv2.CMP_GT)
        darker = cv2.compare(frame, background, cv2.CMP_LT)
        if ball is not None and self.radius_at is not None:
            reach = int(KEEP_OUT_RADII * self.radius_at(ball.u, ball.v)) + 2
            if ball.v + reach >= r0 and ball.v - reach < r1:
                keep_out = self._keep_out[r0:r1]
                keep_out[:] = 0
                cv2.circle(keep_out, (round(ball.u), round(ball.v) - r0), reach, 255, -1)
                inside = keep_out > 0
                brighter[inside] = 0
                darker[inside] = 0
        cv2.bitwise_and(brighter, 1, dst=brighter)
        cv2.bitwise_and(darker, 1, dst=darker)
        cv2.add(background, brighter, dst=background)
        cv2.subtract(background, darker, dst=background)


def _filled(mask: np.ndarray) -> np.ndarray:
    """0/1 copy of a 0/255 mask with its blobs' holes filled (their outer outlines drawn
    filled): a ball whose lit middle matches the field is a ring."""
    filled = np.zeros(mask.shape, np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(filled, contours, -1, 1, -1)
    return filled


@functools.lru_cache(maxsize=64)
def _disc(radius: float) -> np.ndarray:
    """A disc of `radius` px as a float32 kernel, each cell the share of it the disc covers
    (8 x 8 samples per cell), centred on its middle cell."""
    half = math.ceil(radius) + 1
    side = 2 * half + 1
    samples = (np.arange(side * 8) + 0.5) / 8 - side / 2
    inside = samples[None, :] ** 2 + samples[:, None] ** 2 <= radius * radius
    return inside.reshape(side, 8, side, 8).mean(axis=(1, 3)).astype(np.float32)


def _vertex(left: float, middle: float, right: float) -> float:
    """Where the parabola through three equally spaced values peaks, from the middle one
    (-0.5..0.5; 0 when they do not make a peak)."""
    curvature = left - 2.0 * middle + right
    if not curvature < 0.0 or not math.isfinite(curvature):
        return 0.0
    return max(-0.5, min(0.5, 0.5 * (left - right) / curvature))
