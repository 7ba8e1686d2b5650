#!/usr/bin/env python3
"""A simulated U-Boot environment with boot counting, as RAUC's custom bootloader backend.

The same contract as meta-foosball's boot.cmd.in and RAUC's U-Boot backend: BOOT_ORDER
lists the slots to try, BOOT_x_LEFT the attempts left. RAUC runs this file as
`bootloader-custom-backend` (get-primary, set-primary, get-state, set-state, get-current);
the tests' simulated board calls `choose_boot_slot` at each power-on, as U-Boot runs its
boot script. The environment is a file of KEY=VALUE lines named by FOOSBALL_UBOOT_ENV.
Plain Python, standard library only: RAUC runs it with the system's python3.
"""

from __future__ import annotations

import os
import sys
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


def backend(path: Path, command: str, args: list[str]) -> str:
    env = read_env(path)
    if command == "get-primary":
        return next((s for s in order(env) if left(env, s) > 0), "")
    if command == "get-state":
        return "good" if args[0] in order(env) and left(env, args[0]) > 0 else "bad"
    if command == "get-current":
        return os.environ.get("FOOSBALL_BOOTED", "")
    if command == "set-primary":
        slot = args[0]
        env["BOOT_ORDER"] = " ".join([slot] + [s for s in order(env) if s != slot])
        env[f"BOOT_{slot}_LEFT"] = str(ATTEMPTS)
    elif command == "set-state":
        slot, state = args
        if state == "good":
            env[f"BOOT_{slot}_LEFT"] = str(ATTEMPTS)
        else:
            env["BOOT_ORDER"] = " ".join(s for s in order(env) if s != slot)
            env[f"BOOT_{slot}_LEFT"] = "0"
    else:
        raise SystemExit(f"unknown command {command!r}")
    write_env(path, env)
    with path.with_suffix(".writes").open("a") as writes:  # what the tests check was written
        writes.write(" ".join([command, *args]) + "\n")
    return ""


if __name__ == "__main__":
    answer = backend(Path(os.environ["FOOSBALL_UBOOT_ENV"]), sys.argv[1], sys.argv[2:])
    if answer:
        print(answer)
