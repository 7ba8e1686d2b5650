"""The drive emulator as a process: `DriveEmulator` (emulator.py) served on a raw socket.

An AF_PACKET socket on a veth end answers the master's frames; a control channel on stdin,
and optionally on a UNIX socket, takes the line protocol of emulator.py; the loop runs at a
real-time priority when given one. It keeps its own timing (`timing`): each answer's time,
and each stall of the loop with how much of it the process ran and how much it waited for a
CPU, so a lost frame on the rig names its cause.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
import select
import socket
import struct
import sys
import time
from collections.abc import Callable, Sequence

from foosball.ethercat.drive import Cia402Drive
from foosball.ethercat.emulator import (
    ETHERTYPE_ETHERCAT,
    PACKET_OUTGOING,
    DriveEmulator,
    EmulatorConfig,
    MotionListener,
)
from foosball.realtime import lock_memory, quiet_garbage_collector, set_fifo

log = logging.getLogger(__name__)

# Without frames from the master the drives still move on (and their watchdog runs): this
# often. Frames wake the loop at once, so this bounds only how late a silent master is seen
# (the drives' watchdog is 50 ms); at 1 ms it cost a fifth of a core on the 2-core rig.
IDLE_TICK_S = 0.005
# A stall (the loop away longer than its tick) this long is kept (`timing`).
STALL_LOG_S = 0.001
# A stall this long is also written to the log as it ends (it has cost the drives' watchdog
# most of its 50 ms): the rig's logs then keep it whether or not a test asks for `timing`.
STALL_WARN_S = 0.02
# A frame that waited longer than this in the emulator's socket (the host held the emulator
# off its CPU) is not answered: on a wire an ESC answers in microseconds, and a late answer
# reaches a master that gave up on it and reused its frame index, which would take the old
# answer for its new request (a register "read back" as another's value). Process data still
# goes through the slaves at its arrival (`DriveEmulator.late`).
# Above the master's process-data wait (1.5 ms at 5 ms) and below SOEM's shortest frame
# timeout in a configuration step (2 ms).
STALE_FRAME_S = 0.002

LINK_DOWN = (errno.ENETDOWN, errno.ENXIO, errno.ENODEV)


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux's; Python 3.11 lacks the name
TIMESPEC = {16: struct.Struct("@qq"), 8: struct.Struct("@ii")}  # 64- and 32-bit time_t
TIMESTAMP_SPACE = socket.CMSG_SPACE(16)


def _waited(ancillary: list[tuple[int, int, bytes]], now_s: float) -> float:
    """How long a frame waited in the socket: now against the kernel's arrival stamp
    (SO_TIMESTAMPNS, the wall clock); 0 when the kernel gave none."""
    for level, kind, data in ancillary:
        timespec = TIMESPEC.get(len(data))
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and timespec is not None:
            seconds, nanoseconds = timespec.unpack(data)
            return now_s - (seconds + nanoseconds * 1e-9)
    return 0.0


@dataclasses.dataclass
class _Turn:
    """Where one turn of the serving loop went (a long one is logged with the stall it
    makes)."""

    frames: int = 0
    answering_s: float = 0.0  # frames answered and sent
    settling_s: float = 0.0  # drives moved on, outputs applied, inputs published


def _cpu_times(schedstat: int) -> tuple[float, float]:
    """This thread's time on a CPU and time runnable but waiting for one, seconds (the
    scheduler's own accounts, /proc/thread-self/schedstat)."""
    ran_ns, waited_ns, _ = os.pread(schedstat, 64, 0).split()
    return int(ran_ns) * 1e-9, int(waited_ns) * 1e-9


