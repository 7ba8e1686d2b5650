"""A board's one configuration file (`/etc/foosball/board.toml`), loaded and checked whole.

    [wire]            how this board reaches the agent LAN (foosball.wire.settings)
    [table]           geometry = path of the table geometry JSON ("" or absent: the packaged one)
    [safety]          heartbeats, deadlines, budgets (foosball.runtime.settings)
    [<agent name>]    one section per agent the board runs, with that agent's parameters

Nothing else is read: no environment variables, no search path. `load_board_config` is the
one loader `foosball agent check` and `foosball agent run` share, so check passes exactly
what run accepts: every key's type, range and unit (foosball.schema, from the settings
classes themselves), no unknown section or key, and the files the board names opened and
checked (the geometry, the wire key, which no one but its owner may read, the camera
calibration and the saved thresholds). Every error names the file, the section and the key.
"""

from __future__ import annotations

import dataclasses
import stat
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foosball.geometry import Table, default_table, load_table
from foosball.runtime.settings import SafetySettings
from foosball.schema import SettingError, parse, parse_split, setting
from foosball.wire.settings import WireSettings

RESERVED = ("wire", "table", "safety")


class BoardConfigError(ValueError):
    """The board configuration is wrong; the message names the file and the key."""


@dataclass(frozen=True)
class TableSection:
    geometry: str = ""  # path of the table geometry JSON; "": the packaged table


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

    return parse_settings(section)


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


# Agent name (as in board.toml and the systemd unit) -> its section's parser.
AGENT_SECTIONS: dict[str, Callable[[dict[str, Any], Table], Any]] = {
    "ball_tracker": _ball_tracker,
    "strategy": _strategy,
    "pole_driver": _pole_driver,
    "motor_driver": _motor_driver,
    "supervisory_panel": _supervisory_panel,
    "game_panel": _game_panel,
    "match_recorder": _match_recorder,
    "update_agent": _update_agent,
}


@dataclass(frozen=True)
class BoardConfig:
    path: Path
    wire: WireSettings
    table: Table
    agents: dict[str, Any]  # agent name -> its checked settings
    safety: SafetySettings = field(default_factory=SafetySettings)
    wire_key: bytes = b""

    def settings(self, agent: str) -> Any:
        if agent not in self.agents:
            raise BoardConfigError(
                f"{self.path}: no [{agent}] section; this board runs {sorted(self.agents)}")
        return self.agents[agent]


def load_board_config(path: str | Path, only: str | None = None) -> BoardConfig:
    """The board's whole configuration, every section checked; with `only`, the other
    agents' sections are named but not read (the update agent: it must come up to judge a
    new image whatever else that image's configuration gets wrong)."""
    path = Path(path)
    data = _read(path)
    try:
        return _board(path, data, only)
    except (SettingError, ValueError) as exc:  # each names its section and key
        raise BoardConfigError(f"{path}: {exc}") from exc


def load_agent_settings(path: str | Path, name: str) -> Any:
    """One agent's section of a board file, checked as `load_board_config` checks it, but
    without opening the files it names: for a person's tool that makes one of them (`vision
    calibrate` writes the calibration the section names)."""
    path = Path(path)
    data = _read(path)
    if name not in data:
        raise BoardConfigError(f"{path}: no [{name}] section")
    try:
        parse_section = _ball_tracker_unopened if name == "ball_tracker" else AGENT_SECTIONS[name]
        return parse_section(data[name], default_table())
    except SettingError as exc:
        raise BoardConfigError(f"{path}: {exc}") from exc
    except ValueError as exc:  # a parser of its own (vision): say where it was
        raise BoardConfigError(f"{path}: [{name}] {exc}") from exc


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except OSError as exc:
        raise BoardConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise BoardConfigError(f"{path}: not TOML: {exc}") from exc


def _board(path: Path, data: dict[str, Any], only: str | None = None) -> BoardConfig:
    unknown = sorted(set(data) - set(RESERVED) - set(AGENT_SECTIONS))
    if unknown:
        raise SettingError(f"unknown section{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(f'[{n}]' for n in unknown)}; known: "
                           f"{', '.join(f'[{n}]' for n in (*RESERVED, *AGENT_SECTIONS))}")
    wire = WireSettings.from_section(data.get("wire", {}))
    safety = SafetySettings.from_section(data.get("safety", {}))
    geometry = parse(TableSection, data.get("table", {}), "[table]").geometry
    table = _named_file("[table] geometry", geometry, load_table) if geometry else \
        default_table()
    agents = {}
    for name in (n for n in data if n in AGENT_SECTIONS and only in (None, n)):
        try:
            agents[name] = AGENT_SECTIONS[name](data[name], table)
        except SettingError:
            raise
        except ValueError as exc:  # a parser of its own (vision): say where it was
            raise SettingError(f"[{name}] {exc}") from exc
    update = agents.get("update_agent")
    if update is not None and not update.watch:
        # By default the boot is judged by every other agent this board runs.
        agents["update_agent"] = dataclasses.replace(update, watch=tuple(
            name for name in data if name in AGENT_SECTIONS and name != "update_agent"))
    key = _wire_key(wire.key_file)
    return BoardConfig(path, wire, table, agents, safety, key)


def _named_file(where: str, name: str, load: Callable[[str], Any]) -> Any:
    try:
        return load(name)
    except OSError as exc:
        raise SettingError(f"{where}: {name}: cannot read: {exc.strerror}") from exc
    except ValueError as exc:  # the loaders name the file themselves
        text = str(exc)
        raise SettingError(f"{where}: {text if text.startswith(name) else f'{name}: {text}'}"
                           ) from exc


def _wire_key(name: str) -> bytes:
    """The installation key: readable, valid, and readable by its owner only (anyone else
    who reads it can forge every message on the LAN)."""
    from foosball.wire.codec import load_key

    where = "[wire] key_file"
    try:
        mode = Path(name).stat().st_mode
    except OSError as exc:
        raise SettingError(f"{where}: {name}: cannot read: {exc.strerror}") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SettingError(f"{where}: {name}: readable by others (mode "
                           f"{stat.S_IMODE(mode):04o}); `chmod 600 {name}`")
    return _named_file(where, name, load_key)  # type: ignore[no-any-return]


def _tracker_files(settings: Any) -> None:
    from foosball.vision.calibration import load_calibration
    from foosball.vision.config import load_thresholds

    _named_file("[ball_tracker] calibration", settings.calibration, load_calibration)
    if settings.thresholds_file:  # absent until the game panel first saves its tuning
        _named_file("[ball_tracker] thresholds_file", settings.thresholds_file,
                    lambda name: load_thresholds(name, settings.detector))
