"""`foosball agent run NAME --config /etc/foosball/board.toml`: one agent as a service.

This is what each board's `foosball-agent@NAME.service` runs. It reads the board's one
configuration file, opens the real backends it names (raw Ethernet, pysoem, the camera),
builds the agent's core and runs it in the shared runtime (foosball.runtime), which
speaks to systemd (READY, WATCHDOG from a healthy loop, STATUS) and stops cleanly on SIGINT
and SIGTERM (the motor driver quick-stops its drives and closes the bus).
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import queue
import signal
import sys
from typing import TextIO

from foosball.agent_registry import AGENTS
from foosball.config import BoardConfig, BoardConfigError, load_board_config
from foosball.realtime import realtime_threads, scheduling, seconds_since_process_start
from foosball.safety.stop import StopRequest

log = logging.getLogger("foosball.agent")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("agent", help="run one agent as its board's service does")
    sub = parser.add_subparsers(dest="agent_command", required=True)
    run = sub.add_parser("run", help="run an agent from the board configuration")
    run.add_argument("name", help="agent: " + ", ".join(AGENTS))
    run.add_argument("--config", default="/etc/foosball/board.toml")
    run.set_defaults(func=_run)
    check = sub.add_parser("check", help="validate a board configuration file")
    check.add_argument("--config", default="/etc/foosball/board.toml")
    check.set_defaults(func=_check)


def log_off_the_cycle(stream: TextIO | None = None) -> logging.handlers.QueueListener:
    """Log records go through a queue to one writer thread of ordinary priority. A real-time
    thread that logs (the motor driver's latch is logged in the very cycle that puts the
    quick stop on the bus) must not wait for the journal, which falls behind when every
    agent on every board logs the same fault at once; a plain stream handler makes the
    logging thread wait for the write, and every other thread for its lock."""
    writer = logging.StreamHandler(stream)
    writer.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    records: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
    enqueue = logging.handlers.QueueHandler(records)
    enqueue.setFormatter(logging.Formatter("%(message)s"))  # the writer adds the name
    logging.basicConfig(level=logging.INFO, handlers=[enqueue], force=True)
    listener = logging.handlers.QueueListener(records, writer)
    listener.start()
    return listener


def _run(args: argparse.Namespace) -> int:
    listener = log_off_the_cycle()
    try:
        return _run_agent(args)
    finally:
        listener.stop()  # the lines still queued are written before the process ends


def _run_agent(args: argparse.Namespace) -> int:
    spec = AGENTS.get(args.name)
    if spec is None:
        print(f"error: no runnable agent {args.name!r}; runnable: {sorted(AGENTS)}",
              file=sys.stderr)
        return 2
    try:
        # Everything `agent check` checks; but the update agent reads only its own section
        # of the agents': a new image must not keep it from judging (and rolling back) the
        # boot by one of theirs it gets wrong.
        only = args.name if args.name == "update_agent" else None
        board = load_board_config(args.config, only)
        params = board.settings(args.name)
    except (BoardConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    # The handler only sets a flag and writes a wake-up byte (no lock: see StopRequest); the
    # step loop looks at the flag every turn, at most a heartbeat period apart. A signal
    # before the runtime exists (the bus still starting) stops it as soon as it does.
    stop = StopRequest()
    stop.install((signal.SIGTERM, signal.SIGINT))
    started_at = scheduling()  # before the runtime's own (SCHED_OTHER under the units)
    try:
        runtime = spec.build(board, params)
    except (BoardConfigError, ValueError, OSError, RuntimeError) as exc:
        print(f"error: {args.name}: {exc}", file=sys.stderr)
        return 1
    # How long a (re)start took: at SCHED_OTHER it runs in what the board's real-time
    # threads leave (seconds on the 2-core simulated rig, three boards' agents at once).
    log.info("%s built %.2f s after its process began, started at %s", args.name,
             seconds_since_process_start(), started_at)
    # The process is the agent's: every thread still ordinary (the log writer) becomes
    # real-time below the I/O thread, also where the build already made the calling thread
    # real-time (the motor driver's cycle at 99, which the runtime then leaves as it is). A
    # lock holder left ordinary stalls the real-time threads that wait for the lock.
    from foosball.runtime import WORK_PRIORITY

    realtime_threads(WORK_PRIORITY)
    try:
        # Every agent's I/O and step threads run SCHED_FIFO where the system allows it (the
        # units' LimitRTPRIO): heartbeats must keep time on a loaded board.
        runtime.run(should_stop=stop.is_set, realtime=True)
    finally:
        runtime.endpoint.close()
    log.info("%s stopped: %s", args.name, runtime.counters)
    return 0


def check_board(board: BoardConfig) -> list[str]:
    """The board's agents not runnable in this release (the loader checked every section)."""
    return [name for name in board.agents if name not in AGENTS]


def _check(args: argparse.Namespace) -> int:
    try:
        board = load_board_config(args.config)
        not_runnable = check_board(board)
    except (BoardConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{board.path}: wire {board.wire.transport} on {board.wire.iface}; "
          f"agents {sorted(board.agents)}"
          + (f"; not runnable in this release: {not_runnable}" if not_runnable else ""))
    return 0
