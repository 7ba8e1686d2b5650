"""Heartbeat deadlines: who must be alive, and an Alarm when someone is not.

Pure logic with the clock passed in; the agent runtime's I/O loop feeds it every received
heartbeat and asks for the missing peers once per turn.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from foosball.runtime.latch import Cause
from foosball.safety.health import Health, read_board_health
from foosball.wire.catalogue import Agent, AlarmCode, Heartbeat, SafetyState

HEARTBEAT_PERIOD_S = 0.01  # 100 Hz
DEFAULT_DEADLINE_S = 0.03  # three periods


@dataclass
class HeartbeatMonitor:
    """When each watched peer was last heard, and which are silent past their deadline.

    Pure, monotonic seconds passed in. A peer never heard is given `startup_grace_s` from
    the monitor's start (boards boot at different speeds); after that, and after any
    heartbeat, its own deadline applies. `missing` returns one Cause per silent peer for as
    long as it stays silent: the latch turns the first into an alarm and keeps the fault.
    """

    deadlines_s: dict[Agent, float]
    start_s: float
    startup_grace_s: float = 10.0
    last_seen_s: dict[Agent, float] = field(default_factory=dict)
    peer_states: dict[Agent, SafetyState] = field(default_factory=dict)
    longest_gap_s: dict[Agent, float] = field(default_factory=dict)
    # No peer can be missing before this (the earliest deadline when last all were in
    # time): a peer's heartbeat moves its deadline later (but its first one, from the
    # start-up grace to its own deadline, which may be sooner: observe looks again), so
    # until then `missing` need not look. The I/O loop asks up to a thousand times a second.
    _quiet_until_s: float = field(default=-math.inf, init=False, repr=False)

    def observe(self, heartbeat: Heartbeat, now_s: float) -> None:
        agent = heartbeat.agent
        last = self.last_seen_s.get(agent)
        if last is not None:
            self.longest_gap_s[agent] = max(self.longest_gap_s.get(agent, 0.0), now_s - last)
        else:  # its deadline was the start-up grace, and may now come sooner: look again
            self._quiet_until_s = -math.inf
        self.last_seen_s[agent] = now_s
        self.peer_states[agent] = heartbeat.state

    def missing(self, now_s: float) -> list[Cause]:
        if now_s < self._quiet_until_s:
            return []
        causes = []
        for agent, deadline in self.deadlines_s.items():
            last = self.last_seen_s.get(agent)
            if last is None:
                if now_s - self.start_s > self.startup_grace_s:
                    causes.append(Cause(AlarmCode.HEARTBEAT_MISSING,
                                        f"no heartbeat from {agent.name.lower()} since start "
                                        f"({now_s - self.start_s:.1f} s)", subject=agent.name))
            elif now_s - last > deadline:
                causes.append(Cause(AlarmCode.HEARTBEAT_MISSING,
                                    f"no heartbeat from {agent.name.lower()} for "
                                    f"{(now_s - last) * 1e3:.0f} ms (deadline "
                                    f"{deadline * 1e3:.0f} ms)", subject=agent.name))
        if not causes:
            # A microsecond early: `now - last > deadline` and `now > last + deadline` may
            # round apart; looking early never misses one.
            self._quiet_until_s = min(
                (self.start_s + self.startup_grace_s if last is None else last + deadline
                 for agent, deadline in self.deadlines_s.items()
                 for last in (self.last_seen_s.get(agent),)), default=math.inf) - 1e-6
        return causes


class HeartbeatSchedule:
    """When an agent's own Heartbeat is due, and what it says.

    The I/O loop calls `due(now_s, state)` every turn and sends what it returns. Board health
    is read at most once per `health_period_s`: psutil costs more than a loop turn.
    """

    def __init__(
        self,
        agent: Agent,
        period_s: float = HEARTBEAT_PERIOD_S,
        health: Callable[[], Health] | None = read_board_health,
        health_period_s: float = 1.0,
    ) -> None:
        self.agent = agent
        self.period_s = period_s
        self._read_health = health
        self._health_period_s = health_period_s
        self._last_beat = self._last_health = -math.inf
        self._board = Health()

    @property
    def next_due_s(self) -> float:
        return self._last_beat + self.period_s

    def due(self, now_s: float, state: SafetyState) -> Heartbeat | None:
        # A millionth of a period of slack: loop turns that land exactly on the period
        # must not miss it through floating-point rounding.
        if now_s - self._last_beat < self.period_s * (1 - 1e-6):
            return None
        self._last_beat = now_s
        if self._read_health is not None and now_s - self._last_health >= self._health_period_s:
            self._last_health, self._board = now_s, self._read_health()
        return Heartbeat(agent=self.agent, state=state, period_s=self.period_s,
                         cpu_load=self._board.cpu_load, memory=self._board.memory,
                         temperature=self._board.temperature)
