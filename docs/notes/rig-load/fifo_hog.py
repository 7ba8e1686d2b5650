"""A SCHED_FIFO busy loop pinned to CPU 0 for SECONDS at PRIORITY: real-time load that leaves
that CPU's ordinary tasks nothing. Usage: fifo_hog.py SECONDS PRIORITY"""
import os, time, sys
os.sched_setaffinity(0, {0})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(sys.argv[2])))
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end: pass
