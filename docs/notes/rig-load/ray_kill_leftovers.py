#!/usr/bin/env python3
"""How long a SIGKILLed tournament's Ray processes live on: starts
`foosball sim tournament --jobs 2` (40 matches), waits, SIGKILLs it, then lists every Ray
process (a `ray::` name, or a command under site-packages/ray) once a second until none is
left. From the repository root:

    PYTHONPATH=python .venv/bin/python docs/notes/rig-load/ray_kill_leftovers.py 15
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil


def ray_processes() -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        command = " ".join(process.info["cmdline"] or [])
        if (process.info["name"].startswith("ray::") or "site-packages/ray" in command
                or "foosball.cli sim" in command):
            found.append(process)
    return found


def main() -> None:
    wait_s = float(sys.argv[1]) if len(sys.argv) > 1 else 15.0
    tournament = subprocess.Popen(
        [sys.executable, "-m", "foosball.cli", "sim", "tournament", "--robot", "improved",
         "--opponent", "club", "--matches", "40", "--jobs", "2", "--duration", "120",
         "--no-progress"], start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env=dict(os.environ))
    time.sleep(wait_s)
    for process in ray_processes():
        print(process.pid, process.ppid(), process.name())
    tournament.send_signal(signal.SIGKILL)
    tournament.wait()
    killed = time.monotonic()
    while True:
        left = ray_processes()
        print(f"{time.monotonic() - killed:5.1f} s after the kill:",
              [(p.pid, p.name()) for p in left], flush=True)
        if not left:
            break
        time.sleep(1.0)


if __name__ == "__main__":
    main()
