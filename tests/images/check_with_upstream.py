"""The image checks that need upstream checkouts, for a developer who has them.

CI has neither the BSP layers nor openembedded-core (they come from git, CI has package
registries only), so this is a script, not a test that would be skipped there forever:

    .venv/bin/python tests/images/check_with_upstream.py \\
        --bsp meta-st-stm32mp=/path/to/meta-st-stm32mp \\
        --bsp meta-rockchip=/path/to/meta-rockchip \\
        --oe-core /path/to/openembedded-core

Each checkout must be at the commit the kas files pin (image-config/boot-files.toml
names it); add `--env pole=<file>` with the output of `bitbake -e foosball-image-pole`
(likewise strategy) from the kas parse, and `--boot-env <board>=<file>` with the output of
`bitbake -e foosball-boot-script` of any board. Checks:
- the table against the BSP's own wks: every SoC partition, file name (device tree and
  machine variables filled in), size, type, UUID;
- the ST tables against the machine conf as bitbake expands it: GPT names and files of
  the flashlayout partition config, TF-A/FIP configurations, device tree;
- the boot script's device tree (FOOSBALL_FDT) against the machine's own device tree and
  KERNEL_DEVICETREE, as bitbake expands them;
- every board's wks read by wic's own kickstart parser (scripts/lib/wic/ksparser.py):
  the SoC partitions of the table, then boot, rootfsA (/), rootfsB, data on GPT.
Prints one line per check and "N passed, N failed"; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wks import (
    COMPARED,
    boot_table,
    compared,
    expand,
    foosball_values,
    parts,
    table_parts,
    wks_path,
    wks_values,
)

BOARDS = ("pole", "vision", "strategy")


def bsp_boot_parts(board: str, checkout: Path) -> list[dict[str, str]]:
    """The BSP wks's raw partitions (those before its file systems), as the table has them."""
    row = boot_table()[board]
    text = (checkout / row["bsp_wks"]).read_text()  # a missing file: wrong commit
    if "bsp_device_tree" in row:
        text = text.replace(row["bsp_device_tree"], row["device_tree"])
    # Names the BSP's file-system partitions use; they are not compared.
    values = {"DEPLOY_DIR_IMAGE": "/deploy", "DISTRO": "foosball", "MACHINE": row["machine"]}
    values |= {"ROOT_DPS": "linux"} | row.get("bsp_variables", {})
    found = parts(expand(text, values))
    raw = [part for part in found if part.get("source", "rawcopy") in ("rawcopy", "empty")]
    raw = [part for part in raw if "mountpoint" not in part or part["mountpoint"] != "/"]
    raw = [part for part in raw if not part.get("file", "").endswith(".ext4")]
    return [compared(part) for part in raw if "part_name" in part]


def table_as_bsp(board: str) -> list[dict[str, str]]:
    rows = []
    for row in boot_table()[board]["partitions"]:
        entry = {key: value for key, value in row.items() if key in COMPARED}
        # Where the BSP's wks still has older names (boot-files.toml says why).
        if "wks_part_name" in row:
            entry["part_name"] = row["wks_part_name"]
        if "wks_file" in row:
            entry["file"] = row["wks_file"]
        rows.append(entry)
    return rows


def check_bsp(board: str, checkout: Path) -> str | None:
    if not (checkout / boot_table()[board]["bsp_wks"]).is_file():
        return f"{checkout} has no {boot_table()[board]['bsp_wks']} (not the pinned commit?)"
    ours, theirs = table_as_bsp(board), bsp_boot_parts(board, checkout)
    if ours == theirs:
        return None
    return f"table {ours}\n    BSP  {theirs}"


def env_values(path: Path) -> dict[str, str]:
    """`bitbake -e <image>` output -> {VARIABLE: value} (only plain assignments)."""
    values = {}
    for line in path.read_text().splitlines():
        name, eq, value = line.partition("=")
        if eq and name.isidentifier() and value.startswith('"'):
            values[name] = value.strip('"').strip()
    return values


def check_st_env(board: str, env_file: Path) -> str | None:
    """The table's ST names against the machine conf's flashlayout variables and the
    TF-A/FIP configurations, as bitbake expands them for the board's machine."""
    row, env = boot_table()[board], env_values(env_file)
    dt = row["device_tree"]
    problems = []
    if env.get("MACHINE") != row["machine"]:
        problems.append(f"MACHINE {env.get('MACHINE')}")
    if dt not in env.get("STM32MP_DT_FILES_SDCARD", "").split():
        problems.append(f"{dt} not in STM32MP_DT_FILES_SDCARD")
    for config in ("TF_A_CONFIG", "FIP_CONFIG"):
        if "optee-sdcard" not in env.get(config, "").split():
            problems.append(f"optee-sdcard not in {config}")
    if env.get("ENABLE_FLASHLAYOUT_CONFIG_FWUP") != "1":
        problems.append("not the fw-update layout (ENABLE_FLASHLAYOUT_CONFIG_FWUP)")

    def data(name: str) -> str:
        pattern = env[name].replace("<TYPE>", dt).replace("<BOOTSCHEME>", "optee")
        return pattern.replace("<DEVICE>", "sdcard")

    fsbl, tfa = env["STM32MP_FSBL1_NAME"], data("STM32MP_FSBL1_DATA")
    metadata, meta_file = env["STM32MP_METADATA_NAME"], env["STM32MP_METADATA_DATA"]
    fip = data("STM32MP_SSBL1_DATA")
    expected = [
        (f"{fsbl}1", tfa),
        (f"{fsbl}2", tfa),
        (f"{metadata}1", meta_file),
        (f"{metadata}2", meta_file),
        (env["STM32MP_SSBL1_NAME"], fip),
        (env["STM32MP_SSBL2_NAME"], fip),
        (env["STM32MP_UENV_NAME"], None),
    ]
    table = [(p["part_name"], p.get("file")) for p in boot_table()[board]["partitions"]]
    if table != expected:
        problems.append(f"table {table}\n    bitbake -e {expected}")
    return "; ".join(problems) or None


