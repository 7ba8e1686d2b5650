"""A FIFO 99 thread pinned to CPU 0, woken every 5 ms for SECONDS: prints its wakes late by
more than 5 ms (late ms, monotonic s). Usage: hole_probe.py SECONDS"""
import os, time, sys
os.sched_setaffinity(0, {0})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
end = time.monotonic() + float(sys.argv[1])
due = time.monotonic() + 0.005
worst = []
while time.monotonic() < end:
    time.sleep(max(0, due - time.monotonic()))
    now = time.monotonic(); late = (now - due) * 1e3
    if late > 5: worst.append((round(late, 1), round(now, 2)))
    due = max(due + 0.005, now)
print("late>5ms:", worst[:20], len(worst))
