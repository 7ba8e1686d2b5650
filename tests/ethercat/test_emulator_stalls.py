"""The drive emulator's stalls say where the time went: on a CPU, waiting for one, or
neither (blocked, stopped), so a lost frame on the rig names its cause."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.ethercat.netns import EmulatorProcess, needs_netns

STOPPED_S = 0.15


@needs_netns
def test_a_stall_while_stopped_is_counted_as_neither_computing_nor_waiting_for_a_cpu(
        emulator_factory: object) -> None:
    emulator: EmulatorProcess = emulator_factory()  # type: ignore[operator]
    os.kill(emulator.pid, signal.SIGSTOP)
    time.sleep(STOPPED_S)
    os.kill(emulator.pid, signal.SIGCONT)
    stalls = emulator.command("timing")["stalls"]
    assert all(len(stall) == 4 for stall in stalls), stalls  # type: ignore[union-attr]
    _end, length, ran, waited = max(stalls, key=lambda s: s[1])  # type: ignore[type-var]
    assert length > STOPPED_S - 0.02, stalls
    # a stopped task is neither running nor runnable; a few ms either side for its own turn
    assert ran < 0.02 and waited < 0.02, stalls


HOG = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(90))  # above the emulator's 70
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    pass
"""


@needs_netns
def test_a_stall_behind_a_higher_priority_thread_is_counted_as_waiting_for_a_cpu(
        emulator_factory: object) -> None:
    emulator: EmulatorProcess = emulator_factory(extra=("--cpu", "0"))  # type: ignore[operator]
    subprocess.run([sys.executable, "-c", HOG, "0", str(STOPPED_S)], check=True)
    stalls = emulator.command("timing")["stalls"]
    _end, length, ran, waited = max(stalls, key=lambda s: s[1])  # type: ignore[type-var]
    assert length > STOPPED_S - 0.02, stalls
    assert waited > STOPPED_S - 0.03 and ran < 0.02, stalls
