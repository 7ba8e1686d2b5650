"""A small exact renderer for tests and for benchmarks without the simulator.

A pinhole camera over the table, ArUco markers on the marker plane, and the ball as a true
sphere (ray-cast silhouette, 4x4 supersampled), so the ball-height correction and the
sub-pixel centre are checked against ground truth."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from foosball.vision.calibration import Marker, MarkerLayout

FIELD_BGR = (40, 110, 40)
BORDER_BGR = (225, 225, 225)
BALL_BGR = (20, 110, 250)
MAN_BGR = (160, 40, 20)

def with_marker_moved(layout: MarkerLayout, marker_id: int, dx: float,
                      dy: float) -> MarkerLayout:
    """`layout` as a person who mis-measured one marker by (dx, dy) m would write it (the
    marker check's tests and benchmarks/marker_check.py)."""
    return MarkerLayout(tuple(
        Marker(m.marker_id, tuple((x + dx, y + dy) for x, y in m.corners))
        if m.marker_id == marker_id else m for m in layout.markers), layout.height)


LAYOUT = MarkerLayout(
    (
        Marker.square(0, -0.67, 0.33, 0.08),
        Marker.square(1, 0.67, 0.33, 0.08),
        Marker.square(2, 0.67, -0.33, 0.08),
        Marker.square(3, -0.67, -0.33, 0.08),
    ),
    height=0.0,
)


@dataclass
class SynthCamera:
    width: int = 640
    height: int = 480
    focal: float = 420.0
    position: tuple[float, float, float] = (0.02, -0.15, 1.05)
    look_at: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        c = np.array(self.position, float)
        forward = np.array(self.look_at, float) - c
        forward /= np.linalg.norm(forward)
        # Image x along table +x, image y (down) along table -y as far as the tilt allows.
        right = np.array([1.0, 0.0, 0.0])
        right -= forward * (right @ forward)
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        self.rotation = np.vstack([right, down, forward])  # world -> camera
        self.translation = -self.rotation @ c
        self.k = np.array([[self.focal, 0, (self.width - 1) / 2],
                           [0, self.focal, (self.height - 1) / 2], [0, 0, 1]])
        self.centre = c

    def project(self, points: np.ndarray) -> np.ndarray:
        cam = (self.rotation @ np.asarray(points, float).T).T + self.translation
        pix = (self.k @ cam.T).T
        return pix[:, :2] / pix[:, 2:3]

    def pixel_from_plane(self, z: float) -> np.ndarray:
        r = self.rotation
        return self.k @ np.column_stack([r[:, 0], r[:, 1], z * r[:, 2] + self.translation])


def render(camera: SynthCamera, ball: tuple[float, float] | None, radius: float = 0.0173,
           layout: MarkerLayout = LAYOUT, noise: float = 2.0, seed: int = 0,
           occluder: tuple[float, float, float, float] | None = None,
           extra_blobs: list[tuple[int, int, int, tuple[int, int, int]]] = ()) -> np.ndarray:
    """BGR frame; `occluder` is a table-plane rectangle (x0, y0, x1, y1) drawn over the ball
    (a man's foot); `extra_blobs` are (u, v, radius_px, bgr) discs drawn on the field."""
    return render_with_truth(camera, ball, radius, layout, noise, seed, occluder,
                             extra_blobs)[0]


def render_with_truth(camera: SynthCamera, ball: tuple[float, float] | None,
                      radius: float = 0.0173, layout: MarkerLayout = LAYOUT,
                      noise: float = 2.0, seed: int = 0,
                      occluder: tuple[float, float, float, float] | None = None,
                      extra_blobs: list[tuple[int, int, int, tuple[int, int, int]]] = (),
                      blur: tuple[float, float] = (0.0, 0.0),
                      ) -> tuple[np.ndarray, float]:
    """The frame and the fraction of the ball's image that the occluder leaves visible.
    `blur` is the ball's travel (m, x and y) during the exposure, centred on `ball`."""
    image = background(camera, layout).copy()
    for u, v, r, colour in extra_blobs:
        cv2.circle(image, (u, v), r, colour, -1, cv2.LINE_AA)
    visible = 0.0
    ball_cover = None
    if ball is not None:
        ball_cover = _draw_sphere(image, camera, np.array([ball[0], ball[1], radius]), radius,
                                  blur=blur)
        visible = 1.0
    if occluder is not None:
        x0, y0, x1, y1 = occluder
        z = 0.03  # a foot above the ball's equator
        poly = np.array([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]])
        points = np.round(camera.project(poly) * 16).astype(np.int32)
        cv2.fillConvexPoly(image, points, MAN_BGR, lineType=cv2.LINE_AA, shift=4)
        if ball_cover is not None:
            coverage, (v0, u0) = ball_cover
            hidden = np.zeros(coverage.shape, np.uint8)
            shifted = points - np.array([u0, v0]) * 16
            cv2.fillConvexPoly(hidden, shifted, 1, lineType=cv2.LINE_8, shift=4)
            total = float(coverage.sum())
            visible = float((coverage * (1 - hidden)).sum()) / total if total > 0 else 0.0
    if noise > 0:
        image = _add_noise(image, noise, seed)
    return image, visible