def check_boot_env(board: str, env_file: Path) -> str | None:
    """The boot script's device tree against a live `bitbake -e foosball-boot-script`: the
    board's own tree (the table's for the ST boards, the machine's only one on the Rock
    Pi), installed by the kernel (KERNEL_DEVICETREE)."""
    env = env_values(env_file)
    installed = [Path(path).name for path in env.get("KERNEL_DEVICETREE", "").split()]
    row = boot_table()[board]
    own = row["device_tree"] + ".dtb" if "device_tree" in row else None
    if own is None:
        if len(installed) != 1:
            return f"KERNEL_DEVICETREE lists {installed}; which one is the board's?"
        own = installed[0]
    problems = []
    if env.get("MACHINE") != row["machine"]:
        problems.append(f"MACHINE {env.get('MACHINE')}")
    if env.get("KERNEL_IMAGETYPE") == "fitImage":
        # The FIT carries KERNEL_DEVICETREE's trees and the script loads none: exactly one.
        if env.get("FOOSBALL_FDT") or installed != [own]:
            problems.append(
                f"fitImage with FOOSBALL_FDT={env.get('FOOSBALL_FDT')!r}, trees {installed}"
            )
        return "; ".join(problems) or None
    if env.get("FOOSBALL_FDT") != own:
        problems.append(f"FOOSBALL_FDT={env.get('FOOSBALL_FDT')!r}, the board's own is {own}")
    if own not in installed:
        problems.append(f"{own} not in KERNEL_DEVICETREE {installed}")
    return "; ".join(problems) or None


def check_wic(board: str, oe_core: Path, tmp: Path) -> str | None:
    sys.path.insert(0, str(oe_core / "scripts/lib"))
    import wic.ksparser as ksparser

    ksparser.get_bitbake_var = lambda *args, **kwargs: ""  # no bitbake here
    wks = tmp / f"{board}.wks"
    wks.write_text(expand(wks_path(board).read_text(), wks_values(board)))
    layout = ksparser.KickStart(str(wks))
    names = [(p.part_name, p.mountpoint, p.source) for p in layout.partitions]
    values = foosball_values()
    expected_tail = [
        (values["FOOSBALL_PART_BOOT"], None, "bootimg-partition"),
        (values["FOOSBALL_PART_ROOTFS_A"], "/", "rootfs"),
        (values["FOOSBALL_PART_ROOTFS_B"], None, "rootfs"),
        (values["FOOSBALL_PART_DATA"], None, None),
    ]
    boot = [row["part_name"] for row in table_parts(board)]
    problems = []
    if [name for name, _, _ in names[: len(boot)]] != boot:
        problems.append(f"SoC partitions {names[: len(boot)]} != {boot}")
    if names[len(boot) :] != expected_tail:
        problems.append(f"foosball partitions {names[len(boot) :]} != {expected_tail}")
    if layout.bootloader.ptable != "gpt":
        problems.append(f"partition table {layout.bootloader.ptable}")
    return "; ".join(problems) or None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bsp", action="append", default=[], metavar="REPO=PATH")
    parser.add_argument("--oe-core", type=Path)
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="BOARD=FILE",
        help="`bitbake -e foosball-image-<board>` output of an ST board",
    )
    parser.add_argument(
        "--boot-env",
        action="append",
        default=[],
        metavar="BOARD=FILE",
        help="`bitbake -e foosball-boot-script` output of a board",
    )
    args = parser.parse_args()
    checkouts = {name: Path(path) for name, _, path in (b.partition("=") for b in args.bsp)}
    results: list[tuple[str, str | None]] = []
    for board in BOARDS:
        repo = boot_table()[board]["bsp_repo"]
        if repo in checkouts:
            results.append(
                (
                    f"{board}: table == {repo} {boot_table()[board]['bsp_wks']}",
                    check_bsp(board, checkouts[repo]),
                )
            )
    for board, _, path in (e.partition("=") for e in args.env):
        results.append(
            (f"{board}: table == bitbake -e ({Path(path).name})", check_st_env(board, Path(path)))
        )
    for board, _, path in (e.partition("=") for e in args.boot_env):
        results.append(
            (
                f"{board}: boot script device tree == bitbake -e ({Path(path).name})",
                check_boot_env(board, Path(path)),
            )
        )
    if args.oe_core:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            for board in BOARDS:
                results.append(
                    (
                        f"{board}: wic ksparser reads {wks_path(board).name}",
                        check_wic(board, args.oe_core, Path(tmp)),
                    )
                )
    for name, problem in results:
        print(("FAIL " if problem else "ok   ") + name + (f"\n    {problem}" if problem else ""))
    failed = sum(1 for _, problem in results if problem)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
