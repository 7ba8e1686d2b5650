"""A board's one configuration file (`/etc/foosball/board.toml`).

    [wire]            how this board reaches the agent LAN (foosball.wire.settings)
    [table]           geometry = path of the table geometry JSON
    [safety]          heartbeats, deadlines, budgets (foosball.safety.settings)
    [<agent name>]    one section per agent the board runs, with that agent's parameters

Nothing else is read: no environment variables, no search path.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foosball.geometry import Table, default_table, load_table
from foosball.safety.settings import SafetySettings
from foosball.wire.settings import WireSettings

RESERVED = ("wire", "table", "safety")


class BoardConfigError(ValueError):
    """The board configuration is wrong; the message names the file and the key."""


@dataclass(frozen=True)
class BoardConfig:
    path: Path
    wire: WireSettings
    table: Table
    agents: dict[str, dict[str, Any]]
    safety: SafetySettings = field(default_factory=SafetySettings)

    def section(self, agent: str) -> dict[str, Any]:
        if agent not in self.agents:
            raise BoardConfigError(
                f"{self.path}: no [{agent}] section; this board runs {sorted(self.agents)}"
            )
        return self.agents[agent]


def load_board_config(path: str | Path) -> BoardConfig:
    path = Path(path)
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise BoardConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise BoardConfigError(f"{path}: not TOML: {exc}") from exc
    try:
        wire = WireSettings.from_section(dict(data.get("wire", {})))
        safety = SafetySettings.from_section(dict(data.get("safety", {})))
    except (TypeError, ValueError) as exc:
        raise BoardConfigError(f"{path}: {exc}") from exc
    table_section = data.get("table", {})
    geometry = table_section.get("geometry") if isinstance(table_section, dict) else None
    table = load_table(geometry) if geometry else default_table()
    agents = {name: value for name, value in data.items() if name not in RESERVED}
    for name, value in agents.items():
        if not isinstance(value, dict):
            raise BoardConfigError(f"{path}: [{name}] must be a table of agent parameters")
    return BoardConfig(path, wire, table, agents, safety)
