"""Checks of the Yocto layers and kas files that run without any upstream layer.

oelint-adv over both layers (config: .oelint.cfg at the repository root), every
kas file against kas's own schema, and the rules that keep the per-board files
consistent (partition names written once, board.toml naming the board's agents).
The real bitbake parse needs the upstream layers; see docs/notes/issue-7.md. Which Python
modules each package ships is image-config/python-modules.toml (test_python_modules.py).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml
from kas.configschema import CONFIGSCHEMA

from foosball.agent_registry import AGENTS, EVERY_BOARD, agents_of
from foosball.rig.image_files import ModuleTableError, board_modules, load_table, package_files
from tests.agents.boards import shipped_board_copy

REPO = Path(__file__).resolve().parents[2]
LAYERS = (REPO / "meta-foosball", REPO / "recipes")
BOARDS = ("pole", "vision", "strategy")
KAS_FILES = [REPO / "kas.yml", REPO / "image-config/st-bsp.yml"] + [
    REPO / "image-config" / board / "kas.yml" for board in BOARDS
]
AGENTS_OF_BOARD = {board: set(agents_of(board)) for board in BOARDS}  # the update agent among them
NON_AGENT_SECTIONS = {"wire", "table", "safety"}
PARTITIONS_INC = REPO / "meta-foosball/conf/distro/include/foosball-partitions.inc"


def layer_files() -> list[Path]:
    suffixes = (".bb", ".bbappend", ".bbclass", ".inc", ".conf")
    return sorted(
        path
        for layer in LAYERS
        for path in layer.rglob("*")
        if path.suffix in suffixes and "files" not in path.relative_to(layer).parts
    )


def oelint_command() -> list[str]:
    beside_python = Path(sys.executable).with_name("oelint-adv")
    found = str(beside_python) if beside_python.exists() else shutil.which("oelint-adv")
    if found is None:
        pytest.fail("oelint-adv is not installed (pip install oelint-adv)")
    return [found]


def run_oelint(files: list[Path]) -> subprocess.CompletedProcess[str]:
    # Warnings and infos are advice; CI fails on errors only (exit status 1).
    return subprocess.run(
        [
            *oelint_command(),
            "--quiet",
            "--relpaths",
            "--hide",
            "info",
            "--hide",
            "warning",
            *map(str, files),
        ],
        check=False,
        cwd=REPO,  # oelint-adv reads .oelint.cfg from the working directory
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_oelint_reports_no_error_in_either_layer() -> None:
    files = layer_files()
    assert len(files) > 20, "the layer walk found too few files to be the real layers"
    result = run_oelint(files)
    assert result.returncode == 0, result.stderr
    assert ":error:" not in result.stderr


def test_oelint_run_fails_on_a_recipe_without_licence(tmp_path: Path) -> None:
    broken = tmp_path / "broken_1.0.bb"
    broken.write_text('SUMMARY = "no licence"\nDESCRIPTION = "x"\nSRC_URI = "file://x"\n')
    result = run_oelint([broken])
    assert result.returncode != 0
    assert "oelint.var.mandatoryvar.LICENSE" in result.stderr


def test_oelint_config_pins_the_release() -> None:
    config = (REPO / ".oelint.cfg").read_text()
    assert re.search(r"^release\s*=\s*scarthgap$", config, re.MULTILINE)


@pytest.mark.parametrize("kas_file", KAS_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_kas_file_is_valid_for_kas_schema(kas_file: Path) -> None:
    jsonschema.validate(yaml.safe_load(kas_file.read_text()), CONFIGSCHEMA)


@pytest.mark.parametrize("kas_file", KAS_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_upstream_repo_is_pinned_by_full_commit(kas_file: Path) -> None:
    repos = yaml.safe_load(kas_file.read_text()).get("repos", {})
    for name, repo in repos.items():
        if repo and repo.get("url"):
            assert re.fullmatch(r"[0-9a-f]{40}", repo.get("commit", "")), f"{name} is not pinned"


def test_schema_check_catches_a_misspelt_key() -> None:
    config = yaml.safe_load((REPO / "image-config/pole/kas.yml").read_text())
    config["machin"] = config.pop("machine")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(config, CONFIGSCHEMA)


@pytest.mark.parametrize("board", BOARDS)
def test_board_kas_file_names_its_board_and_image(board: str) -> None:
    config = yaml.safe_load((REPO / "image-config" / board / "kas.yml").read_text())
    assert "kas.yml" in config["header"]["includes"]
    assert f"foosball-image-{board}" in config["target"]
    local_conf = "\n".join(config["local_conf_header"].values())
    assert re.search(rf'^FOOSBALL_BOARD = "{board}"$', local_conf, re.MULTILINE)


@pytest.mark.parametrize("board", BOARDS)
def test_board_has_every_file_its_recipes_fetch(board: str) -> None:
    folder = REPO / "image-config" / board
    needed = {
        "kas.yml",
        "board.toml",
        "system.conf",
        f"foosball-{board}.wks.in",
        "10-lan0.link",
        "20-lan0.network",
    }
    if board == "pole":
        needed |= {"10-ecat0.link", "20-ecat0.network"}
    if board in ("pole", "strategy"):  # ST boards: foosball-rauc-conf installs it
        needed |= {"fw_env.config"}
    missing = needed - {path.name for path in folder.iterdir()}
    assert not missing


@pytest.mark.parametrize("board", BOARDS)
def test_board_toml_runs_exactly_the_boards_agents(board: str) -> None:
    config = tomllib.loads((REPO / "image-config" / board / "board.toml").read_text())
    wire = config["wire"]
    assert (wire["transport"], wire["iface"], wire["ethertype"]) == (
        "raw",
        "lan0",
        0x88B5,
    )
    assert wire["key_file"].startswith("/data/")
    assert config["table"]["geometry"] == "/etc/foosball/table.json"
    assert set(config) - NON_AGENT_SECTIONS == AGENTS_OF_BOARD[board]
    assert config["update_agent"]["board"] == board  # the name `foosball ota push` uses


PYTHON_RECIPE = REPO / "meta-foosball/recipes-foosball/python3-foosball/python3-foosball.bb"


def recipe_packages(recipe: str) -> dict[str, str]:
    """Package -> the table section its FILES line reads (foosball_module_files)."""
    found = re.findall(
        r"^FILES:\$\{PN\}(-\w+)? \+?= \"\$\{@foosball_module_files\(d, '(\w+)'\)\}\"$",
        recipe,
        re.MULTILINE,
    )
    return {f"python3-foosball{suffix}": section for suffix, section in found}


def test_recipe_reads_every_package_of_the_module_table() -> None:
    packages = recipe_packages(PYTHON_RECIPE.read_text())
    table = load_table()
    assert set(packages.values()) == set(table.packages)
    assert packages["python3-foosball"] == "common"
    for name, section in packages.items():
        if section != "common":
            assert name == f"python3-foosball-{section}"
        assert package_files(table, section), f"{name} ships nothing"  # every entry names files


def test_every_agent_of_a_board_is_a_module_in_its_role_package() -> None:
    table = load_table()
    for agent, spec in AGENTS.items():
        if spec.board == EVERY_BOARD:
            continue  # the update agent: foosball.ota, in the common package
        assert f"agents/{agent}" in table.packages[spec.board], (
            f"{agent} not in python3-foosball-{spec.board}")
        assert f"foosball.agents.{agent}" in board_modules(spec.board, table)


def test_package_check_reports_a_module_that_does_not_exist() -> None:
    table = load_table()
    broken = dataclasses.replace(table, packages={**table.packages, "strategy": (
        *table.packages["strategy"], "agents/no_such_agent")})
    with pytest.raises(ModuleTableError, match="'agents/no_such_agent' names no file"):
        package_files(broken, "strategy")


def partition_names() -> dict[str, str]:
    text = PARTITIONS_INC.read_text()
    return dict(re.findall(r'^(FOOSBALL_PART_\w+) = "(\w+)"$', text, re.MULTILINE))


def test_partition_names_are_written_only_in_the_partitions_include() -> None:
    names = partition_names()
    assert set(names) == {
        "FOOSBALL_PART_BOOT",
        "FOOSBALL_PART_ROOTFS_A",
        "FOOSBALL_PART_ROOTFS_B",
        "FOOSBALL_PART_DATA",
    }
    literals = {names["FOOSBALL_PART_ROOTFS_A"], names["FOOSBALL_PART_ROOTFS_B"]}
    for folder in (REPO / "meta-foosball", REPO / "image-config"):
        for path in folder.rglob("*"):
            if path.is_file() and path != PARTITIONS_INC:
                found = literals & set(re.findall(r"\w+", path.read_text()))
                assert not found, f"{path.relative_to(REPO)} spells out {found}"


@pytest.mark.parametrize("board", BOARDS)
def test_wks_lays_out_boot_two_slots_and_data_from_the_variables(board: str) -> None:
    wks = (REPO / "image-config" / board / f"foosball-{board}.wks.in").read_text()
    for variable in partition_names():
        assert f"--part-name ${{{variable}}}" in wks
    assert "bootloader --ptable gpt" in wks


@pytest.mark.parametrize("board", BOARDS)
def test_rauc_system_conf_is_filled_at_build_time(board: str) -> None:
    conf = (REPO / "image-config" / board / "system.conf").read_text()
    assert "compatible=@@MACHINE@@" in conf
    assert "bootloader=uboot" in conf
    assert "bundle-formats=-plain" in conf
    for slot in ("@@PART_ROOTFS_A@@", "@@PART_ROOTFS_B@@"):
        assert f"device=/dev/disk/by-partlabel/{slot}" in conf


def bbfiles_patterns(layer: Path) -> list[str]:
    """The layer's BBFILES and BBFILES_DYNAMIC globs, ${LAYERDIR}-relative."""
    conf = (layer / "conf/layer.conf").read_text()
    static = re.findall(r'^BBFILES \+= "\$\{LAYERDIR\}/([^"]+)"$', conf, re.MULTILINE)
    dynamic = re.findall(
        r'^BBFILES_DYNAMIC \+= "[\w-]+:\$\{LAYERDIR\}/([^"]+)"$', conf, re.MULTILINE
    )
    return static + dynamic


