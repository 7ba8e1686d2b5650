"""Match fingerprints: whether two versions of the code play the same matches, bit for bit.

Plays a set of headless matches and reduces each to one SHA-256 of everything it did: every
frame's world state (time, the ball's position, velocity and in-play flag, every rod's
translation and rotation, the score), every contact the physics reported (its repr: time,
kind, rod, team, speeds), every command applied to the rods (its repr), and the match's
result summary (score, every shot, saves, goal kinds, serves, restarts, dead balls, fouls,
parameters; the wall-time speed left out). Numbers are hashed by value (a float exactly, in
hex, whether a Python or a numpy float), so a change in the last bit of any of them changes
the fingerprint and a change of type alone does not.

With `--baseline PATH` (the `python/` folder of another checkout, e.g. `git -C /work/main
archive main python | tar -x -C /tmp/speed-main`) it plays the same matches with that tree
too, in a subprocess, and says which (if any) differ. Speed work must leave every
fingerprint as it was.

    nice -n 19 .venv/bin/python benchmarks/match_fingerprint.py \\
        [--baseline /tmp/speed-main/python] [--seconds 60] [--set speed|test] [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
# (robot, opponent, seed, randomised table): several opponents, default and randomised tables
MATCHES = (
    ("improved", "club", 1, False),
    ("improved", "pro", 2, False),
    ("improved", "seed-rules", 3, False),
    ("improved", "pro", 4, True),
    ("improved", "club", 5, True),
    ("seed-rules", "rookie", 6, False),
    ("hold", "club", 7, True),
)
# the regression test's (tests/sim/test_match_fingerprint.py): `improved` left out, whose
# play other work changes on purpose
TEST_MATCHES = (
    ("club", "pro", 11, False),
    ("hold", "club", 12, True),
    ("seed-rules", "rookie", 13, True),
)


def exact(item: object) -> object:
    """`item` with every number as its exact value (floats in hex), every dataclass as its
    type's name and fields, every sequence as a tuple."""
    if isinstance(item, (bool, str)) or item is None:
        return item
    if dataclasses.is_dataclass(item):
        return (type(item).__name__,
                *(exact(getattr(item, f.name)) for f in dataclasses.fields(item)))
    if isinstance(item, (tuple, list)):
        return tuple(exact(x) for x in item)
    if type(item).__name__ == "bool_":  # numpy's bool
        return bool(item)  # type: ignore[arg-type]
    if isinstance(item, int) or type(item).__name__.startswith("int"):
        return int(item)  # type: ignore[call-overload]
    return float(item).hex()  # type: ignore[arg-type]


def fingerprint(robot: str, opponent: str, seed: int, randomise: bool, seconds: float) -> str:
    """The SHA-256 of one match (frames, contacts, commands, result)."""
    from foosball.sim.match import Match

    digest = hashlib.sha256()

    def feed(*items: object) -> None:
        digest.update(repr(exact(items)).encode())

    class Traced(Match):
        def _account(self, contacts: Any, state: Any) -> None:
            for contact in contacts:
                feed("contact", contact)
            super()._account(contacts, state)

        def _apply(self, team: str, command: Any) -> None:
            feed("command", self.world.time, team, command)
            super()._apply(team, command)

    def frame(state: Any) -> None:
        feed("frame", state)

    match = Traced(robot, opponent, seed=seed, duration=seconds, randomise=randomise,
                   on_frame=frame)
    summary = match.run().summary()
    summary.pop("speed_vs_real_time", None)
    feed("result", json.dumps(summary, sort_keys=True))
    return digest.hexdigest()


def fingerprints(seconds: float, matches: tuple[tuple[str, str, int, bool], ...] = MATCHES
                 ) -> dict[str, str]:
    return {f"{robot} vs {opponent} seed {seed}{' randomised' if randomise else ''}":
            fingerprint(robot, opponent, seed, randomise, seconds)
            for robot, opponent, seed, randomise in matches}


def of_tree(tree: Path, seconds: float, which: str) -> dict[str, str]:
    """The fingerprints played by the package at `tree` (a subprocess of this script)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, str(HERE), "--seconds", str(seconds), "--set", which,
                          "--json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["fingerprints"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="s per match")
    parser.add_argument("--baseline", type=Path,
                        help="the python/ folder of another checkout to compare with")
    parser.add_argument("--set", choices=("speed", "test"), default="speed",
                        help="the matches: the speed work's (default) or the regression test's")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    ours = fingerprints(args.seconds, MATCHES if args.set == "speed" else TEST_MATCHES)
    if args.baseline is None:
        if args.json:
            print(json.dumps({"seconds": args.seconds, "fingerprints": ours}, indent=2))
        else:
            for name, value in ours.items():
                print(f"{value}  {name}")
        return 0
    theirs = of_tree(args.baseline, args.seconds, args.set)
    differ = [name for name in ours if ours[name] != theirs.get(name)]
    if args.json:
        print(json.dumps({"seconds": args.seconds, "baseline": str(args.baseline),
                          "fingerprints": ours, "baseline_fingerprints": theirs,
                          "same": not differ, "differ": differ}, indent=2))
    else:
        for name, value in ours.items():
            print(f"{'same  ' if name not in differ else 'DIFFER'} {value[:16]}  {name}")
        print(f"{len(ours) - len(differ)} of {len(ours)} matches the same as {args.baseline}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
