"""When a ball went in: the game panel's goal detector (the game panel agent, core.py,
counts what it reports).

Score: a goal is a track that ends in a goal mouth. When the tracker reports the ball LOST,
its last sighting (DETECTED only: a prediction drifts), carried on for GOAL_HORIZON_S at its
heading (from its last two sightings: the filter restarts its velocity at 0 after a kick,
and a hard shot is in the goal a frame later), must have its centre over a goal line
(|x| >= L/2) where it crossed inside the mouth (|y| <= goal width / 2); the goal stands when
the ball stays LOST for GOAL_CONFIRM_S (a ball bounced back off the goalkeeper is seen back
in the field first). The carrying-on matters: a ball shot into the goal vanishes between two
frames, and at 50 fps its last sighting is still in front of the line. One goal per entry:
the ball must be seen back inside the field before the next counts. The robot scores
at x = +L/2 (the human's goal).

A ball that vanishes near a goal (last seen within NEAR_GOAL_M of its line, about the mouth)
without the rule above seeing it go in may have gone in hidden by the men, or stopped hidden
behind the goalkeeper: up to then the camera saw the same (both met on the rig). The next
sighting tells them apart, as the rules restart play (facts/rules-and-shots.md): after a goal
the ball comes back as a serve between the 5-man rods, and on the rig's table SERVE_WINDOW_S
after the ball was last seen (the simulator serves 1 s after the goal); a ball that stopped
hidden behind the 5-man rods is a dead ball, put back at that end's goalkeeper (after 3 s
still), and a hidden ball that rolls out is seen where it was. So a serve inside the window
counts the goal; no sighting within the window, or a serve after it (a person slow to serve,
or a possession restart), makes the goal *uncertain*: the page asks the operator, who counts
it or dismisses it in one press (a sighting elsewhere withdraws the question: the ball was
hidden, not in).
"""

from __future__ import annotations

import math

from foosball.geometry import Table
from foosball.wire.catalogue import BallState, BallStatus

GOAL_HORIZON_S = 0.1  # the longest a vanished ball is carried on (5 frames at 50 fps)
GOAL_CONFIRM_S = 0.25  # LOST this long, not seen back in the field: the goal stands
TWO_SIGHTINGS_S = 0.05  # sightings this close give the heading (the filter's lags a kick)
# A ball lost this close to a goal line (|x| >= L/2 - NEAR_GOAL_M: behind the goalkeeper's
# rod, which stands 7.8 cm from the line) may have gone in hidden ...
NEAR_GOAL_M = 0.12
# ... when it was within the mouth widened by this (seen on the rig: a ball rolling along the
# end wall towards the mouth, last seen 3.9 cm beside the post, then hidden and in).
MOUTH_MARGIN_M = 0.05
# The serve that tells a hidden goal, timed from the last sighting: not sooner than a ball
# is taken out of the goal (the simulator serves 1 s after the goal, so on the rig 1.0-1.6 s
# after a ball last seen rolling in), and before a dead ball would be put at the goalkeeper
# (3 s still) or a possession limit restarts play (10-15 s).
SERVE_WINDOW_S = (0.5, 2.5)