def serve(iface: str, config: EmulatorConfig, control_socket: str | None = None,
          rt_priority: int = 0, out=sys.stdout, control_in=sys.stdin,
          make_listeners: Callable[[list[Cia402Drive]], Sequence[MotionListener]]
          | None = None, cpu: int | None = None) -> int:
    emulator = DriveEmulator(config)
    if make_listeners is not None:  # listeners that need the drives (simulator coupling)
        emulator.listeners.extend(make_listeners(emulator.drives))
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE_ETHERCAT))
    raw.bind((iface, ETHERTYPE_ETHERCAT))
    raw.setblocking(False)
    raw.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)  # each frame's arrival
    if cpu is not None:  # a core of its own: a busy-polling master elsewhere cannot hold it
        os.sched_setaffinity(0, {cpu})
    realtime = set_fifo(rt_priority) if rt_priority else False
    if realtime:
        # like the master: no page faults and no collector pauses in the frame path (a
        # stall here would trip the emulated drives' own watchdog, not the master's fault)
        lock_memory()
        quiet_garbage_collector()
    server = None
    clients: list[socket.socket] = []
    if control_socket:
        if os.path.exists(control_socket):
            os.unlink(control_socket)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(control_socket)
        server.listen(4)
    buffers: dict[int, bytes] = {}

    def say(obj: dict[str, object], to: socket.socket | None = None) -> None:
        text = json.dumps(obj) + "\n"
        if to is None:
            out.write(text)
            out.flush()
        else:
            to.sendall(text.encode())

    say({"event": "ready", "iface": iface, "drives": config.drives, "realtime": realtime,
         "pid": os.getpid(), "cpus": sorted(os.sched_getaffinity(0))})
    stdin_fd = control_in.fileno() if control_in is not None else None
    running = True
    last_loop = time.monotonic()
    schedstat = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
    last_cpu = _cpu_times(schedstat)
    turn = _Turn()
    try:
        while running:
            watched = [raw] + clients + ([server] if server else [])
            if stdin_fd is not None:
                watched.append(stdin_fd)
            readable, _, _ = select.select(watched, [], [], IDLE_TICK_S)
            now = time.monotonic()
            # how long this process itself was away since its last turn began (beyond the
            # select timeout): tells an emulator stall apart from a silent master when a
            # watchdog trips. The last turn began before this select, so this covers it.
            stall = now - last_loop - IDLE_TICK_S
            emulator.longest_stall_s = max(emulator.longest_stall_s, stall)
            cpu = _cpu_times(schedstat)
            if stall > STALL_LOG_S:  # since the last turn: computing, held off, or blocked
                ran, waited = cpu[0] - last_cpu[0], cpu[1] - last_cpu[1]
                emulator.stalls.append((now, stall, ran, waited))
                if stall > STALL_WARN_S:
                    log.warning("stalled %.1f ms (ending at %.6f): %.1f ms on a CPU, %.1f ms "
                                "waiting for one, the rest neither; the turn before: %d "
                                "frames, %.1f ms answering them, %.1f ms moving the drives",
                                stall * 1e3, now, ran * 1e3, waited * 1e3, turn.frames,
                                turn.answering_s * 1e3, turn.settling_s * 1e3)
            last_loop, last_cpu = now, cpu
            turn = _Turn()
            if raw in readable:
                while True:
                    try:
                        frame, ancillary, _, address = raw.recvmsg(2048, TIMESTAMP_SPACE)
                    except BlockingIOError:
                        break
                    except OSError as exc:  # the cable is out (link down): drives carry on
                        if exc.errno not in LINK_DOWN:
                            raise
                        emulator.settle(time.monotonic())
                        time.sleep(0.001)
                        break
                    if address[2] == PACKET_OUTGOING:
                        continue  # our own replies, seen by our own socket
                    waited = _waited(ancillary, time.time())
                    if waited > STALE_FRAME_S:
                        emulator.late(frame, time.monotonic() - waited)
                        continue
                    arrived = time.monotonic()
                    reply = emulator.answer(frame, arrived)
                    if reply is not None:
                        with contextlib.suppress(OSError):  # the link went down meanwhile
                            raw.send(reply)
                        emulator.answers.add(arrived, time.monotonic() - arrived)
                    answered = time.monotonic()
                    emulator.settle(arrived)
                    turn.frames += 1
                    turn.answering_s += answered - arrived
                    turn.settling_s += time.monotonic() - answered
            else:
                emulator.settle(now)
                turn.settling_s += time.monotonic() - now
            if server is not None and server in readable:
                connection, _ = server.accept()
                clients.append(connection)
            sources: list[tuple[int | socket.socket, bytes]] = []
            if stdin_fd is not None and stdin_fd in readable:
                chunk = os.read(stdin_fd, 4096)
                if not chunk:
                    stdin_fd = None  # control pipe closed: keep serving the bus
                sources.append((-1, chunk))
            for client in [c for c in clients if c in readable]:
                chunk = client.recv(4096)
                if not chunk:
                    clients.remove(client)
                    client.close()
                    continue
                sources.append((client, chunk))
            for source, chunk in sources:
                key = -1 if source == -1 else source.fileno()  # type: ignore[union-attr]
                data = buffers.get(key, b"") + chunk
                *lines, rest = data.split(b"\n")
                buffers[key] = rest
                for line in lines:
                    reply = emulator.command(line.decode(errors="replace"))
                    # a drive publishes a change (a fault injected) at its own control rate,
                    # not only after the next frame
                    emulator.settle(time.monotonic())
                    say(reply, None if source == -1 else source)  # type: ignore[arg-type]
                    if reply.get("quit"):
                        running = False
    finally:
        os.close(schedstat)
        raw.close()
        if server is not None:
            server.close()
            os.unlink(control_socket)  # type: ignore[arg-type]
    return 0
