"""`foosball vision ...`: calibrate, detect, bench, evaluate, run (the ball tracker agent)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SCENES = ("match", "shots", "synthetic")
SCENE_HELP = ("match: a simulated match (simulator renderer); shots: 3-15 m/s shots among "
              "moving men (simulator renderer); synthetic: the built-in renderer")


def register(subparsers: Any) -> None:
    vision = subparsers.add_parser("vision", help="ball tracker: calibration, detection, bench")
    sub = vision.add_subparsers(dest="command", required=True)

    cal = sub.add_parser("calibrate", help="ArUco calibration -> calibration file (atomic)")
    cal.add_argument("image", nargs="?", help="a frame showing the four markers")
    cal.add_argument("--sim", action="store_true",
                     help="take the frame and the marker layout from the simulator")
    cal.add_argument("--markers", help="marker layout JSON (table positions of the markers)")
    cal.add_argument("--focal-px", type=float, help="camera focal length in pixels; "
                     "estimated from the markers when the camera is tilted enough")
    cal.add_argument("--principal", type=float, nargs=2, metavar=("CX", "CY"),
                     help="principal point in pixels (default: the image centre)")
    cal.add_argument("--distortion", type=float, nargs=5, metavar=("K1", "K2", "P1", "P2", "K3"),
                     help="lens distortion (OpenCV model) from a chessboard calibration of the "
                     "camera; needs --focal-px")
    cal.add_argument("--output", default="calibration.json")
    cal.add_argument("--json", action="store_true")
    cal.set_defaults(func=_calibrate)

    det = sub.add_parser("detect", help="find the ball in images")
    det.add_argument("images", nargs="+")
    det.add_argument("--calibration", help="calibration file: adds the table position")
    det.add_argument("--settings", help="vision settings JSON (detector thresholds)")
    det.add_argument("--json", action="store_true")
    det.set_defaults(func=_detect)

    bench = sub.add_parser("bench", help="time our pipeline and the seed-style one, same frames")
    bench.add_argument("--frames", type=int, default=600)
    bench.add_argument("--repeats", type=int, default=3, help="passes over the frames")
    bench.add_argument("--seed", type=int, default=1)
    bench.add_argument("--threads", type=int, default=1, help="OpenCV threads (both pipelines)")
    bench.add_argument("--scene", choices=SCENES, default="match", help=SCENE_HELP)
    bench.add_argument("--pixel-format", choices=("bgr", "yuyv"), default="bgr",
                       help="yuyv: as a V4L2 camera delivers; the seed-style side converts")
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(func=_bench)

    ev = sub.add_parser("evaluate", help="accuracy on simulator frames with ground truth")
    ev.add_argument("--frames", type=int, default=4000)
    ev.add_argument("--seed", type=int, default=1)
    ev.add_argument("--scene", choices=SCENES, default="match", help=SCENE_HELP)
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=_evaluate)

    defaults = sub.add_parser("settings", help="print the default vision settings JSON")
    defaults.set_defaults(func=_settings)



def _print(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        for key, value in data.items():
            print(f"{key}: {value}")


def _calibrate(args: argparse.Namespace) -> int:
    import cv2

    from foosball.geometry import default_table
    from foosball.vision.calibration import (
        CalibrationError,
        MarkerLayout,
        calibrate,
        write_calibration,
    )

    try:
        if args.sim:
            from foosball.vision.sim_source import sim_calibration_frame

            image, layout, focal = sim_calibration_frame()
            focal = args.focal_px or focal
        else:
            if not args.image or not args.markers:
                print("vision calibrate: give IMAGE and --markers FILE, or --sim",
                      file=sys.stderr)
                return 2
            image = cv2.imread(args.image, cv2.IMREAD_COLOR)
            if image is None:
                print(f"vision calibrate: cannot read {args.image}", file=sys.stderr)
                return 2
            layout = MarkerLayout.from_json(json.loads(Path(args.markers).read_text()))
            focal = args.focal_px
        calibration = calibrate(image, layout, default_table().ball.radius, focal_px=focal,
                                principal=tuple(args.principal) if args.principal else None,
                                distortion=tuple(args.distortion) if args.distortion else None)
        write_calibration(calibration, args.output)
    except (CalibrationError, OSError, json.JSONDecodeError) as exc:
        print(f"vision calibrate: {exc}", file=sys.stderr)
        return 1
    _print({
        "output": args.output,
        "markers": list(calibration.marker_ids),
        "reprojection_rms_px": round(calibration.reprojection_rms_px, 4),
        "reprojection_max_px": round(calibration.reprojection_max_px, 4),
        "table_rms_mm": round(calibration.table_rms_m * 1e3, 3),
        "camera_centre_m": [round(v, 4) for v in calibration.camera_centre],
        "focal_px": round(calibration.focal_px, 2),
        "focal_estimated": calibration.focal_estimated,
        "distortion": list(calibration.distortion),
    }, args.json)
    return 0


def _detect(args: argparse.Namespace) -> int:
    import cv2

    from foosball.vision.calibration import BallProjector, CalibrationError, load_calibration
    from foosball.vision.config import DetectorConfig, VisionConfigError, load_settings
    from foosball.vision.detector import BallDetector

    try:
        cfg = load_settings(args.settings).detector if args.settings else DetectorConfig()
        projector = BallProjector(load_calibration(args.calibration)) if args.calibration \
            else None
    except (CalibrationError, VisionConfigError) as exc:
        print(f"vision detect: {exc}", file=sys.stderr)
        return 1
    results = []
    status = 0
    detectors: dict[tuple[int, int], BallDetector] = {}
    for path in args.images:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        if image is None:
            results.append({"image": path, "error": "cannot read"})
            status = 1
            continue
        size = (image.shape[1], image.shape[0])
        if size not in detectors:
            detectors[size] = BallDetector(cfg, "bgr", size,
                                           radius_at=projector.radius_px if projector else None)
        found = detectors[size].search_frame(image)
        entry: dict[str, Any] = {"image": path, "found": found is not None}
        if found is not None:
            entry["pixel"] = [round(found.u, 3), round(found.v, 3)]
            entry["partial"] = found.partial
            if projector is not None:
                x, y = projector.to_table(found.u, found.v)
                entry["table_m"] = [round(x, 5), round(y, 5)]
        results.append(entry)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for entry in results:
            print(entry)
    return status


def _bench(args: argparse.Namespace) -> int:
    from foosball.vision.bench import run_bench

    report = run_bench(frames=args.frames, repeats=args.repeats, seed=args.seed,
                       threads=args.threads, scene=args.scene,
                       pixel_format=args.pixel_format)
    _print(report, args.json)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from foosball.vision.evaluate import run_evaluation

    report = run_evaluation(frames=args.frames, seed=args.seed, scene=args.scene)
    _print(report, args.json)
    return 0 if report.get("passed", False) else 1


def _settings(_args: argparse.Namespace) -> int:
    from foosball.vision.config import VisionSettings, settings_to_json

    print(json.dumps(settings_to_json(VisionSettings()), indent=2))
    return 0
