"""Goal-mouth cover: where goalkeeper and defence stand so their shadows, seen from the ball,
leave no part of the goal mouth open; and which part of a goal is open given the rods in front
of it (for aiming).

A man at (x_m, y_m) stops a ball rolling from (x_b, y_b) when the ball's line passes within
``block_half`` of the man's centre (half a foot plus a ball radius). Projected from the ball
onto the goal line x_g this is an interval of width ``2 block_half (x_g - x_b) / (x_m - x_b)``
around the point where the line from the ball through the man meets the goal line.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from foosball.geometry import Rod
from foosball.strategy.rods import men_offsets


class Interval(NamedTuple):
    """A stretch of a goal line; a tuple, because the planner makes thousands a second."""

    low: float
    high: float

    @property
    def width(self) -> float:
        return max(0.0, self.high - self.low)


def between(x: float, a: float, b: float) -> bool:
    return min(a, b) < x < max(a, b)


def shadow(ball_x: float, ball_y: float, man_x: float, man_y: float, block_half: float,
           goal_x: float) -> Interval | None:
    """The part of the goal line the man hides from the ball (None: the man is not between)."""
    if not (ball_x < man_x < goal_x or goal_x < man_x < ball_x):
        return None
    scale = (goal_x - ball_x) / (man_x - ball_x)
    centre = ball_y + (man_y - ball_y) * scale
    half = block_half * scale
    return Interval(centre - half, centre + half)


def man_y_for_shadow_centre(ball_x: float, ball_y: float, man_x: float, goal_x: float,
                            centre: float) -> float:
    """y at which a man on the line x = man_x throws his shadow centred on `centre`."""
    return ball_y + (centre - ball_y) * (man_x - ball_x) / (goal_x - ball_x)


def covered_length(mouth: Interval, shadows: list[Interval]) -> float:
    """Length of the mouth inside the union of the shadows."""
    mouth_low, mouth_high = mouth
    parts = [
        (mouth_low if low < mouth_low else low, mouth_high if high > mouth_high else high)
        for low, high in shadows
    ]
    parts.sort()
    total, reach = 0.0, mouth_low
    for low, high in parts:
        if high <= reach or high <= low:  # before the reach, or wholly outside the mouth
            continue
        total += high - (low if low > reach else reach)
        reach = high
    return total


def open_intervals(mouth: Interval, shadows: list[Interval]) -> list[Interval]:
    """Parts of the mouth no shadow covers, in order."""
    gaps: list[Interval] = []
    mouth_low, mouth_high = mouth
    reach = mouth_low
    for low, high in sorted(shadows):
        if low > reach:
            end = low if low < mouth_high else mouth_high
            if end > reach:
                gaps.append(Interval(reach, end))
        if high > reach:
            reach = high
        if reach >= mouth_high:
            break
    if reach < mouth_high:
        gaps.append(Interval(reach, mouth_high))
    return gaps


def _widest_gap(mouth: Interval, shadows: list[Interval]) -> tuple[float, float]:
    """The first of the widest parts of the mouth no shadow covers (`open_intervals`' gaps,
    without building them); the whole mouth if every part is covered."""
    mouth_low, mouth_high = mouth
    widest, widest_width = (mouth_low, mouth_high), -1.0
    reach = mouth_low
    for low, high in sorted(shadows):
        if low > reach:
            end = low if low < mouth_high else mouth_high
            if end > reach and end - reach > widest_width:
                widest, widest_width = (reach, end), end - reach
        if high > reach:
            reach = high
        if reach >= mouth_high:
            break
    if reach < mouth_high and mouth_high - reach > widest_width:
        widest = (reach, mouth_high)
    return widest


_CLEARLY_LESS = 1e-4  # m of cover: a candidate this far below the best cannot win (score)


class CoverPlan(NamedTuple):  # a tuple: made once a step
    """Translations for goalkeeper and defence and how much of the mouth they leave open."""

    goalkeeper_translation: float
    defence_translation: float
    covered: float  # m of the mouth covered
    mouth: float  # m, mouth width considered


def _place(rod: Rod, man_y: float, current: float) -> float:
    """Translation putting the man that gets nearest to man_y there (smallest move on ties)."""
    return _place_on(men_offsets(rod), rod.travel_min, rod.travel_max, man_y, current)


def _place_on(offsets: tuple[float, ...], low: float, high: float, man_y: float,
              current: float) -> float:
    """`_place` for a rod's men offsets and travel."""
    best_error = best_move = best = math.inf
    for offset in offsets:
        wanted = man_y - offset
        clamped = low if wanted < low else high if wanted > high else wanted
        error, move = abs(clamped - wanted), abs(clamped - current)
        # the smallest (error, move, translation), as min() of those triples would give
        if error < best_error or (error == best_error and (
                move < best_move or (move == best_move and clamped < best))):
            best_error, best_move, best = error, move, clamped
    return best


def _men_shadows(rod: Rod, translation: float, ball_x: float, ball_y: float, block_half: float,
                 goal_x: float) -> list[Interval]:
    man_x = rod.x
    if not (ball_x < man_x < goal_x or goal_x < man_x < ball_x):
        return []
    scale = (goal_x - ball_x) / (man_x - ball_x)
    half = block_half * scale
    out = []
    for offset in men_offsets(rod):
        centre = ball_y + (translation + offset - ball_y) * scale
        out.append(Interval(centre - half, centre + half))
    return out


def rod_shadows(rod: Rod, translation: float, ball_x: float, ball_y: float, block_half: float,
                goal_x: float) -> list[Interval]:
    """Shadows of all the men of a rod standing at `translation`."""
    return _men_shadows(rod, translation, ball_x, ball_y, block_half, goal_x)


