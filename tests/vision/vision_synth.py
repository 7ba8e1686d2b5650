"""A small exact renderer for unit tests: a pinhole camera over the table, ArUco markers on
the marker plane, and the ball as a true sphere (ray-cast silhouette, 4x4 supersampled), so
the ball-height correction and the sub-pixel centre are checked against ground truth."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from foosball.vision.calibration import Marker, MarkerLayout

FIELD_BGR = (40, 110, 40)
BORDER_BGR = (225, 225, 225)
BALL_BGR = (20, 110, 250)
MAN_BGR = (160, 40, 20)

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
    rng = np.random.default_rng(seed)
    image = background(camera, layout).copy()
    for u, v, r, colour in extra_blobs:
        cv2.circle(image, (u, v), r, colour, -1, cv2.LINE_AA)
    if ball is not None:
        _draw_sphere(image, camera, np.array([ball[0], ball[1], radius]), radius)
    if occluder is not None:
        x0, y0, x1, y1 = occluder
        z = 0.03  # a foot above the ball's equator
        poly = np.array([[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]])
        cv2.fillConvexPoly(image, np.round(camera.project(poly) * 16).astype(np.int32),
                           MAN_BGR, lineType=cv2.LINE_AA, shift=4)
    if noise > 0:
        image = np.clip(image + rng.normal(0, noise, image.shape), 0, 255).astype(np.uint8)
    return image


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
                 samples: int = 4) -> None:
    u, v = camera.project(centre[None])[0]
    reach = int(camera.focal * radius / 0.8) + 3
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
    coverage = hit.mean(axis=(2, 3))[..., None]
    patch = image[v0:v1, u0:u1].astype(np.float32)
    image[v0:v1, u0:u1] = (patch * (1 - coverage) + np.array(BALL_BGR) * coverage).astype(
        np.uint8)


def ball_pixel(camera: SynthCamera, x: float, y: float, radius: float = 0.0173) -> tuple[
        float, float]:
    u, v = camera.project(np.array([[x, y, radius]]))[0]
    return float(u), float(v)


def focal_for_test() -> float:
    return SynthCamera().focal


def angle_deg(a: float, b: float) -> float:
    return math.degrees(math.atan2(a, b))
