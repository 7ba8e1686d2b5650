"""What the game panel's page shows of the ball, the rods, the camera calibration and
the vision settings: the views `GamePanelCore.topics` assembles.

`PageViews` is one part of `GamePanelCore` (core.py), in a file of its own to keep each
file readable in one sitting: its methods read the core's state (ball, trail, rods,
vision, calibration, config, table)."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from foosball.wire import catalogue
from foosball.wire.catalogue import BallStatus, CalibrationStatus


class PageViews:
    """The page's views part of `GamePanelCore`: see the module's docstring."""

    def vision_view(self) -> dict[str, Any]:
        return {"config": catalogue.to_json(self.vision), "sent": self.vision_sent,
                "learning": self.learning}

    def calibration_heard(self) -> CalibrationStatus | None:
        """The tracker's calibration, unless it has not been reported lately (a tracker
        that stopped says nothing about the calibration the next one will use)."""
        now = self._last_now if self._last_now is not None else -math.inf
        if now - self._calibration_heard_s > self.config.calibration_silence_s:
            return None
        return self.calibration

    def calibration_view(self) -> dict[str, Any]:
        """The calibration as the page shows it, with what an operator should worry about."""
        status = self.calibration_heard()
        if status is None:
            return {"reported": False, "warnings": [
                f"not reported by the ball tracker in the last "
                f"{self.config.calibration_silence_s:g} s (it does not run without its "
                f"calibration file)"]}
        warnings = []
        made = ""
        if status.made_at:
            made = datetime.fromtimestamp(status.made_at * 1e-9, UTC).strftime(
                "%Y-%m-%d %H:%M UTC")
        else:
            warnings.append("when it was made is unknown (the calibration file does not "
                            "say): calibrate again")
        limit = self.config.calibration_warn_rms_px
        if status.reprojection_rms_px > limit:
            warnings.append(f"reprojection error {status.reprojection_rms_px:.2f} px rms is "
                            f"above {limit:g} px: calibrate again")
        return {"reported": True, "rms_px": round(status.reprojection_rms_px, 2),
                "max_px": round(status.reprojection_max_px, 2),
                "table_rms_mm": round(status.table_rms_m * 1e3, 1), "made": made,
                "image": f"{status.width}x{status.height}", "markers": status.markers,
                "warnings": warnings}

    def _make_table_view(self) -> dict[str, Any]:
        f = self.table.field
        return {"length": f.length, "width": f.width, "goal_width": f.goal_width,
                "ball_diameter": self.table.ball.diameter,
                "foot_reach": self.table.man.foot_reach,
                "rods": [{"name": r.name, "team": r.team, "role": r.role, "x": r.x,
                          "men": r.men, "spacing": r.spacing, "travel_min": r.travel_min,
                          "travel_max": r.travel_max} for r in self.table.rods]}

    def ball_view(self) -> dict[str, Any] | None:
        ball = self.ball
        if ball is None:
            return None
        view: dict[str, Any] = {
            "t_ms": ball.capture_time / 1e6, "frame": ball.frame, "status": ball.status.name,
            "x": round(ball.x, 4), "y": round(ball.y, 4),
            "vx": round(ball.vx, 3), "vy": round(ball.vy, 3),
            "trail": [[round(x, 4), round(y, 4)] for _, x, y in self.trail], "path": []}
        if ball.status != BallStatus.LOST and math.hypot(ball.vx, ball.vy) > 0.05:
            segments = self.predictor.segments(ball.x, ball.y, ball.vx, ball.vy)
            path = [[s.x0, s.y0] for s in segments]
            if segments:
                last = segments[-1]
                path.append([last.x0 + last.ux * last.length, last.y0 + last.uy * last.length])
            view["path"] = [[round(x, 4), round(y, 4)] for x, y in path]
        return view

    def rods_view(self) -> list[dict[str, Any]]:
        """Every rod of the table in file order: the robot's as its drives measure them
        (RodStatus), the human's as the camera does (HumanRods, when the tracker measures
        them), else at the centre."""
        measured: dict[str, Any] = {}
        for team, status in ((self.table.robot_rods, self.rods),
                             (self.table.human_rods, self.human_rods)):
            for p in status.rods if status is not None else ():
                if int(p.rod) < len(team):
                    measured[team[int(p.rod)].name] = p
        out = []
        for rod in self.table.rods:
            p = measured.get(rod.name)
            out.append({"translation": round(p.translation, 4) if p else 0.0,
                        "rotation": round(p.rotation, 3) if p else 0.0,
                        "measured": p is not None})
        return out
