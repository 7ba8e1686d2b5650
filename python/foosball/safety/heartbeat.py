"""Heartbeat deadlines: who must be alive, and an Alarm when someone is not.

Pure logic with the clock passed in; the agent's I/O loop feeds it every received message
and calls `check` once per loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
