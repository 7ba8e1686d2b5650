"""Game panel agent (GPA): the game's owner and the strategy board's page.

Pure core: `GamePanelCore.step(Inputs) -> Outputs` (foosball.runtime). Its hardware is
the web page (foosball.panels.server.PanelHardware): `inputs.sensed` is the operator's
actions from the page (token already checked), `Outputs.actuation` the page's topics.

The game (DESIGN.md's safety states), as sent in GameState at 10 Hz and on every change:

- BOOT until the motor driver's MotorStatus is heard; ALIGNING or HOMING while any drive is;
  PAUSED while any drive is in QUICK_STOP or FAULT (halted on the supervisory panel, or
  stopped by the motor driver): START is refused until every drive is ready again;
- READY: drives ready, no match running. START begins a new match (score 0:0, clock 0);
- PLAYING <-> PAUSED with PAUSE and START; the match clock runs only while PLAYING;
- STOP ends the match (back to READY; the final score stays shown until the next START);
- FAULT while the runtime's latch is set (inputs.safety), with its causes as alarm_text. A
  RESTART leaves it only once every cause is gone (the runtime's latch decides, for every
  agent alike); the match then waits PAUSED (or the drives' ALIGNING/HOMING first) for a
  START: nothing resumes by itself. Whenever the game leaves PLAYING for FAULT or for drives
  that are not ready, the match is PAUSED.

GameControl from the wire (`foosball wire send GameControl command=PAUSE`, the supervisory
panel) and from the page follow the same rules: a page action becomes a GameControl the
core sends, and the runtime hands every GameControl the core sends back to the core as a
message (runtime/loop.py), so the core applies each one exactly once, in order, from one path.

Score: a goal is a track that ends in a goal mouth. When the tracker reports the ball LOST,
its last sighting (DETECTED only: a prediction drifts), carried on for GOAL_HORIZON_S at its
heading (from its last two sightings: the filter restarts its velocity at 0 after a kick,
and a hard shot is in the goal a frame later), must have its centre over a goal line
(|x| >= L/2) where it crossed inside the mouth (|y| <= goal width / 2); the goal stands when
the ball stays LOST for GOAL_CONFIRM_S (a ball bounced back off the goalkeeper is seen back
in the field first). The carrying-on matters: a ball shot into the goal vanishes between two
frames, and at 50 fps its last sighting is still in front of the line. One goal per entry:
the ball must be seen back inside the field before the next counts. Only goals during
PLAYING count. The robot scores at x = +L/2 (the human's goal). A goal not yet confirmed
when a match starts or resumes went in while nobody played, and is forgotten.

A ball that vanishes near a goal (last seen within NEAR_GOAL_M of its line, about the mouth)
without the rule above seeing it go in may have gone in hidden by the men, or stopped hidden
behind the goalkeeper: up to then the camera saw the same (both met on the rig). The next
sighting tells them apart, as the rules restart play (facts/rules-and-shots.md): after a goal
the ball comes back as a serve between the 5-man rods, and on the rig's table SERVE_WINDOW_S
after the ball was last seen (the simulator serves 1 s after the goal); a ball that stopped
hidden behind the 5-man rods is a dead ball, put back at that end's goalkeeper (after 3 s
still), and a hidden ball that rolls out is seen where it was. So a serve inside the window
counts the goal; no sighting within the window, or a serve after it (a person slow to serve,
or a possession restart), makes the goal *uncertain*: the page asks the operator, who counts
it or dismisses it in one press (a sighting elsewhere withdraws the question: the ball was
hidden, not in).

Camera calibration: the ball tracker's CalibrationStatus (1 Hz) goes to the page with what
to worry about: no report for `calibration_silence_s`, no date, or a reprojection error
above `calibration_warn_rms_px` (GamePanelConfig says why 1.5 px).

Vision tuning: the page's sliders send VisionConfig; its "learn from the ball" sends a
VisionLearn request (not while a match is playing: the tracker's board learns for seconds
beside its tracking), and the tracker's reply, the band now in use or why none was taken,
is shown with the thresholds.
"""

from __future__ import annotations

