"""Every agent the product runs, in one table: its name (the board.toml section, the
systemd unit `foosball-agent@<name>`), who it is on the wire, which board runs it, how its
section is checked and how it is built.

Read by the board loader (foosball.config: which sections exist, each one's checks), by
`foosball agent run` (foosball.agent_cli: the build), by the simulated rig (which board's
namespace runs it), by tests/images (which board's modules must ship it; the closure check
reads `AGENTS` to count an import inside a section parser or a build only for the boards
that run that agent) and by tests/architecture (docs/architecture.md's "Boards and agents"
table must list the same agents on the same boards). Add an agent here (docs/guide.md).

The section parsers open no hardware; a build opens the real backends (raw Ethernet,
pysoem, the camera) and returns the agent's runtime, ready to run. Both import what they
need inside the function, so a board imports only its own agents' modules.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from foosball.geometry import Table
from foosball.runtime import AgentRuntime
from foosball.runtime.settings import SafetySettings
from foosball.safety.systemd import SystemdNotifier
from foosball.schema import SettingError, parse, parse_split, setting
from foosball.wire.catalogue import Agent
from foosball.wire.settings import WireSettings, open_endpoint

EVERY_BOARD = "every"  # an agent every board's image runs (the update agent)


class Board(Protocol):
    """What a build reads of the board's checked configuration (foosball.config.BoardConfig)."""

    wire: WireSettings
    table: Table
    safety: SafetySettings
    wire_key: bytes


def _strategy_name(value: Any, where: str) -> str:
    from foosball.strategy.registry import STRATEGIES

    if value not in STRATEGIES:
        raise SettingError(f"{where}: no strategy {value!r}; known: "
                           f"{', '.join(sorted(STRATEGIES))}")
    return str(value)


@dataclass(frozen=True)
class StrategySettings:
    strategy: str = setting("improved", convert=_strategy_name)


@dataclass(frozen=True)
class MotorDriverSettings:
    """[motor_driver] holds the bus keys (backend, iface, drives, ...) and the agent's."""

    bus: Any  # foosball.ethercat.bus.BusConfig
    agent: Any  # foosball.agents.motor_driver.MotorDriverConfig


# --- each agent's section: its settings from its table (no hardware touched) ------------------
def _ball_tracker(section: dict[str, Any], table: Table) -> Any:
    settings = _ball_tracker_unopened(section, table)
    _tracker_files(settings)
    return settings


def _ball_tracker_unopened(section: dict[str, Any], table: Table) -> Any:
    """The section's own (vision.json's) checks, named below, without the files it names."""
    from foosball.vision.config import parse_settings

    source = section.get("source")
    if not isinstance(source, dict) or "kind" not in source:
        # vision.json's default source is the simulator's camera (tools, tests); a board
        # names its camera, so a forgotten table never runs a board on rendered frames.
        raise SettingError("[ball_tracker] source.kind: missing; name the board's frame "
                           "source in [ball_tracker.source] (v4l2, gstreamer, video, images, "
                           "socket or sim: foosball.vision.sources.BACKENDS)")
    return parse_settings(section, "[ball_tracker]")


def _strategy(section: dict[str, Any], table: Table) -> StrategySettings:
    return parse(StrategySettings, section, "[strategy]")  # type: ignore[no-any-return]


def _pole_driver(section: dict[str, Any], table: Table) -> Any:
    from foosball.agents.pole_driver import PoleDriverConfig

    return parse(PoleDriverConfig, section, "[pole_driver]")


def _motor_driver(section: dict[str, Any], table: Table) -> MotorDriverSettings:
    from foosball.agents.motor_driver import MotorDriverConfig, axes_from_table
    from foosball.ethercat.bus import BusConfig

    bus, agent = parse_split(section, "[motor_driver]", BusConfig, MotorDriverConfig)
    settings = MotorDriverSettings(BusConfig(**bus),
                                   MotorDriverConfig(axes=axes_from_table(table), **agent))
    _check_cycle(settings.bus, settings.agent.cycle_s)
    return settings


