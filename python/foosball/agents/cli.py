"""`foosball agent run NAME --config /etc/foosball/board.toml`: one agent as a service.

This is what each board's `foosball-agent@NAME.service` runs. It reads the board's one
configuration file, opens the real backends it names (raw Ethernet, pysoem, the camera),
builds the agent's core and runs it in the shared runtime (foosball.agents.runtime), which
speaks to systemd (READY, WATCHDOG from a healthy loop, STATUS) and stops cleanly on SIGINT
and SIGTERM (the motor driver quick-stops its drives and closes the bus).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from foosball.agents.runtime import AgentRuntime
from foosball.config import BoardConfig, BoardConfigError, load_board_config
from foosball.safety.systemd import SystemdNotifier
from foosball.wire.catalogue import Agent
from foosball.wire.settings import open_endpoint

log = logging.getLogger("foosball.agent")


def _dataclass_from(cls: type, section: dict[str, Any], where: str) -> Any:
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = set(section) - known
    if unknown:
        raise BoardConfigError(f"[{where}]: unknown keys {sorted(unknown)}; known: {sorted(known)}")
    return cls(**section)


# Each agent has two halves: `configure` validates its board.toml section and touches no
# hardware (so `foosball agent check` and the tests can run it anywhere); `build` opens the
# real backends and returns the agent's runtime, ready to run.


def configure_ball_tracker(board: BoardConfig) -> Any:
    from foosball.vision.config import parse_settings

    return parse_settings(board.section("ball_tracker"))


def build_ball_tracker(board: BoardConfig, settings: Any) -> AgentRuntime:
    from foosball.agents.ball_tracker import BallTrackerCore, Camera
    from foosball.vision.calibration import load_calibration
    from foosball.vision.config import load_thresholds
    from foosball.vision.sources import open_source
    from foosball.vision.tracker import BallTracker

    calibration = load_calibration(settings.calibration)
    # the thresholds last tuned on the game panel, kept on this board
    settings = dataclasses.replace(settings, detector=load_thresholds(
        settings.thresholds_file, settings.detector))
    source = open_source(settings.source.kind, **settings.source.options)
    tracker = BallTracker(settings.detector, settings.filter, calibration, board.table,
                          source.pixel_format, ball_diameter=settings.ball_diameter)
    rod_meter = None
    if settings.rods.enabled:
        from foosball.vision.rods import HumanRodMeter

        rod_meter = HumanRodMeter(calibration, board.table, settings.rods, source.pixel_format)
    return AgentRuntime(BallTrackerCore(tracker, settings, rod_meter=rod_meter),
                        open_endpoint(board.wire, Agent.BALL_TRACKER), board.safety,
                        hardware=Camera(source, settings.thresholds_file),
                        notifier=SystemdNotifier())


def configure_strategy(board: BoardConfig) -> str:
    from foosball.strategy.registry import STRATEGIES

    section = dict(board.section("strategy"))
    name = section.pop("strategy", "improved")
    if section:
        raise BoardConfigError(f"[strategy]: unknown keys {sorted(section)}; known: ['strategy']")
    if name not in STRATEGIES:
        raise BoardConfigError(f"[strategy]: no strategy {name!r}; known: {sorted(STRATEGIES)}")
    return str(name)


def build_strategy(board: BoardConfig, name: str) -> AgentRuntime:
    from foosball.agents.strategy import StrategyAgentCore
    from foosball.strategy.registry import strategy_factory

    core = StrategyAgentCore(strategy_factory(name)(board.table, 0), board.table)
    return AgentRuntime(core, open_endpoint(board.wire, Agent.STRATEGY), board.safety,
                        notifier=SystemdNotifier())


def configure_pole_driver(board: BoardConfig) -> Any:
    from foosball.agents.pole_driver import PoleDriverConfig

    return _dataclass_from(PoleDriverConfig, board.section("pole_driver"), "pole_driver")


def build_pole_driver(board: BoardConfig, config: Any) -> AgentRuntime:
    from foosball.agents.pole_driver import PoleDriverCore

    return AgentRuntime(PoleDriverCore(board.table, config),
                        open_endpoint(board.wire, Agent.POLE_DRIVER), board.safety,
                        notifier=SystemdNotifier())


def configure_motor_driver(board: BoardConfig) -> tuple[Any, Any]:
    """[motor_driver] holds the bus keys (backend, iface, drives, ...) and the agent's."""
    from foosball.agents.motor_driver import MotorDriverConfig, axes_from_table
    from foosball.ethercat.bus import BusConfig

    section = dict(board.section("motor_driver"))
    bus_keys = {f.name for f in dataclasses.fields(BusConfig)} - {"identity"}
    bus = _dataclass_from(BusConfig, {k: section.pop(k) for k in list(section)
                                      if k in bus_keys}, "motor_driver")
    section.setdefault("axes", axes_from_table(board.table))
    return bus, _dataclass_from(MotorDriverConfig, section, "motor_driver")


