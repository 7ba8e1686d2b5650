"""The motor driver built for its board: the bus started, with the drives' homing
objects, and the core with its hardware in the shared runtime."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from foosball.agents.motor_driver.config import MotorDriverConfig
from foosball.agents.motor_driver.core import MotorDriverCore
from foosball.agents.motor_driver.hardware import EtherCatHardware
from foosball.ethercat import layout as L
from foosball.ethercat.bus import EtherCatBus, receive_timeout_for, start_bus
from foosball.ethercat.dc import PhaseLock
from foosball.realtime import prepare_realtime
from foosball.runtime import AgentRuntime
from foosball.runtime.settings import SafetySettings
from foosball.safety.systemd import SystemdNotifier

# the package's logger: its lines keep the name they had in one file
log = logging.getLogger(__package__)
IO_PRIORITY = 50  # SCHED_FIFO of the runtime's I/O thread: below the cycle (99), above the rest


def homing_objects(config: MotorDriverConfig) -> tuple[L.StartupObject, ...]:
    """What each homing axis's drive is given in PRE-OP for its own homing method (none
    when the master homes on the switches)."""
    speed = L.rad_s_to_counts(config.homing_speed)
    return tuple(
        L.StartupObject(setup.axis + 1, index, sub, fmt, value)
        for setup in config.axes if setup.homes and config.homing_method_of(setup.axis)
        for index, sub, fmt, value in (
            (L.HOMING_METHOD, 0, "b", config.homing_method_of(setup.axis)),
            (L.HOMING_SPEEDS, 1, "I", speed), (L.HOMING_SPEEDS, 2, "I", speed)))


def open_motor_driver(bus: EtherCatBus, endpoint: Any, config: MotorDriverConfig,
                      safety: SafetySettings, realtime: bool = True) -> AgentRuntime:
    """Start the bus and build the MDA's runtime (the board's service runs it). A failed
    start closes the bus, so no slave is left where the start stopped."""
    if bus.config.receive_timeout_us > receive_timeout_for(config.cycle_s):
        log.warning("frame wait %d us is long for a %.1f ms cycle; use %d us",
                    bus.config.receive_timeout_us, config.cycle_s * 1e3,
                    receive_timeout_for(config.cycle_s))
    if realtime:  # before OP: the drives' watchdog runs from the moment they reach it
        log.info("real-time setup: %s", prepare_realtime())
    hardware = EtherCatHardware(bus, config.cycle_s)  # before OP too: it warms numpy up
    hardware.alignment_object = config.alignment_object
    if config.distributed_clocks:
        hardware.phase_lock = PhaseLock(config.cycle_s)
    try:
        start_bus(bus, homing_objects(config),
                  sync0_s=config.cycle_s if config.distributed_clocks else 0.0)
    except BaseException:
        bus.close()
        raise
    core = MotorDriverCore(config)
    core.expected_wkc = bus.expected_working_counter
    # A cycle silent for ten periods (at least 50 ms: the drives' watchdog) is a hung master:
    # its heartbeats stop at once.
    safety = dataclasses.replace(safety, stall_s=min(safety.stall_s,
                                                     max(10 * config.cycle_s, 0.05)),
                                 io_priority=IO_PRIORITY)
    return AgentRuntime(core, endpoint, safety, hardware=hardware,
                        notifier=SystemdNotifier())
