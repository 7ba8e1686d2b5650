"""The FAULT latch every agent keeps: causes in, alarms and the latched state out.

DESIGN.md's rule: any cause anywhere stops every motor and halts the game on every board;
leaving FAULT needs every cause gone AND a RESTART. One `SafetyLatch` per agent applies it:

- own causes (what this agent observes: a drive fault, a silent peer, the camera gone, its
  own step failing) are handed in each turn as the set present now. Each new one latches
  FAULT and is announced by an Alarm, repeated every `repeat_s` while it lasts, so a peer
  that missed a frame still hears it and knows the cause is still there;
- a peer's latched Alarm latches FAULT here too and counts as a present cause for as long
  as its repeats keep coming (`peer_hold_s`);
- a peer reporting FAULT in its heartbeat latches FAULT here (it may have seen a cause whose
  alarm we missed). It does not block a restart: every agent is in FAULT until the RESTART
  reaches it, and the peers take the same RESTART a few milliseconds apart, so for
  `restart_grace_s` after a restart a peer still reporting FAULT is not news;
- `restart()` leaves FAULT only when no cause is present, and otherwise says why not.

Pure: the clock is the caller's (monotonic seconds), nothing is sent from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from foosball.wire.catalogue import Agent, Alarm, AlarmCode, SafetyState


@dataclass(frozen=True, slots=True)
class Cause:
    """Something present now that must keep the motors stopped."""

    code: AlarmCode
    text: str
    axis: int = -1
    subject: str = ""  # what it is about (a peer's name), so two causes of one code differ

    @property
    def key(self) -> tuple[AlarmCode, int, str]:
        return (self.code, self.axis, self.subject)


@dataclass(frozen=True, slots=True)
class SafetyView:
    """What a core sees of the latch: read-only, replaced whole each turn."""

    faulted: bool = False
    causes: tuple[str, ...] = ()  # every cause present now, for people
    fault_text: str = ""  # what latched the fault
    restarts: int = 0  # restarts accepted so far


@dataclass
class _PeerCause:
    text: str
    seen_s: float


@dataclass
class SafetyLatch:
    agent: Agent
    repeat_s: float = 0.1
    peer_hold_s: float = 0.35  # a bit over three repeats: one lost frame is not "gone"
    restart_grace_s: float = 0.5
    faulted: bool = False
    fault_text: str = ""
    restarts: int = 0
    refused: int = 0
    _own: dict[tuple[AlarmCode, int, str], Cause] = field(default_factory=dict)
    _announced_s: dict[tuple[AlarmCode, int, str], float] = field(default_factory=dict)
    _peer: dict[tuple[Agent, AlarmCode, int], _PeerCause] = field(default_factory=dict)
    _grace_until_s: float = -math.inf
    _last_view: SafetyView = field(default_factory=SafetyView, repr=False)

    # -- inputs ------------------------------------------------------------------------
    def update(self, now_s: float, causes: tuple[Cause, ...] | list[Cause]) -> list[Alarm]:
        """The own causes present now; returns the Alarms to send (new and repeats)."""
        self._own = {cause.key: cause for cause in causes}
        for key in list(self._announced_s):
            if key not in self._own:
                del self._announced_s[key]
        alarms = []
        for key, cause in self._own.items():
            last = self._announced_s.get(key)
            if last is None:
                self._latch(cause.text)
            if last is None or now_s - last >= self.repeat_s:
                self._announced_s[key] = now_s
                alarms.append(Alarm(source=self.agent, code=cause.code, text=cause.text[:200],
                                    latched=True, axis=cause.axis if 0 <= cause.axis <= 7 else -1))
        return alarms

    def peer_alarm(self, alarm: Alarm, now_s: float) -> None:
        if not alarm.latched or alarm.source == self.agent:
            return  # a notice (a refused restart), or our own echo
        key = (alarm.source, alarm.code, alarm.axis)
        if key not in self._peer:
            self._latch(f"alarm from {alarm.source.name.lower()}: {alarm.text}")
        self._peer[key] = _PeerCause(f"{alarm.source.name.lower()}: {alarm.text}", now_s)

    def peer_state(self, peer: Agent, state: SafetyState, now_s: float) -> None:
        if state == SafetyState.FAULT and not self.faulted and now_s >= self._grace_until_s:
            self._latch(f"{peer.name.lower()} is in FAULT")

    # -- outputs -----------------------------------------------------------------------
    def present(self, now_s: float) -> list[str]:
        for key in [k for k, c in self._peer.items() if now_s - c.seen_s > self.peer_hold_s]:
            del self._peer[key]
        return [c.text for c in self._own.values()] + [c.text for c in self._peer.values()]

    def restart(self, now_s: float) -> str | None:
        """None when the restart is accepted, else the reason it is refused."""
        present = self.present(now_s)
        if present:
            self.refused += 1
            return "restart refused: " + "; ".join(present)
        if self.faulted:
            self.faulted = False
            self.fault_text = ""
            self.restarts += 1
            self._grace_until_s = now_s + self.restart_grace_s
        return None

    def view(self, now_s: float) -> SafetyView:
        """The same object while nothing in it changed: the runtime asks every safety tick
        and compares views by identity (building one a tick cost more than the rest of the
        tick's latch work)."""
        last, present = self._last_view, tuple(self.present(now_s))
        if (present != last.causes or self.faulted != last.faulted
                or self.fault_text != last.fault_text or self.restarts != last.restarts):
            self._last_view = SafetyView(self.faulted, present, self.fault_text, self.restarts)
        return self._last_view

    def _latch(self, text: str) -> None:
        if not self.faulted:
            self.faulted = True
            self.fault_text = text
