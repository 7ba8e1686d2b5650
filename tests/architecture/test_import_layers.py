"""The import rule (docs/architecture.md, "Package layers"): foosball's parts have no cycle,
each imports only parts in lower layers, and a board-side part never imports a laptop-side
one (the simulator, the offline evaluations, the rig, the reports). Every import counts, at
module level, in a function or under TYPE_CHECKING (tests/architecture/import_graph.py
reads them)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.architecture.import_graph import (
    Import,
    cycles,
    imports,
    part_edges,
    parts,
)

REPO = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO / "docs" / "architecture.md"


def declared_layers(text: str) -> dict[str, int]:
    """Part -> layer, from the rows `| n | `part`, `part` | ... |` of the section."""
    section = text.split("## Package layers", 1)[1].split("\n## ", 1)[0]
    layers: dict[str, int] = {}
    for number, names in re.findall(r"^\| (\d+) \| ([^|]*) \|", section, re.M):
        for name in re.findall(r"`([\w.]+)`", names):
            assert name not in layers, f"docs/architecture.md places {name} twice"
            layers[name] = int(number)
    return layers


SIDES = ("board", "laptop", "both")


def declared_sides(text: str) -> dict[str, str]:
    """Part -> side (board, laptop, both), from the same rows' third column."""
    section = text.split("## Package layers", 1)[1].split("\n## ", 1)[0]
    sides: dict[str, str] = {}
    for names, side in re.findall(r"^\| \d+ \| ([^|]*) \| ([^|]*) \|", section, re.M):
        assert side.strip() in SIDES, f"docs/architecture.md: side {side.strip()!r} of {names}"
        for name in re.findall(r"`([\w.]+)`", names):
            sides[name] = side.strip()
    return sides


def laptop_imports(edges: dict[tuple[str, str], list[Import]],
                   sides: dict[str, str]) -> list[str]:
    """Each import by a board part of a part that is not board-side, with where it is."""
    return [f"{imp}: {source} (board) may not import {target} ({sides[target]})"
            for (source, target), made_by in sorted(edges.items())
            if sides[source] == "board" and sides[target] != "board" for imp in made_by]


def layer_breaches(edges: dict[tuple[str, str], list[Import]],
                   layers: dict[str, int]) -> list[str]:
    """Each import of a part in the importer's own layer or above, with where it is."""
    found = []
    for (source, target), made_by in sorted(edges.items()):
        if layers[target] >= layers[source]:
            rule = f"{source} (layer {layers[source]}) may not import {target} " \
                   f"(layer {layers[target]})"
            found += [f"{imp}: {rule}" for imp in made_by]
    return found


def cycle_report(edges: dict[tuple[str, str], list[Import]], shown: int = 3) -> list[str]:
    """Each cycle's parts, then each edge between them with its first imports."""
    lines = []
    for component in cycles(edges):
        lines.append("cycle: " + " ".join(component))
        for (a, b), made_by in sorted(edges.items()):
            if a in component and b in component:
                lines.append(f"  {a} -> {b} ({len(made_by)} imports)")
                lines += [f"    {imp}" for imp in made_by[:shown]]
                if len(made_by) > shown:
                    lines.append(f"    ... and {len(made_by) - shown} more")
    return lines


@pytest.fixture(scope="module")
def edges() -> dict[tuple[str, str], list[Import]]:
    return part_edges(imports())


@pytest.fixture(scope="module")
def layers() -> dict[str, int]:
    return declared_layers(ARCHITECTURE.read_text())


def test_every_part_has_a_layer(layers: dict[str, int]) -> None:
    assert parts() - set(layers) == set(), "place it in docs/architecture.md's Package layers"
    assert set(layers) - parts() == set(), "docs/architecture.md names a part that is gone"


def test_no_package_cycle(edges: dict[tuple[str, str], list[Import]]) -> None:
    report = cycle_report(edges)
    assert not report, "\n".join(report)


def test_every_import_goes_down_the_layers(edges: dict[tuple[str, str], list[Import]],
                                           layers: dict[str, int]) -> None:
    breaches = layer_breaches(edges, layers)
    assert not breaches, "\n".join(breaches)


@pytest.fixture(scope="module")
def sides() -> dict[str, str]:
    return declared_sides(ARCHITECTURE.read_text())


def test_no_board_part_imports_the_laptop_side(edges: dict[tuple[str, str], list[Import]],
                                               sides: dict[str, str]) -> None:
    assert set(sides) == parts(), "give every part its side in docs/architecture.md"
    assert {"sim", "lab", "rig", "analysis", "learning"} <= {
        part for part, side in sides.items() if side == "laptop"}
    found = laptop_imports(edges, sides)
    assert not found, "\n".join(found)


# --- the checks themselves, on a made-up package ---------------------------------------------
def write(root: Path, files: dict[str, str]) -> Path:
    package = root / "foosball"
    for name, text in {"__init__.py": "", **files}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    return package


def test_a_function_level_or_type_checking_import_closes_a_cycle(tmp_path: Path) -> None:
    package = write(tmp_path, {
        "low/__init__.py": "",
        "low/a.py": "def f():\n    from foosball.high.b import g\n",
        "high/__init__.py": "",
        "high/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from ..low import a\n",
        "other.py": "from foosball import __version__\n",
    })
    edges = part_edges(imports(package), parts(package))
    assert set(edges) == {("low", "high"), ("high", "low")}
    assert [imp.where for imp in edges["high", "low"]] == ["TYPE_CHECKING"]
    report = cycle_report(edges)
    assert report[0] == "cycle: high low"
    assert any("foosball/low/a.py:2 foosball.low.a imports foosball.high.b.g (function)" in line
               for line in report)


def test_an_import_up_or_across_the_layers_is_named_with_its_line(tmp_path: Path) -> None:
    package = write(tmp_path, {
        "base.py": "import foosball.top\n",
        "top.py": "from foosball import side\n",
        "side.py": "",
    })
    layers = declared_layers("## Package layers\n\n| 0 | `base` |\n| 1 | `top`, `side` |\n")
    breaches = layer_breaches(part_edges(imports(package), parts(package)), layers)
    assert len(breaches) == 2
    assert breaches[0].endswith(
        "foosball/base.py:1 foosball.base imports foosball.top: base (layer 0) may not import "
        "top (layer 1)")
    assert "top (layer 1) may not import side (layer 1)" in breaches[1]


def test_a_board_part_importing_the_simulator_is_named(tmp_path: Path) -> None:
    package = write(tmp_path, {
        "agents.py": "def build():\n    from foosball.sim import physics\n",
        "sim/__init__.py": "",
        "sim/physics.py": "",
        "vision_cli.py": "def bench():\n    import foosball.sim\n",
    })
    sides = declared_sides("## Package layers\n\n| 0 | `agents` | board | x |\n"
                           "| 1 | `sim` | laptop | x |\n| 2 | `vision_cli` | both | x |\n")
    found = laptop_imports(part_edges(imports(package), parts(package)), sides)
    assert len(found) == 1
    assert found[0].endswith("foosball/agents.py:2 foosball.agents imports foosball.sim.physics "
                             "(function): agents (board) may not import sim (laptop)")
