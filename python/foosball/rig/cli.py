"""`foosball rig up` / `foosball rig down`: the whole robot playing on the simulated table.

    foosball rig up [--mode booted|processes|single-host] [--opponent rookie|club|pro|hold|
                    browser] [--fps N] [--strategy improved] [--run-dir DIR] [--for S]
    foosball rig down

`up` starts the agents on three boards: booted boards (a systemd-nspawn container per
board, its agents started and restarted by its systemd) where it can (root, nspawn), else
separate processes in network namespaces (root), else processes on one host over UDP on
loopback; `--mode` chooses, and it says which it runs. Then the drive emulator
under the real pysoem master, and the live table with its camera; prints the panels'
addresses (and with `--opponent browser` the page where a person plays the human's rods)
and where the logs are; and runs until Ctrl-C, SIGTERM or `rig down`, which stop
every process and remove every namespace and veth it made.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from foosball.rig import MODES
from foosball.safety.stop import StopRequest

DEFAULT_RUN_DIR = Path("/tmp/foosball-rig")
PAGE_WITHIN_S = 30.0  # the panels' pages answer this soon after the agents start


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rig = subparsers.add_parser("rig", help="the simulated rig: every agent, the live table")
    sub = rig.add_subparsers(dest="rig_command", required=True)
    up = sub.add_parser("up", help="start the rig and run it until Ctrl-C or `rig down`")
    up.add_argument("--mode", choices=["auto", *MODES], default="auto",
                    help="booted: a container per board, booted with systemd (root, "
                         "systemd-nspawn); processes: each agent a process in its board's "
                         "network namespace (root); single-host: processes over UDP on "
                         "loopback. auto (the default): the first of these this host can run")
    up.add_argument("--opponent", default="club",
                    choices=["rookie", "club", "pro", "hold", "browser"],
                    help="who plays the human's rods (browser: you, on the page it prints)")
    up.add_argument("--fps", type=float, default=100.0, help="camera frames per second")
    up.add_argument("--strategy", default="improved", help="the robot's strategy")
    up.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR,
                    help="board files, key and logs (deleted and made anew at each start; "
                         "a non-empty directory that is not a rig's is refused)")
    up.add_argument("--for", dest="seconds", type=float, default=0.0,
                    help="stop by itself after this many seconds (0: run until stopped)")
    up.set_defaults(func=_up)
    down = sub.add_parser("down", help="stop a running rig")
    down.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR)
    down.set_defaults(func=_down)


def _agents() -> tuple[str, ...]:
    from foosball.rig.rig import AGENT_BOARD

    return tuple(AGENT_BOARD)


def _up(args: argparse.Namespace) -> int:
    from foosball.rig.forward import PortForward
    from foosball.rig.rig import PANEL_PORTS, Rig, RigOptions, clean_run_dir

    pid_file = args.run_dir / "rig.pid"
    if pid_file.exists() and _alive(int(pid_file.read_text() or 0)):
        print(f"a rig is already running (pid {pid_file.read_text().strip()}); "
              f"`foosball rig down --run-dir {args.run_dir}` stops it", file=sys.stderr)
        return 1
    try:
        clean_run_dir(args.run_dir)
        agents = _agents()
        rig = Rig(RigOptions(run_dir=args.run_dir, agents=agents, fps=args.fps,
                             opponent=args.opponent, strategy=args.strategy, mode=args.mode))
    except (RuntimeError, ValueError) as error:
        print(f"rig: {error}", file=sys.stderr)
        return 2
    print(f"rig: {MODES[rig.mode]}, starting ...", flush=True)
    stop = StopRequest()  # a flag and a wake-up fd: an Event's set() in a handler can hang
    stop.install((signal.SIGTERM, signal.SIGINT))
    forwards: list[PortForward] = []
    exited: list[str] = []  # processes whose exit stopped the rig
    try:
        try:
            rig.up()
        except (RuntimeError, OSError, AssertionError) as error:
            print(f"rig: could not start ({MODES[rig.mode]}): {error}", file=sys.stderr)
            return 1
        pid_file.write_text(f"{os.getpid()}\n")
        print(rig.describe())
        for agent, port in PANEL_PORTS.items():
            if agent in agents:
                board = "strategy" if agent == "game_panel" else "pole"
                if rig.namespaced:
                    forwards.append(PortForward(port, rig.lan.namespace(board)))
                # An address printed before its page answers is a closed connection for
                # whoever clicks it at once: the agents take seconds to start.
                if not _page_answers(port, PAGE_WITHIN_S):
                    print(f"  {agent}: no page on :{port} after {PAGE_WITHIN_S:.0f} s; see "
                          f"{rig.logs / (agent + '.log')}", file=sys.stderr)
                print(f"  {agent.replace('_', ' ')}: http://localhost:{port}/"
                      f"#token={_token(rig)}")
        if args.opponent == "browser":
            port = rig.options.player_port
            if rig.namespaced:  # the camera's page listens in its board's namespace
                forwards.append(PortForward(port, rig.lan.namespace(rig.camera_board)))
            print(f"  you play the human's rods: http://localhost:{port}/")
        print("  Ctrl-C or `foosball rig down` stops everything", flush=True)
        deadline = time.monotonic() + args.seconds if args.seconds else None
        while not stop.wait(0.5):
            if deadline is not None and time.monotonic() > deadline:
                break
            exited = [n for n, p in rig.processes.items() if p.poll() is not None]
            if exited:
                # On booted boards systemd restarts an agent that exits; here a process of
                # the rig's own (an agent in the other modes, a board's container, the
                # camera, the emulator) is gone and the rig is not what it says it is.
                print(f"rig: {_exits(exited, rig.processes)}; stopping everything; see "
                      f"{rig.logs}", file=sys.stderr)
                break
    finally:
        for forward in forwards:
            forward.close()
        codes = rig.down()
        with contextlib.suppress(FileNotFoundError):
            pid_file.unlink()
        print("rig down:\n" + _stopped(codes) + f"\n  logs kept in {rig.logs}")
    return 1 if exited else 0


def _exits(names: list[str], processes: dict[str, Any]) -> str:
    return ", ".join(f"{name} exited with {_status(processes[name].returncode)}"
                     for name in names)


def _status(code: int | None) -> str:
    if code is None:
        return "no status (did not stop)"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-code).name}"
        return f"signal {-code}"
    return f"status {code}"


def _stopped(codes: dict[str, int | None]) -> str:
    """How each process ended, a line each (SIGTERM or status 0 is a clean stop)."""
    return "\n".join(f"  {name}: {'stopped' if code in (0, -signal.SIGTERM) else _status(code)}"
                     for name, code in codes.items())


def _page_answers(port: int, within_s: float) -> bool:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2.0) as page:
                return bool(page.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    return False


def _token(rig: object) -> str:
    from foosball.panels.server import panel_token
    from foosball.wire.codec import load_key

    return str(panel_token(load_key(rig.key_file)))  # type: ignore[attr-defined]


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # Exited but not yet reaped by whoever started it (a script, a test): a zombie is gone.
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def _down(args: argparse.Namespace) -> int:
    pid_file = args.run_dir / "rig.pid"
    if not pid_file.exists():
        print(f"no rig running from {args.run_dir}", file=sys.stderr)
        return 1
    pid = int(pid_file.read_text() or 0)
    if _alive(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30.0
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
    print("rig stopped" if not _alive(pid) else f"rig (pid {pid}) did not stop")
    return 0 if not _alive(pid) else 1
