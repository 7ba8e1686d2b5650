"""A match on the rig through the whole chain, and the same match headless, side by side.

    python benchmarks/rig_match.py --seconds 300 --fps 100        # root: the namespaced rig

On the rig: the six agents as processes, the real pysoem master and the drive emulator,
the live table rendered at `--fps` into the tracker. A fourth board (this process) starts
the game on the wire (as the game panel's Start does), listens to everything, and reports:

- the camera rate that held: BallStates per second and frames missing from their indices;
- per frame, on one clock (every board is on this host): capture -> BallState on the wire,
  -> RodCommand (the strategy's, which names the capture time), -> MotorCommand (the pole
  driver's answer to it, the next one on the wire); and the motor driver's own measure,
  capture -> the setpoints answering it leaving in an EtherCAT frame (EtherCatStatus, per
  window of 200 cycles);
- each process's share of one core;
- the score from the game panel's GameState, the shots and saves from the table itself;
- the goals the table scored while the game was PLAYING (its truth, frame by frame) against
  the goals the game panel counted: matched as in goal_count.py, the missed and the made up;
- a FAULT (a stall of this shared machine can be one) is restarted as the person at the
  table would, once its cause is gone, and counted with the time the game did not play.
The recordings of the match recorder (`foosball report`) are in the run directory named.

Then `foosball sim match` plays the same opponent for the same time headless (the
strategy fed by the simulator's perception model, no agents, no wire).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import math
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests/
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "acceptance"))

from goal_count import match_goals
from rig_keywords.truth import TruthListener

from foosball.rig.faults import FaultMatrix
from foosball.rig.observer import Observer
from foosball.rig.rig import AGENT_BOARD, Rig, RigOptions
from foosball.wire.catalogue import (
    Alarm,
    BallState,
    EtherCatStatus,
    GameCommand,
    GameControl,
    GameState,
    Heartbeat,
    MotorCommand,
    MotorStatus,
    RodCommand,
    SafetyState,
)

# Debian's chromium at nice 19, through the acceptance suites' wrapper
NICE_CHROMIUM = Path(__file__).resolve().parents[1] / "tests/acceptance/browser/chromium"


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {}
    return {f"p{q}": ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]
            for q in (50, 99)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--fps", type=float, default=100.0)
    parser.add_argument("--opponent", default="club")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--screenshot", type=Path,
                        help="PNG of the game panel (800x480) half way through the match")
    args = parser.parse_args()

    agents = tuple(AGENT_BOARD)
    options = RigOptions(run_dir=Path(tempfile.mkdtemp(prefix="fb-match-")), agents=agents,
                         fps=args.fps, opponent=args.opponent)
    rig = Rig(options)
    truth = TruthListener(rig.lan.namespace("pole" if rig.namespaced else "vision"))
    options.truth = truth.address
    observer = None
    report: dict[str, object] = {"fps": args.fps, "seconds": args.seconds,
                                 "opponent": args.opponent,
                                 "recordings": str(rig.run_dir / "matches")}
    try:
        rig.up()
        observer = Observer(rig, realtime=True, kinds=(
            BallState, RodCommand, MotorCommand, GameState, Heartbeat, Alarm, MotorStatus,
            EtherCatStatus))
        gc.freeze()
        faults = FaultMatrix(rig, observer)
        if faults.recover(90.0) is None:
            print(f"the rig did not come up; logs in {rig.logs}", file=sys.stderr)
            return 1
        observer.send(GameControl(command=GameCommand.START))
        start = time.monotonic()
        cpu_before = process_cpu(rig)
        screenshot_at = start + args.seconds / 2 if args.screenshot is not None else math.inf
        restarts: list[float] = []  # how long each FAULT held the game
        while (now := time.monotonic()) < start + args.seconds:
            if now >= screenshot_at:
                screenshot_at = math.inf
                screenshot_game_panel(rig, args.screenshot)
            games = observer.since(now - 0.3, GameState)
            if games and games[-1].message.state == SafetyState.FAULT:
                # As the person at the table: Restart once the cause is gone, then Start.
                faulted = games[-1].at_s
                if faults.recover(30.0) is not None:
                    observer.send(GameControl(command=GameCommand.START))
                restarts.append(time.monotonic() - faulted)
            time.sleep(0.2)
        end = time.monotonic()
        report["faults_restarted"] = {"count": len(restarts),
                                      "seconds_not_playing": round(sum(restarts), 1)}
        report["cpu_percent_of_one_core"] = cpu_share(cpu_before, process_cpu(rig), end - start)
        observer.send(GameControl(command=GameCommand.STOP))
        heard = [h for h in observer.since(start) if h.at_s <= end]
        report["rig"] = summarise(heard, args.seconds, args.fps)
        report["goals"] = goals_counted(heard, [t for t in truth.since(start) if t.at_s <= end])
    finally:
        if observer is not None:
            observer.close()
        truth.close()
        rig.down()
    table = re.findall(r"camera: .*", rig.log_text("camera"))
    report["rig_table"] = table[-1] if table else ""
    headless = subprocess.run(
        [sys.executable, "-m", "foosball.cli", "sim", "match", "--robot", "improved",
         "--opponent", args.opponent, "--duration", str(args.seconds), "--seed",
         str(args.seed), "--json"], capture_output=True, text=True, check=True)
    result = json.loads(headless.stdout)
    report["sim_match"] = {"goals": result["goals"], "saves": result["saves"],
                           "shots": {team: result["shots"][team]["shots"]
                                     for team in ("robot", "human")}}
    print(json.dumps(report, indent=1))
    return 0


def process_cpu(rig: Rig) -> dict[str, float]:
    """CPU seconds (user + system) each of the rig's processes has used so far."""
    import psutil

    used = {}
    for name, process in rig.processes.items():
        with contextlib.suppress(psutil.Error):
            times = psutil.Process(process.pid).cpu_times()
            used[name] = times.user + times.system
    return used


