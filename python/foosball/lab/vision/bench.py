"""Per-frame time of our tracker and of the seed-style full-frame detection, on the same
frames, in the same run, interleaved frame by frame (so load changes hit both alike), in
alternating order (so each pays for the cold cache of a new frame half the time).

Interleaved frame by frame, the seed-style pipeline sweeps about 2.5 MB through the caches
just before every other step of ours, so half of our steps find their code and data
evicted (measured with the compiled window threshold: median 18 us after our own previous
step, 30 us right after the seed-style one; 25 and 61 us before it). A second figure
interleaves blocks of frames instead (ours on a block, the seed-style pipeline on the same
block, alternating which goes first): load still hits both alike, and each runs with the
caches as it leaves them, as it would alone.

Ours is the whole tracker step: window detection (or whole-frame re-acquisition), pixel ->
table with the ball-height correction, gating and the Kalman update. The seed-style
reference is detection only (HSV conversion of the frame, threshold, contours, blob filter,
moments), without its filter or homography, so the ratio errs in the seed's favour.
"""

from __future__ import annotations

import gc
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

import cv2
import numpy as np

from foosball.geometry import Table
from foosball.lab.vision.seed_pipeline import SeedPipeline
from foosball.vision.calibration import Calibration
from foosball.vision.config import DetectorConfig, FilterConfig, RodsConfig
from foosball.vision.detector import Detection
from foosball.vision.rods import HumanRodMeter
from foosball.vision.tracker import BallTracker, Search, TrackResult, TrackStatus

# Frames per turn of the second comparison (16 frames of 640 x 480 BGR: 15 MB, past the
# caches, so each pipeline still meets every frame cold).
BLOCK_FRAMES = 16


class BenchFrame(Protocol):
    image: np.ndarray
    capture_time_ns: int


def _stats(samples_ns: Sequence[int]) -> dict[str, float]:
    if not samples_ns:
        return {"frames": 0}
    us = np.asarray(samples_ns, dtype=np.float64) / 1e3
    return {
        "frames": len(us),
        "median_us": round(float(np.median(us)), 2),
        "mean_us": round(float(us.mean()), 2),
        "p95_us": round(float(np.percentile(us, 95)), 2),
        "p99_us": round(float(np.percentile(us, 99)), 2),
    }


def time_pipelines(frames: Sequence[BenchFrame], calibration: Calibration, table: Table,
                   detector_cfg: DetectorConfig | None = None,
                   filter_cfg: FilterConfig | None = None, repeats: int = 3,
                   pixel_format: str = "bgr", block: int = 1) -> dict[str, Any]:
    """`pixel_format="yuyv"`: the frames are turned into YUYV first (what a V4L2 camera
    delivers); ours reads them as they are, the seed-style pipeline converts each whole
    frame to BGR first, as OpenCV's capture does for it. `block`: frames per turn (1: frame
    by frame)."""
    detector_cfg = detector_cfg or DetectorConfig()
    filter_cfg = filter_cfg or FilterConfig()
    seed = SeedPipeline(detector_cfg, calibration.image_size)
    if pixel_format == "yuyv":
        frames = [_Frame(to_yuyv(f.image), f.capture_time_ns) for f in frames]
        width, height = calibration.image_size
        seed_bgr = np.empty((height, width, 3), np.uint8)

        def seed_detect(image: np.ndarray) -> Detection | None:
            cv2.cvtColor(image, cv2.COLOR_YUV2BGR_YUYV, dst=seed_bgr)
            return seed.detect(seed_bgr)
    else:
        seed_detect = seed.detect
    ours_tracking: list[int] = []
    ratios_tracking: list[float] = []
    ours_other: list[int] = []
    ours_all: list[int] = []
    seed_all: list[int] = []
    agree = compared = 0
    for _ in range(repeats):
        tracker = BallTracker(detector_cfg, filter_cfg, calibration, table, pixel_format)
        tracker.process(frames[0].image, frames[0].capture_time_ns)  # warm caches
        tracker = BallTracker(detector_cfg, filter_cfg, calibration, table, pixel_format)
        gc.collect()
        for turn, start in enumerate(range(0, len(frames), block)):
            chunk = frames[start:start + block]
            # Whichever runs first on a frame pays for bringing it into the cache
            # (measured: about 8 us of ours); alternate the order so neither always pays.
            if turn % 2 == 0:
                results, ours_ns = _time_tracker(tracker, chunk)
                references, seed_ns = _time_detection(seed_detect, chunk)
            else:
                references, seed_ns = _time_detection(seed_detect, chunk)
                results, ours_ns = _time_tracker(tracker, chunk)
            for result, found, ours, seed_time in zip(results, references, ours_ns, seed_ns,
                                                      strict=True):
                ours_all.append(ours)
                seed_all.append(seed_time)
                if result.search is Search.WINDOW and result.status is TrackStatus.DETECTED:
                    ours_tracking.append(ours)
                    ratios_tracking.append(seed_time / max(1, ours))
                else:
                    ours_other.append(ours)
                if found is not None and result.detection is not None:
                    compared += 1
                    d = result.detection
                    agree += (d.u - found.u) ** 2 + (d.v - found.v) ** 2 < 1.0
    tracking, everything, reference = _stats(ours_tracking), _stats(ours_all), _stats(seed_all)
    return {
        "frame_size": list(calibration.image_size),
        "pixel_format": pixel_format,
        "frames_per_pass": len(frames),
        "passes": repeats,
        "frames_per_turn": block,
        "opencv": cv2.__version__,
        "opencv_threads": cv2.getNumThreads(),
        "machine": f"{platform.machine()} {platform.processor() or platform.platform()}",
        "ours_tracking": tracking,
        "ours_not_tracking": _stats(ours_other),
        "ours_all_frames": everything,
        "seed_style_full_frame": reference,
        "speedup_tracking_median": round(reference["median_us"] / tracking["median_us"], 2)
        if tracking.get("frames") else None,
        # The two timings of one frame are taken close together, so a burst of load from
        # elsewhere hits both: the median of per-frame ratios is the steadiest figure.
        "speedup_tracking_per_frame_median": round(float(np.median(ratios_tracking)), 2)
        if ratios_tracking else None,
        "speedup_all_frames_mean": round(reference["mean_us"] / everything["mean_us"], 2),
        "detections_within_1px_of_seed": f"{agree}/{compared}",
    }


