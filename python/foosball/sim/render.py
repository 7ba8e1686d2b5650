# Over 500 lines: one renderer drawing a frame in one pass (field, markers, men, ball), behind
# the stable API the tracker's tests consume; its parts share the camera model and the palette.
"""Camera renderer: frames as the rig's overhead camera would see the simulated table.

API (stable; the ball tracker consumes it)::

    camera = CameraConfig()                    # intrinsics, pose, resolution, exposure, fps
    camera = CameraConfig.for_match(params)    # fps, exposure, height as a match's SimParams
    renderer = Renderer(table, camera, seed=0) # static background drawn once here
    frame = renderer.render(world_state)       # Frame, its image a new array
    frame = renderer.render(world_state, out=buffer)  # drawn into the caller's buffer
    frame.image            # BGR uint8, (height, width, 3)
    frame.capture_time_ns  # the world state's time = middle of the exposure
    frame.ball_xy          # ground truth (x, y) in the table frame, m; None if no ball
    frame.ball_pixel       # ground truth sub-pixel centre (u, v) of the ball, px; None if none
    frame.visible_fraction # share of the ball's pixels not hidden by men and rods (0..1)
    marker_table_positions(camera) # {id: 4x2 corners (x, y) in m, ArUco corner order}
    camera.project(points)         # table-frame (N, 3) points -> pixels (N, 2)

Camera model: pinhole without lens distortion, looking straight down from
`CameraConfig.position` (optionally tilted by yaw/pitch/roll); image u grows with table x
(towards the human's goal), image v grows towards table -y. The ball centre is at height r,
so a tracker that maps pixels to the field plane must use the plane z = r (or the camera
model) for sub-pixel accuracy.

What is drawn: the green field with white lines, the goals, the table frame, six ArUco
markers (DICT_4X4_50, ids 0..5, on the field plane z = 0 at `marker_centres`: the example
layout's, four beyond the corners and two beside the middle of the sides), the orange
ball shaded as a sphere, then the rods (grey, at their real height) and the men in team
colours over it (the camera sees the ball only between them), motion blur along the ball's
path during the exposure, a fixed illumination gradient plus a per-frame lighting gain, and
sensor noise.

Per frame only what moves is drawn: the field, lines, markers, goals, gradient and the rods
(they never move) are drawn once; a frame is that scene under the frame's light, the ball
(under the rods: its small patch is composed again with them), the men's boxes (projected
all at once in numpy), and the noise bank at a random offset. Where the light would saturate
under the men's anti-aliased edges (a bright room), the frame is drawn unlit and lit whole.
Frames, noise and ground truth are those of the renderer that drew everything each frame
(main before issue 12), to rounding: `benchmarks/render_speed.py` compares them side by side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from foosball.geometry import Table
from foosball.recording.format import WorldState
from foosball.sim.params import SimParams
from foosball.vision.calibration import EXAMPLE_MARKER_CENTRES

BALL_BGR = np.array([20.0, 110.0, 250.0])  # orange
TEAM_BGR = {"robot": (200, 90, 30), "human": (40, 40, 200)}  # blue, red
ROD_BGR = (175, 175, 180)
ROD_BGR_ARRAY = np.array(ROD_BGR, np.float64)
FIELD_BGR = (60, 140, 50)
LINE_BGR = (235, 235, 235)
FRAME_BGR = (40, 70, 100)  # the table's wooden frame
GOAL_BGR = (25, 25, 25)
ROD_RADIUS = 0.008
# a man seen from above: torso/head and leg boxes in the rod's x-z plane (rod axis at 0):
# (x half thickness, z bottom, z top, y half width)
TORSO = (0.012, -0.02, 0.052, 0.017)
LEG = (0.006, None, 0.0, 0.0113)  # z bottom = -foot reach


@dataclass(frozen=True, slots=True)
class CameraConfig:
    width: int = 640
    height: int = 480
    fx: float = 470.0  # px
    fy: float = 470.0
    cx: float = 319.5
    cy: float = 239.5
    position: tuple[float, float, float] = (0.0, 0.0, 1.05)  # camera centre, table frame, m
    yaw: float = 0.0  # rad, about the vertical
    pitch: float = 0.0  # rad, about the camera's x axis
    roll: float = 0.0  # rad, about the camera's y axis
    exposure: float = 0.001  # s
    fps: float = 200.0
    noise_sigma: float = 2.0  # DN, Gaussian sensor noise
    lighting_variation: float = 0.06  # relative: illumination gradient and per-frame gain
    blur: bool = True
    marker_size: float = 0.05  # m, black square side (ArUco DICT_4X4_50)
    # The example layout's (`foosball vision layout-example`): a fifth marker and more let
    # calibrate check each against the others.
    marker_centres: tuple[tuple[float, float], ...] = EXAMPLE_MARKER_CENTRES

    @classmethod
    def for_match(cls, params: SimParams, **overrides: Any) -> CameraConfig:
        """The camera of a match: frame rate, exposure and height from its parameters, so
        the renderer and the tracker model agree."""
        x, y, _ = cls().position
        values = {
            "fps": params.camera_fps,
            "exposure": params.exposure,
            "position": (x, y, params.camera_height),
        }
        values.update(overrides)
        return cls(**values)

    def camera_matrix(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def rotation(self) -> np.ndarray:
        """World (table) -> camera rotation."""
        down = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])
        cy, sy = math.cos(self.yaw), math.sin(self.yaw)
        cp, sp = math.cos(self.pitch), math.sin(self.pitch)
        cr, sr = math.cos(self.roll), math.sin(self.roll)
        yaw = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
        pitch = np.array([[1.0, 0.0, 0.0], [0.0, cp, -sp], [0.0, sp, cp]])
        roll = np.array([[cr, 0.0, sr], [0.0, 1.0, 0.0], [-sr, 0.0, cr]])
        return pitch @ roll @ down @ yaw.T

    def project(self, points: np.ndarray) -> np.ndarray:
        """(N, 3) table-frame points -> (N, 2) pixel coordinates (u, v)."""
        rotation = self.rotation()
        cam = (np.asarray(points, float) - np.array(self.position)) @ rotation.T
        u = self.fx * cam[:, 0] / cam[:, 2] + self.cx
        v = self.fy * cam[:, 1] / cam[:, 2] + self.cy
        return np.stack([u, v], axis=1)

    def depth(self, point: tuple[float, float, float]) -> float:
        cam = (np.asarray(point, float) - np.array(self.position)) @ self.rotation().T
        return float(cam[2])


def marker_table_positions(camera: CameraConfig | None = None) -> dict[int, np.ndarray]:
    """Each marker's 4 corners (x, y) on the field plane, in ArUco's corner order (top-left,
    top-right, bottom-right, bottom-left as the marker image is drawn: its top towards +y)."""
    camera = camera or CameraConfig()
    half = camera.marker_size / 2
    return {
        marker_id: np.array(
            [[x - half, y + half], [x + half, y + half], [x + half, y - half], [x - half, y - half]]
        )
        for marker_id, (x, y) in enumerate(camera.marker_centres)
    }


@dataclass(frozen=True, slots=True)
class Palette:
    """The table's colours and the lamp's level, so the tracker can be tried on other
    tables: another ball colour, a light field, a dim or bright room."""

    ball: tuple[float, float, float] = tuple(BALL_BGR)  # type: ignore[assignment]
    field: tuple[int, int, int] = FIELD_BGR
    line: tuple[int, int, int] = LINE_BGR
    frame: tuple[int, int, int] = FRAME_BGR
    brightness: float = 1.0  # the whole scene's light, relative


@dataclass(slots=True)
class Frame:
    image: np.ndarray
    capture_time_ns: int
    ball_xy: tuple[float, float] | None
    ball_pixel: tuple[float, float] | None
    visible_fraction: float
    index: int = 0
    extra: dict[str, float] = field(default_factory=dict)


class Renderer:
    def __init__(self, table: Table, camera: CameraConfig | None = None, seed: int = 0,
                 palette: Palette | None = None) -> None:
        self.table = table
        self.camera = camera or CameraConfig()
        self.palette = palette or Palette()
        self.rng = np.random.default_rng(seed)
        self._frames = 0
        cam = self.camera
        self._rotation = cam.rotation()
        self._origin = np.array(cam.position)
        self._height = table.man.rod_height
        self._radius = table.ball.radius
        self.background = self._draw_background()  # the field, lit by the fixed gradient
        self._scene, self._rod_alpha, self._rod_mask = self._draw_rods(self.background)
        self._men = _MenShapes(table, cam, self._rotation, self._origin)
        self._ball_bgr = np.array(self.palette.ball, np.float64)
        self._ball_brightest = float(self._ball_bgr.max())
        self._brightest_under_men = max(self._brightest_in_reach(),
                                        max(max(bgr) for bgr in TEAM_BGR.values()))
        self._columns = np.arange(cam.width, dtype=np.float64)
        self._rows = np.arange(cam.height, dtype=np.float64)
        # sensor noise: a bank of frames, used at random offsets (cheap per frame)
        sigma = cam.noise_sigma
        shape = (cam.height + 32, cam.width + 32, 3)
        noise = self.rng.normal(0.0, sigma, (2, *shape)) if sigma > 0 else np.zeros((2, *shape))
        self._noise_up = np.clip(noise, 0, 255).astype(np.uint8)
        self._noise_down = np.clip(-noise, 0, 255).astype(np.uint8)

    def _project(self, points: np.ndarray) -> np.ndarray:
        """(N, 3) table-frame points -> (N, 3): pixel u, v and the depth; `camera.project`
        with the rotation computed once."""
        cam = (points - self._origin) @ self._rotation.T
        u = self.camera.fx * cam[:, 0] / cam[:, 2] + self.camera.cx
        v = self.camera.fy * cam[:, 1] / cam[:, 2] + self.camera.cy
        return np.stack([u, v, cam[:, 2]], axis=1)

    # --- static background -----------------------------------------------------------------

    def _px(self, points: list[tuple[float, float, float]]) -> np.ndarray:
        return self.camera.project(np.array(points))

    def _poly(self, image: np.ndarray, points: list[tuple[float, float, float]], colour) -> None:
        pixels = np.round(self._px(points) * 16).astype(np.int32)
        cv2.fillPoly(image, [pixels], colour, cv2.LINE_AA, shift=4)

    def _draw_background(self) -> np.ndarray:
        cam = self.camera
        f = self.table.field
        hl, hw, hg = f.half_length, f.half_width, f.goal_width / 2
        image = np.full((cam.height, cam.width, 3), 30, np.uint8)
        border = 0.05
        self._poly(
            image,
            [
                (-hl - border, -hw - border, 0),
                (hl + border, -hw - border, 0),
                (hl + border, hw + border, 0),
                (-hl - border, hw + border, 0),
            ],
            self.palette.frame,
        )
        self._poly(image, [(-hl, -hw, 0), (hl, -hw, 0), (hl, hw, 0), (-hl, hw, 0)],
                   self.palette.field)
        for side in (-1.0, 1.0):
            self._poly(
                image,
                [
                    (side * hl, -hg, 0),
                    (side * (hl + 0.03), -hg, 0),
                    (side * (hl + 0.03), hg, 0),
                    (side * hl, hg, 0),
                ],
                GOAL_BGR,
            )
        line = 0.004

        def segment(x0: float, y0: float, x1: float, y1: float) -> None:
            if x0 == x1:
                pts = [
                    (x0 - line / 2, y0, 0),
                    (x0 + line / 2, y0, 0),
                    (x1 + line / 2, y1, 0),
                    (x1 - line / 2, y1, 0),
                ]
            else:
                pts = [
                    (x0, y0 - line / 2, 0),
                    (x1, y0 - line / 2, 0),
                    (x1, y1 + line / 2, 0),
                    (x0, y1 + line / 2, 0),
                ]
            self._poly(image, pts, self.palette.line)

        inset = 0.01
        segment(-hl + inset, -hw + inset, hl - inset, -hw + inset)
        segment(-hl + inset, hw - inset, hl - inset, hw - inset)
        segment(-hl + inset, -hw + inset, -hl + inset, hw - inset)
        segment(hl - inset, -hw + inset, hl - inset, hw - inset)
        segment(0.0, -hw + inset, 0.0, hw - inset)
        for side in (-1.0, 1.0):
            depth = 0.08
            x_in = side * (hl - inset - depth)
            x_line = side * (hl - inset)
            segment(min(x_in, x_line), hg + 0.04, max(x_in, x_line), hg + 0.04)
            segment(min(x_in, x_line), -hg - 0.04, max(x_in, x_line), -hg - 0.04)
            segment(x_in, -hg - 0.04, x_in, hg + 0.04)
        circle = [
            (0.1 * math.cos(a), 0.1 * math.sin(a), 0.0) for a in np.linspace(0, 2 * math.pi, 97)
        ]
        pixels = np.round(self._px(circle) * 16).astype(np.int32)
        width_px = max(1, round(line * cam.fx / cam.position[2]))
        cv2.polylines(image, [pixels], True, self.palette.line, width_px, cv2.LINE_AA, shift=4)
        self._draw_markers(image)
        # a fixed illumination gradient (one lamp off-centre)
        if cam.lighting_variation > 0:
            yy, xx = np.mgrid[0 : cam.height, 0 : cam.width].astype(np.float32)
            gain = 1.0 + cam.lighting_variation * (
                0.5 * (xx / cam.width - 0.5)
                - ((xx / cam.width - 0.4) ** 2 + (yy / cam.height - 0.45) ** 2)
            )
            image = np.clip(image * gain[..., None], 0, 255).astype(np.uint8)
        return image

    def _draw_markers(self, image: np.ndarray) -> None:
        cam = self.camera
        dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
        cells = 6  # 4x4 data + 1-cell black border on each side
        side_px = 120
        quiet = side_px // cells  # a white quiet zone one cell wide around the black square
        for marker_id, corners in marker_table_positions(cam).items():
            marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side_px)
            marker = cv2.copyMakeBorder(
                marker, quiet, quiet, quiet, quiet, cv2.BORDER_CONSTANT, value=255
            )
            total = side_px + 2 * quiet
            grow = cam.marker_size * quiet / side_px
            c = corners.copy()
            c[:, 0] += np.array([-grow, grow, grow, -grow])
            c[:, 1] += np.array([grow, grow, -grow, -grow])
            dst = self._px([(x, y, 0.0) for x, y in c]).astype(np.float32)
            src = np.array([[0, 0], [total, 0], [total, total], [0, total]], np.float32)
            warp = cv2.getPerspectiveTransform(src, dst)
            size = (cam.width, cam.height)
            warped = cv2.warpPerspective(marker, warp, size, flags=cv2.INTER_AREA, borderValue=0)
            mask = cv2.warpPerspective(
                np.full_like(marker, 255), warp, size, flags=cv2.INTER_AREA, borderValue=0
            )
            alpha = (mask.astype(np.float32) / 255.0)[..., None]
            image[:] = (image * (1 - alpha) + warped[..., None] * alpha).astype(np.uint8)

    def _draw_rods(self, background: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rods never move: drawn once over the field (they were drawn after the lighting
        gradient, so it does not shade them). Returns the scene, the rods' anti-aliased
        coverage (0..1, to draw them back over the ball) and their solid mask (what hides
        the ball)."""
        cam = self.camera
        h = self._height
        hw = self.table.field.half_width + 0.03
        scene = background.copy()
        coverage = np.zeros((cam.height, cam.width), np.uint8)
        solid = np.zeros((cam.height, cam.width), np.uint8)
        for rod in self.table.rods:
            corners = [(rod.x - ROD_RADIUS, -hw, h), (rod.x + ROD_RADIUS, -hw, h),
                       (rod.x + ROD_RADIUS, hw, h), (rod.x - ROD_RADIUS, hw, h)]
            polygon = cv2.convexHull(np.round(self._px(corners) * 16).astype(np.int32))
            cv2.fillConvexPoly(scene, polygon, ROD_BGR, cv2.LINE_AA, shift=4)
            cv2.fillConvexPoly(coverage, polygon, 255, cv2.LINE_AA, shift=4)
            cv2.fillConvexPoly(solid, polygon, 255, cv2.LINE_8, shift=4)
        return scene, coverage.astype(np.float32) / 255.0, solid > 0

    def _brightest_in_reach(self) -> float:
        """The brightest value of the static scene in the rectangle the men can reach (the
        rods' band across the field, from the field to the men's heads)."""
        reach = self.table.man.foot_reach + 0.02
        xs = [rod.x for rod in self.table.rods]
        hw = self.table.field.half_width + 0.02
        top = self._height + reach
        corners = [(x, y, z) for x in (min(xs) - reach, max(xs) + reach) for y in (-hw, hw)
                   for z in (0.0, top)]
        pixels = self._px(corners)
        x0, y0 = np.floor(pixels.min(axis=0)).astype(int).clip(0)
        x1, y1 = np.ceil(pixels.max(axis=0)).astype(int) + 1
        return float(self._scene[y0:y1, x0:x1].max())

    # --- per frame ---------------------------------------------------------------------------

    def render(self, state: WorldState, out: np.ndarray | None = None) -> Frame:
        """The camera's frame of `state`, drawn into `out` (uint8, (height, width, 3)) when
        given, so a camera that hands frames on draws every frame into one buffer."""
        cam = self.camera
        self._frames += 1
        gain = self._lighting()
        men = self._men.polygons(state)
        ball = self._ball(state) if state.ball_in_play else None
        over_ball = men.near(*ball.rectangle) if ball is not None else []
        # The men's anti-aliased edges are blended in the scene's colours. Blended already
        # lit, they are what the light would make of them unless the light saturates there
        # (a bright room): then the frame is drawn unlit and lit whole, as before.
        brightest = max(self._brightest_under_men, self._ball_brightest if over_ball else 0)
        light_after = gain * brightest > 255
        drawn_gain = 1.0 if light_after else gain
        image = np.empty_like(self._scene) if out is None else out
        if drawn_gain == 1.0:
            np.copyto(image, self._scene)
        else:
            cv2.convertScaleAbs(self._scene, image, alpha=drawn_gain)
        if ball is not None:
            self._compose_ball(image, ball, drawn_gain)
        colours = {team: tuple(c * drawn_gain for c in bgr) for team, bgr in TEAM_BGR.items()}
        for polygon, team in zip(men.hulls, self._men.teams, strict=True):
            cv2.fillConvexPoly(image, polygon, colours[team], cv2.LINE_AA, shift=4)
        if light_after:
            cv2.convertScaleAbs(image, image, alpha=gain)
        if cam.noise_sigma > 0:
            bank = int(self.rng.integers(0, 2))
            dy, dx = (int(v) for v in self.rng.integers(0, 32, 2))
            window = (slice(dy, dy + cam.height), slice(dx, dx + cam.width))
            cv2.add(image, self._noise_up[bank][window], dst=image)
            cv2.subtract(image, self._noise_down[bank][window], dst=image)
        return Frame(
            image=image,
            capture_time_ns=state.time_ns,
            ball_xy=(state.ball_x, state.ball_y) if ball is not None else None,
            ball_pixel=ball.pixel if ball is not None else None,
            visible_fraction=self._visible_fraction(ball, over_ball) if ball is not None else 0.0,
            index=self._frames,
            extra={"lighting_gain": gain},
        )

    def _lighting(self) -> float:
        """This frame's light: the lamp's brightness and its flicker."""
        gain = self.palette.brightness
        if self.camera.lighting_variation > 0:
            flicker = float(self.rng.uniform(-1.0, 1.0))
            gain *= 1.0 + self.camera.lighting_variation * 0.5 * flicker
        return gain

    def _ball(self, state: WorldState) -> _BallPatch:
        """The shaded, motion-blurred ball: its coverage and light over its patch."""
        cam = self.camera
        r = self._radius
        # the path during the exposure, centred on the capture time
        half = cam.exposure / 2 if cam.blur else 0.0
        x, y, vx, vy = state.ball_x, state.ball_y, state.ball_vx, state.ball_vy
        centre, start, end = self._project(np.array(
            [(x, y, r), (x - vx * half, y - vy * half, r), (x + vx * half, y + vy * half, r)]))
        pixel = (float(centre[0]), float(centre[1]))
        radius_px = cam.fx * r / float(centre[2])
        travel = math.hypot(end[0] - start[0], end[1] - start[1])
        samples = max(1, math.ceil(travel * 2))
        pad = radius_px + 2 + travel / 2
        x0 = max(0, math.floor(centre[0] - pad))
        y0 = max(0, math.floor(centre[1] - pad))
        x1 = max(x0, min(cam.width, math.ceil(centre[0] + pad) + 1))
        y1 = max(y0, min(cam.height, math.ceil(centre[1] + pad) + 1))
        # every sample of the path at once: (sample, row, column), in place where it can be
        t = (np.arange(samples) + 0.5) / samples
        along = start[:2] + (end[:2] - start[:2]) * t[:, None]
        dx = self._columns[x0:x1] - along[:, 0, None]  # (sample, column)
        dy = self._rows[y0:y1] - along[:, 1, None]  # (sample, row)
        square = dy[:, :, None] ** 2 + dx[:, None, :] ** 2
        cover = np.sqrt(square)
        np.subtract(radius_px + 0.5, cover, out=cover)
        np.clip(cover, 0.0, 1.0, out=cover)
        # the sphere's normal towards the camera, nz = sqrt(1 - rho^2), rho = dist / radius
        light = np.multiply(square, -1.0 / radius_px**2, out=square)
        light += 1.0
        np.maximum(light, 0.0, out=light)
        np.sqrt(light, out=light)
        # light from above, a little towards -x, +y (image up-left)
        light *= 0.85
        light -= (0.175 / radius_px * dy)[:, :, None]
        light -= (0.175 / radius_px * dx)[:, None, :]
        np.clip(light, 0.0, 1.0, out=light)
        light *= 0.65
        light += 0.35
        light *= cover
        coverage = cover.sum(axis=0) / samples
        shade = light.sum(axis=0) / samples  # the ball's light times its coverage
        return _BallPatch((x0, y0, x1, y1), coverage, shade, pixel)

    def _compose_ball(self, image: np.ndarray, ball: _BallPatch, gain: float) -> None:
        """The ball over the field, the rods over it, then the lamp's light."""
        x0, y0, x1, y1 = ball.rectangle
        alpha = ball.coverage[..., None]
        patch = self.background[y0:y1, x0:x1] * (1 - alpha) + ball.shade[..., None] * self._ball_bgr
        np.clip(patch, 0, 255, out=patch)
        np.trunc(patch, out=patch)
        rods = self._rod_alpha[y0:y1, x0:x1, None]
        patch += (ROD_BGR_ARRAY - patch) * rods
        patch *= gain
        image[y0:y1, x0:x1] = np.clip(np.rint(patch, out=patch), 0, 255, out=patch)

    def _visible_fraction(self, ball: _BallPatch, over_ball: list[np.ndarray]) -> float:
        """The share of the ball's coverage that no rod and no man (`over_ball`) hides."""
        total = float(ball.coverage.sum())
        if total <= 0:
            return 0.0
        x0, y0, x1, y1 = ball.rectangle
        hidden = self._rod_mask[y0:y1, x0:x1].astype(np.uint8)
        offset = np.array([[x0 * 16, y0 * 16]], np.int32)
        for polygon in over_ball:
            cv2.fillConvexPoly(hidden, polygon.reshape(-1, 2) - offset, 1, cv2.LINE_8, shift=4)
        return float(ball.coverage[hidden == 0].sum() / total)


