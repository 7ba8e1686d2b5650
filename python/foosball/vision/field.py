"""Where the ball can be, from the calibration: the playing field and the two goal mouths.

Two forms of one region. `contains(u, v)`: may a blob centred at this pixel be the ball
(its centre on the field, or in a goal mouth, at ball-centre height)? `mask`: the pixels a
ball's image can cover (the field and the goal mouths grown by a ball radius), so the
wooden frame, the markers and whatever lies beside the table never reach the blob search.
"""

from __future__ import annotations

import cv2
import numpy as np

from foosball.geometry import Table
from foosball.vision.calibration import BallProjector

# Slack for the calibration's error, m.
CENTRE_SLACK = 0.015
# How far past the goal line the tracker still reports the ball (a goal is decided there).
GOAL_DEPTH = 0.05


class FieldRegion:
    def __init__(self, projector: BallProjector, table: Table):
        self.projector = projector
        f = table.field
        r = projector.calibration.ball_radius
        self._x_field = f.half_length - r + CENTRE_SLACK
        self._y_field = f.half_width - r + CENTRE_SLACK
        self._x_goal = f.half_length + GOAL_DEPTH
        self._y_goal = f.goal_width / 2 - r + CENTRE_SLACK
        # Table-frame outlines of what a ball's image can cover: its centre's region grown by
        # its radius (the silhouette around the centre).
        hl, hw, gy = f.half_length, f.half_width, f.goal_width / 2
        self._outlines = [
            _box(hl, hw),
            *([(s * hl, -gy), (s * (self._x_goal + r), -gy), (s * (self._x_goal + r), gy),
               (s * hl, gy)] for s in (-1.0, 1.0)),
        ]
        # ... and of the centre's region itself (`contains`).
        self._centre_outlines = [_box(self._x_field, self._y_field),
                                 _box(self._x_goal, self._y_goal)]

    def contains(self, u: float, v: float) -> bool:
        x, y = self.projector.to_table(u, v)
        ax, ay = abs(x), abs(y)
        return (ax <= self._x_field and ay <= self._y_field) or (
            ax <= self._x_goal and ay <= self._y_goal)

    def mask(self, margin_px: int = 2) -> np.ndarray:
        """Full-resolution uint8 mask (255: a ball's pixel may be there)."""
        mask = self._fill(self._outlines)
        if margin_px > 0:
            mask = cv2.dilate(mask, np.ones((2 * margin_px + 1, 2 * margin_px + 1), np.uint8))
        return mask

    def centre_mask(self) -> np.ndarray:
        """Full-resolution uint8 mask (255: `contains` holds at the pixel, to within the
        half pixel of the outline's rasterisation)."""
        return self._fill(self._centre_outlines)

    def _fill(self, outlines: list[list[tuple[float, float]]]) -> np.ndarray:
        width, height = self.projector.calibration.image_size
        mask = np.zeros((height, width), np.uint8)
        for outline in outlines:
            # Edges sampled densely, so a lens model's curved edges are followed too.
            points = []
            for (x0, y0), (x1, y1) in zip(outline, outline[1:] + outline[:1], strict=True):
                for t in np.linspace(0.0, 1.0, 16, endpoint=False):
                    points.append(self.projector.to_pixel(x0 + (x1 - x0) * t,
                                                          y0 + (y1 - y0) * t))
            pixels = np.round(np.array(points) * 16).astype(np.int32)
            cv2.fillPoly(mask, [pixels], 255, cv2.LINE_8, shift=4)
        return mask


def _box(half_x: float, half_y: float) -> list[tuple[float, float]]:
    return [(-half_x, -half_y), (half_x, -half_y), (half_x, half_y), (-half_x, half_y)]
