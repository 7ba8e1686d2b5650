"""What a core is to the runtime: a pure step from Inputs to Outputs, and the hardware it
may have (foosball.runtime's docstring)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from foosball.runtime.latch import Cause, SafetyView
from foosball.wire.catalogue import Agent, SafetyState

NO_FAULT = SafetyView()


@dataclass(frozen=True, slots=True)
class Inputs:
    now_s: float  # monotonic: every deadline
    messages: tuple[Any, ...] = ()  # authenticated, from an allowed sender
    sensed: Any = None  # the hardware's sample this turn (a frame, a bus exchange)
    safety: SafetyView = NO_FAULT
    wall_ns: int = 0  # the PTP wall clock, only to compare with message timestamps


@dataclass(frozen=True, slots=True)
class Outputs:
    messages: tuple[Any, ...] = ()
    causes: tuple[Cause, ...] = ()  # what this agent observes now that must stop the motors
    state: SafetyState = SafetyState.READY  # the agent's own state while not in FAULT
    actuation: Any = None  # for the hardware (the drives' outputs)


class AgentCore(Protocol):
    """`agent`: who it is. A core may also name, as `reads`, the catalogue messages its step
    looks at: the runtime then never authenticates the others (it adds RUNTIME_READS), which
    is most of the LAN's traffic for most agents. Without `reads` it hears everything but
    heartbeats, which are the runtime's business unless `reads` names Heartbeat (the update
    agent judges its peers' health by them)."""

    agent: Agent

    def step(self, inputs: Inputs) -> Outputs: ...


class Hardware(Protocol):
    """An agent's sensors and actuators: the camera, the EtherCAT bus."""

    def sense(self, timeout_s: float) -> Any:
        """The next sample, waiting up to `timeout_s`; None when none came."""

    def act(self, actuation: Any) -> None: ...

    def close(self) -> None: ...
