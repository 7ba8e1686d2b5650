"""The simulator's recordings: the format of a match recorded on the board, and replay.

A recording is the strategy board's format (foosball.recording.format): a CBOR sequence of
a header and [time, type, body] records, read by the one reader for both. The simulator
writes what the board's recorder would hear (the BallStates delivered to the robot's
controller, its RodCommands, the robot's RodStatus, a GameState at 10 Hz and on every goal)
stamped with the simulator's clock, plus what no board has: the true world state (type
WORLD, every `every`-th frame) and the human's rods as they truly are (HumanRods, at the
same rate; on the rig the tracker measures them). No MotorStatus or Alarm: the headless
simulator has no drives to report and no agents to fail.

`replay_frames` renders the world states again with the camera renderer; `write_video`
turns frames into a GIF (Pillow) or an MP4/AVI (OpenCV) by the file name's extension.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from foosball.geometry import Table
from foosball.recording.format import (
    Recording,
    WorldState,
    encode_header,
    encode_record,
    encode_result,
    encode_world,
    header,
    read_recording,
)
from foosball.wire.catalogue import (
    BallState,
    GameState,
    HumanRod,
    HumanRods,
    RodCommand,
    RodId,
    RodStatus,
    SafetyState,
)

__all__ = ["Recorder", "Recording", "read_recording", "replay_frames", "write_video"]

SOURCE = "simulator"
GAME_STATE_PERIOD_S = 0.1  # as the game panel sends it


class Recorder:
    """Writes a simulated match to an open binary stream. As the match's `on_frame` it
    records the world (every `every`-th frame), the human's rods and the game state;
    `watch(controller)` wraps the robot's controller so that what it is given and what it
    commands are recorded as they happen (`record_match` does both)."""

    def __init__(
        self,
        stream: BinaryIO,
        table: Table,
        *,
        params: dict[str, Any],
        frame_period: float,
        every: int = 1,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.stream = stream
        self.table = table
        self.every = max(1, every)
        self._count = 0
        self._score: tuple[int, int] | None = None
        self._game_state_at = -math.inf
        self._status: RodStatus | None = None
        self._human = [table.rods.index(r) for r in table.human_rods]
        stream.write(encode_header(header(
            table, source=SOURCE, match=time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
            started_ns=time.time_ns(), meta=meta, params=params,
            frame_period=frame_period * self.every)))

    def __call__(self, state: WorldState) -> None:
        self._count += 1
        t = state.time_ns
        score = (state.score_robot, state.score_human)
        if score != self._score or t * 1e-9 - self._game_state_at >= GAME_STATE_PERIOD_S:
            self._score, self._game_state_at = score, t * 1e-9
            self.stream.write(encode_record(t, GameState(
                state=SafetyState.PLAYING, score_robot=min(999, score[0]),
                score_human=min(999, score[1]), clock_s=t * 1e-9, alarm_text="")))
        if (self._count - 1) % self.every:
            return
        self.stream.write(encode_world(state))
        self.stream.write(encode_record(t, self._human_rods(state)))

    def _human_rods(self, state: WorldState) -> HumanRods:
        rods = tuple(HumanRod(rod=RodId(role), translation=state.translations[i],
                              rotation=math.remainder(state.rotations[i], 2 * math.pi),
                              men_seen=self.table.rods[i].men, rotation_seen=True)
                     for role, i in enumerate(self._human))
        return HumanRods(capture_time=state.time_ns, frame=self._count, rods=rods)

    def ball(self, ball: BallState, rods: RodStatus, now_ns: int) -> None:
        self.stream.write(encode_record(now_ns, ball))
        if rods is not self._status:  # the runner hands the same message while rods rest
            self._status = rods
            self.stream.write(encode_record(now_ns, rods))

    def command(self, command: RodCommand, now_ns: int) -> None:
        self.stream.write(encode_record(now_ns, command))

    def finish(self, result: Any, now_ns: int) -> None:
        """The match's own accounting (a sim.match.MatchResult), so that a report of this
        recording gives the shots and saves the simulator counted from the true contacts
        rather than estimating them from the tracked ball."""
        shots = [{"time_ns": round(s.time * 1e9), "team": s.team, "rod": s.rod,
                  "speed": float(s.speed), "on_target": bool(s.on_target),
                  "outcome": s.outcome} for s in result.shots]
        self.stream.write(encode_result(now_ns, shots, {"robot": result.saves_robot,
                                                        "human": result.saves_human}))

    def watch(self, controller: Any) -> _Watched:
        return _Watched(controller, self)


class _Watched:
    """A controller whose inputs and commands go to a Recorder; everything else (its
    optional extras, foosball.sim.controllers) is the controller's own."""

    def __init__(self, controller: Any, recorder: Recorder) -> None:
        self._controller = controller
        self._recorder = recorder

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        self._recorder.ball(ball, rods, now_ns)
        command = self._controller.step(ball, rods, now_ns)
        if command is not None:
            self._recorder.command(command, now_ns)
        return command

    def __getattr__(self, name: str) -> Any:
        return getattr(self._controller, name)


