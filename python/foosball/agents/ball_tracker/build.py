"""The ball tracker made from its checked settings for its board: the calibration and the
kept thresholds loaded, the frame source opened, the core and its camera (the registry's
build puts them in the runtime with the agent's endpoint)."""

from __future__ import annotations

from typing import Any

from foosball.agents.ball_tracker.core import BallTrackerCore
from foosball.agents.ball_tracker.hardware import Camera
from foosball.geometry import Table


def make_tracker(table: Table, settings: Any,
                 startup_grace_s: float) -> tuple[BallTrackerCore, Camera]:
    from foosball.vision.calibration import load_calibration
    from foosball.vision.config import with_thresholds_file
    from foosball.vision.sources import open_source
    from foosball.vision.tracker import BallTracker

    calibration = load_calibration(settings.calibration)
    # the colour learnt or last tuned on the game panel, kept on this board
    settings = with_thresholds_file(settings)
    source = open_source(settings.source.kind, **settings.source.options)
    tracker = BallTracker(settings.detector, settings.filter, calibration, table,
                          source.pixel_format, ball_diameter=settings.ball_diameter)
    rod_meter = None
    if settings.rods.enabled:
        from foosball.vision.rods import HumanRodMeter

        rod_meter = HumanRodMeter(calibration, table, settings.rods, source.pixel_format)
    # The camera's first frame gets the board's startup grace, as every peer's first
    # heartbeat does: a fixed 2 s was missed on a loaded machine (the rig started in FAULT).
    core = BallTrackerCore(tracker, settings, rod_meter=rod_meter,
                           startup_grace_s=startup_grace_s)
    return core, Camera(source, settings.thresholds_file, settings.calibration)
