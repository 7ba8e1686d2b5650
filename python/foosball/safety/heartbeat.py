"""Heartbeat deadlines: who must be alive, and an Alarm when someone is not.

Pure logic with the clock passed in; the agent's I/O loop feeds it every received message
and calls `check` once per loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from foosball.safety.health import Health, read_board_health
from foosball.wire.catalogue import Agent, Alarm, AlarmCode, Heartbeat, SafetyState

HEARTBEAT_PERIOD_S = 0.01  # 100 Hz
DEFAULT_DEADLINE_S = 0.05  # five periods


@dataclass
class HeartbeatMonitor:
    """Tracks the last heartbeat of each expected peer.

    A peer is missing once `deadline_s` passes without its heartbeat (or, before its first
    one, once `startup_grace_s` passes from the monitor's start). Each missing episode
    yields one Alarm; the peer's return ends the episode but never clears the latched fault:
    that takes a restart from the game panel.
    """

    own_agent: Agent
    expected: tuple[Agent, ...]
    start_ns: int
    deadline_s: float = DEFAULT_DEADLINE_S
    startup_grace_s: float = 5.0
    last_seen_ns: dict[Agent, int] = field(default_factory=dict)
    peer_states: dict[Agent, SafetyState] = field(default_factory=dict)
    missing: set[Agent] = field(default_factory=set)

    def observe(self, heartbeat: Heartbeat, now_ns: int) -> None:
        self.last_seen_ns[heartbeat.agent] = now_ns
        self.peer_states[heartbeat.agent] = heartbeat.state
        self.missing.discard(heartbeat.agent)

    def check(self, now_ns: int) -> list[Alarm]:
        alarms = []
        for agent in self.expected:
            last = self.last_seen_ns.get(agent)
            if last is None:
                late = now_ns - self.start_ns > self.startup_grace_s * 1e9
                silent_for = (now_ns - self.start_ns) / 1e9
            else:
                late = now_ns - last > self.deadline_s * 1e9
                silent_for = (now_ns - last) / 1e9
            if late and agent not in self.missing:
                self.missing.add(agent)
                alarms.append(Alarm(
                    source=self.own_agent,
                    code=AlarmCode.HEARTBEAT_MISSING,
                    text=f"no heartbeat from {agent.name.lower()} for {silent_for * 1e3:.0f} ms",
                    latched=True,
                    axis=-1,
                ))
        return alarms

    @property
    def all_alive(self) -> bool:
        return not self.missing and all(a in self.last_seen_ns for a in self.expected)


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
