"""Reading wks files and the board kas files the way the image checks need them.

Shared by test_boot_files.py (CI) and check_with_upstream.py (a developer's check
against BSP and openembedded-core checkouts).
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
BOOT_FILES = REPO / "image-config/boot-files.toml"
PARTITIONS_INC = REPO / "meta-foosball/conf/distro/include/foosball-partitions.inc"
# wks options without a value (wic's ksparser: action="store_true").
FLAGS = {"--active", "--no-table", "--exclude-path", "--use-uuid", "--use-label"}
# The options a boot partition is compared on; the rest (--fstype, --ondisk...) only
# matter to wic's own layout and are checked by its parser (check_with_upstream.py).
COMPARED = ("part_name", "source", "file", "offset", "fixed_size", "part_type", "uuid", "align")


def boot_table() -> dict:
    return tomllib.loads(BOOT_FILES.read_text())


def expand(text: str, values: dict[str, str]) -> str:
    """${NAME} -> values[NAME]; an unknown name is an error, not an empty string."""
    return re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], text)


def parse_part(line: str) -> dict[str, str]:
    """One `part` line -> {option: value} with wic's option names (dashes -> '_')."""
    tokens = shlex.split(line)
    assert tokens[0] == "part", line
    options: dict[str, str] = {}
    rest = tokens[1:]
    if rest and not rest[0].startswith("--"):
        options["mountpoint"] = rest.pop(0)
    while rest:
        token = rest.pop(0)
        name, eq, value = token.partition("=")
        if not eq:
            value = "" if name in FLAGS or not rest else rest.pop(0)
        options[name.lstrip("-").replace("-", "_")] = value
    params = dict(item.split("=", 1) for item in options.pop("sourceparams", "").split(",") if item)
    if "file" in params:
        options["file"] = params["file"].removeprefix("/deploy/")
    return options


def parts(text: str) -> list[dict[str, str]]:
    return [parse_part(line) for line in text.splitlines() if line.startswith("part ")]


def compared(part: dict[str, str]) -> dict[str, str]:
    return {key: part[key] for key in COMPARED if key in part}


def foosball_values() -> dict[str, str]:
    inc = PARTITIONS_INC.read_text()
    return dict(re.findall(r'^(FOOSBALL_\w+) \??= "([^"$]*)"$', inc, re.MULTILINE))


def kas_chain(board: str) -> list[dict]:
    """The board's kas file and every file it includes (repo-relative paths), included first."""
    seen: list[dict] = []

    def load(relative: str) -> None:
        config = yaml.safe_load((REPO / relative).read_text())
        for include in config.get("header", {}).get("includes", []):
            load(include)
        seen.append(config)

    load(f"image-config/{board}/kas.yml")
    return seen


def kas_value(board: str, key: str):
    """A top-level key or a repo, as kas merges the chain (later files win)."""
    value = None
    for config in kas_chain(board):
        if key in config:
            value = config[key]
        if key in config.get("repos", {}):
            value = config["repos"][key]
    return value


def kas_local_conf(board: str) -> str:
    return "\n".join(
        text for config in kas_chain(board) for text in config.get("local_conf_header", {}).values()
    )


def wks_values(board: str) -> dict[str, str]:
    """What bitbake would put into the board's wks: our partition variables, the device
    tree of the kas file, the BSP's machine variables from the table."""
    values = foosball_values() | {"DEPLOY_DIR_IMAGE": "/deploy"}
    found = re.search(r'^FOOSBALL_ST_DT = "([^"]*)"$', kas_local_conf(board), re.MULTILINE)
    values["FOOSBALL_ST_DT"] = found.group(1) if found else ""
    values |= boot_table()[board].get("bsp_variables", {})
    return values


def wks_path(board: str) -> Path:
    return REPO / "image-config" / board / f"foosball-{board}.wks.in"


def boot_parts(wks_text: str, board: str) -> list[dict[str, str]]:
    """The SoC's partitions of a wks: every part before the foosball layout (boot)."""
    found = parts(expand(wks_text, wks_values(board)))
    boot = foosball_values()["FOOSBALL_PART_BOOT"]
    names = [part.get("part_name") for part in found]
    return [compared(part) for part in found[: names.index(boot)]]


def table_parts(board: str) -> list[dict[str, str]]:
    return [
        {key: value for key, value in row.items() if key in COMPARED}
        for row in boot_table()[board]["partitions"]
    ]