def glob_regex(pattern: str) -> str:
    # As bitbake's glob.glob reads BBFILES: '*' and '?' never cross a '/'.
    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in pattern)


def unseen_recipes(layer: Path, patterns: list[str]) -> list[Path]:
    """Recipes and appends anywhere in the layer that no pattern makes bitbake read."""
    return [
        path.relative_to(layer)
        for path in sorted(layer.rglob("*"))
        if path.suffix in (".bb", ".bbappend")
        and not any(re.fullmatch(glob_regex(p), str(path.relative_to(layer))) for p in patterns)
    ]


def test_layer_confs_follow_the_recipe_pattern_and_series() -> None:
    for layer in LAYERS:
        conf = (layer / "conf/layer.conf").read_text()
        assert 'BBFILES += "${LAYERDIR}/recipes*/*/*.bb*"' in conf
        assert re.search(r'^LAYERSERIES_COMPAT_\S+ = "scarthgap wrynose"$', conf, re.MULTILINE)
        assert re.search(r"^LAYERDEPENDS_\S+ = ", conf, re.MULTILINE)


@pytest.mark.parametrize("layer", LAYERS, ids=lambda p: p.name)
def test_bitbake_reads_every_recipe_of_the_layer(layer: Path) -> None:
    patterns = bbfiles_patterns(layer)
    assert patterns
    assert not unseen_recipes(layer, patterns)


def test_recipe_check_reports_a_recipe_out_of_the_pattern(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf/layer.conf").write_text('BBFILES += "${LAYERDIR}/recipes*/*/*.bb*"\n')
    for relative in ("recipes-core/good/good.bb", "recipes-core/deep/er/lost.bb", "stray/x.bb"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("")
    assert unseen_recipes(tmp_path, bbfiles_patterns(tmp_path)) == [
        Path("recipes-core/deep/er/lost.bb"),
        Path("stray/x.bb"),
    ]


@pytest.mark.parametrize("board", BOARDS)
def test_board_toml_passes_the_agents_own_check(board: str, tmp_path: Path) -> None:
    # The image installs table.json as /etc/foosball/table.json, the key and calibration
    # under /data/foosball; here copies of our own.
    board_toml = shipped_board_copy(board, tmp_path)
    foosball = Path(sys.executable).with_name("foosball")
    result = subprocess.run(
        [str(foosball), "agent", "check", "--config", str(board_toml)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
