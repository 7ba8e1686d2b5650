"""What else the machine was doing: for the messages of tests that fail when a process is
slow to answer or to stop (on a 2-core machine, usually something else's fault)."""

from __future__ import annotations

import contextlib
import os
import time

import psutil

POLICIES = {os.SCHED_FIFO: "FIFO", os.SCHED_RR: "RR"}


def busiest_processes(count: int = 12, sample_s: float = 0.5) -> str:
    """The processes using the most CPU over `sample_s`, with their real-time priority."""
    processes = list(psutil.process_iter(["pid", "cmdline"]))
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.cpu_percent(None)  # starts each process's measurement
    time.sleep(sample_s)  # a diagnostic on a failure path, not a test's timing
    rows = []
    for process in processes:
        try:
            cpu = process.cpu_percent(None)
            policy = os.sched_getscheduler(process.pid)
            priority = os.sched_getparam(process.pid).sched_priority
        except (psutil.Error, OSError):
            continue
        scheduling = f"{POLICIES[policy]} {priority}" if policy in POLICIES else "other"
        command = " ".join(process.info["cmdline"] or [])[:120]
        rows.append((cpu, f"{process.pid:7d} {cpu:5.1f}% {scheduling:8s} {command}"))
    rows.sort(key=lambda row: row[0], reverse=True)
    return "\n".join(line for _, line in rows[:count])
