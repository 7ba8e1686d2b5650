"""The one table of which Python modules each board ships (image-config/python-modules.toml):
closed under imports for every board, read the same by the recipe and by the laptop-side
reader (foosball.rig.image_files), and true to what the wheel installs."""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import shutil
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest
import setuptools

from foosball.rig import image_files
from foosball.rig.image_files import (
    BOARDS,
    PACKAGE_DIR,
    ModuleTable,
    ModuleTableError,
    board_files,
    board_modules,
    entry_matches,
    installed_files,
    load_table,
)
from tests.architecture.test_import_layers import ARCHITECTURE, declared_sides
from tests.images.module_imports import missing_imports

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "meta-foosball/recipes-foosball/python3-foosball/python3-foosball.bb"
SITE = "/usr/lib/python3.12/site-packages/foosball"  # ${FOOSBALL_SITE} on scarthgap
NOT_AGENTS = {"wire", "table", "safety"}


def agents_of(board: str) -> set[str]:
    """The agents the board's shipped board.toml runs (the update agent among them)."""
    config = tomllib.loads((REPO / "image-config" / board / "board.toml").read_text())
    return set(config) - NOT_AGENTS


# --- closed under imports -------------------------------------------------------------------
@pytest.mark.parametrize("board", BOARDS)
def test_every_module_a_board_ships_imports_only_modules_it_ships(board: str) -> None:
    missing = missing_imports(board_modules(board), agents_of(board), PACKAGE_DIR)
    assert not missing, "\n".join(map(str, missing))


@pytest.mark.parametrize("board", BOARDS)
def test_every_agent_of_a_board_and_the_runtime_ship_to_it(board: str) -> None:
    modules = board_modules(board)
    for agent in agents_of(board) - {"update_agent"}:
        assert f"foosball.agents.{agent}" in modules
    assert {"foosball.cli", "foosball.agent_cli", "foosball.runtime",
            "foosball.ota.core", "foosball.ota.rauc", "foosball.realtime"} <= modules


def test_the_guided_calibration_runs_where_the_camera_is() -> None:
    """The game panel's Camera tab asks the ball tracker over the wire: the vision board
    ships the calibration's report (the tracker runs it), the strategy board needs none."""
    assert "foosball.vision.calibration_report" in board_modules("vision")
    strategy = board_modules("strategy")
    assert "foosball.agents.game_panel.calibration" in strategy
    assert "foosball.vision.calibration_report" not in strategy
    assert "foosball.vision.calibration" not in strategy


def without(table: ModuleTable, entry: str) -> ModuleTable:
    return dataclasses.replace(table, packages={
        name: tuple(e for e in entries if e != entry) for name, entries in table.packages.items()})


def test_closure_check_names_the_import_of_a_module_the_board_lacks() -> None:
    # The game panel's vision settings (the fault that kept the strategy board's units
    # restarting): taken out of the table, the strategy board's set is no longer closed.
    table = without(load_table(), "vision/config")
    missing = missing_imports(board_modules("strategy", table), agents_of("strategy"),
                              PACKAGE_DIR)
    assert ("foosball.agents.game_panel.core", "foosball.vision.config") in {
        (m.importer, m.imported) for m in missing}


def test_closure_check_counts_an_agents_dispatch_on_the_boards_that_run_it() -> None:
    # The registry parses and builds every agent; what it imports to build the motor driver
    # counts on a board that runs the motor driver, and only there.
    modules = board_modules("strategy")
    assert not missing_imports(modules, agents_of("strategy"), PACKAGE_DIR)
    missing = missing_imports(modules, agents_of("strategy") | {"motor_driver"}, PACKAGE_DIR)
    assert ("foosball.agent_registry", "foosball.agents.motor_driver") in {
        (m.importer, m.imported) for m in missing}


def test_laptop_tools_ship_to_no_board() -> None:
    """No image installs a module of a laptop-side part (docs/architecture.md's side
    column: the simulator, the offline evaluations in foosball.lab, the rig, the reports,
    the learning table, the laptop's commands). Every laptop-side module is in a laptop
    part now (the job runner in foosball.lab, the vision's benches in foosball.lab.vision),
    so the table's column is the whole list."""
    shipped = set().union(*(board_modules(board) for board in BOARDS))
    sides = declared_sides(ARCHITECTURE.read_text())
    laptop = [f"foosball.{part}" for part, side in sides.items() if side == "laptop"]
    assert {"foosball.sim", "foosball.lab", "foosball.rig", "foosball.analysis",
            "foosball.learning", "foosball.bench_cli", "foosball.sim_cli"} <= set(laptop)
    leaked = [m for m in shipped if any(m == name or m.startswith(name + ".") for name in laptop)]
    assert not leaked


