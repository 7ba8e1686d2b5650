"""Waits with deadlines (no keyword sleeps for a fixed time to let something happen) and the
observation windows a measurement needs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

# How often a wait looks. The keywords judge arrival stamps (the observer's, the table's),
# never the moment they look, so looking more often only costs CPU: at 10 ms, re-reading a
# game's history took a third of a core. That process is an ordinary one on the rig's host,
# and ordinary tasks starved of their 50 ms a second are run by the kernel ahead of every
# real-time thread on that CPU (docs/notes/rig-load.md, "The fair server"): holes of up to
# 50 ms once a second in the agents' timing, which failed Play in CI.
POLL_S = 0.1


def wait_until(found: Callable[[], Any], within_s: float, failure: Callable[[], str]) -> Any:
    """`found()`'s first truthy value within `within_s`, or AssertionError(failure())."""
    deadline = time.monotonic() + within_s
    while True:
        value = found()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(failure())
        time.sleep(POLL_S)


def hold_for(broken: Callable[[], str], for_s: float) -> None:
    """Watch for `for_s`: fail as soon as `broken()` names something ("" while it holds)."""
    deadline = time.monotonic() + for_s
    while True:
        problem = broken()
        if problem:
            raise AssertionError(problem)
        if time.monotonic() > deadline:
            return
        time.sleep(POLL_S)


def seconds(text: str | float) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"expected a number of seconds, not {text!r}") from None
