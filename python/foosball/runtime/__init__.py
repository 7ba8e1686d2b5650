"""The one runtime every agent runs in.

An agent is a core with a pure step, `core.step(Inputs) -> Outputs`, on catalogue messages
(B-Human style: no sockets, no clocks, no globals in the core). This module is everything
around it, the same for all six agents, so an agent runs the same on a board, in the
simulated rig and in a unit test:

- the I/O half (`io_turn`, its own thread, SCHED_FIFO where allowed): receive, MAC and
  schema check (the codec), then a per-sender rate budget that only authenticated frames
  spend (a flood without the key cannot crowd out alarms, RESTART or motor commands);
  heartbeats at 100 Hz; the peers' heartbeat deadlines and reported states; the FAULT latch
  with its alarms; RESTART accepted or refused with the reason on the wire; clock steps;
  systemd's READY, WATCHDOG (only while the step loop is alive) and STATUS.
- the work half (`work_turn`, the calling thread): wait for the agent's hardware sample
  (a camera frame, an EtherCAT cycle) or for messages, step the core, act on the hardware,
  send the core's messages. While FAULT is latched no motion command leaves the agent,
  whatever the core returns.

Every deadline uses the monotonic clock; the wall clock only stamps messages.

The package: `step` (the contract a core keeps: Inputs, Outputs, AgentCore, Hardware),
`loop` (AgentRuntime: the I/O half and the work half), `guards` (the per-sender budget and
the flood watch), `latch` (the FAULT latch), `heartbeat` (the heartbeats sent and the peers'
deadlines), `settings` (board.toml's [safety]). What other packages use is named here.
"""

from foosball.runtime.guards import FloodWatch, SenderBudget
from foosball.runtime.loop import (
    ERROR_HOLD_S,
    IO_WAIT_S,
    MOTION,
    RUNTIME_READS,
    WORK_PRIORITY,
    AgentRuntime,
    RuntimeCounters,
)
from foosball.runtime.step import NO_FAULT, AgentCore, Hardware, Inputs, Outputs

__all__ = ["ERROR_HOLD_S", "IO_WAIT_S", "MOTION", "NO_FAULT", "RUNTIME_READS", "WORK_PRIORITY",
           "AgentCore", "AgentRuntime", "FloodWatch", "Hardware", "Inputs", "Outputs",
           "RuntimeCounters", "SenderBudget"]
