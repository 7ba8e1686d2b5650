"""The supervisory panel's page on the pole board: the SPA core behind the shared panel
server (foosball.panels.server).

- `SupervisoryPage` is the agent's hardware: the server's accepted actions become the
  core's `OperatorAction`s (who = the browser's address, when = the server's clock), and the
  core's `SupervisoryView` becomes the page's topics (``axes``, ``link``, ``safety``,
  ``log``), so the server sends a browser only the parts that changed.
- `open_supervisory_panel` wires core, page and wire endpoint into an `AgentRuntime`, as
  `foosball agent run supervisory_panel` does on the board.

The page (static/supervisory/) needs nothing to view; halt and restart, for all or per
drive, need the installation's panel token (`panel_token`, from the wire key).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foosball.agents.supervisory_panel import ACTIONS, OperatorAction, SupervisoryCore
from foosball.geometry import Table
from foosball.runtime import AgentRuntime
from foosball.schema import seconds, setting, validate

if TYPE_CHECKING:
    from foosball.agents.supervisory_panel import SupervisoryView
    from foosball.panels.server import PanelAction, PanelHardware
    from foosball.runtime.settings import SafetySettings

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static" / "supervisory"
DEFAULT_TOKEN_FILE = "/data/foosball/panel.token"


@dataclass(frozen=True)
class SupervisoryPanelConfig:
    """[supervisory_panel] in board.toml."""

    # the kiosk on the pole board's display opens http://localhost:8081/
    port: int = setting(8081, low=0, high=65535)
    host: str = "0.0.0.0"  # and a laptop on the LAN the board's address
    token_file: str = DEFAULT_TOKEN_FILE  # where the operator finds the panel token ("" none)
    stale_after_s: float = seconds(0.5, high=60.0)
    stats_window_s: float = seconds(60.0, high=3600.0)

    def __post_init__(self) -> None:
        validate(self, "[supervisory_panel]")


def operator_action(action: PanelAction) -> OperatorAction:
    """A server's accepted action as the core takes it; odd arguments stay odd, for the core
    to refuse and log (the server checked only the token and the action's name)."""
    args = action.args if isinstance(action.args, Mapping) else {}
    axis = args.get("axis", -1)
    command = args.get("command", "")
    return OperatorAction(name=action.name, who=action.remote,
                          wall_ns=round(action.wall_time * 1e3) * 10**6,  # ms: as shown
                          axis=axis if type(axis) is int else -1,
                          command=command if isinstance(command, str) else "")


def topics(view: SupervisoryView) -> dict[str, Any]:
    """The page's topics: each is sent to a browser only when it changed."""
    data = view.to_json()
    return {
        "axes": {"axes": data["axes"], "stale": data["motors_stale"],
                 "drive_control": data["drive_control"]},
        "link": {"link": data["link"], "stale": data["link_stale"]},
        "safety": {k: data[k] for k in ("faulted", "causes", "fault_text", "restarts")},
        "log": {"alarms": data["alarms"], "actions": data["actions"]},
        "updates": {"lines": list(data["updates"])},
    }


class SupervisoryPage:
    """The page as the agent's hardware (the runtime's Hardware protocol), over the shared
    `PanelHardware`."""

    def __init__(self, panel: PanelHardware) -> None:
        self.panel = panel
        self._shown: object = None

    def sense(self, timeout_s: float) -> tuple[OperatorAction, ...] | None:
        actions = self.panel.sense(timeout_s)
        return tuple(operator_action(a) for a in actions) if actions else None

    def act(self, view: Any) -> None:
        # The core hands back the same view object while nothing changed; None (a failed
        # step) leaves the page showing the last view.
        if view is None or view is self._shown:
            return
        self._shown = view
        self.panel.act(topics(view))

    def close(self) -> None:
        self.panel.close()


def open_page(config: SupervisoryPanelConfig, token: str) -> SupervisoryPage:
    """Start the web server (its own thread) and return it as the agent's hardware."""
    from foosball.panels.server import PanelHardware, PanelServer

    server = PanelServer(STATIC_DIR, token=token, actions=ACTIONS, host=config.host,
                         port=config.port, name="supervisory_panel")
    return SupervisoryPage(PanelHardware(server))


def open_supervisory_panel(table: Table, endpoint: Any, config: SupervisoryPanelConfig,
                           settings: SafetySettings | None, *, wire_key: bytes,
                           notifier: Any = None) -> AgentRuntime:
    """The SPA ready to run: core, page (serving), endpoint. Leaves the panel token in
    `config.token_file` for the operator when that is writable."""
    from foosball.panels.server import installation_token

    token = installation_token(wire_key, config.token_file)
    core = SupervisoryCore(table, stale_after_s=config.stale_after_s,
                           stats_window_s=config.stats_window_s)
    page = open_page(config, token)
    return AgentRuntime(core, endpoint, settings, hardware=page, notifier=notifier)

