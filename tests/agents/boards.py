"""The board.toml each image installs, made checkable on this machine."""

from __future__ import annotations

from pathlib import Path

from foosball.geometry import default_table_path
from foosball.sim.vision_source import sim_calibration
from foosball.vision.calibration import write_calibration
from foosball.wire.codec import new_key

REPO = Path(__file__).resolve().parents[2]


def shipped_board_copy(board: str, tmp_path: Path) -> Path:
    """image-config/BOARD/board.toml with the files a board keeps in /etc/foosball and
    /data/foosball (geometry, wire key with mode 600, camera calibration) made here."""
    key = tmp_path / "wire.key"
    key.write_text(new_key() + "\n")
    key.chmod(0o600)
    calibration = tmp_path / "camera.json"
    write_calibration(sim_calibration(), calibration)
    text = ((REPO / "image-config" / board / "board.toml").read_text()
            .replace("/etc/foosball/table.json", str(default_table_path()))
            .replace("/data/foosball/wire.key", str(key))
            .replace("/data/foosball/calibration/camera.json", str(calibration))
            .replace("/data/foosball/thresholds.json", str(tmp_path / "thresholds.json")))
    copy = tmp_path / "board.toml"
    copy.write_text(text)
    return copy
