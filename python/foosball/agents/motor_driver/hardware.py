"""The motor driver's hardware for the runtime: `EtherCatHardware` keeps the cycle's
pace, exchanges the drives' process data, recovers the bus when the core asks and reads
the alignment objects by SDO out of the cycle thread (`AlignmentReader`)."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence

import numpy as np

from foosball.agents.motor_driver.records import BusSample, CycleTiming, MdaOutputs
from foosball.ethercat import layout as L
from foosball.ethercat.bus import BusConfigurationError, EtherCatBus, Exchange, SlaveInfo
from foosball.ethercat.dc import PhaseLock
from foosball.realtime import CycleStats
from foosball.safety.ratelog import RateLimitedLog
from foosball.wire.catalogue import DriveEmergency, SlaveState

# the package's logger: its lines keep the name they had in one file
log = logging.getLogger(__package__)
P99_CYCLES = 2000  # the p99 in EtherCatStatus covers the latest cycles: cheap in the cycle


def lowest_al_state(states: Sequence[SlaveInfo]) -> int:
    """The lowest AL state of the slaves, with its error flag (SAFE-OP + ERROR, 0x14, is
    below OP, 0x08); 0 for none."""
    return min((s.al_state for s in states), key=lambda v: (v & 0x0F, not v & L.AL_ERROR_FLAG),
               default=0)


def out_of_op(states: Sequence[SlaveInfo]) -> tuple[SlaveState, ...]:
    """The slaves read out of OP (or not answering), as EtherCatStatus carries them."""
    return tuple(SlaveState(
        position=s.position, al_state=s.al_state & 0xFF, al_status_code=s.al_status_code & 0xFFFF,
        al_status_text=s.al_status_text[:40],
        rx_errors=sum(map(sum, s.rx_errors)) if s.rx_errors else -1,
        lost_links=sum(s.lost_links) if s.lost_links else -1)
        for s in states if s.al_state != L.AlState.OP)[:8]


class AlignmentReader:
    """The mailbox exchanges, out of the cycle thread: an SDO read waits for the drive's
    mailbox, and pysoem waits up to 700 ms for one that does not answer, far past the
    drives' 50 ms watchdog. The alignment objects (alignment = "sdo"): the cycle hands over
    the axes aligning and takes the values read so far; one axis at a time, in turn, at most
    one read a cycle. Axes not aligning read as 0, so a value from before a fault never
    passes for a fresh one. The CoE emergencies of a drive that faulted, read first.
    `threaded=False` reads inline per request (tests that move a clock by hand)."""

    def __init__(self, read: Callable[[int], int], drives: int, pause_s: float,
                 clock: Callable[[], float], threaded: bool = True,
                 read_emergencies: Callable[[int], None] = lambda _position: None) -> None:
        self.read = read
        self.read_emergencies = read_emergencies
        self._emergencies: list[int] = []  # slave positions whose mailbox to empty
        self.values = [0] * drives
        self.pause_s = pause_s
        self.clock = clock
        self.threaded = threaded
        self._wanted: tuple[int, ...] = ()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._turn = 0
        self._log = RateLimitedLog(log, 10.0)
        self._none_read = (0,) * drives

    def request(self, axes: tuple[int, ...]) -> tuple[int, ...]:
        if axes != self._wanted:
            with self._lock:
                self._wanted = axes
                for axis in range(len(self.values)):
                    if axis not in axes:
                        self.values[axis] = 0
            if axes and self.threaded:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="mailbox",
                                                    daemon=True)
                    self._thread.start()
                self._wake.set()
        if not axes:
            return self._none_read  # nothing aligns (most cycles): nothing to copy
        if not self.threaded:
            self._read_next()
        return tuple(self.values)

    def request_emergencies(self, positions: tuple[int, ...]) -> None:
        with self._lock:
            self._emergencies.extend(p for p in positions if p not in self._emergencies)
        if not self.threaded:
            while self._read_emergency():
                pass
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="mailbox", daemon=True)
            self._thread.start()
        self._wake.set()

    def _read_emergency(self) -> bool:
        with self._lock:
            if not self._emergencies:
                return False
            position = self._emergencies.pop(0)
        try:
            self.read_emergencies(position)
        except Exception as exc:  # the mailbox thread must go on; the fault is latched
            self._log.log(self.clock(), logging.WARNING, "emergency",
                          "slave %d: emergencies not read: %s", position, exc)
        return True

    def _read_next(self) -> bool:
        if self._read_emergency():
            return True
        wanted = self._wanted
        if not wanted:
            return False
        axis = wanted[self._turn % len(wanted)]
        self._turn += 1
        try:
            value = self.read(axis)
        except BusConfigurationError as exc:  # retried next turn; the alignment times out
            self._log.log(self.clock(), logging.WARNING, "alignment",
                          "alignment object of axis %d unreadable: %s", axis, exc)
            return True
        with self._lock:
            if axis in self._wanted:
                self.values[axis] = value
        return True

    def _run(self) -> None:
        while not self._stopping:
            if not self._read_next():
                self._wake.wait(1.0)
                self._wake.clear()
                continue
            time.sleep(self.pause_s)

    def close(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)


class EtherCatHardware:
    """The MDA's hardware for the runtime: each `sense()` waits for the next cycle deadline
    and exchanges the outputs the core gave last; `act()` takes the next outputs and runs a
    bus recovery when the core asks. If a step fails, every drive gets a quick stop."""

    def __init__(self, bus: EtherCatBus, cycle_s: float,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 stats_capacity: int = 120_000,
                 wall_ns: Callable[[], int] = time.time_ns,
                 mailbox_thread: bool | None = None) -> None:
        self.bus = bus
        self.cycle_s = cycle_s
        self.clock = clock
        self.sleep = sleep
        self.wall_ns = wall_ns  # the PTP clock the camera stamps frames with
        self._answering = 0  # capture time the next frame's setpoints answer (0: none)
        self.capture_to_setpoint: list[float] = []  # s, this window's commands
        self.stats = CycleStats(stats_capacity)
        self.outputs: tuple[L.RxPdo, ...] = tuple(
            L.RxPdo(controlword=0) for _ in range(bus.config.drives))
        self.al_state = int(L.AlState.OP)
        # The slaves a recovery read found out of OP or not answering, emptied by a full
        # working counter (see _note_slaves_not_op)
        self.slaves_not_op: tuple[SlaveState, ...] = ()
        self.alignment_object = L.ALIGNMENT_OBJECT
        self._log = RateLimitedLog(log, 10.0)
        # SDO reads in their own thread on real time; inline with a clock passed in (a
        # thread cannot keep step with a clock a test moves by hand)
        threaded = clock is time.monotonic if mailbox_thread is None else mailbox_thread
        self.alignment_reader = AlignmentReader(self._alignment_value, bus.config.drives,
                                                cycle_s, clock, threaded=threaded,
                                                read_emergencies=bus.read_emergencies)
        self._emergencies: tuple[DriveEmergency, ...] = ()  # as the bus last noted them
        self._emergencies_seen = 0
        self.alignment_objects = self.alignment_reader.values  # alignment = "sdo": last read
        self.last: Exchange | None = None
        self.phase_lock: PhaseLock | None = None  # distributed clocks: steers the cycle
        self._deadline: float | None = None
        self._last_recover_s = -math.inf
        self.longest_recovery_s = 0.0  # recovery runs in the cycle: how long it held it
        # rebuilt every 200 cycles, with the p99 and the window's frame -> setpoint figures
        self._timing = CycleTiming(cycle_s, 0.0)
        self._alignment_read: tuple[int, ...] = tuple(self.alignment_objects)
        # numpy's first percentile costs tens of milliseconds (lazy set-up): here, not in
        # the first cycle, where it would read as a stalled step loop at 1 ms
        np.percentile(np.zeros(2), 99)

    def sense(self, timeout_s: float) -> BusSample:
        """Waits for the cycle's deadline (the cycle is the pace; `timeout_s` does not
        shorten it) and gives the drives' inputs of the last exchange; `act()` sends the
        step's outputs at once, so a command the step took leaves in this cycle's frame,
        not the next one's (and a drive's fault is answered in as many frames as before)."""
        period = self.cycle_s
        now = self.clock()
        if self._deadline is None:  # the first: at once, the drives' watchdog runs since OP
            self._deadline = now
        if self._deadline > now:
            self.sleep(self._deadline - now)
        woke = self.clock()
        late = woke - self._deadline
        self.stats.add(late)
        if late > period:  # overran: do not try to catch up with a burst of frames
            self._deadline = woke
        self._deadline += period
        if self.phase_lock is not None:  # frames half a cycle from the drives' SYNC0
            self._deadline += self.phase_lock.correction_s(self.bus.reference_time_ns())
        if self.last is None:  # the first cycle: the drives' inputs to start from
            self._exchange()
        if self.stats.count % 200 == 1:
            latency = (0.0, 0.0)  # none measured in this window
            if self.capture_to_setpoint:
                p50, p99 = np.percentile(self.capture_to_setpoint, (50, 99))
                latency = (float(p50), float(p99))
                self.capture_to_setpoint.clear()
            self._timing = CycleTiming(period, self.recent_p99(), *latency)
        assert self.last is not None
        if self.bus.emergencies_noted != self._emergencies_seen:  # another thread's note
            self._emergencies_seen = self.bus.emergencies_noted
            self._emergencies = tuple(sorted(self.bus.emergencies.values(),
                                             key=lambda e: e.position))
        return BusSample(self.last, self._timing, self.al_state, self._alignment_read,
                         self.slaves_not_op, self._emergencies)

    def _exchange(self) -> None:
        if self._answering:  # these setpoints answer a ball state: they leave now
            self.capture_to_setpoint.append((self.wall_ns() - self._answering) * 1e-9)
            self._answering = 0
        self.last = self.bus.exchange(self.outputs)

    def recent_p99(self) -> float:
        """Wake-up lateness p99 over the latest `P99_CYCLES` cycles (0.1 ms on a PC). Over
        the whole ring (120 000) it took 1-8 ms, inside the cycle every 200 cycles."""
        ring = self.stats.lateness
        count = self.stats.count
        n = min(count, len(ring), P99_CYCLES)
        if n == 0:
            return 0.0
        return float(np.percentile(np.take(ring, np.arange(count - n, count), mode="wrap"), 99))

    def act(self, actuation: MdaOutputs | None) -> None:
        if actuation is None:  # the step failed: stop every drive where it is
            self.outputs = self.quick_stop_outputs()
            self._exchange()
            return
        self.outputs = actuation.drives
        self._answering = actuation.ball_capture_time or self._answering
        self._exchange()
        self._read_alignment(actuation.read_alignment)
        if actuation.read_emergencies:
            self.alignment_reader.request_emergencies(actuation.read_emergencies)
        full = self.last is not None and \
            self.last.working_counter == self.bus.expected_working_counter
        if full:  # every slave exchanged its process data: each one is in OP
            self.slaves_not_op = ()
        now = self.clock()
        if actuation.recover_bus and now - self._last_recover_s > 0.1:
            self._last_recover_s = now
            try:
                states = self.bus.read_states()
                self.al_state = lowest_al_state(states)
                self._note_slaves_not_op(out_of_op(states))
                if self.bus.recover():
                    self.al_state = int(L.AlState.OP)
            except Exception:  # a failed recovery is retried; the fault stays
                log.exception("bus recovery attempt failed")
            self.longest_recovery_s = max(self.longest_recovery_s, self.clock() - now)
        elif not actuation.recover_bus and full:
            self.al_state = int(L.AlState.OP)

    def _note_slaves_not_op(self, found: tuple[SlaveState, ...]) -> None:
        """A read replaces the slaves named when it is news: a slave in error (the flag) or
        below SAFE-OP (restarted, not answering). One that finds them only where the
        recovery put them (SAFE-OP acknowledged, OP again) keeps the cause on the screen: a
        deaf slave acknowledged back to OP drops out again on its watchdog."""
        if found and (not self.slaves_not_op or any(
                s.al_state & L.AL_ERROR_FLAG or s.al_state & 0x0F < L.AlState.SAFEOP
                for s in found)):
            self.slaves_not_op = found

    def _read_alignment(self, axes: tuple[int, ...]) -> None:
        self._alignment_read = self.alignment_reader.request(axes)

    def _alignment_value(self, axis: int) -> int:
        data = self.bus.read_object(axis + 1, self.alignment_object, 0)
        return data[0] if data else 0

    def quick_stop_outputs(self) -> tuple[L.RxPdo, ...]:
        inputs = self.last.inputs if self.last is not None else ()
        csp = int(L.Mode.CYCLIC_SYNC_POSITION)
        return tuple(L.RxPdo(int(L.Control.QUICK_STOP), csp,
                             inputs[i].position_actual if i < len(inputs) else 0, 0)
                     for i in range(len(self.outputs)))

    def close(self) -> None:
        """Quick stop on every drive for a few cycles, disable voltage on any that stayed
        in operation enabled (it ignores quick stop), then the bus closed (slaves to INIT,
        where the drives' own watchdog keeps them stopped)."""
        try:
            self.outputs = self.quick_stop_outputs()
            for _ in range(3):
                self.sense(self.cycle_s)
                self._exchange()
            assert self.last is not None
            ignoring = [n for n, tx in enumerate(self.last.inputs)
                        if tx.state is L.Cia402State.OPERATION_ENABLED]
            if ignoring:
                log.error("drive(s) %s ignored quick stop at shutdown: voltage disabled",
                          ", ".join(map(str, ignoring)))
                self.outputs = tuple(
                    rx._replace(controlword=int(L.Control.DISABLE_VOLTAGE)) if n in ignoring
                    else rx for n, rx in enumerate(self.outputs))
                for _ in range(3):
                    self.sense(self.cycle_s)
                    self._exchange()
        except Exception:
            log.exception("quick stop at shutdown failed")
        finally:
            if self.phase_lock is not None:
                log.info("distributed clocks: locked after %s cycles; frame phase to SYNC0 "
                         "off its target by p50 %.1f us, p95 %.1f us, p99 %.1f us (latest cycles)",
                         self.phase_lock.cycles_to_lock, *self.phase_lock.percentiles_us())
            self.alignment_reader.close()
            self.bus.close()