def build_motor_driver(board: BoardConfig, configs: tuple[Any, Any]) -> AgentRuntime:
    from foosball.agents.motor_driver import open_motor_driver
    from foosball.ethercat.bus import open_bus

    bus_config, config = configs
    endpoint = open_endpoint(board.wire, Agent.MOTOR_DRIVER)
    try:
        return open_motor_driver(open_bus(bus_config), endpoint, config, board.safety,
                                 realtime=True)
    except BaseException:
        endpoint.close()
        raise


def configure_supervisory_panel(board: BoardConfig) -> Any:
    from foosball.panels.supervisory import SupervisoryPanelConfig

    return _dataclass_from(SupervisoryPanelConfig, board.section("supervisory_panel"),
                           "supervisory_panel")


def build_supervisory_panel(board: BoardConfig, config: Any) -> AgentRuntime:
    from foosball.panels.supervisory import open_supervisory_panel
    from foosball.wire.codec import load_key

    endpoint = open_endpoint(board.wire, Agent.SUPERVISORY_PANEL)
    try:
        return open_supervisory_panel(board.table, endpoint, config, board.safety,
                                      wire_key=load_key(board.wire.key_file),
                                      notifier=SystemdNotifier())
    except BaseException:
        endpoint.close()
        raise


def configure_game_panel(board: BoardConfig) -> Any:
    from foosball.panels.game_panel import GamePanelSettings

    try:
        return GamePanelSettings.from_section(board.section("game_panel"))
    except ValueError as exc:
        raise BoardConfigError(f"{board.path}: {exc}") from exc


def build_game_panel(board: BoardConfig, settings: Any) -> AgentRuntime:
    from foosball.panels.game_panel import open_game_panel
    from foosball.wire.codec import load_key

    endpoint = open_endpoint(board.wire, Agent.GAME_PANEL)
    try:
        return open_game_panel(board.table, settings, endpoint, load_key(board.wire.key_file),
                               board.safety, notifier=SystemdNotifier())
    except BaseException:
        endpoint.close()
        raise


def configure_update_agent(board: BoardConfig) -> Any:
    from foosball.ota.core import UpdateAgentConfig

    section = dict(board.section("update_agent"))
    # By default the boot is judged by every other agent this board runs.
    section.setdefault("watch", [name for name in board.agents if name != "update_agent"])
    try:
        return _dataclass_from(UpdateAgentConfig, section, "update_agent")
    except TypeError as exc:  # board missing
        raise BoardConfigError(f"{board.path}: [update_agent]: {exc}") from exc


def build_update_agent(board: BoardConfig, config: Any) -> AgentRuntime:
    from foosball.ota.core import UpdateCore
    from foosball.ota.rauc import RaucHardware

    return AgentRuntime(UpdateCore(config, time.monotonic()),
                        open_endpoint(board.wire, Agent.OTA), board.safety,
                        hardware=RaucHardware(config), notifier=SystemdNotifier())


@dataclasses.dataclass(frozen=True)
class AgentEntry:
    configure: Callable[[BoardConfig], Any]
    build: Callable[[BoardConfig, Any], AgentRuntime]


# Agent name (as in board.toml and the systemd unit) -> its two halves.
AGENTS: dict[str, AgentEntry] = {
    "ball_tracker": AgentEntry(configure_ball_tracker, build_ball_tracker),
    "strategy": AgentEntry(configure_strategy, build_strategy),
    "pole_driver": AgentEntry(configure_pole_driver, build_pole_driver),
    "motor_driver": AgentEntry(configure_motor_driver, build_motor_driver),
    "supervisory_panel": AgentEntry(configure_supervisory_panel, build_supervisory_panel),
    "game_panel": AgentEntry(configure_game_panel, build_game_panel),
    "update_agent": AgentEntry(configure_update_agent, build_update_agent),
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
    entry = AGENTS.get(args.name)
    if entry is None:
        print(f"error: no runnable agent {args.name!r}; runnable: {sorted(AGENTS)}",
              file=sys.stderr)
        return 2
    try:
        board = load_board_config(args.config)
        params = entry.configure(board)
    except (BoardConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    stop_requested: list[int] = []
    # A signal before the runtime exists (the bus still starting) stops it as soon as it does.
    signal.signal(signal.SIGTERM, lambda signum, _: stop_requested.append(signum))
    signal.signal(signal.SIGINT, lambda signum, _: stop_requested.append(signum))
    try:
        runtime = entry.build(board, params)
    except (BoardConfigError, ValueError, OSError, RuntimeError) as exc:
        print(f"error: {args.name}: {exc}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, runtime.stop)
    signal.signal(signal.SIGINT, runtime.stop)
    try:
        # Every agent's I/O and step threads run SCHED_FIFO where the system allows it (the
        # units' LimitRTPRIO): heartbeats must keep time on a loaded board.
        runtime.run(should_stop=lambda: bool(stop_requested), realtime=True)
    finally:
        runtime.endpoint.close()
    log.info("%s stopped: %s", args.name, runtime.counters)
    return 0


def check_board(board: BoardConfig) -> list[str]:
    """Validate every runnable agent's section; the names of sections not runnable here."""
    not_runnable = []
    for name in board.agents:
        if name in AGENTS:
            AGENTS[name].configure(board)
        else:
            not_runnable.append(name)
    return not_runnable


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
