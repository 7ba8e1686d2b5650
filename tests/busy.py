"""What else the machine was doing: for the messages of tests that fail when a process is
slow to answer or to stop (on a 2-core machine, usually something else's fault)."""

from __future__ import annotations

import subprocess


def busiest_processes(count: int = 12) -> str:
    """The processes using the most CPU, with their scheduling class and real-time priority."""
    listing = subprocess.run(
        ["ps", "-eo", "pid,stat,cls,rtprio,ni,pcpu,etime,args", "--sort=-pcpu"],
        capture_output=True, text=True, check=False).stdout.splitlines()
    return "\n".join(line[:160] for line in listing[:count + 1])
