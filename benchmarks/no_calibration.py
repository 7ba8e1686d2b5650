"""Issue 32: the tools without markers. The background detector on a white ball on a light
field (issue 15's oblique scene, simulator renderer), searched as `foosball vision detect`
does without --calibration (per frame, and with --track: near the last ball), against the
calibrated tracker on the same frames; pixel error against the renderer's truth.

    nice -n 19 .venv/bin/python benchmarks/no_calibration.py [--frames 400] [--seed 3]

Frames after the model has formed (the first 64) count; "hidden" balls (under half
visible) are in the total, as the tracker's own evaluation counts them.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace

import numpy as np

from foosball.geometry import default_table
from foosball.sim.vision_source import WHITE_BALL_BAND, white_ball_frames
from foosball.vision.calibration import BallProjector
from foosball.vision.config import FilterConfig
from foosball.vision.detector import make_detector
from foosball.vision.tracker import BallTracker
from foosball.vision_cli import _search

WHITE = replace(WHITE_BALL_BAND, method="background")
SKIP = 64  # the model forms over 7 x 8 frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    frames, calibration = white_ball_frames(args.frames, args.seed)
    projector = BallProjector(calibration)
    with_ball = sum(f.ball_xy is not None for f in frames[SKIP:])
    empty = len(frames) - SKIP - with_ball
    print(f"{len(frames)} frames, seed {args.seed}: {with_ball} with the ball after the "
          f"first {SKIP}, {empty} without")

    def report(name: str, found: list) -> None:
        errors, false = [], 0
        for detection, frame in zip(found[SKIP:], frames[SKIP:], strict=True):
            if frame.ball_xy is None:
                false += detection is not None
            elif detection is not None:
                u, v = projector.to_pixel(*frame.ball_xy)
                errors.append(math.hypot(detection.u - u, detection.v - v))
        print(f"  {name}: found {len(errors)} of {with_ball}, false {false} of {empty}, "
              f"pixel error p50 {np.percentile(errors, 50):.2f} px, "
              f"p95 {np.percentile(errors, 95):.2f} px")

    for track in (False, True):
        detector = make_detector(WHITE, "bgr", calibration.image_size)
        last, found = None, []
        for frame in frames:
            detection = _search(detector, frame.image, last if track else None)
            last = None if detection is None else (detection.u, detection.v)
            found.append(detection)
        report("no calibration, " + ("--track" if track else "per frame"), found)
    tracker = BallTracker(WHITE, FilterConfig(), calibration, default_table())
    report("calibrated tracker", [tracker.process(f.image, f.capture_time_ns).detection
                                  for f in frames])


if __name__ == "__main__":
    main()