class _Projection:
    """One rod seen from the ball onto the goal line: its shadows for a translation, and the
    translation that centres a shadow on a point; the factors are worked out once per plan."""

    __slots__ = ("ball_y", "between", "half", "high", "known", "low", "offsets", "scale",
                 "to_goal", "to_man")

    def __init__(self, rod: Rod, ball_x: float, ball_y: float, goal_x: float,
                 block_half: float) -> None:
        self.ball_y = ball_y
        self.offsets = men_offsets(rod)
        self.between = ball_x < rod.x < goal_x or goal_x < rod.x < ball_x
        self.scale = (goal_x - ball_x) / (rod.x - ball_x) if self.between else 0.0
        # man_y_for_shadow_centre's two differences (the same for every centre)
        self.to_man, self.to_goal = rod.x - ball_x, goal_x - ball_x
        self.half = block_half * self.scale
        self.known: dict[float, list[Interval]] = {}  # candidates share translations
        self.low, self.high = rod.travel_min, rod.travel_max

    def shadows(self, translation: float) -> list[Interval]:
        out = self.known.get(translation)
        if out is None:
            out = []
            if self.between:
                by, scale, half = self.ball_y, self.scale, self.half
                for offset in self.offsets:  # plain tuples: Interval's fields, made faster
                    centre = by + (translation + offset - by) * scale
                    out.append((centre - half, centre + half))  # type: ignore[arg-type]
            self.known[translation] = out
        return out

    def place(self, centre: float, current: float) -> float:
        """Translation throwing a shadow centred on `centre` (see `_place` for the man)."""
        # man_y_for_shadow_centre, the same arithmetic with its differences made once
        man_y = self.ball_y + (centre - self.ball_y) * self.to_man / self.to_goal
        return _place_on(self.offsets, self.low, self.high, man_y, current)


def plan_cover(ball_x: float, ball_y: float, goalkeeper: Rod, defence: Rod, goal_x: float,
               mouth: Interval, block_half: float, current_goalkeeper: float,
               current_defence: float, fixed: list[Interval] | None = None) -> CoverPlan:
    """Goalkeeper and defence positions that, with the `fixed` shadows of the other rods, hide
    as much of the mouth as possible from the ball.

    The defence (nearer the ball, the wider shadow) takes an end or the middle of one of the
    two widest gaps left by the fixed shadows; the goalkeeper then centres its shadow on the
    widest gap left; the best cover wins, then the smallest move. With the ball behind the
    defence only the goalkeeper blocks; with the ball level with the goalkeeper, it stands on
    the ball's y."""
    # shadows wholly outside the mouth change neither the cover nor the gaps
    fixed = [s for s in fixed or [] if s[1] > mouth[0] and s[0] < mouth[1]]
    keeper_view = _Projection(goalkeeper, ball_x, ball_y, goal_x, block_half)
    defence_view = _Projection(defence, ball_x, ball_y, goal_x, block_half)
    best: tuple[float, float, float, float] | None = None  # (-covered, move, gk, def)
    best_covered = 0.0  # the best's cover before rounding

    def keeper_for(others: list[Interval]) -> float:
        low, high = _widest_gap(mouth, others)
        return keeper_view.place((low + high) / 2, current_goalkeeper)

    def score(gk_t: float, def_t: float, others: list[Interval]) -> None:
        """`others`: the fixed shadows and the defence's at def_t."""
        nonlocal best, best_covered
        shadows = others + keeper_view.shadows(gk_t)
        covered = covered_length(mouth, shadows)
        # `candidate < best` for candidate = (-round(covered, 5), round(move, 4), gk_t, def_t),
        # with each round() (slow) only where it can decide: round() is monotonic and moves a
        # value by at most 5e-6, so a cover this much below the best's cannot tie it
        if best is not None and covered < best_covered - _CLEARLY_LESS:
            return
        # (a cover equal to the best's, as when both close the whole mouth, rounds the same)
        key = best[0] if best is not None and covered == best_covered else -round(covered, 5)
        if best is not None and key != best[0]:
            if key > best[0]:
                return
        else:
            move = abs(gk_t - current_goalkeeper) + abs(def_t - current_defence)
            candidate = (key, round(move, 4), gk_t, def_t)
            if best is None or candidate < best:
                best, best_covered = candidate, covered
            return
        move = abs(gk_t - current_goalkeeper) + abs(def_t - current_defence)
        best, best_covered = (key, round(move, 4), gk_t, def_t), covered

    if not keeper_view.between:
        score(_place(goalkeeper, ball_y, current_goalkeeper), current_defence,
              fixed + defence_view.shadows(current_defence))
    elif not defence_view.between:
        score(keeper_for(fixed), current_defence, fixed)
    else:
        w_def = 2 * block_half * (goal_x - ball_x) / (defence.x - ball_x)
        gaps = sorted(open_intervals(mouth, fixed), key=lambda g: -g.width)[:2] or [mouth]
        centres: list[float | None] = []
        for g in gaps:
            centres += [g.low + w_def / 2, g.high - w_def / 2, (g.low + g.high) / 2]
        tried = set()  # centres near an end of the travel often ask for the same place
        place, shadows_at = defence_view.place, defence_view.shadows
        for c in [*centres, None]:
            def_t = current_defence if c is None else place(c, current_defence)
            if def_t not in tried:
                tried.add(def_t)
                others = fixed + shadows_at(def_t)
                score(keeper_for(others), def_t, others)
    assert best is not None
    return CoverPlan(
        goalkeeper_translation=best[2],
        defence_translation=best[3],
        covered=-best[0],
        mouth=mouth.width,
    )
