"""Supervisory panel agent (SPA): what the pole board's display shows about the motors.

`SupervisoryCore.step(Inputs) -> Outputs` is pure (it runs in foosball.runtime):

- in: the MDA's MotorStatus and EtherCatStatus, everybody's Alarms, this agent's SafetyView,
  and as `sensed` the operator's actions from the page (already token-checked by the panel
  server, each naming who asked and when);
- out: a `SupervisoryView` as the actuation (the panel server pushes it to every page) and
  the messages the actions produce: halt all = DriveControl HALT to every drive and
  GameControl STOP, restart all = GameControl RESTART and DriveControl RELEASE to every
  drive, one drive = DriveControl HALT / RELEASE for that axis.

Per axis the view has the drive state, position (motor radians, and metres along the rod
for a translation axis, through the table geometry as the pole driver converts), speed,
current and fault; for the EtherCAT segment the link, slaves, AL state, working counters
and cycle jitter, with the counts over the last `stats_window_s`, and one line per slave the
MDA found out of OP ("slave 6 (axis 5, midfield rotation): SAFE-OP + ERROR, 0x001B Sync
manager watchdog"). Data older than `stale_after_s` stays visible but is marked stale: a
silent MDA is itself news.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import asdict, dataclass
from enum import IntEnum
from typing import Any

from foosball.drivetrain import is_translation, motor_to_translation, rod_of
from foosball.ethercat.layout import ErrorCode
from foosball.geometry import Rod, Table
from foosball.ota.progress import UpdatesSeen
from foosball.runtime import Inputs, Outputs
from foosball.runtime.latch import SafetyView
from foosball.wire import catalogue
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    DriveEmergency,
    EtherCatStatus,
    GameCommand,
    GameControl,
    MotorStatus,
    OtaStatus,
    SafetyState,
    SlaveState,
)

ROD_NAMES = ("goalkeeper", "defence", "midfield", "attack")
AL_NAMES = {0x01: "INIT", 0x02: "PRE-OP", 0x03: "BOOT", 0x04: "SAFE-OP", 0x08: "OP"}
ACTIONS = ("halt_all", "restart_all", "drive")
DRIVE_COMMANDS = ("halt", "release")
MAX_MESSAGES_PER_STEP = 16  # a page cannot make the panel flood the LAN
DRIVES = 8  # motor axes, numbered as foosball.drivetrain numbers them
ALL_ACTIONS = ("halt_all", "restart_all")  # a message to every drive, and one to the game


@dataclass(frozen=True)
class OperatorAction:
    """One control action from the page, after the server accepted its token."""

    name: str  # one of ACTIONS
    who: str  # as the server identified the operator
    wall_ns: int  # when the server accepted it
    axis: int = -1  # "drive" only
    command: str = ""  # "drive" only: one of DRIVE_COMMANDS


@dataclass(frozen=True)
class AxisRow:
    axis: int
    label: str  # "goalkeeper translation"
    state: str  # off, aligning, homing, ready, running, quick stop, fault
    position_rad: float
    position_m: float | None  # along the rod, table frame; None for a rotation axis
    velocity_rad_s: float
    velocity_m_s: float | None
    current_a: float
    fault_code: int
    fault: str  # "" when none


@dataclass(frozen=True)
class LinkRow:
    link_up: bool
    slaves: int
    expected_slaves: int
    al_state: str  # "OP", "SAFE-OP + ERROR"
    al_code: int
    working_counter: int
    expected_working_counter: int
    bad_working_counters: int  # since the MDA started
    bad_working_counters_window: int  # within the statistics window
    cycle_ms: float
    jitter_p99_us: float
    jitter_p99_max_us: float  # the worst reported p99 within the statistics window
    window_s: float
    # one line per slave out of OP (slave_line), then per drive's last CoE emergency
    # (emergency_line)
    slave_lines: tuple[str, ...] = ()

    @property
    def healthy(self) -> bool:
        return (self.link_up and self.slaves == self.expected_slaves and self.al_code == 0x08
                and self.working_counter == self.expected_working_counter)


@dataclass(frozen=True)
class AlarmRow:
    at_ms: int  # wall clock when this episode of the alarm was first heard
    text: str  # "MOTOR_DRIVER OVERCURRENT axis 5: drive 5 fault 0x2310 (overcurrent)"
    latched: bool
    active: bool  # still being repeated (its cause still present)


@dataclass
class _AlarmEpisode:
    first_ms: int
    last_s: float
    text: str
    latched: bool


@dataclass(frozen=True)
class ActionRow:
    at_ms: int  # wall clock, ms since the epoch
    who: str
    what: str  # "halt all", "drive 3 halt"
    result: str  # "sent GameControl STOP", "refused: ..."
    ok: bool


@dataclass(frozen=True)
class SupervisoryView:
    axes: tuple[AxisRow, ...] = ()
    link: LinkRow | None = None
    alarms: tuple[AlarmRow, ...] = ()  # newest first, one row per episode
    actions: tuple[ActionRow, ...] = ()  # newest first
    faulted: bool = False
    causes: tuple[str, ...] = ()
    fault_text: str = ""
    restarts: int = 0
    motors_stale: bool = True
    link_stale: bool = True
    drive_control: bool = False  # per-drive halt/release available in this release
    updates: tuple[str, ...] = ()  # boards' OTA updates under way

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if self.link is not None:
            data["link"]["healthy"] = self.link.healthy
        return data


def al_name(state: int) -> str:
    name = AL_NAMES.get(state & 0x0F, f"0x{state & 0x0F:02x}")
    return f"{name} + ERROR" if state & 0x10 else name


def _axis_label(axis: int) -> str:
    return f"{ROD_NAMES[rod_of(axis)]} {'translation' if is_translation(axis) else 'rotation'}"


def _slave_named(position: int) -> str:
    axis = position - 1
    where = f"axis {axis}, {_axis_label(axis)}" if axis < DRIVES else "not a drive"
    return f"slave {position} ({where}): "


def emergency_line(emergency: DriveEmergency) -> str:
    """A drive's last CoE emergency as the operator reads it: which drive, the code (with
    its name where the drive profile gives one) and the error register."""
    code = emergency.error_code
    name = (f" {ErrorCode(code).name.lower().replace('_', ' ')}"
            if code in ErrorCode._value2member_map_ else "")
    return (f"{_slave_named(emergency.position)}emergency 0x{code:04X}{name}, error register "
            f"0x{emergency.error_register:02X}, data 0x{emergency.data:010X}")


def slave_line(slave: SlaveState) -> str:
    """One slave out of OP as the operator reads it: which drive, its AL state and why."""
    line = _slave_named(slave.position)
    if slave.al_state == 0:
        return line + "no answer"
    line += al_name(slave.al_state)
    if slave.al_status_code:
        line += f", 0x{slave.al_status_code:04X} {slave.al_status_text}".rstrip()
    if slave.rx_errors > 0 or slave.lost_links > 0:
        line += f" · RX errors {slave.rx_errors}, lost links {slave.lost_links}"
    return line


def fault_text(code: int) -> str:
    if code == 0:
        return ""
    try:
        return f"0x{code:04x} {ErrorCode(code).name.lower().replace('_', ' ')}"
    except ValueError:
        return f"0x{code:04x}"


def drive_control_types() -> tuple[type, type] | None:
    """(DriveControl, DriveCommand) when the catalogue has them and lets this agent send
    DriveControl; None before then (per-drive control is then refused, not crashed)."""
    message = getattr(catalogue, "DriveControl", None)
    command = getattr(catalogue, "DriveCommand", None)
    if message is None or command is None:
        return None
    if Agent.SUPERVISORY_PANEL not in catalogue.SENDERS.get(message, ()):
        return None
    return message, command


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0


class SupervisoryCore:
    agent = Agent.SUPERVISORY_PANEL
    reads = (MotorStatus, EtherCatStatus, OtaStatus)  # and the runtime's RUNTIME_READS

    def __init__(self, table: Table, *, stale_after_s: float = 0.5,
                 stats_window_s: float = 60.0, history: int = 20,
                 alarm_hold_s: float = 0.35) -> None:
        self.rods: list[Rod] = table.robot_rods
        if len(self.rods) != 4:
            raise ValueError(f"the geometry has {len(self.rods)} robot rods, expected 4")
        self.stale_after_s = stale_after_s
        self.stats_window_s = stats_window_s
        self.motors: MotorStatus | None = None
        self.link: EtherCatStatus | None = None
        self.motors_at_s = -math.inf
        self.link_at_s = -math.inf
        self.history = history
        # An agent repeats a present cause's Alarm every 100 ms: one row per episode, active
        # while the repeats keep coming (within alarm_hold_s, as the latch holds a peer's).
        self.alarm_hold_s = alarm_hold_s
        self.alarms: dict[tuple[Agent, int, int], _AlarmEpisode] = {}  # oldest first
        self.actions: deque[ActionRow] = deque(maxlen=history)
        self._link_samples: deque[tuple[float, int, float]] = deque()  # (at, bad wc, p99)
        self._drive = drive_control_types()
        self._view: SupervisoryView | None = None  # the last view, reused while nothing changed
        self._view_key: tuple[Any, ...] = ()
        self.updates = UpdatesSeen()

    def step(self, inputs: Inputs) -> Outputs:
        now = inputs.now_s
        changed = False
        for message in inputs.messages:
            changed = changed or isinstance(message, MotorStatus | EtherCatStatus | Alarm
                                            | OtaStatus)
            if isinstance(message, MotorStatus):
                self.motors, self.motors_at_s = message, now
            elif isinstance(message, EtherCatStatus):
                self.link, self.link_at_s = message, now
                self._link_samples.append((now, message.bad_working_counters,
                                           message.wakeup_jitter_p99_s))
            elif isinstance(message, Alarm):
                self._alarm(message, now, inputs.wall_ns)
            elif isinstance(message, OtaStatus):
                self.updates.observe(message, now)
        while self._link_samples and now - self._link_samples[0][0] > self.stats_window_s:
            self._link_samples.popleft()
        out: list[Any] = []
        actions = tuple(inputs.sensed or ())
        taken = 0
        for action in actions:
            # Bounded by what goes on the LAN: HALT ALL and RESTART ALL send DRIVES + 1.
            cost = DRIVES + 1 if getattr(action, "name", None) in ALL_ACTIONS else 1
            if len(out) + cost > MAX_MESSAGES_PER_STEP:
                break
            out.extend(self._act(action))
            taken += 1
        extra = actions[taken:]
        if extra:  # one row for the lot: a flood must not push the real history out
            self._record(extra[-1], f"{len(extra)} more actions",
                         f"refused: more than {MAX_MESSAGES_PER_STEP} messages at once", False)
        # The same view object while nothing shown changed: the page is sent only news.
        key = (inputs.safety, now - self.motors_at_s > self.stale_after_s,
               now - self.link_at_s > self.stale_after_s, self._active(now),
               tuple(self.updates.lines(now)))
        if changed or actions or key != self._view_key or self._view is None:
            self._view, self._view_key = self.view(now, inputs.safety), key
        return Outputs(tuple(out), (), SafetyState.READY, self._view)

    def _alarm(self, alarm: Alarm, now: float, wall_ns: int) -> None:
        key = (alarm.source, int(alarm.code), alarm.axis)
        where = f" axis {alarm.axis}" if alarm.axis >= 0 else ""
        text = f"{alarm.source.name} {alarm.code.name}{where}: {alarm.text}"
        episode = self.alarms.get(key)
        if episode is not None and now - episode.last_s <= self.alarm_hold_s:
            episode.last_s, episode.text, episode.latched = now, text, alarm.latched
            return
        self.alarms.pop(key, None)  # a new episode: newest again
        self.alarms[key] = _AlarmEpisode(wall_ns // 10**6, now, text, alarm.latched)
        while len(self.alarms) > self.history:
            del self.alarms[next(iter(self.alarms))]

    def _active(self, now: float) -> tuple[tuple[Agent, int, int], ...]:
        return tuple(k for k, e in self.alarms.items() if now - e.last_s <= self.alarm_hold_s)

    # -- operator actions ------------------------------------------------------------------
    def _act(self, action: Any) -> list[Any]:
        what = _describe(action)
        name = getattr(action, "name", None)
        if name in ALL_ACTIONS:
            return self._all(action, what, halt=name == "halt_all")
        if name != "drive":
            return self._refused(action, what, f"unknown action {name!r}")
        axis, command = getattr(action, "axis", -1), getattr(action, "command", "")
        if type(axis) is not int or not 0 <= axis < DRIVES:
            return self._refused(action, what, f"axis {axis!r} is not 0..{DRIVES - 1}")
        if command not in DRIVE_COMMANDS:
            return self._refused(action, what, f"drive command {command!r} is not one of "
                                               f"{list(DRIVE_COMMANDS)}")
        if self._drive is None:
            return self._refused(action, what, "per-drive control needs DriveControl in the "
                                               "message catalogue (not in this release)")
        message_type, command_type = self._drive
        return self._sent(action, what, message_type(axis=axis,
                                                     command=command_type[command.upper()]))

    def _all(self, action: Any, what: str, halt: bool) -> list[Any]:
        """HALT ALL: a quick stop on every drive (held until released) and the game
        stopped; a red button that left the drives enabled would not be a halt. RESTART ALL:
        the system's restart, and every drive a person halted released (a release of a
        drive not halted is nothing to the motor driver), so each button undoes the other."""
        game = GameControl(GameCommand.STOP if halt else GameCommand.RESTART)
        if self._drive is None:
            return self._sent(action, what, game)
        message_type, command_type = self._drive
        command = command_type.HALT if halt else command_type.RELEASE
        drives = [message_type(axis=axis, command=command) for axis in range(DRIVES)]
        messages = [*drives, game] if halt else [game, *drives]
        self._record(action, what, f"sent {_shown(game)}, {message_type.__name__} "
                                   f"{command.name} to drives 0-{DRIVES - 1}", True)
        return messages

    def _sent(self, action: Any, what: str, message: Any) -> list[Any]:
        self._record(action, what, f"sent {_shown(message)}", True)
        return [message]

    def _refused(self, action: Any, what: str, reason: str) -> list[Any]:
        self._record(action, what, f"refused: {reason}", False)
        return []

    def _record(self, action: Any, what: str, result: str, ok: bool) -> None:
        self.actions.appendleft(ActionRow(at_ms=int(getattr(action, "wall_ns", 0)) // 10**6,
                                          who=str(getattr(action, "who", "?"))[:64],
                                          what=what, result=result, ok=ok))

    # -- the view ----------------------------------------------------------------------------
    def view(self, now: float, safety: SafetyView) -> SupervisoryView:
        return SupervisoryView(
            axes=self._axes(), link=self._link_row(),
            alarms=tuple(AlarmRow(e.first_ms, e.text, e.latched,
                                  now - e.last_s <= self.alarm_hold_s)
                         for e in reversed(self.alarms.values())),
            actions=tuple(self.actions), faulted=safety.faulted, causes=safety.causes,
            fault_text=safety.fault_text, restarts=safety.restarts,
            motors_stale=now - self.motors_at_s > self.stale_after_s,
            link_stale=now - self.link_at_s > self.stale_after_s,
            drive_control=self._drive is not None, updates=tuple(self.updates.lines(now)))

    def _axes(self) -> tuple[AxisRow, ...]:
        if self.motors is None:
            return ()
        rows = []
        for a in sorted(self.motors.axes, key=lambda a: a.axis):
            rod, translation = self.rods[rod_of(a.axis)], is_translation(a.axis)
            per_rad = rod.metres_per_motor_radian()
            rows.append(AxisRow(
                axis=a.axis, label=_axis_label(a.axis),
                state=a.state.name.lower().replace("_", " "),
                position_rad=_finite(a.position),
                # As the pole driver converts: radians from the homing switch's zero offset.
                position_m=_finite(motor_to_translation(rod, a.position)) if translation
                else None,
                velocity_rad_s=_finite(a.velocity),
                velocity_m_s=_finite(a.velocity * per_rad) if translation else None,
                current_a=_finite(a.current), fault_code=a.fault_code,
                fault=fault_text(a.fault_code)))
        return tuple(rows)

    def _link_row(self) -> LinkRow | None:
        s = self.link
        if s is None:
            return None
        samples = self._link_samples
        bad_window = max(0, samples[-1][1] - samples[0][1]) if samples else 0
        worst = max((p99 for _, _, p99 in samples), default=s.wakeup_jitter_p99_s)
        return LinkRow(link_up=s.link_up, slaves=s.slaves, expected_slaves=s.expected_slaves,
                       al_state=al_name(s.al_state), al_code=s.al_state,
                       working_counter=s.working_counter,
                       expected_working_counter=s.expected_working_counter,
                       bad_working_counters=s.bad_working_counters,
                       bad_working_counters_window=bad_window,
                       cycle_ms=s.cycle_period_s * 1e3,
                       jitter_p99_us=s.wakeup_jitter_p99_s * 1e6,
                       jitter_p99_max_us=worst * 1e6, window_s=self.stats_window_s,
                       slave_lines=(*map(slave_line, s.slaves_not_op),
                                    *map(emergency_line, s.emergencies)))


def catalogue_fields(message: Any) -> list[tuple[str, Any]]:
    return [(name, getattr(message, name)) for name, _ in catalogue.specs(type(message))]


def _shown(message: Any) -> str:
    fields = " ".join(v.name if isinstance(v, IntEnum) else f"{k}={v}"
                      for k, v in catalogue_fields(message))
    return f"{type(message).__name__} {fields}"


def _describe(action: Any) -> str:
    name = str(getattr(action, "name", "?"))[:32]
    if name == "drive":
        return f"drive {getattr(action, 'axis', '?')} {str(getattr(action, 'command', '?'))[:16]}"
    return name.replace("_", " ")

