"""Geometry helpers on the shared table geometry (``foosball.geometry.Rod``).

Where each man is for a rod translation, which man can reach a point, and the intervals of y
a rod covers. Pure functions of the geometry file; nothing here moves anything.
"""

from __future__ import annotations

from typing import NamedTuple

from foosball.geometry import Rod


class Reach(NamedTuple):
    """A man and the (clamped) rod translation that brings him as near to a point as possible
    (a tuple: the planners make several a step)."""

    man: int
    translation: float
    error: float  # |y of the man after the move - wanted y|; 0 when the point is reachable


_OFFSETS: dict[int, tuple[Rod, tuple[float, ...]]] = {}


def men_offsets(rod: Rod) -> tuple[float, ...]:
    """Each man's y relative to the rod's translation (`Rod.men_y` at 0), computed once per rod:
    the planners ask for it thousands of times a second."""
    entry = _OFFSETS.get(id(rod))
    if entry is None or entry[0] is not rod:  # the id of a rod that is gone may be reused
        entry = (rod, rod.men_y(0.0))
        _OFFSETS[id(rod)] = entry
    return entry[1]


def men_positions(rod: Rod, translation: float) -> tuple[float, ...]:
    """y of every man's centre for a rod translation."""
    return rod.men_y(translation)


def nearest_man(rod: Rod, translation: float, y: float) -> int:
    """Index of the man nearest to `y` with the rod where it is now (ties go to the lower index)."""
    positions = rod.men_y(translation)
    return min(range(rod.men), key=lambda i: (abs(positions[i] - y), i))


def men_reaching(rod: Rod, y: float, tolerance: float = 0.0) -> list[int]:
    """Men whose centre can be brought to `y` within the rod's travel (widened by `tolerance`)."""
    return [
        i
        for i, (low, high) in enumerate(rod.reachable_y())
        if low - tolerance <= y <= high + tolerance
    ]


def reachable_intervals(rod: Rod, half_width: float = 0.0) -> list[tuple[float, float]]:
    """Union of the y intervals the rod's men can cover, each widened by `half_width`
    (half a foot plus a ball radius gives the band where a ball can be touched); merged, sorted."""
    spans = sorted((low - half_width, high + half_width) for low, high in rod.reachable_y())
    merged: list[tuple[float, float]] = []
    for low, high in spans:
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def can_reach(rod: Rod, y: float, half_width: float = 0.0) -> bool:
    return any(low <= y <= high for low, high in reachable_intervals(rod, half_width))


def reach(rod: Rod, y: float, current_translation: float) -> Reach:
    """The best man to put at `y`: among the men that can reach it, the one needing the smallest
    move from `current_translation`; if none can, the one that gets nearest (clamped)."""
    low, high = rod.travel_min, rod.travel_max
    best_error = best_move = best_translation = 0.0
    best_man = -1
    for man, offset in enumerate(men_offsets(rod)):
        wanted = y - offset
        clamped = low if wanted < low else high if wanted > high else wanted
        error = abs(clamped - wanted)
        move = abs(clamped - current_translation)
        # the smallest (error, move); the first man on a tie (as min() of the pairs would)
        if best_man < 0 or error < best_error or (error == best_error and move < best_move):
            best_error, best_move, best_translation, best_man = error, move, clamped, man
    return Reach(man=best_man, translation=best_translation, error=best_error)


def man_at(rod: Rod, translation: float, man: int) -> float:
    return rod.men_y(translation)[man]
