"""Real-time plumbing for a cyclic loop: memory locking, SCHED_FIFO, no GC pauses, and
the wake-up statistics. Each step the system refuses is logged and skipped: the loop still
runs, only with less timing margin (docs/notes/issue-5.md has the figures for both)."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MCL_CURRENT, MCL_FUTURE = 1, 2


def lock_memory() -> bool:
    """mlockall: no page faults in the cycle. False (and logged) when refused."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.mlockall(MCL_CURRENT | MCL_FUTURE) == 0:
        return True
    log.warning("mlockall refused (errno %d): pages may fault in the cycle", ctypes.get_errno())
    return False


def scheduling() -> str:
    """The calling thread's policy as a person reads it: "SCHED_FIFO 20", "SCHED_OTHER"."""
    policy = os.sched_getscheduler(0)
    names = {os.SCHED_OTHER: "SCHED_OTHER", os.SCHED_FIFO: "SCHED_FIFO", os.SCHED_RR: "SCHED_RR"}
    name = names.get(policy, f"policy {policy}")
    if policy in (os.SCHED_FIFO, os.SCHED_RR):
        return f"{name} {os.sched_getparam(0).sched_priority}"
    return name


def seconds_since_process_start(stat: str | None = None, now: float | None = None) -> float:
    """Since this process began (exec, not our first line of Python): /proc/self/stat's
    start time, in clock ticks since boot, against CLOCK_BOOTTIME."""
    if stat is None:
        with open("/proc/self/stat") as own:
            stat = own.read()
    started = int(stat.rpartition(")")[2].split()[19]) / os.sysconf("SC_CLK_TCK")
    now = now if now is not None else time.clock_gettime(time.CLOCK_BOOTTIME)
    return now - started


def set_fifo(priority: int | None = None,
             setscheduler: Callable[[int, int, Any], None] = os.sched_setscheduler,
             thread_id: int = 0) -> bool:
    """SCHED_FIFO (top priority unless given) for the calling thread (or the thread
    `thread_id` of this process); False and logged when the system refuses, and the cycle
    then runs under the default policy."""
    try:
        top = os.sched_get_priority_max(os.SCHED_FIFO) if priority is None else priority
        setscheduler(thread_id, os.SCHED_FIFO, os.sched_param(top))
        return True
    except (PermissionError, OSError) as exc:
        log.warning("SCHED_FIFO refused (%s): the cycle runs with the default policy", exc)
        return False


def realtime_threads(priority: int) -> None:
    """SCHED_FIFO `priority` for every other thread of this process still at the ordinary
    policy (one already real-time keeps its own). A thread that holds the interpreter lock
    must not be preempted by ordinary processes while a real-time one waits for the lock."""
    for thread in threading.enumerate():
        native = thread.native_id
        if native is None or thread is threading.current_thread():
            continue
        try:
            if os.sched_getscheduler(native) == os.SCHED_FIFO:
                continue
        except OSError:  # it ended meanwhile
            continue
        set_fifo(priority, thread_id=native)


def quiet_garbage_collector() -> None:
    """No collector pauses in the loop: what exists now is frozen, automatic collection off.
    The loop allocates no reference cycles, so reference counting frees everything."""
    gc.collect()
    gc.freeze()
    gc.disable()


def prepare_realtime(priority: int | None = None) -> dict[str, bool]:
    """mlockall, SCHED_FIFO at the top priority for the calling thread, no GC pauses."""
    result = {"mlockall": lock_memory(), "sched_fifo": set_fifo(priority)}
    quiet_garbage_collector()
    result["gc_disabled"] = True
    sys.setswitchinterval(0.0005)  # if another thread holds the GIL, hand it back quickly
    return result


class CycleStats:
    """Wake-up lateness of every cycle, kept in a preallocated ring (no allocation)."""

    def __init__(self, capacity: int) -> None:
        self.lateness = np.zeros(capacity, dtype=np.float64)
        self.count = 0

    def add(self, late_s: float) -> None:
        self.lateness[self.count % len(self.lateness)] = late_s
        self.count += 1

    def window(self) -> np.ndarray:
        return self.lateness[:min(self.count, len(self.lateness))]

    def percentiles(self) -> dict[str, float]:
        data = self.window()
        if data.size == 0:
            return {"p50": 0.0, "p99": 0.0, "max": 0.0}
        return {"p50": float(np.percentile(data, 50)), "p99": float(np.percentile(data, 99)),
                "max": float(data.max())}
