"""The seed paper's strategy, exactly (000_6123d8720d00d2c5.txt, "The Strategy Agent").

Four parallel behaviours, one per robot rod, each running the same algorithm and producing a
translation and a rotation command; the rods move independently. Per rod, from the ball's
position and velocity relative to the rod and the team's direction:

  RULE 1  ball behind the rod, moving away   -> no action
  RULE 2  ball behind the rod, coming closer -> passthrough (and move_pole)
  RULE 3  ball in front, moving away slowly  -> the start of the kick is evaluated
  RULE 4  ball in front, coming closer       -> move_pole or kick

MOVE_POLE  fast ball (speed >= fast_ball_speed): target = intersection of the ball's motion
           line with the rod line; inside the table -> the nearest man goes there; outside
           the table -> target = projection of the ball on the rod line. Slow ball: projection.
PASSTHROUGH rotate to -90 deg (feet lifted backwards, the ball passes under).
KICK       rotate 0 -> -90 -> +50 -> 0 deg, rotation speed = kick power.
KICK_TRIGGER fast ball: time to the intersection < kick_time * latency_factor;
           slow ball: distance to the intersection point < kick_min_distance.

Where the text leaves a choice we take the plainest reading (docs/notes/issue-6.md lists them):
"behind" is x < rod x in the team's direction; a ball at rest counts as "coming closer"; a
fast ball in front moving away gets no action like RULE 1; "no action" holds the previous
command; a kick, once started, runs to its end; the rod stands at 0 deg, the kick's start,
while it positions (RULE 4) or waits to kick (RULE 3).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from foosball.geometry import Rod, Table
from foosball.strategy.base import BallView, RodStrategy, RodView
from foosball.strategy.kick import KickEngine, KickProfile, KickRequest
from foosball.strategy.params import SeedParams, StrategyParams
from foosball.strategy.rods import nearest_man
from foosball.strategy.setpoint import RodSetpoint


class Situation(enum.Enum):
    BEHIND_AWAY = 1  # RULE 1
    BEHIND_CLOSER = 2  # RULE 2
    FRONT_AWAY = 3  # RULE 3
    FRONT_CLOSER = 4  # RULE 4


def classify(rod: Rod, ball: BallView, forward: int = 1) -> Situation:
    """The seed's features: the ball behind or in front of the rod (in the team's direction
    `forward`), moving away or coming closer. A ball at rest counts as coming closer."""
    ahead = (ball.x - rod.x) * forward  # > 0: in front of the rod
    towards_rod = -ball.vx * forward if ahead >= 0 else ball.vx * forward
    behind = ahead < 0
    closer = towards_rod >= 0
    if behind:
        return Situation.BEHIND_CLOSER if closer else Situation.BEHIND_AWAY
    return Situation.FRONT_CLOSER if closer else Situation.FRONT_AWAY


def is_fast(ball: BallView, params: SeedParams) -> bool:
    return ball.speed >= params.fast_ball_speed


@dataclass(frozen=True, slots=True)
class PoleTarget:
    y: float  # the point on the rod line
    man: int
    translation: float  # clamped to the travel
    from_trajectory: bool  # True: motion-line intersection; False: projection of the ball


def intersection_y(rod: Rod, ball: BallView) -> float | None:
    """y where the ball's straight motion line crosses the rod line (None if parallel)."""
    if abs(ball.vx) < 1e-12:
        return None
    return ball.y + ball.vy * (rod.x - ball.x) / ball.vx


def move_pole(rod: Rod, table: Table, ball: BallView, translation: float,
              params: SeedParams) -> PoleTarget:
    """MOVE_POLE: the man nearest to the target point goes to it."""
    target: float | None = None
    if is_fast(ball, params):
        target = intersection_y(rod, ball)
        if target is not None and abs(target) > table.field.half_width:
            target = None  # outside the table (Figure 5d): fall back to the projection
    from_trajectory = target is not None
    if target is None:
        target = ball.y  # projection of the ball on the rod line (slow ball, or outside)
    man = nearest_man(rod, translation, target)
    return PoleTarget(
        y=target,
        man=man,
        translation=rod.clamp(rod.translation_for(man, target)),
        from_trajectory=from_trajectory,
    )


