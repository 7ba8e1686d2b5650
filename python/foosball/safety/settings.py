"""The [safety] section of a board's configuration file: who watches whom, and how hard.

    [safety]
    heartbeat_period_s = 0.01      # 100 Hz, every agent
    startup_grace_s = 10.0         # a peer never heard is missing only after this
    alarm_repeat_s = 0.1           # a present cause's Alarm is re-sent this often
    sender_rate_hz = 2000.0        # authenticated frames decoded per second per sender ...
    sender_burst = 400             # ... with this much burst
    flood_limit_hz = 200.0         # frames failing the MAC per second: more is a LAN_FLOOD
    [safety.deadlines]             # each agent the board's agents watch, and its deadline
    motor_driver = 0.03            # three heartbeat periods
    ...

Every agent on the board watches every agent named under deadlines except itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from foosball.wire.catalogue import Agent

# The six agents of the product: by default every one watches every other.
PRODUCT_AGENTS = (Agent.MOTOR_DRIVER, Agent.POLE_DRIVER, Agent.SUPERVISORY_PANEL,
                  Agent.BALL_TRACKER, Agent.STRATEGY, Agent.GAME_PANEL)


def _default_deadlines() -> dict[Agent, float]:
    return {agent: 0.03 for agent in PRODUCT_AGENTS}


@dataclass(frozen=True)
class SafetySettings:
    heartbeat_period_s: float = 0.01
    deadlines: dict[Agent, float] = field(default_factory=_default_deadlines)
    startup_grace_s: float = 10.0
    alarm_repeat_s: float = 0.1
    restart_grace_s: float = 0.5
    sender_rate_hz: float = 2000.0
    sender_burst: int = 400
    clock_step_s: float = 0.02  # a jump of the wall clock against the monotonic one
    clock_hold_s: float = 2.0  # a clock step stays a cause this long
    stale_hold_s: float = 0.5  # a peer's stale frames stay a cause this long
    stall_s: float = 1.0  # the agent's own step loop silent this long: stop heartbeats
    flood_limit_hz: float = 200.0  # frames failing the MAC per second: more is a flood ...
    flood_hold_s: float = 1.0  # ... a cause until this long after it stopped
    io_priority: int = 50  # SCHED_FIFO of the I/O thread where the system allows it

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> SafetySettings:
        known = {f.name for f in fields(cls)}
        unknown = set(section) - known
        if unknown:
            raise ValueError(f"[safety]: unknown keys {sorted(unknown)}; known: {sorted(known)}")
        values = dict(section)
        if "deadlines" in values:
            values["deadlines"] = _deadlines(values["deadlines"])
        for name, value in values.items():
            if name != "deadlines" and not isinstance(value, int | float):
                raise ValueError(f"[safety] {name}: a number, not {value!r}")
            if name != "deadlines" and value <= 0 and name != "io_priority":
                raise ValueError(f"[safety] {name}: must be positive, not {value!r}")
        return cls(**values)


def _deadlines(section: Any) -> dict[Agent, float]:
    if not isinstance(section, dict):
        raise ValueError("[safety.deadlines]: a table of agent = seconds")
    out = {}
    for name, seconds in section.items():
        try:
            agent = Agent[name.upper()]
        except KeyError:
            raise ValueError(f"[safety.deadlines]: no agent {name!r}; known: "
                             f"{[a.name.lower() for a in PRODUCT_AGENTS]}") from None
        if not isinstance(seconds, int | float) or not 0 < seconds <= 10:
            raise ValueError(f"[safety.deadlines] {name}: seconds in (0, 10], not {seconds!r}")
        out[agent] = float(seconds)
    return out
