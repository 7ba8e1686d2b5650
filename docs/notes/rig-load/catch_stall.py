"""Flight recorder for the booted rig: sched and softirq events in tracefs (overwrite mode), stopped
when the drive emulator's `timing` shows a new stall over LIMIT s (or 5 stale frames) after the
first 30 s. Run as root beside a suite: catch_stall.py LIMIT SECONDS; the trace is then in
/tmp/fs/caught.trace. Needs tracefs mounted (mount -t tracefs nodev /sys/kernel/tracing)."""
import glob, json, socket, sys, time, os, subprocess
T = "/sys/kernel/tracing"
def w(p, v): open(f"{T}/{p}", "w").write(v)
limit = float(sys.argv[1]); end = time.monotonic() + float(sys.argv[2])
w("tracing_on", "0"); w("trace", ""); w("buffer_size_kb", "30000")
for e in ("sched/sched_switch", "sched/sched_wakeup", "sched/sched_waking", "sched/sched_migrate_task", "irq/softirq_entry", "irq/softirq_exit"):
    w(f"events/{e}/enable", "1")
w("trace_clock", "mono"); w("tracing_on", "1")
seen = set()
def timing():
    for path in glob.glob("/tmp/fb-acceptance-*/emulator.sock"):
        try:
            s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(path)
            s.sendall(b"timing\n"); data = b""
            while not data.endswith(b"\n"):
                c = s.recv(65536)
                if not c: break
                data += c
            return json.loads(data)
        except Exception:
            pass
first = True
last_stale = None
started = time.monotonic()
while time.monotonic() < end:
    time.sleep(0.5)
    t = timing()
    if not t: continue
    big = [s for s in t["stalls"] if s[1] > limit]
    if first or time.monotonic() - started < 30:
        seen.update(tuple(s) for s in big); first = False; last_stale = t["stale_frames"]; continue
    new = [s for s in big if tuple(s) not in seen]
    stale = t["stale_frames"] - last_stale if last_stale is not None else 0
    last_stale = t["stale_frames"]
    if stale >= 5:
        new.append(("stale", stale))
    if new:
        w("tracing_on", "0")
        print("caught", new, "at", time.monotonic(), flush=True)
        subprocess.run(f"cat {T}/trace > /tmp/fs/caught.trace", shell=True)
        json.dump(t, open("/tmp/fs/caught-timing.json", "w"))
        break
w("tracing_on", "0")
for e in ("sched", "irq"):
    w(f"events/{e}/enable", "0")
