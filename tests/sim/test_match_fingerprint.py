"""The simulator plays the same matches, bit for bit, as when these fingerprints were taken.

A fingerprint (benchmarks/match_fingerprint.py) is the SHA-256 of a whole match: every
frame's world state, every contact, every command applied, and the result. Speed work on the
simulator (physics, drives, the camera model, the match loop, the messages) must leave them
as they are (issue 30). These matches leave `improved` out, whose play other work changes on
purpose; they cover both scripted opponents' sides, a strategy, and randomised tables.

A change of results made on purpose (a physics or rule fix) changes them too: then check it
is the change you meant, and take the new values from

    PYTHONPATH=python .venv/bin/python benchmarks/match_fingerprint.py --seconds 5 --set test

(the three matches below are the ones it plays with `--set test`).
"""

from __future__ import annotations

import importlib.util
import platform
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "match_fingerprint.py"
# numpy's Generator does not promise the same streams across releases, nor libm the same
# last bits on every machine: the fingerprints were taken with these
TAKEN_WITH = ("2.4.6", "x86_64")
FINGERPRINTS = {
    ("club", "pro", 11, False):
        "9aa32435f9f6505b8b0bc98f986a5e88c6dfb5390f061b6482fd839db002f984",
    ("hold", "club", 12, True):
        "d6237457ae1f878ba2393c7eed924545c62cb83e2619d3c036909d2edf55d9e2",
    ("seed-rules", "rookie", 13, True):
        "96748e8ec2cdfb2af266736c88ecb570939bf30b575a63f80443ecb89046f613",
}


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("match_fingerprint", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("match", list(FINGERPRINTS), ids=lambda m: f"{m[0]}-{m[1]}-{m[2]}")
def test_the_same_matches_as_before(match: tuple[str, str, int, bool]) -> None:
    if (np.__version__, platform.machine()) != TAKEN_WITH:
        pytest.skip(f"fingerprints taken with numpy {TAKEN_WITH[0]} on {TAKEN_WITH[1]}; here "
                    f"numpy {np.__version__} on {platform.machine()}")
    robot, opponent, seed, randomise = match
    got = _script().fingerprint(robot, opponent, seed, randomise, 5.0)
    assert got == FINGERPRINTS[match], (
        f"{robot} vs {opponent} seed {seed}: the simulator's results changed (see this "
        "file's docstring)")


def test_a_fingerprint_sees_the_last_bit_of_a_float() -> None:
    """The hash takes floats exactly: one ulp apart is another fingerprint; a numpy float
    and a Python float of the same value are the same."""
    exact = _script().exact
    assert exact(0.1) != exact(np.nextafter(0.1, 1.0))
    assert exact(np.float64(0.1)) == exact(0.1) and exact(np.int64(3)) == exact(3)
