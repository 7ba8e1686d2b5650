"""The human's rods measured from the camera: where his men stand, every frame.

Per human rod, a strip of the frame around the rod (the men's reach either side of its
axis) is thresholded at reduced resolution in the men's HSV band; each blob of a man's
size is one man. Its centre is mapped to the plane of the rod axis; the men's nominal
places (the table geometry's spacing) are matched to the blobs by trying each blob as
each man and keeping the translation most blobs agree with, then the translation is the
least-squares fit over the agreeing men. With three or more men the fit also takes a
scale about the camera's foot point, because a man's silhouette is not at one height and
the camera sees it in perspective (one or two men: the axis plane alone).

Rotation, where the shape shows it: seen from above a man lying towards +x (feet towards
the human's goal, positive rotation) reaches the foot's length beyond his axis on that
side and the head's on the other; standing, neither. The two reaches, median over the
rod's men, are matched against that model over -90..90 degrees. Near 0 the reaches hardly
change, so rotations under ROTATION_SEEN_MIN are reported as not seen.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import cv2
import numpy as np

from foosball.geometry import Rod, Table
from foosball.vision.calibration import BallProjector, Calibration
from foosball.vision.config import RodsConfig
from foosball.vision.detector import ColourThreshold

ROTATION_SEEN_MIN = math.radians(20.0)
MATCH_TOLERANCE = 0.02  # m: a blob this close to a man's expected place is that man
MIN_MAN_AREA_PX = 12.0  # full-resolution pixels; smaller blobs are noise
_ANGLES = np.linspace(-math.pi / 2, math.pi / 2, 181)


@dataclass(frozen=True, slots=True)
class RodReading:
    rod: Rod
    role: int  # index of the role: 0 goalkeeper, 1 defence, 2 midfield, 3 attack
    translation: float
    rotation: float
    men_seen: int
    rotation_seen: bool


ROLES = ("goalkeeper", "defence", "midfield", "attack")


class HumanRodMeter:
    def __init__(self, calibration: Calibration, table: Table, cfg: RodsConfig,
                 pixel_format: str = "bgr"):
        self.cfg = cfg.validate()
        self.table = table  # for_calibration makes another from it
        man = table.man
        # The rod axes' plane: a projector for "a ball" whose centre is at the rod height.
        self.projector = BallProjector(calibration.for_ball(man.rod_height))
        self.camera_xy = calibration.camera_centre[:2]
        self.rods = [rod for rod in table.rods if rod.team == "human"]
        self.pixel_format = pixel_format
        self._reach = man.foot_reach
        self._head = cfg.head_above_axis
        self._half_thickness = man.foot_thickness / 2
        width, height = calibration.image_size
        dec = cfg.decimation if pixel_format == "bgr" else 1  # YUYV pairs stay whole
        self._dec = dec
        strips = [self._strip(rod, table, width, height) for rod in self.rods]
        # One decimation of the box around all strips (OpenCV's resize costs per row, so
        # one wide resize is cheaper than four narrow ones); strips start on its grid.
        self._box = (min(s[0] for s in strips), min(s[1] for s in strips),
                     max(s[2] for s in strips), max(s[3] for s in strips))
        bc0, br0, bc1, br1 = self._box
        self._box_small = np.empty(((br1 - br0) // dec, (bc1 - bc0) // dec, 3), np.uint8)
        self._strips = [(bc0 + (c0 - bc0) // dec * dec, br0 + (r0 - br0) // dec * dec,
                         min(c1, bc0 + (bc1 - bc0) // dec * dec),
                         min(r1, br0 + (br1 - br0) // dec * dec)) for c0, r0, c1, r1 in strips]
        rows = max(r1 - r0 for (_, r0, _, r1) in self._strips)
        cols = max(c1 - c0 for (c0, _, c1, _) in self._strips)
        self._threshold = ColourThreshold(cfg, pixel_format, rows // dec + 1, cols // dec + 1)
        self._last = {id(rod): (0.0, 0.0) for rod in self.rods}
        self._rod_height = man.rod_height
        self._camera = calibration.camera_centre
        self._models = {id(rod): self._reach_model(rod) for rod in self.rods}

    def _reach_model(self, rod: Rod) -> tuple[np.ndarray, np.ndarray]:
        """Over the rotation grid: how far the man's image reaches beyond his axis towards
        +x and -x, on the axis plane, as this camera sees it (feet and head are not at the
        axis height, and far from the camera's foot point perspective moves them)."""
        c, s = np.cos(_ANGLES)[:, None], np.sin(_ANGLES)[:, None]
        t = self._half_thickness
        # Man outline in his rod's x-z plane (axis at 0): feet corners and head corners.
        local_x = np.array([-t, t, -t, t])[None, :]
        local_z = np.array([-self._reach, -self._reach, self._head, self._head])[None, :]
        wx = rod.x + local_x * c - local_z * s
        wz = self._rod_height + local_x * s + local_z * c
        cx, _, height = self._camera
        seen_x = cx + (wx - cx) * (height - self._rod_height) / (height - wz)
        return seen_x.max(axis=1) - rod.x, rod.x - seen_x.min(axis=1)

    def _strip(self, rod: Rod, table: Table, width: int, height: int,
               ) -> tuple[int, int, int, int]:
        """Pixel box (c0, r0, c1, r1) holding the rod's men wherever they are."""
        reach = max(self._reach, self._head) + 0.01
        half = table.field.half_width + 0.02
        corners = [self.projector.to_pixel(rod.x + dx, y)
                   for dx in (-reach, reach) for y in (-half, half)]
        # The men reach from the field to above the axis: widen for the perspective.
        grow = 0.15 * reach / self.projector.metres_per_pixel(*corners[0])
        us, vs = [u for u, _ in corners], [v for _, v in corners]
        c0 = max(0, int(min(us) - grow)) & ~1
        c1 = min(width, int(max(us) + grow) + 2) & ~1
        r0 = max(0, int(min(vs) - grow))
        r1 = min(height, int(max(vs) + grow) + 1)
        return c0, r0, c1, r1

    def for_calibration(self, calibration: Calibration) -> HumanRodMeter:
        """A new meter like this one, with `calibration` (the game panel's guided one)."""
        return HumanRodMeter(calibration, self.table, self.cfg, self.pixel_format)

    def measure(self, image: np.ndarray) -> list[RodReading]:
        source = image
        if self._dec > 1:
            bc0, br0, _, _ = self._box
            rows, cols = self._box_small.shape[:2]
            # Every dec-th pixel (OpenCV's nearest: small pixel j is pixel j * dec); a mean
            # of each block measured no better and costs four times as much.
            cv2.resize(image[br0:br0 + rows * self._dec, bc0:bc0 + cols * self._dec],
                       (cols, rows), dst=self._box_small, interpolation=cv2.INTER_NEAREST)
            source = self._box_small
        return [self._reading(rod, self._men(source, rod, strip))
                for rod, strip in zip(self.rods, self._strips, strict=True)]

    def _men(self, source: np.ndarray, rod: Rod, strip: tuple[int, int, int, int],
             ) -> list[tuple[float, float, float]]:
        """(y, reach towards +x, reach towards -x) of each man-sized blob, axis plane, m."""
        c0, r0, c1, r1 = strip
        dec = self._dec
        bc0, br0, _, _ = self._box if dec > 1 else (0, 0, 0, 0)
        # `source` is the frame, or the decimated box whose pixel 0 is the box's corner.
        window = source[(r0 - br0) // dec:(r1 - br0) // dec, (c0 - bc0) // dec:(c1 - bc0) // dec]
        mask = self._threshold.mask(window)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        men = []
        min_area = MIN_MAN_AREA_PX / (dec * dec)
        for contour in contours:
            m = cv2.moments(contour)
            if m["m00"] < min_area:
                continue
            u = c0 + m["m10"] / m["m00"] * dec
            v = r0 + m["m01"] / m["m00"] * dec
            x, y = self.projector.to_table(u, v)
            if abs(x - rod.x) > self._reach + 0.02:
                continue
            points = contour.reshape(-1, 2)
            xs = [self.projector.to_table(c0 + pu * dec, r0 + pv * dec)[0]
                  for pu, pv in (points[points[:, 0].argmin()], points[points[:, 0].argmax()])]
            men.append((y, max(xs) - rod.x, rod.x - min(xs)))
        return men

    def _reading(self, rod: Rod, men: list[tuple[float, float, float]]) -> RodReading:
        role = ROLES.index(rod.role) if rod.role in ROLES else 0
        last_t, last_r = self._last[id(rod)]
        nominal = np.array(rod.men_y(0.0))
        if not men:
            return RodReading(rod, role, last_t, last_r, 0, False)
        seen_y = np.array([y for y, _, _ in men])
        # Every blob as every man: a candidate translation each; the one that puts a man
        # within MATCH_TOLERANCE of the most blobs wins (then the smallest spread).
        candidates = (seen_y[:, None] - nominal[None, :]).ravel()
        candidates = candidates[(candidates >= rod.travel_min - 0.02)
                                & (candidates <= rod.travel_max + 0.02)]
        if candidates.size == 0:
            return RodReading(rod, role, last_t, last_r, 0, False)
        # (candidate, blob, man) offsets
        offsets = np.abs(seen_y[None, :, None] - nominal[None, None, :] - candidates[:, None, None])
        nearest = offsets.min(axis=2)
        agree = nearest <= MATCH_TOLERANCE
        score = agree.sum(axis=1) - np.where(agree, nearest, 0.0).sum(axis=1)
        pick = int(np.argmax(score))
        blobs = np.flatnonzero(agree[pick])
        men_of = offsets[pick].argmin(axis=1)
        best = [(int(i), float(seen_y[i]), float(nominal[men_of[i]])) for i in blobs]
        translation = self._fit([(y, y0) for _, y, y0 in best])
        plus = statistics.median(men[i][1] for i, _, _ in best)
        minus = statistics.median(men[i][2] for i, _, _ in best)
        model_plus, model_minus = self._models[id(rod)]
        cost = (model_plus - plus) ** 2 + (model_minus - minus) ** 2
        rotation = float(_ANGLES[int(np.argmin(cost))])
        seen = abs(rotation) >= ROTATION_SEEN_MIN
        rotation = rotation if seen else 0.0
        self._last[id(rod)] = (translation, rotation)
        return RodReading(rod, role, translation, rotation, len(best), seen)

    def _fit(self, pairs: list[tuple[float, float]]) -> float:
        """Translation from (measured y, nominal y) pairs; with 3+ men a perspective scale
        about the camera's foot point is fitted too."""
        if len(pairs) < 3:
            return sum(y - y0 for y, y0 in pairs) / len(pairs)
        cy = self.camera_xy[1]
        # measured - cy = k nominal + c (a perspective scale k about the camera's foot
        # point), least squares by the 2x2 normal equations
        n = len(pairs)
        sx = sum(y0 for _, y0 in pairs)
        sy = sum(y - cy for y, _ in pairs)
        sxx = sum(y0 * y0 for _, y0 in pairs)
        sxy = sum(y0 * (y - cy) for y, y0 in pairs)
        det = n * sxx - sx * sx
        k = (n * sxy - sx * sy) / det if det > 1e-12 else 0.0
        if abs(k) < 0.5:
            return sum(y - y0 for y, y0 in pairs) / n
        c = (sy - k * sx) / n
        return c / k + cy
