"""`foosball vision ...`: calibrate, detect, bench, evaluate, run (the ball tracker agent).

A command module beside foosball.config, not inside vision/: it reads the ball tracker's
section of the board file (`--config`), and the board loader imports vision, so the
command sits above both."""

from __future__ import annotations

import argparse
import dataclasses
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

    from foosball.vision.calibration import FOCAL_MEASURE, LAYOUT_HELP, MAX_REPROJECTION_RMS_PX
    from foosball.vision.layout_check import MAX_MARKER_OFFSET_M

    cal = sub.add_parser("calibrate", help="ArUco calibration -> calibration file (atomic)",
                         epilog=LAYOUT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    cal.add_argument("image", nargs="?", help="a frame showing the markers (4 at least)")
    cal.add_argument("--sim", action="store_true",
                     help="take the frame and the marker layout from the simulator")
    cal.add_argument("--markers", help="marker layout JSON: where each marker lies on the "
                     "table (format below; `vision layout-example` writes one)")
    cal.add_argument("--focal-px", type=float, help="camera focal length in pixels; "
                     "estimated from the markers when the camera is tilted enough. To "
                     "measure it, " + FOCAL_MEASURE)
    cal.add_argument("--principal", type=float, nargs=2, metavar=("CX", "CY"),
                     help="principal point in pixels (default: the image centre)")
    cal.add_argument("--distortion", type=float, nargs=5, metavar=("K1", "K2", "P1", "P2", "K3"),
                     help="lens distortion (OpenCV model) from a chessboard calibration of the "
                     "camera; needs --focal-px")
    cal.add_argument("--max-reprojection-px", type=float,
                     help="refuse a calibration whose marker corners reproject worse (RMS, "
                     f"px; default {MAX_REPROJECTION_RMS_PX:g} px at 640x480, in proportion "
                     "to the image's diagonal)")
    cal.add_argument("--max-marker-offset-mm", type=float, default=MAX_MARKER_OFFSET_M * 1e3,
                     help="with 5 markers or more: refuse a marker further than this from "
                     "where the others put it (mm; default %(default)g)")
    cal.add_argument("--config", help="the board's configuration file: its ball_tracker "
                     "ball_diameter (default: the table geometry's ball)")
    cal.add_argument("--output", default="calibration.json")
    cal.add_argument("--json", action="store_true")
    cal.set_defaults(func=_calibrate)

    example = sub.add_parser("layout-example", help="write an example marker layout file "
                             "(six markers: beyond the field's corners and beside the middle "
                             "of each side) to edit",
                             epilog=LAYOUT_HELP,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
    example.add_argument("--output", default="markers.json")
    example.set_defaults(func=_layout_example)

    det = sub.add_parser("detect", help="find the ball in images, folders or videos: one "
                         "JSON line per frame")
    det.add_argument("inputs", nargs="+", help="image files, folders of images, videos")
    det.add_argument("--calibration", help="calibration file: the tracker's candidate filter "
                     "(only the field and the goal mouths, the ball's size there) and the "
                     "table position")
    det.add_argument("--config", help="the board's configuration file (its ball_tracker "
                     "section: thresholds, detector, ball diameter)")
    det.add_argument("--settings", help="vision settings JSON instead of --config (a colour "
                     "file from learn-colour is one: the rest default)")
    det.add_argument("--track", action="store_true",
                     help="run the whole tracker (window search, Kalman filter) over each "
                     "sequence instead of a whole-frame search per frame; without "
                     "--calibration the window search only, in pixels")
    det.set_defaults(func=_detect)

    learn = sub.add_parser("learn-colour", help="learn the ball's HSV band from a few frames "
                           "of it rolling; writes the colour file that detect --settings and "
                           "the board's thresholds_file read")
    learn.add_argument("inputs", nargs="+", help="a short video, a folder or image files "
                       "of the ball rolling across the table")
    learn.add_argument("--calibration", help="calibration file: the ball's size where it is, "
                       "and only the field searched (recommended)")
    learn.add_argument("--config", help="the board's configuration file (blob limits; "
                       "--output defaults to its thresholds_file)")
    learn.add_argument("--settings", help="vision settings JSON instead of --config")
    learn.add_argument("--frames", type=int, default=60, help="use at most this many frames")
    learn.add_argument("--output", help="thresholds file to write (default: the settings' "
                       "thresholds_file, else thresholds.json)")
    learn.add_argument("--mask", help="write the frame beside its mask under the learnt band "
                       "(PNG) to look at")
    learn.add_argument("--for-background", action="store_true",
                       help="a ball coloured like the field: write the ball's own band even "
                       "though it takes in the table, with detector.method = background")
    learn.add_argument("--json", action="store_true")
    learn.set_defaults(func=_learn_colour)

    bench = sub.add_parser("bench", help="time our pipeline and the seed-style one, same frames")
    bench.add_argument("--frames", type=int, default=600)
    bench.add_argument("--repeats", type=int, default=3, help="passes over the frames")
    bench.add_argument("--seed", type=int, default=1)
    bench.add_argument("--threads", type=int, default=1, help="OpenCV threads (both pipelines)")
    bench.add_argument("--scene", choices=SCENES, default="match", help=SCENE_HELP)
    bench.add_argument("--pixel-format", choices=("bgr", "yuyv"), default="bgr",
                       help="yuyv: as a V4L2 camera delivers; the seed-style side converts")
    bench.add_argument("--block-frames", type=int,
                       help="then the same in turns of this many frames (default 16; 1: not)")
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


def _vision_settings(args: argparse.Namespace) -> Any:
    """The ball tracker's settings from --config (the board file) or --settings (JSON: a
    whole settings file, or a colour file as learn-colour writes it), with the colour of
    their thresholds_file as the agent runs them."""
    from foosball.vision.config import VisionSettings, load_settings, with_thresholds_file

    if getattr(args, "config", None):
        from foosball.config import load_agent_settings

        return with_thresholds_file(load_agent_settings(args.config, "ball_tracker"))
    if getattr(args, "settings", None):
        return with_thresholds_file(load_settings(args.settings))
    return VisionSettings()


def _calibrate(args: argparse.Namespace) -> int:
    import cv2

    from foosball.config import BoardConfigError
    from foosball.geometry import default_table
    from foosball.vision.calibration import (
        CalibrationError,
        MarkerLayout,
        calibrate,
    )
    from foosball.vision.calibration_report import save_calibration, summary
    from foosball.vision.config import VisionConfigError

    try:
        settings = _vision_settings(args)
        if args.sim:
            try:
                from foosball.sim.vision_source import sim_calibration_frame
            except ModuleNotFoundError as exc:
                return _laptop_only("calibrate --sim", exc)

            image, layout, focal = sim_calibration_frame()
            focal = args.focal_px or focal
        else:
            if not args.image or not args.markers:
                print("vision calibrate: give IMAGE and --markers FILE, or --sim "
                      "(--help describes the marker file)", file=sys.stderr)
                return 2
            image = cv2.imread(args.image, cv2.IMREAD_COLOR)
            if image is None:
                print(f"vision calibrate: cannot read {args.image}", file=sys.stderr)
                return 2
            layout = MarkerLayout.from_json(json.loads(Path(args.markers).read_text()))
            focal = args.focal_px
        diameter = settings.ball_diameter or default_table().ball.diameter
        calibration = calibrate(image, layout, diameter / 2, focal_px=focal,
                                principal=tuple(args.principal) if args.principal else None,
                                distortion=tuple(args.distortion) if args.distortion else None,
                                max_reprojection_px=args.max_reprojection_px,
                                max_marker_offset_m=args.max_marker_offset_mm / 1e3)
        kept = save_calibration(calibration, args.output)  # the old file kept as .prev
    except (CalibrationError, VisionConfigError, BoardConfigError, OSError,
            json.JSONDecodeError) as exc:
        print(f"vision calibrate: {exc}", file=sys.stderr)
        return 1
    _print({"output": args.output, **({"kept": str(kept)} if kept else {}),
            **summary(calibration)}, args.json)
    return 0


def _layout_example(args: argparse.Namespace) -> int:
    from foosball.vision.calibration import example_layout

    Path(args.output).write_text(json.dumps(example_layout(), indent=2) + "\n")
    print(f"wrote {args.output}: measure where your markers lie and edit it")
    return 0


VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".mov", ".webm", ".mjpg", ".mjpeg")


def _sources(inputs: list[str]) -> list[tuple[str, Any]]:
    """(name, frame source) per input: a folder, a video, or a run of image files."""
    from foosball.vision.sources import ImageFolderSource, VideoFileSource

    sources: list[tuple[str, Any]] = []
    files: list[str] = []
    for name in inputs:
        path = Path(name)
        if path.is_dir() or path.suffix.lower() in VIDEO_SUFFIXES:
            if files:
                sources.append((files[0], ImageFolderSource(files)))
                files = []
            sources.append((name, ImageFolderSource(name) if path.is_dir()
                            else VideoFileSource(name)))
        else:
            files.append(name)
    if files:
        sources.append((files[0], ImageFolderSource(files)))
    return sources


def _detect(args: argparse.Namespace) -> int:
    from foosball.config import BoardConfigError
    from foosball.geometry import default_table
    from foosball.vision.calibration import CalibrationError, load_calibration
    from foosball.vision.config import VisionConfigError
    from foosball.vision.detector import make_detector
    from foosball.vision.sources import SourceError
    from foosball.vision.tracker import BallTracker, TrackStatus

    try:
        settings = _vision_settings(args)
        calibration = load_calibration(args.calibration) if args.calibration else None
        sources = _sources(args.inputs)
    except (CalibrationError, VisionConfigError, BoardConfigError, SourceError) as exc:
        print(f"vision detect: {exc}", file=sys.stderr)
        return 1
    if calibration is None:
        print("vision detect: no --calibration, so every blob in the frame is a candidate"
              + (" and the ball is tracked in pixels (no Kalman filter, no table position: "
                 "those need the calibration)" if args.track else ""), file=sys.stderr)
    background = settings.detector.method == "background"
    model_frames = settings.detector.background_samples * settings.detector.background_every
    if background:
        print(f"vision detect: the background detector finds nothing in a source's first "
              f"{model_frames} frames (detector.background_samples x background_every): "
              "they form its model of the table", file=sys.stderr)
    status = 0
    for name, source in sources:
        tracker = detector = None
        if calibration is not None:
            if source.frame_size != calibration.image_size:
                print(json.dumps({"source": name, "error": f"frames {source.frame_size} are "
                                  f"not the calibration's {calibration.image_size}"}))
                status = 1
                continue
            tracker = BallTracker(settings.detector, settings.filter, calibration,
                                  default_table(), ball_diameter=settings.ball_diameter)
        else:
            detector = make_detector(settings.detector, "bgr", source.frame_size)
        last: tuple[float, float] | None = None
        frames = 0
        try:
            for frame in source:
                frames += 1
                entry: dict[str, Any] = {"source": name, "frame": frame.index}
                if tracker is not None and args.track:
                    result = tracker.process(frame.image, frame.capture_time_ns)
                    found = result.detection
                    entry["status"] = TrackStatus(result.status).name
                    entry["filtered_m"] = [round(result.x, 5), round(result.y, 5)]
                else:
                    found = _search((tracker.detector if tracker else detector), frame.image,
                                    last if args.track else None)  # type: ignore[arg-type]
                    last = None if found is None else (found.u, found.v)
                entry["found"] = found is not None
                if found is not None:
                    entry["pixel"] = [round(found.u, 3), round(found.v, 3)]
                    entry["partial"] = found.partial
                    if tracker is not None:
                        x, y = tracker.projector.to_table(found.u, found.v)
                        entry["table_m"] = [round(x, 5), round(y, 5)]
                print(json.dumps(entry), flush=True)
        except SourceError as exc:
            print(json.dumps({"source": name, "error": str(exc)}))
            status = 1
        finally:
            source.close()
        if background and frames <= model_frames:
            print(f"vision detect: {name}: {frames} frames, so the background detector never "
                  f"formed its model ({model_frames} frames) and found nothing: give a longer "
                  "clip", file=sys.stderr)
    return status


def _search(detector: Any, image: Any, last: tuple[float, float] | None) -> Any:
    """One frame without the tracker's filter: near the last ball when tracking, else the
    whole frame; then what was found goes to the detector (the background detector forms
    its model of the table from the frames, which a search alone never did)."""
    found = None
    if last is not None:
        found = detector.search_window(image, *last, detector.cfg.roi_max_half)
    if found is None:
        found = detector.search_frame(image, near=last)
    if detector.observes:
        detector.observe(image, found)
    return found


def _learn_colour(args: argparse.Namespace) -> int:
    import cv2

    from foosball.config import BoardConfigError
    from foosball.geometry import default_table
    from foosball.vision.calibration import BallProjector, CalibrationError, load_calibration
    from foosball.vision.config import VisionConfigError, save_thresholds
    from foosball.vision.field import FieldRegion
    from foosball.vision.learn import LearnError, band_preview, learn_colour
    from foosball.vision.sources import SourceError

    try:
        settings = _vision_settings(args)
        field_mask = radius_at = None
        if args.calibration:
            table = default_table()
            calibration = load_calibration(args.calibration).for_ball(
                (settings.ball_diameter or table.ball.diameter) / 2)
            projector = BallProjector(calibration)
            field_mask, radius_at = FieldRegion(projector, table).mask(), projector.radius_px
        frames = []
        for _, source in _sources(args.inputs):
            with source:
                for frame in source:
                    frames.append(frame.image)
                    if len(frames) >= args.frames:
                        break
        learnt = learn_colour(frames, settings.detector, field_mask, radius_at)
        band, report = learnt.detector, learnt.report()
    except LearnError as exc:
        if not (args.for_background and exc.band is not None):
            print(f"vision learn-colour: {exc}", file=sys.stderr)
            return 1
        # The file says which detector the band is for, so detect and the agent use the
        # background detector with it without a hand edit.
        band = dataclasses.replace(exc.band, method="background")
        report = {"separated": False, "method": "background", "note": str(exc)}
    except (CalibrationError, VisionConfigError, BoardConfigError, SourceError) as exc:
        print(f"vision learn-colour: {exc}", file=sys.stderr)
        return 1
    output = args.output or settings.thresholds_file or "thresholds.json"
    save_thresholds(output, band)
    if args.mask:
        cv2.imwrite(args.mask, band_preview(frames[len(frames) // 2], band))
    _print({"output": output, **report, "mask": args.mask}, args.json)
    return 0


def _laptop_only(command: str, exc: ModuleNotFoundError) -> int:
    # The offline benches run the simulator, which no board's image carries.
    print(f"vision {command}: needs {exc.name}, not installed here (a laptop's "
          "install has it; a board's image does not)", file=sys.stderr)
    return 2


def _bench(args: argparse.Namespace) -> int:
    try:
        from foosball.lab.vision_bench import run_bench
    except ModuleNotFoundError as exc:
        return _laptop_only("bench", exc)

    report = run_bench(frames=args.frames, repeats=args.repeats, seed=args.seed,
                       threads=args.threads, scene=args.scene,
                       pixel_format=args.pixel_format,
                       **({} if args.block_frames is None else {"block": args.block_frames}))
    _print(report, args.json)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    try:
        from foosball.lab.vision_bench import run_evaluation
    except ModuleNotFoundError as exc:
        return _laptop_only("evaluate", exc)

    report = run_evaluation(frames=args.frames, seed=args.seed, scene=args.scene)
    _print(report, args.json)
    return 0 if report.get("passed", False) else 1


def _settings(_args: argparse.Namespace) -> int:
    from foosball.vision.config import VisionSettings, settings_to_json

    print(json.dumps(settings_to_json(VisionSettings()), indent=2))
    return 0
