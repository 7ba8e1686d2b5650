"""The one context object every keyword component reaches the simulated rig through: the
rig's processes (foosball.rig), a laptop on its agent LAN (the Observer), the live table's
truth, and the panels forwarded to localhost."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import time
from bisect import bisect_left
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path
from typing import Any

from robot.api import SkipExecution
from robot.libraries.BuiltIn import BuiltIn, RobotNotRunningError

from foosball.rig.faults import FaultMatrix
from foosball.rig.forward import PortForward
from foosball.rig.network import netns_unavailable
from foosball.rig.observer import Heard, Observer
from foosball.rig.rig import AGENT_BOARD, PANEL_PORTS, Rig, RigOptions, choose_mode
from foosball.rig.rootfs import debian_root
from foosball.wire.catalogue import (
    Alarm,
    AlarmCode,
    BallState,
    CalibrationStatus,
    GameState,
    Heartbeat,
    MotorStatus,
    RodCommand,
    SafetyState,
)
from rig_keywords.truth import Truth, TruthListener

# What a test may need that only some rigs have, by tag (faults.robot, play.robot).
NEEDS = {
    "needs-emulator": "the drive emulator (drive faults, the drives' own watchdog, the robot's "
                      "rods on the live table) runs only on the namespaced rig",
    "needs-namespaces": "cables between boards exist only on the namespaced rig",
}


class LongObserver(Observer):
    """The rig's Observer for suites that run for minutes: what was heard since a time is
    found by bisection (arrivals are in order), not by reading everything heard so far
    (hundreds of thousands of messages, scanned every poll, would load the machine the
    agents run on)."""

    def __init__(self, rig: Rig, kinds: tuple[type, ...]) -> None:
        super().__init__(rig, kinds=kinds)
        # A laptop hears the LAN as it is: above the agents' step threads and the camera
        # (arrival times are then the senders', not this process's), below their I/O.
        with contextlib.suppress(OSError):
            os.sched_setscheduler(self._thread.native_id, os.SCHED_FIFO,
                                  os.sched_param(OBSERVER_PRIORITY))

    def since(self, at_s: float, kind: type | None = None) -> list[Heard]:
        with self._lock:
            tail = self.heard[bisect_left(self.heard, at_s, key=attrgetter("at_s")):]
        return [h for h in tail if kind is None or isinstance(h.message, kind)]


# Latched alarms whose failure text says what the drive emulator saw of its own timing.
LINK_CODES = (AlarmCode.ETHERCAT_LINK, AlarmCode.WORKING_COUNTER)
OBSERVER_PRIORITY = 30  # SCHED_FIFO: agents' I/O threads 50, step threads 20, camera 10
# What the keywords read (RodStatus at 100 Hz and the rest are not kept).
HEARD = (Heartbeat, Alarm, GameState, MotorStatus, BallState, RodCommand, CalibrationStatus)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def emulator_stalls(timing: dict[str, Any], at_s: float, before_s: float, after_s: float,
                    over_s: float) -> list[str]:
    """The drive emulator's stalls (its `timing`) longer than `over_s` that ended from
    `before_s` before `at_s` to `after_s` after it, each with how much of it the emulator ran
    and how much it waited for a CPU (the rest it was blocked, or in its select's 5 ms)."""
    return [f"{1e3 * s:.1f} ms ending {1e3 * (at - at_s):+.1f} ms (ran {1e3 * ran:.1f}, "
            f"runnable {1e3 * waited:.1f})"
            for at, s, ran, waited in timing.get("stalls", [])
            if -before_s < at - at_s < after_s and s > over_s]


class SimulatedTable:
    def __init__(self, single_host: bool, fps: float, opponent: str,
                 deadline_s: float = 0.025, mode: str = "auto",
                 bus_error_tolerance_s: float = 0.015) -> None:
        self.single_host = single_host
        self.mode = "single-host" if single_host else mode
        self.fps = fps
        self.deadline_s = deadline_s
        self.bus_error_tolerance_s = bus_error_tolerance_s
        self.opponent = opponent
        self.agents = tuple(AGENT_BOARD)
        self._rig: Rig | None = None
        self._observer: LongObserver | None = None
        self._truth: TruthListener | None = None
        self._faults: FaultMatrix | None = None
        self._forwards: dict[str, PortForward] = {}
        self.switched_on_s = 0.0  # monotonic, when the rig was switched on
        self.restart_pressed_s = 0.0  # the last RESTART sent
        self.started_s = 0.0  # the last START sent
        self.start_truth: Truth | None = None  # the table then (score, saves)
        self._emulator_notes: dict[float, str] = {}  # a link alarm's time -> the emulator's

    # -- life ------------------------------------------------------------------------------
    def switch_on(self) -> None:
        if self._rig is not None:
            raise AssertionError("the rig is already switched on")
        if not self.single_host and netns_unavailable() is not None:
            raise AssertionError(f"the namespaced rig cannot run here: {netns_unavailable()}; "
                                 "run as root or with --variable SINGLE_HOST:True")
        if choose_mode(self.mode) == "booted":  # fails here, saying why, when the host cannot
            debian_root()  # built once on a new machine (minutes): the SD card made before
            # the rig is switched on, not part of its start-up time
        ports = dict(PANEL_PORTS)
        if self.single_host:  # the panels listen on this host: keep clear of a person's rig
            ports = {name: free_port() for name in ports}
        options = RigOptions(run_dir=Path(tempfile.mkdtemp(prefix="fb-acceptance-")),
                             agents=self.agents, fps=self.fps, opponent=self.opponent,
                             deadline_s=self.deadline_s, panel_ports=ports,
                             bus_error_tolerance_s=self.bus_error_tolerance_s,
                             mode=self.mode)
        self.switched_on_s = time.monotonic()
        rig = self._rig = Rig(options)  # makes the boards (namespaces)
        self._truth = TruthListener(rig.lan.namespace("pole" if rig.namespaced else "vision"))
        options.truth = self._truth.address
        rig.up()
        self._observer = LongObserver(rig, kinds=HEARD)
        self._faults = FaultMatrix(rig, self._observer)

    def switch_off(self) -> dict[str, int | None]:
        for forward in self._forwards.values():
            forward.close()
        self._forwards.clear()
        if self._observer is not None:
            self._observer.close()
        if self._truth is not None:
            self._truth.close()
        codes: dict[str, int | None] = {}
        if self._rig is not None:
            codes = self._rig.down()
            self._keep_logs_and_remove(self._rig.run_dir)
        self._rig = self._observer = self._truth = self._faults = None
        return codes

    @staticmethod
    def _keep_logs_and_remove(run_dir: Path) -> None:
        """The rig's logs go beside Robot's log (<output dir>/rig-logs/<suite>/), and its run
        directory, made for this suite in the temporary directory, is removed: a test run
        leaves nothing in /tmp."""
        try:
            builtin = BuiltIn()
            kept = Path(builtin.get_variable_value("${OUTPUT DIR}")) / "rig-logs" / \
                builtin.get_variable_value("${SUITE NAME}").replace(" ", "_")
        except RobotNotRunningError:  # used outside a Robot run: nowhere to keep them
            kept = None
        if kept is not None and (run_dir / "logs").is_dir():
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(run_dir / "logs", kept)
        shutil.rmtree(run_dir, ignore_errors=True)

    # -- what the components reach ---------------------------------------------------------
    @property
    def rig(self) -> Rig:
        if self._rig is None:
            raise AssertionError("the rig is not switched on (Switch On The Rig)")
        return self._rig

    @property
    def observer(self) -> LongObserver:
        if self._observer is None:
            raise AssertionError("the rig is not switched on (Switch On The Rig)")
        return self._observer

    @property
    def truth(self) -> TruthListener:
        if self._truth is None:
            raise AssertionError("the rig is not switched on (Switch On The Rig)")
        return self._truth

    @property
    def faults(self) -> FaultMatrix:
        if self._faults is None:
            raise AssertionError("the rig is not switched on (Switch On The Rig)")
        return self._faults

    def mark_start(self) -> None:
        self.started_s = time.monotonic()
        self.start_truth = self.truth.latest()

    def with_game_state(self, frames: list[Truth]
                        ) -> Iterator[tuple[Truth, SafetyState | None]]:
        """Each frame the table told, with the state of the last GameState heard before it
        (None before any): the table plays on whatever the game does."""
        games = self.observer.since(frames[0].at_s - 1.0, GameState) if frames else []
        state, g = None, 0
        for frame in frames:
            while g < len(games) and games[g].at_s <= frame.at_s:
                state, g = games[g].message.state, g + 1
            yield frame, state

    def alarms_since(self, at_s: float) -> str:
        """The latched alarms heard since `at_s`, for failure messages."""
        alarms = [h for h in self.observer.since(at_s, Alarm) if h.message.latched]
        if not alarms:
            return "no latched alarm since"
        texts: dict[str, int] = {}
        for h in alarms:
            key = f"{h.sender.name.lower()}: {h.message.code.name} {h.message.text}"
            texts[key] = texts.get(key, 0) + 1
        first = alarms[0].at_s - at_s
        told = (f"{len(alarms)} latched alarms since, the first {first:.1f} s in: "
                + "; ".join(f"{text} (x{n})" for text, n in list(texts.items())[:4]))
        if alarms[0].message.code in LINK_CODES:
            told += f"; {self._emulator_near(alarms[0].at_s)}"
        if any(h.message.code == AlarmCode.CAMERA_LOST for h in alarms):
            late = [line for line in self.rig.log_text("camera").splitlines()
                    if " late by " in line]
            told += f"; the camera's late frames: {'; '.join(late[-3:]) or 'none'}"
        return told

    def _emulator_near(self, at_s: float) -> str:
        """What the drive emulator says of its own timing around `at_s` (a latched link
        alarm heard then): was it held off its CPU, or did the master fall silent? Asked
        once per alarm (a failure's context; the waits ask for the tally ten times a
        second)."""
        if at_s not in self._emulator_notes:
            rig = self.rig
            if not rig.emulator_socket.exists():
                return "no drive emulator on this rig"
            timing = rig.emulator("timing")
            stalls = emulator_stalls(timing, at_s, before_s=0.5, after_s=0.1, over_s=0.005)
            self._emulator_notes[at_s] = (
                f"drive emulator: its stalls over 5 ms from 500 ms before that alarm: "
                f"{', '.join(stalls) or 'none'}; {timing.get('stale_frames')} stale frames "
                f"dropped since it started")
        return self._emulator_notes[at_s]

    def require(self, tags: list[str]) -> None:
        """Skip (with the reason) a test that needs what this rig has not."""
        if not self.single_host:
            return
        for tag in tags:
            if tag in NEEDS:
                raise SkipExecution(f"single-host rig: {NEEDS[tag]}")

    def panel_url(self, agent: str) -> str:
        """The panel's page on localhost, with the token in the address as on the kiosk."""
        from foosball.panels.server import panel_token
        from foosball.wire.codec import load_key

        rig = self.rig
        if agent not in rig.options.panel_ports:
            raise AssertionError(f"no panel {agent!r}: {sorted(rig.options.panel_ports)}")
        port = rig.options.panel_ports[agent]
        if rig.namespaced:
            if agent not in self._forwards:
                self._forwards[agent] = PortForward(free_port(), rig.lan.namespace(
                    AGENT_BOARD[agent]), target_port=port)
            port = self._forwards[agent].port
        return f"http://127.0.0.1:{port}/#token={panel_token(load_key(rig.key_file))}"

    def log_tail(self, name: str, chars: int = 600) -> str:
        return self.rig.log_text(name)[-chars:]
