"""Each board's wks carries the SoC boot partitions its BSP deploys, at the pinned commit.

image-config/boot-files.toml holds what the BSP's own wks and machine conf say at the
commit the board's kas chain pins (partition names, sizes, types, UUIDs, file names);
these tests compare the kas pins and the wks files with it. Whether the table still
matches the BSP's files is checked against a checkout by check_with_upstream.py.
"""

from __future__ import annotations

import pytest
from wks import boot_parts, boot_table, kas_local_conf, kas_value, table_parts, wks_path

BOARDS = ("pole", "vision", "strategy")
ST_BOARDS = ("pole", "strategy")


@pytest.mark.parametrize("board", BOARDS)
def test_table_was_read_at_the_commit_and_machine_the_kas_file_pins(board: str) -> None:
    row = boot_table()[board]
    repo = kas_value(board, row["bsp_repo"])
    assert repo, f"{board}: kas chain has no repo {row['bsp_repo']}"
    assert repo["commit"] == row["bsp_commit"], f"{board}: BSP pin moved; re-read its wks"
    assert kas_value(board, "machine") == row["machine"]


@pytest.mark.parametrize("board", ST_BOARDS)
def test_st_board_device_tree_is_the_one_the_table_names(board: str) -> None:
    row = boot_table()[board]
    assert f'FOOSBALL_ST_DT = "{row["device_tree"]}"' in kas_local_conf(board)


@pytest.mark.parametrize("board", BOARDS)
def test_wks_boot_partitions_are_the_bsps(board: str) -> None:
    assert boot_parts(wks_path(board).read_text(), board) == table_parts(board)


def test_both_st_boards_use_one_st_bsp_commit() -> None:
    pins = {kas_value(board, "meta-st-stm32mp")["commit"] for board in ST_BOARDS}
    assert len(pins) == 1, pins


def test_comparison_rejects_the_stale_names_of_sts_own_wks() -> None:
    # ST's MP2 wks at the pinned commit names fsbl1 and tf-a-<dt>-sdcard.stm32, which the
    # MP25 boot ROM and the TF-A recipe do not use: such a wks must not pass.
    wks = wks_path("strategy").read_text()
    stale_name = wks.replace("part-name=fsbla1", "part-name=fsbl1")
    assert boot_parts(stale_name, "strategy") != table_parts("strategy")
    stale_file = wks.replace(
        "-${FOOSBALL_ST_DT}-optee-sdcard.stm32", "-${FOOSBALL_ST_DT}-sdcard.stm32"
    )
    assert boot_parts(stale_file, "strategy") != table_parts("strategy")
    without_uuid = wks.replace(" --uuid 4fd84c93-54ef-463f-a7ef-ae25ff887087", "")
    assert boot_parts(without_uuid, "strategy") != table_parts("strategy")