def _time_tracker(tracker: BallTracker,
                  frames: Sequence[BenchFrame]) -> tuple[list[TrackResult], list[int]]:
    clock = time.perf_counter_ns
    results, times = [], []
    for frame in frames:
        t0 = clock()
        result = tracker.process(frame.image, frame.capture_time_ns)
        times.append(clock() - t0)
        results.append(result)
    return results, times


def _time_detection(detect: Callable[[np.ndarray], Detection | None],
                    frames: Sequence[BenchFrame]) -> tuple[list[Detection | None], list[int]]:
    clock = time.perf_counter_ns
    found, times = [], []
    for frame in frames:
        t0 = clock()
        detection = detect(frame.image)
        times.append(clock() - t0)
        found.append(detection)
    return found, times


def time_second_paths(frames: Sequence[BenchFrame], calibration: Calibration, table: Table,
                      detector_cfg: DetectorConfig | None = None,
                      rods_cfg: RodsConfig | None = None) -> dict[str, Any]:
    """The second detector (background model) while tracking, and the human's rods
    measurement, each timed frame by frame beside the seed-style pipeline on the same
    frames (BGR), so they too are reported as ratios of one run."""
    detector_cfg = replace(detector_cfg or DetectorConfig(), method="background")
    seed = SeedPipeline(detector_cfg, calibration.image_size)
    tracker = BallTracker(detector_cfg, FilterConfig(), calibration, table)
    meter = HumanRodMeter(calibration, table, rods_cfg or RodsConfig())
    clock = time.perf_counter_ns
    background: list[int] = []
    rods: list[int] = []
    seed_times: list[int] = []
    gc.collect()
    for frame in frames:
        t0 = clock()
        seed.detect(frame.image)
        t1 = clock()
        result = tracker.process(frame.image, frame.capture_time_ns)
        t2 = clock()
        meter.measure(frame.image)
        t3 = clock()
        seed_times.append(t1 - t0)
        rods.append(t3 - t2)
        if result.search is Search.WINDOW and result.status is TrackStatus.DETECTED:
            background.append(t2 - t1)
    reference = _stats(seed_times)
    tracking, measuring = _stats(background), _stats(rods)
    return {
        "background_detector_tracking": tracking,
        "human_rods_measurement": measuring,
        "seed_style_full_frame_same_frames": reference,
        "speedup_background_tracking_median": round(
            reference["median_us"] / tracking["median_us"], 2) if background else None,
        "speedup_human_rods_median": round(reference["median_us"] / measuring["median_us"], 2),
    }


class _Frame:
    __slots__ = ("capture_time_ns", "image")

    def __init__(self, image: np.ndarray, capture_time_ns: int):
        self.image = image
        self.capture_time_ns = capture_time_ns


def to_yuyv(bgr: np.ndarray) -> np.ndarray:
    """BGR -> packed YUYV 4:2:2 (the U and V of each pixel pair from its left pixel)."""
    yuv = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV)
    out = np.empty((bgr.shape[0], bgr.shape[1], 2), np.uint8)
    out[:, :, 0] = yuv[:, :, 0]
    out[:, 0::2, 1] = yuv[:, 0::2, 1]
    out[:, 1::2, 1] = yuv[:, 0::2, 2]
    return out
