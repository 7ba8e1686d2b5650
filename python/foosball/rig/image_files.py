"""Which files each board's image installs under site-packages/foosball, from the one table
(image-config/python-modules.toml) the python3-foosball recipe reads too.

Laptop-side: the tests and the booted rig copy a board's files from this checkout with it.
What the recipe installs is the wheel that python_setuptools_build_meta builds (every
`.py` and `.pyi` of the packages, the package data pyproject.toml names, the compiled
extension with its C source) minus what no image package lists, split by the table; the
installer adds each module's bytecode (`__pycache__/<name>.cpython-3XY.pyc`), which this
reader leaves out: whoever copies the files compiles them for their own Python.

An entry of the table matches a file (a '/'-separated path relative to foosball/) exactly
as the recipe's FILES globs do: the entry itself (a data file, or a folder and all below
it), `<entry>.*` beside it (the module's .py, .pyi, .c and extension .so) and its bytecode
`__pycache__/<name>.*`. `entry_matches` is that rule; the recipe's copy of it is checked
against this one by tests/images/test_python_modules.py.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # python/foosball of this checkout
REPO = PACKAGE_DIR.parents[1]
TABLE = REPO / "image-config" / "python-modules.toml"
PYPROJECT = PACKAGE_DIR.parent / "pyproject.toml"
BOARDS = ("pole", "vision", "strategy")
COMMON = "common"  # the package every board gets: python3-foosball itself
# What the wheel carries beside the package data: the modules and their stubs (setuptools
# 69, scarthgap's, takes .pyi files by default), the compiled extensions and their C
# sources (which the sdist manifest brings); sim/ is on no board's image.
SOURCE_SUFFIXES = (".py", ".pyi")
EXTENSION_FILES = ("vision/_band.c", "vision/_band.*.so", "sim/_loops.c", "sim/_loops.*.so")
EXTENSION_SUFFIX = re.compile(r"\.cpython-[^./]+\.so$|\.abi3\.so$|\.so$")


class ModuleTableError(ValueError):
    """The table is wrong: an unknown board or package, an entry naming nothing, a file
    claimed by two packages, a module whose package __init__ the board does not get."""


@dataclass(frozen=True)
class ModuleTable:
    packages: dict[str, tuple[str, ...]]  # image package ("common", "pole", ...) -> entries
    boards: dict[str, tuple[str, ...]]  # board -> the image packages it installs
    path: Path = TABLE

    def packages_of(self, board: str) -> tuple[str, ...]:
        if board not in self.boards:
            raise ModuleTableError(f"{self.path}: no board {board!r}; boards: "
                                   f"{sorted(self.boards)}")
        return self.boards[board]


def entry_matches(relative: str, entry: str) -> bool:
    """Whether the file at `relative` (under foosball/) belongs to the table entry."""
    parent, _, name = entry.rpartition("/")
    prefix = f"{parent}/" if parent else ""
    return (relative == entry
            or relative.startswith(entry + "/")
            or (relative.startswith(f"{prefix}{name}.") and "/" not in relative[len(prefix):])
            or (relative.startswith(f"{prefix}__pycache__/{name}.")
                and relative.count("/") == prefix.count("/") + 1))


def load_table(path: Path = TABLE) -> ModuleTable:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ModuleTableError(f"{path}: cannot read the module table: {exc}") from exc
    boards = data.pop("boards", None)
    if not isinstance(boards, dict) or set(boards) != set(BOARDS):
        raise ModuleTableError(f"{path}: [boards] must name exactly {list(BOARDS)}")
    packages: dict[str, tuple[str, ...]] = {}
    for name, section in data.items():
        modules = section.get("modules") if isinstance(section, dict) else None
        if not isinstance(modules, list) or not all(isinstance(m, str) for m in modules):
            raise ModuleTableError(f"{path}: [{name}] needs modules = [\"path\", ...]")
        if set(section) != {"modules"}:
            unknown = sorted(set(section) - {"modules"})
            raise ModuleTableError(f"{path}: [{name}]: unknown keys {unknown}")
        packages[name] = tuple(modules)
    if COMMON not in packages:
        raise ModuleTableError(f"{path}: no [{COMMON}] section (python3-foosball itself)")
    for board, names in boards.items():
        unknown = [n for n in names if n not in packages]
        if unknown or COMMON not in names:
            raise ModuleTableError(f"{path}: [boards] {board} = {names}: every board gets "
                                   f"{COMMON!r}; no such package: {unknown}")
    return ModuleTable(packages, {b: tuple(n) for b, n in boards.items()}, path)


def _package_data_patterns(pyproject: Path = PYPROJECT) -> list[str]:
    config = tomllib.loads(pyproject.read_text())
    return list(config["tool"]["setuptools"]["package-data"]["foosball"])


def installed_files(package_dir: Path = PACKAGE_DIR) -> list[str]:
    """What the wheel installs under foosball/ (bytecode aside), '/'-separated, sorted."""
    found: set[str] = set()
    for path in package_dir.rglob("*"):
        if path.is_file() and path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts:
            found.add(path.relative_to(package_dir).as_posix())
    patterns = _package_data_patterns(package_dir.parent / "pyproject.toml")
    for pattern in [*patterns, *EXTENSION_FILES]:
        found.update(p.relative_to(package_dir).as_posix()
                     for p in package_dir.glob(pattern) if p.is_file())
    return sorted(found)


def package_files(table: ModuleTable, package: str,
                  package_dir: Path = PACKAGE_DIR) -> list[str]:
    """The files one image package installs; every entry must name at least one file."""
    if package not in table.packages:
        raise ModuleTableError(f"{table.path}: no package [{package}]")
    return _package_files(table, package, installed_files(package_dir), package_dir)


def _package_files(table: ModuleTable, package: str, files: list[str],
                   package_dir: Path) -> list[str]:
    shipped: list[str] = []
    for entry in table.packages[package]:
        matched = [f for f in files if entry_matches(f, entry)]
        if not matched:
            raise ModuleTableError(f"{table.path}: [{package}] {entry!r} names no file "
                                   f"under {package_dir}")
        shipped += matched
    return sorted(set(shipped))


def board_files(board: str, table: ModuleTable | None = None,
                package_dir: Path = PACKAGE_DIR) -> list[str]:
    """Exactly the files `board`'s image installs under site-packages/foosball (bytecode
    aside), '/'-separated paths relative to foosball/, sorted."""
    table = load_table() if table is None else table
    wanted = set(table.packages_of(board))
    files = installed_files(package_dir)
    owner: dict[str, str] = {}
    for package in table.packages:  # a file in two packages would make the build fail
        for file in _package_files(table, package, files, package_dir):
            if file in owner:
                raise ModuleTableError(f"{table.path}: {file} is in both [{owner[file]}] "
                                       f"and [{package}]")
            owner[file] = package
    shipped = sorted(f for f, package in owner.items() if package in wanted)
    _check_package_inits(board, shipped, package_dir, table.path)
    return shipped


def _check_package_inits(board: str, files: list[str], package_dir: Path, path: Path) -> None:
    shipped = set(files)
    for file in files:
        for parent in PurePosixPath(file).parents:
            init = f"{parent}/__init__.py" if str(parent) != "." else "__init__.py"
            if (package_dir / init).is_file() and init not in shipped:
                raise ModuleTableError(f"{path}: board {board} gets {file} but not {init}")


def board_modules(board: str, table: ModuleTable | None = None,
                  package_dir: Path = PACKAGE_DIR) -> frozenset[str]:
    """The dotted names (`foosball.runtime`, `foosball.wire` for a package) of the
    Python modules `board` ships, compiled extensions included."""
    return frozenset(module_name(f) for f in board_files(board, table, package_dir)
                     if f.endswith(".py") or EXTENSION_SUFFIX.search(f))


def module_name(relative: str) -> str:
    """`agents/strategy/core.py` -> `foosball.agents.strategy.core`; `wire/__init__.py` ->
    `foosball.wire`;
    `vision/_band.cpython-311-x86_64-linux-gnu.so` -> `foosball.vision._band`."""
    stem = EXTENSION_SUFFIX.sub("", relative) if relative.endswith(".so") else relative
    parts = ["foosball", *PurePosixPath(stem).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def copy_board_files(board: str, site_packages: Path, table: ModuleTable | None = None,
                     package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """Copy `board`'s files into site_packages/foosball (which must not exist yet), as the
    image lays them out; returns the paths written."""
    target = site_packages / "foosball"
    if target.exists():
        raise FileExistsError(f"{target} exists: a board's files go into an empty place")
    written = []
    for file in board_files(board, table, package_dir):
        destination = target / file
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(package_dir / file, destination)
        written.append(destination)
    return written
