"""The `foosball` command: one entry point, one subcommand group per area.

Each area module exposes `register(subparsers)`; it adds its own subcommands and sets
`func` on them. Modules are imported lazily by name so that a board image without, say,
OpenCV can still run the commands of its own agents.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import importlib
import io
import signal
import sys

# Subcommand group -> module that registers it. One table, nothing gathered implicitly.
COMMAND_GROUPS: dict[str, str] = {
    "wire": "foosball.wire.cli",
    "geometry": "foosball.geometry_cli",
    "sim": "foosball.sim_cli",
    "vision": "foosball.vision_cli",
    "ethercat": "foosball.ethercat.cli",
    "strategy": "foosball.strategy_cli",
    "agent": "foosball.agent_cli",
    "rig": "foosball.rig.cli",
    "ota": "foosball.ota.cli",
    "bench": "foosball.bench_cli",
    "replay": "foosball.analysis.replay_cli",
    "report": "foosball.analysis.cli",
    "learn": "foosball.learning.cli",
}


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="foosball", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="group", metavar="{" + ",".join(COMMAND_GROUPS) + "}")
    wanted = argv[0] if argv and argv[0] in COMMAND_GROUPS else None
    for group, module_name in COMMAND_GROUPS.items():
        if wanted is not None and group != wanted:
            sub.add_parser(group)  # listed in help; only the chosen group's module is imported
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and exc.name.startswith("foosball"):
                continue  # area not built yet in this tree
            parser_for_missing = sub.add_parser(group, help=f"unavailable: {exc}")
            parser_for_missing.set_defaults(func=_missing(group, exc))
            continue
        module.register(sub)
    return parser


def _missing(group: str, exc: ModuleNotFoundError):  # type: ignore[no-untyped-def]
    def run(_args: argparse.Namespace) -> int:
        print(f"foosball {group}: needs the Python module {exc.name!r}, not installed here",
              file=sys.stderr)
        return 2

    return run


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # A parent thread that blocked them (a runtime's I/O thread, a test) hands its mask down
    # through fork and exec: an agent that cannot be stopped by SIGTERM is no agent of ours.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    # `kill -USR1` writes every thread's stack to stderr (the agent's log) and carries on:
    # what a process that does not stop is doing (the rig asks before it kills one).
    with contextlib.suppress(io.UnsupportedOperation, ValueError):  # stderr not a file
        faulthandler.register(signal.SIGUSR1, all_threads=True)  # (main() called in a test)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    return int(func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