def record_match(match: Any, stream: BinaryIO, *, every: int = 1,
                 meta: dict[str, Any] | None = None) -> Recorder:
    """Record `match` (a sim.match.Match, before it runs) to `stream`."""
    recorder = Recorder(stream, match.table, params=match.params.as_dict(),
                        frame_period=match.params.frame_period, every=every, meta=meta)
    match.on_frame = recorder
    match.controllers["robot"] = recorder.watch(match.controllers["robot"])
    return recorder


def write_video(frames: list[np.ndarray], path: str | Path, fps: float, scale: float = 1.0) -> None:
    """BGR frames -> GIF (by Pillow) or a video file (by OpenCV), chosen by extension."""
    import cv2

    path = Path(path)
    if scale != 1.0:
        frames = [
            cv2.resize(f, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) for f in frames
        ]
    if not frames:
        raise ValueError("no frames to write")
    if path.suffix.lower() == ".gif":
        try:
            from PIL import Image
        except ImportError:
            raise ValueError("writing a GIF needs Pillow: pip install 'foosball[sim]' "
                             "(or write .mp4 / .avi / .png)") from None

        images = [Image.fromarray(f[:, :, ::-1]) for f in frames]
        images = [im.quantize(colors=64, method=Image.Quantize.MEDIANCUT) for im in images]
        images[0].save(
            path,
            save_all=True,
            append_images=images[1:],
            duration=max(20, round(1000 / fps)),
            loop=0,
            optimize=True,
        )
        return
    if path.suffix.lower() == ".png":
        # a contact sheet: rows of up to three frames, read left to right, top to bottom
        columns = min(3, len(frames))
        blank = np.zeros_like(frames[0])
        padded = frames + [blank] * (-len(frames) % columns)
        rows = [
            np.concatenate(padded[i : i + columns], axis=1) for i in range(0, len(padded), columns)
        ]
        cv2.imwrite(str(path), np.concatenate(rows, axis=0))
        return
    fourcc = cv2.VideoWriter.fourcc(*("mp4v" if path.suffix.lower() == ".mp4" else "MJPG"))
    height, width = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), fourcc, fps, (width, height))
    for f in frames:
        writer.write(f)
    writer.release()


def replay_frames(
    recording: Recording,
    *,
    start: float = 0.0,
    end: float | None = None,
    every: int = 1,
    seed: int = 0,
    sensor_effects: bool = False,
    annotate: bool = True,
) -> list[np.ndarray]:
    """Render the recorded states between `start` and `end` (s), every `every`-th one;
    without sensor noise and lighting flicker unless asked (they bloat GIFs)."""
    from foosball.sim.params import SimParams
    from foosball.sim.render import CameraConfig, Renderer

    known = {f.name for f in dataclasses.fields(SimParams)}
    params = SimParams(**{k: v for k, v in recording.params.items() if k in known})
    quiet = {} if sensor_effects else {"noise_sigma": 0.0, "lighting_variation": 0.0}
    camera = CameraConfig.for_match(params, **quiet)
    if recording.table is None:
        raise ValueError(f"{recording.path}: no table in its header")
    renderer = Renderer(recording.table, camera, seed=seed)
    chosen = [
        s
        for s in recording.states
        if s.time_ns * 1e-9 >= start and (end is None or s.time_ns * 1e-9 <= end)
    ][:: max(1, every)]
    frames = []
    for s in chosen:
        image = renderer.render(s).image
        if annotate:
            import cv2

            text = f"t {s.time_ns * 1e-9:6.2f} s   robot {s.score_robot} - {s.score_human} human"
            cv2.putText(
                image,
                text,
                (150, 22),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.6,
                (255, 255, 255),
                1,
                cv2.LINE_AA,
            )
        frames.append(image)
    return frames
