"""The vision's offline bench and accuracy evaluation on a scene: the simulator's (a match,
or shots) or the built-in synthetic one; `foosball vision bench` and `foosball vision
evaluate` run them. Laptop-side: the scenes come from the simulator, so the drivers live
here and vision/bench.py, vision/evaluate.py keep only the measuring."""

from __future__ import annotations

from typing import Any

import cv2

from foosball.geometry import default_table
from foosball.vision.bench import BLOCK_FRAMES, time_pipelines, time_second_paths
from foosball.vision.evaluate import evaluate


def run_bench(frames: int = 600, repeats: int = 3, seed: int = 1, threads: int = 1,
              scene: str = "match", pixel_format: str = "bgr",
              second_paths: bool = True, block: int = BLOCK_FRAMES) -> dict[str, Any]:
    """The frame-by-frame comparison, then (`block` > 1) the same in blocks of frames."""
    cv2.setNumThreads(threads)
    if scene in ("match", "shots"):
        from foosball.sim.vision_source import sim_bench_frames

        bench_frames, calibration = sim_bench_frames(frames, seed, scene)
    else:
        from foosball.vision.synthetic import synthetic_sequence

        bench_frames, calibration = synthetic_sequence(frames, seed)
    report = time_pipelines(bench_frames, calibration, default_table(), repeats=repeats,
                            pixel_format=pixel_format)
    report["scene"] = scene
    if block > 1:
        blocks = time_pipelines(bench_frames, calibration, default_table(), repeats=repeats,
                                pixel_format=pixel_format, block=block)
        report["in_blocks"] = {key: blocks[key] for key in (
            "frames_per_turn", "ours_tracking", "seed_style_full_frame",
            "speedup_tracking_median", "speedup_tracking_per_frame_median")}
    if second_paths:
        report["second_paths"] = time_second_paths(bench_frames, calibration, default_table())
    return report


def run_evaluation(frames: int = 4000, seed: int = 1, scene: str = "match") -> dict[str, Any]:
    """`scene`: "match" or "shots" (simulator renderer), "synthetic" (built-in renderer)."""
    if scene in ("match", "shots"):
        from foosball.sim.vision_source import sim_eval_frames

        eval_frames, calibration = sim_eval_frames(frames, seed, scene)
    else:
        from foosball.vision.synthetic import synthetic_sequence

        eval_frames, calibration = synthetic_sequence(frames, seed)
    report = evaluate(eval_frames, calibration)
    report["scene"] = scene
    return report
