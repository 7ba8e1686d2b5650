"""The game panel's guided calibration on the ball tracker (issue 32): what it costs the
tracking. The real ball tracker core and its Camera hardware (the worker thread a job runs
on) step as the runtime steps them, on a camera that captures the simulator's rendered
marker frame at `--fps` into 4 buffers and drops the oldest when the reader is late (as a
V4L2 driver does). Per window of `--seconds`: the frames tracked and dropped, first with no
job, then with one LOOK and one CALIBRATE request each round (the correct layout: accepted,
saved and mapped with). Also: the worker's time per job, the largest CameraCalibration
reply and CameraSnapshot part on the wire (signed frames, bytes) and the parts per snapshot.

    PYTHONPATH=python nice -n 19 .venv/bin/python benchmarks/camera_calibration.py \\
        [--fps 200] [--seconds 3] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from foosball.agents.ball_tracker import BallTrackerCore, Camera
from foosball.agents.ball_tracker.calibrating import CalibrationOutcome
from foosball.agents.game_panel.calibration import request_message
from foosball.geometry import default_table
from foosball.runtime import Inputs
from foosball.sim.vision_source import sim_calibration, sim_calibration_frame
from foosball.vision.config import VisionSettings
from foosball.vision.sources import CapturedFrame, FrameSource
from foosball.vision.tracker import BallTracker
from foosball.wire.catalogue import Agent, CalibrationStage, CameraCalibration, CameraSnapshot
from foosball.wire.codec import WireCodec

BUFFERS = 4


class PacedCamera(FrameSource):
    """One image captured at `fps` into BUFFERS buffers; the oldest dropped when full."""

    pixel_format = "bgr"

    def __init__(self, image: Any, fps: float) -> None:
        self.image, self.fps = image, fps
        self.queue: collections.deque[CapturedFrame] = collections.deque()
        self.ready = threading.Condition()
        self.captured = self.dropped = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._capture, daemon=True)
        self._thread.start()

    def _capture(self) -> None:
        due = time.monotonic()
        while not self._stop.is_set():
            due += 1.0 / self.fps
            self._stop.wait(max(0.0, due - time.monotonic()))
            with self.ready:
                self.captured += 1
                if len(self.queue) >= BUFFERS:
                    self.queue.popleft()
                    self.dropped += 1
                self.queue.append(CapturedFrame(self.image, time.time_ns(), self.captured))
                self.ready.notify()

    def read(self, timeout_s: float) -> CapturedFrame | None:
        with self.ready:
            if not self.queue:
                self.ready.wait(timeout_s)
            return self.queue.popleft() if self.queue else None

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fps", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    image, layout, focal = sim_calibration_frame(seed=5)
    folder = Path(tempfile.mkdtemp(prefix="camera-calibration-"))
    (folder / "markers.json").write_text(json.dumps(layout.to_json()))
    settings = VisionSettings(markers_file=str(folder / "markers.json"), focal_px=focal)
    table = default_table()
    core = BallTrackerCore(BallTracker(settings.detector, settings.filter,
                                       sim_calibration(seed=1), table), settings)
    source = PacedCamera(image, args.fps)
    camera = Camera(source, calibration_file=str(folder / "camera.json"))
    codec = WireCodec(bytes(32), Agent.BALL_TRACKER)
    largest: dict[str, int] = collections.defaultdict(int)
    parts: list[int] = []
    slowest_step_s = 0.0

    def window(stage: CalibrationStage | None, number: int) -> dict[str, Any]:
        nonlocal slowest_step_s
        pending: list[Any] = [request_message(number, stage)] if stage is not None else []
        dropped, tracked, worker = source.dropped, 0, []
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            sample = camera.sense(0.1)
            if isinstance(sample, CalibrationOutcome):
                worker.append(round(sample.seconds * 1e3, 1))
            started = time.perf_counter()
            out = core.step(Inputs(time.monotonic(), tuple(pending), sample))
            slowest_step_s = max(slowest_step_s, time.perf_counter() - started)
            pending = []
            tracked += isinstance(sample, CapturedFrame)
            camera.act(out.actuation)
            for message in out.messages:
                if isinstance(message, CameraCalibration):
                    name = f"CameraCalibration {message.stage.name}"
                    largest[name] = max(largest[name], len(codec.encode(message)))
                    parts.append(message.snapshot_parts)
                elif isinstance(message, CameraSnapshot):
                    largest["CameraSnapshot"] = max(largest["CameraSnapshot"],
                                                    len(codec.encode(message)))
        return {"job": stage.name if stage is not None else "none", "tracked": tracked,
                "dropped": source.dropped - dropped, "worker_ms": worker}

    window(None, 0)  # warm up
    windows = [window(None, 0)]
    for n in range(args.rounds):
        windows += [window(CalibrationStage.LOOK, 2 * n + 1),
                    window(CalibrationStage.CALIBRATE, 2 * n + 2)]
    source.close()
    result = {"fps": args.fps, "seconds_per_window": args.seconds, "windows": windows,
              "largest_bytes": dict(largest), "snapshot_parts": sorted(set(parts)),
              "slowest_step_ms": round(slowest_step_s * 1e3, 1)}
    for w in windows:
        print(f"{w['job']:>9}: {w['tracked']} frames tracked, {w['dropped']} dropped "
              f"(worker {w['worker_ms']} ms)")
    print(f"largest on the wire: {dict(largest)} bytes; snapshot parts {sorted(set(parts))}; "
          f"slowest step {result['slowest_step_ms']} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
