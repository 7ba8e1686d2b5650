"""Playing a ball that lies under or just behind one of our rods.

Blocking such a ball in place knocks it to and fro along the rod for as long as it takes
(issue 13: 550 s in one match). A player steps aside, winds up with the feet behind and
above the ball, brings the man over it and strikes: the foot comes down onto the ball while
swinging forward, so it leaves towards the opponent. Phases, per rod:

- ASIDE: feet down, the rod moves (least travel) until no man is in the ball's way, so
  the wind-up does not knock it backwards; skipped when no man is near the ball's path;
- LIFT: the feet go back and up to the kick's wind-up angle, the rod holds its place;
- ALIGN: with the feet up, the man that can get there goes to where the ball will be when
  the foot comes down; once there the kick engine strikes (its wind-up is already done).

A play gives up after `GIVE_UP_S` (the ball went elsewhere) and starts again if the ball
is still there.

A ball the camera loses right under one of our rods (the rod hides the middle of the ball
from above, so a ball rolling along the rod's line is not seen at all) cannot be aligned
on: the rod SWEEPS instead (`sweep_translations`): feet up, then strikes at translations
that together bring a foot over every y along the rod, nearest the last seen y first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from foosball.geometry import Rod
from foosball.strategy.rods import men_offsets

# m behind the rod's axis: as far as the men touch the ball (`Man.contact_reach` of the
# default table; the referee counts a ball this far behind as the rod's). Only up to 53 mm
# (72 mm x sin 48 deg, the foot's tip at the ball's centre height) before issue 30, and a
# ball lying 55 mm behind the 5-man rod was left there for 10 s (a possession foul)
BEHIND_REACH = 0.066
# m behind the axis: a still ball further back is met by a forward strike's foot on its top
# or front, down and back (the physics' leg, first touch of a swing from behind: pushed
# forward at 50 mm, hardly at 56, backwards from 57; the foot's tip is at the ball's centre
# height only 29 mm behind the axis)
STRIKE_BEHIND = 0.055
STRIKE_FROM_WINDUP_S = 0.09  # s from the wind-up angle to the foot at the ball (120 rad/s)
SIDESTEP_CLEARANCE = 0.012  # m between the foot's edge and the ball while winding up
ALIGN_TOLERANCE = 0.004  # m
GIVE_UP_S = 1.5
FEET_UP = -1.0  # rad: feet behind and above the ball (they clear it beyond about 0.9 rad)
HIDE_BAND = 0.03  # m from a rod's axis: a ball lost there is hidden under that rod
SWEEP_STEP = 0.044  # m between sweep strikes: a foot strikes a ball within 29 mm of its centre


@dataclass(slots=True)
class BehindPlay:
    phase: str  # "aside" | "lift" | "align"
    started: float


@dataclass(slots=True)
class HiddenSweep:
    """Strikes at `translations` in turn (cyclic) at a ball hidden under the rod."""

    translations: tuple[float, ...]
    next: int = 0


def is_behind(ahead: float, contact_ahead: float) -> bool:
    """Whether a ball `ahead` m in front of the rod's axis lies under or just behind it."""
    return -BEHIND_REACH < ahead < 0.9 * contact_ahead


def aside_translation(rod: Rod, ball_y: float, current: float, clear: float) -> float | None:
    """The translation nearest `current` that leaves every man at least `clear` from the
    ball's y; None when no man is in the way now."""
    offsets = men_offsets(rod)
    if all(abs(current + o - ball_y) >= clear for o in offsets):
        return None
    best: float | None = None
    for offset in offsets:
        for side in (-1.0, 1.0):
            t = rod.clamp(ball_y + side * clear - offset)
            clear_of_all = all(abs(t + o - ball_y) >= clear - 1e-3 for o in offsets)
            if clear_of_all and (best is None or abs(t - current) < abs(best - current)):
                best = t
    return best


def sweep_translations(rod: Rod, estimate_y: float) -> tuple[float, ...]:
    """Translations, evenly over the rod's travel at most `SWEEP_STEP` apart (so some foot
    strikes a ball anywhere along the rod), the one bringing a man nearest `estimate_y`
    first."""
    span = rod.travel_max - rod.travel_min
    count = max(1, math.ceil(span / SWEEP_STEP) + 1)
    step = span / (count - 1) if count > 1 else 0.0
    offsets = men_offsets(rod)

    def miss(translation: float) -> float:
        return min(abs(translation + o - estimate_y) for o in offsets)

    translations = [rod.travel_min + k * step for k in range(count)]
    return tuple(sorted(translations, key=miss))


# A ball rolling past the end of the goalkeeper's reach and on behind him into the mouth
# (issue 30, club seed 3 after the restart: off the side wall along our end wall at 0.7 m/s)
# is met by the side of his leg tilted back: the man stands where the ball's path is
# BACKSTOP_BEHIND m behind the axis; a tilted leg meets a ball centre up to BACKSTOP_MAX
# behind (the foot's tip then still reaches below the ball's top).
BACKSTOP_BEHIND = 0.035
BACKSTOP_MAX = 0.052
BACKSTOP_MIN_VY = 0.1  # m/s across the table: slower, the ball comes at the foot's face
BACKSTOP_MIN_VX = 0.05  # m/s towards our goal


def feet_back_rotation(behind: float, lever: float, foot_reach: float) -> float:
    """The rotation (negative: feet back) whose leg meets a ball centre `behind` m behind
    the axis: the leg's line through it where that point is on the leg (`lever`: the axis
    above the ball's centre), else the foot's tip over it."""
    if math.hypot(behind, lever) <= foot_reach:
        return -math.atan2(behind, lever)
    return -math.asin(min(behind, foot_reach) / foot_reach)


def backstop(rod: Rod, x: float, y: float, vx: float, vy: float, goal_x: float,
             mouth: tuple[float, float], block_half: float, lever: float,
             foot_reach: float) -> tuple[float, float] | None:
    """(the man's y, the feet's rotation) that put the side of a one-man rod's tilted leg
    in the way of a ball whose straight path passes the rod's line beyond the man's reach
    and enters the `mouth` at `goal_x` behind it; None for any other ball, or where the man
    cannot stand in its way close enough behind the axis."""
    if vx > -BACKSTOP_MIN_VX or abs(vy) < BACKSTOP_MIN_VY:
        return None
    y_goal = y + vy * (goal_x - x) / vx
    if not mouth[0] <= y_goal <= mouth[1]:
        return None
    reachable = rod.reachable_y()
    if len(reachable) != 1:
        return None
    (low, high), = reachable
    if x > rod.x:  # still in front: only a ball that passes the man's end at the rod's line
        y_line = y + vy * (rod.x - x) / vx
        if low - block_half <= y_line <= high + block_half:
            return None  # the upright man blocks it there (the block at the crossing)
    side = 1.0 if vy < 0 else -1.0  # the ball comes along the rod from this side
    x_meet = min(x, rod.x - BACKSTOP_BEHIND)
    y_meet = y + vy * (x_meet - x) / vx
    man = min(max(y_meet - side * block_half, low), high)
    t = (man + side * block_half - y) / vy  # when the ball reaches the man's side
    behind = rod.x - (x + vx * t)
    if t < 0.0 or not 0.0 < behind <= BACKSTOP_MAX:
        return None
    return man, feet_back_rotation(behind, lever, foot_reach)
