"""What our layers name is provided, checked in CI without the upstream layers.

The pinned upstream layers are represented by tests/images/upstream-manifest/<board>.json.gz,
written by tools/yocto-manifest from a real parse (docs/notes/issue-28-images.md says how).
Our own recipes are read from the files as they are now (tests/images/bbnames.py).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from bbnames import (
    BOARDS,
    REPO,
    Recipe,
    Store,
    UnreadableError,
    board_base,
    board_overrides,
    manifest,
    read_into,
    unprovided,
)
from wks import boot_table, kas_chain, kas_local_conf

FORCED_LIST = REPO / "tests/images/forced-layer-recipes.toml"
FRAGMENT = REPO / "meta-foosball/files/kernel/foosball-rauc-verity.cfg"
BOOT_RECIPE = REPO / "meta-foosball/recipes-bsp/foosball-boot-script/foosball-boot-script.bb"
BOOT_TEMPLATE = BOOT_RECIPE.parent / "files/boot.cmd.in"


def kas_pins(board: str) -> dict[str, str]:
    """{repository url tail: commit} over the board's kas chain."""
    pins = {}
    for config in kas_chain(board):
        for name, repo in (config.get("repos") or {}).items():
            if repo and repo.get("commit"):
                pins[name] = repo["commit"]
    return pins


# Layer collection -> the kas repository it comes from.
COLLECTION_REPO = {
    "core": "openembedded-core",
    "openembedded-layer": "meta-openembedded",
    "meta-python": "meta-openembedded",
    "rauc": "meta-rauc",
    "meta-arm": "meta-arm",
    "arm-toolchain": "meta-arm",
    "rockchip": "meta-rockchip",
    "stm-st-stm32mp": "meta-st-stm32mp",
    "stm-st-stm32mprt": "meta-st-x-linux-rt",
    "webkit": "meta-webkit",
}


@pytest.mark.parametrize("board", BOARDS)
def test_manifest_was_made_from_the_layers_the_kas_files_pin(board: str) -> None:
    record, pins = manifest(board), kas_pins(board)
    assert record["machine"] == kas_chain(board)[-1]["machine"]
    assert set(record["layers"]) == {c for c, repo in COLLECTION_REPO.items() if repo in pins}
    for collection, layer in record["layers"].items():
        assert layer["commit"] == pins[COLLECTION_REPO[collection]], collection


@pytest.mark.parametrize("board", BOARDS)
def test_every_name_our_layers_ask_for_is_provided(board: str) -> None:
    assert unprovided(board) == []


def test_a_recipe_naming_what_nothing_provides_fails_the_check(tmp_path: Path) -> None:
    recipe = tmp_path / "foosball-broken_1.0.bb"
    recipe.write_text(
        'LICENSE = "MIT"\n'
        'DEPENDS = "openssl-native python3-no-such-builder-native"\n'
        'RDEPENDS:${PN} = "python3-core python3-no-such-module"\n'
        'RRECOMMENDS:${PN} = "${PN}-extras"\n'
    )
    problems = unprovided("vision", extra=[recipe])
    assert [p for p in problems if "python3-no-such-builder-native" in p]
    assert [p for p in problems if "'python3-no-such-module'" in p]
    assert [p for p in problems if "'foosball-broken-extras'" in p]  # not in its PACKAGES
    assert not [p for p in problems if "openssl-native" in p or "'python3-core'" in p]


def test_a_bbappend_of_no_recipe_fails_the_check(tmp_path: Path) -> None:
    append = tmp_path / "linux-no-such-kernel_%.bbappend"
    append.write_text('FOO = "1"\n')
    assert [p for p in unprovided("vision", extra=[append]) if "linux-no-such-kernel" in p]


def test_the_reader_refuses_a_line_it_cannot_read(tmp_path: Path) -> None:
    recipe = tmp_path / "odd.bb"
    recipe.write_text("RDEPENDS:${PN} = python3-core\n")  # no quotes: not bitbake syntax
    with pytest.raises(UnreadableError, match="cannot read"):
        unprovided("vision", extra=[recipe])


