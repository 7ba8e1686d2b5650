"""The game panel as a service: its [game_panel] section, the token it leaves, its page."""

from __future__ import annotations

import urllib.request

import pytest

pytest.importorskip("aiohttp", reason="needs the panels extra (aiohttp)")

from foosball.agent_registry import AGENTS
from foosball.agents.game_panel import GamePanelConfig
from foosball.geometry import default_table
from foosball.panels.game_page import GamePanelSettings, open_game_panel
from foosball.panels.server import panel_token
from foosball.wire.catalogue import Agent
from foosball.wire.codec import WireCodec
from foosball.wire.endpoint import Endpoint
from foosball.wire.transports.memory import MemoryHub, MemoryTransport

KEY = bytes(range(7, 39))


def test_the_section_takes_port_host_token_file_and_core_parameters():
    assert GamePanelSettings.from_section({"port": 8080}) == GamePanelSettings()
    settings = GamePanelSettings.from_section({"port": 9000, "host": "127.0.0.1",
                                               "token_file": "", "trail_s": 1})
    assert (settings.port, settings.host, settings.token_file) == (9000, "127.0.0.1", "")
    assert settings.core == GamePanelConfig(trail_s=1.0)
    for bad, complaint in (({"prot": 1}, "unknown key prot"), ({"port": 70000}, "port"),
                           ({"port": True}, "port"), ({"host": 1}, "host"),
                           ({"trail_s": -1}, "trail_s")):
        with pytest.raises(ValueError, match=complaint):
            GamePanelSettings.from_section(bad)
    assert "game_panel" in AGENTS


def test_the_service_serves_its_page_and_leaves_the_token(tmp_path):
    token_file = tmp_path / "data" / "panel.token"
    endpoint = Endpoint(MemoryTransport(MemoryHub()), WireCodec(KEY, Agent.GAME_PANEL))
    runtime = open_game_panel(default_table(),
                              GamePanelSettings(port=0, host="127.0.0.1",
                                                token_file=str(token_file)),
                              endpoint, KEY, health=None)
    try:
        base = f"http://127.0.0.1:{runtime.hardware.server.port}"
        with urllib.request.urlopen(base + "/", timeout=10) as page:
            html = page.read().decode()
        assert "static/game.js" in html and "https://" not in html  # nothing from outside
        for name in ("game.js", "game.css"):
            with urllib.request.urlopen(f"{base}/static/{name}", timeout=10) as response:
                assert response.status == 200
        assert token_file.read_text().strip() == panel_token(KEY)
        assert runtime.agent == Agent.GAME_PANEL
    finally:
        runtime.hardware.close()
        endpoint.close()
