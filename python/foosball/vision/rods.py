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
        self._strips = [self._strip(rod, table, width, height) for rod in self.rods]
        dec = cfg.decimation if pixel_format == "bgr" else 1  # YUYV pairs stay whole
        self._dec = dec
        rows = max(r1 - r0 for (_, r0, _, r1) in self._strips)
        cols = max(c1 - c0 for (c0, _, c1, _) in self._strips)
        self._small = np.empty((rows // dec + 1, cols // dec + 1, 3), np.uint8)
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

    def measure(self, image: np.ndarray) -> list[RodReading]:
        return [self._reading(rod, self._men(image, rod, strip))
                for rod, strip in zip(self.rods, self._strips, strict=True)]

    def _men(self, image: np.ndarray, rod: Rod, strip: tuple[int, int, int, int],
             ) -> list[tuple[float, float, float]]:
        """(y, reach towards +x, reach towards -x) of each man-sized blob, axis plane, m."""
        c0, r0, c1, r1 = strip
        dec = self._dec
        window = image[r0:r1, c0:c1]
        if dec > 1:
            rows, cols = (r1 - r0) // dec, (c1 - c0) // dec
            small = self._small[:rows, :cols]
            # At exactly 1/2, linear interpolation is the mean of each 2x2 block.
            cv2.resize(window, (cols, rows), dst=small, interpolation=cv2.INTER_LINEAR)
            window = small
        mask = self._threshold.mask(window)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        men = []
        min_area = MIN_MAN_AREA_PX / (dec * dec)
        for contour in contours:
            m = cv2.moments(contour)
            if m["m00"] < min_area:
                continue
            # Small pixel j averages pixels j * dec .. j * dec + dec - 1.
            u = c0 + (m["m10"] / m["m00"] + 0.5) * dec - 0.5
            v = r0 + (m["m01"] / m["m00"] + 0.5) * dec - 0.5
            x, y = self.projector.to_table(u, v)
            if abs(x - rod.x) > self._reach + 0.02:
                continue
            points = contour.reshape(-1, 2)
            xs = [self.projector.to_table(c0 + (pu + 0.5) * dec - 0.5,
                                          r0 + (pv + 0.5) * dec - 0.5)[0]
                  for pu, pv in points[np.argsort(points[:, 0])[[0, -1]]]]
            men.append((y, max(xs) - rod.x, rod.x - min(xs)))
        return men

    def _reading(self, rod: Rod, men: list[tuple[float, float, float]]) -> RodReading:
        role = ROLES.index(rod.role) if rod.role in ROLES else 0
        last_t, last_r = self._last[id(rod)]
        nominal = rod.men_y(0.0)
        best: list[tuple[int, float, float]] = []
        for y, _, _ in men:
            for y0 in nominal:
                t = y - y0
                if not rod.travel_min - 0.02 <= t <= rod.travel_max + 0.02:
                    continue
                pairs = _pairs(men, nominal, t)
                if len(pairs) > len(best):
                    best = pairs
        if not best:
            return RodReading(rod, role, last_t, last_r, 0, False)
        translation = self._fit([(y, y0) for _, y, y0 in best])
        plus = float(np.median([men[i][1] for i, _, _ in best]))
        minus = float(np.median([men[i][2] for i, _, _ in best]))
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
        measured = np.array([y for y, _ in pairs])
        nominal = np.array([y0 for _, y0 in pairs])
        if len(pairs) < 3:
            return float(np.mean(measured - nominal))
        cy = self.camera_xy[1]
        # measured - cy = k (nominal + t - cy) = k nominal + c: linear in k and c
        a = np.column_stack([nominal, np.ones(len(pairs))])
        (k, c), *_ = np.linalg.lstsq(a, measured - cy, rcond=None)
        return float(c / k + cy) if abs(k) > 0.5 else float(np.mean(measured - nominal))


def _pairs(men: list[tuple[float, float, float]], nominal: tuple[float, ...],
           t: float) -> list[tuple[int, float, float]]:
    """(index, measured y, nominal y) of the men that lie where translation `t` puts one."""
    pairs = []
    for index, (y, _, _) in enumerate(men):
        y0 = min(nominal, key=lambda n: abs(y - (n + t)))
        if abs(y - (y0 + t)) <= MATCH_TOLERANCE:
            pairs.append((index, y, y0))
    return pairs
