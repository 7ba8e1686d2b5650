"""Which foosball modules a board's modules import, read from their source (ast).

Every `import foosball...` and `from foosball... import ...` counts, at module level and
inside functions, with two exceptions that the code states where they are:

- an import inside `try: ... except ModuleNotFoundError` (or ImportError) is optional: the
  code says what it does when the module is absent (a laptop-only command that tells a
  board user so);
- the agent registry (`AGENTS` in foosball.agent_registry) maps an agent to the functions
  that parse its section and build it: an import inside such a function, or inside a
  module function only it calls, counts only for the boards that run that agent.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DISPATCH_TABLES = {"foosball.agent_registry": "AGENTS"}
OPTIONAL = {"ModuleNotFoundError", "ImportError"}


def from_module(package: str, node: ast.ImportFrom) -> str:
    """The absolute name of the module a `from ... import` in `package` reads from."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    imported: str  # dotted module name (the module itself, not a name inside it)
    line: int
    agent: str | None  # the agent whose dispatch function makes it; None: every board

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} imports {self.imported}"


def module_path(package_dir: Path, module: str) -> Path | None:
    """The source of dotted `module` under package_dir (python/foosball): its .py, the
    .pyi of a compiled extension, or a package's __init__.py; None for a namespace folder
    or nothing."""
    parts = module.split(".")[1:]
    base = package_dir.joinpath(*parts)
    candidates = [base.with_suffix(".py"), base.with_suffix(".pyi")] if parts else []
    return next((c for c in [*candidates, base / "__init__.py"] if c.is_file()), None)


def _resolve(package_dir: Path, module: str, names: Iterable[str]) -> list[str]:
    """`from module import a, b`: a submodule where one exists, else the module itself."""
    found = [f"{module}.{n}" for n in names if module_path(package_dir, f"{module}.{n}")]
    return found if found and len(found) == len(list(names)) else [module, *found]


def _is_optional(handler_types: list[ast.expr]) -> bool:
    names = set()
    for node in handler_types:
        for elt in node.elts if isinstance(node, ast.Tuple) else [node]:
            if isinstance(elt, ast.Name):
                names.add(elt.id)
    return bool(names & OPTIONAL)


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, package_dir: Path, is_package: bool) -> None:
        self.module = module
        self.package_dir = package_dir
        self.package = module if is_package else module.rpartition(".")[0]
        self.found: list[tuple[str, int, str | None]] = []  # imported, line, top function
        self.function: str | None = None  # the top-level function or class being read
        self.optional = 0

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._enter(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._enter(node)

    def _enter(self, node: ast.AST) -> None:
        outer = self.function
        if outer is None:
            self.function = getattr(node, "name", None)
        self.generic_visit(node)
        self.function = outer

    def visit_Try(self, node: ast.Try) -> None:
        optional = any(h.type is not None and _is_optional([h.type]) for h in node.handlers)
        self.optional += optional
        for statement in node.body:
            self.visit(statement)
        self.optional -= optional
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] == "foosball":
                self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = from_module(self.package, node)
        if module.split(".")[0] == "foosball":
            for imported in _resolve(self.package_dir, module, [a.name for a in node.names]):
                self._add(imported, node.lineno)

    def _add(self, imported: str, line: int) -> None:
        if not self.optional:
            self.found.append((imported, line, self.function))


def _dispatch(tree: ast.Module, table: str) -> dict[str, str]:
    """Function name -> agent, from `TABLE: ... = {"agent": Spec(..., function, ...), ...}`:
    every function named in an entry's call (or the entry itself, a bare function)."""
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == table and isinstance(
                node.value, ast.Dict):  # type: ignore[union-attr]
            return {name.id: key.value  # type: ignore[union-attr]
                    for key, value in zip(node.value.keys, node.value.values, strict=True)  # type: ignore[union-attr]
                    for name in ast.walk(value) if isinstance(name, ast.Name)
                    and not (isinstance(value, ast.Call) and name is value.func)}
    raise LookupError(f"no dispatch table {table} found")


def _owners(tree: ast.Module, dispatch: dict[str, str]) -> dict[str, str]:
    """Top-level function or class -> agent: the table's functions, and what only they
    refer to (a settings class only its section parser names, and that class's checks)."""
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    referrers: dict[str, set[str | None]] = {name: set() for name in functions}
    for node in tree.body:
        where = node.name if isinstance(node, ast.FunctionDef | ast.ClassDef) else None
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id in functions and inner.id != where:
                referrers[inner.id].add(where)
    owners = dict(dispatch)
    changed = True
    while changed:
        changed = False
        for name, refs in referrers.items():
            agents = {owners.get(r) if r is not None else None for r in refs}
            if name not in owners and refs and len(agents) == 1 and None not in agents:
                owners[name] = agents.pop()  # type: ignore[assignment]
                changed = True
    return owners


def imports_of(module: str, path: Path, package_dir: Path) -> list[Import]:
    tree = ast.parse(path.read_text(), str(path))
    collector = _Collector(module, package_dir, path.name == "__init__.py")
    collector.visit(tree)
    owners = _owners(tree, _dispatch(tree, DISPATCH_TABLES[module])) \
        if module in DISPATCH_TABLES else {}
    return [Import(module, imported, line, owners.get(function) if function else None)
            for imported, line, function in collector.found]


def missing_imports(modules: frozenset[str], agents: set[str],
                    package_dir: Path) -> list[Import]:
    """The imports by the board's `modules` of foosball modules it does not ship, counting
    per-agent dispatch only for the board's `agents`."""
    missing = []
    for module in sorted(modules):
        path = module_path(package_dir, module)
        assert path is not None, f"{module}: no source under {package_dir}"
        for found in imports_of(module, path, package_dir):
            if found.agent is not None and found.agent not in agents:
                continue
            # importing a.b.c runs a/__init__ and a/b/__init__ too, where they exist
            parts = found.imported.split(".")
            needed = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
            if any(name not in modules and module_path(package_dir, name) for name in needed) \
                    or module_path(package_dir, found.imported) is None:
                missing.append(found)
    return missing