# --- the table itself -----------------------------------------------------------------------
def test_table_refuses_an_entry_that_names_nothing(tmp_path: Path) -> None:
    table = load_table()
    broken = dataclasses.replace(table, packages={**table.packages, "pole": (
        *table.packages["pole"], "agents/no_such_agent")})
    with pytest.raises(ModuleTableError, match="'agents/no_such_agent' names no file"):
        board_files("pole", broken)


def test_table_refuses_a_file_in_two_packages() -> None:
    table = load_table()
    broken = dataclasses.replace(table, packages={**table.packages, "vision": (
        *table.packages["vision"], "geometry")})
    with pytest.raises(ModuleTableError, match=r"geometry.py is in both \[common\] and \[vision\]"):
        board_files("vision", broken)


def test_table_refuses_a_module_without_its_package_init() -> None:
    table = without(load_table(), "strategy/__init__")
    with pytest.raises(ModuleTableError, match=r"strategy/__init__\.py"):
        board_files("strategy", table)


def test_entry_rule_takes_the_module_its_extension_and_bytecode_only() -> None:
    assert entry_matches("geometry.py", "geometry")
    assert entry_matches("__pycache__/geometry.cpython-312.pyc", "geometry")
    assert not entry_matches("geometry_cli.py", "geometry")
    assert entry_matches("vision/_band.cpython-312-aarch64-linux-gnu.so", "vision/_band")
    assert entry_matches("vision/__pycache__/config.cpython-312.pyc", "vision/config")
    assert not entry_matches("vision/sub/config.py", "vision/config")
    assert entry_matches("wire/transports/__pycache__/udp.cpython-312.pyc", "wire")
    assert entry_matches("panels/static/game/game.js", "panels/static/game")
    assert not entry_matches("panels/static/gamer.js", "panels/static/game")


def test_packages_depend_on_each_other_as_the_boards_install_them() -> None:
    """[boards] says which image packages a board gets; the image installs its role
    package, which must pull in the others by RDEPENDS."""
    recipe = RECIPE.read_text()
    for board, packages in load_table().boards.items():
        rdepends = re.search(rf'^RDEPENDS:\$\{{PN\}}-{board} = "([^"]*)"', recipe, re.M)
        assert rdepends, f"no RDEPENDS for python3-foosball-{board}"
        pulled = {"common" if name == "${PN}" else name.removeprefix("${PN}-")
                  for name in rdepends.group(1).split() if name.startswith("${PN}")}
        assert pulled | {board} == set(packages)
        image = (REPO / f"meta-foosball/recipes-core/images/foosball-image-{board}.bb").read_text()
        assert f"python3-foosball-{board}" in image


# --- the recipe's reading of the table, run here --------------------------------------------
class RecipeData:
    """The few bitbake datastore calls the recipe's functions make."""

    def __init__(self, destdir: Path) -> None:
        self.values = {"FOOSBALL_MODULE_TABLE": str(image_files.TABLE), "FOOSBALL_SITE": SITE}
        self.destdir = destdir

    def getVar(self, name: str) -> str:
        return self.values[name]

    def expand(self, text: str) -> str:
        return text.replace("${D}", str(self.destdir)).replace("${FOOSBALL_SITE}", SITE)


def recipe_functions(recipe: str) -> dict[str, object]:
    """The recipe's inline Python (`def` blocks and `python name() {}` tasks) as functions,
    with a stand-in for bitbake's `bb` that records the parse dependencies."""
    namespace: dict[str, object] = {"bb": types.SimpleNamespace(parse=types.SimpleNamespace(
        mark_dependency=lambda d, path: namespace.setdefault("marked", path)))}
    for block in re.findall(r"^def \w+\(.*?(?=^\S)", recipe, re.M | re.S):
        exec(block, namespace)  # the recipe's own code, as bitbake runs it
    for name, body in re.findall(r"^python (\w+)\(\) \{\n(.*?)^\}", recipe, re.M | re.S):
        exec(f"def {name}(d):\n{body}", namespace)
    return namespace


