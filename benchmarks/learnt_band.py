"""Issue 32: the band `learn-colour` learns, against the default band, on held-out frames.

For each ball and light: the band is learnt (as `foosball vision learn-colour` does with a
calibration) from the first 60 frames of the simulator's "shots" scene at seed S; both it
and the default band (`DetectorConfig()`, the orange ball's) are then scored by
`foosball.lab.vision.evaluate` on another clip of the same table at seed S + 1000 (other
shots, other men's moves, other sensor noise): detection rate (ball at least half
visible), false balls (frames with no ball visible, ten empty frames between shots),
position error p50 / p95 of the published ball. Last, the orange ball with a patch of
the table in its hue seen in every third frame (`with_table_patch`), in the learning
frames and the held-out ones alike. And the white ball on a light field seen obliquely
(issue 15's scene): no colour band separates it, so (as `learn-colour --for-background`
does) the ball's own band goes to the background detector; it is scored beside the hand
band of issue 15 (`WHITE_BALL_BAND`) on the same detector.

    nice -n 19 .venv/bin/python benchmarks/learnt_band.py [--frames 600] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import Any

from foosball.geometry import default_table
from foosball.lab.vision.evaluate import evaluate
from foosball.sim.render import CameraConfig, Palette
from foosball.sim.vision_source import WHITE_BALL_BAND, sim_eval_frames, with_table_patch
from foosball.vision.calibration import BallProjector
from foosball.vision.config import DetectorConfig
from foosball.vision.field import FieldRegion
from foosball.vision.learn import LearnError, learn_colour

WHITE = "white on a light field, oblique"
BALLS = {"orange": Palette(), "yellow": Palette(ball=(30.0, 220.0, 240.0)),
         "orange, a patch of the table in its hue in a third of the frames": Palette(),
         WHITE: Palette(ball=(245.0, 245.0, 245.0), field=(200, 212, 205))}
OBLIQUE = CameraConfig(position=(0.0, -0.15, 1.12), pitch=-0.12, roll=0.02)
LIGHTS = (0.6, 1.0)
LEARN_FRAMES = 60
HELD_OUT = 1000  # seed offset of the frames the bands are scored on


def _cell(report: dict[str, Any]) -> dict[str, Any]:
    return {"detection_rate": report["detection_rate"],
            "false_balls": report["false_detections"],
            "p50_mm": report["position_error"].get("p50_mm"),
            "p95_mm": report["position_error"].get("p95_mm")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="", help="only the balls whose name holds this")
    args = parser.parse_args()
    table = default_table()
    for name, palette in BALLS.items():
        if args.only and args.only not in name:
            continue
        for light in LIGHTS:
            lit = replace(palette, brightness=light)
            camera = OBLIQUE if name == WHITE else None
            learning, calibration = sim_eval_frames(LEARN_FRAMES, args.seed, "shots",
                                                    camera=camera, palette=lit)
            projector = BallProjector(calibration)
            field = FieldRegion(projector, table).mask()
            held_out, held_calibration = sim_eval_frames(args.frames, args.seed + HELD_OUT,
                                                         "shots", camera=camera, palette=lit)
            if "patch" in name:
                learning = with_table_patch(learning, calibration)
                held_out = with_table_patch(held_out, held_calibration)
            calibration = held_calibration
            row: dict[str, Any] = {"ball": name, "light": light}
            try:
                learnt = learn_colour([f.image for f in learning], DetectorConfig(), field,
                                      projector.radius_px)
                row["learnt_band"] = learnt.report()
                row["learnt"] = _cell(evaluate(held_out, calibration,
                                               detector_cfg=learnt.detector))
            except LearnError as exc:
                row["learnt"] = f"refused: {exc}"
                if exc.band is not None:  # what `learn-colour --for-background` writes
                    row["learnt_for_background"] = _cell(evaluate(
                        held_out, calibration,
                        detector_cfg=replace(exc.band, method="background")))
            default = WHITE_BALL_BAND if name == WHITE else DetectorConfig()
            if name == WHITE:
                default = replace(default, method="background")
            row["default"] = _cell(evaluate(held_out, calibration, detector_cfg=default))
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