_NOISE: dict[tuple[int, int, float], np.ndarray] = {}


def _add_noise(image: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    """Sensor noise: a window of one large Gaussian field, at an offset drawn from `seed`
    (drawing fresh noise for every frame costs more than the whole tracker)."""
    height, width = image.shape[:2]
    key = (height, width, sigma)
    if key not in _NOISE:
        _NOISE[key] = np.random.default_rng(12345).normal(
            0, sigma, (height + 64, width + 64, 3)).astype(np.int16)
    field = _NOISE[key]
    dy, dx = np.random.default_rng(seed).integers(0, 64, 2)
    noisy = image.astype(np.int16) + field[dy:dy + height, dx:dx + width]
    return np.clip(noisy, 0, 255).astype(np.uint8)


_BACKGROUNDS: dict[tuple[int, int, float, tuple, tuple, int], np.ndarray] = {}


def background(camera: SynthCamera, layout: MarkerLayout, oversample: int = 4) -> np.ndarray:
    """Field, border and markers, drawn at `oversample` times the resolution and averaged
    down, so edges and marker corners are where the camera model puts them."""
    key = (camera.width, camera.height, camera.focal, camera.position, camera.look_at,
           id(layout))
    if key in _BACKGROUNDS:
        return _BACKGROUNDS[key]
    n = oversample
    # High-res pixel j has its centre at low-res (j + 0.5) / n - 0.5.
    scale = np.array([[n, 0, (n - 1) / 2], [0, n, (n - 1) / 2], [0, 0, 1]])
    size = (camera.width * n, camera.height * n)
    big = np.full((size[1], size[0], 3), BORDER_BGR, np.uint8)

    def to_big(points: np.ndarray) -> np.ndarray:
        pix = camera.project(points)
        return np.column_stack([pix, np.ones(len(pix))]) @ scale.T

    field = np.array([[-0.6, -0.34, 0], [0.6, -0.34, 0], [0.6, 0.34, 0], [-0.6, 0.34, 0]])
    cv2.fillConvexPoly(big, np.round(to_big(field)[:, :2]).astype(np.int32), FIELD_BGR)
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    to_pixel = scale @ camera.pixel_from_plane(layout.height)
    for marker in layout.markers:
        side = 6 * 40
        art = cv2.aruco.generateImageMarker(dictionary, marker.marker_id, side)
        src = np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float32) - 0.5
        dst = cv2.perspectiveTransform(np.array(marker.corners, np.float64).reshape(-1, 1, 2),
                                       to_pixel).reshape(-1, 2).astype(np.float32)
        warp = cv2.getPerspectiveTransform(src, dst)
        painted = cv2.warpPerspective(cv2.cvtColor(art, cv2.COLOR_GRAY2BGR), warp, size,
                                      flags=cv2.INTER_NEAREST)
        cover = cv2.warpPerspective(np.full((side, side), 255, np.uint8), warp, size,
                                    flags=cv2.INTER_NEAREST)
        big[cover > 0] = painted[cover > 0]
    small = cv2.resize(big, (camera.width, camera.height), interpolation=cv2.INTER_AREA)
    _BACKGROUNDS[key] = small
    return small


def _draw_sphere(image: np.ndarray, camera: SynthCamera, centre: np.ndarray, radius: float,
                 samples: int = 4, blur: tuple[float, float] = (0.0, 0.0),
                 ) -> tuple[np.ndarray, tuple[int, int]]:
    """Coverage of the sphere's image, averaged over the exposure when it moves."""
    travel = math.hypot(*blur)
    steps = 1 if travel < 1e-4 else min(9, 1 + int(travel / 0.002))
    coverage = None
    for k in range(steps):
        f = 0.0 if steps == 1 else k / (steps - 1) - 0.5
        at = centre + np.array([blur[0] * f, blur[1] * f, 0.0])
        one, corner = _sphere_coverage(camera, centre, at, radius, samples, travel)
        coverage = one if coverage is None else coverage + one
    assert coverage is not None
    coverage = coverage / steps
    v0, u0 = corner
    v1, u1 = v0 + coverage.shape[0], u0 + coverage.shape[1]
    patch = image[v0:v1, u0:u1].astype(np.float32)
    image[v0:v1, u0:u1] = (patch * (1 - coverage) + np.array(BALL_BGR) * coverage).astype(
        np.uint8)
    return coverage[..., 0], (v0, u0)


