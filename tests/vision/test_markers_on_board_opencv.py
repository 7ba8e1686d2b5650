"""The markers the vision board's own OpenCV finds are the ones the laptop's finds.

The booted rig's boards run Debian bookworm's python3-opencv (4.6), the images meta-oe's
(4.9), the laptop's virtual environment the newest wheel. ArUco's Python interface changed at
4.7, and on 4.6 the newer calls kill the process (the ball tracker died on the panel's
Look, and the table faulted). The vision board's share of the package, installed in the
boards' root as the image installs it, must find the simulator's six markers at the
corners the laptop finds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from foosball.rig.rootfs import debian_root, install_package, overlay
from foosball.vision.calibration import detect_markers

pytest.importorskip("foosball.sim.vision_source", reason="needs the simulator")
from foosball.sim.vision_source import sim_calibration_frame

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="mounts the boards' root: needs root "
                       "(CI runs as root)"),
    pytest.mark.skipif(shutil.which("debootstrap") is None, reason="needs debootstrap; "
                       "tools/run-tests installs it when run as root"),
]
CORNER_TOLERANCE_PX = 0.05
ON_THE_BOARD = """\
import json, sys
import cv2, numpy
from foosball.vision.calibration import detect_markers
found = detect_markers(numpy.load(sys.argv[1]))
print(json.dumps({"opencv": cv2.__version__,
                  "markers": {k: v.tolist() for k, v in found.items()}}))
"""


def test_the_vision_boards_opencv_finds_the_laptops_corners(tmp_path):
    image, _, _ = sim_calibration_frame(seed=5)
    laptop = detect_markers(image)
    with overlay(debian_root(), tmp_path / "root") as root:
        install_package(root, "vision")
        np.save(root / "tmp/frame.npy", image)
        result = subprocess.run(
            ["chroot", str(root), "python3", "-c", ON_THE_BOARD, "/tmp/frame.npy"],
            capture_output=True, text=True, timeout=120,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})  # the board's Python, no help
    assert result.returncode == 0, result.stderr[-2000:]
    board = json.loads(result.stdout)
    assert sorted(int(k) for k in board["markers"]) == sorted(laptop), board["opencv"]
    for marker_id, corners in board["markers"].items():
        np.testing.assert_allclose(corners, laptop[int(marker_id)], atol=CORNER_TOLERANCE_PX,
                                   err_msg=f"marker {marker_id}, OpenCV {board['opencv']}")