@dataclass(frozen=True, slots=True)
class _BallPatch:
    rectangle: tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels
    coverage: np.ndarray  # the blurred ball's coverage of each pixel (0..1)
    shade: np.ndarray  # its light times its coverage
    pixel: tuple[float, float]  # the ball centre's projection


class _MenPolygons:
    """One frame's men: each box's convex outline in pixels (fixed point, 4 fractional bits),
    in drawing order."""

    def __init__(self, hulls: list[np.ndarray], boxes: np.ndarray) -> None:
        self.hulls = hulls
        self._boxes = boxes  # (box, corner, 2)

    def near(self, x0: int, y0: int, x1: int, y1: int) -> list[np.ndarray]:
        """The outlines whose bounds meet the pixel rectangle [x0, x1) x [y0, y1)."""
        low, high = self._boxes.min(axis=1), self._boxes.max(axis=1)
        meets = ((high[:, 0] >= x0 * 16) & (low[:, 0] <= x1 * 16)
                 & (high[:, 1] >= y0 * 16) & (low[:, 1] <= y1 * 16))
        return [self.hulls[i] for i in np.flatnonzero(meets)]


class _MenShapes:
    """Every man's leg and torso boxes (`LEG`, `TORSO`) for all rods at once: their corners'
    pixels in a dozen numpy operations per frame, then a convex hull per box.

    A corner of a box is the man's rod axis (x, h), plus the profile point (px, pz) turned by
    the rod's rotation (c, s), plus its end along the rod (y). Through the camera's matrix M
    (intrinsics times rotation, in 1/16 pixels) it lands at
    M (axis - origin) + c M (px, 0, pz) + s M (-pz, 0, px) + y M (0, 1, 0),
    whose first two rows over the third are the pixel."""

    def __init__(self, table: Table, camera: CameraConfig, rotation: np.ndarray,
                 origin: np.ndarray) -> None:
        rods = table.rods
        self._rod = np.array([i for i, rod in enumerate(rods) for _ in range(rod.men)])
        intrinsics = np.array([[16 * camera.fx, 0.0, 16 * camera.cx],
                               [0.0, 16 * camera.fy, 16 * camera.cy], [0.0, 0.0, 1.0]])
        matrix = intrinsics @ rotation  # table direction -> homogeneous 1/16 pixel
        reach = table.man.foot_reach
        # per box kind (leg, torso): the profile's 4 corners in the rod's x-z plane, and the
        # box's two ends along the rod
        kinds = [(half_t, -reach if low is None else low, high, half_w)
                 for half_t, low, high, half_w in (LEG, TORSO)]
        px = np.array([[-t, -t, t, t] for t, _, _, _ in kinds])[..., None]  # (kind, corner, 1)
        pz = np.array([[low, high, low, high] for _, low, high, _ in kinds])[..., None]
        self._cosine_term = px * matrix[:, 0] + pz * matrix[:, 2]  # (kind, corner, 3)
        self._sine_term = px * matrix[:, 2] - pz * matrix[:, 0]
        axes = np.array([(rod.x, 0.0, table.man.rod_height) for rod in rods for _ in
                         range(rod.men)])
        self._axis_term = ((axes - origin) @ matrix.T)[:, None, None, :]  # (man, 1, 1, 3)
        self._along = matrix[:, 1]
        offsets = np.array([y for rod in rods for y in rod.men_y(0.0)])
        self._ends = (offsets[:, None, None]
                      + np.array([[-w, w] for _, _, _, w in kinds]))  # (man, kind, end)
        # each man's leg, then his torso: the order the boxes are drawn in
        self.teams = [rod.team for rod in rods for _ in range(rod.men) for _ in (LEG, TORSO)]

    def polygons(self, state: WorldState) -> _MenPolygons:
        rotations = np.asarray(state.rotations)
        cosine = np.cos(rotations)[self._rod, None, None, None]  # (man, 1, 1, 1)
        sine = np.sin(rotations)[self._rod, None, None, None]
        across = self._axis_term + cosine * self._cosine_term + sine * self._sine_term
        y = np.asarray(state.translations)[self._rod, None, None] + self._ends
        along = y[..., None] * self._along  # (man, kind, end, 3)
        homogeneous = across[:, :, :, None, :] + along[:, :, None, :, :]
        pixels = homogeneous[..., :2] / homogeneous[..., 2:]  # (man, kind, corner, end, 2)
        men, kinds = pixels.shape[:2]
        boxes = np.rint(pixels).astype(np.int32).reshape(men * kinds, -1, 2)
        return _MenPolygons([cv2.convexHull(box) for box in boxes], boxes)
