"""The reaper kills what a dead process left running, orphans included, and nothing when it
is stopped on purpose."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import psutil

# A parent that starts the reaper, then a child that leaves an orphan behind (as Ray's raylet
# leaves its agents when it dies): the orphan's pid on stdout, then the parent waits.
PARENT = """
import subprocess, sys, time
from foosball.lab import reaper
watcher = reaper.start()
subprocess.run([sys.executable, "-c", "import subprocess, time; "
    "print(subprocess.Popen(['sleep', '300']).pid, flush=True); "
    "time.sleep(1.5)"], check=True)  # the reaper looks every 0.5 s
if sys.argv[1] == "stop":
    reaper.stop(watcher)
    print("stopped", flush=True)
time.sleep(300)
"""


def start_parent(mode: str, tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE,
                              text=True)
    assert parent.stdout is not None
    orphan = int(parent.stdout.readline())
    return parent, orphan


def gone_within(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.05)
    return False


def test_an_orphan_is_killed_when_its_forebear_is_sigkilled(tmp_path: Path) -> None:
    parent, orphan = start_parent("kill", tmp_path)
    try:
        time.sleep(2.0)  # its own parent has exited: an orphan
        assert psutil.Process(orphan).ppid() != parent.pid
        parent.kill()
        parent.wait()
        assert gone_within(orphan, 10.0)
    finally:
        if psutil.pid_exists(orphan):
            psutil.Process(orphan).kill()


def test_a_stopped_reaper_kills_nothing(tmp_path: Path) -> None:
    parent, orphan = start_parent("stop", tmp_path)
    try:
        assert parent.stdout is not None
        assert parent.stdout.readline().strip() == "stopped"
        parent.kill()
        parent.wait()
        assert not gone_within(orphan, 2.0)
    finally:
        if psutil.pid_exists(orphan):
            psutil.Process(orphan).kill()
