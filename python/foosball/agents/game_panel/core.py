"""The game panel agent's core: the game, the score, the page's actions and topics
(foosball.agents.game_panel's docstring says what it does)."""

from __future__ import annotations

import base64
import math
from collections import deque
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

from foosball.agents.game_panel.calibration import PanelCalibrating
from foosball.agents.game_panel.goals import GoalDetector
from foosball.agents.game_panel.views import PageViews
from foosball.drivetrain import is_translation, rod_of
from foosball.geometry import Table
from foosball.ota.progress import UpdatesSeen
from foosball.runtime import NO_FAULT, Inputs, Outputs
from foosball.schema import seconds, setting
from foosball.strategy.params import PredictionParams
from foosball.strategy.prediction import BallPredictor
from foosball.vision.config import HSV_BAND_FIELDS, DetectorConfig, VisionConfigError
from foosball.wire import catalogue
from foosball.wire.catalogue import (
    Agent,
    Alarm,
    AlarmCode,
    BallState,
    BallStatus,
    CalibrationStatus,
    CameraCalibration,
    CameraSnapshot,
    DriveState,
    GameCommand,
    GameControl,
    GameState,
    HumanRods,
    LearnStage,
    MotorStatus,
    OtaStatus,
    RodStatus,
    SafetyState,
    SchemaError,
    VisionConfig,
    VisionLearn,
    VisionPreview,
)

ACTIONS = ("start", "pause", "stop", "restart", "vision", "preview", "learn", "score",
           "goal", "look", "calibrate")
COMMANDS = {"start": GameCommand.START, "pause": GameCommand.PAUSE,
            "stop": GameCommand.STOP, "restart": GameCommand.RESTART}
VISION_FIELDS = tuple(f.name for f in fields(VisionConfig) if f.name != "preview")
ALARM_TEXT = 200
MAX_SCORE = 999  # what GameState's score fields hold
# Frames the tracker learns from (one in five of its next ones: 1 s of rolling at 200 fps).
LEARN_FRAMES = 40
# A request without an answer this long is given up (the tracker answers within its 10 s
# for the frames plus the learning's few seconds, unless it restarted meanwhile).
LEARN_ANSWER_S = 60.0


@dataclass(frozen=True)
class GamePanelConfig:
    state_period_s: float = seconds(0.1, high=10.0)  # GameState at 10 Hz, and at once on a change
    trail_s: float = seconds(0.5, high=60.0)  # the ball's trail on the page
    trail_points: int = setting(100, low=1, high=10_000)
    path_horizon_s: float = seconds(1.0, high=10.0)  # the predicted path drawn ahead of the ball
    log_entries: int = setting(12, low=1, high=1000)  # operator actions shown on the page
    alarm_entries: int = setting(8, low=1, high=1000)
    # A good calibration reprojects its marker corners well under 1 px (0.40 px rms on the
    # synthetic camera, 0.55 px on the simulator's). 1.5 px rms is about 4 mm on the table
    # at 2.2-2.5 mm per pixel, a quarter of the ball's radius: beyond it the markers were
    # found badly or have moved, and it is worth calibrating again.
    calibration_warn_rms_px: float = setting(1.5, above=0.0, high=100.0, unit="px")
    # The tracker reports every second; three reports missed and the page says so.
    calibration_silence_s: float = seconds(3.5, high=600.0)


def vision_from_detector(detector: DetectorConfig, preview: bool = False) -> VisionConfig:
    return VisionConfig(**{name: getattr(detector, name) for name in VISION_FIELDS},
                        preview=preview)


def _iso(wall_time: float) -> str:
    return datetime.fromtimestamp(wall_time, UTC).isoformat(timespec="seconds")


