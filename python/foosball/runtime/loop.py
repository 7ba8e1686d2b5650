"""The run loop: AgentRuntime, its I/O half and its work half (foosball.runtime's
docstring says what each does)."""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import os
import signal
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from foosball.runtime.guards import FloodWatch, SenderBudget
from foosball.runtime.heartbeat import HeartbeatMonitor, HeartbeatSchedule
from foosball.runtime.latch import Cause, SafetyLatch, SafetyView
from foosball.runtime.settings import SafetySettings
from foosball.runtime.step import AgentCore, Hardware, Inputs, Outputs
from foosball.safety.health import Health, read_board_health
from foosball.safety.systemd import SystemdNotifier
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    GameCommand,
    GameControl,
    Heartbeat,
    MotorCommand,
    RodCommand,
    SafetyState,
)
from foosball.wire.codec import NOT_READ, Drop, Received

log = logging.getLogger(__package__)  # foosball.runtime, as before the split

MOTION = (RodCommand, MotorCommand)  # what never leaves an agent in FAULT
MAX_FRAMES_PER_TURN = 512
IO_WAIT_S = 0.005  # the I/O loop's longest wait for a frame: a safety look at least this often
WATCHDOG_PERIOD_S = 0.1
WORK_PRIORITY = 20  # SCHED_FIFO of the step thread (root): below the I/O thread's
ERROR_HOLD_S = 1.0  # a failed step stays a cause this long after the last failure
STALE_FOR_S = 0.2  # a peer's frames all stale this long: its clock is out of step
UNAUTHENTICATED = ("mac", "malformed")  # drops that say nothing of a known sender
RUNTIME_READS = (Heartbeat, Alarm, GameControl)  # what the runtime itself acts on
# The latch, the deadlines and the heartbeat schedule are looked at after every frame that
# changes them (alarms, states, RESTART: in _handle) and otherwise at most once a tick: at
# the LAN's ~1,000 frames a second, once per frame cost more than the frame itself.
SAFETY_TICK_S = 0.001

@dataclass
class RuntimeCounters:
    received: int = 0
    over_budget: int = 0
    interlocked: int = 0  # motion commands held back because FAULT was latched
    step_errors: int = 0
    restarts_refused: int = 0
    heartbeats_sent: int = 0
    drops: Counter[str] = field(default_factory=Counter)


