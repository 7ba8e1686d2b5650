"""Which slave a working-counter loss comes from (issue 31): the motor driver's bus recovery
reads each slave's AL state and AL status code, and EtherCatStatus names the slaves out of OP
until the working counter is full again. Fake bus, clock passed in: no sleeps."""

from __future__ import annotations

from foosball.agents.motor_driver import lowest_al_state, out_of_op
from foosball.ethercat import layout as L
from foosball.ethercat.bus import SlaveInfo
from foosball.wire.catalogue import AlarmCode, EtherCatStatus, SlaveState
from tests.ethercat.test_motor_driver_core import Rig

SAFEOP_ERROR = int(L.AlState.SAFEOP) | L.AL_ERROR_FLAG
OP = int(L.AlState.OP)


def info(position: int, state: int, code: int = 0, **counters: object) -> SlaveInfo:
    return SlaveInfo(position, L.DEVICE_NAME, L.EXPECTED_IDENTITY, state, code,
                     "Sync manager watchdog" if code == L.AL_CODE_SM_WATCHDOG else "",
                     **counters)  # type: ignore[arg-type]


def last_status(rig: Rig) -> EtherCatStatus:
    return [m for m in rig.heard if isinstance(m, EtherCatStatus)][-1]


def test_the_status_names_the_slave_that_dropped_out_until_the_counter_is_full() -> None:
    rig = Rig()
    assert rig.run_until(rig.operational, 5.0)
    assert last_status(rig).slaves_not_op == ()
    # slave 6 (axis 5) stops exchanging process data; its watchdog takes it to SAFE-OP
    rig.bus.missing_working_counter = 3
    rig.bus.slave_faults = {6: (SAFEOP_ERROR, L.AL_CODE_SM_WATCHDOG)}
    rig.run_for(0.3)
    assert {a.code for a in rig.latched_alarms()} == {AlarmCode.WORKING_COUNTER}
    status = last_status(rig)
    # the fake reads no ESC counters (-1) and has no SOEM text
    assert status.slaves_not_op == (SlaveState(6, SAFEOP_ERROR, 0x001B, "", -1, -1),)
    assert status.al_state == SAFEOP_ERROR  # not OP: the lowest state, error flag kept
    assert status.working_counter == 21
    # read where the recovery put it (acknowledged: SAFE-OP, code 0; then OP) while the
    # counter is still short: still named with its cause
    for where in ({6: (int(L.AlState.SAFEOP), 0)}, {}):
        rig.bus.slave_faults = where
        rig.run_for(0.3)
        assert last_status(rig).slaves_not_op == (
            SlaveState(6, SAFEOP_ERROR, 0x001B, "", -1, -1),)
    # news replaces it: another slave in error
    rig.bus.slave_faults = {3: (int(L.AlState.PREOP) | L.AL_ERROR_FLAG, 0x0011)}
    rig.run_for(0.3)
    assert [(s.position, s.al_status_code) for s in last_status(rig).slaves_not_op] == [
        (3, 0x0011)]
    rig.bus.slave_faults = {}
    rig.bus.missing_working_counter = 0  # it answers again: a full counter empties the list
    rig.run_for(2 * rig.config.status_period_s)
    assert last_status(rig).slaves_not_op == ()
    rig.run_for(0.2)  # and the next recovery read finds every slave in OP
    assert last_status(rig).al_state == OP


def test_the_slaves_out_of_op_with_their_counters_summed_over_the_ports() -> None:
    states = [info(1, OP), info(2, 0),
              info(3, SAFEOP_ERROR, L.AL_CODE_SM_WATCHDOG, rx_errors=((3, 1), (0, 2), (0, 0),
                                                                       (0, 0)),
                   lost_links=(1, 0, 0, 0))]
    assert out_of_op(states) == (
        SlaveState(2, 0, 0, "", -1, -1),  # no answer: no counters read
        SlaveState(3, SAFEOP_ERROR, 0x1B, "Sync manager watchdog", 6, 1))
    assert out_of_op([info(n, SAFEOP_ERROR) for n in range(1, 12)])[-1].position == 8


def test_the_lowest_al_state_keeps_the_error_flag() -> None:
    assert lowest_al_state([info(1, OP), info(2, SAFEOP_ERROR), info(3, OP)]) == SAFEOP_ERROR
    assert lowest_al_state([info(1, int(L.AlState.SAFEOP)), info(2, SAFEOP_ERROR)]) == \
        SAFEOP_ERROR
    assert lowest_al_state([info(1, OP), info(2, int(L.AlState.PREOP))]) == L.AlState.PREOP
    assert lowest_al_state([]) == 0
