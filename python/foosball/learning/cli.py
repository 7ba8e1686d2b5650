"""`foosball learn`: the learning table's commands (laptop side)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from foosball.learning import compare, speed, train

    group = sub.add_parser("learn", help="Gymnasium environment, the learned goalkeeper")
    commands = group.add_subparsers(dest="learn_command", required=True)
    train.add_arguments(commands.add_parser("train", help="train the goalkeeper policy"))
    speed.add_arguments(commands.add_parser(
        "speed", help="environment steps per second against the simulator's own"))
    compare.add_arguments(commands.add_parser(
        "compare", help="two shot batteries (and tournaments) side by side"))