def _sphere_coverage(camera: SynthCamera, middle: np.ndarray, centre: np.ndarray,
                     radius: float, samples: int, travel: float,
                     ) -> tuple[np.ndarray, tuple[int, int]]:
    u, v = camera.project(middle[None])[0]
    reach = int(camera.focal * (radius + travel / 2) / 0.8) + 3
    u0, v0 = max(0, int(u) - reach), max(0, int(v) - reach)
    u1, v1 = min(camera.width, int(u) + reach + 1), min(camera.height, int(v) + reach + 1)
    offsets = (np.arange(samples) + 0.5) / samples - 0.5
    uu = (np.arange(u0, u1)[None, :, None, None] + offsets[None, None, None, :])
    vv = (np.arange(v0, v1)[:, None, None, None] + offsets[None, None, :, None])
    uu, vv = np.broadcast_arrays(uu, vv)
    rays_cam = np.stack([(uu - camera.k[0, 2]) / camera.focal,
                         (vv - camera.k[1, 2]) / camera.focal, np.ones_like(uu)], axis=-1)
    rays = rays_cam @ camera.rotation  # camera -> world directions
    oc = camera.centre - centre
    a = np.einsum("...i,...i", rays, rays)
    b = 2 * np.einsum("...i,i", rays, oc)
    c = oc @ oc - radius * radius
    hit = (b * b - 4 * a * c) >= 0
    return hit.mean(axis=(2, 3))[..., None], (v0, u0)


def ball_pixel(camera: SynthCamera, x: float, y: float, radius: float = 0.0173) -> tuple[
        float, float]:
    u, v = camera.project(np.array([[x, y, radius]]))[0]
    return float(u), float(v)



def synthetic_sequence(count: int, seed: int = 1) -> tuple[list[Any], Any]:
    """Frames with ground truth from this renderer, and the calibration from its markers:
    shots of 1-15 m/s bouncing off the walls (restitution 0.5), a man's foot over the ball
    now and then, and stretches with no ball on the table."""
    from foosball.geometry import default_table
    from foosball.sim.vision_source import EvalFrame
    from foosball.vision.calibration import calibrate

    table = default_table()
    camera = SynthCamera()
    r = table.ball.radius
    calibration = calibrate(render(camera, None), LAYOUT, r, focal_px=camera.focal)
    rng = np.random.default_rng(seed)
    x_limit, y_limit = table.field.half_length - r, table.field.half_width - r
    period_ns = 5_000_000
    dt = period_ns * 1e-9
    x = y = vx = vy = 0.0
    frames = []
    hidden = 0
    for i in range(count):
        phase = i % 300
        if phase == 0 or phase == 100 or phase == 200:  # a new shot from somewhere
            x, y = rng.uniform(-0.4, 0.4), rng.uniform(-0.25, 0.25)
            speed, angle = rng.uniform(1.0, 15.0), rng.uniform(0, 2 * np.pi)
            vx, vy = speed * np.cos(angle), speed * np.sin(angle)
        on_table = phase < 270  # then 30 frames without a ball
        occluder = None
        if on_table and hidden == 0 and rng.random() < 0.03:
            hidden = int(rng.integers(2, 8))
        if hidden and on_table:
            hidden -= 1
            cover = rng.uniform(-0.02, 0.01)  # from 'a sliver hidden' to 'wholly hidden'
            occluder = (x - 0.03, y - 0.05, x + cover, y + 0.05)
        exposure = 0.001  # s; the ball is drawn smeared over it, centred on the truth
        image, visible = render_with_truth(camera, (x, y) if on_table else None,
                                           occluder=occluder, seed=i,
                                           blur=(vx * exposure, vy * exposure))
        frames.append(EvalFrame(image, i * period_ns, (x, y) if on_table else None, visible,
                                (vx, vy) if on_table else None))
        x, y = x + vx * dt, y + vy * dt
        if abs(x) > x_limit:
            wall = math.copysign(x_limit, x)
            x, vx = wall - (x - wall) * 0.5, -0.5 * vx
            vy *= 0.9
        if abs(y) > y_limit:
            wall = math.copysign(y_limit, y)
            y, vy = wall - (y - wall) * 0.5, -0.5 * vy
            vx *= 0.9
    return frames, calibration
