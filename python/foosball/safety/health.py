"""The board's health for Heartbeat messages, read with psutil."""

from __future__ import annotations

from dataclasses import dataclass

import psutil

UNKNOWN_TEMPERATURE = -273.0  # the catalogue's floor: "no sensor"


@dataclass(frozen=True, slots=True)
class Health:
    cpu_load: float = 0.0  # % of all cores since the previous reading
    memory: float = 0.0  # % of RAM in use
    temperature: float = UNKNOWN_TEMPERATURE  # degC, hottest sensor


def read_board_health() -> Health:
    """Costs about a millisecond: call it once a second, not once a frame."""
    temperature = UNKNOWN_TEMPERATURE
    try:
        sensors = psutil.sensors_temperatures()
    except (AttributeError, OSError):  # not every platform has sensors
        sensors = {}
    readings = [t.current for entries in sensors.values() for t in entries if t.current]
    if readings:
        temperature = max(min(max(readings), 200.0), UNKNOWN_TEMPERATURE)
    return Health(
        cpu_load=min(max(psutil.cpu_percent(interval=None), 0.0), 100.0),
        memory=min(max(psutil.virtual_memory().percent, 0.0), 100.0),
        temperature=temperature,
    )
