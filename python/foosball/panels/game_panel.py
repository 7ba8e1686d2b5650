"""The game panel's page and its service: the [game_panel] section, the web server, the agent.

    [game_panel]
    port = 8080                                # the page: http://<strategy board>:8080/
    host = "0.0.0.0"                           # reachable from a laptop on the LAN
    token_file = "/data/foosball/panel.token"  # where the panel token is left for people

The page (static/game/: index.html, game.js, game.css; no build step, nothing from outside)
draws the field to scale from the geometry file, the ball with its trail and predicted path,
every rod, score and clock, the start/pause/stop and restart controls, the camera
calibration's status with its warnings, the vision tuning with the tracker's mask preview,
and the operator log. Its data comes from the core's topics
(foosball.agents.game_panel) over one WebSocket (foosball.panels.server).

The kiosk browser on the board's display may open ``http://localhost:8080/#token=...``: the
page keeps a token given in the address (or typed into its token field) in the browser's
local storage and sends it with each action.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foosball.agents.game_panel import ACTIONS, GamePanelConfig, GamePanelCore
from foosball.agents.runtime import AgentRuntime
from foosball.geometry import Table
from foosball.panels.server import (
    TOKEN_FILE,
    PanelHardware,
    PanelServer,
    installation_token,
)
from foosball.safety.settings import SafetySettings

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static" / "game"


@dataclass(frozen=True)
class GamePanelSettings:
    port: int = 8080
    host: str = "0.0.0.0"
    token_file: str = TOKEN_FILE  # "" leaves no file
    core: GamePanelConfig = dataclasses.field(default_factory=GamePanelConfig)

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> GamePanelSettings:
        values = dict(section)
        core_keys = {f.name for f in dataclasses.fields(GamePanelConfig)}
        known = {"port", "host", "token_file"} | core_keys
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"[game_panel]: unknown keys {sorted(unknown)}; "
                             f"known: {sorted(known)}")
        port = values.get("port", 8080)
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"[game_panel] port: an integer 0..65535, not {port!r}")
        for key in ("host", "token_file"):
            if key in values and not isinstance(values[key], str):
                raise ValueError(f"[game_panel] {key}: a string, not {values[key]!r}")
        core = {k: values.pop(k) for k in list(values) if k in core_keys}
        for key, value in core.items():
            default = getattr(GamePanelConfig(), key)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"[game_panel] {key}: a positive number, not {value!r}")
            core[key] = type(default)(value)
        return cls(core=GamePanelConfig(**core), **values)


def open_game_panel(table: Table, settings: GamePanelSettings, endpoint: Any,
                    wire_key: bytes, safety: SafetySettings | None = None,
                    **runtime_options: Any) -> AgentRuntime:
    """The game panel agent: its core, its page on a web server, in the shared runtime."""
    token = installation_token(wire_key, settings.token_file)
    server = PanelServer(STATIC, token=token, actions=ACTIONS, host=settings.host,
                         port=settings.port, name="game_panel")
    hardware = PanelHardware(server)
    try:
        core = GamePanelCore(table, settings.core)
        runtime = AgentRuntime(core, endpoint, safety, hardware=hardware, **runtime_options)
    except BaseException:
        hardware.close()
        raise
    # A ball state is drawn when it arrives, not when the page's wait for actions ends.
    hardware.wake_with(runtime._wake)
    return runtime
