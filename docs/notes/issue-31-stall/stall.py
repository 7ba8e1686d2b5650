"""Freeze the EtherCAT emulator and motor driver processes at random (SIGSTOP for 3-12 ms,
every 20-400 ms), as VM steal or a host stall does: late and lost mailbox answers."""
import os, random, signal, subprocess, sys, time
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
patterns = ["ethercat emulate", "agent run motor_driver"]
while True:
    pids = []
    for p in patterns:
        out = subprocess.run(["pgrep", "-f", p], capture_output=True, text=True).stdout
        pids += [int(x) for x in out.split()]
    pids = [p for p in pids if p != os.getpid()]
    if pids:
        victims = random.sample(pids, k=random.randint(1, len(pids)))
        for p in victims:
            try: os.kill(p, signal.SIGSTOP)
            except ProcessLookupError: pass
        time.sleep(random.uniform(0.003, 0.012))
        for p in victims:
            try: os.kill(p, signal.SIGCONT)
            except ProcessLookupError: pass
    time.sleep(random.uniform(0.02, 0.4))
