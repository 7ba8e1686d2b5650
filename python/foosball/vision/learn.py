"""The ball's colour learnt from a few frames of it rolling, instead of thresholds by hand.

The ball is the round, ball-sized thing that moves: the median of the frames is the table
without it, and in each frame the ball is the blob that differs from that median, has the
calibration's ball size where it is (or the detector's area limits without a calibration)
and fills its enclosing circle. Its pixels (the rim left out: it is blended with the
field) give the HSV band: the shortest hue arc holding nearly all of them (through red if
need be; any hue for a grey or white ball), saturation and value from their low
percentiles, with a margin. The band is then tried on everything that is not the ball (the
field, the lines, the men, the wooden frame): a band that lets a ball-sized blob of the
table through, or too many of its pixels, is narrowed; one that cannot be narrowed without
losing the ball is refused, with what was found (use `detector.method = "background"`
then). The blob check runs on the median table and on each of up to 24 of the frames
themselves, the ball's own blob left out: a patch of pale field that the light or a
moving man's shadow makes only now and then, or a man's colour, is not in the median but
is in the frames, and the tracker would sit on it (issue 32: real footage, a learnt band
took in a pale patch of field and published it for 15 frames).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from foosball.vision.config import DetectorConfig
from foosball.vision.detector import BlobStats, blob_stats, passes

# A pixel differs from the median table when the sum of its |B|, |G|, |R| differences is
# above this.
MOTION_THRESHOLD = 45
# Share of the ball's pixels the band must hold, tried in this order (narrower each time).
COVERAGES = (0.98, 0.95, 0.9, 0.8)
# The table's pixels the band may take in (scattered ones; the blob filter drops them).
MAX_TABLE_SHARE = 0.002
HSV_MARGIN = 12
# Moving blobs found within this of each other (px) are at one place: one vote in the
# colour the ball is taken to have.
STANDING_PX = 2.0
# A moving blob whose median colour is further than this (sum of |B|, |G|, |R|) from the
# median of all of them is not the ball.
COLOUR_AGREEMENT = 75
# The frames the band's blobs are looked for in (evenly spread over those given).
CHECKED_FRAMES = 24
# Without a calibration the ball's size is unknown. A 34-36 mm ball on a 1.2 m field that
# fills the frame's width is width/40-width/25 across; the moving blob is looked for from
# width/200 (a wide view) to width/12 (a close one: 70 px at 1920 is width/27), and the
# band then gets size limits from the ball found (the defaults are for 640x480 with
# markers: 40-1200 px, refused a 70 px ball at 1080p).
BALL_WIDTH_SHARES = (1 / 200, 1 / 12)


class LearnError(ValueError):
    """The ball cannot be found, or cannot be told from the table by colour (then `band`
    is the ball's own colour, for the background detector, which needs no separation)."""

    def __init__(self, message: str, band: DetectorConfig | None = None):
        super().__init__(message)
        self.band = band


@dataclass(frozen=True, slots=True)
class LearntColour:
    detector: DetectorConfig
    ball_pixels: int
    frames_with_ball: int
    table_share: float  # of the table's pixels inside the band
    coverage: float  # of the ball's pixels inside the band
    narrowed: tuple[str, ...] = ()  # why each wider band was not taken

    def report(self) -> dict[str, Any]:
        d = self.detector
        report: dict[str, Any] = {
            "hue": [d.hue_low, d.hue_high], "saturation": [d.sat_low, d.sat_high],
            "value": [d.val_low, d.val_high], "ball_pixels": self.ball_pixels,
            "frames_with_ball": self.frames_with_ball,
            "ball_share_in_band": round(self.coverage, 4),
            "table_share_in_band": round(self.table_share, 6)}
        if self.narrowed:
            report["narrowed"] = list(self.narrowed)
        return report


class _TableCheck:
    """What must stay out of the band: every pixel that is not the ball (a sample), the
    median table and up to CHECKED_FRAMES of the frames, each with the ball's blob left
    out, where a ball-like blob of the band would be a false ball."""

    def __init__(self, pixels: np.ndarray, table: np.ndarray, where: np.ndarray,
                 frames: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
        self.pixels = pixels  # HSV rows
        self.table_hsv = cv2.cvtColor(table, cv2.COLOR_BGR2HSV)
        self.where = where
        # (HSV frame, the mask it may be searched in, the pixels of the ball found there)
        self.frames = frames

    def share(self, band: DetectorConfig) -> float:
        return float(_inside(self.pixels, band).mean())

    def why(self, band: DetectorConfig) -> str:
        """What the band takes in that it must not ("" if nothing)."""
        share = self.share(band)
        if share > MAX_TABLE_SHARE:
            return f"takes in {share:.1%} of the rest of the frame"
        return self.blob(band)

    def blob(self, band: DetectorConfig) -> str:
        """Where the band finds a ball-like blob that is not the ball ("" if nowhere)."""
        if (at := _ball_like_blob(self.table_hsv, self.where, band)) is not None:
            return f"a ball-like blob at ({at[0]:.0f}, {at[1]:.0f}) px on the table itself"
        hits, checked = [], 0
        for hsv, allowed, ball in self.frames:
            # A frame counts when what was found moving there is in the band: otherwise it
            # was not the ball (the hole a ball that lay still leaves in the median), and
            # the ball itself may be the blob found away from it.
            if len(ball) == 0 or _inside(ball, band).mean() < 0.5:
                continue
            checked += 1
            if (at := _ball_like_blob(hsv, allowed, band)) is not None:
                hits.append(at)
        if not hits:
            return ""
        u, v = hits[0]
        return (f"a ball-like blob away from the ball in {len(hits)} of {checked} frames "
                f"checked (the first at ({u:.0f}, {v:.0f}) px)")


def learn_colour(frames: Sequence[np.ndarray], base: DetectorConfig,
                 field_mask: np.ndarray | None = None,
                 radius_at: Any = None) -> LearntColour:
    """`frames`: BGR frames of the ball rolling (a few dozen; it must move between them);
    `field_mask`/`radius_at` from the calibration (FieldRegion.mask, BallProjector.radius_px)."""
    if len(frames) < 5:
        raise LearnError(f"need at least 5 frames of the ball rolling, got {len(frames)}")
    table = np.median(np.stack(frames), axis=0).astype(np.uint8)
    where = field_mask if field_mask is not None else np.full(table.shape[:2], 255, np.uint8)
    gate = base if radius_at is not None else _image_limits(base, table.shape[1])
    # The moving, round, ball-sized blob of each frame. In a few frames it is not the ball
    # (a man's head passing, the hole a ball that lay still leaves in the median): those
    # blobs' colour differs from the rest, and they are left out.
    blobs = [_moving_ball(image, table, where, gate, radius_at) for image in frames]
    centres = np.array([(b[1].u, b[1].v) if b is not None else (np.nan, np.nan)
                        for b in blobs])
    colours = {i: np.median(_blob_pixels(frames[i], blob[0]), axis=0)
               for i, blob in enumerate(blobs) if blob is not None}
    if colours:
        # One vote per place: a blob standing in one place over many frames (a man that
        # stepped out of the median's way, the hole he left) counts once, a rolling ball
        # once per frame.
        votes: list[np.ndarray] = []
        for i, colour in colours.items():
            same_place = np.hypot(*(centres - centres[i]).T) <= STANDING_PX
            if int(np.argmax(same_place)) == i:  # the first frame at this place
                votes.append(colour)
        consensus = np.median(np.stack(votes), axis=0)
        for i, colour in colours.items():
            if float(np.abs(colour - consensus).sum()) > COLOUR_AGREEMENT:
                blobs[i] = None
    left_out = int(np.isfinite(centres[:, 0]).sum()) - sum(blob is not None for blob in blobs)
    ball_samples, whole_samples, not_ball, sizes = [], [], [], []
    searched: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    keep_every = max(1, math.ceil(len(frames) / CHECKED_FRAMES))
    for i, image in enumerate(frames):
        hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
        if blobs[i] is not None:
            box, stats = blobs[i]
            blob = _full(box, table.shape[:2])
            sizes.append((stats.area, stats.perimeter))
            core = cv2.erode(blob, np.ones((3, 3), np.uint8), iterations=2)
            ball_samples.append(hsv[core > 0])
            whole_samples.append(hsv[blob > 0])
            away = cv2.dilate(blob, np.ones((9, 9), np.uint8)) == 0
            if (len(sizes) - 1) % keep_every == 0:
                # Where a false ball could be in this frame: the field less the ball and a
                # margin (its blurred edge and shadow are the ball's). Only frames where
                # the ball was found: elsewhere it may be there, still or half hidden.
                ball_area = cv2.dilate(blob, np.ones((25, 25), np.uint8))
                searched.append((hsv, np.where(ball_area == 0, where, 0).astype(np.uint8),
                                 hsv[core > 0]))
        elif np.isfinite(centres[i, 0]):
            continue  # what moved was not the ball, which is somewhere in this frame
        else:
            away = np.ones(table.shape[:2], bool)
        # The whole frame counts as table: the wooden frame and what lies beside the table
        # must not look like the ball either (the field mask keeps them out later, but a
        # band that takes them in is a band that will take in the next table's frame).
        not_ball.append(hsv[away][::7])
    found = len(sizes)
    if found < 3:
        where_from = ("is the calibration right?" if radius_at is not None else
                      f"without a calibration, balls {gate_diameters(table.shape[1])} px "
                      "across are looked for")
        raise LearnError(f"found a moving, round, ball-sized blob in {found} of {len(frames)} "
                         f"frames (need 3): is the ball rolling? {where_from}")
    if radius_at is None:
        base = _sized_for_ball(base, *np.median(np.array(sizes), axis=0))
    ball = np.concatenate(ball_samples)
    check = _TableCheck(np.concatenate(not_ball), table, where, searched)
    narrowed: list[str] = []
    if left_out:
        narrowed.append(f"left out the moving blob of {left_out} frames: its colour is not "
                        f"the ball's (a man, or where the ball lay before)")

    def learnt(band: DetectorConfig) -> LearntColour:
        band = _widen(band, check, narrowed)
        return LearntColour(band, len(ball), found, check.share(band),
                            float(_inside(ball, band).mean()), tuple(narrowed))

    bands = [_band(ball, coverage, base) for coverage in COVERAGES]
    for coverage, band in zip(COVERAGES, bands, strict=True):
        why = check.why(band)
        if not why:
            return learnt(band)
        narrowed.append(f"the band holding {coverage:.0%} of the ball's pixels (hue "
                        f"{band.hue_low}-{band.hue_high}, saturation from {band.sat_low}, "
                        f"value from {band.val_low}) {why}")
    # None separates as it is: one bound moved in, from the widest band on.
    for band in bands:
        if (trimmed := _trim(band, ball, check)) is not None:
            narrowed.append(f"narrowed: {trimmed[1]}")
            return learnt(trimmed[0])
    raise LearnError(
        f"cannot tell the ball from the table by colour: the narrowest band that holds "
        f"{COVERAGES[-1]:.0%} of the ball's pixels (hue {band.hue_low}-{band.hue_high}, "
        f"saturation from {band.sat_low}, value from {band.val_low}) {why}, and no "
        f"saturation or value floor or hue edge moved in keeps the table out"
        f"{'; ' + narrowed[0] if left_out else ''}; "
        f"use the background detector: "
        f"`learn-colour --for-background` writes the ball's own band with "
        f"detector.method = \"background\" (`detect --track` then finds it)",
        # For the background detector, which needs no separation: the ball's colour with
        # its rim, where its shaded side is (without it the mask misses the dark crescent
        # and the centre moves to the lit side).
        band=_band(np.concatenate(whole_samples), COVERAGES[0], base))


# Bounds `_trim` may move in, and which way.
TRIMS = (("sat_low", 1), ("val_low", 1), ("hue_low", 1), ("hue_high", -1))


def _moved(band: DetectorConfig, name: str, step: int) -> DetectorConfig | None:
    value = getattr(band, name) + step
    if name.startswith("hue"):
        if band.hue_low == 0 and band.hue_high == 179:
            return None  # any hue: a grey or white ball
        width = (band.hue_high - band.hue_low) % 180
        return replace(band, **{name: value % 180}) if abs(step) < width else None
    return replace(band, **{name: value}) if value <= 255 else None


def _trim(band: DetectorConfig, ball: np.ndarray, check: _TableCheck,
          ) -> tuple[DetectorConfig, str] | None:
    """The band with one bound moved in (the saturation or value floor up, or one hue edge
    in) just far enough that the table stays out, the bound that keeps most of the ball;
    None when none keeps COVERAGES[-1] of it. A patch of pale field or a man's colour
    usually differs from the ball in one of them only."""
    best: tuple[float, DetectorConfig, str] | None = None
    for name, direction in TRIMS:
        # The furthest the bound may move and still hold enough of the ball.
        furthest = 0
        while (candidate := _moved(band, name, direction * (furthest + 1))) is not None and \
                float(_inside(ball, candidate).mean()) >= COVERAGES[-1]:
            furthest += 1
        if furthest == 0 or check.why(_moved(band, name, direction * furthest)):
            continue
        low, high = 0, furthest  # fails at low, passes at high: the least move that passes
        while high - low > 1:
            middle = (low + high) // 2
            if check.why(_moved(band, name, direction * middle)):
                low = middle
            else:
                high = middle
        trimmed = _moved(band, name, direction * high)
        assert trimmed is not None
        kept = float(_inside(ball, trimmed).mean())
        if best is None or kept > best[0]:
            best = (kept, trimmed, f"{name} {getattr(band, name)} -> "
                    f"{getattr(trimmed, name)} ({kept:.0%} of the ball's pixels kept)")
    return None if best is None else (best[1], best[2])


def _widen(band: DetectorConfig, check: _TableCheck,
           stopped: list[str] | None = None) -> DetectorConfig:
    """The band grown while the table stays out: the ball's rim, its shadowed side and a
    change of light are the ball's colour too, only paler, darker or a little off in hue
    (the learnt core alone gives a small blob, taken for a partly hidden ball). What
    stopped a bound from growing into the table goes into `stopped`, once per bound."""
    def fits(candidate: DetectorConfig) -> bool:
        return check.share(candidate) <= MAX_TABLE_SHARE / 2 and not check.blob(candidate)

    steps = [("val_low", -10, 0), ("sat_low", -10, 0)]
    if not (band.hue_low == 0 and band.hue_high == 179):
        steps += [("hue_low", -1, None), ("hue_high", 1, None)]
    grown = True
    for _ in range(12):
        if not grown:
            break
        grown = False
        for name, step, floor in steps:
            value = getattr(band, name) + step
            if floor is not None:
                if value < floor:
                    continue
            else:
                value %= 180
                if value in (band.hue_low, band.hue_high):
                    continue
            candidate = replace(band, **{name: value})
            if fits(candidate):
                band, grown = candidate, True
            elif stopped is not None and (why := check.blob(candidate)) and not any(
                    note.startswith(f"{name} ") for note in stopped):
                stopped.append(f"{name} kept at {getattr(band, name)}: {value} {why}")
    return band


def gate_diameters(width: int) -> str:
    small, large = (width * share for share in BALL_WIDTH_SHARES)
    return f"{small:.0f}-{large:.0f}"


def _image_limits(base: DetectorConfig, width: int) -> DetectorConfig:
    """`base` with size limits for any ball this image could show (no calibration)."""
    small, large = (width * share / 2 for share in BALL_WIDTH_SHARES)  # radii, px
    return replace(base, min_area=math.pi * small * small, max_area=math.pi * large * large,
                   min_perimeter=1.6 * math.pi * small, max_perimeter=2.6 * math.pi * large)


def _sized_for_ball(base: DetectorConfig, area: float, perimeter: float) -> DetectorConfig:
    """Size limits and search windows for the ball found (its median area and perimeter),
    in the proportions of the defaults to the simulator's 17 px ball (40-1200 px for 216,
    perimeter 20-160 for 52), but a little tighter above: no calibration checks the size
    where the ball is."""
    radius = math.sqrt(area / math.pi)
    refine = min(256, max(base.refine_half, math.ceil(1.5 * radius) + 4))
    return replace(base, min_area=round(0.2 * area, 1), max_area=round(4.0 * area, 1),
                   min_perimeter=round(0.35 * perimeter, 1),
                   max_perimeter=round(3.0 * perimeter, 1), refine_half=refine,
                   roi_max_half=min(256, max(base.roi_max_half, refine))).validate()


Box = tuple[tuple[int, int, int, int], np.ndarray]  # (x, y, w, h) and the mask within it


def _blob_pixels(image: np.ndarray, box: Box) -> np.ndarray:
    """A blob's pixels, read within its box (the same pixels, in the same order, as
    `image[_full(box, image.shape) > 0]`, without a whole-frame mask)."""
    (x, y, w, h), small = box
    return image[y:y + h, x:x + w][small > 0]


def _full(box: Box, shape: tuple[int, ...]) -> np.ndarray:
    """A blob's mask (from `_moving_ball`) as a mask of the whole frame."""
    (x, y, w, h), small = box
    mask = np.zeros(shape[:2], np.uint8)
    mask[y:y + h, x:x + w] = small
    return mask


def _moving_ball(image: np.ndarray, table: np.ndarray, where: np.ndarray,
                 base: DetectorConfig, radius_at: Any,
                 ) -> tuple[Box, BlobStats] | None:
    """The most ball-like moving blob of `image` (its box and the mask within it) and its
    statistics, or None."""
    difference = cv2.absdiff(image, table).astype(np.int16).sum(axis=2)
    moving = np.where((difference > MOTION_THRESHOLD) & (where > 0), 255, 0).astype(np.uint8)
    contours, _ = cv2.findContours(moving, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    best, best_stats, best_score = None, None, 0.0
    for contour in contours:
        if len(contour) < 5:
            continue
        stats = blob_stats(contour)
        if stats is None or not passes(stats, base):
            continue
        (_, _), enclosing = cv2.minEnclosingCircle(contour)
        fill = stats.area / max(1e-9, math.pi * enclosing * enclosing)
        if radius_at is not None:
            expected = math.pi * radius_at(stats.u, stats.v) ** 2
            if not 0.6 * expected <= stats.area <= 1.5 * expected:
                continue
        if fill >= 0.7 and fill > best_score:
            best, best_stats, best_score = contour, stats, fill
    if best is None or best_stats is None:
        return None
    x, y, w, h = cv2.boundingRect(best)
    mask = np.zeros((h, w), np.uint8)
    cv2.drawContours(mask, [best], -1, 255, -1, offset=(-x, -y))
    return ((x, y, w, h), mask), best_stats


def _band(ball: np.ndarray, coverage: float, base: DetectorConfig) -> DetectorConfig:
    hue, sat, val = (ball[:, k].astype(np.int32) for k in range(3))
    tail = (1.0 - coverage) * 100.0
    sat_low = max(0, int(np.percentile(sat, tail)) - HSV_MARGIN)
    val_low = max(0, int(np.percentile(val, tail)) - HSV_MARGIN)
    if np.median(sat) < 50:  # grey or white: hue means nothing; bound saturation above
        sat_high = min(255, int(np.percentile(sat, 100.0 - tail)) + HSV_MARGIN)
        return replace(base, hue_low=0, hue_high=179, sat_low=0, sat_high=sat_high,
                       val_low=val_low, val_high=255).validate()
    low, high = _hue_arc(hue, coverage)
    return replace(base, hue_low=low, hue_high=high, sat_low=sat_low, sat_high=255,
                   val_low=val_low, val_high=255).validate()


def _hue_arc(hue: np.ndarray, coverage: float) -> tuple[int, int]:
    """The shortest arc of the hue circle (0..179) holding `coverage` of the samples, with
    a margin of 2 on each side; low > high when it runs through 179 -> 0."""
    counts = np.bincount(hue, minlength=180)[:180]
    doubled = np.concatenate([counts, counts])
    need = coverage * counts.sum()
    cumulative = np.concatenate([[0], np.cumsum(doubled)])
    best = (180, 0)
    for start in range(180):
        # the first end where the arc [start, end) holds enough
        end = int(np.searchsorted(cumulative, cumulative[start] + need, side="left"))
        if end - start < best[0]:
            best = (end - start, start)
    width, start = best
    low, high = (start - 2) % 180, (start + width + 1) % 180
    return low, high


def _inside(hsv: np.ndarray, band: DetectorConfig) -> np.ndarray:
    hue, sat, val = hsv[:, 0], hsv[:, 1], hsv[:, 2]
    if band.hue_wraps:
        hue_in = (hue >= band.hue_low) | (hue <= band.hue_high)
    else:
        hue_in = (hue >= band.hue_low) & (hue <= band.hue_high)
    return hue_in & (sat >= band.sat_low) & (sat <= band.sat_high) & (
        val >= band.val_low) & (val <= band.val_high)


def _band_mask(hsv: np.ndarray, band: DetectorConfig) -> np.ndarray:
    """255 where an HSV image is inside the band (the hue through 179 -> 0 when it wraps)."""
    low_sv, high_sv = (band.sat_low, band.val_low), (band.sat_high, band.val_high)
    if not band.hue_wraps:
        return cv2.inRange(hsv, (band.hue_low, *low_sv), (band.hue_high, *high_sv))
    return cv2.inRange(hsv, (band.hue_low, *low_sv), (179, *high_sv)) | cv2.inRange(
        hsv, (0, *low_sv), (band.hue_high, *high_sv))


def _ball_like_blob(hsv: np.ndarray, where: np.ndarray, band: DetectorConfig,
                    ) -> tuple[float, float] | None:
    """The centre of a blob of the band inside `where` that the detector's blob filter
    would take for the ball, or None."""
    mask = _band_mask(hsv, band) & where
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    for contour in contours:
        if len(contour) < 3:
            continue
        stats = blob_stats(contour)
        if stats is not None and passes(stats, band):
            return stats.u, stats.v
    return None


def band_preview(image: np.ndarray, band: DetectorConfig) -> np.ndarray:
    """The frame beside its mask under the band (what the tracker will see), for a person."""
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV)
    mask = _inside(hsv.reshape(-1, 3), band).reshape(image.shape[:2])
    shown = np.where(mask[..., None], 255, 0).astype(np.uint8).repeat(3, axis=2)
    return np.hstack([image, shown])
