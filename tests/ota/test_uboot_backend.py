"""The simulated U-Boot backend RAUC runs (uboot_env.sh) against the boot-counting contract
that U-Boot's side (uboot_env.choose_boot_slot) follows: one environment, both sides."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.ota.rauc_env import UBOOT_BACKEND
from tests.ota.uboot_env import choose_boot_slot, read_env

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh")


def backend(env_file: Path, *args: str) -> str:
    result = subprocess.run([str(UBOOT_BACKEND), *args], capture_output=True, text=True,
                            env={"FOOSBALL_UBOOT_ENV": str(env_file), "FOOSBALL_BOOTED": "A",
                                 "PATH": os.defpath})  # no python3 needed on the PATH
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip())
    return result.stdout.strip()


def test_an_install_and_its_marks_as_rauc_writes_them_steer_the_next_power_on(
        tmp_path: Path) -> None:
    env = tmp_path / "uboot.env"
    env.write_text("BOOT_ORDER=A B\nBOOT_A_LEFT=3\nBOOT_B_LEFT=3\nOTHER=kept=as is\n")
    assert choose_boot_slot(env) == "A"
    assert [backend(env, "get-primary"), backend(env, "get-current")] == ["A", "A"]
    assert [backend(env, "get-state", s) for s in "AB"] == ["good", "good"]
    backend(env, "set-state", "A", "good")  # the boot judged healthy: attempts back to 3
    backend(env, "set-state", "B", "bad")  # RAUC, before it writes B
    assert (backend(env, "get-state", "B"), read_env(env)["BOOT_ORDER"]) == ("bad", "A")
    backend(env, "set-primary", "B")  # RAUC, once B is written
    assert read_env(env) == {"BOOT_ORDER": "B A", "BOOT_A_LEFT": "3", "BOOT_B_LEFT": "3",
                             "OTHER": "kept=as is"}
    assert choose_boot_slot(env) == "B"  # the next power-on tries the new slot
    assert backend(env, "get-primary") == "B"
    assert (tmp_path / "uboot.writes").read_text().splitlines() == [
        "set-state A good", "set-state B bad", "set-primary B"]


def test_a_slot_out_of_attempts_is_not_primary_and_bad_input_is_an_error(tmp_path: Path) -> None:
    env = tmp_path / "uboot.env"
    env.write_text("BOOT_ORDER=B A\nBOOT_A_LEFT=3\nBOOT_B_LEFT=0\n")
    assert backend(env, "get-primary") == "A"
    assert backend(env, "get-state", "B") == "bad"
    with pytest.raises(RuntimeError, match="no slot 'C'"):
        backend(env, "set-primary", "C")
    with pytest.raises(RuntimeError, match="neither good nor bad"):
        backend(env, "set-state", "A", "fine")
    with pytest.raises(RuntimeError, match="unknown command 'format'"):
        backend(env, "format")
    assert read_env(env)["BOOT_ORDER"] == "B A"  # nothing written by a refused call
