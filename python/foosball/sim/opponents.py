# Over 500 lines: one scripted opponent, its skill table and the shot geometry it aims with;
# the three levels differ only in the table's numbers, so they read best side by side.
"""Scripted human opponents at three skill levels, deterministic from a seed.

They are ordinary controllers (see `foosball.sim.controllers`): they think in their own
robot-style frame (x towards the goal they attack) and the match runner mirrors them onto
the human's rods. A human sees the ball with a reaction delay, so each opponent acts on the
newest ball state at least `reaction` seconds old, extrapolated to now.

Per rod, every frame:
- a kick in progress goes on: WIND-UP (feet back to -75 deg, which also lets the ball pass),
  ALIGN with the feet up (put the chosen man at the contact offset that sends the ball in
  the aimed direction: the foot's edge for angled shots), STRIKE (forward at the rotation
  speed that gives the chosen ball speed, ``omega = v / ((1 + e) (rod_height - r))``),
  RECOVER (vertical);
- a slow ball resting just in front of the rod's feet starts a kick; club and pro also play
  a ball lying under or just behind the feet (the man first steps aside so the wind-up does
  not drag it back);
- pull and push shots (club and pro, 3-man rod, a ball at rest in front of it): SET (feet up,
  the man goes beside the ball, then tilts his feet forward so his leg is level with it),
  CARRY (the rod moves sideways and the leg's side sends the ball rolling along the rod at
  the carry speed; a pull towards -y of the opponent's own frame, a push towards +y and a
  little slower), then the usual kick on the rolling ball, aimed again where it is;
- a ball rolling forward towards the rod from behind (a pass or a team-mate's shot): the rod
  lifts its feet so it passes; club and pro then strike it on the way (a one-timer);
- otherwise the rod blocks: the nearest man goes to where the ball will cross the rod,
  with a positioning error that depends on the skill.

Skills: rookie (slow hands, random shot directions at 3-6 m/s, no passes), club (shots
aimed at the goal up to 10 m/s, simple midfield-to-attack passes), pro (aims at the widest
gap the opponent's goalkeeper and defence leave, 12-18 m/s, bank shots off the side walls).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from foosball.geometry import Rod, Table
from foosball.sim.params import AxisLimits
from foosball.wire.catalogue import (
    BallState,
    BallStatus,
    RodCommand,
    RodId,
    RodStatus,
    RodTarget,
)

WIND_UP = -1.3  # rad: feet back
STRIKE_END = 2.6  # rad: follow through over the top so the foot is still fast at the ball
LIFT = -1.5  # rad: feet lifted to let a ball pass underneath
MAX_AIM_ANGLE = 0.7  # rad: steeper shots are not attempted
AIM_BELOW = 0.6  # m/s: a ball slower than this is aimed; a faster one is hit straight on
STRIKE_LEAD = 0.03  # s: the man aims where a rolling ball will be when the foot arrives
DECISION_PERIOD = 0.01  # s: a human's hands change course at most this often
ROD_IDS = tuple(RodId)
PUSH_SLOWER = 0.85  # a push shot's carry is a little slower than a pull's
CARRY_LENGTH = 0.05  # m the rod moves sideways carrying the ball before the strike


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    reaction: float  # s
    translation: AxisLimits
    rotation: AxisLimits
    shot_speed: tuple[float, float]  # m/s, drawn per shot
    aimed: bool  # False: random direction within +-random_angle
    random_angle: float  # rad
    aim_error: float  # rad, 1 sigma
    pass_probability: float  # midfield plays a pass instead of shooting
    bank_probability: float
    aim_at_gaps: bool
    one_timer: bool  # strike a ball that passes under the lifted rod
    reach_back: bool  # play a ball lying under or just behind the feet (step aside, lift, strike)
    position_error: float  # m, 1 sigma, blocking position
    align_tolerance: float  # m
    pull_probability: float = 0.0  # 3-man rod, ball at rest: a pull or push shot instead
    carry_speed: tuple[float, float] = (0.3, 0.55)  # m/s of the ball along the rod
    carry_direction: float = 0.0  # -1 always pull, +1 always push, 0 either (room, chance)
    angled: bool = False  # aimed shots go at the far corner, as steep as MAX_AIM_ANGLE allows


ROOKIE = Skill(
    name="rookie",
    reaction=0.25,
    translation=AxisLimits(1.2, 20.0, 2000.0),
    rotation=AxisLimits(70.0, 15000.0, 3.0e5),
    shot_speed=(3.0, 6.0),
    aimed=False,
    random_angle=0.6,
    aim_error=0.0,
    pass_probability=0.0,
    bank_probability=0.0,
    aim_at_gaps=False,
    one_timer=False,
    reach_back=False,
    position_error=0.02,
    align_tolerance=0.006,
)
CLUB = Skill(
    name="club",
    reaction=0.15,
    translation=AxisLimits(2.0, 40.0, 5000.0),
    rotation=AxisLimits(120.0, 30000.0, 8.0e5),
    shot_speed=(6.0, 10.0),
    aimed=True,
    random_angle=0.0,
    aim_error=0.06,
    pass_probability=0.4,
    bank_probability=0.0,
    aim_at_gaps=False,
    one_timer=True,
    reach_back=True,
    position_error=0.008,
    align_tolerance=0.004,
    pull_probability=0.3,
    carry_speed=(0.2, 0.4),
)
PRO = Skill(
    name="pro",
    reaction=0.09,
    translation=AxisLimits(3.0, 60.0, 20000.0),
    rotation=AxisLimits(200.0, 60000.0, 2.0e6),
    shot_speed=(12.0, 18.0),
    aimed=True,
    random_angle=0.0,
    aim_error=0.025,
    pass_probability=0.3,
    bank_probability=0.3,
    aim_at_gaps=True,
    one_timer=True,
    reach_back=True,
    position_error=0.003,
    align_tolerance=0.0015,
    pull_probability=0.5,
    carry_speed=(0.3, 0.55),
)
SKILLS = {s.name: s for s in (ROOKIE, CLUB, PRO)}


@dataclass(slots=True)
class _Kick:
    phase: str  # "align" | "windup" | "strike" | "recover"
    started: float
    angle: float  # aimed direction of the ball (rad, 0 = straight at the goal line)
    speed: float  # m/s wanted
    man: int
    offset: float  # ball centre minus man centre (y) at contact
    one_timer: bool = False
    behind: bool = False  # the ball lies under or behind the feet: step aside before winding up
    carry: float = 0.0  # pull/push: the ball's wanted speed along the rod (signed), 0: none
    carry_from: float = 0.0  # translation where the carry began


class ScriptedOpponent:
    def __init__(self, table: Table, skill: Skill, seed: int) -> None:
        self.table = table
        self.skill = skill
        self.rng = np.random.default_rng(seed)
        self.rods: list[Rod] = table.robot_rods  # own rods in the own frame
        self.rod_limits = (skill.translation, skill.rotation)
        self._seen: deque[BallState] = deque(maxlen=512)
        self._kicks: list[_Kick | None] = [None] * len(self.rods)
        self._block_error = [0.0] * len(self.rods)
        self._error_until = 0.0
        self._opponents: Callable[[], RodStatus] | None = None  # observe_opponents
        self._next_decision = 0.0
        man = table.man
        self._lever = man.rod_height - table.ball.radius
        self._half_foot = man.foot_width / 2
        self._radius = table.ball.radius
        self._reach = man.contact_reach
        self._wall = table.field.half_width - self._radius  # the ball centre's y limit

    # --- interface -------------------------------------------------------------------------

    def observe_opponents(self, rods: Callable[[], RodStatus]) -> None:
        self._opponents = rods

    def step(self, ball: BallState, rods: RodStatus, now_ns: int) -> RodCommand | None:
        now = now_ns * 1e-9
        self._seen.append(ball)
        if now < self._next_decision:
            return None
        self._next_decision = now + DECISION_PERIOD - 1e-6
        seen = self._perceived(now_ns)
        if now >= self._error_until:
            self._block_error = [
                float(self.rng.normal(0.0, self.skill.position_error)) for _ in self.rods
            ]
            self._error_until = now + 0.3
        positions = {p.rod: p for p in rods.rods}
        targets = []
        for i, rod in enumerate(self.rods):
            here = positions.get(ROD_IDS[i])
            translation = here.translation if here is not None else 0.0
            rotation = here.rotation if here is not None else 0.0
            targets.append(self._rod_target(i, rod, seen, now, translation, rotation))
        return RodCommand(ball_capture_time=ball.capture_time, rods=tuple(targets))

    # --- perception ------------------------------------------------------------------------

    def _perceived(self, now_ns: int) -> tuple[float, float, float, float] | None:
        """(x, y, vx, vy) of the ball as this human sees it now, or None."""
        horizon = now_ns - round(self.skill.reaction * 1e9)
        chosen = None
        for state in reversed(self._seen):
            if state.capture_time <= horizon:
                chosen = state
                break
        if chosen is None or chosen.status == BallStatus.LOST:
            return None
        age = (now_ns - chosen.capture_time) * 1e-9
        # extrapolate, bouncing off the side walls like the eye does
        x = chosen.x + chosen.vx * age
        y = _fold(chosen.y + chosen.vy * age, self._wall)
        return x, y, chosen.vx, chosen.vy

    # --- one rod ---------------------------------------------------------------------------

    def _rod_target(
        self,
        i: int,
        rod: Rod,
        seen: tuple[float, float, float, float] | None,
        now: float,
        translation: float,
        rotation: float,
    ) -> RodTarget:
        skill = self.skill
        rod_id = ROD_IDS[i]
        if seen is None:
            self._kicks[i] = None
            return RodTarget(rod_id, 0.0, 0.0, 0.0, 0.0)
        x, y, vx, vy = seen
        kick = self._kicks[i]
        ahead = x - rod.x
        speed = math.hypot(vx, vy)
        if kick is None:
            if 0.008 < ahead < self._reach - 0.01 and speed < 0.8:
                if rod.role == "attack" and speed < 0.1 and self._wants_pull():
                    kick = self._start_carry(i, rod, y, now)
                else:
                    # a rolling ball is hit straight on; only a (nearly) still one is aimed
                    kick = self._start_kick(i, rod, x, y, now, aim=speed < AIM_BELOW)
            elif skill.reach_back and -0.03 < ahead <= 0.008 and speed < 0.5:
                kick = self._start_kick(i, rod, x, y, now, behind=True)
            elif (
                skill.one_timer
                and -0.15 < ahead < 0.0
                and 0.4 < vx < 5.0
                and self._reachable(rod, y + vy * (-ahead / vx))
            ):
                kick = self._start_kick(i, rod, x, y, now, one_timer=True)
        if kick is not None and kick.phase in ("set", "carry"):
            target = self._carry_target(i, rod, kick, x, y, vy, now, translation, rotation)
            if target is not None:
                return target
            kick = self._kicks[i] = None
        if kick is not None:
            target = self._kick_target(i, rod, kick, x, y, vx, vy, now, translation, rotation)
            if target is not None:
                return target
            self._kicks[i] = None
        # passthrough: a ball coming forward fast from behind passes under lifted feet
        if vx > 1.5 and -0.25 < ahead < -0.03:
            return RodTarget(rod_id, translation, LIFT, 0.0, 0.0)
        # block where the ball will cross this rod
        cross_y = y
        if vx < -0.2 and ahead > 0:
            cross_y = _fold(y + vy * (-ahead / vx), self._wall)
        if rod.role == "goalkeeper":
            cross_y = max(-0.09, min(0.09, cross_y))
        cross_y += self._block_error[i]
        return RodTarget(rod_id, self._translation_for(rod, cross_y), 0.0, 0.0, 0.0)

    def _start_kick(
        self,
        i: int,
        rod: Rod,
        x: float,
        y: float,
        now: float,
        one_timer: bool = False,
        behind: bool = False,
        aim: bool = True,
    ) -> _Kick:
        skill = self.skill
        rng = self.rng
        speed = float(rng.uniform(*skill.shot_speed))
        half_l = self.table.field.half_length
        if not skill.aimed:
            angle = float(rng.uniform(-skill.random_angle, skill.random_angle))
        elif not aim:
            angle = 0.0
        elif rod.role == "midfield" and rng.random() < skill.pass_probability:
            # a simple pass: soft, straight on, for the attack rod to take on the way
            angle, speed = 0.0, float(rng.uniform(1.2, 2.2))
        elif skill.angled:
            # across the goal to the corner away from the ball (a pin's cut shot)
            half_goal = self.table.field.goal_width / 2 - self._radius
            side = -1.0 if y > 0 else 1.0
            angle = math.atan2(side * 0.8 * half_goal - y, half_l - x)
            angle = max(-MAX_AIM_ANGLE, min(MAX_AIM_ANGLE, angle))
            angle += float(rng.normal(0.0, skill.aim_error))
        else:
            bank = rng.random() < skill.bank_probability
            target_y = self._aim_point(rng, x, y, bank)
            angle = math.atan2(target_y - y, half_l - x)
            angle += float(rng.normal(0.0, skill.aim_error))
        angle = max(-1.2, min(1.2, angle))
        offset = self._contact_offset(angle)
        man = self._man_for(rod, y - offset)
        phase = "sidestep" if behind else "windup"
        kick = _Kick(phase, now, angle, speed, man, offset, one_timer, behind)
        self._kicks[i] = kick
        return kick

    def _wants_pull(self) -> bool:
        return self.skill.pull_probability > 0 and self.rng.random() < self.skill.pull_probability

    def _start_carry(self, i: int, rod: Rod, y: float, now: float) -> _Kick:
        """A pull or push shot: the direction with room to carry the ball (or the skill's)."""
        skill = self.skill
        direction = skill.carry_direction
        if direction == 0.0:
            direction = -1.0 if y > 0 else 1.0  # towards the middle: room to roll
            if self.rng.random() < 0.3:
                direction = -direction
        speed = float(self.rng.uniform(*skill.carry_speed)) * (PUSH_SLOWER if direction > 0
                                                               else 1.0)
        man = self._man_for(rod, y)
        kick = _Kick("set", now, 0.0, 0.0, man, 0.0, carry=direction * speed)
        self._kicks[i] = kick
        return kick

    def _carry_target(self, i: int, rod: Rod, kick: _Kick, x: float, y: float, vy: float,
                      now: float, translation: float, rotation: float) -> RodTarget | None:
        """SET beside the ball, then CARRY it sideways; then the kick on the rolling ball."""
        rod_id = ROD_IDS[i]
        ahead = x - rod.x
        if not 0.0 < ahead < self._reach or now - kick.started > 1.5:
            return None
        man_offset = (kick.man - (rod.men - 1) / 2) * rod.spacing
        side = math.copysign(1.0, kick.carry)
        # the leg level with the ball at its height: tilted forward by atan(ahead / lever)
        tilt = math.atan2(ahead, self._lever)
        if kick.phase == "set":
            beside = rod.clamp(y - side * (self._half_foot + self._radius + 0.003) - man_offset)
            far = abs(translation - beside) > 0.006
            if not far and abs(rotation - tilt) < 0.1:
                kick.phase, kick.carry_from = "carry", translation
            return RodTarget(rod_id, beside, LIFT if far else tilt, 0.0, 0.0)
        # carry: the leg's side pushes; the ball leaves at about (1 + e) times the rod's speed
        carried = abs(translation - kick.carry_from)
        if carried > CARRY_LENGTH or vy * side > 0.8 * abs(kick.carry):
            self._kicks[i] = None
            strike = self._start_kick(i, rod, x, y, now, aim=True)
            return self._kick_target(i, rod, strike, x, y, 0.0, vy, now, translation, rotation)
        end = rod.clamp(kick.carry_from + side * 0.15)
        return RodTarget(rod_id, end, tilt, abs(kick.carry) / 1.5, 0.0)

    def _aim_point(self, rng: np.random.Generator, x: float, y: float, bank: bool) -> float:
        """Where to aim on the goal line (unfolded: a bank shot's target is mirrored in the
        near side wall): the centre +- a bit, or for a pro the target whose path passes
        farthest from every opponent man between the ball and the goal."""
        half_goal = self.table.field.goal_width / 2 - self._radius
        wall = self._wall
        if not self.skill.aim_at_gaps or self._opponents is None:
            goal_y = float(rng.uniform(-0.6, 0.6) * half_goal)
            return math.copysign(2 * wall, y) - goal_y if bank else goal_y
        goal_x = self.table.field.half_length
        # the opponent's rods, in this frame: same layout as ours, mirrored in x
        blockers = [
            (-self.rods[int(p.rod)].x, self.rods[int(p.rod)].men_y(p.translation))
            for p in self._opponents().rods
        ]
        best, best_clearance = 0.0, -math.inf
        for goal_y in np.linspace(-0.8 * half_goal, 0.8 * half_goal, 17).tolist():
            target = math.copysign(2 * wall, y) - goal_y if bank else goal_y
            if abs(math.atan2(target - y, goal_x - x)) > MAX_AIM_ANGLE:
                continue  # too steep to strike cleanly
            clearance = math.inf
            for rod_x, men in blockers:
                if not x < rod_x < goal_x:
                    continue
                y_there = _fold(y + (target - y) * (rod_x - x) / (goal_x - x), wall)
                clearance = min(clearance, *(abs(y_there - m) for m in men))
            if clearance > best_clearance:
                best, best_clearance = target, clearance
        return best

    def _contact_offset(self, angle: float) -> float:
        """Ball centre minus man centre (y) that makes the foot's edge send it at `angle`:
        the edge's normal must point at `normal_angle(angle)` (friction drags the ball
        along the foot, so the normal is steeper than the wanted direction)."""
        if abs(angle) < 0.03:
            return 0.0
        normal = _normal_for_direction(abs(angle))
        return math.copysign(self._half_foot + self._radius * math.sin(normal), angle)

    def _kick_target(
        self,
        i: int,
        rod: Rod,
        kick: _Kick,
        x: float,
        y: float,
        vx: float,
        vy: float,
        now: float,
        translation: float,
        rotation: float,
    ) -> RodTarget | None:
        rod_id = ROD_IDS[i]
        skill = self.skill
        ahead = x - rod.x
        man_offset = (kick.man - (rod.men - 1) / 2) * rod.spacing
        if kick.one_timer and vx > 0.1:
            y_at_rod = y + vy * (-ahead / vx) if ahead < 0 else y
        else:
            y_at_rod = y + vy * STRIKE_LEAD
        want = rod.clamp(y_at_rod - kick.offset - man_offset)
        if now - kick.started > 1.0:
            return None  # gave up: the ball went elsewhere
        if kick.phase == "sidestep":
            # move the man clear of the ball so winding up does not drag it backwards
            clear = self._half_foot + self._radius + 0.012
            aside = rod.clamp(y_at_rod - man_offset + clear)
            if abs(aside - (y_at_rod - man_offset)) < clear - 1e-3:
                aside = rod.clamp(y_at_rod - man_offset - clear)
            if abs(translation - aside) < 0.003:
                kick.phase = "windup"
            return RodTarget(rod_id, aside, 0.0, 0.0, 0.0)
        if kick.phase == "windup":
            if rotation < WIND_UP + 0.15:
                if not kick.one_timer:
                    kick.phase = "align"
                elif ahead > -vx * 0.012:
                    kick.phase = "strike"
            elif kick.one_timer and ahead > 0.04:
                return None  # the ball got past before the feet were up
            # stay put while the feet go up next to the ball; a one-timer aims on the way
            return RodTarget(rod_id, want if kick.one_timer else translation, WIND_UP, 0.0, 0.0)
        if kick.phase == "align":
            # with the feet up, over or behind the ball, so moving does not push it
            if not -0.04 < ahead < self._reach:
                return None
            # a ball rolling along the rod is a moving target: the hands allow for it
            if abs(translation - want) < skill.align_tolerance + abs(vy) * 0.01:
                kick.phase = "strike"
            return RodTarget(rod_id, want, WIND_UP, 0.0, 0.0)
        if kick.phase == "strike":
            if rotation > 0.9:
                kick.phase = "recover"
            omega = kick.speed / ((1.5) * self._lever * max(0.3, math.cos(kick.angle)))
            omega = min(omega, skill.rotation.max_speed)
            return RodTarget(rod_id, want, STRIKE_END, 0.0, omega)
        # recover
        if abs(rotation) < 0.2:
            return None
        return RodTarget(rod_id, translation, 0.0, 0.0, 0.0)

    def _man_for(self, rod: Rod, y: float) -> int:
        best, best_cost = 0, math.inf
        centre, spacing = (rod.men - 1) / 2, rod.spacing
        low, high = rod.travel_min, rod.travel_max
        for man in range(rod.men):
            # Rod.translation_for, within_travel and clamp written out (the same arithmetic):
            # every rod of the scripted human asks every step
            t = y - (man - centre) * spacing
            cost = abs(t) + (0.0 if low <= t <= high else 10.0 + abs(min(high, max(low, t)) - t))
            if cost < best_cost:
                best, best_cost = man, cost
        return best

    def _reachable(self, rod: Rod, y: float) -> bool:
        return any(lo - 0.01 <= y <= hi + 0.01 for lo, hi in rod.reachable_y())

    def _translation_for(self, rod: Rod, y: float) -> float:
        return rod.clamp(rod.translation_for(self._man_for(rod, y), y))


def _fold(y: float, wall: float) -> float:
    """Reflect y into [-wall, wall] as a ball bouncing off both side walls would be."""
    period = 4 * wall
    y = (y + wall) % period
    return (y if y <= 2 * wall else period - y) - wall


def _direction_for_normal(normal: float, restitution: float = 0.5, friction: float = 0.15) -> float:
    """Direction a resting ball leaves in when a foot moving along +x strikes it with a
    contact normal at angle `normal` (the physics' impulse law, spin-free friction)."""
    nx, ny = math.cos(normal), math.sin(normal)
    # relative velocity of the ball to the foot: (-1, 0); normal and tangential parts
    vn = -nx
    tx, ty = -1.0 - vn * nx, -vn * ny
    vt = math.hypot(tx, ty)
    shrink = max(0.0, vt - friction * (1 + restitution) * (-vn)) / vt if vt > 1e-12 else 0.0
    rx, ry = tx * shrink - restitution * vn * nx, ty * shrink - restitution * vn * ny
    return math.atan2(ry, 1.0 + rx)


def _normal_for_direction(direction: float) -> float:
    """Inverse of `_direction_for_normal` by bisection on [0, 1.5] rad."""
    lo, hi = 0.0, 1.5
    for _ in range(30):
        mid = (lo + hi) / 2
        if _direction_for_normal(mid) < direction:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
