"""The import graph between foosball's parts, read from the source (ast), and its cycles.

A *part* is a subpackage (`foosball.agents`, `foosball.wire`, ...) or a top-level module
(`foosball.config`, `foosball.geometry`, ...). Every `import foosball...` and
`from foosball... import ...` (relative ones too) counts wherever it is written: at module
level, inside a function or class, under `if TYPE_CHECKING:`, inside `try: ... except
ImportError`. A function-level import is a dependency all the same (it runs when the
function does), and a TYPE_CHECKING one ties the two parts' types together; leaving either
out is how a cycle hides.

    python -m tests.architecture.import_graph            edges, then the cycles
    python -m tests.architecture.import_graph --cycles   only the two-way pairs and cycles
"""

from __future__ import annotations

import argparse
import ast
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.images.module_imports import from_module

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "python" / "foosball"


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    imported: str  # dotted name as written (a module, or a module's attribute)
    path: Path
    line: int
    where: str  # "module", "function", "TYPE_CHECKING"

    @property
    def location(self) -> str:
        repo = PACKAGE_DIR.parents[1]
        path = self.path.relative_to(repo) if self.path.is_relative_to(repo) else self.path
        return f"{path}:{self.line}"

    def __str__(self) -> str:
        where = "" if self.where == "module" else f" ({self.where})"
        return f"{self.location} {self.importer} imports {self.imported}{where}"


def part_of(module: str) -> str:
    """foosball.agents.strategy -> agents; foosball.config -> config; foosball -> foosball."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def modules(package_dir: Path = PACKAGE_DIR) -> Iterator[tuple[str, Path]]:
    for path in sorted(package_dir.rglob("*.py")):
        relative = path.relative_to(package_dir.parent).with_suffix("")
        names = list(relative.parts)
        if names[-1] == "__init__":
            names.pop()
        yield ".".join(names), path


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, path: Path) -> None:
        self.module, self.path = module, path
        self.package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        self.found: list[Import] = []
        self.depth = 0  # inside a function
        self.typing = 0  # inside `if TYPE_CHECKING:`

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        typing = _type_checking(node.test)
        self.typing += typing
        for statement in node.body:
            self.visit(statement)
        self.typing -= typing
        for statement in node.orelse:
            self.visit(statement)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = from_module(self.package, node)
        for alias in node.names:
            self._add(f"{module}.{alias.name}", node.lineno)

    def _add(self, imported: str, line: int) -> None:
        if imported.split(".")[0] != "foosball":
            return
        where = "TYPE_CHECKING" if self.typing else "function" if self.depth else "module"
        self.found.append(Import(self.module, imported, self.path, line, where))


def imports(package_dir: Path = PACKAGE_DIR) -> list[Import]:
    """Every foosball import in every module under package_dir."""
    found: list[Import] = []
    for module, path in modules(package_dir):
        collector = _Collector(module, path)
        collector.visit(ast.parse(path.read_text(), str(path)))
        found += collector.found
    return found


def parts(package_dir: Path = PACKAGE_DIR) -> set[str]:
    """Every part under package_dir (not the bare `foosball` package itself)."""
    return {part_of(module) for module, _ in modules(package_dir)} - {"foosball"}


def part_edges(found: Iterable[Import], known: set[str] | None = None
               ) -> dict[tuple[str, str], list[Import]]:
    """(importing part, imported part) -> the imports that make the edge; none within a part,
    none of the bare `foosball` package (`from foosball import __version__`)."""
    known = parts() if known is None else known
    edges: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for imp in found:
        source, target = part_of(imp.importer), part_of(imp.imported)
        if source != target and target in known and source in known:
            edges[source, target].append(imp)
    return dict(edges)


def two_way(edges: dict[tuple[str, str], list[Import]]) -> list[tuple[str, str]]:
    """Pairs of parts that import each other (the issue's 'two-way package dependencies')."""
    return sorted((a, b) for a, b in edges if a < b and (b, a) in edges)


def cycles(edges: dict[tuple[str, str], list[Import]]) -> list[list[str]]:
    """The strongly connected components of more than one part (Tarjan), each sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(graph) | {b for _, b in edges}):
        if node not in index:
            visit(node)
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", action="store_true", help="only two-way pairs and cycles")
    args = parser.parse_args(argv)
    edges = part_edges(imports())
    if not args.cycles:
        for (a, b), found in sorted(edges.items()):
            kinds = sorted({imp.where for imp in found})
            print(f"{a} -> {b}  ({len(found)} imports: {', '.join(kinds)})")
        print()
    pairs = two_way(edges)
    print(f"two-way pairs: {len(pairs)}")
    for a, b in pairs:
        print(f"  {a} <-> {b}")
        for imp in edges[a, b] + edges[b, a]:
            print(f"      {imp}")
    components = cycles(edges)
    print(f"cyclic components: {len(components)}")
    for component in components:
        print("  " + " ".join(component))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
