"""The seed's detection, full frame, as the reference for speed and for results.

Convert the whole frame to HSV, threshold it, find the contours, filter the blobs on area,
perimeter, density and eccentricity, take the centre from the moments. Buffers are
allocated once here as well, so the comparison measures the method, not the allocator.
"""

from __future__ import annotations

import cv2
import numpy as np

from foosball.vision.config import DetectorConfig
from foosball.vision.detector import Detection, blob_stats, passes


class SeedPipeline:
    def __init__(self, cfg: DetectorConfig, frame_size: tuple[int, int]):
        width, height = frame_size
        self.cfg = cfg
        self._hsv = np.empty((height, width, 3), np.uint8)
        self._mask = np.empty((height, width), np.uint8)
        self._mask2 = np.empty((height, width), np.uint8)

    def detect(self, image_bgr: np.ndarray) -> Detection | None:
        cfg = self.cfg
        cv2.cvtColor(image_bgr, cv2.COLOR_BGR2HSV, dst=self._hsv)
        if cfg.hue_wraps:
            cv2.inRange(self._hsv, (cfg.hue_low, cfg.sat_low, cfg.val_low),
                        (179, cfg.sat_high, cfg.val_high), dst=self._mask)
            cv2.inRange(self._hsv, (0, cfg.sat_low, cfg.val_low),
                        (cfg.hue_high, cfg.sat_high, cfg.val_high), dst=self._mask2)
            cv2.bitwise_or(self._mask, self._mask2, dst=self._mask)
        else:
            cv2.inRange(self._hsv, (cfg.hue_low, cfg.sat_low, cfg.val_low),
                        (cfg.hue_high, cfg.sat_high, cfg.val_high), dst=self._mask)
        contours, _ = cv2.findContours(self._mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        best = None
        for contour in contours:
            if len(contour) < 3:
                continue
            stats = blob_stats(contour)
            if stats is not None and passes(stats, cfg) and (best is None or
                                                             stats.area > best.area):
                best = stats
        if best is None:
            return None
        return Detection(best.u, best.v, best.area, False)