# -- the boot script loads the board's own device tree --------------------------------


def boot_store(board: str, variables: dict[str, str]) -> Store:
    recipe = Recipe(BOOT_RECIPE, "foosball-boot-script")
    read_into(recipe, BOOT_RECIPE)
    base, _ = board_base(board)
    return Store(board, recipe, {**base, **variables}, board_overrides(board))


def boot_script(store: Store) -> str:
    """boot.cmd as do_compile writes it: the recipe's own sed pairs, filled by the store."""
    text = BOOT_TEMPLATE.read_text()
    for placeholder, variable in re.findall(
        r"s\|@@(\w+)@@\|\$\{(\w+)\}\|", BOOT_RECIPE.read_text()
    ):
        text = text.replace(f"@@{placeholder}@@", store.getVar(variable) or "")
    return text


def loaded_device_tree(script: str) -> str:
    found = re.findall(r"^load .* \$\{fdt_addr_r\} /boot/(\S+)$", script, re.M)
    assert len(found) == 1, script
    return found[0]


def own_device_tree(board: str) -> str:
    """The machine's own tree: ST boards name it (boot-files.toml, read from the BSP);
    the Rock Pi's machine has exactly one."""
    row = boot_table()[board]
    if "device_tree" in row:
        return row["device_tree"] + ".dtb"
    (only,) = manifest(board)["boot_script"]["KERNEL_DEVICETREE"].split()
    return Path(only).name


def parsed_values(board: str) -> dict[str, str]:
    """bitbake -e values of the real parse, with today's FOOSBALL_ST_DT from the kas file."""
    recorded = manifest(board)["boot_script"]
    # KERNEL_CONSOLE too: OE-core sets it before any recipe (a ?= there does nothing).
    names = ("KERNEL_DEVICETREE", "KERNEL_IMAGETYPE", "MACHINE", "SERIAL_CONSOLES", "UBOOT_ARCH")
    names += ("KERNEL_CONSOLE",)
    values = {k: recorded[k] for k in names}
    found = re.search(r'FOOSBALL_ST_DT = "([^"]*)"', kas_local_conf(board))
    values["FOOSBALL_ST_DT"] = found.group(1) if found else ""
    return values


@pytest.mark.parametrize("board", BOARDS)
def test_boot_script_loads_the_machines_own_device_tree(board: str) -> None:
    values = parsed_values(board)
    script = boot_script(boot_store(board, values))
    if values["KERNEL_IMAGETYPE"] == "fitImage":
        # The FIT carries the device trees of KERNEL_DEVICETREE and boots its default
        # configuration: there must be exactly the board's own, and no separate load.
        assert "${fdt_addr_r} /boot/" not in script
        assert [Path(p).name for p in values["KERNEL_DEVICETREE"].split()] == [
            own_device_tree(board)
        ]
        assert re.search(r"^bootm \$\{kernel_addr_r\}$", script, re.M)
        return
    fdt = loaded_device_tree(script)
    assert fdt == own_device_tree(board)
    assert fdt in [Path(p).name for p in values["KERNEL_DEVICETREE"].split()]
    # The real parse's own expansion agreed (bitbake -e foosball-boot-script).
    assert manifest(board)["boot_script"]["FOOSBALL_FDT"] == fdt


@pytest.mark.parametrize("board", BOARDS)
def test_boot_script_gives_the_kernel_the_machines_serial_console(board: str) -> None:
    values = parsed_values(board)
    baud, tty = values["SERIAL_CONSOLES"].split()[0].split(";")
    script = boot_script(boot_store(board, values))
    assert re.search(rf'^setenv bootargs ".* console={tty},{baud} ', script, re.M), script


