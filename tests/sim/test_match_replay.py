"""The match loop made cheaper must still play the same matches, frame by frame.

`data/match_frames.json` holds, for three short matches (the robot's strategy against the
scripted club on the default table; the `hold` baseline and the improved strategy against
the pro on randomised tables), a SHA-1 of every WorldState's repr chained frame by frame,
checkpointed every 100 frames (0.5 s), and the match's summary. They were written by the
simulator of commit 58cc04b, before issue 13's third session made the drives, the ray
casts, the camera model and the strategy step cheaper. A checkpoint that differs says in
which half second the play first changed.

A change that is meant to change play (physics, rules, the scripted humans, the strategy)
changes these too: write them again with

    .venv/bin/python tests/sim/test_match_replay.py --write

and say in its commit why the matches changed.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from foosball.sim.match import Match

FIXTURE = Path(__file__).parent / "data" / "match_frames.json"
CASES = [  # robot, opponent, seed, randomised table
    ("improved", "club", 2029, False),
    ("hold", "pro", 2, True),
    ("improved", "pro", 11, True),
]
SECONDS = 10.0
CHECKPOINT = 100  # frames


def fingerprint(robot: str, opponent: str, seed: int, randomise: bool) -> dict[str, Any]:
    chain = hashlib.sha1()
    checkpoints: list[str] = []
    frames = 0

    def on_frame(state: object) -> None:
        nonlocal frames
        chain.update(repr(state).encode())
        frames += 1
        if frames % CHECKPOINT == 0:
            checkpoints.append(chain.hexdigest()[:16])

    result = Match(robot, opponent, seed=seed, duration=SECONDS, randomise=randomise,
                   on_frame=on_frame).run()
    summary = result.summary()
    summary.pop("speed_vs_real_time")
    return {"case": f"{robot} vs {opponent}, seed {seed}, randomised {randomise}",
            "checkpoints": checkpoints, "summary": summary}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_the_same_match_frame_by_frame(case: tuple[str, str, int, bool]) -> None:
    stored = json.loads(FIXTURE.read_text())[CASES.index(case)]
    got = fingerprint(*case)
    assert got["case"] == stored["case"]
    for k, (new, old) in enumerate(zip(got["checkpoints"], stored["checkpoints"], strict=True)):
        assert new == old, f"play differs within {k * 0.5:.1f}-{(k + 1) * 0.5:.1f} s"
    assert json.loads(json.dumps(got["summary"])) == stored["summary"]


if __name__ == "__main__" and "--write" in sys.argv:
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps([fingerprint(*case) for case in CASES], indent=1) + "\n")
    print(f"wrote {FIXTURE}")
