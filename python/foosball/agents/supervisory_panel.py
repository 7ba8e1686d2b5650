"""Supervisory panel agent (SPA): what the pole board's display shows about the motors.

`SupervisoryCore.step(inputs) -> outputs` is pure: the MDA's MotorStatus and
EtherCatStatus and everybody's Alarms in, a `SupervisoryView` out (per axis: state,
position, speed, current, fault; the EtherCAT link; the alarms). The view is plain data
with a JSON form, for the panel web page (panels/) to render. Data older than
`stale_after_s` is marked stale rather than shown as if current: a silent MDA is itself
something the operator must see.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

from foosball.ethercat.layout import ErrorCode
from foosball.wire.catalogue import Alarm, EtherCatStatus, MotorStatus

AXIS_KIND = ("translation", "rotation")


@dataclass(frozen=True)
class AxisRow:
    axis: int
    label: str  # "goalkeeper translation"
    state: str
    position_rad: float
    velocity_rad_s: float
    current_a: float
    fault: str  # "" when none


@dataclass(frozen=True)
class LinkRow:
    link_up: bool
    slaves: str  # "8 / 8"
    al_state: str
    working_counter: str  # "24 / 24"
    bad_working_counters: int
    cycle_ms: float
    jitter_p99_us: float


@dataclass(frozen=True)
class SupervisoryView:
    axes: tuple[AxisRow, ...] = ()
    link: LinkRow | None = None
    alarms: tuple[str, ...] = ()
    motors_stale: bool = True
    link_stale: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SpaInputs:
    now_s: float
    messages: tuple[Any, ...] = ()


@dataclass(frozen=True)
class SpaOutputs:
    view: SupervisoryView


AL_NAMES = {0x01: "INIT", 0x02: "PRE-OP", 0x03: "BOOT", 0x04: "SAFE-OP", 0x08: "OP"}
ROD_NAMES = ("goalkeeper", "defence", "midfield", "attack")


def al_name(state: int) -> str:
    name = AL_NAMES.get(state & 0x0F, f"0x{state & 0x0F:02x}")
    return f"{name} + ERROR" if state & 0x10 else name


def fault_text(code: int) -> str:
    if code == 0:
        return ""
    try:
        return f"0x{code:04x} {ErrorCode(code).name.lower().replace('_', ' ')}"
    except ValueError:
        return f"0x{code:04x}"


@dataclass
class SupervisoryCore:
    stale_after_s: float = 0.5
    alarm_history: int = 20
    motors: MotorStatus | None = None
    link: EtherCatStatus | None = None
    motors_at_s: float = float("-inf")
    link_at_s: float = float("-inf")
    alarms: deque[str] = field(default_factory=lambda: deque(maxlen=20))

    def step(self, inputs: SpaInputs) -> SpaOutputs:
        now = inputs.now_s
        for message in inputs.messages:
            if isinstance(message, MotorStatus):
                self.motors, self.motors_at_s = message, now
            elif isinstance(message, EtherCatStatus):
                self.link, self.link_at_s = message, now
            elif isinstance(message, Alarm):
                where = f" axis {message.axis}" if message.axis >= 0 else ""
                self.alarms.appendleft(f"{message.source.name} {message.code.name}{where}: "
                                       f"{message.text}")
        return SpaOutputs(SupervisoryView(
            axes=self._axes(),
            link=self._link(),
            alarms=tuple(self.alarms),
            motors_stale=now - self.motors_at_s > self.stale_after_s,
            link_stale=now - self.link_at_s > self.stale_after_s))

    def _axes(self) -> tuple[AxisRow, ...]:
        if self.motors is None:
            return ()
        return tuple(
            AxisRow(axis=a.axis,
                    label=f"{ROD_NAMES[a.axis // 2]} {AXIS_KIND[a.axis % 2]}",
                    state=a.state.name.lower().replace("_", " "),
                    position_rad=a.position, velocity_rad_s=a.velocity, current_a=a.current,
                    fault=fault_text(a.fault_code))
            for a in self.motors.axes)

    def _link(self) -> LinkRow | None:
        s = self.link
        if s is None:
            return None
        return LinkRow(link_up=s.link_up, slaves=f"{s.slaves} / {s.expected_slaves}",
                       al_state=al_name(s.al_state),
                       working_counter=f"{s.working_counter} / {s.expected_working_counter}",
                       bad_working_counters=s.bad_working_counters,
                       cycle_ms=s.cycle_period_s * 1e3,
                       jitter_p99_us=s.wakeup_jitter_p99_s * 1e6)
