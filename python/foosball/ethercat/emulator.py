"""The drive emulator process: N emulated STEVAL-ETH001 drives on one raw interface.

`DriveEmulator` is the testable core (frames in, frames out, a control line protocol,
time passed in). `emulator_process.serve()` is the thin process around it: an AF_PACKET socket
on a veth end, a control channel on stdin and optionally a UNIX socket, and an optional
real-time priority. Run it as a separate process (`foosball ethercat emulate`): inside the master's
process it would need pysoem's always_release_gil.

Control protocol, one command per line, one JSON object answered per line:
  status                        every slave: AL state, CiA 402 state, position, switch
  fault <axis|all> <kind>       kind: emergency_button | overcurrent | motor_locked
  clear <axis|all> [kind]       the cause goes away (the drive stays in FAULT until reset)
  mute on|off                   stop/resume answering frames (a cut cable)
  deaf <axis|all> on|off        that slave stops exchanging process data (short counter)
  esc-restart <axis|all>        the slave controller restarts with its reset values (INIT)
  lose-mailbox <axis|all> <n>   the next n frames reading that slave's mailbox answer are
                                not returned (the answer taken, then lost on the way back)
  timing                        frame-to-answer times, slow answers and stalls, with times
                                (a stall: [end, length, of it on a CPU, of it runnable and
                                waiting for one], seconds)
  quit

Coupling to a simulator: pass `listeners`; each is called after every time step with the
time and one `MotorSample` per axis (raw motor radians and rad/s), so the simulated rods
can follow the emulated motors. Axis numbering: axis = 2 * rod_index + (0 translation,
1 rotation); translation axes carry the end-of-travel switch.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import struct
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from foosball.drivetrain import is_translation, rod_of
from foosball.ethercat import layout as L
from foosball.ethercat.drive import (
    Cia402Drive,
    Cia402State,
    FaultKind,
    MotorParameters,
    MotorSample,
)
from foosball.ethercat.esc import EscChain, EscSlave, is_process_data

log = logging.getLogger(__name__)

ETHERTYPE_ETHERCAT = 0x88A4
PACKET_OUTGOING = 4
MAX_SUBSTEP_S = 0.0005
# Slow answers and stalls are kept with their time (CLOCK_MONOTONIC, the same in every
# process of the machine), so a benchmark can line them up with the master's lost frames.
SLOW_ANSWER_S = 0.0005
EVENT_LOG_LENGTH = 2000

MotionListener = Callable[[float, Sequence[MotorSample]], None]

# Seed drive train and the TU Darmstadt rod figures (facts/table-and-ball.md), motor side.
TRANSLATION_MOTOR = MotorParameters(max_speed=870.0, max_acceleration=26_000.0,
                                    quick_stop_deceleration=40_000.0, has_end_switch=True,
                                    has_hard_stops=True)
ROTATION_MOTOR = MotorParameters(max_speed=314.0, max_acceleration=9_425.0,
                                 quick_stop_deceleration=20_000.0)
FOREIGN_IDENTITY = L.Identity(0x0000_0002, 0x1234_5678, 0x0000_0001)


@dataclass(frozen=True)
class EmulatorConfig:
    drives: int = 8
    # per translation axis: motor radians from the power-up position down to the switch,
    # and the whole mechanical travel above the switch
    start_above_switch: tuple[float, ...] = (12.0, 20.0, 8.0, 15.0)
    travel_above_switch: tuple[float, ...] = (62.0, 90.0, 31.0, 60.0)
    alignment_time_s: float = 0.2
    foreign_positions: tuple[int, ...] = ()  # 1-based slave positions with another identity
    complete_access_quirk: bool = False  # behave like the slave stack of the CA pitfall
    # what another slave stack was met with: the watchdog divider reset to 0, a default
    # PDO mapping that is not the layout's ("other"), drives without the alignment bits
    watchdog_divider: int = L.WATCHDOG_DIVIDER
    default_mapping: str = "layout"
    fixed_mapping: bool = False  # the default mapping is fixed: every write to it aborts
    ignores_quick_stop: bool = False  # the drives take no quick stop from the controlword
    home_switch: bool = True  # False: translation axes without a home (end) switch
    needs_dc: bool = False  # drives run from distributed clocks: SYNC0 needed for SAFE-OP
    plain_cia402: bool = False


def make_drive(axis: int, config: EmulatorConfig) -> Cia402Drive:
    rod = rod_of(axis)
    if is_translation(axis):
        start = config.start_above_switch[rod % len(config.start_above_switch)]
        travel = config.travel_above_switch[rod % len(config.travel_above_switch)]
        params = dataclasses.replace(TRANSLATION_MOTOR, travel_above_switch=travel,
                                     has_end_switch=config.home_switch,
                                     alignment_time_s=config.alignment_time_s,
                                     alignment_bits=not config.plain_cia402,
                                     ignores_quick_stop=config.ignores_quick_stop)
        return Cia402Drive(params, start_above_switch=start)
    params = dataclasses.replace(ROTATION_MOTOR, alignment_time_s=config.alignment_time_s,
                                 alignment_bits=not config.plain_cia402,
                                 ignores_quick_stop=config.ignores_quick_stop)
    return Cia402Drive(params)


class AnswerTimes:
    """How long each frame took from its arrival to the answer sent: a log-scale histogram
    (no allocation per frame) and the slow ones with their arrival time."""

    BINS_PER_DECADE = 20
    LOWEST_S = 1e-6

    def __init__(self) -> None:
        self.counts = [0] * (6 * self.BINS_PER_DECADE + 1)  # 1 us .. 1 s
        self.count = 0
        self.longest_s = 0.0
        self.slow: deque[tuple[float, float]] = deque(maxlen=EVENT_LOG_LENGTH)

    def add(self, arrived_s: float, took_s: float) -> None:
        self.count += 1
        self.longest_s = max(self.longest_s, took_s)
        decades = math.log10(max(took_s, self.LOWEST_S) / self.LOWEST_S)
        self.counts[min(len(self.counts) - 1, int(decades * self.BINS_PER_DECADE))] += 1
        if took_s > SLOW_ANSWER_S:
            self.slow.append((arrived_s, took_s))

    def quantile(self, q: float) -> float:
        """Upper edge of the bin holding the q-quantile (at most 12 % above it)."""
        wanted, seen = q * self.count, 0
        for index, n in enumerate(self.counts):
            seen += n
            if n and seen >= wanted:
                return self.LOWEST_S * 10 ** ((index + 1) / self.BINS_PER_DECADE)
        return 0.0

    def report(self) -> dict[str, object]:
        return {"frames": self.count, "p50_us": round(self.quantile(0.5) * 1e6, 1),
                "p99_us": round(self.quantile(0.99) * 1e6, 1),
                "max_us": round(self.longest_s * 1e6, 1),
                "slow": [[round(at, 6), round(took, 6)] for at, took in self.slow]}


class DriveEmulator:
    def __init__(self, config: EmulatorConfig, listeners: Sequence[MotionListener] = ()) -> None:
        self.config = config
        self.drives = [make_drive(axis, config) for axis in range(config.drives)]
        self.chain = EscChain([self._slave(axis) for axis in range(config.drives)])
        self.listeners = list(listeners)
        self.muted = False
        self.now_s: float | None = None
        self.longest_stall_s = 0.0
        # (when it ended, how long, of that: on a CPU, runnable but waiting for one), seconds
        self.stalls: deque[tuple[float, float, float, float]] = deque(maxlen=EVENT_LOG_LENGTH)
        self.answers = AnswerTimes()
        self.stale_frames = 0  # frames dropped unanswered: they waited past STALE_FRAME_S
        self.late_frames = 0  # process data that waited as long: through the slaves, no answer
        self.lost_mailbox_answers = 0  # frames not returned by `lose-mailbox`
        # When each drive last left operation enabled (CLOCK_MONOTONIC, as every process
        # here): the drives' own record of a stop, which the fault suites time against the
        # master's latch and the injection (None: not since the start).
        self.left_enabled_s: list[float | None] = [None] * config.drives
        self._enabled = [False] * config.drives

    def _slave(self, axis: int) -> EscSlave:
        config = self.config
        identity = (FOREIGN_IDENTITY if axis + 1 in config.foreign_positions
                    else L.EXPECTED_IDENTITY)
        return EscSlave(self.drives[axis], identity, serial=axis + 1,
                        last_in_line=axis == config.drives - 1,
                        complete_access_quirk=config.complete_access_quirk,
                        watchdog_divider=config.watchdog_divider,
                        default_mapping=config.default_mapping,
                        fixed_mapping=config.fixed_mapping, needs_dc=config.needs_dc)

    def restart_esc(self, axis: int) -> None:
        """The slave controller restarts (a brown-out): registers, watchdog divider and PDO
        mapping back to their reset values, in INIT; the motor keeps its state but loses
        its process data."""
        self.drives[axis].lose_process_data()
        self.chain.slaves[axis] = self._slave(axis)

    def advance(self, now_s: float) -> None:
        if self.now_s is None:
            self.now_s = now_s
        dt = now_s - self.now_s
        while dt > 1e-9:
            step = min(dt, MAX_SUBSTEP_S)
            for drive in self.drives:
                drive.advance(step)
            dt -= step
        self.now_s = now_s
        for slave in self.chain.slaves:
            slave.tick(now_s)
        if self.listeners:
            samples = [d.sample() for d in self.drives]
            for listener in self.listeners:
                listener(now_s, samples)

    def handle_frame(self, frame: bytes, now_s: float) -> bytes | None:
        """An Ethernet frame from the master; the frame to send back, or None. Synchronous:
        the drives move on to the frame's time first, the reply carries their state then
        and the outputs act at once (the frame-level tests' view; `serve` answers first)."""
        if not self._ours(frame):
            return None
        self.advance(now_s)
        self._publish_inputs()
        return self._process(frame, hold=False)

    def answer(self, frame: bytes, now_s: float) -> bytes | None:
        """Answer a frame at once, like an ESC does: the reply carries the inputs the drives
        published at the last `settle` (as a drive synchronised to the SyncManager computes
        them after the previous frame), the frame's outputs are held for `settle`. The
        drives' time step, most of the work, is then off the answer path: the master waits
        for the frame a bounded time (1.5 ms at 5 ms) and counts a late one as lost."""
        if not self._ours(frame):
            return None
        for slave in self.chain.slaves:
            slave.tick(now_s)  # the process-data watchdog at the frame's time
        return self._process(frame, hold=True)

    def late(self, frame: bytes, arrived_s: float) -> bool:
        """A frame that waited in the socket while this process was held off its CPU (an
        answer now would reach a master that gave up on it). On a wire the slaves saw it as
        it arrived: process data goes through them at `arrived_s` and its answer is lost, so
        the drives' watchdog sees the master that sent it, not the emulator's stall.
        Anything else (a mailbox, a state change) the master asks again: dropped. True when
        it went through."""
        if not self._ours(frame) or not is_process_data(frame[14:]):
            self.stale_frames += 1
            return False
        at = arrived_s if self.now_s is None else max(arrived_s, self.now_s)
        self.answer(frame, at)
        self.settle(at)
        self.late_frames += 1
        return True

    def settle(self, now_s: float) -> None:
        """After an answer (its frame's time) or when no frame came: the drives move on to
        `now_s` under the outputs they had, take the held ones and publish their inputs for
        the next frame."""
        self.advance(now_s)
        for slave in self.chain.slaves:
            slave.apply_held_outputs()
        self._publish_inputs()
        for axis, drive in enumerate(self.drives):
            enabled = drive.state is Cia402State.OPERATION_ENABLED
            if self._enabled[axis] and not enabled:
                self.left_enabled_s[axis] = now_s
            self._enabled[axis] = enabled

    def _ours(self, frame: bytes) -> bool:
        return (not self.muted and len(frame) >= 16
                and struct.unpack_from("!H", frame, 12)[0] == ETHERTYPE_ETHERCAT)

    def _publish_inputs(self) -> None:
        for slave in self.chain.slaves:
            slave.refresh_inputs()

    def _process(self, frame: bytes, hold: bool) -> bytes | None:
        for slave in self.chain.slaves:
            slave.hold_outputs = hold
        out = bytearray(frame)
        payload = self.chain.process_frame(out[14:])
        lost = [s for s in self.chain.slaves if s.answer_lost]
        if lost:  # `lose-mailbox`: the frame went through the slaves, then was lost
            for slave in lost:
                slave.answer_lost = False
            self.lost_mailbox_answers += 1
            return None
        out[14:] = payload
        out[6] |= 0x02  # like a real ESC: mark the source MAC as passed through the line
        return bytes(out)

    # --- control channel -----------------------------------------------------------------
    def command(self, line: str) -> dict[str, object]:
        words = line.split()
        if not words:
            return {"ok": False, "error": "empty command"}
        verb, args = words[0].lower(), words[1:]
        try:
            if verb == "status":
                return {"ok": True, "now_s": self.now_s,
                        "longest_stall_s": self.longest_stall_s,
                        "left_enabled_s": self.left_enabled_s,
                        "clock_datagrams": self.chain.clock_datagrams,
                        "slaves": [s.report() for s in self.chain.slaves]}
            if verb == "timing":  # the answer path and the stalls, with their times
                return {"ok": True, "answers": self.answers.report(),
                        "stale_frames": self.stale_frames,
                        "late_frames": self.late_frames,
                        "lost_mailbox_answers": self.lost_mailbox_answers,
                        "stalls": [[round(x, 6) for x in stall] for stall in self.stalls]}
            if verb == "fault" and len(args) == 2:
                kind = FaultKind(args[1])
                for axis in self._axes(args[0]):
                    self.drives[axis].inject(kind)
                return {"ok": True, "at_s": time.monotonic()}  # when it took effect
            if verb == "clear" and len(args) in (1, 2):
                kind = FaultKind(args[1]) if len(args) == 2 else None
                for axis in self._axes(args[0]):
                    self.drives[axis].clear(kind)
                return {"ok": True}
            if verb == "esc-restart" and len(args) == 1:
                for axis in self._axes(args[0]):
                    self.restart_esc(axis)
                return {"ok": True}
            if verb == "esc-errors" and len(args) == 4:
                # a line fault on port 0 of one slave: its ESC's counters (0x0300 invalid
                # frames, 0x0301 RX errors, 0x0310 lost links), counting again after a reset
                slave = self.chain.slaves[int(args[0])]
                counts = (min(int(v), 255) for v in args[1:])
                slave.line_errors = dict(zip((0x0300, 0x0301, 0x0310), counts, strict=True))
                for register, count in slave.line_errors.items():
                    slave.mem[register] = count
                return {"ok": True}
            if verb == "lose-mailbox" and len(args) == 2:
                for axis in self._axes(args[0]):
                    self.chain.slaves[axis].mailbox_answers_to_lose = int(args[1])
                return {"ok": True}
            if verb == "mute" and len(args) == 1 and args[0] in ("on", "off"):
                self.muted = args[0] == "on"
                return {"ok": True, "muted": self.muted}
            if verb == "deaf" and len(args) == 2 and args[1] in ("on", "off"):
                for axis in self._axes(args[0]):
                    if args[1] == "on":
                        self.chain.deaf.add(axis)
                    else:
                        self.chain.deaf.discard(axis)
                return {"ok": True, "deaf": sorted(self.chain.deaf), "at_s": time.monotonic()}
            if verb == "quit":
                return {"ok": True, "quit": True}
        except (ValueError, IndexError) as exc:
            return {"ok": False, "error": str(exc)}
        return {"ok": False, "error": f"unknown command: {line.strip()}"}

    def _axes(self, which: str) -> list[int]:
        """The axes (= chain positions from 0) a command names. Indices, not drives: the
        drives are dataclasses, and drives.index() of one found the first *equal* drive
        (`deaf 5` deafened axis 1, whose idle state equals axis 5's)."""
        if which == "all":
            return list(range(len(self.drives)))
        axis = int(which)
        if not 0 <= axis < len(self.drives):
            raise IndexError(f"axis {axis} out of range 0..{len(self.drives) - 1}")
        return [axis]
