"""The wks layouts read by wic's own kickstart parser (needs an openembedded-core tree).

Set FOOSBALL_OE_CORE to an openembedded-core checkout (scarthgap) to run it; CI has
none, so there it is skipped. The variables bitbake would expand come from
foosball-partitions.inc and a few stand-ins for BSP file names.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OE_CORE = os.environ.get("FOOSBALL_OE_CORE")
PARTITIONS_INC = REPO / "meta-foosball/conf/distro/include/foosball-partitions.inc"
BSP_STAND_INS = {
    "DEPLOY_DIR_IMAGE": "/deploy",
    "FOOSBALL_ST_DT": "stm32mp157f-dk2",
    "SPL_BINARY": "idbloader.img",
    "UBOOT_SUFFIX": "itb",
    "RK_UBOOT_ENV": "",
}

pytestmark = pytest.mark.skipif(
    not OE_CORE, reason="FOOSBALL_OE_CORE (an openembedded-core checkout) is not set"
)


def expanded_wks(board: str, tmp_path: Path) -> Path:
    inc = PARTITIONS_INC.read_text()
    values = dict(re.findall(r'^(FOOSBALL_\w+) \??= "([^"$]*)"$', inc, re.MULTILINE))
    values |= BSP_STAND_INS
    text = (REPO / "image-config" / board / f"foosball-{board}.wks.in").read_text()
    text = re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], text)
    wks = tmp_path / f"{board}.wks"
    wks.write_text(text)
    return wks


@pytest.mark.parametrize("board", ["pole", "vision", "strategy"])
def test_wic_reads_boot_two_slots_and_data(board: str, tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(OE_CORE) / "scripts/lib"))
    import wic.ksparser as ksparser

    ksparser.get_bitbake_var = lambda *args, **kwargs: ""  # no bitbake here
    layout = ksparser.KickStart(str(expanded_wks(board, tmp_path)))
    ours = [(p.part_name, p.mountpoint, p.source) for p in layout.partitions][-4:]
    assert ours == [
        ("boot", None, "bootimg-partition"),
        ("rootfsA", "/", "rootfs"),
        ("rootfsB", None, "rootfs"),
        ("data", None, None),
    ]
    assert layout.bootloader.ptable == "gpt"