import base64
import math
from collections import deque
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

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
           "goal")
COMMANDS = {"start": GameCommand.START, "pause": GameCommand.PAUSE,
            "stop": GameCommand.STOP, "restart": GameCommand.RESTART}
VISION_FIELDS = tuple(f.name for f in fields(VisionConfig) if f.name != "preview")
ALARM_TEXT = 200
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


GOAL_HORIZON_S = 0.1  # the longest a vanished ball is carried on (5 frames at 50 fps)
GOAL_CONFIRM_S = 0.25  # LOST this long, not seen back in the field: the goal stands
TWO_SIGHTINGS_S = 0.05  # sightings this close give the heading (the filter's lags a kick)
MAX_SCORE = 999  # what GameState's score fields hold
# A ball lost this close to a goal line (|x| >= L/2 - NEAR_GOAL_M: behind the goalkeeper's
# rod, which stands 7.8 cm from the line) may have gone in hidden ...
NEAR_GOAL_M = 0.12
# ... when it was within the mouth widened by this (seen on the rig: a ball rolling along the
# end wall towards the mouth, last seen 3.9 cm beside the post, then hidden and in).
MOUTH_MARGIN_M = 0.05
# The serve that tells a hidden goal, timed from the last sighting: not sooner than a ball
# is taken out of the goal (the simulator serves 1 s after the goal, so on the rig 1.0-1.6 s
# after a ball last seen rolling in), and before a dead ball would be put at the goalkeeper
# (3 s still) or a possession limit restarts play (10-15 s).
SERVE_WINDOW_S = (0.5, 2.5)