class GoalDetector:
    """Goal = a track that ends in a goal mouth, then LOST (see the module doc)."""

    def __init__(self, table: Table) -> None:
        self.half_length = table.field.half_length
        self.goal_half = table.field.goal_width / 2
        self.field_x = table.field.half_length - table.ball.radius  # inside the end walls
        self.previous: BallState | None = None  # the sighting before `last`
        self.last: BallState | None = None  # the last sighting
        self.judged = False  # whether the loss after `last` was looked at
        self.pending: tuple[str, int] | None = None  # (team, LOST at): a goal to confirm
        self.armed = True
        self.serve_half = min(abs(r.x) for r in table.rods if r.role == "midfield")
        # (team, last seen at): lost near that goal, unseen since; the next sighting decides
        self.vanished: tuple[str, int] | None = None
        # The team of a goal the camera cannot decide, until the operator answers (one at a
        # time: a newer one replaces it), and whether it was asked about the ball now lost.
        self.uncertain: str | None = None
        self.asked = False

    def observe(self, ball: BallState) -> str | None:
        """The scoring team ("robot" or "human") when this ball state confirms a goal."""
        if ball.status == BallStatus.DETECTED:
            # Only what the camera saw: a predicted state is the filter's guess of a ball it
            # no longer sees, which drifts (a slow ball entering the mouth near a post was
            # predicted beside the post, out of the mouth).
            scored = self._next_sighting(ball) if self.vanished is not None else None
            self.previous, self.last, self.judged = self.last, ball, False
            if abs(ball.x) < self.field_x:
                self.armed = True
                self.pending = None  # back in the field: it bounced out, no goal
            return scored
        if ball.status != BallStatus.LOST:
            return None
        if self.last is not None and not self.judged and self.armed and self.pending is None:
            # Carried on as far as it goes in GOAL_HORIZON_S: the tracker gives up a
            # restarted track within a frame, and a ball hidden by a man on its way in is
            # still on its way in; a ball that was not in the goal is seen back in the field
            # before GOAL_CONFIRM_S.
            team = self._mouth_reached(self.last)
            if team is not None:
                self.pending, self.armed = (team, ball.capture_time), False
            else:
                self.vanished, self.asked = self._near_goal(self.last), False
        self.judged = True
        if self.vanished is not None and not self.asked and \
                (ball.capture_time - self.vanished[1]) * 1e-9 > SERVE_WINDOW_S[1]:
            self.uncertain, self.asked = self.vanished[0], True  # no serve in time: ask
        if self.pending is not None and \
                (ball.capture_time - self.pending[1]) * 1e-9 >= GOAL_CONFIRM_S:
            team, self.pending = self.pending[0], None
            return team
        return None

    def forget(self) -> None:
        """A match starts or resumes: a goal not yet confirmed went in while nobody played
        (seen on the rig: the previous match's last goal counted in the next one)."""
        self.pending = self.vanished = None

    def settle(self) -> None:
        """The operator answered the uncertain goal (counted or dismissed it)."""
        self.uncertain = self.vanished = None
        self.asked = False

    def _near_goal(self, last: BallState) -> tuple[str, int] | None:
        """(scoring team, last seen at) when `last` was near enough a goal to have gone in
        hidden."""
        if abs(last.x) < self.half_length - NEAR_GOAL_M or \
                abs(last.y) > self.goal_half + MOUTH_MARGIN_M:
            return None
        return ("robot" if last.x > 0 else "human"), last.capture_time

    def _next_sighting(self, ball: BallState) -> str | None:
        """The first sighting after a ball vanished near a goal: a serve within the window
        is the goal (returned); a serve after it leaves the goal uncertain; anywhere else the
        ball was hidden, not in."""
        assert self.vanished is not None
        team, seen_ns = self.vanished
        asked, self.vanished, self.asked = self.asked, None, False
        gap_s = (ball.capture_time - seen_ns) * 1e-9
        if abs(ball.x) > self.serve_half or gap_s < SERVE_WINDOW_S[0]:
            if asked:
                self.uncertain = None  # the question was about a hidden ball: withdrawn
            return None
        if gap_s <= SERVE_WINDOW_S[1]:
            return team
        self.uncertain = team  # served late: a goal, or a restart after a hidden ball
        return None

    def _heading(self, last: BallState) -> tuple[float, float]:
        """The ball's velocity when last seen: from its last two sightings when they are
        close in time (a kick restarts the filter's velocity at 0, and a hard shot is in the
        goal one frame later), else the filter's."""
        previous = self.previous
        if previous is not None:
            dt = (last.capture_time - previous.capture_time) * 1e-9
            if 0.0 < dt <= TWO_SIGHTINGS_S:
                return (last.x - previous.x) / dt, (last.y - previous.y) / dt
        return last.vx, last.vy

    def _mouth_reached(self, last: BallState) -> str | None:
        """The team scoring if `last` is in a mouth, or carried on for GOAL_HORIZON_S is
        over a goal line having crossed it inside the mouth."""
        vx, vy = self._heading(last)
        if abs(last.x) > self.field_x and abs(last.y) <= self.goal_half and vx * last.x >= 0:
            # past where the end wall stops a ball, not coming out: only the mouth lets it
            # (seen on the live table: last seen 1 mm in front of the line, still, at 50 fps)
            return "robot" if last.x > 0 else "human"
        x = last.x + vx * GOAL_HORIZON_S
        if abs(x) < self.half_length:
            return None
        line = math.copysign(self.half_length, x)
        if abs(last.x) >= self.half_length or vx == 0.0:
            y_at_line = last.y  # already over the line when last seen
        else:
            y_at_line = last.y + vy * (line - last.x) / vx
        if abs(y_at_line) > self.goal_half:
            return None
        return "robot" if line > 0 else "human"
