"""Camera renderer: frames as the rig's overhead camera would see the simulated table.

API (stable; the ball tracker consumes it)::

    camera = CameraConfig()                    # intrinsics, pose, resolution, exposure, fps
    camera = CameraConfig.for_match(params)    # fps, exposure, height as a match's SimParams
    renderer = Renderer(table, camera, seed=0) # static background drawn once here
    frame = renderer.render(world_state)       # Frame
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

What is drawn: the green field with white lines, the goals, the table frame, four ArUco
markers (DICT_4X4_50, ids 0..3, on the field plane z = 0 at `marker_centres`), the orange
ball shaded as a sphere, then the rods (grey, at their real height) and the men in team
colours over it (the camera sees the ball only between them), motion blur along the ball's
path during the exposure, a fixed illumination gradient plus a per-frame lighting gain, and
sensor noise. The static part is drawn once; a frame copies it and draws only moving parts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from foosball.geometry import Table
from foosball.sim.params import SimParams
from foosball.sim.physics import WorldState

BALL_BGR = np.array([20.0, 110.0, 250.0])  # orange
TEAM_BGR = {"robot": (200, 90, 30), "human": (40, 40, 200)}  # blue, red
ROD_BGR = (175, 175, 180)
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
    marker_centres: tuple[tuple[float, float], ...] = (
        (-0.655, 0.40),
        (0.655, 0.40),
        (0.655, -0.40),
        (-0.655, -0.40),
    )

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
        self.background = self._draw_background()
        # sensor noise: a bank of frames, used at random offsets (cheap per frame)
        sigma = cam.noise_sigma
        shape = (cam.height + 32, cam.width + 32, 3)
        noise = self.rng.normal(0.0, sigma, (2, *shape)) if sigma > 0 else np.zeros((2, *shape))
        self._noise_up = np.clip(noise, 0, 255).astype(np.uint8)
        self._noise_down = np.clip(-noise, 0, 255).astype(np.uint8)
        man = table.man
        self._reach = man.foot_reach
        self._height = man.rod_height
        self._radius = table.ball.radius

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

    # --- per frame ---------------------------------------------------------------------------

    def render(self, state: WorldState) -> Frame:
        cam = self.camera
        self._frames += 1
        image = self.background.copy()
        ball_xy = ball_pixel = None
        fraction = 0.0
        roi = None
        if state.ball_in_play:
            ball_xy = (state.ball_x, state.ball_y)
            centre = self._px([(state.ball_x, state.ball_y, self._radius)])[0]
            ball_pixel = (float(centre[0]), float(centre[1]))
            roi = self._draw_ball(image, state, centre)
        occluders = self._occluder_polygons(state)
        for polygon, colour in occluders:
            cv2.fillConvexPoly(image, polygon, colour, cv2.LINE_AA, shift=4)
        if roi is not None:
            fraction = self._visible_fraction(roi, occluders)
        gain = self.palette.brightness
        if cam.lighting_variation > 0:
            gain *= 1.0 + cam.lighting_variation * 0.5 * float(self.rng.uniform(-1.0, 1.0))
        if gain != 1.0:
            image = cv2.convertScaleAbs(image, alpha=gain)
        if cam.noise_sigma > 0:
            bank = int(self.rng.integers(0, 2))
            dy, dx = (int(v) for v in self.rng.integers(0, 32, 2))
            window = (slice(dy, dy + cam.height), slice(dx, dx + cam.width))
            cv2.add(image, self._noise_up[bank][window], dst=image)
            cv2.subtract(image, self._noise_down[bank][window], dst=image)
        return Frame(
            image=image,
            capture_time_ns=state.time_ns,
            ball_xy=ball_xy,
            ball_pixel=ball_pixel,
            visible_fraction=fraction,
            index=self._frames,
            extra={"lighting_gain": gain},
        )

    def _draw_ball(
        self, image: np.ndarray, state: WorldState, centre: np.ndarray
    ) -> tuple[int, int, np.ndarray]:
        """Draw the shaded, motion-blurred ball; returns (x0, y0, coverage) of its patch."""
        cam = self.camera
        r = self._radius
        radius_px = cam.fx * r / cam.depth((state.ball_x, state.ball_y, r))
        # the path during the exposure, centred on the capture time
        half = cam.exposure / 2 if cam.blur else 0.0
        ends = self._px(
            [
                (state.ball_x - state.ball_vx * half, state.ball_y - state.ball_vy * half, r),
                (state.ball_x + state.ball_vx * half, state.ball_y + state.ball_vy * half, r),
            ]
        )
        travel = float(np.hypot(*(ends[1] - ends[0])))
        samples = max(1, math.ceil(travel * 2))
        pad = radius_px + 2 + travel / 2
        x0 = max(0, math.floor(centre[0] - pad))
        y0 = max(0, math.floor(centre[1] - pad))
        x1 = min(cam.width, math.ceil(centre[0] + pad) + 1)
        y1 = min(cam.height, math.ceil(centre[1] + pad) + 1)
        if x1 <= x0 or y1 <= y0:
            return x0, y0, np.zeros((0, 0), np.float32)
        ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        coverage = np.zeros(xs.shape, np.float32)
        shade = np.zeros(xs.shape, np.float32)
        for k in range(samples):
            t = (k + 0.5) / samples if samples > 1 else 0.5
            c = ends[0] + (ends[1] - ends[0]) * t
            dx, dy = xs - c[0], ys - c[1]
            dist = np.sqrt(dx * dx + dy * dy)
            cover = np.clip(radius_px + 0.5 - dist, 0.0, 1.0)
            rho = np.minimum(dist / radius_px, 1.0)
            nz = np.sqrt(1.0 - rho * rho)
            # light from above, a little towards -x, +y (image up-left)
            light = 0.35 + 0.65 * np.clip(
                0.85 * nz - 0.35 * dx / radius_px * 0.5 - 0.35 * dy / radius_px * 0.5, 0.0, 1.0
            )
            coverage += cover
            shade += cover * light
        coverage /= samples
        with np.errstate(invalid="ignore", divide="ignore"):
            light = np.where(coverage > 0, shade / samples / np.maximum(coverage, 1e-6), 0.0)
        patch = image[y0:y1, x0:x1].astype(np.float32)
        colour = light[..., None] * np.array(self.palette.ball)
        alpha = coverage[..., None]
        image[y0:y1, x0:x1] = np.clip(patch * (1 - alpha) + colour * alpha, 0, 255).astype(np.uint8)
        return x0, y0, coverage

    def _occluder_polygons(self, state: WorldState) -> list[tuple[np.ndarray, tuple]]:
        """Rods and men as convex pixel polygons (fixed point, 4 fractional bits)."""
        table = self.table
        h = self._height
        hw = table.field.half_width + 0.03
        boxes: list[np.ndarray] = []
        colours: list[tuple] = []
        for i, rod in enumerate(table.rods):
            boxes.append(
                np.array(
                    [
                        [rod.x - ROD_RADIUS, -hw, h],
                        [rod.x + ROD_RADIUS, -hw, h],
                        [rod.x + ROD_RADIUS, hw, h],
                        [rod.x - ROD_RADIUS, hw, h],
                    ]
                )
            )
            colours.append(ROD_BGR)
            rotation = state.rotations[i]
            c, s = math.cos(rotation), math.sin(rotation)
            for y_man in rod.men_y(state.translations[i]):
                for half_t, z_low, z_high, half_w in (LEG, TORSO):
                    z_low = -self._reach if z_low is None else z_low
                    corners = []
                    for x in (-half_t, half_t):
                        for z in (z_low, z_high):
                            wx, wz = x * c - z * s, x * s + z * c
                            for y in (y_man - half_w, y_man + half_w):
                                corners.append((rod.x + wx, y, h + wz))
                    boxes.append(np.array(corners))
                    colours.append(TEAM_BGR[rod.team])
        sizes = [len(b) for b in boxes]
        pixels = self.camera.project(np.concatenate(boxes))
        polygons = []
        start = 0
        for size, colour in zip(sizes, colours, strict=True):
            pts = pixels[start : start + size]
            start += size
            hull = cv2.convexHull(np.round(pts * 16).astype(np.int32))
            polygons.append((hull, colour))
        return polygons

    def _visible_fraction(
        self, roi: tuple[int, int, np.ndarray], occluders: list[tuple[np.ndarray, tuple]]
    ) -> float:
        x0, y0, coverage = roi
        total = float(coverage.sum())
        if total <= 0:
            return 0.0
        mask = np.zeros(coverage.shape, np.uint8)
        offset = np.array([[x0 * 16, y0 * 16]], np.int32)
        h, w = coverage.shape
        for polygon, _ in occluders:
            pts = polygon.reshape(-1, 2) - offset
            if (
                pts[:, 0].max() < 0
                or pts[:, 1].max() < 0
                or pts[:, 0].min() > w * 16
                or pts[:, 1].min() > h * 16
            ):
                continue
            cv2.fillConvexPoly(mask, pts, 255, cv2.LINE_8, shift=4)
        visible = coverage * (mask == 0)
        return float(visible.sum() / total)
