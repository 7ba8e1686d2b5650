"""The runtime's real-time threads, in a child process (making pytest's own threads
real-time would change every later test): root only, skipped elsewhere with the reason."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root")

CHILD = textwrap.dedent("""
    import os, threading
    from foosball.runtime import WORK_PRIORITY, AgentRuntime, Outputs
    from foosball.wire.catalogue import Agent
    from foosball.wire.codec import WireCodec
    from foosball.wire.endpoint import Endpoint
    from foosball.wire.transports.memory import MemoryHub, MemoryTransport

    class Core:
        agent = Agent.GAME_PANEL
        def step(self, inputs):
            return Outputs()

    started = threading.Event()
    hold = threading.Event()
    def server():  # a panel's web server, started before the runtime runs
        started.set()
        hold.wait()
    web = threading.Thread(target=server, daemon=True)
    web.start()
    started.wait()
    codec = WireCodec(bytes(range(32)), Agent.GAME_PANEL)
    endpoint = Endpoint(MemoryTransport(MemoryHub()), codec)
    turns = []
    AgentRuntime(Core(), endpoint, health=None).run(
        should_stop=lambda: turns.append(1) or len(turns) > 2, realtime=True)
    policy = os.sched_getscheduler(web.native_id)
    priority = os.sched_getparam(web.native_id).sched_priority
    print(policy == os.SCHED_FIFO, priority == WORK_PRIORITY)
""")


def test_every_thread_started_before_a_realtime_run_becomes_real_time():
    # The panel's web server holds the interpreter lock at times: left at the ordinary
    # policy it was preempted with the lock in hand and the heartbeats stalled 58 ms.
    result = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]


REALTIME_THREADS = textwrap.dedent("""
    import os, threading
    from foosball.realtime import realtime_threads

    hold = threading.Event()
    writer = threading.Thread(target=hold.wait, daemon=True)  # the log writer: ordinary
    writer.start()
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))  # the motor driver's cycle
    io = threading.Thread(target=lambda: (os.sched_setscheduler(
        0, os.SCHED_FIFO, os.sched_param(50)), hold.wait()), daemon=True)
    io.start()
    while os.sched_getscheduler(io.native_id) != os.SCHED_FIFO:
        pass
    realtime_threads(20)
    print(*(f"{os.sched_getscheduler(t) == os.SCHED_FIFO}:{os.sched_getparam(t).sched_priority}"
            for t in (0, writer.native_id, io.native_id)))
""")


def test_a_thread_left_ordinary_becomes_real_time_when_the_caller_already_is():
    # The motor driver's cycle runs at 99 before the runtime does, and the runtime leaves a
    # real-time caller's threads alone: its log writer (started first) stayed ordinary, and
    # could hold the interpreter lock the cycle needs while the rig's real-time load kept it
    # off the CPU. `foosball agent run` makes it real-time; one already real-time keeps its
    # own priority, and so does the caller.
    result = subprocess.run([sys.executable, "-c", REALTIME_THREADS], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True:99", "True:20", "True:50"]