@pytest.mark.parametrize("board", BOARDS)
def test_boot_script_recipe_knows_the_architecture_for_mkimage(board: str) -> None:
    """do_compile runs `mkimage -A ${UBOOT_ARCH}`; it is set only where kernel-arch is
    inherited (bitbake -e foosball-boot-script of the real parse)."""
    expected = {"pole": "arm", "vision": "arm64", "strategy": "arm64"}[board]
    assert manifest(board)["boot_script"]["UBOOT_ARCH"] == expected


def test_pole_machine_lists_another_board_first() -> None:
    """Why "the first KERNEL_DEVICETREE" was wrong: X-LINUX-RT's stm32mp1-rt."""
    first = manifest("pole")["boot_script"]["KERNEL_DEVICETREE"].split()[0]
    assert Path(first).name != own_device_tree("pole")


def test_boot_script_stops_on_a_device_tree_the_kernel_does_not_install() -> None:
    values = parsed_values("pole") | {"FOOSBALL_ST_DT": "stm32mp157f-dk2"}  # not the -rt one
    with pytest.raises(UnreadableError, match="does not install"):
        boot_script(boot_store("pole", values))


def test_boot_script_stops_when_several_trees_and_none_named() -> None:
    values = parsed_values("pole") | {"FOOSBALL_ST_DT": ""}
    with pytest.raises(UnreadableError, match="set FOOSBALL_ST_DT"):
        boot_script(boot_store("pole", values))


# -- the kernels get what RAUC's verity bundles need ----------------------------------


def fragment_options(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if line.startswith("CONFIG_")}


def test_fragment_has_meta_raucs_options_and_verity() -> None:
    ours = fragment_options(FRAGMENT.read_text())
    for board in BOARDS:
        assert set(manifest(board)["meta_rauc_kernel_fragment"]) <= ours
    assert {
        "CONFIG_DM_VERITY=y",
        "CONFIG_BLK_DEV_DM=y",
        "CONFIG_SQUASHFS=y",
        "CONFIG_BLK_DEV_LOOP=y",
    } <= ours


@pytest.mark.parametrize("board", BOARDS)
def test_every_boards_kernel_takes_the_fragment(board: str) -> None:
    kernel = manifest(board)["kernel"]
    assert FRAGMENT.name in kernel["fragments_in_src_uri"]
    if board in ("pole", "strategy"):
        # ST's kernel merges only what KERNEL_CONFIG_FRAGMENTS lists.
        assert kernel["pn"] == "linux-stm32mp"
        assert FRAGMENT.name in kernel["KERNEL_CONFIG_FRAGMENTS"]
    else:
        assert kernel["pn"] == "linux-yocto"  # merges every .cfg of SRC_URI


# -- where a layer is forced onto scarthgap --------------------------------------------


def test_only_st_layers_are_forced_and_only_where_they_are_used() -> None:
    forced = {
        b: sorted(c for c, layer in manifest(b)["layers"].items() if layer["forced"])
        for b in BOARDS
    }
    assert forced == {
        "pole": ["stm-st-stm32mp", "stm-st-stm32mprt"],
        "vision": [],
        "strategy": ["stm-st-stm32mp"],
    }
    appends = {
        path.relative_to(REPO).as_posix()
        for path in [REPO / "kas.yml", *REPO.glob("image-config/**/*.yml")]
        if "LAYERSERIES_COMPAT" in path.read_text()
    }
    assert appends == {"image-config/st-bsp.yml", "image-config/pole/kas.yml"}


@pytest.mark.parametrize("board", ["pole", "strategy"])
def test_recipes_parsing_under_the_compat_override_are_the_listed_ones(board: str) -> None:
    """Every recipe of the board's targets that comes from (or is appended by) a layer
    whose layer.conf names mickledore only. A new one fails here until it is looked at
    and added to forced-layer-recipes.toml."""
    listed = tomllib.loads(FORCED_LIST.read_text())[board]["recipes"]
    by_target = manifest(board)["recipes_under_forced_layers"]
    assert len(by_target) == 3  # image, -dev image, bundle
    assert sorted(set().union(*by_target.values())) == listed
