"""A board's one configuration file (`/etc/foosball/board.toml`), loaded and checked whole.

    [wire]            how this board reaches the agent LAN (foosball.wire.settings)
    [table]           geometry = path of the table geometry JSON ("" or absent: the packaged one)
    [safety]          heartbeats, deadlines, budgets (foosball.runtime.settings)
    [<agent name>]    one section per agent the board runs, with that agent's parameters
                      (foosball.agent_registry: every agent, its section's checks)

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foosball.agent_registry import AGENTS, named_file
from foosball.files import load_file
from foosball.geometry import Table, default_table, load_table
from foosball.runtime.settings import SafetySettings
from foosball.schema import SettingError, parse
from foosball.wire.settings import WireSettings

RESERVED = ("wire", "table", "safety")


class BoardConfigError(ValueError):
    """The board configuration is wrong; the message names the file and the key."""


@dataclass(frozen=True)
class TableSection:
    geometry: str = ""  # path of the table geometry JSON; "": the packaged table


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
        spec = AGENTS[name]
        parse_section = spec.unopened or spec.section
        return parse_section(data[name], default_table())
    except SettingError as exc:
        raise BoardConfigError(f"{path}: {exc}") from exc
    except ValueError as exc:  # a parser of its own (vision): say where it was
        raise BoardConfigError(f"{path}: [{name}] {exc}") from exc


def _read(path: Path) -> dict[str, Any]:
    return load_file(path, dict, BoardConfigError, kind="TOML")


def _board(path: Path, data: dict[str, Any], only: str | None = None) -> BoardConfig:
    unknown = sorted(set(data) - set(RESERVED) - set(AGENTS))
    if unknown:
        raise SettingError(f"unknown section{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(f'[{n}]' for n in unknown)}; known: "
                           f"{', '.join(f'[{n}]' for n in (*RESERVED, *AGENTS))}")
    wire = WireSettings.from_section(data.get("wire", {}))
    safety = SafetySettings.from_section(data.get("safety", {}))
    geometry = parse(TableSection, data.get("table", {}), "[table]").geometry
    table = named_file("[table] geometry", geometry, load_table) if geometry else \
        default_table()
    agents = {}
    for name in (n for n in data if n in AGENTS and only in (None, n)):
        try:
            agents[name] = AGENTS[name].section(data[name], table)
        except SettingError:
            raise
        except ValueError as exc:  # a parser of its own (vision): say where it was
            raise SettingError(f"[{name}] {exc}") from exc
    update = agents.get("update_agent")
    if update is not None and not update.watch:
        # By default the boot is judged by every other agent this board runs.
        agents["update_agent"] = dataclasses.replace(update, watch=tuple(
            name for name in data if name in AGENTS and name != "update_agent"))
    key = _wire_key(wire.key_file)
    return BoardConfig(path, wire, table, agents, safety, key)


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
    return named_file(where, name, load_key)  # type: ignore[no-any-return]


