"""The acceptance suites' failure text names the drive emulator's stalls as its `timing`
gives them: [end, length, on a CPU, waiting for one] (a pair-shaped reading raised
ValueError in the fault matrix's slow-stop note and hid the case's own failure)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "acceptance"))

from rig_keywords.context import emulator_stalls

TIMING = {"stalls": [[10.000, 0.134, 0.001, 0.134],  # held off: runnable, no CPU
                     [10.200, 0.004, 0.004, 0.0],  # short
                     [9.000, 0.050, 0.050, 0.0]]}  # long before


def test_a_stall_near_the_moment_is_named_with_where_its_time_went() -> None:
    assert emulator_stalls(TIMING, 10.05, before_s=0.5, after_s=0.1, over_s=0.005) == [
        "134.0 ms ending -50.0 ms (ran 1.0, runnable 134.0)"]


def test_short_and_distant_stalls_are_left_out_or_kept_as_asked() -> None:
    assert emulator_stalls(TIMING, 10.15, before_s=0.1, after_s=0.1, over_s=0.0) == [
        "4.0 ms ending +50.0 ms (ran 4.0, runnable 0.0)"]
    assert emulator_stalls({}, 10.0, before_s=1.0, after_s=1.0, over_s=0.0) == []
