"""The table-soccer rules (ITSF) a simulated match enforces on both teams.

Time of possession. A rod *has* the ball while the ball lies within its men's reach along x
(``|x - rod x| < contact_reach``; on the default table the reach bands of neighbouring rods
do not overlap, so at most one rod has it). The goalkeeper and the 2-man rod of a team are
one zone, every other rod its own. The clock of a zone starts when the ball enters it and
runs, whether the ball rolls or lies still, until the ball enters another zone. A ball in
the gap between two bands is within no man's reach, so no rod has it: the clock stops, but
the ball still belongs to the zone it last was in, and if it comes back there the clock
goes on from where it stopped (knocking the ball out of reach and back does not start the
count again). Limits: 10 s on the 5-man rod, 15 s on the others. Past the limit the
ball goes to the opponent: from the 3-man rod to the opponent's 2-man rod, from anywhere
else to the opponent's 5-man rod (``Restart``).

No spinning. A rod may not turn more than 360 degrees before or after striking the ball. A
*run* is a rotation in one direction (it ends when the rod turns back by more than
``REVERSAL_RAD``); a strike is a man's contact. A foul: a strike more than a full turn after
the run began, or the run going on more than a full turn past the strike. The opponent then
serves on its 5-man rod. Angles are sampled at the end of each frame (5 ms), so a strike's
angle is that of the frame it happens in.

Dead ball. When the ball is dead (the match runner decides when: still or rolling out of
every man's reach; see `match`), where it lies says where play goes on. Behind the 5-man
rods, that is further from the centre line than the 5-man rod nearest to it, it is put at
the goalkeeper of that end (``Restart``, like the restarts above); between the two 5-man
rods it is served again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from foosball.geometry import Rod, Table
from foosball.strategy.possession import FIVE_MAN_LIMIT_S, OTHER_LIMIT_S, limit_of, zone_of

__all__ = ["FIVE_MAN_LIMIT_S", "OTHER_LIMIT_S", "Referee", "Restart"]

FULL_TURN = 2 * math.pi
REVERSAL_RAD = 0.05  # a turn back smaller than this is jitter, not the end of a run
PLACE_AHEAD = 0.035  # m in front of a rod's axis: clear of an upright foot, within reach


@dataclass(frozen=True, slots=True)
class Restart:
    """Where a restart puts the ball (at rest), and why."""

    team: str  # the team that gets the ball
    x: float
    y: float
    reason: str  # "possession" | "spinning" | "dead ball"


@dataclass(slots=True)
class TeamFouls:
    possession: int = 0
    spinning: int = 0
    longest_possession_s: float = 0.0
    longest_zone: str = ""


@dataclass(slots=True)
class _Run:
    start: float  # rotation where the run began
    direction: float = 0.0  # +1 / -1 once the rod has moved
    extreme: float = 0.0  # farthest rotation of the run so far
    struck_at: float | None = None  # rotation at the strike, if the run struck


@dataclass(slots=True)
class _Holding:
    team: str
    zone: str
    since: float  # when the count began, moved on by the time the ball was out of reach
    out_of_reach_since: float | None = None


@dataclass
class Referee:
    """Watches every frame and says when a rule was broken and how play restarts."""

    table: Table
    fouls: dict[str, TeamFouls] = field(default_factory=lambda: {
        "robot": TeamFouls(), "human": TeamFouls()})

    def __post_init__(self) -> None:
        self.reach = self.table.man.contact_reach
        self._runs: list[_Run | None] = [None] * len(self.table.rods)
        self._seen = [math.nan] * len(self.table.rods)  # each rod's angle last frame
        self._holding: _Holding | None = None
        self.spins: list[tuple[str, _Run | None]] = []  # each spinning foul's rod and run

    # --- possession ------------------------------------------------------------------------

    def holder(self, ball_x: float) -> Rod | None:
        """The rod whose men's reach band the ball is in, if any."""
        for rod in self.table.rods:
            if abs(ball_x - rod.x) < self.reach:
                return rod
        return None

    def new_ball(self) -> None:
        """A serve, a restart or a goal: no zone holds the ball."""
        self._holding = None

    def possession(self, ball_x: float, now: float) -> Restart | None:
        """Advance the zone clocks to `now`; a Restart if the holder ran out of time."""
        rod = self.holder(ball_x)
        holding = self._holding
        if rod is None:
            if holding is not None and holding.out_of_reach_since is None:
                holding.out_of_reach_since = now  # the count stops until a rod has it again
            return None
        zone = zone_of(rod)
        if holding is None or holding.team != rod.team or holding.zone != zone:
            holding = self._holding = _Holding(rod.team, zone, now)
        elif holding.out_of_reach_since is not None:
            holding.since += now - holding.out_of_reach_since
            holding.out_of_reach_since = None
        held = now - holding.since
        fouls = self.fouls[holding.team]
        if held > fouls.longest_possession_s:
            fouls.longest_possession_s, fouls.longest_zone = held, holding.zone
        if held <= limit_of(holding.zone):
            return None
        fouls.possession += 1
        self._holding = None
        opponent = _other(holding.team)
        role = "defence" if holding.zone == "attack" else "midfield"
        return self._ball_to(opponent, role, "possession")

    # --- spinning --------------------------------------------------------------------------

    def rotations(self, rotations: tuple[float, ...], struck: set[int]) -> Restart | None:
        """Follow every rod's run of rotation; `struck`: rods whose men touched the ball in
        this frame. A Restart for the opponent of the first rod found spinning."""
        foul: Restart | None = None
        seen = self._seen
        for i, angle in enumerate(rotations):
            if angle == seen[i] and i not in struck:
                continue  # a rod at rest: the same angle again changes nothing
            seen[i] = angle
            run = self._runs[i]
            if run is None:
                run = self._runs[i] = _Run(start=angle, extreme=angle)
            moved = angle - run.extreme
            if run.direction == 0.0:
                if abs(moved) > REVERSAL_RAD:
                    run.direction = math.copysign(1.0, moved)
                    run.extreme = angle
            elif moved * run.direction > 0:
                run.extreme = angle
            elif -moved * run.direction > REVERSAL_RAD:  # turned back: a new run
                run = self._runs[i] = _Run(start=run.extreme, direction=-run.direction,
                                           extreme=angle)
            if i in struck and run.struck_at is None:
                run.struck_at = angle
                if abs(angle - run.start) > FULL_TURN:
                    foul = foul or self._spun(i)
            if run.struck_at is not None and abs(run.extreme - run.struck_at) > FULL_TURN:
                foul = foul or self._spun(i)
                run.struck_at = None  # one foul per run
        return foul

    def _spun(self, rod_index: int) -> Restart:
        team = self.table.rods[rod_index].team
        self.fouls[team].spinning += 1
        self.spins.append((self.table.rods[rod_index].name, self._runs[rod_index]))
        self._holding = None
        return self._ball_to(_other(team), "midfield", "spinning")

    # --- dead ball -------------------------------------------------------------------------

    def dead_ball(self, ball_x: float) -> Restart | None:
        """Where a dead ball at `ball_x` goes: a Restart at the nearest goalkeeper if it lies
        behind the 5-man rods, None (a serve) if it lies between them."""
        five_man = min((r for r in self.table.rods if r.role == "midfield"),
                       key=lambda r: abs(ball_x - r.x))
        if (ball_x - five_man.x) * five_man.x <= 0:  # not beyond it, seen from the centre
            return None
        keeper = min((r for r in self.table.rods if r.role == "goalkeeper"),
                     key=lambda r: abs(ball_x - r.x))
        self._holding = None
        return self._ball_to(keeper.team, "goalkeeper", "dead ball")

    # --- restarts --------------------------------------------------------------------------

    def _ball_to(self, team: str, role: str, reason: str) -> Restart:
        """The ball at rest just in front of `team`'s rod of that role, on the field's
        centre line in y (the middle man of the 5-man rod; a man of the 2-man rod and the
        goalkeeper reach it too)."""
        rod = next(r for r in self.table.team_rods(team) if r.role == role)
        return Restart(team, rod.x + rod.forward * PLACE_AHEAD, 0.0, reason)

    def summary(self) -> dict[str, dict[str, float | int | str]]:
        return {
            team: {
                "possession": f.possession,
                "spinning": f.spinning,
                "longest_possession_s": round(f.longest_possession_s, 2),
                "longest_zone": f.longest_zone,
            }
            for team, f in self.fouls.items()
        }


def _other(team: str) -> str:
    return "human" if team == "robot" else "robot"
