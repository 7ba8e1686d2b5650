"""The simulator's camera renderer as a frame source, and simulator scenes with ground truth
for calibration, benchmarks and the accuracy evaluation.

Frames come from a real simulated match (scripted opponents on both sides, so the men move,
shoot and hide the ball), rendered by ``foosball.sim.render.Renderer``; the truth (position,
velocity, visible fraction) is read from the same world states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from foosball.geometry import Table, default_table
from foosball.vision.calibration import Calibration, Marker, MarkerLayout, calibrate
from foosball.vision.config import DetectorConfig
from foosball.vision.sources import CapturedFrame, FrameSource

MATCH_SIDES = ("club", "pro")  # robot side, human side: two scripted players


@dataclass(frozen=True, slots=True)
class EvalFrame:
    """A frame with its ground truth: what the scenes here (and foosball.lab.vision's
    synthetic renderer) give the accuracy evaluation (foosball.lab.vision.evaluate)."""

    image: np.ndarray
    capture_time_ns: int
    ball_xy: tuple[float, float] | None  # None: no ball on the table
    visible_fraction: float
    ball_velocity: tuple[float, float] | None  # None: unknown (derived from positions)


def _sim() -> tuple[Any, Any, Any]:
    from foosball.recording.format import WorldState
    from foosball.sim.match import Match
    from foosball.sim.render import CameraConfig, Renderer, marker_table_positions

    return Match, WorldState, (CameraConfig, Renderer, marker_table_positions)


def marker_layout(camera: Any = None) -> MarkerLayout:
    """The renderer's markers (corners in ArUco order on the field plane)."""
    _, _, (camera_config, _, positions) = _sim()
    corners = positions(camera or camera_config())
    return MarkerLayout(tuple(Marker(int(i), tuple((float(x), float(y)) for x, y in c))
                              for i, c in sorted(corners.items())), height=0.0)


def match_states(frames: int, seed: int, table: Table) -> list[Any]:
    """World states of a simulated match, one per camera frame."""
    match_class, _, _ = _sim()
    states: list[Any] = []
    match = match_class(MATCH_SIDES[0], MATCH_SIDES[1], seed=seed, table=table,
                        duration=0.0, on_frame=states.append)
    match.duration = (frames + 1) * match.params.frame_period
    match.run()
    return states[:frames]


def shot_states(frames: int, seed: int, table: Table, frames_per_shot: int = 80,
                min_speed: float = 3.0, max_speed: float = 15.0) -> list[Any]:
    """World states of shots: the ball put down anywhere and hit at 3-15 m/s in any
    direction, the men moving between random poses (they deflect and hide the ball)."""
    from foosball.sim.physics import World

    rng = np.random.default_rng(seed)
    world = World(table)
    period = world.params.frame_period
    states: list[Any] = []
    f = table.field
    while len(states) < frames:
        for i, rod in enumerate(table.rods):
            world.set_rod_pose(i, float(rng.uniform(rod.travel_min, rod.travel_max)),
                               float(rng.choice([0.0, 0.0, 0.6, -0.6, 1.5])))
        speed = rng.uniform(min_speed, max_speed)
        angle = rng.uniform(0.0, 2 * np.pi)
        world.place_ball(float(rng.uniform(-0.8, 0.8) * f.half_length),
                         float(rng.uniform(-0.8, 0.8) * f.half_width),
                         float(speed * np.cos(angle)), float(speed * np.sin(angle)))
        for k in range(frames_per_shot):
            if k % 20 == 10:  # the men move while the ball runs
                for i, rod in enumerate(table.rods):
                    world.command_rod(i, float(rng.uniform(rod.travel_min, rod.travel_max)),
                                      float(rng.uniform(-0.8, 0.8)))
            world.step(period)
            states.append(world.state())
        world.remove_ball()
        for _ in range(10):  # a few frames with no ball on the table between shots
            world.step(period)
            states.append(world.state())
    return states[:frames]


def empty_state(table: Table, time_ns: int = 0) -> Any:
    _, world_state, _ = _sim()
    n = len(table.rods)
    # Men turned flat (feet up, 90 deg) so they cover no marker and no field.
    return world_state(time_ns=time_ns, ball_x=0.0, ball_y=0.0, ball_vx=0.0, ball_vy=0.0,
                       ball_in_play=False, translations=(0.0,) * n, rotations=(1.5708,) * n)


def sim_calibration_frame(seed: int = 0, camera: Any = None, palette: Any = None,
                          ) -> tuple[np.ndarray, MarkerLayout, float]:
    """A rendered frame of the empty table, the marker layout and the camera's focal length
    (the simulated camera looks straight down, so the focal length must be given)."""
    _, _, (camera_config, renderer_class, _) = _sim()
    table = default_table()
    camera = camera or camera_config()
    renderer = renderer_class(table, camera, seed=seed, palette=palette)
    frame = renderer.render(empty_state(table))
    return frame.image, marker_layout(camera), float(camera.fx)