class AgentRuntime:
    def __init__(
        self,
        core: AgentCore,
        endpoint: Any,
        settings: SafetySettings | None = None,
        *,
        hardware: Hardware | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        wall_ns: Callable[[], int] = time.time_ns,
        notifier: SystemdNotifier | None = None,
        health: Callable[[], Health] | None = read_board_health,
    ) -> None:
        self.core = core
        self.agent = core.agent
        self.endpoint = endpoint
        self.settings = settings = settings or SafetySettings()
        self.hardware = hardware
        self.monotonic = monotonic
        self.wall_ns = wall_ns
        self.notifier = notifier or SystemdNotifier("")
        now = monotonic()
        self.latch = SafetyLatch(self.agent, settings.alarm_repeat_s,
                                 3.5 * settings.alarm_repeat_s, settings.restart_grace_s)
        watched = settings.watched_by(self.agent)
        self.monitor = HeartbeatMonitor(watched, now, settings.startup_grace_s)
        self.budget = SenderBudget(settings.sender_rate_hz, settings.sender_burst)
        self.flood = FloodWatch(settings.flood_limit_hz, settings.flood_hold_s)
        self._dropped = endpoint.transport.dropped()  # the kernel's count when we started
        self.heartbeats = HeartbeatSchedule(self.agent, settings.heartbeat_period_s, health)
        self.counters = RuntimeCounters()
        reads = getattr(core, "reads", None)
        if reads is not None:
            endpoint.codec.read_only((*RUNTIME_READS, *reads))
        self._hears_heartbeats = reads is not None and Heartbeat in reads
        if not self._hears_heartbeats:
            # Heartbeats tell the runtime that a peer it watches is alive and in which state;
            # any other agent's (the recorder's, the update agents', a peer that
            # [safety.watches] leaves to others) would tell it nothing: never authenticated.
            endpoint.codec.hear_heartbeats_only_from(watched)
        if endpoint.codec.set_aside:
            # What the codec would set aside unchecked need not wake this agent at all.
            endpoint.transport.set_aside(endpoint.codec.set_aside)
        self._next_safety_s = -math.inf
        self.inbox: deque[Any] = deque(maxlen=4096)
        self._own_controls: deque[GameControl] = deque(maxlen=16)
        self._wake = threading.Event()
        self._view = SafetyView()
        self._core_causes: tuple[Cause, ...] = ()
        self._core_state = SafetyState.BOOT
        self._last_step_s = now
        self._last_turn: tuple[float, float] | None = None  # the I/O half's last: (at, wait)
        self._away: tuple[float, float] | None = None  # (when, how long) it was away
        self._last_error_s = -math.inf
        self._last_error = ""
        self._clock_offset_ns: int | None = None
        self._clock_step: tuple[float, float] | None = None  # (when, by how many s)
        self._stale: dict[Agent, tuple[float, float]] = {}  # first, last stale since fresh
        self._stale_detail: dict[Agent, str] = {}
        self._announced: set[tuple[AlarmCode, int, str]] = set()  # peers known missing
        self._last_watchdog_s = -math.inf
        self._status = ""
        self._status_of: tuple[SafetyState | None, SafetyView | None] = (None, None)
        # Set once, by stop() (another thread) or at the end of run(); never cleared, so a
        # stop that comes before run() starts is not lost.
        self._stopping = False
        self._io_thread: threading.Thread | None = None

    # -- what the agent looks like from outside -------------------------------------------
    @property
    def state(self) -> SafetyState:
        return SafetyState.FAULT if self.latch.faulted else self._core_state

    @property
    def view(self) -> SafetyView:
        return self._view

    def stalled(self, now_s: float) -> bool:
        return now_s - self._last_step_s > self.settings.stall_s

    # -- the I/O half ----------------------------------------------------------------------
    def io_turn(self, timeout_s: float = 0.0) -> None:
        """Receive what is waiting (up to `timeout_s` for the first frame), update the
        deadlines and the latch, send alarms and a due heartbeat."""
        while self._own_controls:  # a panel's START or RESTART applies here as everywhere
            self._handle(self._own_controls.popleft(), self.monotonic())
        self._receive(timeout_s)
        now = self.monotonic()
        if now >= self._next_safety_s or now >= self.heartbeats.next_due_s:
            self._next_safety_s = now + SAFETY_TICK_S
            self._safety_turn(now)

    def _receive(self, timeout_s: float) -> None:
        transport, codec = self.endpoint.transport, self.endpoint.codec
        frame = transport.recv(timeout_s)
        frames = 0
        while frame is not None:
            now = self.monotonic()
            result = codec.decode(frame)
            if result is NOT_READ:
                pass
            elif type(result) is not Received and isinstance(result, Drop):
                self.counters.drops[result.reason] += 1
                if result.reason in UNAUTHENTICATED:
                    self.flood.count(now)
                sender = getattr(result, "sender", None)
                if result.reason == "stale" and sender is not None:
                    first, _ = self._stale.get(sender, (now, now))
                    self._stale[sender] = (first, now)
                    self._stale_detail[sender] = result.detail
            elif not (result.sender == codec.sender and result.boot_id == codec.boot_id):
                if self._stale:
                    self._stale.pop(result.sender, None)  # a fresh frame: its clock agrees
                if self.budget.spend(result.sender, now):
                    self.counters.received += 1
                    self._handle(result.message, now)
                else:
                    self.counters.over_budget += 1
            frames += 1
            frame = transport.recv(0) if frames < MAX_FRAMES_PER_TURN else None
        dropped = transport.dropped()
        if dropped != self._dropped:
            self.counters.drops["overflow"] += dropped - self._dropped
            self.flood.count(self.monotonic(), dropped - self._dropped)
            self._dropped = dropped

    def _handle(self, message: Any, now: float) -> None:
        was = self.latch.faulted
        if isinstance(message, Heartbeat):
            self.monitor.observe(message, now)
            self.latch.peer_state(message.agent, message.state, now)
        elif isinstance(message, Alarm):
            self.latch.peer_alarm(message, now)
        elif isinstance(message, GameControl) and message.command == GameCommand.RESTART:
            self._update_latch(now)  # the causes as they are now, not a turn ago
            reason = self.latch.restart(now)
            if reason is not None:
                self.counters.restarts_refused += 1
                log.warning("%s", reason)
                self._send(Alarm(source=self.agent, code=AlarmCode.RESTART_REFUSED,
                                 text=reason[:200], latched=False, axis=-1))
                return
            log.info("restart accepted (mono=%.6f)", now)
            self._view = self.latch.view(now)  # before the core sees the RESTART
        if self.latch.faulted and not was:
            self._view = self.latch.view(now)  # the step thread stops motion this turn
            log.error("FAULT latched: %s (mono=%.6f)", self.latch.fault_text, now)
        if not isinstance(message, Heartbeat) or self._hears_heartbeats:
            self.inbox.append(message)
            self._wake.set()

    def _notice_absence(self, now: float, timeout_s: float) -> None:
        """An agent that was away (stopped, or starved of the CPU) past the deadline its
        peers hold it to has been counted lost by them: it must not carry on with what it
        believed before, whatever its backlog (stale by now) would tell it."""
        last, self._last_turn = self._last_turn, (now, timeout_s)
        allowed = self.settings.deadlines.get(self.agent)
        if last is None or allowed is None:
            return
        away = now - last[0] - last[1]  # beyond the previous turn's own wait
        if away > allowed:
            self._away = (now, away)
            log.error("this agent was away for %.0f ms (deadline %.0f ms)", away * 1e3,
                      allowed * 1e3)

    def _missing(self, now: float) -> list[Cause]:
        missing = self.monitor.missing(now)
        if not missing and not self._announced:  # every tick, nearly always
            return missing
        if any(c.key not in self._announced for c in missing):
            # Before calling a peer silent, read what came while this thread itself was
            # held up (between its last read and now): its heartbeat may be waiting.
            self._receive(0.0)
            missing = self.monitor.missing(now)
        self._announced = {c.key for c in missing}
        return missing

    def causes(self, now: float) -> list[Cause]:
        """Every own cause present now: the core's and the runtime's."""
        causes = list(self._core_causes) + self._missing(now)
        if now - self._last_error_s < ERROR_HOLD_S:
            causes.append(Cause(AlarmCode.INTERNAL_ERROR, f"step failed: {self._last_error}"))
        if self.stalled(now):
            causes.append(Cause(AlarmCode.INTERNAL_ERROR, f"step loop silent for "
                                f"{(now - self._last_step_s) * 1e3:.0f} ms", subject="stall"))
        if self._away is not None and now - self._away[0] < ERROR_HOLD_S:
            causes.append(Cause(AlarmCode.INTERNAL_ERROR, f"this agent was away for "
                                f"{self._away[1] * 1e3:.0f} ms (its peers count it lost)",
                                subject="away"))
        if self.flood.present(now):
            causes.append(Cause(AlarmCode.LAN_FLOOD, f"{self.flood.rate_hz:.0f} frames/s on the "
                                "LAN fail the MAC or overflow this agent", subject="lan"))
        if self._clock_step is not None and now - self._clock_step[0] < self.settings.clock_hold_s:
            causes.append(Cause(AlarmCode.CLOCK_STEP, f"this board's clock stepped by "
                                f"{self._clock_step[1]:+.3f} s", subject="own"))
        for peer, (first, last) in list(self._stale.items()):
            # A backlog read late (this agent stalled) is stale for a moment, then fresh
            # frames follow; a peer whose frames stay stale has a clock out of step.
            if now - last > self.settings.stale_hold_s:
                del self._stale[peer]
            elif last - first >= STALE_FOR_S:
                causes.append(Cause(AlarmCode.CLOCK_STEP, f"frames from {peer.name.lower()} "
                                    f"out of step with this clock ({self._stale_detail[peer]})",
                                    subject=peer.name))
        return causes

    def _watch_clock(self, now: float) -> None:
        offset = self.wall_ns() - round(now * 1e9)
        if self._clock_offset_ns is not None:
            jump = (offset - self._clock_offset_ns) * 1e-9
            if abs(jump) > self.settings.clock_step_s:
                self._clock_step = (now, jump)
                log.error("wall clock stepped by %+.3f s", jump)
        self._clock_offset_ns = offset

    def _update_latch(self, now: float) -> list[Alarm]:
        was = self.latch.faulted
        alarms = self.latch.update(now, self.causes(now))
        self._view = self.latch.view(now)
        if self.latch.faulted and not was:
            log.error("FAULT latched: %s (mono=%.6f)", self.latch.fault_text, now)
        return alarms

    def _safety_turn(self, now: float) -> None:
        self._watch_clock(now)
        for alarm in self._update_latch(now):
            self._send(alarm)
        alive = not self.stalled(now)
        state = self.state
        if alive:
            beat = self.heartbeats.due(now, state)
            if beat is not None:
                self._send(beat)
                self.counters.heartbeats_sent += 1
            if now - self._last_watchdog_s >= WATCHDOG_PERIOD_S:
                self._last_watchdog_s = now
                self.notifier.watchdog()
        view = self._view  # kept, the same object, while unchanged: compared by identity
        if state is not self._status_of[0] or view is not self._status_of[1]:
            self._status_of = (state, view)
            causes = view.causes
            status = state.name + ("; " + "; ".join(causes) if causes else "")
            if status != self._status:
                self._status = status
                self.notifier.status(status[:200])

    def next_heartbeat_in(self, now: float) -> float:
        return max(0.0, self.heartbeats.next_due_s - now)

    # -- the work half ---------------------------------------------------------------------
    def work_turn(self, timeout_s: float | None = None) -> Outputs | None:
        """Wait for a hardware sample or messages (up to `timeout_s`, default one heartbeat
        period), step the core once, act and send. Returns what the core returned."""
        timeout = self.settings.heartbeat_period_s if timeout_s is None else timeout_s
        sensed = None
        if self.hardware is not None:
            sensed = self.hardware.sense(timeout)
        elif not self.inbox and timeout > 0:
            self._wake.wait(timeout)
        self._wake.clear()
        count = len(self.inbox)
        messages = tuple(self.inbox.popleft() for _ in range(count))
        now = self.monotonic()
        view = self._view
        if not view.faulted and now - self._last_error_s < ERROR_HOLD_S:
            # A step just failed and the I/O half has not latched it yet: this step must not
            # undo the hardware's quick stop.
            view = SafetyView(True, view.causes, f"step failed: {self._last_error}",
                              view.restarts)
        try:
            out = self.core.step(Inputs(now, messages, sensed, view, self.wall_ns()))
        except Exception as exc:  # a bad step is a cause, not the end of the agent
            self.counters.step_errors += 1
            if now - self._last_error_s > ERROR_HOLD_S:
                log.exception("%s step failed", self.agent.name.lower())
            self._last_error_s, self._last_error = now, f"{type(exc).__name__}: {exc}"[:120]
            self._last_step_s = now
            if self.hardware is not None:
                self.hardware.act(None)  # the hardware's own safe reaction (quick stop)
            return None
        self._last_step_s = now
        self._core_causes = out.causes
        self._core_state = out.state
        if self.hardware is not None:
            self.hardware.act(out.actuation)
        interlocked = view.faulted or bool(out.causes)
        for message in out.messages:
            if interlocked and isinstance(message, MOTION):
                self.counters.interlocked += 1
                continue
            if isinstance(message, GameControl):
                self._own_controls.append(message)  # the sender follows its own command too
            self._send(message)
        return out

    def _send(self, message: Any) -> None:
        try:
            self.endpoint.send(message)
        except OSError as exc:  # a full queue or a link down: the deadlines will tell
            self.counters.drops["send:" + type(exc).__name__] += 1
        except ValueError as exc:  # the core made a message the catalogue refuses: our bug
            self.counters.drops["send:invalid"] += 1
            self._last_error_s = self.monotonic()
            self._last_error = f"invalid {type(message).__name__}: {exc}"[:120]

    # -- running as a service --------------------------------------------------------------
    def start_io(self, realtime: bool = False) -> None:
        """The I/O half on its own thread, so heartbeats keep time while the core works."""
        self._io_thread = threading.Thread(target=self._io_loop, args=(realtime,),
                                           name=f"{self.agent.name.lower()}-io", daemon=True)
        self._io_thread.start()

    def _io_loop(self, realtime: bool) -> None:
        # The stop signals are for the main thread, whose handler ends the agent.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        if realtime:
            from foosball.realtime import set_fifo

            set_fifo(self.settings.io_priority)
        pause = threading.Event()  # waits without time.sleep: see frame_link.pause
        while not self._stopping:
            try:
                now = self.monotonic()
                # While the step loop is stalled no heartbeat goes out, so one is always
                # "due": wait the full turn rather than spin at real-time priority.
                wait = (IO_WAIT_S if self.stalled(now)
                        else min(IO_WAIT_S, self.next_heartbeat_in(now)))
                self._notice_absence(now, wait)
                self.io_turn(wait)
            except Exception as exc:  # never let the safety half die quietly
                now = self.monotonic()
                if now - self._last_error_s > ERROR_HOLD_S:
                    log.exception("I/O turn failed")
                self._last_error_s, self._last_error = now, f"I/O: {exc}"[:120]
                # A real-time thread that fails at once every turn (the LAN interface
                # gone) would take its core from everything below it: back off.
                pause.wait(0.05)

    def stop(self) -> None:
        """From another thread. Not a signal handler: set() takes the wake event's lock,
        which the main thread may hold inside wait() when the signal comes (a hang). A
        handler sets a flag that `run(should_stop=...)` reads (foosball.safety.stop)."""
        self._stopping = True
        self._wake.set()

    def run(self, should_stop: Callable[[], bool] | None = None, realtime: bool = False) -> None:
        """Until `stop()` or `should_stop()` (a signal's flag: looked at every turn, a
        heartbeat period apart at most); closes the hardware at the end."""
        # Hand the interpreter to the I/O thread within 1 ms of its waking, not 5.
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.001))
        # Everything built so far (modules, the core, its tables) lives as long as the
        # agent: out of the collector's reach, a full collection takes a fraction of a
        # millisecond instead of tens, during which no heartbeat could go out. (No
        # collection first: that alone can outlast the drives' 50 ms watchdog.)
        gc.freeze()
        if realtime and os.sched_getscheduler(0) != os.SCHED_FIFO:
            # Every thread of the agent holds the interpreter lock the I/O thread needs at
            # times (the step, a panel's web server, a camera grabber): preempted by
            # ordinary processes with the lock in hand, it would stall the heartbeats
            # (priority inversion; seen: a panel away 58 ms while Chromium loaded its
            # page). Real-time below the I/O thread, none can be. Threads started later
            # inherit the policy from the thread that starts them. (A caller already
            # real-time is a process's own cycle: `foosball agent run` sees to the rest.)
            from foosball.realtime import realtime_threads, set_fifo

            realtime_threads(WORK_PRIORITY)
            set_fifo(WORK_PRIORITY)
        self.start_io(realtime)
        self.notifier.ready()
        try:
            while not self._stopping and not (should_stop is not None and should_stop()):
                self.work_turn()
        finally:
            self._stopping = True
            if self._io_thread is not None:
                self._io_thread.join(timeout=1.0)
            if self.hardware is not None:
                with contextlib.suppress(Exception):
                    self.hardware.close()
            self.notifier.notify("STOPPING=1")
