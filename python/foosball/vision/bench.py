"""Per-frame time of our tracker and of the seed-style full-frame detection, on the same
frames, in the same run, interleaved frame by frame (so load changes hit both alike).

Ours is the whole tracker step: window detection (or whole-frame re-acquisition), pixel ->
table with the ball-height correction, gating and the Kalman update. The seed-style
reference is detection only (HSV conversion of the frame, threshold, contours, blob filter,
moments), without its filter or homography, so the ratio errs in the seed's favour.
"""

from __future__ import annotations

import gc
import platform
import time
from collections.abc import Sequence
from typing import Any, Protocol

import cv2
import numpy as np

from foosball.geometry import Table, default_table
from foosball.vision.calibration import Calibration
from foosball.vision.config import DetectorConfig, FilterConfig
from foosball.vision.seed_pipeline import SeedPipeline
from foosball.vision.tracker import BallTracker, Search, TrackStatus


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
                   filter_cfg: FilterConfig | None = None, repeats: int = 3) -> dict[str, Any]:
    detector_cfg = detector_cfg or DetectorConfig()
    filter_cfg = filter_cfg or FilterConfig()
    seed = SeedPipeline(detector_cfg, calibration.image_size)
    ours_tracking: list[int] = []
    ours_other: list[int] = []
    ours_all: list[int] = []
    seed_all: list[int] = []
    agree = compared = 0
    clock = time.perf_counter_ns
    for _ in range(repeats):
        tracker = BallTracker(detector_cfg, filter_cfg, calibration, table)
        tracker.process(frames[0].image, frames[0].capture_time_ns)  # warm caches
        tracker = BallTracker(detector_cfg, filter_cfg, calibration, table)
        gc.collect()
        for frame in frames:
            t0 = clock()
            result = tracker.process(frame.image, frame.capture_time_ns)
            t1 = clock()
            reference = seed.detect(frame.image)
            t2 = clock()
            ours_all.append(t1 - t0)
            seed_all.append(t2 - t1)
            if result.search is Search.WINDOW and result.status is TrackStatus.DETECTED:
                ours_tracking.append(t1 - t0)
            else:
                ours_other.append(t1 - t0)
            if reference is not None and result.detection is not None:
                compared += 1
                d = result.detection
                agree += (d.u - reference.u) ** 2 + (d.v - reference.v) ** 2 < 1.0
    tracking, everything, reference = _stats(ours_tracking), _stats(ours_all), _stats(seed_all)
    return {
        "frame_size": list(calibration.image_size),
        "frames_per_pass": len(frames),
        "passes": repeats,
        "opencv": cv2.__version__,
        "opencv_threads": cv2.getNumThreads(),
        "machine": f"{platform.machine()} {platform.processor() or platform.platform()}",
        "ours_tracking": tracking,
        "ours_not_tracking": _stats(ours_other),
        "ours_all_frames": everything,
        "seed_style_full_frame": reference,
        "speedup_tracking_median": round(reference["median_us"] / tracking["median_us"], 2)
        if tracking.get("frames") else None,
        "speedup_all_frames_mean": round(reference["mean_us"] / everything["mean_us"], 2),
        "detections_within_1px_of_seed": f"{agree}/{compared}",
    }


def run_bench(frames: int = 600, repeats: int = 3, seed: int = 1, threads: int = 1,
              scene: str = "sim") -> dict[str, Any]:
    cv2.setNumThreads(threads)
    if scene == "sim":
        from foosball.vision.sim_source import sim_bench_frames

        bench_frames, calibration = sim_bench_frames(frames, seed)
    else:
        from foosball.vision.synthetic import synthetic_sequence

        bench_frames, calibration = synthetic_sequence(frames, seed)
    report = time_pipelines(bench_frames, calibration, default_table(), repeats=repeats)
    report["scene"] = scene
    return report
