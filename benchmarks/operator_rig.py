"""Issue 29 on the simulated rig, as an operator meets it through both panels' pages (their
WebSockets and POST /api/action with the panel token, what the pages do):

  panels  the supervisory panel's CPU over 5 s before and after one accepted action; one
          drive halted on the supervisory panel during a match (the game panel's state,
          drives line, clock and score), then released; HALT ALL (every drive's state on
          the supervisory panel, the game's), then RESTART ALL.
  starts  the rig started --count times beside --busy busy loops (Python `while True`):
          READY, or FAULT with its causes, and the load average at each start.

Root (namespaces). Run under the shared lock:
    flock /tmp/foosball-measure.lock .venv/bin/python benchmarks/operator_rig.py panels
Prints one JSON object. Run with PYTHONPATH pointing at another tree to measure that tree
("before").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

from foosball.panels.server import panel_token
from foosball.rig.forward import PortForward
from foosball.rig.rig import Rig, RigOptions
from foosball.wire.codec import load_key

AGENTS = ("motor_driver", "pole_driver", "supervisory_panel", "ball_tracker", "strategy",
          "game_panel")
GAME_PORT, SUPERVISORY_PORT = 18380, 18381  # host ports of our own: not a person's rig's
CLOCK_TICK = os.sysconf("SC_CLK_TCK")


async def _topic(port: int, name: str, timeout_s: float) -> Any:
    async with aiohttp.ClientSession() as session, \
            session.ws_connect(f"http://127.0.0.1:{port}/ws") as ws:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            msg = await ws.receive(timeout=max(0.1, deadline - time.monotonic()))
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            data = json.loads(msg.data)
            if name in data.get("topics", {}):
                return data["topics"][name]
    raise TimeoutError(f"no {name} topic on :{port}")


def topic(port: int, name: str, timeout_s: float = 5.0) -> Any:
    """The page's newest `name` topic (a new connection is sent every topic at once)."""
    return asyncio.run(_topic(port, name, timeout_s))


async def _act(port: int, token: str, action: str, args: dict[str, Any]) -> Any:
    async with aiohttp.ClientSession() as session, session.post(
            f"http://127.0.0.1:{port}/api/action",
            data=json.dumps({"action": action, "args": args, "token": token})) as reply:
        return await reply.json()


def act(port: int, token: str, action: str, **args: Any) -> Any:
    return asyncio.run(_act(port, token, action, args))


def wait(condition: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            value = condition()
        except (OSError, TimeoutError, aiohttp.ClientError):
            value = None
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"{what}: not within {timeout_s:g} s")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK  # utime + stime, every thread


def cpu_share(pid: int, seconds: float) -> float:
    start_cpu, start = cpu_s(pid), time.monotonic()
    time.sleep(seconds)  # a measurement window, not a wait for something to happen
    return round((cpu_s(pid) - start_cpu) / (time.monotonic() - start), 3)


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


class RigUp:
    def __init__(self, run_dir: Path) -> None:
        self.rig = Rig(RigOptions(run_dir=run_dir, agents=AGENTS))
        self.forwards: list[PortForward] = []

    def __enter__(self) -> RigUp:
        rig = self.rig
        rig.up()
        self.forwards = [PortForward(GAME_PORT, rig.lan.namespace("strategy"), 8080),
                         PortForward(SUPERVISORY_PORT, rig.lan.namespace("pole"), 8081)]
        self.token = panel_token(load_key(rig.key_file))
        return self

    def __exit__(self, *exc: object) -> None:
        for forward in self.forwards:
            forward.close()
        self.rig.down()

    def game(self) -> dict[str, Any]:
        return topic(GAME_PORT, "game")  # type: ignore[no-any-return]

    def axes(self) -> list[str]:
        return [a["state"] for a in topic(SUPERVISORY_PORT, "axes")["axes"]]


def shown(game: dict[str, Any]) -> dict[str, Any]:
    return {"state": game["state"], "drives": game.get("drives_text", game["drives"]),
            "clock_s": game["clock_s"], "score": game["score"],
            "start_allowed": game["allowed"]["start"]}


def panels(run_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"load_before": loadavg()}
    with RigUp(run_dir) as up:
        wait(lambda: up.game()["state"] == "READY", 120, "READY")
        pid = up.rig.processes["supervisory_panel"].pid
        out["supervisory_cpu_idle"] = cpu_share(pid, 5.0)
        out["accepted"] = act(SUPERVISORY_PORT, up.token, "drive", axis=0,
                              command="release")["accepted"]  # a drive not halted: no-op
        time.sleep(1.0)  # the action stepped
        out["supervisory_cpu_after_one_action"] = cpu_share(pid, 5.0)

        act(GAME_PORT, up.token, "start")
        wait(lambda: up.game()["state"] == "PLAYING", 10, "PLAYING")
        time.sleep(2.0)  # some match
        act(SUPERVISORY_PORT, up.token, "drive", axis=3, command="halt")
        time.sleep(1.0)  # the MDA's next MotorStatus, the panel's next GameState
        halted = shown(up.game())
        time.sleep(3.0)  # the match while the drive is halted
        later = shown(up.game())
        out["one_drive_halted"] = {"at_once": halted, "3_s_later": later,
                                   "axes": up.axes()}
        act(SUPERVISORY_PORT, up.token, "drive", axis=3, command="release")
        try:
            wait(lambda: up.game()["drives"] == "READY", 60, "drives READY")
        except TimeoutError as exc:
            out["release"] = str(exc)
        out["after_release"] = shown(up.game())

        act(SUPERVISORY_PORT, up.token, "halt_all")
        time.sleep(1.0)
        out["halt_all"] = {"axes": up.axes(), "game": shown(up.game())}
        act(SUPERVISORY_PORT, up.token, "restart_all")
        try:
            wait(lambda: up.game()["drives"] == "READY", 60, "drives READY")
            out["after_restart_all"] = shown(up.game())
        except TimeoutError as exc:
            out["after_restart_all"] = {"error": str(exc), "axes": up.axes(),
                                        "game": shown(up.game())}
    out["load_after"] = loadavg()
    return out


def starts(run_dir: Path, count: int, busy: int) -> dict[str, Any]:
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(busy)]
    results = []
    try:
        time.sleep(10.0)  # the load average climbs
        for n in range(count):
            load = loadavg()
            started = time.monotonic()
            with RigUp(run_dir / f"start-{n}") as up:
                state = wait(lambda: (g := up.game())["state"] in ("READY", "FAULT") and g,
                             120, "READY or FAULT")
                results.append({"state": state["state"], "after_s": round(
                    time.monotonic() - started, 1), "causes": state["causes"],
                    "load": load})
                print(json.dumps(results[-1]), file=sys.stderr, flush=True)  # as it goes
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return {"busy_loops": busy, "starts": results,
            "ready": sum(r["state"] == "READY" for r in results)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("panels", "starts"))
    parser.add_argument("--count", type=int, default=4)
    parser.add_argument("--busy", type=int, default=4, help="busy loops beside the rig")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root (the rig's namespaces)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="operator-rig-") as tmp:
        result = panels(Path(tmp)) if args.what == "panels" else \
            starts(Path(tmp), args.count, args.busy)
    import foosball
    result["tree"] = str(Path(foosball.__file__).parents[1])
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
