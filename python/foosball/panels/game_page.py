"""The game panel's page and its service: the [game_panel] section, the web server, the agent.

    [game_panel]
    port = 8080                                # the page: http://<strategy board>:8080/
    host = "0.0.0.0"                           # reachable from a laptop on the LAN
    token_file = "/data/foosball/panel.token"  # where the panel token is left for people

The page (static/game/: index.html, game.js, game.css; no build step, nothing from outside)
draws the field to scale from the geometry file, the ball with its trail and predicted path,
every rod, score and clock, the start/pause/stop and restart controls, the camera
calibration's status with its warnings, the guided camera calibration (the Camera tab:
the ball tracker on the vision board looks and calibrates, foosball.agents.game_panel.
calibration), the vision tuning with the tracker's mask preview,
and the operator log. Its data comes from the core's topics
(foosball.agents.game_panel) over one WebSocket (foosball.panels.server).

The kiosk browser on the board's display may open ``http://localhost:8080/#token=...``: the
page keeps a token given in the address (or typed into its token field) in the browser's
local storage and sends it with each action.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foosball.agents.game_panel import ACTIONS, GamePanelConfig, GamePanelCore
from foosball.geometry import Table
from foosball.panels.server import (
    TOKEN_FILE,
    PanelHardware,
    PanelServer,
    installation_token,
)
from foosball.runtime import AgentRuntime
from foosball.runtime.settings import SafetySettings
from foosball.schema import parse_split, setting

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static" / "game"


@dataclass(frozen=True)
class GamePanelSettings:
    port: int = setting(8080, low=0, high=65535)
    host: str = "0.0.0.0"
    token_file: str = TOKEN_FILE  # "" leaves no file
    # the core's keys sit in [game_panel] itself, beside the server's
    core: GamePanelConfig = setting(default_factory=GamePanelConfig, in_file=False)

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> GamePanelSettings:
        server, core = parse_split(section, "[game_panel]", cls, GamePanelConfig)
        return cls(core=GamePanelConfig(**core), **server)


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
