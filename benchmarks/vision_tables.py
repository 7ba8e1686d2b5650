"""Issue 15's accuracy table: both detectors on rendered scenes at several ball colours and
lighting levels, and the human's rods.

Per scene (simulator renderer, the "shots" scene: 3-15 m/s shots among moving men, ten
empty frames between shots): the colour detector with the band learnt by `learn_colour`
from the scene's first 60 frames (as a person would at the table; "refused" when it cannot
separate the ball), and the background detector with the learnt band, or a wide band for a
ball coloured like the field. The figures are `foosball.lab.vision.evaluate` over the frames
after those 60: detection rate (ball at least half visible), false detections (no ball
visible), balls reported on frames without a ball, position error p50 / p95 of the
published state. Then the human's rods: translation error p50 / p95 / max and rotation
error where it is reported, on the straight-down default camera.

    .venv/bin/python benchmarks/vision_tables.py --frames 1200 --seed 1 --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from typing import Any

import numpy as np

from foosball.geometry import default_table
from foosball.lab.vision.evaluate import evaluate
from foosball.sim.render import CameraConfig, Palette, Renderer
from foosball.sim.vision_source import shot_states, sim_calibration, sim_eval_frames
from foosball.vision.calibration import BallProjector
from foosball.vision.config import DetectorConfig, RodsConfig
from foosball.vision.field import FieldRegion
from foosball.vision.learn import LearnError, learn_colour
from foosball.vision.rods import HumanRodMeter

OBLIQUE = CameraConfig(position=(0.0, -0.15, 1.12), pitch=-0.12, roll=0.02)
WIDE_WHITE = DetectorConfig(hue_low=0, hue_high=179, sat_low=0, sat_high=70, val_low=150)
BALLS: dict[str, tuple[Palette, CameraConfig | None]] = {
    "orange": (Palette(), None),
    "yellow": (Palette(ball=(30.0, 220.0, 240.0)), None),
    "pink": (Palette(ball=(180.0, 60.0, 240.0)), None),
    "white on a light field, oblique": (
        Palette(ball=(245.0, 245.0, 245.0), field=(200, 212, 205)), OBLIQUE),
}
LIGHTS = (0.6, 1.0, 1.4)
LEARN_FRAMES = 60


def _cell(report: dict[str, Any]) -> dict[str, Any]:
    return {"detection_rate": report["detection_rate"],
            "false_detections": report["false_detections"],
            "frames_without_visible_ball": report["frames_without_visible_ball"],
            "empty_frames_not_lost": report["of_those_not_lost"],
            "position_p50_mm": report["position_error"].get("p50_mm"),
            "position_p95_mm": report["position_error"].get("p95_mm")}


def detector_table(frames: int, seed: int, only: str = "") -> list[dict[str, Any]]:
    table = default_table()
    rows = []
    for name, (palette, camera) in BALLS.items():
        if only and only not in name:
            continue
        for light in LIGHTS:
            lit = replace(palette, brightness=light)
            scene, calibration = sim_eval_frames(frames + LEARN_FRAMES, seed, "shots",
                                                 camera=camera, palette=lit)
            projector = BallProjector(calibration)
            field = FieldRegion(projector, table).mask()
            row: dict[str, Any] = {"ball": name, "light": light}
            try:
                learnt = learn_colour([f.image for f in scene[:LEARN_FRAMES]], DetectorConfig(),
                                      field, projector.radius_px)
                band = learnt.detector
                row["learnt_band"] = learnt.report()
                row["colour"] = _cell(evaluate(scene[LEARN_FRAMES:], calibration,
                                               detector_cfg=band))
            except LearnError as exc:
                # The ball's own band, which takes in the field: for the background detector.
                band = exc.band or WIDE_WHITE
                row["learnt_band"] = f"refused: {exc}"
                row["background_band"] = [band.hue_low, band.hue_high, band.sat_low,
                                          band.sat_high, band.val_low, band.val_high]
                row["colour"] = "refused"
            # The background detector forms its model on the frames after the learning
            # ones, so its first 56 frames count as misses.
            row["background"] = _cell(evaluate(scene[LEARN_FRAMES:], calibration,
                                               detector_cfg=replace(band, method="background")))
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def rods_table(frames: int, seed: int) -> dict[str, Any]:
    table = default_table()
    calibration = sim_calibration(seed)
    renderer = Renderer(table, seed=seed)
    meter = HumanRodMeter(calibration, table, RodsConfig())
    human = [i for i, rod in enumerate(table.rods) if rod.team == "human"]
    translation: list[float] = []
    signed: list[float] = []
    rotation: list[float] = []
    unseen = 0
    for state in shot_states(frames, seed + 1, table):
        readings = meter.measure(renderer.render(state).image)
        for reading, i in zip(readings, human, strict=True):
            if reading.men_seen == 0:
                unseen += 1
                continue
            signed.append(reading.translation - state.translations[i])
            translation.append(abs(signed[-1]))
            truth = math.atan2(math.sin(state.rotations[i]), math.cos(state.rotations[i]))
            if reading.rotation_seen:
                rotation.append(abs(reading.rotation - truth))
    t = np.asarray(translation) * 1e3
    debiased = np.abs(np.asarray(signed) - np.mean(signed)) * 1e3
    r = np.degrees(np.asarray(rotation)) if rotation else np.zeros(1)
    return {"rod_readings": len(t), "not_measured": unseen,
            "translation_p50_mm": round(float(np.percentile(t, 50)), 2),
            "translation_p95_mm": round(float(np.percentile(t, 95)), 2),
            "translation_max_mm": round(float(t.max()), 2),
            "translation_mean_signed_mm": round(float(np.mean(signed)) * 1e3, 2),
            "translation_p95_without_the_constant_mm": round(
                float(np.percentile(debiased, 95)), 2),
            "rotation_reported_share": round(len(rotation) / max(1, len(t)), 3),
            "rotation_p50_deg": round(float(np.percentile(r, 50)), 1),
            "rotation_p95_deg": round(float(np.percentile(r, 95)), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1200)
    parser.add_argument("--rod-frames", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write the whole report here")
    parser.add_argument("--only", default="", help="only the balls whose name holds this")
    args = parser.parse_args()
    report = {"detectors": detector_table(args.frames, args.seed, args.only),
              "human_rods": rods_table(args.rod_frames, args.seed)}
    print(json.dumps(report["human_rods"]))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1)


if __name__ == "__main__":
    main()
