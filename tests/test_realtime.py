"""foosball.realtime's reports: the policy a thread runs at and a process's age, which an
agent's start-up line gives (how long a restart took, and whether it ran real-time)."""

from __future__ import annotations

import os
import threading

import pytest

from foosball.realtime import scheduling, seconds_since_process_start

# /proc/self/stat of a process whose name holds ") " (the name is read up to the last ")");
# its start time, field 22, is 1500 ticks after boot.
STAT = "4242 (my ) agent) S 1 4242 4242 0 -1 4194560 500 0 0 0 12 3 0 0 20 0 3 0 1500 1 2 3"


def test_the_process_age_is_read_past_a_name_with_parentheses():
    ticks = os.sysconf("SC_CLK_TCK")
    assert seconds_since_process_start(STAT, now=1500 / ticks + 2.5) == pytest.approx(2.5)


def test_this_process_began_before_now():
    assert 0.0 <= seconds_since_process_start() < 24 * 3600


def test_the_default_policy_reads_sched_other():
    if os.sched_getscheduler(0) != os.SCHED_OTHER:
        pytest.skip("this test process itself runs under a real-time policy")
    assert scheduling() == "SCHED_OTHER"


@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root (CI runs as root)")
def test_a_real_time_thread_reads_its_policy_and_priority():
    seen: list[str] = []

    def report() -> None:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(7))
        seen.append(scheduling())

    thread = threading.Thread(target=report)
    thread.start()
    thread.join()
    assert seen == ["SCHED_FIFO 7"]
