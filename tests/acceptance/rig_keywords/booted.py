"""Booted boards: an agent's life under its board's systemd (restarted when it dies, with a
new boot id), and the game panel pressed through its page's own API."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request

from robot.api import SkipExecution, logger
from robot.api.deco import keyword

from foosball.rig import MODES
from foosball.rig.booted import BootedBoards
from foosball.rig.rig import choose_mode
from foosball.wire.catalogue import Agent
from rig_keywords.context import SimulatedTable
from rig_keywords.waiting import seconds, wait_until

ACCEPTED = re.compile(r"restart accepted \(mono=([\d.]+)")  # the runtime's log line


class BootedKeywords:
    def __init__(self, ctx: SimulatedTable) -> None:
        self.ctx = ctx
        self.before: dict[str, tuple[int, int, int]] = {}  # agent: boot id, pid, restarts
        self.panel_pressed_s = 0.0

    @property
    def boards(self) -> BootedBoards:
        boards = self.ctx.rig.boards
        if boards is None:
            raise AssertionError(f"this rig runs {MODES[self.ctx.rig.mode]}, not booted boards")
        return boards

    @keyword("This Rig Boots Its Boards")
    def rig_boots_boards(self) -> None:
        """Skips (the suite, in its setup) on a rig whose boards are not booted machines."""
        mode = choose_mode(self.ctx.mode)
        if mode != "booted":
            raise SkipExecution(f"needs booted boards (a systemd per board); this rig runs "
                                f"{MODES[mode]} (robot --variable RIG_MODE:booted, as root "
                                "with systemd-nspawn)")

    @keyword("${agent} runs under its board's systemd")
    def runs_under_systemd(self, agent: str) -> None:
        """Its unit active with a main process, and its boot id as its peers hear it."""
        boards, observer = self.boards, self.ctx.observer
        wait_until(lambda: boards.active(agent) == "active", 30.0,
                   lambda: f"{boards.unit(agent)} is {boards.active(agent)}")
        beat = wait_until(lambda: next(iter(observer.heartbeats(
            Agent[agent.upper()], time.monotonic() - 0.5)[-1:]), None), 5.0,
            lambda: f"no heartbeat of {agent}")
        self.before[agent] = (beat.boot_id, boards.main_pid(agent), boards.restarts(agent))
        logger.info(f"{boards.unit(agent)}: main PID {self.before[agent][1]}, boot id "
                    f"{beat.boot_id:#x}, {self.before[agent][2]} restarts so far")

    @keyword("${agent} is restarted by its board's systemd within ${limit} s")
    def restarted_by_systemd(self, agent: str, limit: str) -> None:
        """systemd's part: a new process for the unit (counted as a restart), starting or
        started. The agent's own start-up is the next step's (its heartbeats, a new boot):
        on the simulated rig it runs at SCHED_OTHER in what three boards' real-time threads
        on two cores leave, seconds, and CI once saw it take more than 9 (it must not run
        real-time: at the step threads' priority its imports held the running agents' step
        threads off their CPU, and switching on latched "step loop silent for 59 ms")."""
        boards = self.boards
        _, old_pid, restarts = self._before(agent)
        wait_until(lambda: boards.restarts(agent) > restarts and boards.active(agent)
                   in ("activating", "active") and boards.main_pid(agent) not in (0, old_pid),
                   seconds(limit),
                   lambda: f"{boards.unit(agent)}: {boards.active(agent)}, restarts "
                           f"{boards.restarts(agent)} (was {restarts}), main PID "
                           f"{boards.main_pid(agent)} (was {old_pid})")
        logger.info(f"{boards.unit(agent)}: restart {boards.restarts(agent)}, main PID "
                    f"{boards.main_pid(agent)}")

    @keyword("${agent} beats again with a new boot id within ${limit} s")
    def new_boot(self, agent: str, limit: str) -> None:
        old_boot = self._before(agent)[0]
        observer, since = self.ctx.observer, time.monotonic() - seconds(limit)
        beat = wait_until(lambda: next((h for h in observer.heartbeats(
            Agent[agent.upper()], since) if h.boot_id != old_boot), None), seconds(limit),
            lambda: f"no heartbeat of {agent} with a boot id other than {old_boot:#x}")
        logger.info(f"{agent} beats as boot {beat.boot_id:#x} (was {old_boot:#x})")

    @keyword("restart is pressed on the game panel until it is accepted")
    def restart_on_panel(self, within_s: float = 30.0) -> None:
        """As a person does: Restart on the page (its /api/action, with the panel token),
        pressed again while the game stays in FAULT."""
        faults = self.ctx.faults
        self.panel_pressed_s = time.monotonic()
        deadline = self.panel_pressed_s + within_s
        while time.monotonic() < deadline:
            self._panel_action("restart")
            if faults.wait_healthy(3.0) is not None:
                return
        raise AssertionError(f"Restart on the game panel not accepted within {within_s} s")

    @keyword("every agent accepted the restart, ${agent} among them")
    def every_agent_accepted(self, agent: str) -> None:
        """Each agent's own log: it accepts a restart only with every peer it watches heard
        (so the others heard the restarted agent back) and no cause of its own."""
        rig, since = self.ctx.rig, self.panel_pressed_s
        missing = [name for name in rig.options.agents
                   if name != "match_recorder" and not any(
                       float(at) >= since for at in ACCEPTED.findall(rig.log_text(name)))]
        if agent not in rig.options.agents:
            raise AssertionError(f"no agent {agent!r} on this rig")
        if missing:
            raise AssertionError(f"no 'restart accepted' since Restart was pressed in the log "
                                 f"of {', '.join(missing)}")

    @keyword("Start is pressed on the game panel")
    def start_on_panel(self) -> None:
        self.ctx.mark_start()
        self._panel_action("start")

    def _panel_action(self, action: str) -> None:
        url = self.ctx.panel_url("game_panel")
        base, _, token = url.partition("#token=")
        request = urllib.request.Request(
            base + "api/action", method="POST", headers={"Content-Type": "application/json"},
            data=json.dumps({"action": action, "args": {}, "token": token}).encode())
        try:
            with urllib.request.urlopen(request, timeout=5.0) as reply:
                answer = json.loads(reply.read())
        except urllib.error.HTTPError as error:
            answer = json.loads(error.read() or b"{}")
        if not answer.get("accepted"):
            raise AssertionError(f"the game panel refused {action}: {answer}")

    def _before(self, agent: str) -> tuple[int, int, int]:
        if agent not in self.before:
            raise AssertionError(f"'{agent} runs under its board's systemd' first")
        return self.before[agent]

