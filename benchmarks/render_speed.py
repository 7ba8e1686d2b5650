"""The camera renderer side by side with an earlier version of it (by default main's): speed,
the frames' difference, and the tracker's accuracy on both renderers' frames.

    .venv/bin/python benchmarks/render_speed.py [--base main] [--frames 600] [--scene shots]
    .venv/bin/python benchmarks/render_speed.py --live  # also the live table, both renderers
    .venv/bin/python benchmarks/render_speed.py --accuracy [--accuracy-frames 600] [--only orange]

The earlier renderer is `git show BASE:python/foosball/sim/render.py`, loaded as its own
module beside this checkout's, both fed the same world states and seeds.

- speed: CPU time of this process (`time.process_time`, OpenCV on one thread, as
  `sim_speed.py`) per 640x480 frame with noise, blur and lighting, the two renderers taking
  turns in blocks of 50 frames so a busy machine slows both alike; the ratio is base / new.
  Also the new renderer drawing into one reused buffer (`render(state, out=buffer)`).
- difference: both renderers draw the same states with the same seed, so their noise and
  flicker draws are the same and what differs is the drawing: mean absolute difference per
  channel value, its largest frame, the share of values more than 8 apart, and the largest
  difference of the visible fraction and of the ground-truth pixel.
- live table (`--live`): `LiveTable.next_frame`, the simulated camera process's work per
  frame (physics up to the frame's time, then the frame), 100 fps of a clock handed in.
- accuracy (`--accuracy`): the tracker's detection rate and errors (`evaluate`, issue 4's
  figures) on the "match" and "shots" scenes, then `vision_tables.py`'s detector table (both
  detectors, ball colours, light levels) and its human-rod table, once with each renderer.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import cv2
import numpy as np

from foosball.geometry import default_table
from foosball.lab.vision_bench import run_evaluation
from foosball.sim import render
from foosball.sim.vision_source import match_states, shot_states

ROOT = Path(__file__).resolve().parents[1]
BLOCK = 50


def base_renderer(ref: str) -> ModuleType:
    """The renderer module as it is at git `ref`, imported under its own name."""
    source = subprocess.run(["git", "show", f"{ref}:python/foosball/sim/render.py"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout
    folder = Path(tempfile.mkdtemp(prefix="render-base-"))
    path = folder / "render_base.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("render_base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["render_base"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def speed(states: list[Any], base: ModuleType, seed: int) -> dict[str, Any]:
    table = default_table()
    renderers = {"base": base.Renderer(table, base.CameraConfig(), seed=seed),
                 "new": render.Renderer(table, render.CameraConfig(), seed=seed),
                 "new, reused buffer": render.Renderer(table, render.CameraConfig(), seed=seed)}
    buffer = np.empty((480, 640, 3), np.uint8)
    spent = dict.fromkeys(renderers, 0.0)
    for start in range(0, len(states), BLOCK):
        block = states[start : start + BLOCK]
        for name, renderer in renderers.items():
            into = {"out": buffer} if name == "new, reused buffer" else {}
            cpu = time.process_time()
            for state in block:
                renderer.render(state, **into)
            spent[name] += time.process_time() - cpu
    per_frame = {name: seconds / len(states) for name, seconds in spent.items()}
    return {"frames": len(states),
            "cpu_ms_per_frame": {name: round(s * 1e3, 3) for name, s in per_frame.items()},
            "ratio_base_over_new": round(per_frame["base"] / per_frame["new"], 2),
            "ratio_base_over_new_reused_buffer": round(
                per_frame["base"] / per_frame["new, reused buffer"], 2)}


def difference(states: list[Any], base: ModuleType, seed: int) -> dict[str, Any]:
    table = default_table()
    old = base.Renderer(table, base.CameraConfig(), seed=seed)
    new = render.Renderer(table, render.CameraConfig(), seed=seed)
    mean: list[float] = []
    apart: list[float] = []
    visible = pixel = 0.0
    for state in states:
        a, b = old.render(state), new.render(state)
        diff = np.abs(a.image.astype(np.int16) - b.image)
        mean.append(float(diff.mean()))
        apart.append(float((diff > 8).mean()))
        visible = max(visible, abs(a.visible_fraction - b.visible_fraction))
        if a.ball_pixel is not None and b.ball_pixel is not None:
            pixel = max(pixel, float(np.hypot(*np.subtract(a.ball_pixel, b.ball_pixel))))
    return {"mean_abs_difference": round(float(np.mean(mean)), 4),
            "largest_frame_mean_abs_difference": round(max(mean), 4),
            "share_of_values_more_than_8_apart": round(float(np.mean(apart)), 6),
            "largest_visible_fraction_difference": round(visible, 6),
            "largest_ball_pixel_difference_px": round(pixel, 9)}


@contextlib.contextmanager
def renderer_swapped(module: ModuleType, tables: ModuleType) -> Iterator[None]:
    """The simulator's scenes (`sim.vision_source`) and the tables drawn by `module`'s renderer."""
    saved = render.Renderer, tables.Renderer
    render.Renderer = tables.Renderer = module.Renderer
    try:
        yield
    finally:
        render.Renderer, tables.Renderer = saved


def live_table(base: ModuleType, frames: int) -> dict[str, Any]:
    """`LiveTable.next_frame` (the simulated table played up to the frame's time, then
    rendered), 100 fps of a clock handed in, with each renderer; the two tables take turns
    frame by frame and play the same match."""
    from foosball.sim import live

    clock = [0.0]

    def table(renderer: type) -> Any:
        saved = live.Renderer
        live.Renderer = renderer  # type: ignore[misc]
        try:
            return live.LiveTable(opponent="club", seed=1, monotonic=lambda: clock[0],
                                  wall_ns=lambda: round(clock[0] * 1e9))
        finally:
            live.Renderer = saved  # type: ignore[misc]

    tables = {"base": table(base.Renderer), "new": table(render.Renderer)}
    spent = dict.fromkeys(tables, 0.0)
    for index in range(frames):
        clock[0] += 0.01
        for name, played in tables.items():
            cpu = time.process_time()
            played.next_frame(index)
            spent[name] += time.process_time() - cpu
    for played in tables.values():
        played.close()
    return {"frames": frames,
            "cpu_ms_per_frame": {name: round(s / frames * 1e3, 3) for name, s in spent.items()},
            "ratio_base_over_new": round(spent["base"] / spent["new"], 2)}


def tracker_figures(report: dict[str, Any]) -> dict[str, Any]:
    return {"detection_rate": report["detection_rate"],
            "false_detections": report["false_detections"],
            "position_p50_mm": report["position_error"].get("p50_mm"),
            "position_p95_mm": report["position_error"].get("p95_mm"),
            "velocity_p95_mps": report["velocity_error_settled"].get("p95_mps")}


def accuracy(base: ModuleType, frames: int, seed: int, only: str) -> dict[str, Any]:
    """The tracker (`vision_bench.run_evaluation`, issue 4's figures) on both scenes, and
    `vision_tables.py`'s tables, with each renderer."""
    spec = importlib.util.spec_from_file_location("vision_tables",
                                                  ROOT / "benchmarks" / "vision_tables.py")
    assert spec is not None and spec.loader is not None
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    report: dict[str, Any] = {}
    for name, module in (("base", base), ("new", render)):
        with renderer_swapped(module, tables):
            report[name] = {
                "tracker": {scene: tracker_figures(run_evaluation(frames, seed, scene))
                            for scene in ("match", "shots")},
                "detectors": tables.detector_table(frames, seed, only),
                "human_rods": tables.rods_table(frames, seed)}
        print(json.dumps({name: {"tracker": report[name]["tracker"],
                                 "human_rods": report[name]["human_rods"]}}), flush=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="git ref of the renderer to compare with")
    parser.add_argument("--frames", type=int, default=600)
    parser.add_argument("--scene", choices=("shots", "match"), default="shots")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--live", action="store_true",
                        help="also the live table's frames (physics and renderer)")
    parser.add_argument("--accuracy", action="store_true", help="also the tracker's tables")
    parser.add_argument("--accuracy-frames", type=int, default=600)
    parser.add_argument("--only", default="", help="accuracy: only balls whose name holds this")
    parser.add_argument("--json", help="write the whole report here")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    base = base_renderer(args.base)
    table = default_table()
    states = (shot_states if args.scene == "shots" else match_states)(args.frames, args.seed,
                                                                      table)
    report: dict[str, Any] = {"base": args.base, "scene": args.scene,
                              "speed": speed(states, base, args.seed)}
    print(json.dumps(report["speed"]), flush=True)
    report["difference"] = difference(states, base, args.seed)
    print(json.dumps(report["difference"]), flush=True)
    if args.live:
        report["live_table"] = live_table(base, args.frames)
        print(json.dumps({"live_table": report["live_table"]}), flush=True)
    if args.accuracy:
        report["accuracy"] = accuracy(base, args.accuracy_frames, args.seed, args.only)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
