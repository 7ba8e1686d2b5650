# Over 500 lines: the update agent's core is one state machine (accept, download, install,
# reboot, judge the boot, roll back); split, one phase's reasons would be read across files.
"""The update agent's pure core: OtaCommand in, RAUC requests and OtaStatus out.

One per board (`foosball agent run update_agent`), in the same runtime as every agent, so
it is on the agent LAN (authenticated messages only) and in the safety chain. The core
never touches RAUC: its hardware (foosball.ota.rauc) senses RAUC's state over D-Bus as a
`RaucView` and carries out the `Request`s the core returns. What it decides:

- an install is accepted only while no game runs (the game panel's GameState) and no
  drive is enabled (the motor driver's MotorStatus); otherwise refused, the reason on the
  wire as an OtaStatus that names the refused URL (so a second `ota push` to a busy board
  learns it is refused, and the first one does not take that refusal for its own).
- the bundle is downloaded by the agent itself (to `state_dir`), so a server that stalls
  is noticed (`download_stall_s`); RAUC then installs the local file: it writes the slot
  that is not running and makes it primary.
- every phase has a deadline (download, RAUC's check, RAUC's write, the reboot, then the
  health check), and RAUC restarting (its D-Bus name owned by a new connection) ends an
  install at once: the agent never stays "installing" without RAUC making progress.
- the reboot waits for a safe moment (the same condition: a game may have started during
  the install) and records what it expects to boot (`Pending`, kept on /data).
- after every boot: the board's agents (`watch`) must be heard steadily within the
  deadline. Healthy: the booted slot is marked good (which also resets U-Boot's attempts).
  Not healthy in time on a slot just installed: marked bad and rebooted, so the boot
  counter's fallback brings the old slot back at once instead of after its attempts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from foosball.runtime import Inputs, Outputs
from foosball.schema import SettingError, setting
from foosball.wire.catalogue import (
    Agent,
    DriveState,
    GameState,
    Heartbeat,
    MotorStatus,
    OtaCommand,
    OtaStatus,
    SafetyState,
)

GAME_RUNNING = frozenset({SafetyState.PLAYING, SafetyState.PAUSED})
# A drive in these states is powered and may move: no update while any is.
DRIVE_ENABLED = frozenset({DriveState.ALIGNING, DriveState.HOMING, DriveState.READY,
                           DriveState.RUNNING})
ACTIONS = ("install", "status")


class UpdatePhase:
    """What the update agent is doing; the `state` of its OtaStatus."""

    CHECKING = "checking"  # after boot: waiting for the board's agents to be healthy
    IDLE = "idle"
    UNHEALTHY = "unhealthy"  # an old slot whose agents are not healthy: not marked good
    DOWNLOADING = "downloading"  # the bundle, from the laptop to state_dir
    INSTALLING = "installing"  # RAUC checks the bundle, then writes the other slot
    INSTALLED = "installed"  # written and primary; rebooting at the next safe moment
    REBOOTING = "rebooting"
    ROLLING_BACK = "rolling_back"  # the new slot marked bad; rebooting into the old one
    # The outcome of the last install, kept until the next one (a tool that missed a
    # status still learns it):
    FAILED = "failed"  # RAUC refused or failed the install; nothing switched
    UPDATED = "updated"  # booted the new slot and marked it good
    ROLLED_BACK = "rolled_back"  # back on the old slot after the new one failed
    # Reported once, in answer to a command; the phase's status follows:
    REFUSED = "refused"


ACCEPTING = frozenset({UpdatePhase.IDLE, UpdatePhase.UNHEALTHY, UpdatePhase.FAILED,
                       UpdatePhase.UPDATED, UpdatePhase.ROLLED_BACK})
# An update under way, from the command to the reboot into the new slot (the update tool
# and the panels follow these).
UNDER_WAY = frozenset({UpdatePhase.DOWNLOADING, UpdatePhase.INSTALLING, UpdatePhase.INSTALLED,
                       UpdatePhase.REBOOTING, UpdatePhase.ROLLING_BACK})
# RAUC's progress text once its check is over and it writes a slot (its install.c's step
# "Updating slots", then per slot "Checking slot rootfs.1", "Copying image to rootfs.1";
# seen from RAUC 1.8, and the same step name in later RAUC sources).
WRITING_TEXTS = ("Updating slots", "Checking slot", "Copying")
# RAUC idle again this long with no Completed signal: its install ended unreported.
COMPLETION_GRACE_S = 3.0


def _names(value: Any, where: str) -> tuple[str, ...]:
    """A TOML list of strings (agent names, a command's words)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise SettingError(f"{where}: a list of strings, not {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class UpdateAgentConfig:
    """[update_agent] in board.toml."""

    board: str = ""  # this board's name in OtaCommand.board (pole, vision, strategy): needed
    # agents whose heartbeats prove the board healthy (default: the board's others)
    watch: tuple[str, ...] = setting((), convert=_names)
    health_deadline_s: float = 120.0  # after boot, to become healthy
    healthy_for_s: float = 10.0  # heard steadily this long is healthy
    heartbeat_gap_s: float = 0.5  # a longer silence (a restart) starts the count again
    status_period_s: float = 1.0  # OtaStatus this often, and on every change
    peer_state_max_age_s: float = 1.0  # GameState / MotorStatus older than this: gone
    reboot_delay_s: float = 0.5  # between the "rebooting" status and the reboot
    # Deadlines of the phases of an install (docs/images.md says why these figures):
    download_stall_s: float = 30.0  # no byte from the laptop for this long: failed
    download_deadline_s: float = 900.0  # the whole download (200 MB at >= 0.25 MB/s)
    check_deadline_s: float = 300.0  # RAUC's check of the bundle, until it writes
    install_deadline_s: float = 900.0  # RAUC's write of the slot (1.5 GB at >= 2 MB/s)
    reboot_deadline_s: float = 180.0  # from asking for the reboot to this agent stopped
    state_dir: str = "/data/foosball/ota"  # the pending update, across the reboot
    reboot_command: tuple[str, ...] = setting(("systemctl", "reboot"), convert=_names)
    version_file: str = "/etc/os-release"  # VERSION_ID of the running root
    dbus_address: str = "SYSTEM"  # RAUC's bus: the system bus, or an address (tests)

    def __post_init__(self) -> None:
        if not isinstance(self.board, str) or not 0 < len(self.board) <= 32:
            raise ValueError(f"board: a name of 1..32 characters, not "
                             f"{self.board!r}")
        for name in self.watch:
            if name.upper() not in Agent.__members__:
                raise ValueError(f"watch: no agent {name!r}")
        for key in ("health_deadline_s", "healthy_for_s", "heartbeat_gap_s",
                    "status_period_s", "peer_state_max_age_s", "reboot_delay_s",
                    "download_stall_s", "download_deadline_s", "check_deadline_s",
                    "install_deadline_s", "reboot_deadline_s"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"{key}: seconds > 0, not {value!r}")
        if self.healthy_for_s >= self.health_deadline_s:
            raise ValueError("healthy_for_s must be below health_deadline_s")
        object.__setattr__(self, "watch", tuple(self.watch))
        object.__setattr__(self, "reboot_command", tuple(self.reboot_command))

    @property
    def watched(self) -> frozenset[Agent]:
        return frozenset(Agent[name.upper()] for name in self.watch)


@dataclass(frozen=True)
class Pending:
    """An update installed and rebooted into, until the boot after it is judged."""

    slot: str
    version: str
    previous_slot: str
    previous_version: str


@dataclass(frozen=True)
class Download:
    """The agent's own download of a bundle (foosball.ota.rauc.BundleDownload)."""

    url: str
    serial: int = 0  # counts the downloads the hardware started: tells this one from the last
    path: str = ""  # where it goes, on state_dir
    received: int = 0  # bytes so far
    total: int = 0  # the server's Content-Length (0: not said)
    done: bool = False  # all of it, in `path`
    error: str = ""  # why it stopped (a stall, the server, the space on state_dir)


@dataclass(frozen=True)
class RaucView:
    """What the hardware senses of RAUC and of this board, each turn."""

    reachable: bool = False
    owner: str = ""  # the unique D-Bus name that owns RAUC's name: a new one is a new RAUC
    operation: str = "idle"
    progress: int = 0
    progress_text: str = ""
    last_error: str = ""
    completed: int = 0  # Completed signals seen since the agent started
    last_result: int = 0  # the latest one's result (0: success)
    booted: str = ""  # slot names, e.g. rootfs.0
    primary: str = ""
    versions: dict[str, str] = field(default_factory=dict)  # slot -> bundle version
    running_version: str = ""  # of the running root (its os-release)
    pending: Pending | None = None
    failed_calls: int = 0  # D-Bus calls of ours that failed, and the latest's error
    call_error: str = ""
    download: Download | None = None

    def version_of(self, slot: str) -> str:
        if slot == self.booted and self.running_version:
            return self.running_version
        return self.versions.get(slot, "")


@dataclass(frozen=True)
class Request:
    """One thing for the hardware to do: install URL, mark good|bad, reboot, save|clear."""

    kind: str
    argument: str = ""
    pending: Pending | None = None


class HealthWatch:
    """Whether the watched agents have been heard steadily for `healthy_for_s`: every one
    heartbeating, none silent for more than `gap_s` (an agent that crashes and is restarted
    by systemd is silent for a second or more, and its count starts again). Their safety
    state does not matter: after any reboot the whole system is in FAULT until a person
    presses Restart."""

    def __init__(self, agents: frozenset[Agent], gap_s: float, healthy_for_s: float) -> None:
        self.agents = agents
        self.gap_s = gap_s
        self.healthy_for_s = healthy_for_s
        self._since: dict[Agent, float] = {}
        self._last: dict[Agent, float] = {}

    def observe(self, agent: Agent, now_s: float) -> None:
        if agent not in self.agents:
            return
        last = self._last.get(agent)
        if last is None or now_s - last > self.gap_s:
            self._since[agent] = now_s
        self._last[agent] = now_s

    def healthy(self, now_s: float) -> bool:
        return all(now_s - self._last.get(a, -math.inf) <= self.gap_s
                   and now_s - self._since[a] >= self.healthy_for_s for a in self.agents)

    def missing(self, now_s: float) -> list[str]:
        """The agents not (yet) healthy, for people."""
        out = []
        for agent in sorted(self.agents):
            last = self._last.get(agent)
            if last is None:
                out.append(f"{agent.name.lower()} never heard")
            elif now_s - last > self.gap_s:
                out.append(f"{agent.name.lower()} silent {now_s - last:.0f} s")
            elif now_s - self._since[agent] < self.healthy_for_s:
                out.append(f"{agent.name.lower()} up {now_s - self._since[agent]:.0f} s")
        return out


class UpdateCore:
    agent = Agent.OTA
    # and the runtime's RUNTIME_READS; Heartbeat too: this core judges the board's health
    reads = (Heartbeat, GameState, MotorStatus, OtaCommand)

    def __init__(self, config: UpdateAgentConfig, start_s: float) -> None:
        self.config = config
        self.start_s = start_s
        self.health = HealthWatch(config.watched, config.heartbeat_gap_s, config.healthy_for_s)
        self.phase = UpdatePhase.CHECKING
        self.text = "checking this boot's health"
        self.rauc = RaucView()
        self._game: tuple[float, GameState] | None = None
        self._motors: tuple[float, MotorStatus] | None = None
        self._install_completed_at = 0  # RAUC's Completed count when our install began
        self._install_failed_calls_at = 0  # and the hardware's count of failed calls
        self._install_url = ""  # the command's URL (named in every status about it)
        self._install_owner = ""  # RAUC's D-Bus connection that took our install
        self._install_started = False  # RAUC reported the install as begun
        self._phase_since = 0.0  # when the current phase (or step of an install) began
        self._writing = False  # RAUC is past its check and writes the slot
        self._idle_since: float | None = None  # RAUC idle again after our install began
        self._downloaded = False  # a downloaded bundle sits on state_dir until discarded
        self._download_after = 0  # the serial of the download before ours
        self._refused_url = ""
        self._reboot_at: float | None = None
        self._judged = False  # this boot's health decided
        self._last_status: tuple[str, int, str] | None = None
        self._last_status_s = -math.inf
        self._notice: tuple[str, str] | None = None  # (state, text) for one status

    # -- the step ------------------------------------------------------------------------
    def step(self, inputs: Inputs) -> Outputs:
        now = inputs.now_s
        if isinstance(inputs.sensed, RaucView):
            self.rauc = inputs.sensed
        requests: list[Request] = []
        out: list[Any] = []
        for message in inputs.messages:
            if isinstance(message, Heartbeat):
                self.health.observe(message.agent, now)
            elif isinstance(message, GameState):
                self._game = (now, message)
            elif isinstance(message, MotorStatus):
                self._motors = (now, message)
            elif isinstance(message, OtaCommand) and message.board == self.config.board:
                self._command(message, now, requests)
        self._advance(now, requests)
        status = self._status(now)
        if status is not None:
            out.append(status)
        return Outputs(tuple(out), state=SafetyState.READY, actuation=tuple(requests))

    # -- commands ----------------------------------------------------------------------------
    def _command(self, command: OtaCommand, now: float, requests: list[Request]) -> None:
        if command.action == "status":
            self._last_status_s = -math.inf  # answer now
            return
        if command.action != "install":
            self._refuse(command.url, f"unknown action {command.action!r}; known: "
                                      f"{', '.join(ACTIONS)}")
            return
        reason = self.busy() or self.unsafe(now)
        if reason is None and not _is_bundle_source(command.url):
            reason = f"not an http(s) URL or absolute path: {command.url[:60]!r}"
        if reason is not None:
            self._refuse(command.url, reason)
            return
        self._install_url = command.url
        if command.url.startswith("/"):
            self._start_install(command.url, now, requests)
        else:
            self._enter(UpdatePhase.DOWNLOADING, f"from {command.url}", now)
            self._download_after = self.rauc.download.serial if self.rauc.download else 0
            requests.append(Request("download", command.url))

    def _start_install(self, source: str, now: float, requests: list[Request]) -> None:
        self._enter(UpdatePhase.INSTALLING, f"installing {self._install_url}", now)
        self._install_completed_at = self.rauc.completed
        self._install_failed_calls_at = self.rauc.failed_calls
        self._install_owner = self.rauc.owner
        self._install_started = self._writing = False
        self._idle_since = None
        requests.append(Request("install", source))

    def _enter(self, phase: str, text: str, now: float) -> None:
        self.phase, self.text, self._phase_since = phase, text, now

    def _fail(self, text: str, requests: list[Request]) -> None:
        self.phase, self.text = UpdatePhase.FAILED, text
        if self._downloaded or self.rauc.download is not None:
            requests.append(Request("discard_download"))
            self._downloaded = False

    def _refuse(self, url: str, reason: str) -> None:
        self._notice = (UpdatePhase.REFUSED, reason)
        self._refused_url = url

    def busy(self) -> str | None:
        if not self.rauc.reachable:
            return "RAUC is not reachable on D-Bus"
        if self.phase not in ACCEPTING:
            return f"busy: {self.phase} ({self.text})"
        if self.rauc.operation != "idle":  # an install given up on by its deadline
            return (f"busy: RAUC is still {self.rauc.operation} "
                    f"({self.rauc.progress_text or 'no progress text'}); try again once "
                    "it is idle")
        return None

    def unsafe(self, now: float) -> str | None:
        """Why nothing may be installed or rebooted now, or None."""
        age = self.config.peer_state_max_age_s
        if self._game is not None and now - self._game[0] <= age:
            state = self._game[1].state
            if state in GAME_RUNNING:
                return f"a game is running ({state.name})"
        if self._motors is not None and now - self._motors[0] <= age:
            enabled = [a for a in self._motors[1].axes if a.state in DRIVE_ENABLED]
            if enabled:
                states = sorted({a.state.name for a in enabled})
                return (f"motors enabled: {len(enabled)} of {len(self._motors[1].axes)} "
                        f"drives {'/'.join(states)}; halt them first")
        return None

    # -- what RAUC and the board say --------------------------------------------------------
    def _advance(self, now: float, requests: list[Request]) -> None:
        """What RAUC, the download and the clock say; every phase has its deadline, so a
        silent RAUC or server ends in `failed` with the reason."""
        rauc = self.rauc
        if self.phase == UpdatePhase.DOWNLOADING:
            self._follow_download(now, requests)
        elif self.phase == UpdatePhase.INSTALLING:
            self._follow_install(now, requests)
        elif not rauc.reachable:
            return  # nothing below can be decided without RAUC's word
        # An old slot found unhealthy is marked good once it recovers.
        elif self.phase == UpdatePhase.CHECKING or (self.phase == UpdatePhase.UNHEALTHY
                                              and self.health.healthy(now)):
            self._judge_boot(now, requests)
        elif self.phase == UpdatePhase.INSTALLED and self._reboot_at is None:
            reason = self.unsafe(now)
            if reason is None:
                self._enter(UpdatePhase.REBOOTING, f"rebooting into {rauc.primary}", now)
                self._reboot_at = now + self.config.reboot_delay_s
            else:
                self.text = f"installed on {rauc.primary}; reboot waits: {reason}"
        if self._reboot_at is not None and now >= self._reboot_at:
            self._reboot_at = math.inf  # once
            if self.phase == UpdatePhase.REBOOTING:
                requests.append(Request("save_pending", pending=Pending(
                    rauc.primary, rauc.version_of(rauc.primary), rauc.booted,
                    rauc.version_of(rauc.booted))))
            requests.append(Request("reboot"))
            self._phase_since = now
        elif (self.phase in (UpdatePhase.REBOOTING, UpdatePhase.ROLLING_BACK)
              and self._reboot_at == math.inf
              and now - self._phase_since > self.config.reboot_deadline_s):
            # Still running: the reboot command did nothing. The bootloader already says
            # what boots next, so the next reboot (by hand, or power) carries on from there.
            self.phase = UpdatePhase.FAILED
            self.text = (f"no reboot within {self.config.reboot_deadline_s:.0f} s of asking for "
                         f"it; {rauc.primary} boots next: reboot the board")

    def _follow_download(self, now: float, requests: list[Request]) -> None:
        download = self._our_download()
        if download.error:
            self._fail(f"download failed: {download.error}; still on {self.rauc.booted}",
                       requests)
        elif download.done:
            self._downloaded = True
            self._start_install(download.path, now, requests)
        elif now - self._phase_since > self.config.download_deadline_s:
            self._fail(f"download not done within {self.config.download_deadline_s:.0f} s "
                       f"({_size(download.received)} of {_size(download.total)}); still on "
                       f"{self.rauc.booted}", requests)
        else:
            total = f" of {_size(download.total)}" if download.total else ""
            self.text = f"{_size(download.received)}{total}"

    def _our_download(self) -> Download:
        """This install's download as the hardware reports it (nothing yet, until the
        hardware has started it: the view may still show the one before)."""
        download = self.rauc.download
        if download is None or download.serial <= self._download_after:
            return Download(self._install_url)
        return download

    def _follow_install(self, now: float, requests: list[Request]) -> None:
        rauc = self.rauc
        if rauc.reachable and not self._install_owner:
            self._install_owner = rauc.owner  # the first view after RAUC came up
        if rauc.completed > self._install_completed_at:
            self._install_done(requests)
            return
        if rauc.reachable and rauc.owner and rauc.owner != self._install_owner:
            self._fail(f"RAUC restarted during the install ({self._install_owner} is now "
                       f"{rauc.owner}): nothing was switched, still on {rauc.booted}; push "
                       "again", requests)
            return
        if rauc.reachable and rauc.failed_calls > self._install_failed_calls_at \
                and not self._install_started:
            # InstallBundle itself was refused (RAUC busy, bad arguments)
            self._fail(rauc.call_error, requests)
            return
        if rauc.reachable and rauc.operation != "idle":
            self._install_started = True
            self._idle_since = None
            if not self._writing and rauc.progress_text.startswith(WRITING_TEXTS):
                self._writing, self._phase_since = True, now
        elif rauc.reachable and self._install_started:
            # Idle again with no Completed signal: RAUC's install ended unreported.
            self._idle_since = now if self._idle_since is None else self._idle_since
            if now - self._idle_since > COMPLETION_GRACE_S:
                error = rauc.last_error or "no error given"
                self._fail(f"RAUC stopped installing without a result ({error}); still on "
                           f"{rauc.booted}", requests)
                return
        step, deadline = (("writing the slot", self.config.install_deadline_s) if self._writing
                          else ("checking the bundle", self.config.check_deadline_s))
        if now - self._phase_since > deadline:
            said = rauc.progress_text or ("RAUC not reachable" if not rauc.reachable
                                          else "no progress")
            self._fail(f"RAUC not done {step} within {deadline:.0f} s (last: {said}); still "
                       f"on {rauc.booted}", requests)
            return
        if rauc.reachable:
            self.text = rauc.progress_text or f"starting: {self._install_url}"
        else:
            self.text = f"waiting for RAUC on D-Bus ({step})"

    def _install_done(self, requests: list[Request]) -> None:
        rauc = self.rauc
        if rauc.last_result != 0:
            self._fail(f"{rauc.last_error or 'install failed'}; still on {rauc.booted}",
                       requests)
            return
        if self._downloaded:
            requests.append(Request("discard_download"))
            self._downloaded = False
        self.phase = UpdatePhase.INSTALLED
        self.text = f"installed {rauc.version_of(rauc.primary)} on {rauc.primary}"

    def _judge_boot(self, now: float, requests: list[Request]) -> None:
        rauc, pending = self.rauc, self.rauc.pending
        fresh = pending is not None and pending.slot == rauc.booted  # the new slot, on trial
        if self.health.healthy(now):
            requests.append(Request("mark", "good"))
            self.phase, self.text = UpdatePhase.IDLE, f"healthy, {rauc.booted} marked good"
            if pending is not None:
                requests.append(Request("clear_pending"))
                if fresh:
                    self.phase = UpdatePhase.UPDATED
                    self.text = f"{pending.version} on {rauc.booted}, healthy, marked good"
                else:
                    self.phase = UpdatePhase.ROLLED_BACK
                    self.text = (f"{pending.version} on {pending.slot} did not become healthy; "
                                 f"back on {rauc.booted} ({rauc.version_of(rauc.booted)})")
            self._judged = True
            return
        if now - self.start_s < self.config.health_deadline_s:
            self.text = "waiting for " + "; ".join(self.health.missing(now))
            return
        if self._judged:
            return
        self._judged = True
        missing = "; ".join(self.health.missing(now))
        if fresh:
            requests.append(Request("mark", "bad"))
            self.phase = UpdatePhase.ROLLING_BACK
            self.text = (f"not healthy within {self.config.health_deadline_s:.0f} s "
                         f"({missing}): {rauc.booted} marked bad, rebooting")
            self._reboot_at = now + self.config.reboot_delay_s
        else:
            # An old slot keeps its standing: U-Boot's attempts decide if it never recovers.
            self.phase = UpdatePhase.UNHEALTHY
            self.text = f"not healthy within {self.config.health_deadline_s:.0f} s: {missing}"

    # -- status ------------------------------------------------------------------------------
    def status(self) -> OtaStatus:
        state, text = self._notice or (self.phase, self.text)
        rauc = self.rauc
        progress = rauc.progress if self.phase == UpdatePhase.INSTALLING else (
            100 if self.phase in (UpdatePhase.INSTALLED, UpdatePhase.REBOOTING) else 0)
        if self.phase == UpdatePhase.DOWNLOADING and self._our_download().total:
            download = self._our_download()
            progress = round(100 * download.received / download.total)
        # Without RAUC nothing is decided, and the status says why; except where the text
        # says more: a download (no RAUC needed yet), an install (its deadline runs) or
        # the reason of a failure.
        if not rauc.reachable and self.phase not in (
                UpdatePhase.DOWNLOADING, UpdatePhase.INSTALLING, UpdatePhase.FAILED):
            text = "RAUC is not reachable on D-Bus" + (f": {rauc.call_error}"
                                                       if rauc.call_error else "")
        return OtaStatus(board=self.config.board, slot=rauc.booted[:32], state=state,
                         progress=float(max(0, min(100, progress))), text=text[:200],
                         version=rauc.version_of(rauc.booted)[:64],
                         primary=rauc.primary[:32],
                         url=(self._refused_url if self._notice else self._install_url)[:512])

    def _status(self, now: float) -> OtaStatus | None:
        status = self.status()
        key = (status.state, round(status.progress), status.text)
        if key == self._last_status and now - self._last_status_s < self.config.status_period_s:
            return None
        self._last_status, self._last_status_s = key, now
        self._notice = None  # a notice goes out once; the phase's status follows
        return status


def _size(count: int) -> str:
    return f"{count / 1024:.0f} KiB" if count < 10 << 20 else f"{count / (1 << 20):.0f} MiB"


def _is_bundle_source(url: str) -> bool:
    return url.startswith(("http://", "https://")) or (url.startswith("/") and ".." not in url)