def bitbake_split(recipe: str, functions: dict[str, object], root: Path) -> dict[str, set[str]]:
    """Package -> files under foosball/, as do_package splits root: each file to the first
    package in PACKAGES order with a FILES glob matching it or a folder above it."""
    roles = re.search(r'^PACKAGES =\+ "([^"]*)"', recipe, re.M).group(1).split()  # type: ignore[union-attr]
    module_files = functions["foosball_module_files"]
    order = [(role.removeprefix("${PN}-"), role.removeprefix("${PN}-")) for role in roles]
    order.append(("common", "common"))
    site = root / SITE.lstrip("/")
    split: dict[str, set[str]] = {name: set() for name, _ in order}
    globs = {name: module_files(RecipeData(root), package).split()  # type: ignore[operator]
             for name, package in order}
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        absolute = "/" + path.relative_to(root).as_posix()
        for name, _ in order:
            if any(fnmatch.fnmatchcase(absolute, g) or absolute.startswith(g + "/")
                   for g in globs[name]):
                split[name].add(path.relative_to(site).as_posix())
                break
        else:
            raise AssertionError(f"{absolute}: installed but in no package (installed-vs-shipped)")
    return split


def test_recipe_splits_the_install_exactly_as_the_reader_says(tmp_path: Path) -> None:
    recipe = RECIPE.read_text()
    functions = recipe_functions(recipe)
    # What the installer lays down: the wheel's files and each module's bytecode.
    site = tmp_path / SITE.lstrip("/")
    installed = installed_files()
    for file in installed:
        (site / file).parent.mkdir(parents=True, exist_ok=True)
        (site / file).write_bytes(b"")
        if file.endswith(".py"):
            parent, _, name = file.rpartition("/")
            pyc = site / parent / "__pycache__" / f"{name[:-3]}.cpython-312.pyc"
            pyc.parent.mkdir(exist_ok=True)
            pyc.write_bytes(b"")
    functions["foosball_prune_unlisted"](RecipeData(tmp_path))  # type: ignore[operator]
    assert functions["marked"] == str(image_files.TABLE)
    split = bitbake_split(recipe, functions, tmp_path)
    table = load_table()
    for board in BOARDS:
        shipped = set().union(*(split[package] for package in table.packages_of(board)))
        sources = {f for f in shipped if "__pycache__" not in f}
        assert sources == set(board_files(board, table))
        compiled = {f for f in shipped if "__pycache__" in f}
        assert len(compiled) == len([f for f in sources if f.endswith(".py")])
    assert not (site / "sim").exists() and not (site / "rig").exists()  # pruned, folders too


def test_recipe_reads_the_table_without_tomllib_as_tomllib_does() -> None:
    """A build host before Python 3.11 has no tomllib; the recipe's own reader of the
    table's subset of TOML gives what tomllib gives, and no entry goes missing."""
    subset = recipe_functions(RECIPE.read_text())["foosball_toml_subset"]
    text = image_files.TABLE.read_text()
    assert subset(text) == tomllib.loads(text)  # type: ignore[operator]
    assert subset('[a] # x\nmodules = ["b", # c\n  "d"]\n[e]\nmodules = []\n') == {  # type: ignore[operator]
        "a": {"modules": ["b", "d"]}, "e": {"modules": []}}


def test_reader_lists_what_setuptools_builds_into_the_wheel(tmp_path: Path) -> None:
    """python_setuptools_build_meta installs the wheel `pyproject-build --wheel` makes;
    its build step lays out the same tree (sources, package data, extension and its C
    source and stub)."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("needs a C compiler to build the extension (foosball/vision/_band.c)")
    source = tmp_path / "python"
    shutil.copytree(PACKAGE_DIR.parent, source, ignore=shutil.ignore_patterns(
        "__pycache__", "*.so", "*.egg-info", "build"))
    result = subprocess.run([sys.executable, "setup.py", "-q", "build", "--build-lib", "out"],
                            cwd=source, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    built = sorted(p.relative_to(source / "out/foosball").as_posix()
                   for p in (source / "out/foosball").rglob("*") if p.is_file())
    extensions = [f for f in built if f.endswith(".so")]
    assert [re.sub(r"\.cpython-[^.]+\.so$", ".so", f) for f in extensions] == [
        "sim/_loops.so", "vision/_band.so"]
    if int(setuptools.__version__.split(".")[0]) < 69:  # 69 (scarthgap's) takes stubs too
        built += [p.relative_to(source / "foosball").as_posix()
                  for p in (source / "foosball").rglob("*.pyi")]
    # the copy has no extension built in place; the checkout's (./tools/setup) is listed
    assert sorted(set(built) - set(extensions)) == installed_files(source / "foosball")
    assert any(fnmatch.fnmatchcase(f, "vision/_band.*.so") for f in installed_files())
