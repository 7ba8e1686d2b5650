"""`foosball sim replay --out rally.gif` on a fresh install: Pillow is declared in the extra
the set-up installs, the GIF is written, and without Pillow the error says what to install."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from foosball.sim.record import write_video

ROOT = Path(__file__).resolve().parents[2]


def test_pillow_is_declared_in_an_extra_that_the_set_up_installs() -> None:
    project = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"]
    extras = [name for name, needs in project["optional-dependencies"].items()
              if any(re.match(r"pillow\b", n, re.IGNORECASE) for n in needs)]
    assert extras == ["sim"]
    installed = re.search(r'python\[([a-z,]+)\]', (ROOT / "tools" / "setup").read_text())
    assert installed is not None and "sim" in installed.group(1).split(",")


def test_a_replay_is_written_as_a_gif(tmp_path: Path) -> None:
    from PIL import Image

    frames = [np.full((24, 32, 3), shade, np.uint8) for shade in (0, 120, 240)]
    out = tmp_path / "rally.gif"
    write_video(frames, out, fps=50.0)
    with Image.open(out) as gif:
        assert (gif.format, gif.size, gif.n_frames) == ("GIF", (32, 24), 3)


def test_without_pillow_the_error_says_what_to_install(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)  # as on an install without the extra
    with pytest.raises(ValueError, match=r"needs Pillow: pip install 'foosball\[sim\]'"):
        write_video([np.zeros((8, 8, 3), np.uint8)], tmp_path / "rally.gif", fps=50.0)
