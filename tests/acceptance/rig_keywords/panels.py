"""The panels' pages as a browser on the host reaches them (SeleniumLibrary drives the
browser in the suites; this component only knows where the pages are)."""

from __future__ import annotations

from robot.api.deco import keyword

from rig_keywords.context import SimulatedTable


class PanelKeywords:
    def __init__(self, ctx: SimulatedTable) -> None:
        self.ctx = ctx

    @keyword("the address of the game panel")
    def game_panel(self) -> str:
        """http://127.0.0.1:PORT/#token=... (forwarded into the strategy board)."""
        return self.ctx.panel_url("game_panel")

    @keyword("the address of the supervisory panel")
    def supervisory_panel(self) -> str:
        """http://127.0.0.1:PORT/#token=... (forwarded into the pole board)."""
        return self.ctx.panel_url("supervisory_panel")