class GoalDetector:
    """Goal = a track that ends in a goal mouth, then LOST (see the module doc)."""

    def __init__(self, table: Table) -> None:
        self.half_length = table.field.half_length
        self.goal_half = table.field.goal_width / 2
        self.field_x = table.field.half_length - table.ball.radius  # inside the end walls
        self.previous: BallState | None = None  # the sighting before `last`
        self.last: BallState | None = None  # the last sighting
        self.judged = False  # whether the loss after `last` was looked at
        self.pending: tuple[str, int] | None = None  # (team, LOST at): a goal to confirm
        self.armed = True
        self.serve_half = min(abs(r.x) for r in table.rods if r.role == "midfield")
        # (team, last seen at): lost near that goal, unseen since; the next sighting decides
        self.vanished: tuple[str, int] | None = None
        # The team of a goal the camera cannot decide, until the operator answers (one at a
        # time: a newer one replaces it), and whether it was asked about the ball now lost.
        self.uncertain: str | None = None
        self.asked = False

    def observe(self, ball: BallState) -> str | None:
        """The scoring team ("robot" or "human") when this ball state confirms a goal."""
        if ball.status == BallStatus.DETECTED:
            # Only what the camera saw: a predicted state is the filter's guess of a ball it
            # no longer sees, which drifts (a slow ball entering the mouth near a post was
            # predicted beside the post, out of the mouth).
            scored = self._next_sighting(ball) if self.vanished is not None else None
            self.previous, self.last, self.judged = self.last, ball, False
            if abs(ball.x) < self.field_x:
                self.armed = True
                self.pending = None  # back in the field: it bounced out, no goal
            return scored
        if ball.status != BallStatus.LOST:
            return None
        if self.last is not None and not self.judged and self.armed and self.pending is None:
            # Carried on as far as it goes in GOAL_HORIZON_S: the tracker gives up a
            # restarted track within a frame, and a ball hidden by a man on its way in is
            # still on its way in; a ball that was not in the goal is seen back in the field
            # before GOAL_CONFIRM_S.
            team = self._mouth_reached(self.last)
            if team is not None:
                self.pending, self.armed = (team, ball.capture_time), False
            else:
                self.vanished, self.asked = self._near_goal(self.last), False
        self.judged = True
        if self.vanished is not None and not self.asked and \
                (ball.capture_time - self.vanished[1]) * 1e-9 > SERVE_WINDOW_S[1]:
            self.uncertain, self.asked = self.vanished[0], True  # no serve in time: ask
        if self.pending is not None and \
                (ball.capture_time - self.pending[1]) * 1e-9 >= GOAL_CONFIRM_S:
            team, self.pending = self.pending[0], None
            return team
        return None

    def forget(self) -> None:
        """A match starts or resumes: a goal not yet confirmed went in while nobody played
        (seen on the rig: the previous match's last goal counted in the next one)."""
        self.pending = self.vanished = None

    def settle(self) -> None:
        """The operator answered the uncertain goal (counted or dismissed it)."""
        self.uncertain = self.vanished = None
        self.asked = False

    def _near_goal(self, last: BallState) -> tuple[str, int] | None:
        """(scoring team, last seen at) when `last` was near enough a goal to have gone in
        hidden."""
        if abs(last.x) < self.half_length - NEAR_GOAL_M or \
                abs(last.y) > self.goal_half + MOUTH_MARGIN_M:
            return None
        return ("robot" if last.x > 0 else "human"), last.capture_time

    def _next_sighting(self, ball: BallState) -> str | None:
        """The first sighting after a ball vanished near a goal: a serve within the window
        is the goal (returned); a serve after it leaves the goal uncertain; anywhere else the
        ball was hidden, not in."""
        assert self.vanished is not None
        team, seen_ns = self.vanished
        asked, self.vanished, self.asked = self.asked, None, False
        gap_s = (ball.capture_time - seen_ns) * 1e-9
        if abs(ball.x) > self.serve_half or gap_s < SERVE_WINDOW_S[0]:
            if asked:
                self.uncertain = None  # the question was about a hidden ball: withdrawn
            return None
        if gap_s <= SERVE_WINDOW_S[1]:
            return team
        self.uncertain = team  # served late: a goal, or a restart after a hidden ball
        return None

    def _heading(self, last: BallState) -> tuple[float, float]:
        """The ball's velocity when last seen: from its last two sightings when they are
        close in time (a kick restarts the filter's velocity at 0, and a hard shot is in the
        goal one frame later), else the filter's."""
        previous = self.previous
        if previous is not None:
            dt = (last.capture_time - previous.capture_time) * 1e-9
            if 0.0 < dt <= TWO_SIGHTINGS_S:
                return (last.x - previous.x) / dt, (last.y - previous.y) / dt
        return last.vx, last.vy

    def _mouth_reached(self, last: BallState) -> str | None:
        """The team scoring if `last` is in a mouth, or carried on for GOAL_HORIZON_S is
        over a goal line having crossed it inside the mouth."""
        vx, vy = self._heading(last)
        if abs(last.x) > self.field_x and abs(last.y) <= self.goal_half and vx * last.x >= 0:
            # past where the end wall stops a ball, not coming out: only the mouth lets it
            # (seen on the live table: last seen 1 mm in front of the line, still, at 50 fps)
            return "robot" if last.x > 0 else "human"
        x = last.x + vx * GOAL_HORIZON_S
        if abs(x) < self.half_length:
            return None
        line = math.copysign(self.half_length, x)
        if abs(last.x) >= self.half_length or vx == 0.0:
            y_at_line = last.y  # already over the line when last seen
        else:
            y_at_line = last.y + vy * (line - last.x) / vx
        if abs(y_at_line) > self.goal_half:
            return None
        return "robot" if line > 0 else "human"


def _iso(wall_time: float) -> str:
    return datetime.fromtimestamp(wall_time, UTC).isoformat(timespec="seconds")


