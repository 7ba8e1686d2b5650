"""The [safety] section of a board's configuration file: who watches whom, and how hard.

    [safety]
    heartbeat_period_s = 0.01      # 100 Hz, every agent
    startup_grace_s = 10.0         # a peer never heard is missing only after this
    alarm_repeat_s = 0.1           # a present cause's Alarm is re-sent this often
    sender_rate_hz = 2000.0        # authenticated frames decoded per second per sender ...
    sender_burst = 400             # ... with this much burst
    flood_limit_hz = 200.0         # frames failing the MAC or dropped unread, per s: a LAN_FLOOD
    [safety.deadlines]             # each agent the board's agents watch, and its deadline
    motor_driver = 0.03            # three heartbeat periods
    ...
    [safety.watches]               # optional: an agent that watches fewer than all of them
    motor_driver = ["pole_driver", "supervisory_panel"]

Every agent on the board watches every agent named under deadlines except itself, unless
[safety.watches] names the ones it watches (each named under deadlines). An agent that
watches fewer still hears every Alarm, and its watched peers' heartbeats carry their state:
a peer it does not watch that goes silent is caught by the agents that do watch it, whose
alarm (and then FAULT state) it hears one hop later. Its runtime does not authenticate the
heartbeats of agents it does not watch, and a raw socket does not wake it for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from foosball.schema import SettingError, parse, seconds, setting
from foosball.wire.catalogue import Agent

# The six agents of the product: by default every one watches every other.
PRODUCT_AGENTS = (Agent.MOTOR_DRIVER, Agent.POLE_DRIVER, Agent.SUPERVISORY_PANEL,
                  Agent.BALL_TRACKER, Agent.STRATEGY, Agent.GAME_PANEL)


def _default_deadlines() -> dict[Agent, float]:
    return {agent: 0.03 for agent in PRODUCT_AGENTS}


def _agent(name: Any, where: str) -> Agent:
    try:
        return Agent[str(name).upper()]
    except KeyError:
        raise SettingError(f"{where}: no agent {name!r}; known: "
                           f"{', '.join(a.name.lower() for a in PRODUCT_AGENTS)}") from None


def _watches(section: Any, where: str) -> dict[Agent, tuple[Agent, ...]]:
    if not isinstance(section, dict):
        raise SettingError(f"{where}: a table of agent = [agents it watches]")
    out = {}
    for name, watched in section.items():
        agent = _agent(name, f"[safety.watches] {name}")
        if not isinstance(watched, list) or not all(isinstance(w, str) for w in watched):
            raise SettingError(f"[safety.watches] {name}: a list of agent names, "
                               f"not {watched!r}")
        peers = tuple(_agent(w, f"[safety.watches] {name}") for w in watched)
        if agent in peers:
            raise SettingError(f"[safety.watches] {name}: an agent does not watch itself")
        out[agent] = peers
    return out


def _deadlines(section: Any, where: str) -> dict[Agent, float]:
    if not isinstance(section, dict):
        raise SettingError(f"{where}: a table of agent = seconds")
    out = {}
    for name, value in section.items():
        agent = _agent(name, f"[safety.deadlines] {name}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 10:
            raise SettingError(f"[safety.deadlines] {name}: seconds in (0, 10], not {value!r}")
        out[agent] = float(value)
    return out


@dataclass(frozen=True)
class SafetySettings:
    heartbeat_period_s: float = seconds(0.01, high=1.0)
    deadlines: dict[Agent, float] = setting(default_factory=_default_deadlines,
                                            convert=_deadlines)
    # agent -> the peers it watches, where it watches fewer than every agent under deadlines
    watches: dict[Agent, tuple[Agent, ...]] = setting(default_factory=dict, convert=_watches)
    startup_grace_s: float = seconds(10.0, high=3600.0)
    alarm_repeat_s: float = seconds(0.1, high=10.0)
    restart_grace_s: float = seconds(0.5, high=60.0)
    sender_rate_hz: float = setting(2000.0, above=0.0, unit="Hz")
    sender_burst: int = setting(400, low=1)
    # a jump of the wall clock against the monotonic one
    clock_step_s: float = seconds(0.02, high=60.0)
    clock_hold_s: float = seconds(2.0, high=60.0)  # a clock step stays a cause this long
    stale_hold_s: float = seconds(0.5, high=60.0)  # a peer's stale frames stay a cause this long
    stall_s: float = seconds(1.0, high=60.0)  # the own step loop silent this long: no heartbeats
    # frames failing the MAC, or dropped unread (a full queue), per second: more is a flood ...
    flood_limit_hz: float = setting(200.0, above=0.0, unit="Hz")
    flood_hold_s: float = seconds(1.0, high=60.0)  # ... a cause until this long after it stopped
    # SCHED_FIFO of the I/O thread where the system allows it
    io_priority: int = setting(50, low=1, high=99)

    def __post_init__(self) -> None:
        shortest = 2 * self.heartbeat_period_s
        for agent, deadline in self.deadlines.items():
            # A deadline within two periods is missed by one late or lost heartbeat; within
            # one, by every heartbeat: the board could never leave FAULT.
            if deadline < shortest:
                raise SettingError(
                    f"[safety.deadlines] {agent.name.lower()}: {deadline:g} s is shorter "
                    f"than two heartbeat periods (2 x heartbeat_period_s "
                    f"{self.heartbeat_period_s:g} s = {shortest:g} s)")
        for agent, peers in self.watches.items():
            unknown = [p.name.lower() for p in peers if p not in self.deadlines]
            if unknown:
                raise SettingError(f"[safety.watches] {agent.name.lower()}: "
                                   f"{', '.join(unknown)} not under [safety.deadlines]")

    def watched_by(self, agent: Agent) -> dict[Agent, float]:
        """The peers `agent` watches, with their deadlines."""
        peers = self.watches.get(agent)
        if peers is None:
            return {a: d for a, d in self.deadlines.items() if a != agent}
        return {a: self.deadlines[a] for a in peers}

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> SafetySettings:
        return parse(cls, section, "[safety]")  # type: ignore[no-any-return]
