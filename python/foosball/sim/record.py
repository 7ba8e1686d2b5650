"""Recording and replay of world states as a CBOR sequence (RFC 8742).

A recording is a file of concatenated CBOR data items: first a header map, then one array
per recorded world state::

    header = {"format": "foosball-sim-recording", "version": 1, "table": <geometry as in
              table.json>, "params": {...}, "frame_period": s, "meta": {...}}
    state  = [time_ns, ball_x, ball_y, ball_vx, ball_vy, ball_in_play,
              [translation per rod], [rotation per rod], score_robot, score_human]

`replay_frames` renders the states again with the camera renderer; `write_video` turns
frames into a GIF (Pillow) or an MP4/AVI (OpenCV) by the file name's extension.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import cbor2
import numpy as np

from foosball.geometry import Table, parse_table
from foosball.sim.physics import WorldState

FORMAT = "foosball-sim-recording"
VERSION = 1


def table_as_json(table: Table) -> dict[str, Any]:
    return dataclasses.asdict(table)


class Recorder:
    """Appends world states to an open binary stream (every `every`-th state)."""

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
        self.every = max(1, every)
        self._count = 0
        cbor2.dump(
            {
                "format": FORMAT,
                "version": VERSION,
                "table": table_as_json(table),
                "params": params,
                "frame_period": frame_period * self.every,
                "meta": meta or {},
            },
            stream,
        )

    def __call__(self, state: WorldState) -> None:
        self._count += 1
        if (self._count - 1) % self.every:
            return
        cbor2.dump(
            [
                state.time_ns,
                state.ball_x,
                state.ball_y,
                state.ball_vx,
                state.ball_vy,
                state.ball_in_play,
                list(state.translations),
                list(state.rotations),
                state.score_robot,
                state.score_human,
            ],
            self.stream,
        )


@dataclasses.dataclass
class Recording:
    table: Table
    params: dict[str, Any]
    frame_period: float
    meta: dict[str, Any]
    states: list[WorldState]


def read_recording(path: str | Path) -> Recording:
    with open(path, "rb") as stream:
        header = cbor2.load(stream)
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError(f"{path}: not a {FORMAT} file")
        if header.get("version") != VERSION:
            raise ValueError(f"{path}: version {header.get('version')} not supported")
        states = list(_states(stream))
    return Recording(
        table=parse_table(header["table"]),
        params=header.get("params", {}),
        frame_period=float(header["frame_period"]),
        meta=header.get("meta", {}),
        states=states,
    )


def _states(stream: BinaryIO) -> Iterator[WorldState]:
    while True:
        try:
            item = cbor2.load(stream)
        except cbor2.CBORDecodeEOF:
            return
        t, x, y, vx, vy, in_play, translations, rotations, robot, human = item
        yield WorldState(
            time_ns=int(t),
            ball_x=float(x),
            ball_y=float(y),
            ball_vx=float(vx),
            ball_vy=float(vy),
            ball_in_play=bool(in_play),
            translations=tuple(translations),
            rotations=tuple(rotations),
            score_robot=int(robot),
            score_human=int(human),
        )


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
