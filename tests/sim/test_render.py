"""Camera renderer: ground truth, markers, occlusion, blur."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from foosball.geometry import default_table
from foosball.recording.format import WorldState
from foosball.sim.render import (
    ROD_BGR,
    CameraConfig,
    Palette,
    Renderer,
    marker_table_positions,
)

TABLE = default_table()
CLEAN = CameraConfig(noise_sigma=0.0, lighting_variation=0.0, blur=False)


def state(
    x: float,
    y: float,
    vx: float = 0.0,
    vy: float = 0.0,
    rotation: float = math.pi / 2,
    translations: tuple[float, ...] | None = None,
) -> WorldState:
    n = len(TABLE.rods)
    return WorldState(
        time_ns=123_000_000,
        ball_x=x,
        ball_y=y,
        ball_vx=vx,
        ball_vy=vy,
        ball_in_play=True,
        translations=translations or (0.0,) * n,
        rotations=(rotation,) * n,
    )


def ball_centroid(
    renderer: Renderer, frame_image: np.ndarray, s: WorldState
) -> tuple[float, float]:
    """Centroid of what the ball changed in the image (weights: colour difference against
    the same scene rendered without the ball; noise-free cameras only)."""
    empty = WorldState(s.time_ns, s.ball_x, s.ball_y, 0.0, 0.0, False, s.translations, s.rotations)
    without = renderer.render(empty).image.astype(np.float64)
    diff = np.abs(frame_image.astype(np.float64) - without).sum(axis=2)
    total = diff.sum()
    ys, xs = np.mgrid[0 : diff.shape[0], 0 : diff.shape[1]]
    return float((xs * diff).sum() / total), float((ys * diff).sum() / total)


# between the rods (at +-0.075, 0.224, 0.373, 0.522), men standing vertical
@pytest.mark.parametrize(
    ("x", "y"), [(0.0, 0.0), (0.15, 0.1), (-0.45, -0.27), (0.46, 0.3), (0.3, -0.02)]
)
def test_the_rendered_ball_centre_projects_to_the_ground_truth(x: float, y: float) -> None:
    renderer = Renderer(TABLE, CLEAN)
    s = state(x, y, rotation=0.0)
    frame = renderer.render(s)
    assert frame.ball_xy == (x, y)
    assert frame.visible_fraction == pytest.approx(1.0)
    u, v = ball_centroid(renderer, frame.image, s)
    assert frame.ball_pixel is not None
    assert math.hypot(u - frame.ball_pixel[0], v - frame.ball_pixel[1]) < 0.5


def test_ground_truth_pixel_is_the_camera_projection_of_the_ball_centre() -> None:
    camera = CameraConfig(
        noise_sigma=0.0,
        lighting_variation=0.0,
        blur=False,
        yaw=0.02,
        pitch=0.03,
        position=(0.01, -0.02, 1.1),
    )
    renderer = Renderer(TABLE, camera)
    s = state(0.3, 0.12, rotation=0.0)
    frame = renderer.render(s)
    r = TABLE.ball.radius
    expected = camera.project(np.array([[0.3, 0.12, r]]))[0]
    assert frame.ball_pixel == pytest.approx(tuple(expected))
    u, v = ball_centroid(renderer, frame.image, s)
    assert math.hypot(u - expected[0], v - expected[1]) < 0.5


def test_the_six_markers_are_found_by_opencv_where_the_camera_puts_them() -> None:
    camera = CameraConfig()  # with noise and lighting variation
    renderer = Renderer(TABLE, camera, seed=3)
    frame = renderer.render(state(0.1, 0.1))
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(frame.image)
    # the example layout's six (four would leave nothing to check a marker against)
    assert ids is not None and sorted(ids.ravel().tolist()) == [0, 1, 2, 3, 4, 5]
    truth = marker_table_positions(camera)
    for marker_corners, marker_id in zip(corners, ids.ravel(), strict=True):
        on_field = np.column_stack([truth[int(marker_id)], np.zeros(4)])
        expected = camera.project(on_field)
        assert np.abs(marker_corners.reshape(4, 2) - expected).max() < 1.5


def test_a_homography_from_the_markers_maps_the_ball_back_to_the_table() -> None:
    camera = CLEAN
    renderer = Renderer(TABLE, camera)
    truth = marker_table_positions(camera)
    image_points = np.concatenate(
        [camera.project(np.column_stack([c, np.zeros(4)])) for c in truth.values()]
    )
    table_points = np.concatenate(list(truth.values()))
    homography, _ = cv2.findHomography(image_points, table_points)
    s = state(0.3, -0.18, rotation=0.0)
    frame = renderer.render(s)
    u, v = ball_centroid(renderer, frame.image, s)
    mapped = cv2.perspectiveTransform(np.array([[[u, v]]]), homography)[0, 0]
    # the field-plane homography sees the ball centre (at height r) slightly off the plane:
    # parallax r/h of its distance from the optical axis
    parallax = TABLE.ball.radius / camera.position[2] * math.hypot(0.3, 0.18)
    assert math.hypot(mapped[0] - 0.3, mapped[1] + 0.18) < parallax + 0.001


def test_a_man_over_the_ball_hides_it_and_a_rod_hides_a_strip() -> None:
    renderer = Renderer(TABLE, CLEAN)
    mid = next(i for i, r in enumerate(TABLE.rods) if r.name == "human_midfield")
    x = TABLE.rods[mid].x  # near the optical axis: little parallax between rod and ball
    rotations = [math.pi / 2] * len(TABLE.rods)
    rotations[mid] = 0.0  # men vertical: the middle man stands over y = 0

    def seen(ball_x: float, ball_y: float) -> float:
        s = WorldState(0, ball_x, ball_y, 0.0, 0.0, True, (0.0,) * 8, tuple(rotations))
        return renderer.render(s).visible_fraction

    assert seen(x, 0.0) < 0.4  # under a man
    assert 0.3 < seen(x, 0.06) < 0.8  # between two men: only the rod crosses it
    assert seen(x + 0.04, 0.06) == pytest.approx(1.0)


def test_motion_blur_stretches_the_ball_along_its_path() -> None:
    camera = CameraConfig(noise_sigma=0.0, lighting_variation=0.0, exposure=0.002)
    renderer = Renderer(TABLE, camera)
    still = renderer.render(state(0.0, 0.1, rotation=0.0))
    moving = renderer.render(state(0.0, 0.1, vx=10.0, rotation=0.0))

    def extent(image: np.ndarray, axis: int) -> int:
        base = state(0.0, 0.1, rotation=0.0)
        empty = WorldState(0, 0.0, 0.0, 0.0, 0.0, False, base.translations, base.rotations)
        changed = np.abs(image.astype(int) - renderer.render(empty).image).sum(axis=2) > 30
        return int(changed.any(axis=axis).sum())

    blur_px = 10.0 * 0.002 * camera.fx / camera.position[2]
    assert extent(moving.image, 0) - extent(still.image, 0) == pytest.approx(blur_px, abs=3)
    assert extent(moving.image, 1) <= extent(still.image, 1)
    # the blurred ball is still centred on the capture-time position
    u, v = ball_centroid(renderer, moving.image, state(0.0, 0.1, vx=10.0, rotation=0.0))
    assert moving.ball_pixel is not None
    assert math.hypot(u - moving.ball_pixel[0], v - moving.ball_pixel[1]) < 0.5


def test_no_ball_no_ground_truth() -> None:
    renderer = Renderer(TABLE, CLEAN)
    s = state(0.0, 0.0)
    gone = WorldState(s.time_ns, 0.0, 0.0, 0.0, 0.0, False, s.translations, s.rotations)
    frame = renderer.render(gone)
    assert frame.ball_xy is None and frame.ball_pixel is None and frame.visible_fraction == 0.0
    assert frame.capture_time_ns == s.time_ns
    assert frame.image.shape == (480, 640, 3) and frame.image.dtype == np.uint8


def test_a_frame_drawn_into_a_reused_buffer_is_the_frame_drawn_anew() -> None:
    s = state(0.2, -0.1, vx=3.0, rotation=0.7)
    fresh = Renderer(TABLE, CameraConfig(), seed=5).render(s)
    buffer = np.zeros((480, 640, 3), np.uint8)
    reused = Renderer(TABLE, CameraConfig(), seed=5).render(s, out=buffer)
    assert reused.image is buffer
    assert np.array_equal(reused.image, fresh.image)
    assert reused.visible_fraction == fresh.visible_fraction


def test_a_frame_leaves_nothing_behind_in_the_next() -> None:
    busy = state(-0.1, 0.2, vx=8.0, vy=-4.0, rotation=1.2, translations=(0.05,) * 8)
    quiet = WorldState(7, 0.0, 0.0, 0.0, 0.0, False, (0.0,) * 8, (0.0,) * 8)
    after_busy = Renderer(TABLE, CameraConfig(), seed=2)
    after_quiet = Renderer(TABLE, CameraConfig(), seed=2)
    for _ in range(40):  # every flicker level drawn once at least, most of them
        after_busy.render(busy)
        after_quiet.render(quiet)
    assert np.array_equal(after_busy.render(quiet).image, after_quiet.render(quiet).image)


def test_the_rods_are_drawn_over_the_ball() -> None:
    renderer = Renderer(TABLE, CLEAN)
    rod = next(r for r in TABLE.rods if r.name == "robot_midfield")
    s = state(rod.x + 0.012, 0.06, rotation=0.0)  # between two men, half under the rod
    frame = renderer.render(s)
    assert frame.ball_pixel is not None
    u_rod = CLEAN.project(np.array([[rod.x, 0.06, TABLE.man.rod_height]]))[0, 0]
    v = round(frame.ball_pixel[1])
    assert tuple(frame.image[v, round(u_rod)]) == ROD_BGR
    b, _, r = frame.image[v, round(frame.ball_pixel[0]) + 4].astype(int)  # the ball beside it
    assert r > 150 and b < 60


@pytest.mark.parametrize("brightness", [0.7, 1.4])  # drawn lit; drawn, then lit (saturates)
def test_a_frame_is_the_same_scene_under_its_light(brightness: float) -> None:
    s = state(0.2, 0.05, vx=2.0, rotation=0.8, translations=(0.02,) * 8)
    plain = Renderer(TABLE, CLEAN).render(s)
    lit = Renderer(TABLE, CLEAN, palette=Palette(brightness=brightness)).render(s)
    difference = np.abs(lit.image.astype(int) - cv2.convertScaleAbs(plain.image, alpha=brightness))
    # the men's anti-aliased edges, blended in lit colours, round differently
    assert difference.max() <= 3 and (difference > 1).mean() < 0.001
    assert lit.extra["lighting_gain"] == brightness


@pytest.mark.parametrize(
    "camera",
    [CameraConfig(), CameraConfig(position=(0.0, -0.15, 1.12), pitch=-0.12, roll=0.02)],
)
def test_each_man_is_outlined_where_the_camera_projects_his_corners(
    camera: CameraConfig,
) -> None:
    renderer = Renderer(TABLE, camera)
    translations = tuple(0.03 * (i - 3) for i in range(8))
    rotations = tuple(0.5 * i - 1.7 for i in range(8))
    s = WorldState(0, 0.0, 0.0, 0.0, 0.0, False, translations, rotations)
    hulls = iter(renderer._men.polygons(s).hulls)
    h, reach = TABLE.man.rod_height, TABLE.man.foot_reach
    for i, rod in enumerate(TABLE.rods):
        c, s_ = math.cos(rotations[i]), math.sin(rotations[i])
        for y_man in rod.men_y(translations[i]):
            for half_t, z_low, z_high, half_w in ((0.006, -reach, 0.0, 0.0113),
                                                  (0.012, -0.02, 0.052, 0.017)):
                corners = [(rod.x + x * c - z * s_, y, h + x * s_ + z * c)
                           for x in (-half_t, half_t) for z in (z_low, z_high)
                           for y in (y_man - half_w, y_man + half_w)]
                expected = cv2.convexHull(np.round(camera.project(np.array(corners)) * 16)
                                          .astype(np.int32))
                hull = next(hulls)
                assert hull.shape == expected.shape
                assert np.abs(hull.astype(int) - expected).max() <= 1  # 1/16 pixel
    assert next(hulls, None) is None