def time_to_intersection(rod: Rod, ball: BallView) -> float | None:
    """Seconds until the ball, at constant velocity, reaches the rod line (None: never)."""
    if abs(ball.vx) < 1e-12:
        return None
    t = (rod.x - ball.x) / ball.vx
    return t if t >= 0 else None


def kick_triggered(rod: Rod, ball: BallView, params: SeedParams) -> bool:
    """KICK_TRIGGER: fast ball -> time to intersection < kick_time * latency_factor;
    slow ball -> distance to the intersection point (its projection) < kick_min_distance."""
    if is_fast(ball, params):
        t = time_to_intersection(rod, ball)
        if t is None:
            return abs(ball.x - rod.x) < params.kick_min_distance  # moving along the rod line
        return t < params.kick_time * params.latency_factor
    return abs(ball.x - rod.x) < params.kick_min_distance


class SeedRodBehaviour:
    """One rod's behaviour; the same algorithm for goalkeeper, defence, midfield and attack."""

    def __init__(self, rod: Rod, table: Table, params: SeedParams, forward: int = 1) -> None:
        self.rod = rod
        self.table = table
        self.params = params
        self.forward = forward
        self.kick = KickEngine(KickProfile.seed(params))
        self.last: RodSetpoint | None = None
        self.last_situation: Situation | None = None

    def _hold(self, here: RodView) -> RodSetpoint:
        if self.last is not None:
            return self.last
        return RodSetpoint(here.translation, 0.0, self.params.translation_speed,
                           self.params.kick_power)

    def decide(self, now: float, ball: BallView | None, here: RodView) -> RodSetpoint:
        p = self.params
        if ball is None:
            self.last_situation = None
            return self._hold(here)  # no ball information: no action
        situation = classify(self.rod, ball, self.forward)
        self.last_situation = situation
        held = self._hold(here)
        translation = held.translation
        rotation = held.rotation
        kick_now = False
        if situation is Situation.BEHIND_AWAY:
            pass  # RULE 1: no action
        elif situation is Situation.BEHIND_CLOSER:
            # RULE 2: passthrough, and move_pole so a man is on the ball's line once it passed
            translation = move_pole(self.rod, self.table, ball, here.translation, p).translation
            rotation = p.passthrough_angle  # PASSTHROUGH
        elif situation is Situation.FRONT_AWAY:
            if not is_fast(ball, p):
                # RULE 3: slow ball moving away in front: evaluate the start of the kick
                rotation = 0.0
                kick_now = kick_triggered(self.rod, ball, p)
            # a fast ball moving away in front: no rule applies, no action
        else:
            # RULE 4: ball in front coming closer: move_pole, or kick when it is time
            translation = move_pole(self.rod, self.table, ball, here.translation, p).translation
            rotation = 0.0
            kick_now = kick_triggered(self.rod, ball, p)
        if kick_now and not self.kick.active:
            self.kick.start(now, KickRequest(power=p.kick_power), here.rotation)
        return RodSetpoint(translation, rotation, p.translation_speed, p.kick_power)

    def step(self, now: float, ball: BallView | None, here: RodView) -> RodSetpoint:
        wanted = self.decide(now, ball, here)
        kick = self.kick.step(now, here.rotation)
        if kick is not None:  # a running kick owns the rotation until it ends
            wanted = RodSetpoint(wanted.translation, kick.rotation, wanted.translation_speed,
                                 kick.rotation_speed)
        self.last = wanted
        return wanted


class SeedRulesStrategy(RodStrategy):
    name = "seed-rules"

    def __init__(self, table: Table | None = None, params: StrategyParams | None = None) -> None:
        super().__init__(table, params)
        self.behaviours = [SeedRodBehaviour(rod, self.table, self.params.seed) for rod in self.rods]