def cpu_share(before: dict[str, float], after: dict[str, float],
              seconds: float) -> dict[str, float]:
    """Each process's share of one core between the two readings, and the whole rig's."""
    shares = {name: round(100 * (after[name] - before[name]) / seconds, 1)
              for name in after if name in before}
    shares["whole rig"] = round(sum(shares.values()), 1)
    return shares


def screenshot_game_panel(rig: Rig, path: Path) -> None:
    """The game panel as the board's 800x480 display shows it, from headless Chromium on
    this host (the page reached through a forwarded port, as `foosball rig up` does). The
    browser runs at nice 19 (a person's laptop, not a board: it must not take the agents'
    cores)."""
    from foosball.rig.forward import PortForward
    from foosball.rig.rig import PANEL_PORTS
    from tests.panels.game_rig import open_chromium

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        local_port = probe.getsockname()[1]
    forward = PortForward(local_port, rig.lan.namespace(AGENT_BOARD["game_panel"]),
                          PANEL_PORTS["game_panel"])
    driver = open_chromium(800, 480, Path(tempfile.mkdtemp(prefix="fb-chromium-")),
                           binary=str(NICE_CHROMIUM))
    try:
        driver.get(f"http://127.0.0.1:{local_port}/")
        time.sleep(3.0)  # the WebSocket's first updates: field, rods, ball, score
        path.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(path))
    finally:
        driver.quit()
        forward.close()


def goals_counted(heard: list, frames: list) -> dict[str, object]:
    """The table's goals while the game said PLAYING against the game panel's score rises."""
    states = [h for h in heard if isinstance(h.message, GameState)]
    table, panel = [], []
    state, g = None, 0
    for before, frame in itertools.pairwise(frames):
        while g < len(states) and states[g].at_s <= frame.at_s:
            state, g = states[g].message.state, g + 1
        for team, was, now in (("robot", before.score_robot, frame.score_robot),
                               ("human", before.score_human, frame.score_human)):
            if now > was and state == SafetyState.PLAYING:
                table.append((frame.at_s, team))
    for before, now in itertools.pairwise(states):
        for team, was, is_ in (("robot", before.message.score_robot, now.message.score_robot),
                               ("human", before.message.score_human, now.message.score_human)):
            panel += [(now.at_s, team)] * max(0, is_ - was)
    missed, extra = match_goals(table, panel)
    return {"table_while_playing": len(table), "panel_counted": len(panel),
            "missed": len(missed), "made_up": len(extra)}


def summarise(heard: list, seconds: float, fps: float) -> dict[str, object]:
    balls = [h for h in heard if isinstance(h.message, BallState)]
    frames = sorted({h.message.frame for h in balls})
    missing = sum(b - a - 1 for a, b in itertools.pairwise(frames) if b > a + 1)
    arrival = {h.message.capture_time: h.at_s for h in balls}
    ball_ms, rod_ms, strategy_ms, pole_ms = [], [], [], []
    last_rod = None
    for h in heard:
        message = h.message
        wall_now = time.time() - (time.monotonic() - h.at_s)  # this arrival on the wall clock
        if isinstance(message, BallState):
            ball_ms.append((wall_now - message.capture_time * 1e-9) * 1e3)
        elif isinstance(message, RodCommand):
            rod_ms.append((wall_now - message.ball_capture_time * 1e-9) * 1e3)
            seen = arrival.get(message.ball_capture_time)
            if seen is not None:
                strategy_ms.append((h.at_s - seen) * 1e3)
            last_rod = h.at_s
        elif isinstance(message, MotorCommand) and last_rod is not None:
            pole_ms.append((h.at_s - last_rod) * 1e3)
            last_rod = None
    states = [h.message for h in heard if isinstance(h.message, GameState)]
    # The motor driver's own measure, frame capture -> the setpoints answering it leaving
    # in an EtherCAT frame (the wall clock at both ends), per window of 200 cycles.
    windows = [(h.message.capture_to_setpoint_p50_s * 1e3,
                h.message.capture_to_setpoint_p99_s * 1e3) for h in heard
               if isinstance(h.message, EtherCatStatus) and h.message.capture_to_setpoint_p50_s]
    windows = list(dict.fromkeys(windows))  # each window is repeated until the next
    return {
        "ball_states_per_s": len(balls) / seconds, "camera_fps": fps,
        "frames_missing": missing, "frames_seen": len(frames),
        "capture_to_ball_state_ms": percentiles(ball_ms),
        "capture_to_rod_command_ms": percentiles(rod_ms),
        "ball_state_to_rod_command_ms": percentiles(strategy_ms),
        "rod_command_to_motor_command_ms": percentiles(pole_ms),
        "capture_to_setpoint_ms_per_window": {
            "windows": len(windows),
            "p50_median": percentiles([w[0] for w in windows]).get("p50"),
            "p99_median": percentiles([w[1] for w in windows]).get("p50"),
            "p99_worst": max((w[1] for w in windows), default=None)},
        "latched_alarms": sum(1 for h in heard if isinstance(h.message, Alarm)
                              and h.message.latched),
        "latched_alarm_causes": Counter(
            f"{h.sender.name.lower()}: {h.message.code.name} {h.message.text[:60]}"
            for h in heard if isinstance(h.message, Alarm) and h.message.latched
        ).most_common(5),
        "score": ({"robot": states[-1].score_robot, "human": states[-1].score_human}
                  if states else None),
    }


if __name__ == "__main__":
    sys.exit(main())