def _check_cycle(bus: Any, cycle_s: float) -> None:
    """What the bus keys must be for the agent's cycle (each alone passed its range)."""
    from foosball.ethercat.bus import receive_timeout_for

    cycle_ms = cycle_s * 1e3
    if bus.watchdog_ms < 2 * cycle_ms:
        # The drives' watchdog would trip between two frames of a healthy master: every
        # drive stops and the operator sees only a working counter short.
        raise SettingError(f"[motor_driver] watchdog_ms: {bus.watchdog_ms:g} ms is shorter "
                           f"than two cycles (2 x cycle_s {cycle_s:g} s = {2 * cycle_ms:g} ms)")
    if bus.receive_timeout_us >= cycle_s * 1e6:
        raise SettingError(f"[motor_driver] receive_timeout_us: {bus.receive_timeout_us} us "
                           f"is not within a cycle (cycle_s {cycle_s:g} s = "
                           f"{cycle_s * 1e6:.0f} us); {receive_timeout_for(cycle_s)} us suits it")
    if bus.backend == "pysoem" and not bus.iface.strip():
        raise SettingError('[motor_driver] iface: empty; the pysoem backend needs the '
                           'EtherCAT interface (e.g. "ecat0")')


def _supervisory_panel(section: dict[str, Any], table: Table) -> Any:
    from foosball.panels.supervisory import SupervisoryPanelConfig

    return parse(SupervisoryPanelConfig, section, "[supervisory_panel]")


def _game_panel(section: dict[str, Any], table: Table) -> Any:
    from foosball.panels.game_page import GamePanelSettings

    return GamePanelSettings.from_section(section)


def _match_recorder(section: dict[str, Any], table: Table) -> Any:
    from foosball.agents.match_recorder import MatchRecorderConfig

    return parse(MatchRecorderConfig, section, "[match_recorder]")


def _update_agent(section: dict[str, Any], table: Table) -> Any:
    from foosball.ota.core import UpdateAgentConfig

    return parse(UpdateAgentConfig, section, "[update_agent]")


def named_file(where: str, name: str, load: Callable[[str], Any]) -> Any:
    try:
        return load(name)
    except OSError as exc:
        raise SettingError(f"{where}: {name}: cannot read: {exc.strerror}") from exc
    except ValueError as exc:  # the loaders name the file themselves
        text = str(exc)
        raise SettingError(f"{where}: {text if text.startswith(name) else f'{name}: {text}'}"
                           ) from exc


def _tracker_files(settings: Any) -> None:
    from foosball.vision.calibration import load_calibration
    from foosball.vision.config import load_thresholds

    named_file("[ball_tracker] calibration", settings.calibration, load_calibration)
    if settings.thresholds_file:  # absent until the game panel first saves its tuning
        named_file("[ball_tracker] thresholds_file", settings.thresholds_file,
                    lambda name: load_thresholds(name, settings.detector))


# --- each agent's build: the real backends, the core, the runtime ---------------------------
def _endpoint(board: Board, agent: Agent) -> Any:
    return open_endpoint(board.wire, agent, key=board.wire_key)  # the key the loader checked


def _built_on(board: Board, agent: Agent,
              build: Callable[[Any], AgentRuntime]) -> AgentRuntime:
    """An agent whose build opens more than its endpoint (a bus, a web server): the
    endpoint is closed again if the build fails."""
    endpoint = _endpoint(board, agent)
    try:
        return build(endpoint)
    except BaseException:
        endpoint.close()
        raise


def build_ball_tracker(board: Board, settings: Any) -> AgentRuntime:
    from foosball.agents.ball_tracker.build import make_tracker

    core, camera = make_tracker(board.table, settings, board.safety.startup_grace_s)
    return AgentRuntime(core,
                        _endpoint(board, Agent.BALL_TRACKER), board.safety,
                        hardware=camera,
                        notifier=SystemdNotifier())


def build_strategy(board: Board, settings: Any) -> AgentRuntime:
    from foosball.agents.strategy import StrategyAgentCore
    from foosball.strategy.registry import strategy_factory

    core = StrategyAgentCore(strategy_factory(settings.strategy)(board.table, 0), board.table)
    return AgentRuntime(core, _endpoint(board, Agent.STRATEGY), board.safety,
                        notifier=SystemdNotifier())


