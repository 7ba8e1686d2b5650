"""The panels' pages as a browser on the host reaches them (SeleniumLibrary drives the
browser in the suites; this component only knows where the pages are)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from robot.api.deco import keyword

from foosball.wire.catalogue import CalibrationStatus
from rig_keywords.context import SimulatedTable
from rig_keywords.waiting import seconds, wait_until


class PanelKeywords:
    def __init__(self, ctx: SimulatedTable) -> None:
        self.ctx = ctx

    @keyword("the address of the game panel")
    def game_panel(self) -> str:
        """http://127.0.0.1:PORT/#token=... (forwarded into the strategy board)."""
        return self.ctx.panel_url("game_panel")

    @keyword("the address of the supervisory panel")
    def supervisory_panel(self) -> str:
        """http://127.0.0.1:PORT/#token=... (forwarded into the pole board)."""
        return self.ctx.panel_url("supervisory_panel")

    @keyword("the vision board keeps the new calibration and the old one beside it")
    def calibration_kept(self) -> None:
        """The ball tracker's calibration file on the vision board (its /data, seen from the
        host) is one the Camera tab made, and the one it replaced is kept as `.prev`."""
        path = Path(self.ctx.rig.calibration)
        previous = Path(f"{path}.prev")
        if not previous.exists():
            raise AssertionError(f"no {previous.name} beside {path} on the vision board")
        new, old = json.loads(path.read_text()), json.loads(previous.read_text())
        if new == old:
            raise AssertionError(f"{path.name} is still the calibration it replaced")

    @keyword("the ball tracker reports a calibration made in the last ${window} s")
    def calibration_reported(self, window: str) -> None:
        """A CalibrationStatus from the tracker, heard after this keyword starts, naming a
        calibration made within `window` seconds of now (wall clock): the tracker maps the
        ball with the new one without a restart."""
        since = time.monotonic()
        earliest_ns = (time.time() - seconds(window)) * 1e9

        def reported() -> bool:
            return any(h.message.made_at >= earliest_ns
                       for h in self.ctx.observer.since(since, CalibrationStatus))

        wait_until(reported, 5.0, lambda: "no CalibrationStatus (it comes every second) named "
                   f"a calibration made in the last {window} s")
