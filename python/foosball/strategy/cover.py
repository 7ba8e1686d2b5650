"""Goal-mouth cover: where goalkeeper and defence stand so their shadows, seen from the ball,
leave no part of the goal mouth open; and which part of a goal is open given the rods in front
of it (for aiming).

A man at (x_m, y_m) stops a ball rolling from (x_b, y_b) when the ball's line passes within
``block_half`` of the man's centre (half a foot plus a ball radius). Projected from the ball
onto the goal line x_g this is an interval of width ``2 block_half (x_g - x_b) / (x_m - x_b)``
around the point where the line from the ball through the man meets the goal line.
"""

from __future__ import annotations

from dataclasses import dataclass

from foosball.geometry import Rod


@dataclass(frozen=True, slots=True)
class Interval:
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
    if not between(man_x, ball_x, goal_x):
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
    parts = sorted(
        (max(s.low, mouth.low), min(s.high, mouth.high)) for s in shadows if s is not None
    )
    total, reach = 0.0, mouth.low
    for low, high in parts:
        if high <= reach:
            continue
        total += high - max(low, reach)
        reach = high
    return total


def open_intervals(mouth: Interval, shadows: list[Interval]) -> list[Interval]:
    """Parts of the mouth no shadow covers, in order."""
    gaps: list[Interval] = []
    reach = mouth.low
    for s in sorted(shadows, key=lambda s: s.low):
        if s.low > reach:
            gaps.append(Interval(reach, min(s.low, mouth.high)))
        reach = max(reach, s.high)
        if reach >= mouth.high:
            break
    if reach < mouth.high:
        gaps.append(Interval(reach, mouth.high))
    return [g for g in gaps if g.width > 0]


@dataclass(frozen=True, slots=True)
class CoverPlan:
    """Translations for goalkeeper and defence and how much of the mouth they leave open."""

    goalkeeper_translation: float
    defence_translation: float
    covered: float  # m of the mouth covered
    mouth: float  # m, mouth width considered


def _place(rod: Rod, man_y: float, current: float) -> float:
    """Translation putting the man that gets nearest to man_y there (smallest move on ties)."""
    best: tuple[float, float, float] | None = None  # (error, move, translation)
    for man in range(rod.men):
        wanted = rod.translation_for(man, man_y)
        clamped = rod.clamp(wanted)
        key = (abs(clamped - wanted), abs(clamped - current), clamped)
        if best is None or key < best:
            best = key
    assert best is not None
    return best[2]


def _men_shadows(rod: Rod, translation: float, ball_x: float, ball_y: float, block_half: float,
                 goal_x: float) -> list[Interval]:
    out = []
    for y in rod.men_y(translation):
        s = shadow(ball_x, ball_y, rod.x, y, block_half, goal_x)
        if s is not None:
            out.append(s)
    return out


def rod_shadows(rod: Rod, translation: float, ball_x: float, ball_y: float, block_half: float,
                goal_x: float) -> list[Interval]:
    """Shadows of all the men of a rod standing at `translation`."""
    return _men_shadows(rod, translation, ball_x, ball_y, block_half, goal_x)


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
    fixed = list(fixed or [])
    candidates: list[tuple[float, float, float, float]] = []  # (-covered, move, gk, def)

    def place_shadow(rod: Rod, centre: float, current: float) -> float:
        man_y = man_y_for_shadow_centre(ball_x, ball_y, rod.x, goal_x, centre)
        return _place(rod, man_y, current)

    def shadows_of(rod: Rod, t: float) -> list[Interval]:
        return _men_shadows(rod, t, ball_x, ball_y, block_half, goal_x)

    def keeper_for(others: list[Interval]) -> float:
        gaps = open_intervals(mouth, others)
        if not gaps:
            return place_shadow(goalkeeper, (mouth.low + mouth.high) / 2, current_goalkeeper)
        widest = max(gaps, key=lambda g: g.width)
        return place_shadow(goalkeeper, (widest.low + widest.high) / 2, current_goalkeeper)

    def score(gk_t: float, def_t: float) -> None:
        shadows = fixed + shadows_of(goalkeeper, gk_t) + shadows_of(defence, def_t)
        covered = covered_length(mouth, shadows)
        move = abs(gk_t - current_goalkeeper) + abs(def_t - current_defence)
        candidates.append((-round(covered, 5), round(move, 4), gk_t, def_t))

    if not between(goalkeeper.x, ball_x, goal_x):
        score(_place(goalkeeper, ball_y, current_goalkeeper), current_defence)
    elif not between(defence.x, ball_x, goal_x):
        score(keeper_for(fixed), current_defence)
    else:
        w_def = 2 * block_half * (goal_x - ball_x) / (defence.x - ball_x)
        gaps = sorted(open_intervals(mouth, fixed), key=lambda g: -g.width)[:2] or [mouth]
        centres = []
        for g in gaps:
            centres += [g.low + w_def / 2, g.high - w_def / 2, (g.low + g.high) / 2]
        for c in centres:
            def_t = place_shadow(defence, c, current_defence)
            score(keeper_for(fixed + shadows_of(defence, def_t)), def_t)
        score(keeper_for(fixed + shadows_of(defence, current_defence)), current_defence)
    best = min(candidates)
    return CoverPlan(
        goalkeeper_translation=best[2],
        defence_translation=best[3],
        covered=-best[0],
        mouth=mouth.width,
    )
