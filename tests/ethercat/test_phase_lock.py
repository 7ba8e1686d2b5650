"""The master's cycle steered to the drives' reference clock (distributed clocks): a pure
controller, fed the reference time each frame brings back."""

from __future__ import annotations

import pytest

from foosball.ethercat.dc import PhaseLock

CYCLE_S = 0.005


def run(lock: PhaseLock, drift_ppm: float, start_phase_ns: int, cycles: int) -> list[float]:
    """The master wakes every cycle (plus the lock's correction) on its own clock; the
    reference clock runs `drift_ppm` faster. The phase error of each frame."""
    master_s, errors = 0.0, []
    for _ in range(cycles):
        reference_ns = round(10**18 + start_phase_ns + master_s * 1e9 * (1 + drift_ppm * 1e-6))
        errors.append(lock.error_ns(reference_ns))
        master_s += CYCLE_S + lock.correction_s(reference_ns)
    return errors


@pytest.mark.parametrize("drift_ppm", [-80.0, 0.0, 50.0])
@pytest.mark.parametrize("start_phase_ns", [0, 1_200_000, 4_900_000])
def test_frames_settle_half_a_cycle_from_sync0_whatever_the_drift(
        drift_ppm: float, start_phase_ns: int) -> None:
    errors = run(PhaseLock(CYCLE_S), drift_ppm, start_phase_ns, 3000)
    assert max(abs(e) for e in errors[-500:]) < 1_000, errors[-5:]  # within 1 us


def test_a_cycle_is_never_changed_by_more_than_the_limit() -> None:
    lock = PhaseLock(CYCLE_S, limit_fraction=0.05)
    # the worst phase (a quarter cycle off) with a wound-up integral
    steps = [lock.correction_s(10**18 + 1_250_000) for _ in range(100)]
    assert all(abs(s) <= 0.05 * CYCLE_S + 1e-12 for s in steps)


def test_without_a_reference_time_the_cycle_is_left_alone() -> None:
    lock = PhaseLock(CYCLE_S)
    assert lock.correction_s(0) == 0.0
    assert lock.percentiles_us() == (0.0, 0.0, 0.0)


def test_the_figures_count_from_the_lock_and_the_pull_in_in_cycles() -> None:
    lock = PhaseLock(CYCLE_S)
    run(lock, 0.0, 0, 600)  # the first frame half a cycle off
    assert lock.cycles_to_lock is not None and 5 < lock.cycles_to_lock < 60
    _, _, p99 = lock.percentiles_us()
    assert p99 <= 0.05 * CYCLE_S * 1e6  # nothing from before the lock