def sim_calibration(seed: int = 0, camera: Any = None, palette: Any = None) -> Calibration:
    image, layout, focal = sim_calibration_frame(seed, camera, palette)
    return calibrate(image, layout, default_table().ball.radius, focal_px=focal)


def sim_eval_frames(count: int, seed: int = 1, scene: str = "match", camera: Any = None,
                    palette: Any = None) -> tuple[list[EvalFrame], Calibration]:
    """Rendered frames with truth: `scene` "match" (a simulated match between two scripted
    players) or "shots" (fast shots among moving men); `camera` (render.CameraConfig) and
    `palette` (render.Palette) for other tables."""
    _, _, (camera_config, renderer_class, _) = _sim()
    table = default_table()
    camera = camera or camera_config()
    calibration = sim_calibration(seed, camera, palette)
    renderer = renderer_class(table, camera, seed=seed, palette=palette)
    frames = []
    states = match_states(count, seed, table) if scene == "match" else shot_states(
        count, seed, table)
    for state in states:
        frame = renderer.render(state)
        truth = (state.ball_x, state.ball_y) if state.ball_in_play else None
        velocity = (state.ball_vx, state.ball_vy) if state.ball_in_play else None
        frames.append(EvalFrame(frame.image, frame.capture_time_ns, truth,
                                frame.visible_fraction, velocity))
    return frames, calibration


# Issue 15's hardest table: a white ball on a light field, seen obliquely; only the
# background detector finds it, with this wide band (any hue, pale, bright).
WHITE_BALL_BAND = DetectorConfig(hue_low=0, hue_high=179, sat_low=0, sat_high=70,
                                 val_low=150)


def white_ball_frames(count: int, seed: int = 3, light: float = 1.0,
                      ) -> tuple[list[EvalFrame], Calibration]:
    """Shots of a white ball on a light field, the camera tilted (issue 15's scene);
    `light` the lighting's brightness (0.6 a dim table)."""
    _, _, (camera_config, _, _) = _sim()
    from foosball.sim.render import Palette

    oblique = camera_config(position=(0.0, -0.15, 1.12), pitch=-0.12, roll=0.02)
    return sim_eval_frames(count, seed, "shots", camera=oblique,
                           palette=Palette(ball=(245.0, 245.0, 245.0), field=(200, 212, 205),
                                           brightness=light))


# Issue 32: a patch of the table in the orange ball's hue, a little paler and darker than
# the ball (its saturation ~235, value ~220), seen in every third frame (light through a
# window, a reflection): not in the median of the frames, so learning checked on the
# median alone takes it in.
TABLE_PATCH_HSV = (12, 190, 170)


def with_table_patch(frames: list[EvalFrame], calibration: Calibration,
                     hsv: tuple[int, int, int] = TABLE_PATCH_HSV, every: int = 3,
                     at: tuple[float, float] = (0.25, 0.18)) -> list[EvalFrame]:
    """`frames` with a ball-sized oval patch of colour `hsv` on the field at `at` (m) in
    every `every`-th frame (copies; the truth unchanged)."""
    import cv2
    import numpy as np

    from foosball.vision.calibration import BallProjector

    projector = BallProjector(calibration)
    bgr = cv2.cvtColor(np.uint8([[hsv]]), cv2.COLOR_HSV2BGR)[0, 0].tolist()
    u, v = projector.to_pixel(*at)
    r = projector.radius_px(u, v)
    out = []
    for i, frame in enumerate(frames):
        image = frame.image.copy()
        if i % every == 0:
            cv2.ellipse(image, (int(u), int(v)), (int(1.3 * r), int(0.8 * r)), 30, 0, 360,
                        bgr, -1, cv2.LINE_AA)
        out.append(EvalFrame(image, frame.capture_time_ns, frame.ball_xy,
                             frame.visible_fraction, frame.ball_velocity))
    return out


def sim_bench_frames(count: int, seed: int = 1, scene: str = "match",
                     ) -> tuple[list[EvalFrame], Calibration]:
    return sim_eval_frames(count, seed, scene)


class SimSource(FrameSource):
    """Frames rendered from a simulated match (or from world states handed in)."""

    def __init__(self, frames: int = 2000, seed: int = 0, states: list[Any] | None = None):
        _, _, (camera_config, renderer_class, _) = _sim()
        self.table = default_table()
        camera = camera_config()
        self._renderer = renderer_class(self.table, camera, seed=seed)
        self._states = states if states is not None else match_states(frames, seed, self.table)
        self._next = 0
        self.pixel_format = "bgr"
        self.frame_size = (camera.width, camera.height)

    def read(self, timeout: float) -> CapturedFrame | None:
        if self._next >= len(self._states):
            self.finished = True
            return None
        state = self._states[self._next]
        frame = self._renderer.render(state)
        index = self._next
        self._next += 1
        return CapturedFrame(frame.image, frame.capture_time_ns, index, truth=frame)
