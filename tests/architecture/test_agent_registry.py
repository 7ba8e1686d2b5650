"""docs/architecture.md's "Boards and agents" table names the agents of the one registry
(foosball.agent_registry.AGENTS), each on its board."""

from __future__ import annotations

import re
from pathlib import Path

from foosball.agent_registry import AGENTS, EVERY_BOARD, agents_of

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def documented_boards(text: str) -> dict[str, str]:
    """Agent -> board, from the rows `| board | `agent` | ... |` of the section."""
    section = text.split("## Boards and agents", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([a-z ]+) \| `(\w+)` \|", section, re.MULTILINE)
    return {agent: EVERY_BOARD if board == "every board" else board for board, agent in rows}


def test_the_docs_table_is_the_registry() -> None:
    assert documented_boards(ARCHITECTURE.read_text()) == {
        name: spec.board for name, spec in AGENTS.items()}


def test_a_board_runs_its_own_agents_and_the_update_agent() -> None:
    assert agents_of("pole") == ("motor_driver", "pole_driver", "supervisory_panel",
                                 "update_agent")
    assert agents_of("vision") == ("ball_tracker", "update_agent")
