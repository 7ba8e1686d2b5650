"""The marker layout file (`vision calibrate --markers FILE`) through the settings parser
(foosball.schema, vision/layout_file.py): the layouts we ship load to the markers they
describe, and a broken file's error names the key the way the table geometry names a rod's."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from foosball.cli import main
from foosball.files import load_file
from foosball.lab.vision.synthetic import LAYOUT
from foosball.vision.calibration import (
    EXAMPLE_MARKER_CENTRES,
    CalibrationError,
    Marker,
    MarkerLayout,
    example_layout,
)


def test_the_example_file_loads_to_its_markers() -> None:
    layout = MarkerLayout.from_json(json.loads(json.dumps(example_layout())))
    assert layout == MarkerLayout(tuple(Marker.square(i, x, y, 0.05, 0.0) for i, (x, y)
                                        in enumerate(EXAMPLE_MARKER_CENTRES)), 0.0)


def test_written_layouts_load_to_the_same_layout() -> None:
    # MarkerLayout.to_json writes corners: the synthetic renderer's layout and the
    # simulator's (the one `vision calibrate --sim` uses) load back equal.
    from foosball.sim.vision_source import marker_layout

    for layout in (LAYOUT, marker_layout()):
        assert MarkerLayout.from_json(json.loads(json.dumps(layout.to_json()))) == layout


def _example(**changes: object) -> dict:
    data = example_layout()
    marker = dict(data["markers"][3])
    marker.update(changes)
    for key, value in changes.items():
        if value is None:
            del marker[key]
    data["markers"][3] = marker
    return data


@pytest.mark.parametrize(("data", "message"), [
    (_example(x="a"), "markers[3] x: a number (m), not 'a'"),
    (_example(size=0), "markers[3] size: 0 is out of range (> 0 m)"),
    (_example(id=50), "markers[3] id: 50 is out of range (>= 0 and <= 49)"),
    (_example(id=None), "markers[3] id: missing"),
    (_example(y=None), "markers[3]: y missing (x, y and size, or corners)"),
    (_example(colour="red"), "markers[3]: unknown key colour; known: corners, id, size, x, "
                             "y, yaw"),
    (_example(corners=[[0, 0], [1, 0], [1, 1]]),
     "markers[3] corners: 4 corners [x, y], not [[0, 0], [1, 0], [1, 1]]"),
    (_example(x=None, y=None, size=None, yaw=None,
              corners=[[0, 0], [1, 0], [1, 1], [0, "b"]]),
     "markers[3] corners[3][1]: a number (m), not 'b'"),
    (_example(corners=[[0, 0], [1, 0], [1, 1], [0, 1]]),
     "markers[3]: corners and x, y, size (x, y and size, or corners, not both)"),
    ({"markers": {"id": 0}}, "markers: a list of markers, not {'id': 0}"),
    ({"height": 0.0}, "markers: missing"),
    ({**example_layout(), "height": "low"}, "height: a number (m), not 'low'"),
    ({**example_layout(), "heigth": 0.0}, "unknown key heigth; known: height, markers"),
    ([1, 2], "a marker layout (a JSON object), not [1, 2]"),
    ({"markers": example_layout()["markers"][:3]},
     "markers: need at least 4 distinct ids, got [0, 1, 2]"),
])
def test_a_broken_layout_file_names_the_key(data: object, message: str) -> None:
    with pytest.raises(CalibrationError) as caught:
        MarkerLayout.from_json(data)
    assert str(caught.value) == message


def test_comments_are_notes_not_settings(tmp_path: Path) -> None:
    data = _example(_comment="the one by the human's goal")
    assert MarkerLayout.from_json(data) == MarkerLayout.from_json(example_layout())
    path = tmp_path / "markers.json"
    path.write_text(json.dumps(_example(x="a")))
    with pytest.raises(CalibrationError, match=r"markers\.json: markers\[3\] x: a number"):
        load_file(path, MarkerLayout.from_json, CalibrationError, kind="JSON")


def test_calibrate_names_the_file_and_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "markers.json").write_text(json.dumps(_example(size=-1)))
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), np.zeros((48, 64, 3), np.uint8))
    monkeypatch.chdir(tmp_path)
    assert main(["vision", "calibrate", str(frame), "--markers", "markers.json"]) == 1
    assert capsys.readouterr().err.strip() == (
        "vision calibrate: markers.json: markers[3] size: -1 is out of range (> 0 m)")
