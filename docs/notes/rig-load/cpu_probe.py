"""A FIFO 99 thread pinned to CPU, woken every 5 ms for SECONDS: how many wakes were late by
more than 10 and 25 ms, and the first 30 (late ms, s from start). Usage: cpu_probe.py CPU SECONDS"""
import os, time, sys, json
cpu = int(sys.argv[1]); secs = float(sys.argv[2])
os.sched_setaffinity(0, {cpu})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
t0 = time.monotonic(); end = t0 + secs
due = t0 + 0.005; late = []
while time.monotonic() < end:
    time.sleep(max(0, due - time.monotonic()))
    now = time.monotonic(); l = (now - due) * 1e3
    if l > 10: late.append((round(l), round(now - t0, 1)))
    due = max(due + 0.005, now)
print(f"cpu{cpu}: >10ms {len(late)}, >25ms {sum(1 for l,_ in late if l>25)}: {late[:30]}")
