"""`foosball agent run NAME --config /etc/foosball/board.toml`: one agent as a service.

This is what each board's `foosball-agent@NAME.service` runs. It reads the board's one
configuration file, opens the real backends it names (raw Ethernet, pysoem, the camera)
and hands them to the agent's own run loop. Every loop here pets systemd's watchdog
(Type=notify, WatchdogSec) and stops cleanly on SIGTERM.
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

from foosball.config import BoardConfig, BoardConfigError, load_board_config
from foosball.safety.systemd import SystemdNotifier
from foosball.wire.catalogue import Agent
from foosball.wire.settings import open_endpoint

log = logging.getLogger("foosball.agent")
WATCHDOG_PERIOD_S = 0.1


class ServiceLoop:
    """Answers "should the loop stop?" and pets systemd's watchdog on each call."""

    def __init__(self, notifier: SystemdNotifier, clock: Callable[[], float] = time.monotonic):
        self.notifier = notifier
        self.clock = clock
        self.stopping = False
        self._last_pet = -WATCHDOG_PERIOD_S

    def should_stop(self) -> bool:
        now = self.clock()
        if now - self._last_pet >= WATCHDOG_PERIOD_S:
            self._last_pet = now
            self.notifier.watchdog()
        return self.stopping

    def running(self) -> bool:
        return not self.should_stop()

    def stop(self, *_: Any) -> None:
        self.stopping = True


def _dataclass_from(cls: type, section: dict[str, Any], where: str) -> Any:
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = set(section) - known
    if unknown:
        raise BoardConfigError(f"[{where}]: unknown keys {sorted(unknown)}; known: {sorted(known)}")
    return cls(**section)


# Each agent has two halves: `configure` validates its board.toml section and touches no
# hardware (so `foosball agent check` and the tests can run it anywhere); `run` opens the
# real backends and runs the agent's loop.


def configure_ball_tracker(board: BoardConfig) -> Any:
    from foosball.vision.config import parse_settings

    return parse_settings(board.section("ball_tracker"))


def run_ball_tracker(board: BoardConfig, settings: Any, loop: ServiceLoop) -> None:
    from foosball.agents.ball_tracker import BallTrackerCore, run
    from foosball.vision.calibration import load_calibration
    from foosball.vision.sources import open_source
    from foosball.vision.tracker import BallTracker

    calibration = load_calibration(settings.calibration)
    source = open_source(settings.source.kind, **settings.source.options)
    tracker = BallTracker(settings.detector, settings.filter, calibration, board.table,
                          source.pixel_format)
    endpoint = open_endpoint(board.wire, Agent.BALL_TRACKER)
    loop.notifier.ready()
    try:
        run(BallTrackerCore(tracker, settings), source, endpoint, time.time_ns, loop.should_stop)
    finally:
        source.close()
        endpoint.close()


def configure_strategy(board: BoardConfig) -> str:
    from foosball.strategy.registry import STRATEGIES

    section = dict(board.section("strategy"))
    name = section.pop("strategy", "improved")
    if section:
        raise BoardConfigError(f"[strategy]: unknown keys {sorted(section)}; known: ['strategy']")
    if name not in STRATEGIES:
        raise BoardConfigError(f"[strategy]: no strategy {name!r}; known: {sorted(STRATEGIES)}")
    return str(name)


def run_strategy(board: BoardConfig, name: str, loop: ServiceLoop) -> None:
    from foosball.agents.strategy import StrategyAgentCore, run
    from foosball.strategy.registry import strategy_factory

    core = StrategyAgentCore(strategy_factory(name)(board.table, 0), board.table)
    endpoint = open_endpoint(board.wire, Agent.STRATEGY)
    loop.notifier.ready()
    try:
        run(endpoint, core, time.time_ns, loop.should_stop)
    finally:
        endpoint.close()


def configure_pole_driver(board: BoardConfig) -> Any:
    from foosball.agents.pole_driver import PoleDriverConfig

    return _dataclass_from(PoleDriverConfig, board.section("pole_driver"), "pole_driver")


def run_pole_driver(board: BoardConfig, config: Any, loop: ServiceLoop) -> None:
    from foosball.agents.pole_driver import run_pole_driver as run

    endpoint = open_endpoint(board.wire, Agent.POLE_DRIVER)
    loop.notifier.ready()
    try:
        run(endpoint, board.table, config, running=loop.running)
    finally:
        endpoint.close()


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


def run_motor_driver(board: BoardConfig, configs: tuple[Any, Any], loop: ServiceLoop) -> None:
    from foosball.agents.motor_driver import run_motor_driver as run
    from foosball.ethercat.bus import open_bus

    bus_config, config = configs
    endpoint = open_endpoint(board.wire, Agent.MOTOR_DRIVER)
    # The motor driver's cycle runs in its own SCHED_FIFO thread and speaks to systemd
    # itself; it stops (quick stop, bus closed) on KeyboardInterrupt, so SIGTERM raises one.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        run(open_bus(bus_config), endpoint, config)
    finally:
        endpoint.close()


def _interrupt(*_: Any) -> None:
    raise KeyboardInterrupt


@dataclasses.dataclass(frozen=True)
class AgentEntry:
    configure: Callable[[BoardConfig], Any]
    run: Callable[[BoardConfig, Any, ServiceLoop], None]


# Agent name (as in board.toml and the systemd unit) -> its two halves. The panels come with
# the simulated rig and panel issues and are not runnable yet.
AGENTS: dict[str, AgentEntry] = {
    "ball_tracker": AgentEntry(configure_ball_tracker, run_ball_tracker),
    "strategy": AgentEntry(configure_strategy, run_strategy),
    "pole_driver": AgentEntry(configure_pole_driver, run_pole_driver),
    "motor_driver": AgentEntry(configure_motor_driver, run_motor_driver),
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
    loop = ServiceLoop(SystemdNotifier())
    signal.signal(signal.SIGTERM, loop.stop)
    signal.signal(signal.SIGINT, loop.stop)
    try:
        entry.run(board, params, loop)
    except (BoardConfigError, ValueError, OSError) as exc:
        print(f"error: {args.name}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
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
