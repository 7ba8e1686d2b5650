# Over 500 lines: one strategy whose team plan and per-rod decisions share the step's state;
# the parts that stand alone are their own modules (behind, kick, cover, possession, prediction).
"""The improved strategy: the seed's per-rod structure, with a team plan on top.

What it adds to the seed rules (docs/notes/issue-6.md measures each against them):
- PREDICT: the ball state is run forward by its age plus the actuation latency with the
  fitted friction model and wall bounces (`prediction`), and every rod works from where the
  ball will cross its line, not from a straight line.
- COVER: goalkeeper and defence stand so that their shadows, seen from the ball, together
  with the midfield's and attack's, leave no part of our goal mouth open (`cover`); when a
  shot is on its way each goes to the predicted crossing instead.
- CONTROL: a slow ball within reach in front of a rod is stopped (the foot gives way
  backwards as the ball arrives, which absorbs the rebound), then shot.
- AIM: the shot goes straight at the opponent's goal when the ball's line reaches the mouth,
  else at the smallest angle that does (the rig does not measure the opponent's men, so the
  strategy does not use them); the kick engine's direction calibration turns the angle into
  the ball's offset from the striking man's centre.
- BEHIND: a ball under or just behind one of our rods is played, not blocked in place: step
  aside, wind up, bring the man over it, strike (`behind`). A ball the camera loses under
  one of our rods while rolling along it is swept for: strikes along the rod (`behind`).
- RULES: the strategy keeps the possession clock of the table-soccer rules from the ball
  states (`possession`); past half a zone's limit its rod shoots the ball as soon as it is
  in reach, whatever its speed or the aim.
- TIMING: a ball rolling towards a rod is struck when its predicted time to the rod line
  equals the kick's time to contact (plus latency), from the predicted intersection.
- PASSTHROUGH: rods with the ball behind them lift their feet, so our own shots pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from foosball.geometry import Rod, Table
from foosball.strategy.base import BallView, RodStrategy, RodView, rod_view_list, to_target
from foosball.strategy.behind import (
    ALIGN_TOLERANCE,
    FEET_UP,
    GIVE_UP_S,
    HIDE_BAND,
    SIDESTEP_CLEARANCE,
    STRIKE_BEHIND,
    STRIKE_FROM_WINDUP_S,
    BehindPlay,
    HiddenSweep,
    aside_translation,
    backstop,
    is_behind,
    sweep_translations,
)
from foosball.strategy.cover import Interval, plan_cover, rod_shadows
from foosball.strategy.kick import (
    RULES_STRIKE_END,
    SEARCH_STRIKE_END,
    KickEngine,
    KickProfile,
    KickRequest,
    Phase,
    offset_for_angle,
)
from foosball.strategy.params import StrategyParams
from foosball.strategy.possession import PossessionClock
from foosball.strategy.prediction import BallPoint, BallPredictor
from foosball.strategy.rods import men_offsets, reach
from foosball.strategy.setpoint import RodSetpoint
from foosball.wire.catalogue import (
    BallState,
    BallStatus,
    HumanRods,
    RodCommand,
    RodId,
    RodStatus,
)

HOME_TURN = math.pi + 0.2  # rad: rotation targets stay within this of 0 (see _unwound)
HIDDEN_SPEED = 0.5  # m/s: a ball lost slower than this is taken to lie where it was last seen
URGENT = 0.5  # fraction of a possession limit after which the ball is shot at once

LIFT = -1.5  # rad: feet back and up, the ball passes underneath
# rad: the goalkeeper's strike at a ball at rest ends just past it: the drive is still
# slow there, so the ball leaves at about 2.6 m/s (a clearing pass, not a shot), and the
# man is back down in time to block it if the opponent's attack rod sends it back along
# the same line (issue 13's restart at the goalkeeper: human goals within 2 s of 30
# restarts vs pro 22 with the full strike, 2 with this one)
KEEPER_STRIKE_END = 0.8
LIFT_TIME = 0.1  # s: about how long a rod takes to lift its feet
LIFTED = 1.2  # rad: a rod turned further than this has its feet clear above the ball
SHOT_SPEED = 3.0  # m/s: a ball this fast towards our goal is a shot in flight
SIDEWAYS_VX = 0.5  # m/s: a ball slower than this along the table rolls along a rod line
THREAT_LEAD_S = 0.06  # s: how far ahead a ball rolling along a rod is covered (drive lag)
HUMAN_FEET_UP = 0.85  # rad: a human man turned further has his foot above the ball
GAP_MARGIN = 0.005  # m: room for the human's men moving while the shot is on its way
IDLE_PLAN = "idle"
LOST_TOWARDS_REACH = 0.14  # m: a ball lost rolling at a rod from this close stops at it
IDLE_FEET_UP = 1.0  # rad: an idle rod turned further than this puts its feet down
FOOT_AT_BALL = 0.84  # rad: a foot is at the ball's height within about 48 deg of the bottom
# m: how much further a table's men may reach than its geometry file says (the simulator's
# randomised tables: feet 72-80 mm from the axis, up to 12 mm thick)
MEN_TOLERANCE = 0.008
SWEEP_SLIVER = 0.05  # rad: a turn overlapping those angles by less touches nothing
SWEEP_SLOW = 4.0  # rad/s: a foot turning back no faster than this only nudges a ball
# rad beyond a foot's reach down to the ball's height where a backward turn slows already
# (the drive needs the time to come down from full speed)
SLOW_BAND = 0.3
SWEEP_NOW, SWEEP_ON_THE_WAY = 1, 2  # what _strikes_back found
SWEEP_LOOKAHEAD_S = 0.12  # s: about how long feet lifted up take to come down
BACKSWING_LOOKAHEAD_S = 0.04  # s: latency and a backswing's way to the ball's height
PATH_MARGIN = 0.01  # m: our men stand this much further from our own shot's line
ROLLING_OUT = 0.05  # m/s: a ball behind the goalkeeper this fast forwards rolls out
ALONG_SPEED = 0.1  # m/s: a ball behind the goalkeeper this fast across rolls along his rod
STILL_SPEED = 0.08  # m/s: a ball seen slower than this lies still (for the goalkeeper)
STILL_PLAYING_SPEED = 0.2  # m/s: and goes on lying still once the goalkeeper plays it
ROLL_ON_S = 0.3  # s: how long a ball lost under our lifted feet is taken to roll on
GONE_S = 0.5  # s: a ball lost fast this long is gone (a goal, a restart): no plan on it
ROLLING_SPEED = 0.1  # m/s: a ball lost faster than this under lifted feet rolls on
INCOMING_SPEED = 1.5  # m/s: a foot swinging back (about 20 rad/s) is slower than this
LOST_MARGIN = 0.02  # m: a man's further way from a ball out of the camera's sight
SIDE_MARGIN = 0.004  # m: a man moving sideways stops this far short of touching the ball
LIFTED_MARGIN = SIDESTEP_CLEARANCE / 2  # m: feet lifted come down this much clear of it
BEHIND_SAFE = 0.05  # m behind the axis: a ball further back is struck only lying still
# m beyond the men's reach behind the axis: feet coming down from behind still meet a ball
# there (issue 30, pro seed 8903 randomised: a ball 80 mm behind the defence's axis)
DOWN_BEHIND_MARGIN = 0.03



def _whole_turns_near(angle: float) -> tuple[float, float, float]:
    """The whole turns (multiples of 2 pi) around `angle`: a rod's angle is not wrapped,
    so an angle range is looked for a turn either side of the one it is in."""
    turns = round(angle / (2 * math.pi))
    return 2 * math.pi * (turns - 1), 2 * math.pi * turns, 2 * math.pi * (turns + 1)


@dataclass(slots=True)
class RodPlan:
    """What the team plan asks of one rod this step."""

    mode: str  # "block" | "cover" | "lift" | "control" | "strike" | "idle"
    y: float = 0.0  # where a man should be (block) or the translation (cover)
    translation: float | None = None  # exact translation wanted (cover, control)
    rotation: float = 0.0
    rotation_speed: float = 0.0
    kick: KickRequest | None = None
    absolute: bool = False  # the rotation as it is, not the nearest same pose (a wind-up)
    shot: ShotLine | None = None  # the line of the shot this rod lines up (shoot)


@dataclass(frozen=True, slots=True)
class ShotLine:
    """Where one of our shots starts and its direction (dy/dx, before the side walls)."""

    x: float
    y: float
    slope: float


_IDLE = RodPlan(IDLE_PLAN)  # shared by every idle rod (plans are changed only where made)


class ImprovedStrategy(RodStrategy):
    name = "improved"

    def __init__(self, table: Table | None = None, params: StrategyParams | None = None) -> None:
        super().__init__(table, params)
        p = self.params
        self.predictor = BallPredictor(self.table, p.prediction)
        self.profile = KickProfile.from_params(p.kick_engine)
        self.kicks = [KickEngine(self.profile) for _ in self.rods]
        self.kick_base = [0.0 for _ in self.rods]  # translation held while a kick runs
        self.kick_lines: list[ShotLine | None] = [None for _ in self.rods]  # each kick's line
        self.behind: list[BehindPlay | None] = [None for _ in self.rods]
        self.sweeps: list[HiddenSweep | None] = [None for _ in self.rods]
        self.lost_at: float | None = None  # when the ball went out of sight on the table
        self.lost_slow = False  # whether it was slow then (it lies where it was last seen)
        self.gone_at: float | None = None  # when a ball lost fast (not hidden) went
        self.detected: tuple[float, float] | None = None  # where the camera last saw the ball
        self.seen_vx = 0.0  # the ball's velocity along the table when last in view
        self.seen_speed = 0.0  # and its speed
        # (when, the ball as last seen) if it was lost rolling under our lifted feet
        self.lost_rolling: tuple[float, BallPoint] | None = None
        self.clock = PossessionClock(self.table)
        self.urgency = 0.0  # fraction of our zone's possession limit used up
        self.last: list[RodSetpoint | None] = [None for _ in self.rods]
        self.last_ball: BallPoint | None = None
        man = self.table.man
        r = self.table.ball.radius
        self.radius = r
        self.block_half = man.foot_width / 2 + r
        self.contact_ahead = man.foot_thickness / 2 + r  # ball centre touching an upright foot
        self.reach_ahead = man.contact_reach
        # the guards against our feet striking the ball at our goal reckon, in our defence,
        # with men reaching MEN_TOLERANCE further (issue 30, seed-rules 8672 randomised: the
        # defence's feet lifting back met a ball 80 mm behind its axis at -1.0 rad, into our
        # goal): how far along the table, and up to which angle a foot's face is at the
        # ball's top; further up the table, the geometry file's men (a ball struck back
        # there meets our own rods before our goal, and wider guards cost our attack's shots)
        ball_top = man.rod_height - 2 * r  # below the axis
        face = (ball_top - man.foot_thickness / 2) / (man.foot_reach + MEN_TOLERANCE)
        self.guards = ((self.reach_ahead + MEN_TOLERANCE,
                        max(FOOT_AT_BALL, math.acos(min(1.0, face)))),
                       (self.reach_ahead, FOOT_AT_BALL))
        self.lever = man.rod_height - r
        half_goal = self.table.field.goal_width / 2
        self.our_goal_x = -self.table.field.half_length
        self.their_goal_x = self.table.field.half_length
        self.mouth = Interval(-half_goal, half_goal)
        self.aim_mouth = Interval(-half_goal + r, half_goal - r)
        self.behaviours = []  # a team plan (plan_rods) and act() replace per-rod behaviours
        self.their_rods = self.table.human_rods
        self.rod_ids = tuple(RodId(i) for i in range(len(self.rods)))
        # fixed by the geometry: where each rod's men can touch the ball along y
        self.touch_bands = [
            [(lo - self.block_half, hi + self.block_half) for lo, hi in rod.reachable_y()]
            for rod in self.rods
        ]
        self.their_xs = [h.x for h in self.their_rods]
        self.their_front_x = min(self.their_xs)  # the opponent's rod nearest our goal
        self.time_to_contact = self._time_to_contact()
        limit = math.radians(max(p.kick_engine.aim_angles_deg))
        angles = sorted(np.linspace(-limit, limit, 25).tolist(), key=lambda a: (abs(a), a))
        self.aim_slopes = [(a, math.tan(a)) for a in angles]  # straight first
        self.log: list[tuple[float, int, BallPoint | None, str]] | None = None  # kicks, if set
        self.plans_last: list[RodPlan] | None = None  # for tests and diagnostics
        # (rod x, men y) of the human's rods with their feet down, as the camera last
        # measured them (observe_human_rods); None: not measured, or not asked for
        self.human_men: list[tuple[float, tuple[float, ...]]] | None = None
        # per rod, the last setpoint and its wire target (a NaN never equals: made again)
        unset = RodSetpoint(math.nan, math.nan, math.nan, math.nan)
        self.sent = [(unset, to_target(rod_id, rod, unset))
                     for rod_id, rod in zip(self.rod_ids, self.rods, strict=True)]

    # --- the controller interface --------------------------------------------------------

    @property
    def wants_human_rods(self) -> bool:
        """Whether this strategy reads the human's rods (HumanRods): only to aim past his
        men (`aim_through_gaps`)."""
        return self.params.improved.aim_through_gaps

    def observe_human_rods(self, rods: HumanRods) -> None:
        """The human's men where the ball tracker measured them (table frame, the robot's
        frame). A rod whose feet are seen lifted past the ball's height hides nothing; a rod
        not measured on that frame (men_seen 0) keeps its last values, as the message says."""
        men = []
        for measured in rods.rods:
            if not 0 <= measured.rod < len(self.their_rods):
                continue
            if measured.rotation_seen and abs(measured.rotation) > HUMAN_FEET_UP:
                continue
            rod = self.their_rods[measured.rod]
            men.append((rod.x, rod.men_y(measured.translation)))
        self.human_men = men

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        now = now_ns * 1e-9
        view = self.ball_view(ball, now_ns)
        if ball is not None and ball.status == BallStatus.DETECTED:
            self.detected = (ball.x, ball.y)
        setpoints = self.decide(now, view, rod_view_list(rods, len(self.rods)))
        sent = self.sent
        for i, setpoint in enumerate(setpoints):
            # a rod asked for the same as last step gets the same (immutable) target again
            if sent[i][0] is not setpoint and sent[i][0] != setpoint:
                sent[i] = (setpoint, to_target(self.rod_ids[i], self.rods[i], setpoint))
        targets = tuple([target for _, target in sent])
        return RodCommand(ball_capture_time=ball.capture_time if ball else 0, rods=targets)

    # --- the team plan ---------------------------------------------------------------------

    def decide(self, now: float, ball: BallView | None, here: list[RodView]) -> list[RodSetpoint]:
        hidden_under = None
        if ball is not None:
            self.last_ball = self.predictor.compensate(ball.x, ball.y, ball.vx, ball.vy, ball.age)
            self.urgency = self.clock.update(self.last_ball.x, now)
            self.seen_vx = self.last_ball.vx
            self.seen_speed = self.last_ball.speed
            self.lost_at = None
            self.gone_at = None
            self.lost_rolling = None
            self.sweeps = [None for _ in self.rods]
        elif self.lost_rolling is not None and now - self.lost_rolling[0] < ROLL_ON_S:
            # lost rolling under one of our rods with its feet up: nothing stops it there,
            # so it rolls on as predicted (frozen where it was last seen, it lay in front of
            # the rod, whose feet then came down on it and struck it back at our goal)
            self._roll_on(now)
        elif self.last_ball is not None and (
            self.last_ball.speed < HIDDEN_SPEED
            or (hidden_under := self.hiding_rod()) is not None
            or self.lost_rolling is not None
        ):
            # lost while slow (most likely under a man: the camera does not see through
            # them), or rolling along one of our rods right under its axis (the rod hides
            # the ball's middle): play on where it was last seen, at rest, and keep the
            # possession clock running, as the referee does
            last = self.last_ball
            if self.lost_at is None:
                self.lost_at, self.lost_slow = now, last.speed < HIDDEN_SPEED
                under = self.hiding_rod()
                if under is not None and abs(here[under].rotation) > LIFTED and (
                        last.speed > ROLLING_SPEED):
                    self.lost_rolling = (now, last)
            if self.lost_rolling is not None:
                hidden_under = None  # it passed under the lifted feet: no sweep for it
            if self.lost_rolling is not None and now - self.lost_rolling[0] < ROLL_ON_S:
                self._roll_on(now)
            else:
                if hidden_under is None and self.lost_rolling is None:
                    hidden_under = self.hiding_rod()
                wall = self.table.field.half_width - self.radius
                x, y = last.x, max(-wall, min(wall, last.y))
                if self.detected is not None and (
                        self.lost_rolling is not None or abs(x) > self.table.field.half_length):
                    # taken to roll on under our lifted feet (ROLL_ON_S) and still not seen,
                    # or taken to lie past a goal line: it did not roll on as taken (the
                    # open field is in view), something under the feet stopped it; it lies
                    # about where the camera last saw it, under the rod that hides it, which
                    # sweeps for it (issue 30, club seed 9232: the tracker's prediction ran
                    # it to x = -1.077, behind our goal line, while it lay 17 mm in front of
                    # our attack rod under its feet, lifted for that ball "in our defence",
                    # unseen 15 s; pro seed 9203 on a randomised table: run on to our end
                    # wall and back to 84 mm behind our midfield, while it lay under the
                    # midfield's lifted feet, unseen 10 s: our possession fouls)
                    x, y = self.detected
                    self.lost_rolling = None
                    self.lost_slow = False
                    hidden_under = self.hiding_rod()
                if hidden_under == 0 and self.detected is not None and not self.keeper_may_swing(
                        BallPoint(0.0, *self.detected, 0.0, 0.0), now):
                    # lost rolling at the goalkeeper: a sweep's wind-up swings the feet back
                    # through wherever it has rolled to behind the man (issue 30, seed-rules
                    # seed 7033: detected 30 mm behind the axis by the side wall, it rolled
                    # along the end wall to 41 mm behind the man, and the sweep's backswing
                    # struck it in). No sweep: it lies where the camera last saw it (until
                    # it has come to rest, keeper_may_swing).
                    hidden_under = None
                    x, y = self.detected
                self.last_ball = BallPoint(0.0, x, y, 0.0, 0.0)
                self.urgency = self.clock.urgency(now)
        else:
            self.clock.reset()  # lost fast: a goal, or the ball taken off the table
            self.urgency = 0.0
            if self.gone_at is None:
                self.gone_at = now
            elif now - self.gone_at > GONE_S:
                # no plan on a ball long gone: every rod idles, its feet down (issue 30, pro
                # seed 9280 on a randomised table: the ball put back at our 5-man rod after
                # a foul lay under its feet, lifted for the old ball, and the camera did not
                # see it for 10 s: our possession foul)
                self.last_ball = None
        b = self.last_ball
        out: list[RodSetpoint] = []
        plans = self.plan_rods(now, b, here) if b is not None else None
        if plans is not None and hidden_under is not None and self.lost_at is not None and (
            not self.lost_slow or now - self.lost_at > GIVE_UP_S
        ):
            # lost on the move, or not found where it was last seen: sweep the rod for it
            plans[hidden_under] = self.play_hidden(hidden_under, here[hidden_under])
        self.plans_last = plans
        for i, rod in enumerate(self.rods):
            plan = plans[i] if plans is not None else _IDLE
            out.append(self.act(i, rod, now, plan, here[i]))
        return out

    def _roll_on(self, now: float) -> None:
        """The ball lost under our lifted feet, where it has rolled to since (`lost_rolling`)."""
        assert self.lost_rolling is not None
        since, seen = self.lost_rolling
        on = self.predictor.state_at(seen.x, seen.y, seen.vx, seen.vy, now - since)
        self.last_ball = BallPoint(0.0, on.x, on.y, on.vx, on.vy)
        self.urgency = self.clock.urgency(now)

    def plan_rods(self, now: float, b: BallPoint, here: list[RodView]) -> list[RodPlan]:
        plans = [_IDLE for _ in self.rods]  # every rod's entry is replaced, never changed
        keeper, defence = self.rods[0], self.rods[1]
        # 1. who plays the ball: a rod with the ball slow (or rolling in) within its reach
        owner = None
        for i, rod in enumerate(self.rods):
            plan = self.play_ball(i, rod, now, b, here[i])
            if plan is not None:
                plans[i] = plan
                owner = i
                break
        # 2. our rods ahead of our own shot clear its path, and rods with our ball coming
        # through from behind lift their feet (a man left in its path sends it back into
        # our goal: issue 13's restart at the goalkeeper, issue 30's clear at 7.6 m/s into
        # our own 2-man rod). A rod whose men are in the shot's path steps aside, feet down,
        # or lifts if it cannot; the others hold still, feet down, so as not to walk into
        # it; the shot waits until the path is clear. (A ball in view only: lifted feet
        # hide a ball from the camera.)
        line = self.shot_line_of(owner, plans, here) if self.lost_at is None else None
        waiting = False  # the shot's path is not clear yet
        for i, rod in enumerate(self.rods):
            if i == owner or b.x >= rod.x - self.radius:
                continue
            if i >= 2 and b.x < self.their_front_x + self.reach_ahead and (
                    b.vx <= 0.3 or abs(here[i].rotation) > LIFTED):
                # the ball in our defence, where the opponent's front rod plays it (and our
                # midfield does not reach it): our midfield and attack can only be in the
                # way of our clears and of our blocks' rebounds, which come off them back at
                # our goal faster than feet lift (issue 30: a shot blocked by our defence at
                # 6 m/s, back off our own midfield at 3 m/s and in; pro seed 7001: our 2-man
                # rod's clear off a 5-man rod that held still off the clear's line, which
                # the kick only roughly keeps): their feet are up before the ball comes,
                # and stay up as they are while it comes through (a ball on its way to feet
                # still down: below); our shot waits for feet in its path to be up
                forward = here[i].rotation > LIFTED
                plans[i] = RodPlan("lift", rotation=-LIFT if forward else LIFT)
                if line is not None and abs(here[i].rotation) < LIFTED:
                    waiting = waiting or self.in_path(rod, line, here[i].translation)
            elif line is not None:
                plans[i], blocked = self.clear_path(rod, line, here[i])
                waiting = waiting or blocked
            elif b.vx > 0.3:
                # (close: within reach, or there before the feet are up; feet swung back
                # into a ball coming at them knock it back at our goal, issue 13: 15 s in
                # the corner between our goalkeeper and 2-man rod); a rod none of whose
                # men is on the ball's way keeps its feet down (issue 30: all four rods
                # lifted while the ball rolled out of our defence)
                close = b.x + max(b.vx, 0.0) * LIFT_TIME > rod.x - self.reach_ahead - 0.01
                rolling = ShotLine(b.x, b.y, b.vy / b.vx)
                if not close and not self.in_path(rod, rolling, here[i].translation):
                    # feet down, and still: moving, its men could walk into the ball's way
                    plans[i] = RodPlan("control", translation=here[i].translation)
                    continue
                # back and up unless the backswing would meet the ball: feet lifted forward
                # must come down again through the ball that has just passed under them
                # (issue 30: struck back at our goal), feet lifted back come down behind it
                backswing_meets = (b.x + max(b.vx, 0.0) * BACKSWING_LOOKAHEAD_S
                                   > rod.x - self.guard(rod)[0] - 0.005)
                lifted_back = here[i].rotation < -1.0
                forward = backswing_meets and not lifted_back
                plans[i] = RodPlan("lift", rotation=-LIFT if forward else LIFT)
        if waiting and owner is not None and self.urgency <= URGENT:
            plans[owner].kick = None  # the shot waits for its path to be clear
        if b.x < 0.0:
            self.keep_feet_down(plans, here, b)
        # 3. a ball that will reach a rod before any opponent can touch it: go to its crossing;
        #    otherwise block the shot the opponent can take where he next meets the ball
        origin_x, origin_y = self.threat_origin(b)
        fast = b.speed > SHOT_SPEED
        for i, rod in enumerate(self.rods):
            if plans[i] is not _IDLE:  # the owner, and rods that clear or lift (2.)
                continue
            # a shot (fast) passes the opponent's rods, which lift for it or miss it
            unhindered = fast or not _any_between(self.their_xs, rod.x, b.x)
            if b.vx < -0.3 and unhindered and b.x > rod.x:
                hit = self.predictor.crossing(b.x, b.y, b.vx, b.vy, rod.x)
                if hit is not None:
                    y = hit.y
                    if i == 0:  # the goalkeeper never leaves the goal mouth for it
                        y = max(self.mouth.low, min(self.mouth.high, y))
                    plans[i] = RodPlan("block", y=y)
                    continue
            if i >= 2 and rod.x < origin_x:
                # midfield and attack: stand on the line from the shot's origin to our goal
                y = origin_y + (0.0 - origin_y) * (rod.x - origin_x) / (self.our_goal_x - origin_x)
                plans[i] = RodPlan("block", y=y)
        # 4. goalkeeper and defence cover the mouth together (unless busy)
        free_keeper = plans[0].mode == IDLE_PLAN
        free_defence = plans[1].mode == IDLE_PLAN
        if free_keeper or free_defence:
            block = self.block_half - self.params.improved.block_margin
            fixed = []
            # shadows of midfield and attack count where those rods stand now, feet down and
            # settled on their plan; a kicking or lifted defence hides nothing
            for i in (2, 3):
                if plans[i].mode == "block" and self.rods[i].x < origin_x:
                    t = reach(self.rods[i], plans[i].y, here[i].translation).translation
                    settled = abs(t - here[i].translation) < 0.004
                    if settled and abs(here[i].rotation) < 0.2 and not self.kicks[i].active:
                        fixed += rod_shadows(self.rods[i], here[i].translation, origin_x,
                                             origin_y, block, self.our_goal_x)
            if not free_defence and not self.kicks[1].active and abs(here[1].rotation) < 0.2:
                fixed += rod_shadows(defence, here[1].translation, origin_x, origin_y, block,
                                     self.our_goal_x)
            cover = plan_cover(origin_x, origin_y, keeper, defence, self.our_goal_x, self.mouth,
                               block, here[0].translation, here[1].translation, fixed)
            if free_keeper:
                plans[0] = RodPlan("cover", translation=cover.goalkeeper_translation)
            if free_defence:
                plans[1] = RodPlan("cover", translation=cover.defence_translation)
        return plans

    def shot_line_of(self, owner: int | None, plans: list[RodPlan],
                     here: list[RodView]) -> ShotLine | None:
        """The line of the shot the ball's owner is lining up or striking (until its foot is
        through the ball), or None."""
        if owner is None:
            return None
        if plans[owner].shot is not None:
            return plans[owner].shot
        # while the kick runs, and after the strike while the ball is on its way: the
        # tracker's velocity lags a kick by a few frames, too late to lift for it
        phase = self.kicks[owner].phase
        if phase in (Phase.WIND_UP, Phase.STRIKE, Phase.FOLLOW_THROUGH):
            return self.kick_lines[owner]
        return None

    def in_path(self, rod: Rod, line: ShotLine, translation: float) -> bool:
        """Whether a man of `rod` at `translation` stands (feet down) in the ball's way."""
        wall = self.table.field.half_width - self.radius
        path_y = _fold(line.y + line.slope * (rod.x - line.x), wall)
        clear = self.block_half + PATH_MARGIN
        return any(abs(translation + o - path_y) < clear for o in men_offsets(rod))

    def keep_feet_down(self, plans: list[RodPlan], here: list[RodView], b: BallPoint) -> None:
        """With the ball in our half, never every rod's feet up at once (issue 30: all four
        up for seconds with the ball in our defence, an open goal for the opponent's attack
        rod): the first rod asked to lift whose men the ball cannot reach keeps them down."""
        for i, plan in enumerate(plans):
            kicking = self.kicks[i].active or (plan.absolute and plan.rotation < -LIFTED)
            if plan.mode != "lift" and not kicking and abs(here[i].rotation) < LIFTED:
                return  # this rod's feet are down and stay down
        for i, plan in enumerate(plans):
            if plan.mode == "lift" and abs(b.x - self.rods[i].x) > self.reach_ahead:
                plans[i] = RodPlan("control", translation=here[i].translation)
                return

    def clear_path(self, rod: Rod, line: ShotLine, here: RodView) -> tuple[RodPlan, bool]:
        """A rod ahead of our shot: its plan, and whether the path is still blocked by it."""
        wall = self.table.field.half_width - self.radius
        path_y = _fold(line.y + line.slope * (rod.x - line.x), wall)
        clear = self.block_half + PATH_MARGIN
        lifted = abs(here.rotation) > LIFTED
        if not self.in_path(rod, line, here.translation):
            if lifted:  # feet up and out of the way: they stay so until the ball is past
                return RodPlan("lift", rotation=math.copysign(-LIFT, here.rotation)), False
            return RodPlan("control", translation=here.translation), False
        if lifted:
            return RodPlan("lift", rotation=math.copysign(-LIFT, here.rotation)), False
        aside = aside_translation(rod, path_y, here.translation, clear + ALIGN_TOLERANCE)
        if aside is not None:
            return RodPlan("control", translation=aside), True
        return RodPlan("lift", rotation=LIFT), True

    def threat_origin(self, b: BallPoint) -> tuple[float, float]:
        """Where the opponent can next shoot from: the ball itself when it is slow, else the
        predicted point where it crosses the first opponent rod line on its way (just in
        front of that rod, from where his feet strike)."""
        speed = b.speed
        if speed < 0.3 or (b.vx < 0 and speed > SHOT_SPEED):
            return b.x, b.y  # at rest, or a shot already in flight
        if abs(b.vx) < SIDEWAYS_VX and speed < SHOT_SPEED:
            # rolling along a rod (a pull or push shot being set up): the shot can come at
            # any moment, from where the ball is then, not from where it would come to rest
            soon = self.predictor.state_at(b.x, b.y, b.vx, b.vy, THREAT_LEAD_S)
            return soon.x, soon.y
        # the first opponent rod on the ball's way (the nearest ahead; the first on a tie)
        first_x = None
        for x in self.their_xs:
            if (x - b.x) * b.vx > 0 and (first_x is None or abs(x - b.x) < abs(first_x - b.x)):
                first_x = x
        if first_x is not None:
            hit = self.predictor.crossing(b.x, b.y, b.vx, b.vy, first_x)
            if hit is not None:
                return first_x - self.contact_ahead, hit.y
        rest = self.predictor.state_at(b.x, b.y, b.vx, b.vy, self.params.prediction.horizon)
        return rest.x, rest.y

    # --- playing the ball ----------------------------------------------------------------

    def _time_to_contact(self) -> float:
        """Time from the start of a kick to the foot at the ball: the jerk-limited drive makes
        it far longer than angle / speed, so it is measured (kick-eval) and a parameter."""
        return self.params.improved.kick_time_to_contact

    def play_ball(self, i: int, rod: Rod, now: float, b: BallPoint,
                  here: RodView) -> RodPlan | None:
        """A plan if this rod should play the ball: control it, shoot it, or strike it on the
        way; None otherwise."""
        p = self.params.improved
        ahead = b.x - rod.x
        speed = b.speed
        if self.kicks[i].active:
            return RodPlan("strike")
        if i == 0:
            stop = backstop(rod, b.x, b.y, b.vx, b.vy, self.our_goal_x, self.mouth,
                            self.block_half, self.lever, self.table.man.foot_reach)
            if stop is not None:
                y, rotation = stop
                # tilted only with the ball clear of the leg's way: a leg swung back into
                # the ball strikes it at our goal
                clear = abs(b.y - y) > self.block_half + SIDESTEP_CLEARANCE
                return RodPlan("control", y=y, rotation=rotation if clear else here.rotation)
        if not _within(self.touch_bands[i], b.y):
            return None
        if i < 2 and ahead < -STRIKE_BEHIND and self.seen_speed < STILL_SPEED:
            # a still ball this far behind the goalkeeper or the defence cannot be struck
            # forward: the foot meets it on its top or front and drives it back at our goal,
            # or pins it against the end wall (tuning seeds pro 8417 and 8422: struck in off our
            # goal line; held-out club 10267: 13 s of strikes at a ball against the end
            # wall, each nudge starting the dead-ball count again, then a possession foul).
            # Left alone, feet down, it is a dead ball (no man can kick it forward) and the
            # referee puts it in front of our goalkeeper after 3 s (ITSF: a dead ball between
            # goal and goalkeeper is put in play by the goalkeeper)
            self.behind[i] = None
            return RodPlan("control", translation=here.translation)
        if is_behind(ahead, self.contact_ahead) and -0.4 < b.vx < 0.3 and speed < 1.6:
            if i == 0 and self.rolls_along_into_man(rod, b, here):
                # it meets the back edge of his foot, which sends it into our goal (tuning
                # seed pro 8475 randomised: 19 mm behind the axis at 0.8 m/s across, 0.78 ->
                # 1.06 m/s and in): feet forward and up, it passes behind them (no man of
                # the opponent reaches it there); feet up behind stay there (below)
                self.behind[i] = None
                return RodPlan("lift", rotation=LIFT if here.rotation < -LIFTED else -LIFT)
            if i == 0 and not self.keeper_may_swing(b, now):
                # a backswing would strike it into our goal: feet down and still, so the
                # ball rolls on behind the man (until it is still, or out of the mouth);
                # rolling out towards the man, his feet swing forward and up out of its way
                # (it came back off his foot into our goal, issue 30)
                self.behind[i] = None
                # (lifted, they stay up until it rolls back: pro seed 7027, the ball's speed
                # about ROLLING_OUT took them up and down and down onto it, into our goal)
                lifted = here.rotation > LIFTED and b.vx > -ROLLING_OUT
                if b.vx > ROLLING_OUT or lifted:
                    # (feet already up behind stay there: swung forward and up from there
                    # they strike the ball on their way through the bottom, seed-rules seed
                    # 7049: from -1.6 rad, a 4 m/s clear into our own 2-man rod and back in)
                    return RodPlan("lift", rotation=LIFT if here.rotation < -LIFTED else -LIFT)
                return RodPlan("control", translation=here.translation)
            return self.play_behind(i, rod, now, b, here)
        self.behind[i] = None
        urgent = self.urgency > URGENT
        if 0.0 < ahead < self.reach_ahead and speed < p.control_speed:
            # where will the ball be when the foot arrives?
            at_contact = self.predictor.state_at(b.x, b.y, b.vx, b.vy, self.time_to_contact)
            still_in_reach = self.contact_ahead * 0.9 < at_contact.x - rod.x < self.reach_ahead
            if speed < p.shoot_speed and still_in_reach:
                # at rest: the feet go up while the man gets in line, so that he does not
                # push the ball aside on the way (a restart at the goalkeeper, issue 13)
                plan = self.shoot(i, rod, at_contact, here)
                plan.rotation, plan.absolute = self.profile.windup_angle, True
                if i == 0 and plan.kick is not None:
                    plan.kick = KickRequest(power=plan.kick.power, strike_angle=KEEPER_STRIKE_END)
                return plan
            if urgent and still_in_reach:
                return self.shoot(i, rod, at_contact, here)
            if b.vx < 0:
                return self.stop_ball(i, rod, b)
            if still_in_reach:
                return self.shoot(i, rod, at_contact, here)
            return None
        # a ball rolling in from the front: strike it when it is due at the rod line
        if ahead > 0 and -4.0 < b.vx < -p.shoot_speed:
            hit = self.predictor.crossing(b.x, b.y, b.vx, b.vy, rod.x + self.contact_ahead)
            if hit is None:
                return None
            due = hit.t - self.params.prediction.actuation_latency
            if abs(b.vx) < p.control_speed or i < 2:
                return None  # slow enough to be stopped first; goalkeeper/defence block
            window = self.time_to_contact - 0.03 <= due <= self.time_to_contact + 0.005
            if window and abs(reach(rod, hit.y, here.translation).translation
                              - here.translation) < 0.006:
                return self.shoot(i, rod, hit, here)
            if due > self.time_to_contact:
                return RodPlan("block", y=hit.y)  # get the man there in time
        return None

    def rolls_along_into_man(self, rod: Rod, b: BallPoint, here: RodView) -> bool:
        """Whether a ball behind the rod's axis, where an upright foot touches it, rolls along
        the rod into a man's way before his feet could lift out of it."""
        return (-self.contact_ahead - SIDE_MARGIN < b.x - rod.x < 0.0
                and abs(b.vy) > ALONG_SPEED
                and self._man_near(rod, here.translation, b.y, b.y + b.vy * LIFT_TIME))

    def keeper_may_swing(self, b: BallPoint, now: float) -> bool:
        """Whether the goalkeeper may swing its feet back over a ball behind it: only if the
        ball cannot reach our goal (outside the mouth's band), or lies still where the camera
        saw it still (a ball rolling behind the man comes under his backswing, issue 30).
        Not while the camera does not see a ball it last saw rolling: it may have rolled
        anywhere about the man (issue 30, seed-rules seed 7033: from by the side wall to
        the mouth); GIVE_UP_S after it went out of sight it lies still somewhere, and is
        played (swept for) as a ball lost still is (never played, a ball hidden behind the
        man would be a possession foul)."""
        still = STILL_SPEED if self.behind[0] is None else STILL_PLAYING_SPEED
        if self.lost_at is not None and self.seen_speed >= still:
            return now - self.lost_at > GIVE_UP_S
        if abs(b.y) > self.mouth.high + self.radius:
            return True
        # once a play has begun it goes on unless the ball really rolls: the camera's speed
        # of a still ball jitters about STILL_SPEED, and a play stopped and started again
        # every few frames swung the feet back and forth over the ball (issue 30, pro seed
        # 7037: the fifth wind-up in 0.5 s struck it in)
        return self.seen_speed < still

    def play_behind(self, i: int, rod: Rod, now: float, b: BallPoint,
                    here: RodView) -> RodPlan:
        """Step aside, wind up, align over the ball, strike (see `behind`)."""
        play = self.behind[i]
        if play is None or now - play.started > GIVE_UP_S:
            play = self.behind[i] = BehindPlay("aside", now)
        windup = self.profile.windup_angle
        if play.phase == "aside":
            clear = self.block_half + SIDESTEP_CLEARANCE
            aside = aside_translation(rod, b.y, here.translation, clear)
            if aside is not None and abs(here.translation - aside) > 0.004:
                return RodPlan("control", translation=aside)
            play.phase = "lift"
        if play.phase == "lift":
            if here.rotation > FEET_UP:
                return RodPlan("control", translation=here.translation, rotation=windup,
                               absolute=True)
            play.phase = "align"
        at = self.predictor.state_at(b.x, b.y, b.vx, b.vy, STRIKE_FROM_WINDUP_S)
        plan = self.shoot(i, rod, at, here, tolerance=ALIGN_TOLERANCE)
        plan.rotation, plan.absolute = windup, True
        if plan.kick is not None and at.x - rod.x < -BEHIND_SAFE and (
                b.speed >= STILL_SPEED) and self.urgency <= URGENT:
            # a ball moving this far behind the axis: the camera sees it late there (the rod
            # hides it) and it may lie beyond the foot's reach by the time the foot comes
            # down, which then meets its front and drives it back at our goal (issue 30,
            # tuning seeds: seed-rules 8072 the midfield, pro 8018 randomised and
            # seed-rules 8043 the defence, a ball taken 59-70 mm behind, 64-105 mm in fact,
            # struck back at 1.4-10.7 m/s into our goal). The feet stay wound up over it
            # until it lies still (then it is struck: a ball left lying there would be a
            # possession foul) or rolls on out of reach. Not once the possession clock runs
            # late: a ball rolling to and fro along the rod between the side walls stays
            # there for seconds (pro seed 10597 randomised, with a change not merged: 7.5 s
            # behind our defence, then 7 s behind our goalkeeper, a possession foul).
            plan.kick = None
        if plan.kick is not None:
            self.behind[i] = None  # the kick engine takes over
        return plan

    def hiding_rod(self) -> int | None:
        """Which of our rods hides the lost ball: the one it was last detected right beside.
        (Not from the tracker's last velocity or its prediction: the ball comes to roll
        along a rod after a bounce off a man, which the tracker's filter lags by several
        frames, so both point elsewhere.)"""
        if self.detected is None:
            return None
        x = self.detected[0]
        for i, rod in enumerate(self.rods):
            if abs(x - rod.x) < HIDE_BAND:
                return i
        # or within one of our field rods' reach, or rolling at its feet from in front
        # (they stop it there): the men, the rod itself (seen at a slant away from the
        # table's middle) and the side wall hide a ball there (issue 13: lost for 15 s in
        # front of the attack rod, twice); not the goalkeeper's, where a ball lost fast is
        # most likely a goal
        towards = self.seen_vx < 0
        for i in range(1, len(self.rods)):
            ahead = x - self.rods[i].x
            if -self.reach_ahead < ahead < (LOST_TOWARDS_REACH if towards else self.reach_ahead):
                return i
        return None

    def play_hidden(self, i: int, here: RodView) -> RodPlan:
        """Feet up (feet down would push the ball along the rod), then a strike at each of
        the sweep's translations in turn, until the ball shows again."""
        if self.kicks[i].active:
            return RodPlan("strike")
        self.behind[i] = None
        sweep = self.sweeps[i]
        if sweep is None:
            assert self.last_ball is not None
            estimate_y = self.detected[1] if self.detected is not None else self.last_ball.y
            sweep = self.sweeps[i] = HiddenSweep(sweep_translations(self.rods[i], estimate_y))
        windup = self.profile.windup_angle
        if here.rotation > FEET_UP:
            return RodPlan("control", translation=here.translation, rotation=windup,
                           absolute=True)
        target = sweep.translations[sweep.next]
        plan = RodPlan("control", translation=target, rotation=windup, absolute=True)
        if abs(here.translation - target) < ALIGN_TOLERANCE:
            power = self.params.improved.strike_power if i >= 2 else (
                self.params.improved.clear_power)
            plan.kick = KickRequest(power=power, strike_angle=SEARCH_STRIKE_END)
            sweep.next = (sweep.next + 1) % len(sweep.translations)
        return plan

    def stop_ball(self, i: int, rod: Rod, b: BallPoint) -> RodPlan:
        """Put a man in the ball's path and let the foot give way as it arrives: moving back
        at e/(1+e) of the ball's speed the foot sends it back at about zero speed."""
        e = 0.5
        give = e / (1 + e) * abs(b.vx) / self.lever
        arriving = (b.x - rod.x - self.contact_ahead) / max(abs(b.vx), 1e-3)
        rotation = -0.35 if arriving < 0.03 else 0.0
        return RodPlan("control", y=b.y, rotation=rotation, rotation_speed=max(give, 0.5))

    def aim_angle(self, origin_x: float, origin_y: float) -> float:
        """Direction of the shot (rad, 0 = straight down the table): the smallest angle the
        kick can make whose path, folded at the side walls, ends in the opponent's goal
        mouth; straight on if none does (a clear). With the human's men measured
        (`aim_through_gaps`), the smallest such angle whose path also passes every man with
        his feet down, if there is one."""
        wall = self.table.field.half_width - self.radius
        run = self.their_goal_x - origin_x
        first = None
        for angle, slope in self.aim_slopes:
            goal_y = _fold(origin_y + slope * run, wall)
            if self.aim_mouth.low < goal_y < self.aim_mouth.high:
                if self.human_men is None or self._passes_men(origin_x, origin_y, slope, wall):
                    return angle
                if first is None:
                    first = angle
        return first if first is not None else 0.0

    def _passes_men(self, origin_x: float, origin_y: float, slope: float, wall: float) -> bool:
        """Whether a shot along `slope` passes every measured human man between the ball
        and the goal by more than half a foot, a ball radius and GAP_MARGIN."""
        assert self.human_men is not None
        clear = self.block_half + GAP_MARGIN
        for rod_x, men in self.human_men:
            if not origin_x < rod_x < self.their_goal_x:
                continue
            y = _fold(origin_y + slope * (rod_x - origin_x), wall)
            for man_y in men:
                if abs(y - man_y) < clear:
                    return False
        return True

    def offset_for(self, angle: float) -> float:
        """Ball offset from the man's centre for a shot at `angle` (the kick calibration)."""
        return offset_for_angle(self.params.kick_engine, angle)

    def shoot(self, i: int, rod: Rod, at: BallPoint, here: RodView,
              tolerance: float = 0.003) -> RodPlan:
        angle = self.aim_angle(at.x, at.y)
        offset = self.offset_for(angle)
        # put a man so that the ball is `offset` from his centre; choose the man who can
        man_y = at.y - offset
        best = reach(rod, man_y, here.translation)
        if best.error > 0.004 and offset != 0.0:
            best = reach(rod, at.y, here.translation)  # cannot angle it: straight
        if self.urgency > URGENT:
            tolerance *= 2  # a rougher shot beats losing the ball to the time limit
        aligned = abs(here.translation - best.translation) < tolerance
        power = self.params.improved.strike_power if i >= 2 else self.params.improved.clear_power
        kick = KickRequest(power=power, strike_angle=RULES_STRIKE_END) if aligned else None
        return RodPlan("control", translation=best.translation, kick=kick,
                       shot=ShotLine(at.x, at.y, math.tan(angle)))

    # --- from plan to setpoint --------------------------------------------------------

    def act(self, i: int, rod: Rod, now: float, plan: RodPlan, here: RodView) -> RodSetpoint:
        p = self.params.improved
        engine = self.kicks[i]
        # a kick starts from the home turn only: its angles are absolute, and from a turn
        # on its wind-up would be one long run through the ball (the no-spinning rule)
        if plan.kick is not None and not engine.active and abs(here.rotation) < math.pi:
            engine.start(now, plan.kick, here.rotation)
            self.kick_lines[i] = plan.shot
            if self.log is not None:
                self.log.append((now, i, self.last_ball, plan.mode))
            self.kick_base[i] = plan.translation if plan.translation is not None else (
                here.translation)
        kick = engine.step(now, here.rotation)
        if kick is not None:
            translation = self.kick_base[i] + kick.translation_offset
            if kick.phase is Phase.RETURN and plan.mode in ("block", "cover"):
                translation = self._translation(rod, plan, here)
            setpoint = RodSetpoint(translation, kick.rotation, kick.translation_speed,
                                   kick.rotation_speed)
        elif plan.mode == IDLE_PLAN:
            last = self.last[i]
            if last is None:
                setpoint = RodSetpoint(here.translation, 0.0, p.translation_speed, 0.0)
            elif abs(last.rotation) > IDLE_FEET_UP:
                # feet down again after a lift: lifted feet hide a ball lying under them
                # from the camera, and a ball there is then never played (issue 13: 15 s
                # in the corner in front of the attack rod)
                setpoint = RodSetpoint(last.translation, self._unwound(0.0, here.rotation),
                                       p.translation_speed, 0.0)
            else:
                setpoint = last
        else:
            rotation = plan.rotation if plan.absolute else self._unwound(plan.rotation,
                                                                          here.rotation)
            translation = self._translation(rod, plan, here)
            if i > 0 and plan.mode == "cover":
                translation = self._short_of_ball(rod, translation, here)
            setpoint = RodSetpoint(translation, rotation, p.translation_speed,
                                   plan.rotation_speed)
        sweep = self._strikes_back(rod, setpoint, here)
        if not sweep and not engine.active:
            sweep = self._comes_down_behind(rod, setpoint, here)
        if sweep == SWEEP_NOW:
            # its feet would swing back through the ball (or come down behind onto its
            # front) and strike it at our goal: they hold their angle while the rod steps
            # aside, so they pass beside it
            if engine.active:
                engine.abort(now, here.rotation)
            clear = self.block_half + SIDESTEP_CLEARANCE + self.unseen_margin(rod)
            assert self.last_ball is not None
            aside = aside_translation(rod, self.last_ball.y, here.translation, clear)
            setpoint = RodSetpoint(here.translation if aside is None else aside, here.rotation,
                                   p.translation_speed, 0.0)
        elif sweep == SWEEP_ON_THE_WAY:
            # beside the ball now, but the move would bring a man behind it mid-turn: the
            # feet turn first, the rod moves after
            setpoint = RodSetpoint(here.translation, setpoint.rotation,
                                   setpoint.translation_speed, setpoint.rotation_speed)
        if i < 2 and self.lost_at is not None:
            # (after the guards: feet they hold beside a ball taken to lie near stay held)
            setpoint = self._slow_back_unseen(rod, setpoint, here)
        self.last[i] = setpoint
        return setpoint

    def _slow_back_unseen(self, rod: Rod, setpoint: RodSetpoint, here: RodView) -> RodSetpoint:
        """A backward turn of a goalkeeper's or defence's feet through the ball's height, the
        ball out of sight, at SWEEP_SLOW: where the ball lies is a guess then, and a foot
        swung back through it at speed drives it at our goal (issue 30, pro randomised
        8977, 9014, 9024: a sweep's wind-up met the ball 0.14-0.32 m along the rod from
        where it was last seen, 30-56 mm behind the axis; 9002, 9005: a sweep's return met
        it under or in front of the axis; each into our goal at 1-3 m/s). Slow, a foot
        that meets it there only nudges it."""
        turning_back = setpoint.rotation < here.rotation - 0.01
        at_ball = abs(math.remainder(here.rotation, math.tau)) < self.guard(rod)[1] + SLOW_BAND
        if turning_back and at_ball and not 0.0 < setpoint.rotation_speed <= SWEEP_SLOW:
            return setpoint._replace(rotation_speed=SWEEP_SLOW)
        return setpoint

    def _strikes_back(self, rod: Rod, setpoint: RodSetpoint, here: RodView) -> int:
        """Whether moving to `setpoint` swings a foot backwards (towards our goal) through
        the ball: the ball within the men's reach along the table and in a man's band
        across it, and the backward turn passing the angles where the foot is at the
        ball's height on the ball's side of the rod (in front: the feet coming down from
        lifted forward; behind: a backswing). A slow turn (the foot giving way to a ball it
        stops) only nudges it and is left alone. SWEEP_NOW: a man is behind the ball now;
        SWEEP_ON_THE_WAY: only where the move would take him; 0: no such sweep."""
        b = self.last_ball
        start, end = here.rotation, setpoint.rotation
        if b is None or end > start - SWEEP_SLIVER:
            return 0
        if 0.0 < setpoint.rotation_speed <= SWEEP_SLOW:
            return 0
        if b.vx < -INCOMING_SPEED:
            # coming at our goal faster than a foot swinging back: the foot can only slow it
            # (held up in its way, the goalkeeper's feet let a 3.7 m/s shot through, pro
            # seed 7001)
            return 0
        # where the ball is and will be while the feet turn (a ball rolling at 0.6 m/s
        # covers the men's reach in the 0.1 s the feet take to come down)
        # (behind: over a shorter time, since a backswing from the feet down passes the
        # ball's height within a few ms; a kick timed for a ball rolling in from the front
        # winds up while the ball is still in front)
        ahead = b.x - rod.x
        later = ahead + b.vx * SWEEP_LOOKAHEAD_S
        soon = ahead + b.vx * BACKSWING_LOOKAHEAD_S
        reach, angle = self.guard(rod)
        # (feet coming down from in front also meet a ball under the rod, up to a foot's
        # half thickness and the ball's radius behind the axis: pro seed 7007, from 0.18
        # rad onto a ball 12 mm behind the axis, into our goal)
        margin = self.unseen_margin(rod)
        if start > LIFTED:
            # feet coming down from lifted gain speed on the way and cannot be held once
            # under way: they come down only with the man clear of the ball by more than a
            # hair (issue 30, seed-rules seed 7004: the attack rod held at 3.9 rad over a
            # ball in front came down with a man 1.4 mm clear of it, met it 20 mm nearer
            # than it was taken to be at 60 rad/s, and sent it into our goal at 12.9 m/s)
            margin += LIFTED_MARGIN
        sectors = []
        if max(ahead, later) > -self.contact_ahead - margin and min(ahead, later) < reach:
            sectors.append((0.0, angle))  # in front
        if min(ahead, soon) < 0.0 and max(ahead, soon) > -reach:
            sectors.append((-angle, 0.0))  # behind
        if not sectors:
            return 0
        if not any(min(start, high + shift) - max(end, low + shift) > SWEEP_SLIVER
                   for low, high in sectors for shift in _whole_turns_near(start)):
            return 0
        return self._sweep_meets(rod, b, here, setpoint, margin)

    def _comes_down_behind(self, rod: Rod, setpoint: RodSetpoint, here: RodView) -> int:
        """Whether moving to `setpoint` brings feet lifted behind forward and down onto a
        ball lying further behind the axis than `BEHIND_SAFE`: the foot meets the ball's
        front and drives it back at our goal (issue 30, tuning seeds pro 8900 and 8903
        randomised: the defence wound up over a ball behind it, which rolled on out of the
        behind play's reach; the plan turned to cover, feet down, and the foot came down
        at 35-39 rad/s onto it, 67-80 mm behind, from 0.15-0.9 m/s across the table to
        3.9-5.0 m/s into our goal). The same answers as `_strikes_back`: SWEEP_NOW (the
        feet hold their angle while the rod steps aside), SWEEP_ON_THE_WAY, or 0. A kick
        is left alone (the behind play strikes a ball there only lying still), and so is
        a rod whose possession clock runs late (a ball left there would be a foul)."""
        b = self.last_ball
        start, end = here.rotation, setpoint.rotation
        if b is None or end < start + SWEEP_SLIVER or self.urgency > URGENT:
            return 0
        ahead = b.x - rod.x
        soon = ahead + b.vx * SWEEP_LOOKAHEAD_S
        reach, angle = self.guard(rod)
        far = -(reach + DOWN_BEHIND_MARGIN)
        if min(ahead, soon) > -BEHIND_SAFE or max(ahead, soon) < far:
            return 0
        # (feet from above the ball's height behind, down into it; feet already lower
        # turning forward move away from a ball that far back)
        if not any(start <= shift - angle < end - SWEEP_SLIVER
                   for shift in _whole_turns_near(start)):
            return 0
        # (where the rod is carried while the feet come down: pro 8900, a cover's move
        # under way at 1.5 m/s took the man 90 mm along into the ball)
        carried = here.translation + here.translation_velocity * SWEEP_LOOKAHEAD_S
        return self._sweep_meets(rod, b, here, setpoint, self.unseen_margin(rod), carried)

    def _sweep_meets(self, rod: Rod, b: BallPoint, here: RodView, setpoint: RodSetpoint,
                     margin: float, carried: float | None = None) -> int:
        """For a turn that would meet the ball: SWEEP_NOW if a man is at the ball now (or
        on the way to `carried`, where a moving rod takes him meanwhile), SWEEP_ON_THE_WAY
        if only where the move would take him, else 0."""
        y_later = b.y + b.vy * SWEEP_LOOKAHEAD_S
        if self._man_near(rod, here.translation, b.y, y_later, margin, carried):
            return SWEEP_NOW
        if self._man_near(rod, setpoint.translation, b.y, y_later, margin):
            return SWEEP_ON_THE_WAY
        return 0

    def guard(self, rod: Rod) -> tuple[float, float]:
        """The men's reach along the table and the angle up to which a foot is at the ball's
        height, as the guards against backward strikes reckon them for `rod`."""
        return self.guards[0] if rod.x < self.their_front_x else self.guards[1]

    def unseen_margin(self, rod: Rod) -> float:
        """How much further from the ball a man of goalkeeper or defence keeps when the
        camera does not see it: the ball stands where it was last seen, often tens of mm
        from where it is (pro seed 7018, club 7002: 34 and 46 mm; a wind-up to sweep for
        it, and feet coming down, struck it into our goal). (Not further up the table:
        there a ball in a corner could then never be played.)"""
        close = rod.x < self.their_front_x
        return LOST_MARGIN if close and self.lost_at is not None else 0.0

    def _short_of_ball(self, rod: Rod, target: float, here: RodView) -> float:
        """`target`, or where a rod with its feet down stops short of a ball beside them (at
        the rod's line): a man walking into it there pushes it sideways at the rod's speed,
        on towards our goal (issue 30: the defence covering as a slow ball from the
        opponent's attack rolled through its line, 0.7 -> 1.3 m/s, past the goalkeeper's
        reach and in). Moving away from the ball is left alone."""
        b = self.last_ball
        move = target - here.translation
        if b is None or move == 0.0 or abs(here.rotation) > FOOT_AT_BALL:
            return target
        ahead = b.x - rod.x
        soon = ahead + b.vx * self.params.prediction.actuation_latency
        band = self.contact_ahead + SIDE_MARGIN
        if min(ahead, soon) > band or max(ahead, soon) < -band:
            return target
        clear = self.block_half + SIDE_MARGIN
        stop = target
        for offset in men_offsets(rod):
            gap = b.y - (here.translation + offset)  # from the man to the ball
            if gap * move <= 0.0:
                continue  # moving away from it
            room = max(abs(gap) - clear, 0.0)
            if room < abs(move):
                limit = here.translation + math.copysign(room, move)
                stop = min(stop, limit) if move > 0 else max(stop, limit)
        return stop

    def _man_near(self, rod: Rod, translation: float, y: float, y_later: float,
                  margin: float = 0.0, moving_to: float | None = None) -> bool:
        """Whether a man of `rod` at `translation` (or anywhere on its way from there to
        `moving_to`) can touch a ball on its way from `y` to `y_later` (with `margin` more
        on either side)."""
        half = self.block_half + margin
        low, high = min(y, y_later) - half, max(y, y_later) + half
        end = translation if moving_to is None else moving_to
        for offset in men_offsets(rod):
            if min(translation, end) + offset < high and max(translation, end) + offset > low:
                return True
        return False

    def _translation(self, rod: Rod, plan: RodPlan, here: RodView) -> float:
        if plan.translation is not None:
            return plan.translation
        if plan.mode == "lift":
            return here.translation
        return reach(rod, plan.y, here.translation).translation

    @staticmethod
    def _unwound(rotation: float, measured: float) -> float:
        """The rotation target nearest the rod's present angle that shows the same pose, but
        never more than half a turn past the home turn: a rod left far round (a kick that
        timed out on its way back) turns back, not on; turning on would add to the run the
        no-spinning rule limits to a full turn."""
        turns = round((measured - rotation) / (2 * math.pi))
        target = rotation + turns * 2 * math.pi
        if abs(target) > HOME_TURN:
            target -= math.copysign(2 * math.pi, target)
        return target


def _any_between(xs: list[float], low: float, high: float) -> bool:
    for x in xs:  # noqa: SIM110 - a loop: any() over a generator costs more, every step
        if low < x < high:
            return True
    return False


def _within(bands: list[tuple[float, float]], y: float) -> bool:
    for low, high in bands:  # noqa: SIM110 - as above
        if low <= y <= high:
            return True
    return False


def _fold(y: float, wall: float) -> float:
    """Reflect y into [-wall, wall] as a ball bouncing off both side walls would be."""
    period = 4 * wall
    y = (y + wall) % period
    return (y if y <= 2 * wall else period - y) - wall
