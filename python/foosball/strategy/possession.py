"""How long our team has had the ball, as the strategy can tell from the ball states alone.

The simulator's referee (``foosball.sim.rules``) applies the ITSF limits: 10 s on the 5-man
rod, 15 s on the others, goalkeeper and 2-man rod one zone, a moving ball counting too. The
strategy keeps the same clock from the tracked ball (robot frame) so it can let go in time:
``urgency`` is the fraction of the zone's limit used up (0 when another zone or the opponent
has the ball). A ball in the gap between two reach bands stays with the zone it was in.
"""

from __future__ import annotations

from foosball.geometry import Rod, Table

FIVE_MAN_LIMIT_S = 10.0  # the ITSF limits; the simulator's referee uses these too
OTHER_LIMIT_S = 15.0


def zone_of(rod: Rod) -> str:
    """Goalkeeper and 2-man rod are one zone for the time of possession."""
    return "goalkeeper+defence" if rod.role in ("goalkeeper", "defence") else rod.role


def limit_of(zone: str) -> float:
    return FIVE_MAN_LIMIT_S if zone == "midfield" else OTHER_LIMIT_S


class PossessionClock:
    def __init__(self, table: Table) -> None:
        self.reach = table.man.contact_reach
        # every rod of the table in the robot frame: ours as they are, theirs at x (their
        # frame is mirrored, but a controller is handed our own frame, and the human rods
        # of the geometry file are already in the table frame = robot frame)
        self.bands = [(rod.x, rod.team == "robot", zone_of(rod)) for rod in table.rods]
        self.zone: str | None = None  # ours, or None when the opponent has it
        self.since = 0.0

    def update(self, ball_x: float, now: float) -> float:
        """Advance with the ball's x; the fraction of our zone's limit used up."""
        for x, ours, zone in self.bands:
            if abs(ball_x - x) < self.reach:
                wanted = zone if ours else None
                if wanted != self.zone:
                    self.zone, self.since = wanted, now
                break
        return self.urgency(now)

    def urgency(self, now: float) -> float:
        if self.zone is None:
            return 0.0
        return (now - self.since) / limit_of(self.zone)

    def reset(self) -> None:
        self.zone = None

