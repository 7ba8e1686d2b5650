"""`foosball agent run NAME --config /etc/foosball/board.toml`: one agent as a service.

This is what each board's `foosball-agent@NAME.service` runs. It reads the board's one
configuration file, opens the real backends it names (raw Ethernet, pysoem, the camera),
builds the agent's core and runs it in the shared runtime (foosball.runtime), which
speaks to systemd (READY, WATCHDOG from a healthy loop, STATUS) and stops cleanly on SIGINT
and SIGTERM (the motor driver quick-stops its drives and closes the bus).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from foosball.config import BoardConfig, BoardConfigError, load_board_config
from foosball.runtime import AgentRuntime
from foosball.safety.stop import StopRequest
from foosball.safety.systemd import SystemdNotifier
from foosball.wire.catalogue import Agent
from foosball.wire.settings import open_endpoint

log = logging.getLogger("foosball.agent")


# Each agent's board.toml section is checked by the board loader (foosball.config, the one
# `foosball agent check` runs too); `build` opens the real backends and returns the agent's
# runtime, ready to run.


def _endpoint(board: BoardConfig, agent: Agent) -> Any:
    return open_endpoint(board.wire, agent, key=board.wire_key)  # the key the loader checked


def _built_on(board: BoardConfig, agent: Agent,
              build: Callable[[Any], AgentRuntime]) -> AgentRuntime:
    """An agent whose build opens more than its endpoint (a bus, a web server): the
    endpoint is closed again if the build fails."""
    endpoint = _endpoint(board, agent)
    try:
        return build(endpoint)
    except BaseException:
        endpoint.close()
        raise


def build_ball_tracker(board: BoardConfig, settings: Any) -> AgentRuntime:
    from foosball.agents.ball_tracker import BallTrackerCore, Camera
    from foosball.vision.calibration import load_calibration
    from foosball.vision.config import with_thresholds_file
    from foosball.vision.sources import open_source
    from foosball.vision.tracker import BallTracker

    calibration = load_calibration(settings.calibration)
    # the colour learnt or last tuned on the game panel, kept on this board
    settings = with_thresholds_file(settings)
    source = open_source(settings.source.kind, **settings.source.options)
    tracker = BallTracker(settings.detector, settings.filter, calibration, board.table,
                          source.pixel_format, ball_diameter=settings.ball_diameter)
    rod_meter = None
    if settings.rods.enabled:
        from foosball.vision.rods import HumanRodMeter

        rod_meter = HumanRodMeter(calibration, board.table, settings.rods, source.pixel_format)
    # The camera's first frame gets the board's startup grace, as every peer's first
    # heartbeat does: a fixed 2 s was missed on a loaded machine (the rig started in FAULT).
    core = BallTrackerCore(tracker, settings, rod_meter=rod_meter,
                           startup_grace_s=board.safety.startup_grace_s)
    return AgentRuntime(core,
                        _endpoint(board, Agent.BALL_TRACKER), board.safety,
                        hardware=Camera(source, settings.thresholds_file),
                        notifier=SystemdNotifier())


def build_strategy(board: BoardConfig, settings: Any) -> AgentRuntime:
    from foosball.agents.strategy import StrategyAgentCore
    from foosball.strategy.registry import strategy_factory

    core = StrategyAgentCore(strategy_factory(settings.strategy)(board.table, 0), board.table)
    return AgentRuntime(core, _endpoint(board, Agent.STRATEGY), board.safety,
                        notifier=SystemdNotifier())


def build_pole_driver(board: BoardConfig, config: Any) -> AgentRuntime:
    from foosball.agents.pole_driver import PoleDriverCore

    return AgentRuntime(PoleDriverCore(board.table, config),
                        _endpoint(board, Agent.POLE_DRIVER), board.safety,
                        notifier=SystemdNotifier())


def build_motor_driver(board: BoardConfig, settings: Any) -> AgentRuntime:
    from foosball.agents.motor_driver import open_motor_driver
    from foosball.ethercat.bus import open_bus

    return _built_on(board, Agent.MOTOR_DRIVER, lambda endpoint: open_motor_driver(
        open_bus(settings.bus), endpoint, settings.agent, board.safety, realtime=True))


def build_supervisory_panel(board: BoardConfig, config: Any) -> AgentRuntime:
    from foosball.panels.supervisory import open_supervisory_panel

    return _built_on(board, Agent.SUPERVISORY_PANEL, lambda endpoint: open_supervisory_panel(
        board.table, endpoint, config, board.safety, wire_key=board.wire_key,
        notifier=SystemdNotifier()))


def build_game_panel(board: BoardConfig, settings: Any) -> AgentRuntime:
    from foosball.panels.game_page import open_game_panel

    return _built_on(board, Agent.GAME_PANEL, lambda endpoint: open_game_panel(
        board.table, settings, endpoint, board.wire_key, board.safety,
        notifier=SystemdNotifier()))


def build_match_recorder(board: BoardConfig, config: Any) -> AgentRuntime:
    from foosball.agents.match_recorder import MatchRecorderCore, RecordingHardware
    from foosball.recording.writer import RecordingWriter

    writer = RecordingWriter(config.directory, max_file_bytes=config.max_file_bytes,
                             max_total_bytes=config.max_total_bytes,
                             sync_period_s=config.sync_period_s)
    hardware = RecordingHardware(writer)
    runtime = AgentRuntime(MatchRecorderCore(board.table),
                           _endpoint(board, Agent.MATCH_RECORDER), board.safety,
                           hardware=hardware, notifier=SystemdNotifier())
    hardware.wake_with(runtime._wake)  # a message is written when it comes
    return runtime


def build_update_agent(board: BoardConfig, settings: Any) -> AgentRuntime:
    from foosball.ota.core import UpdateCore
    from foosball.ota.rauc import RaucHardware

    return AgentRuntime(UpdateCore(settings, time.monotonic()),
                        _endpoint(board, Agent.OTA), board.safety,
                        hardware=RaucHardware(settings), notifier=SystemdNotifier())


# Agent name (as in board.toml, foosball.config.AGENT_SECTIONS and the systemd unit) -> how
# to build it from its checked settings.
AGENTS: dict[str, Callable[[BoardConfig, Any], AgentRuntime]] = {
    "ball_tracker": build_ball_tracker,
    "strategy": build_strategy,
    "pole_driver": build_pole_driver,
    "motor_driver": build_motor_driver,
    "supervisory_panel": build_supervisory_panel,
    "game_panel": build_game_panel,
    "match_recorder": build_match_recorder,
    "update_agent": build_update_agent,
}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("agent", help="run one agent as its board's service does")
    sub = parser.add_subparsers(dest="agent_command", required=True)
    run = sub.add_parser("run", help="run an agent from the board configuration")
    run.add_argument("name", help="agent: " + ", ".join(AGENTS))
    run.add_argument("--config", default="/etc/foosball/board.toml")
    run.set_defaults(func=_run)
    check = sub.add_parser("check", help="validate a board configuration file")
    check.add_argument("--config", default="/etc/foosball/board.toml")
    check.set_defaults(func=_check)


def _run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    build = AGENTS.get(args.name)
    if build is None:
        print(f"error: no runnable agent {args.name!r}; runnable: {sorted(AGENTS)}",
              file=sys.stderr)
        return 2
    try:
        # Everything `agent check` checks; but the update agent reads only its own section
        # of the agents': a new image must not keep it from judging (and rolling back) the
        # boot by one of theirs it gets wrong.
        only = args.name if args.name == "update_agent" else None
        board = load_board_config(args.config, only)
        params = board.settings(args.name)
    except (BoardConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    # The handler only sets a flag and writes a wake-up byte (no lock: see StopRequest); the
    # step loop looks at the flag every turn, at most a heartbeat period apart. A signal
    # before the runtime exists (the bus still starting) stops it as soon as it does.
    stop = StopRequest()
    stop.install((signal.SIGTERM, signal.SIGINT))
    try:
        runtime = build(board, params)
    except (BoardConfigError, ValueError, OSError, RuntimeError) as exc:
        print(f"error: {args.name}: {exc}", file=sys.stderr)
        return 1
    try:
        # Every agent's I/O and step threads run SCHED_FIFO where the system allows it (the
        # units' LimitRTPRIO): heartbeats must keep time on a loaded board.
        runtime.run(should_stop=stop.is_set, realtime=True)
    finally:
        runtime.endpoint.close()
    log.info("%s stopped: %s", args.name, runtime.counters)
    return 0


def check_board(board: BoardConfig) -> list[str]:
    """The board's agents not runnable in this release (the loader checked every section)."""
    return [name for name in board.agents if name not in AGENTS]


def _check(args: argparse.Namespace) -> int:
    try:
        board = load_board_config(args.config)
        not_runnable = check_board(board)
    except (BoardConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{board.path}: wire {board.wire.transport} on {board.wire.iface}; "
          f"agents {sorted(board.agents)}"
          + (f"; not runnable in this release: {not_runnable}" if not_runnable else ""))
    return 0