class GamePanelCore:
    agent = Agent.GAME_PANEL
    reads = (BallState, RodStatus, MotorStatus, VisionPreview, VisionConfig, VisionLearn,
             CalibrationStatus, OtaStatus, HumanRods)  # and the runtime's RUNTIME_READS

    def __init__(self, table: Table, config: GamePanelConfig | None = None,
                 detector: DetectorConfig | None = None) -> None:
        self.table = table
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
                                     self.calibration_view)):
            if name not in views or (views[name][0] is not source and views[name][0] != source):
                views[name] = (source, build())
        return {"table": self._table_view, "game": game, "ball": views["ball"][1],
                "rods": views["rods"][1], "preview": self.preview,
                "vision": views["vision"][1], "calibration": views["calibration"][1],
                "updates": {"lines": self.updates.lines(self._last_now or 0.0)}}

    def vision_view(self) -> dict[str, Any]:
        return {"config": catalogue.to_json(self.vision), "sent": self.vision_sent,
                "learning": self.learning}

    def calibration_heard(self) -> CalibrationStatus | None:
        """The tracker's calibration, unless it has not been reported lately (a tracker
        that stopped says nothing about the calibration the next one will use)."""
        now = self._last_now if self._last_now is not None else -math.inf
        if now - self._calibration_heard_s > self.config.calibration_silence_s:
            return None
        return self.calibration

    def calibration_view(self) -> dict[str, Any]:
        """The calibration as the page shows it, with what an operator should worry about."""
        status = self.calibration_heard()
        if status is None:
            return {"reported": False, "warnings": [
                f"not reported by the ball tracker in the last "
                f"{self.config.calibration_silence_s:g} s (it does not run without its "
                f"calibration file)"]}
        warnings = []
        made = ""
        if status.made_at:
            made = datetime.fromtimestamp(status.made_at * 1e-9, UTC).strftime(
                "%Y-%m-%d %H:%M UTC")
        else:
            warnings.append("when it was made is unknown (the calibration file does not "
                            "say): calibrate again")
        limit = self.config.calibration_warn_rms_px
        if status.reprojection_rms_px > limit:
            warnings.append(f"reprojection error {status.reprojection_rms_px:.2f} px rms is "
                            f"above {limit:g} px: calibrate again")
        return {"reported": True, "rms_px": round(status.reprojection_rms_px, 2),
                "max_px": round(status.reprojection_max_px, 2),
                "table_rms_mm": round(status.table_rms_m * 1e3, 1), "made": made,
                "image": f"{status.width}x{status.height}", "markers": status.markers,
                "warnings": warnings}

    def _make_table_view(self) -> dict[str, Any]:
        f = self.table.field
        return {"length": f.length, "width": f.width, "goal_width": f.goal_width,
                "ball_diameter": self.table.ball.diameter,
                "foot_reach": self.table.man.foot_reach,
                "rods": [{"name": r.name, "team": r.team, "role": r.role, "x": r.x,
                          "men": r.men, "spacing": r.spacing, "travel_min": r.travel_min,
                          "travel_max": r.travel_max} for r in self.table.rods]}

    def ball_view(self) -> dict[str, Any] | None:
        ball = self.ball
        if ball is None:
            return None
        view: dict[str, Any] = {
            "t_ms": ball.capture_time / 1e6, "frame": ball.frame, "status": ball.status.name,
            "x": round(ball.x, 4), "y": round(ball.y, 4),
            "vx": round(ball.vx, 3), "vy": round(ball.vy, 3),
            "trail": [[round(x, 4), round(y, 4)] for _, x, y in self.trail], "path": []}
        if ball.status != BallStatus.LOST and math.hypot(ball.vx, ball.vy) > 0.05:
            segments = self.predictor.segments(ball.x, ball.y, ball.vx, ball.vy)
            path = [[s.x0, s.y0] for s in segments]
            if segments:
                last = segments[-1]
                path.append([last.x0 + last.ux * last.length, last.y0 + last.uy * last.length])
            view["path"] = [[round(x, 4), round(y, 4)] for x, y in path]
        return view

    def rods_view(self) -> list[dict[str, Any]]:
        """Every rod of the table in file order: the robot's as its drives measure them
        (RodStatus), the human's as the camera does (HumanRods, when the tracker measures
        them), else at the centre."""
        measured: dict[str, Any] = {}
        for team, status in ((self.table.robot_rods, self.rods),
                             (self.table.human_rods, self.human_rods)):
            for p in status.rods if status is not None else ():
                if int(p.rod) < len(team):
                    measured[team[int(p.rod)].name] = p
        out = []
        for rod in self.table.rods:
            p = measured.get(rod.name)
            out.append({"translation": round(p.translation, 4) if p else 0.0,
                        "rotation": round(p.rotation, 3) if p else 0.0,
                        "measured": p is not None})
        return out