class GamePanelCore(PageViews):
    agent = Agent.GAME_PANEL
    reads = (BallState, RodStatus, MotorStatus, VisionPreview, VisionConfig, VisionLearn,
             CalibrationStatus, OtaStatus, HumanRods, CameraCalibration,
             CameraSnapshot)  # and the runtime's RUNTIME_READS

    def __init__(self, table: Table, config: GamePanelConfig | None = None,
                 detector: DetectorConfig | None = None) -> None:
        self.table = table
        self.calibrating = PanelCalibrating()  # the Camera tab, asking the tracker
        self.config = config = config or GamePanelConfig()
        self.goals = GoalDetector(table)
        self.predictor = BallPredictor(table, PredictionParams(horizon=config.path_horizon_s))
        self.match = "idle"  # idle | playing | paused
        self.score = {"robot": 0, "human": 0}
        self.clock_s = 0.0
        self.motors: MotorStatus | None = None
        self.rods: RodStatus | None = None
        self.human_rods: HumanRods | None = None  # the human's, measured by the camera
        self.ball: BallState | None = None
        self.trail: deque[tuple[int, float, float]] = deque(maxlen=config.trail_points)
        self.vision = vision_from_detector(detector or DetectorConfig())
        self.vision_sent = ""  # when the page last sent thresholds
        self.learning: dict[str, Any] | None = None  # the last learning asked for, and its end
        self._learn_requests = 0
        self._learn_asked_s = -math.inf
        self.preview: dict[str, Any] | None = None
        self._preview_parts: dict[int, bytes] = {}
        self._preview_frame = -1
        self.log: deque[dict[str, str]] = deque(maxlen=config.log_entries)
        # One row per alarm (source, code, axis), newest first: an agent repeats a present
        # cause's Alarm every 100 ms, and each repeat was a row of its own.
        self.alarms: dict[tuple[Agent, int, int], dict[str, Any]] = {}
        self.notice = ""
        self._safety = NO_FAULT
        self._table_view = self._make_table_view()
        self.calibration: CalibrationStatus | None = None
        self._calibration_heard_s = -math.inf
        self._views: dict[str, tuple[Any, Any]] = {}
        self._last_now: float | None = None
        self._last_sent_s = -math.inf
        self._last_sent: tuple[Any, ...] | None = None
        self.updates = UpdatesSeen()  # boards' OTA updates under way, for a status line

    # -- the game state ----------------------------------------------------------------
    def drives_phase(self) -> SafetyState:
        """What the drives allow the game. A drive in FAULT is FAULT; one in QUICK_STOP (a
        person halted it on the supervisory panel, or the motor driver stopped it) holds
        the game PAUSED until it is released and aligned and homed again: the strategy
        moves no rod while any drive is stopped, so a match that ran on would be played
        against a frozen robot."""
        if self.motors is None:
            return SafetyState.BOOT
        states = {axis.state for axis in self.motors.axes}
        if DriveState.FAULT in states:
            return SafetyState.FAULT
        if DriveState.QUICK_STOP in states:
            return SafetyState.PAUSED
        if states & {DriveState.OFF, DriveState.ALIGNING}:
            return SafetyState.ALIGNING
        if DriveState.HOMING in states:
            return SafetyState.HOMING
        return SafetyState.READY

    def drives_text(self) -> str:
        """The page's drives line: the phase, and which drives hold the game."""
        phase = self.drives_phase()
        if phase == SafetyState.BOOT:
            return "BOOT: no motor status yet"
        if phase not in (SafetyState.FAULT, SafetyState.PAUSED):
            return phase.name
        assert self.motors is not None
        state = DriveState.FAULT if phase == SafetyState.FAULT else DriveState.QUICK_STOP
        rods = self.table.robot_rods
        named = [f"{a.axis} ({rods[rod_of(a.axis)].role if rod_of(a.axis) < len(rods) else '?'} "
                 f"{'translation' if is_translation(a.axis) else 'rotation'})"
                 for a in sorted(self.motors.axes, key=lambda a: a.axis) if a.state == state]
        drives = f"drive{'s' if len(named) > 1 else ''} {', '.join(named)}"
        if phase == SafetyState.FAULT:
            return f"FAULT: {drives}"
        return (f"HALTED: {drives} in quick stop; the match waits until "
                f"{'they are' if len(named) > 1 else 'it is'} released and homed again")

    @property
    def state(self) -> SafetyState:
        if self._safety.faulted:
            return SafetyState.FAULT
        phase = self.drives_phase()
        if phase == SafetyState.FAULT:
            # The game's FAULT is the latch's (above): a drive's fault latches it on every
            # board within a cycle, and a stale MotorStatus just after a RESTART must not
            # read as a fault the latch no longer has. Until then the drive holds the game.
            return SafetyState.PAUSED
        if phase != SafetyState.READY:
            return phase
        return {"idle": SafetyState.READY, "playing": SafetyState.PLAYING,
                "paused": SafetyState.PAUSED}[self.match]

    def _hold_match(self) -> None:
        """Anything that stops the game leaves the match PAUSED, never resuming by itself."""
        if self.match == "playing" and self.state != SafetyState.PLAYING:
            self.match = "paused"

    def refusal(self, command: GameCommand) -> str:
        """Why `command` cannot apply now ("" when it can)."""
        state = self.state
        if command == GameCommand.START:
            if state not in (SafetyState.READY, SafetyState.PAUSED):
                return f"cannot start in {state.name}"
            if self.drives_phase() != SafetyState.READY:
                return f"cannot start: {self.drives_text()}"
        elif command == GameCommand.PAUSE:
            if state != SafetyState.PLAYING:
                return f"nothing to pause in {state.name}"
        elif command == GameCommand.STOP:
            if self.match == "idle":
                return "no match to stop"
        elif command == GameCommand.RESTART:
            if not self._safety.faulted:
                return "no fault to restart from"
            if self._safety.causes:
                return "causes still present: " + "; ".join(self._safety.causes)
        return ""

    def _apply(self, command: GameCommand) -> None:
        if self.refusal(command):
            return
        if command == GameCommand.START:
            if self.match == "idle":
                self.score = {"robot": 0, "human": 0}
                self.clock_s = 0.0
                self.goals.settle()  # a question about the last match's goal is gone
            self.match = "playing"
            self.goals.forget()
        elif command == GameCommand.PAUSE:
            self.match = "paused"
        elif command == GameCommand.STOP:
            self.match = "idle"
            self.goals.settle()
        # RESTART: the runtime's latch has already cleared (inputs.safety says so)

    def alarm_text(self) -> str:
        if not self._safety.faulted:
            return ""
        return ("; ".join(self._safety.causes) or self._safety.fault_text)[:ALARM_TEXT]

    # -- the step ----------------------------------------------------------------------
    def step(self, inputs: Inputs) -> Outputs:
        now = inputs.now_s
        if self._last_now is not None and self.state == SafetyState.PLAYING:
            self.clock_s += max(0.0, now - self._last_now)
        self._last_now = now
        self._safety = inputs.safety
        self._hold_match()
        self.calibrating.tick(now)
        out: list[Any] = []
        for message in inputs.messages:
            self._message(message, now, inputs.wall_ns)
        self._hold_match()
        for action in inputs.sensed or ():
            self._action(action, out)
        out.extend(self._game_state(now))
        state = self.state
        return Outputs(tuple(out), state=SafetyState.READY if state == SafetyState.FAULT
                       else state, actuation=self.topics())

    def _message(self, message: Any, now: float, wall_ns: int = 0) -> None:
        if isinstance(message, BallState):
            self._ball(message)
        elif isinstance(message, GameControl):
            self._apply(message.command)
        elif isinstance(message, RodStatus):
            self.rods = message
        elif isinstance(message, HumanRods):
            self.human_rods = message
        elif isinstance(message, MotorStatus):
            self.motors = message
        elif isinstance(message, VisionPreview):
            self._preview_part(message)
        elif isinstance(message, VisionConfig):
            self.vision = message  # a person's tool retuned the tracker
        elif isinstance(message, VisionLearn) and message.stage is not LearnStage.REQUEST:
            self._learnt(message)
        elif isinstance(message, CameraCalibration | CameraSnapshot):
            self.notice = self.calibrating.heard(message, wall_ns * 1e-9) or self.notice
        elif isinstance(message, CalibrationStatus):
            self.calibration = message
            self._calibration_heard_s = now
        elif isinstance(message, OtaStatus):
            self.updates.observe(message, now)
        elif isinstance(message, Alarm):
            self._alarm(message, wall_ns)
            if message.code == AlarmCode.RESTART_REFUSED:
                self.notice = f"{message.source.name.lower()}: {message.text}"

    def _alarm(self, alarm: Alarm, wall_ns: int) -> None:
        where = f" axis {alarm.axis}" if alarm.axis >= 0 else ""
        text = f"{alarm.source.name.lower()} {alarm.code.name}{where}: {alarm.text}"
        key = (alarm.source, int(alarm.code), alarm.axis)
        row = self.alarms.pop(key, None)  # popped and put back: newest last in the dict
        if row is None:
            row = {"text": text, "count": 0, "first": _iso(wall_ns * 1e-9)}
        row |= {"text": text, "count": row["count"] + 1, "last": _iso(wall_ns * 1e-9)}
        self.alarms[key] = row
        while len(self.alarms) > self.config.alarm_entries:
            del self.alarms[next(iter(self.alarms))]

    def alarm_rows(self) -> list[str]:
        """Newest first: the alarm's last text, and how often and until when it came."""
        return [row["text"] if row["count"] == 1 else
                f"{row['text']} (x{row['count']}, {row['first'][11:19]}-{row['last'][11:19]})"
                for row in reversed(self.alarms.values())]

    def _ball(self, ball: BallState) -> None:
        self.ball = ball
        asked = self.goals.uncertain
        scorer = self.goals.observe(ball)
        if scorer is not None and self.state == SafetyState.PLAYING:
            self.score[scorer] = min(MAX_SCORE, self.score[scorer] + 1)
            self.notice = f"goal for the {scorer}"
        if self.goals.uncertain is not None and self.match == "idle":
            self.goals.settle()  # no match: no goal to ask about
        elif self.goals.uncertain not in (None, asked):
            self.notice = f"goal for the {self.goals.uncertain}? The camera cannot tell"
        if ball.status == BallStatus.LOST:
            self.trail.clear()
            return
        self.trail.append((ball.capture_time, ball.x, ball.y))
        oldest = ball.capture_time - round(self.config.trail_s * 1e9)
        while self.trail and self.trail[0][0] < oldest:
            self.trail.popleft()

    def _preview_part(self, part: VisionPreview) -> None:
        if part.frame != self._preview_frame:
            self._preview_frame, self._preview_parts = part.frame, {}
        self._preview_parts[part.part] = part.mask
        if len(self._preview_parts) < part.parts:
            return
        mask = b"".join(self._preview_parts.get(i, b"") for i in range(part.parts))
        if len(mask) * 8 >= part.width * part.height:
            self.preview = {"frame": part.frame, "width": part.width, "height": part.height,
                            "bits": base64.b64encode(mask).decode()}
        self._preview_parts = {}

    def _action(self, action: Any, out: list[Any]) -> None:
        """One operator action from the page (token checked by the server)."""
        name = action.name
        result = ""
        if name in COMMANDS:
            command = COMMANDS[name]
            result = self.refusal(command)
            if not result:
                out.append(GameControl(command=command))
        elif name in ("vision", "preview"):
            config, result = self._vision_request(name, action.args)
            if config is not None:
                self.vision = config
                self.vision_sent = _iso(action.wall_time)
                out.append(config)
        elif name == "learn":
            result = self._learn_refusal()
            if not result:
                out.append(self._learn_request(_iso(action.wall_time)))
        elif name in ("look", "calibrate"):
            request, result = self.calibrating.ask(name, self._last_now or 0.0,
                                                   action.wall_time, self.match == "playing")
            out.extend([request] if request is not None else [])
        elif name == "score":
            result = self._correct_score(action.args)
            if not result:
                name = f"score {action.args['team']} {action.args['change']:+d}"
        elif name == "goal":
            team = self.goals.uncertain
            result = self._answer_uncertain(action.args)
            if not result:
                name = f"goal {team} {'counted' if action.args['count'] else 'dismissed'}"
        else:
            result = f"no action {name!r}"
        self.notice = f"{name} refused: {result}" if result else f"{name} sent"
        self.log.appendleft({"when": _iso(action.wall_time), "who": action.remote,
                             "action": name, "result": result or "sent"})

    def _correct_score(self, args: Any) -> str:
        """The operator's correction of a goal the camera missed or counted wrongly: one
        goal up or down for one team, while a match is on (why not, when refused)."""
        team, change = args.get("team"), args.get("change")
        if team not in self.score or type(change) is not int or change not in (1, -1):
            return "needs team robot or human and change +1 or -1"
        if self.match == "idle":
            return "no match is on"
        if not 0 <= self.score[team] + change <= MAX_SCORE:
            return f"the {team}'s score cannot go below 0 or above {MAX_SCORE}"
        self.score[team] += change
        return ""

    def _answer_uncertain(self, args: Any) -> str:
        """The operator's answer to an uncertain goal: counted ({"count": true}) or
        dismissed ({"count": false}); why not, when refused."""
        count = args.get("count")
        if type(count) is not bool:
            return "needs count true or false"
        team = self.goals.uncertain
        if team is None:
            return "no uncertain goal to answer"
        if count:
            result = self._correct_score({"team": team, "change": 1})
            if result:
                return result
        self.goals.settle()
        return ""

    def uncertain_view(self) -> dict[str, str] | None:
        team = self.goals.uncertain
        if team is None:
            return None
        return {"team": team, "text": f"Goal for the {team}? The ball vanished near the goal "
                                      f"and no serve followed in time: the camera cannot tell."}

    def _vision_request(self, name: str, args: Any) -> tuple[VisionConfig | None, str]:
        values = catalogue.to_json(self.vision)
        if name == "preview":
            values["preview"] = bool(args.get("on"))
        else:
            unknown = set(args) - set(VISION_FIELDS)
            if unknown:
                return None, f"unknown thresholds {sorted(unknown)}"
            values.update(args)
        try:
            config = catalogue.from_json(VisionConfig, values)
            DetectorConfig().with_panel(config)  # the tracker's own checks, before sending
        except (SchemaError, VisionConfigError, TypeError, ValueError) as exc:
            return None, str(exc)[:120]
        return config, ""

    # -- learning the ball's band (VisionLearn) -----------------------------------------
    def _learn_refusal(self) -> str:
        if self.match == "playing":
            return "not while a match is playing (pause it, roll the ball, then learn)"
        learning = self.learning
        if learning is not None and learning["state"] == "asked" and \
                (self._last_now or 0.0) - self._learn_asked_s < LEARN_ANSWER_S:
            return f"request {learning['request']} is still under way"
        return ""

    def _learn_request(self, when: str) -> VisionLearn:
        self._learn_requests += 1
        self._learn_asked_s = self._last_now or 0.0
        self.learning = {"request": self._learn_requests, "state": "asked", "asked": when,
                         "text": f"roll the ball across the table: the tracker learns from "
                                 f"{LEARN_FRAMES} of its next frames"}
        return VisionLearn(request=self._learn_requests, stage=LearnStage.REQUEST,
                           frames=LEARN_FRAMES, hue_low=0, hue_high=0, sat_low=0, sat_high=0,
                           val_low=0, val_high=0, ball_share=0.0, table_share=0.0, text="")

    def _learnt(self, reply: VisionLearn) -> None:
        """The tracker's answer (to this panel's request or another's: it shows either)."""
        asked = self.learning.get("asked", "") if self.learning else ""
        self.learning = {"request": reply.request, "state": reply.stage.name.lower(),
                         "asked": asked, "text": reply.text}
        if reply.stage is LearnStage.LEARNT:
            band = {name: getattr(reply, name) for name in HSV_BAND_FIELDS}
            self.learning |= {"band": band, "frames": reply.frames,
                              "ball_share": reply.ball_share, "table_share": reply.table_share}
            values = catalogue.to_json(self.vision) | band  # the tracker's band now
            self.vision = catalogue.from_json(VisionConfig, values)

    def _game_state(self, now: float) -> list[GameState]:
        state = self.state
        key = (state, self.score["robot"], self.score["human"], self.alarm_text())
        if key == self._last_sent and now - self._last_sent_s < self.config.state_period_s:
            return []
        self._last_sent, self._last_sent_s = key, now
        return [GameState(state=state, score_robot=self.score["robot"],
                          score_human=self.score["human"], clock_s=min(self.clock_s, 1e6),
                          alarm_text=key[3])]

    # -- what the page shows -----------------------------------------------------------
    def topics(self) -> dict[str, Any]:
        """The page's data, by topic (PanelHardware sends only the topics that changed)."""
        safety, state = self._safety, self.state
        game = {
            "state": state.name, "match": self.match,
            "score": {"robot": self.score["robot"], "human": self.score["human"]},
            "clock_s": math.floor(self.clock_s * 10) / 10,
            "drives": self.drives_phase().name, "drives_text": self.drives_text(),
            "faulted": safety.faulted, "fault_text": safety.fault_text,
            "causes": list(safety.causes),
            "allowed": {name: not self.refusal(command) for name, command in COMMANDS.items()},
            "notice": self.notice, "alarms": self.alarm_rows(), "log": list(self.log),
            "uncertain": self.uncertain_view(),
        }
        # The rest is rebuilt only when its source changed (the page is sent only what
        # changed, and a ball state comes every 5 ms).
        views = self._views
        for name, source, build in (("ball", self.ball, self.ball_view),
                                    ("rods", (self.rods, self.human_rods), self.rods_view),
                                    ("vision", (self.vision, self.vision_sent, self.learning),
                                     self.vision_view),
                                    ("calibration", self.calibration_heard(),
                                     self.calibration_view),
                                    ("calibrating", self.calibrating.changes,
                                     self.calibrating.view)):
            if name not in views or (views[name][0] is not source and views[name][0] != source):
                views[name] = (source, build())
        return {"table": self._table_view, "game": game, "ball": views["ball"][1],
                "rods": views["rods"][1], "preview": self.preview,
                "vision": views["vision"][1], "calibration": views["calibration"][1],
                "calibrating": views["calibrating"][1],
                "updates": {"lines": self.updates.lines(self._last_now or 0.0)}}
