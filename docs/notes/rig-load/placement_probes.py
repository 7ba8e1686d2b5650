#!/usr/bin/env python3
"""Which threads does the host hold off: one probe process per (priority, placement), each
waking every 5 ms and recording how late it woke. Run beside a test run; SIGTERM (or Ctrl-C)
prints, per probe, the wakes late by more than 10/25/50/100 ms and the worst five with their
CLOCK_MONOTONIC times (the drive emulator logs its stalls on the same clock).

    python3 placement_probes.py [PRIORITY ...]      # default: 70 99

Each priority runs three ways: pinned to CPU 0, pinned to CPU 1, free to move.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time

PERIOD_S = 0.005


def probe(priority: int, cpu: int | None, out: multiprocessing.Queue) -> None:
    parent = os.getppid()  # a probe outlives no killed parent (one of mine ran on for an hour)
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    late: list[tuple[float, float]] = []
    wakes = 0
    due = time.monotonic() + PERIOD_S
    while not stop and os.getppid() == parent:
        time.sleep(max(0.0, due - time.monotonic()))
        now = time.monotonic()
        wakes += 1
        if now - due > 0.010:
            late.append((now - due, now))
        due = max(due + PERIOD_S, now)
    out.put((priority, cpu, wakes, late))


def main() -> None:
    priorities = [int(p) for p in sys.argv[1:]] or [70, 99]
    out: multiprocessing.Queue = multiprocessing.Queue()
    probes = [multiprocessing.Process(target=probe, args=(p, cpu, out))
              for p in priorities for cpu in (0, 1, None)]
    for p in probes:
        p.start()
    done = []
    signal.signal(signal.SIGTERM, lambda *_: done.append(1))
    signal.signal(signal.SIGINT, lambda *_: done.append(1))
    while not done:
        time.sleep(0.2)
    for p in probes:
        os.kill(p.pid, signal.SIGTERM)
    for _ in probes:
        priority, cpu, wakes, late = out.get()
        where = "free" if cpu is None else f"CPU {cpu}"
        counts = " ".join(f">{b}ms:{sum(1 for s, _ in late if s > b / 1e3)}"
                          for b in (10, 25, 50, 100))
        worst = ", ".join(f"{s * 1e3:.0f} ms at {t:.3f}"
                          for s, t in sorted(late, reverse=True)[:5])
        print(f"FIFO {priority} {where}: {wakes} wakes, {counts}; worst {worst}")
    for p in probes:
        p.join()


if __name__ == "__main__":
    main()
