"""A simulated U-Boot environment with boot counting: the power-on side.

The same contract as meta-foosball's boot.cmd.in and RAUC's U-Boot backend: BOOT_ORDER
lists the slots to try, BOOT_x_LEFT the attempts left. The tests' simulated board calls
`choose_boot_slot` at each power-on, as U-Boot runs its boot script; RAUC's side (its
`bootloader-custom-backend`: get-primary, set-primary, get-state, set-state) is
uboot_env.sh, a shell script, so RAUC's many calls start fast whatever python3 is.
The environment is a file of KEY=VALUE lines.
"""

from __future__ import annotations

import os
from pathlib import Path

ATTEMPTS = 3
SLOTS = ("A", "B")


def read_env(path: Path) -> dict[str, str]:
    env = {}
    if path.exists():
        for line in path.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep:
                env[key] = value
    return env


def write_env(path: Path, env: dict[str, str]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(f"{k}={v}\n" for k, v in sorted(env.items())))
    os.replace(tmp, path)  # a power cut leaves the old environment or the new one


def order(env: dict[str, str]) -> list[str]:
    return env.get("BOOT_ORDER", " ".join(SLOTS)).split()


def left(env: dict[str, str], slot: str) -> int:
    return int(env.get(f"BOOT_{slot}_LEFT", str(ATTEMPTS)))


def choose_boot_slot(path: Path) -> str:
    """What U-Boot's boot script does at power-on: the first slot of BOOT_ORDER with
    attempts left, one attempt spent; none left: every counter reset, as the script does
    before it resets the board."""
    env = read_env(path)
    env.setdefault("BOOT_ORDER", " ".join(SLOTS))
    for _ in range(2):
        for slot in order(env):
            if left(env, slot) > 0:
                env[f"BOOT_{slot}_LEFT"] = str(left(env, slot) - 1)
                write_env(path, env)
                return slot
        for slot in SLOTS:
            env[f"BOOT_{slot}_LEFT"] = str(ATTEMPTS)
    raise RuntimeError(f"no slot to boot in {env}")
