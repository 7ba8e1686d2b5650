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
