"""A process's descendants, killed when that process dies, however it dies.

A SIGKILLed `foosball sim tournament` takes its local Ray's servers with it (Ray sets their
parent-death signal) and its workers notice (`engine._watch_driver`). Ray's per-node agents
(`ray::DashboardAgent`, `ray::RuntimeEnvAgent`) are the raylet's children, though: orphaned,
each spends a minute trying to report the raylet's death to the dead GCS before it exits
(Ray 2.60, `process_watcher.report_raylet_error_logs`: a 60 s timeout). The reaper, started
beside Ray, remembers every descendant of the process that started it and kills those still
running once that process is gone.

    reaper = start()   # before Ray starts
    ...
    stop(reaper)       # after ray.shutdown(): gone without killing anything
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil

from foosball.processes import die_with_parent

LOOK_S = 0.5  # how often the descendants are listed; Ray starts its agents within a second


def start() -> subprocess.Popen[bytes]:
    """A reaper for this process's descendants."""
    return subprocess.Popen([sys.executable, "-m", "foosball.lab.reaper", str(os.getpid())],
                            stdin=subprocess.DEVNULL, preexec_fn=_as_reaper)


def _as_reaper() -> None:
    """In the reaper before exec: SIGTERM when the parent dies; deaf to a terminal's Ctrl-C
    and hang-up, which the parent answers by stopping the reaper itself (ignored signals stay
    ignored across exec, so no window while Python starts)."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def stop(reaper: subprocess.Popen[bytes]) -> None:
    """Stop a reaper whose process is not dying: SIGKILL leaves it no turn to reap."""
    reaper.kill()
    reaper.wait()


def reap(parent: int) -> list[int]:
    """Watch `parent` until it is gone, then kill the descendants it had that still run;
    returns their pids."""
    gone: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: gone.append(True))  # die_with_parent's signal
    seen: dict[int, float] = {}  # pid -> its start time: a reused pid is someone else
    me = os.getpid()
    while not gone and os.getppid() == parent:
        try:
            for child in psutil.Process(parent).children(recursive=True):
                if child.pid != me:
                    seen.setdefault(child.pid, child.create_time())
        except psutil.Error:
            break  # gone between the check and the look
        time.sleep(LOOK_S)
    killed = []
    for pid, started in seen.items():
        try:
            process = psutil.Process(pid)
            if process.create_time() == started:
                process.kill()
                killed.append(pid)
        except psutil.Error:
            continue  # gone already
    return killed


if __name__ == "__main__":
    reap(int(sys.argv[1]))
