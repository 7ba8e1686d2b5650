"""No module of foosball over LIMIT lines without a reason stated at its top (a comment
starting "# Over 500 lines"): a reader should get through a file in one sitting, or be told
why it is one file. Every module is held to it (sim/, vision/ and strategy/improved.py too,
since the sixth session of issue 33)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "foosball"
LIMIT = 500
REASON = "# Over 500 lines"


def unexplained_long_files(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        text = path.read_text()
        lines = text.count("\n")
        if lines > LIMIT and not text.startswith(REASON):
            found.append(f"python/foosball/{relative}: {lines} lines")
    return found


def test_every_long_module_says_why_it_is_long() -> None:
    assert unexplained_long_files() == [], "split it, or say why at its top: " + REASON


def test_a_long_module_without_its_reason_is_named(tmp_path: Path) -> None:
    (tmp_path / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    (tmp_path / "said.py").write_text(REASON + ": one table\n" + "x = 1\n" * LIMIT)
    (tmp_path / "short.py").write_text("x = 1\n" * LIMIT)
    assert unexplained_long_files(tmp_path) == [f"python/foosball/long.py: {LIMIT + 1} lines"]
