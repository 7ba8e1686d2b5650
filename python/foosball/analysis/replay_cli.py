"""`foosball replay FILE...`: a recorded match (the board's or the simulator's) on the game
panel's page, with pause, seek and speed (foosball.analysis.replay)."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from foosball.recording.format import Recording


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay", help="watch a recorded match again on the game panel's page")
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="a recording (.cbors); several: the parts of one match")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--host", default="127.0.0.1",
                        help="0.0.0.0 to watch from another machine")
    parser.add_argument("--speed", type=float, default=1.0, help="0.1 .. 8")
    parser.add_argument("--start", type=float, default=0.0, metavar="S",
                        help="begin this many seconds in")
    parser.add_argument("--paused", action="store_true", help="begin paused")
    parser.add_argument("--token", help="the page's control token (default: a new one)")
    parser.set_defaults(func=_replay)


def read_or_say(command: str, files: list[str]) -> Recording | None:
    """The recordings as one, each warning printed; None (said) when a file cannot be read."""
    from foosball.recording.format import read_recordings

    try:
        recording = read_recordings(files)
    except OSError as exc:
        print(f"foosball {command}: {exc}", file=sys.stderr)
        return None
    for warning in recording.warnings:
        print(f"foosball {command}: warning: {warning}", file=sys.stderr)
    return recording


def _replay(args: argparse.Namespace) -> int:
    from foosball.analysis.replay import SPEEDS, Replay, serve

    if args.speed not in SPEEDS:
        print(f"foosball replay: --speed one of {', '.join(map(str, SPEEDS))}", file=sys.stderr)
        return 2
    recording = read_or_say("replay", args.files)
    if recording is None:
        return 1
    if not recording.messages:
        print("foosball replay: no recorded messages to replay", file=sys.stderr)
        return 1
    replay = Replay(recording, speed=args.speed, start_s=args.start)
    if args.paused:
        replay.command({"command": "pause"})
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _: stop.append(signum))
    try:
        serve(replay, host=args.host, port=args.port, token=args.token,
              should_stop=lambda: bool(stop))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        print(f"foosball replay: {exc}", file=sys.stderr)
        return 1
    return 0