def build_pole_driver(board: Board, config: Any) -> AgentRuntime:
    from foosball.agents.pole_driver import PoleDriverCore

    return AgentRuntime(PoleDriverCore(board.table, config),
                        _endpoint(board, Agent.POLE_DRIVER), board.safety,
                        notifier=SystemdNotifier())


def build_motor_driver(board: Board, settings: Any) -> AgentRuntime:
    from foosball.agents.motor_driver import open_motor_driver
    from foosball.ethercat.bus import open_bus

    return _built_on(board, Agent.MOTOR_DRIVER, lambda endpoint: open_motor_driver(
        open_bus(settings.bus), endpoint, settings.agent, board.safety, realtime=True))


def build_supervisory_panel(board: Board, config: Any) -> AgentRuntime:
    from foosball.panels.supervisory import open_supervisory_panel

    return _built_on(board, Agent.SUPERVISORY_PANEL, lambda endpoint: open_supervisory_panel(
        board.table, endpoint, config, board.safety, wire_key=board.wire_key,
        notifier=SystemdNotifier()))


def build_game_panel(board: Board, settings: Any) -> AgentRuntime:
    from foosball.panels.game_page import open_game_panel

    return _built_on(board, Agent.GAME_PANEL, lambda endpoint: open_game_panel(
        board.table, settings, endpoint, board.wire_key, board.safety,
        notifier=SystemdNotifier()))


def build_match_recorder(board: Board, config: Any) -> AgentRuntime:
    from foosball.agents.match_recorder.build import make_recorder

    core, hardware = make_recorder(board.table, config)
    runtime = AgentRuntime(core,
                           _endpoint(board, Agent.MATCH_RECORDER), board.safety,
                           hardware=hardware, notifier=SystemdNotifier())
    hardware.wake_with(runtime._wake)  # a message is written when it comes
    return runtime


def build_update_agent(board: Board, settings: Any) -> AgentRuntime:
    from foosball.ota.core import UpdateCore
    from foosball.ota.rauc import RaucHardware

    return AgentRuntime(UpdateCore(settings, time.monotonic()),
                        _endpoint(board, Agent.OTA), board.safety,
                        hardware=RaucHardware(settings), notifier=SystemdNotifier())


@dataclass(frozen=True)
class AgentSpec:
    agent: Agent  # who it is on the wire
    board: str  # the board whose image runs it: pole, vision, strategy, or EVERY_BOARD
    section: Callable[[dict[str, Any], Table], Any]  # its board.toml section -> its settings
    build: Callable[[Any, Any], AgentRuntime]  # (the board's config, its settings) -> runtime
    # its section checked without opening the files it names (a tool that makes one of them)
    unopened: Callable[[dict[str, Any], Table], Any] | None = None


# Agent name -> what it is. In the order the rig starts them (the pole board first).
AGENTS: dict[str, AgentSpec] = {
    "motor_driver": AgentSpec(Agent.MOTOR_DRIVER, "pole", _motor_driver, build_motor_driver),
    "pole_driver": AgentSpec(Agent.POLE_DRIVER, "pole", _pole_driver, build_pole_driver),
    "supervisory_panel": AgentSpec(Agent.SUPERVISORY_PANEL, "pole", _supervisory_panel,
                                   build_supervisory_panel),
    "ball_tracker": AgentSpec(Agent.BALL_TRACKER, "vision", _ball_tracker, build_ball_tracker,
                              unopened=_ball_tracker_unopened),
    "strategy": AgentSpec(Agent.STRATEGY, "strategy", _strategy, build_strategy),
    "game_panel": AgentSpec(Agent.GAME_PANEL, "strategy", _game_panel, build_game_panel),
    "match_recorder": AgentSpec(Agent.MATCH_RECORDER, "strategy", _match_recorder,
                                build_match_recorder),
    "update_agent": AgentSpec(Agent.OTA, EVERY_BOARD, _update_agent, build_update_agent),
}


def agents_of(board: str) -> tuple[str, ...]:
    """The agents a board's image runs, the update agent among them."""
    return tuple(name for name, spec in AGENTS.items() if spec.board in (board, EVERY_BOARD))
