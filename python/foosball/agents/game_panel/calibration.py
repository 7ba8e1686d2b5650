"""The game panel's guided camera calibration (the page's Camera tab), over the wire.

The camera hangs on the vision board and the page is the strategy board's: the panel asks
the ball tracker, which has the camera, with a CameraCalibration request (LOOK or
CALIBRATE, numbered), and draws what comes back (foosball.agents.ball_tracker.calibrating
does the work, with foosball.vision.calibration_report, the CLI's code): the reply's
verdict and each marker (found, or missing and why; its residual in table millimetres
and whether the refusal names it), and the annotated frame, which follows as
CameraSnapshot parts. The panel opens no camera and needs no vision code.

A person at the table (the page's Camera tab):
1. "Look": the tracker's next frame, downscaled, with the markers found outlined and their
   ids; below, the layout's markers missing from it and why (outside the view, partly
   outside, or in view but not found). Tracking goes on meanwhile.
2. "Calibrate": the tracker calibrates on its next frame with its own marker layout and
   focal length ([ball_tracker] markers_file, focal_px); the field is drawn with each
   marker at its place and an arrow for its residual (green within the limit, red beyond,
   the one the refusal names ringed); the verdict: ACCEPTED (saved where the tracker reads
   it, the old file kept as .prev, and used at once: no restart) or REFUSED with the
   calibration's own reason (e.g. "marker 4 is 20 mm from where the layout says ..."),
   nothing saved. Not while a match is playing (the tracker refuses it too).

`PanelCalibrating` is pure: `ask` makes the request, `heard` takes the replies, `tick`
gives up on a request unanswered for ANSWER_S, `view` is the page's `calibrating` topic.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from foosball.wire.catalogue import (
    CalibrationStage,
    CameraCalibration,
    CameraSnapshot,
    MarkerSeen,
)

# The tracker answers within a frame plus the job's fraction of a second (its worker runs
# beside tracking, at background priority): a request unanswered this long is given up.
ANSWER_S = 20.0
STAGES = {"look": CalibrationStage.LOOK, "calibrate": CalibrationStage.CALIBRATE}
WHY = {
    MarkerSeen.OUTSIDE: "outside the camera's view ({where}): turn the camera or move the "
                        "marker",
    MarkerSeen.PARTLY_OUTSIDE: "partly outside the camera's view ({where}): all of it and its "
                               "white margin must be in the frame",
    MarkerSeen.NOT_FOUND: "in view ({where}) but not found: covered by a rod or a man, glare, "
                          "not flat, out of focus, or a different id printed there",
    MarkerSeen.UNKNOWN: "not found; fewer than 4 markers were, so where it should be cannot "
                        "be told",
}


def _iso(wall_time: float) -> str:
    return datetime.fromtimestamp(wall_time, UTC).isoformat(timespec="seconds")


def request_message(number: int, stage: CalibrationStage) -> CameraCalibration:
    return CameraCalibration(request=number, stage=stage, width=0, height=0,
                             reprojection_rms_px=0.0, reprojection_limit_px=0.0,
                             table_rms_m=0.0, focal_px=0.0, limit_mm=0.0, snapshot_parts=0,
                             text="")


class PanelCalibrating:
    """See the module's docstring. `changes` counts what the page should redraw for."""

    def __init__(self) -> None:
        self.requests = 0
        self.asked: dict[str, Any] | None = None  # the request under way
        self._asked_s = 0.0
        self.reply: CameraCalibration | None = None  # the last reply to a request
        self.replied_at = ""
        self.frame: dict[str, Any] | None = None  # the last frame's markers (and JPEG)
        self.result: dict[str, Any] | None = None  # the last CALIBRATE's verdict
        self.text = "press Look: the ball tracker shows what its camera sees"
        self._parts: dict[int, bytes] = {}
        self._snapshot_request = -1
        self._size = (0, 0)
        self.changes = 0

    def ask(self, name: str, now: float, wall_time: float,
            playing: bool) -> tuple[CameraCalibration | None, str]:
        """The page's Look or Calibrate: the request to send, or why not."""
        if playing:
            return None, "not while a match is playing (stop it first)"
        if self.asked is not None:
            return None, f"request {self.asked['request']} is still under way"
        self.requests += 1
        stage = STAGES[name]
        self.asked = {"request": self.requests, "stage": name, "at": _iso(wall_time)}
        self._asked_s = now
        self.text = (f"request {self.requests}: the ball tracker "
                     + ("looks at its next frame" if name == "look" else
                        "calibrates on its next frame"))
        self.changes += 1
        return request_message(self.requests, stage), ""

    def tick(self, now: float) -> None:
        if self.asked is not None and now - self._asked_s > ANSWER_S:
            self.text = (f"request {self.asked['request']}: no answer from the ball tracker "
                         f"in {ANSWER_S:g} s: is it running?")
            self.asked = None
            self.changes += 1

    def heard(self, message: CameraCalibration | CameraSnapshot, wall_time: float) -> str:
        """A reply or a snapshot part; returns the notice line for a reply ("" otherwise)."""
        if isinstance(message, CameraSnapshot):
            self._snapshot(message)
            return ""
        if message.stage in STAGES.values():
            return ""  # another panel's (or a tool's) request
        if self.asked is not None and message.request == self.asked["request"]:
            self.asked = None
        self.reply, self.replied_at = message, _iso(wall_time)
        self.changes += 1
        stage = message.stage
        if stage is CalibrationStage.BUSY:
            self.text = f"request {message.request}: the ball tracker is busy: {message.text}"
            return self.text
        if message.width:
            self._frame(message)
        if stage is CalibrationStage.FOUND:
            self.text = message.text
            return f"camera: {message.text}"
        self.result = self._result(message)
        self.text = message.text
        return f"calibrate: {stage.name}: {message.text}"

    def _frame(self, message: CameraCalibration) -> None:
        markers = message.markers
        if self._snapshot_request != message.request:
            self._parts, self._snapshot_request = {}, message.request
        self.frame = {
            "request": message.request, "width": message.width, "height": message.height,
            "at": self.replied_at, "parts": message.snapshot_parts, "jpeg": "",
            "found": sorted(m.marker for m in markers if m.seen is MarkerSeen.FOUND),
            "stray": sorted(m.marker for m in markers if m.seen is MarkerSeen.STRAY),
            "text": message.text if message.stage is CalibrationStage.FOUND else "",
            "missing": [{"id": m.marker, "kind": m.seen.name.lower(),
                         "why": WHY[m.seen].format(where=f"it should be at ({m.u}, {m.v}) px")}
                        for m in markers if m.seen in WHY]}
        self._assemble()

    def _snapshot(self, part: CameraSnapshot) -> None:
        if part.request != self._snapshot_request:
            self._parts, self._snapshot_request = {}, part.request
        self._parts[part.part] = part.jpeg
        self._size = (part.width, part.height)
        self._assemble()

    def _assemble(self) -> None:
        frame = self.frame
        if frame is None or frame["request"] != self._snapshot_request or frame["jpeg"] or \
                not frame["parts"] or len(self._parts) < frame["parts"]:
            return
        jpeg = b"".join(self._parts.get(i, b"") for i in range(frame["parts"]))
        frame |= {"jpeg": base64.b64encode(jpeg).decode(), "jpeg_bytes": len(jpeg),
                  "jpeg_width": self._size[0], "jpeg_height": self._size[1]}
        self._parts = {}
        self.changes += 1

    @staticmethod
    def _result(message: CameraCalibration) -> dict[str, Any]:
        """The verdict and each marker's residual, as calibrate.js draws them."""
        rows = []
        limit = message.limit_mm
        for m in message.markers:
            if m.seen is MarkerSeen.STRAY:
                continue
            row: dict[str, Any] = {"id": m.marker, "x": m.x_mm / 1e3, "y": m.y_mm / 1e3,
                                   "blamed": m.blamed}
            if m.checked:
                mm = round((m.dx_mm ** 2 + m.dy_mm ** 2) ** 0.5, 1)
                row |= {"dx_mm": round(m.dx_mm, 1), "dy_mm": round(m.dy_mm, 1), "mm": mm,
                        "over": mm > limit}
            rows.append(row)
        blamed = [m.marker for m in message.markers if m.blamed]
        without = blamed[0] if blamed else None
        for row in rows:
            if without is not None and "mm" in row and row["id"] != without and \
                    any(m.marker == row["id"] and m.without_blamed for m in message.markers):
                row["without"] = without
        accepted = message.stage is CalibrationStage.ACCEPTED
        return {"request": message.request, "accepted": accepted,
                "refused": message.stage is CalibrationStage.REFUSED,
                "text": message.text, "blamed": blamed, "limit_mm": round(limit, 1),
                "limit_px": round(message.reprojection_limit_px, 2), "markers": rows,
                "checked": any("mm" in row for row in rows),
                "summary": {"reprojection_rms_px": message.reprojection_rms_px,
                            "table_rms_mm": message.table_rms_m * 1e3,
                            "focal_px": round(message.focal_px, 1)} if accepted else None}

    def view(self) -> dict[str, Any]:
        """The page's `calibrating` topic (copies: the page is sent what changed, compared
        with what it was sent before, and the frame's JPEG is filled in later)."""
        return {"available": True, "asked": self.asked, "text": self.text,
                "frame": dict(self.frame) if self.frame is not None else None,
                "result": self.result}
