"""Where the improved strategy's goals against come from (issue 30).

Plays matches as `foosball sim tournament` does (the same `Match`, seeds SEED..SEED+N-1)
and, for every goal against of the kinds asked (default own play), prints the last man
contacts before it from the physics (team, rod, man, the ball and its distance from the
rod's axis, speed before -> after, the rod's angle and angular speed) and, for the robot's,
the strategy's plan for that rod just before (mode, kick phase, whether the camera saw the
ball, the ball as the strategy took it, the setpoint); `--frames S` adds the strategy's
every step in the last S seconds. A tool for reading plays; its totals are the
tournament's classification.

    .venv/bin/python benchmarks/own_play_audit.py pro 7000 30 [--frames 0.5]
"""

from __future__ import annotations

import argparse
from collections import deque
from dataclasses import dataclass
from typing import Any

from foosball.sim.match import GOAL_KINDS, Goal, Match
from foosball.sim.physics import Contact

CONTACTS_SHOWN = 6
CONTACT_WINDOW_S = 1.5  # s before the goal


@dataclass(frozen=True, slots=True)
class Step:
    """One strategy step as the audit keeps it."""

    time: float
    seen: bool
    modes: tuple[str, ...]
    rotations: tuple[float, ...]
    setpoints: tuple[tuple[float, float], ...]
    ball: tuple[float, float, float, float] | None
    kicks: tuple[str, ...]


class Audit:
    """One match with its man contacts and the strategy's steps recorded."""

    def __init__(self, opponent: str, seed: int, duration: float, randomise: bool) -> None:
        self.match = Match("improved", opponent, seed=seed, duration=duration,
                           randomise=randomise)
        self.steps: deque[Step] = deque(maxlen=400)
        self.contacts: deque[tuple[Contact, float, float, tuple[float, ...]]] = deque(maxlen=40)
        account, strategy = self.match._account, self.match.controllers["robot"]
        decide = strategy.decide

        def recording(contacts: list[Contact], state: Any) -> None:
            for c in contacts:
                if c.kind == "man":
                    self.contacts.append((c, state.ball_x, state.ball_y,
                                          self.match.world.rod_pose(c.rod)))
            account(contacts, state)

        def deciding(now: float, ball: Any, here: Any) -> Any:
            out = decide(now, ball, here)
            plans, b = strategy.plans_last, strategy.last_ball
            self.steps.append(Step(
                now, ball is not None,
                tuple(p.mode for p in plans) if plans else ("none",) * len(here),
                tuple(h.rotation for h in here),
                tuple((s.translation, s.rotation) for s in out),
                (b.x, b.y, b.vx, b.vy) if b is not None else None,
                tuple(k.phase.name if k.active else "" for k in strategy.kicks)))
            return out

        self.match._account = recording  # type: ignore[method-assign]
        strategy.decide = deciding

    def robot_plan(self, rod: int, t: float) -> str:
        """The strategy's plan for the robot rod with table index `rod` just before `t`."""
        i = self.match.team_rods["robot"].index(rod)
        before = [s for s in self.steps if s.time <= t]
        if not before or before[-1].ball is None:
            return ""
        s = before[-1]
        bx, by, bvx, bvy = s.ball  # type: ignore[misc]
        return (f"plan={s.modes[i]} kick={s.kicks[i]} seen={s.seen} "
                f"est=({bx:.3f},{by:.3f},{bvx:.2f},{bvy:.2f}) "
                f"sp=({s.setpoints[i][0]:.3f},{s.setpoints[i][1]:.2f})")

    def report(self, goal: Goal, frames: float) -> None:
        print(f"\n=== seed {self.match.seed} t={goal.time:.3f} {goal.kind} last "
              f"{goal.last_team}/{goal.last_rod} "
              f"{goal.last_speed_before:.2f}->{goal.last_speed_after:.2f} m/s")
        for c, bx, by, (tr, rot, _vt, vr) in list(self.contacts)[-CONTACTS_SHOWN:]:
            t = c.time_ns * 1e-9
            if goal.time - t > CONTACT_WINDOW_S:
                continue
            rod = self.match.table.rods[c.rod]
            plan = self.robot_plan(c.rod, t) if c.team == "robot" else ""
            print(f"  t={t:.3f} {c.team:5s} {rod.role:10s} man{c.man} ball=({bx:.3f},{by:.3f}) "
                  f"dx={bx - rod.x:+.3f} {c.speed_before:.2f}->{c.speed_after:.2f} "
                  f"vx={c.vx_after:+.2f} rot={rot:+.2f} w={vr:+.1f} tr={tr:+.3f} {plan}")
        for s in self.steps:
            if goal.time - frames <= s.time <= goal.time:
                est = ("({:+.3f},{:+.3f},{:+.2f},{:+.2f})".format(*s.ball)
                       if s.ball is not None else "-")
                rods = " ".join(f"{m[:5]:5s}{r:+.1f}{('/' + k[:2]) if k else ''}"
                                for m, r, k in zip(s.modes, s.rotations, s.kicks, strict=True))
                print(f"    {s.time:.3f} {'S' if s.seen else 'L'} {est} {rods}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("opponent")
    parser.add_argument("seed", type=int)
    parser.add_argument("matches", type=int)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--kinds", default="own_play", help="comma-separated GOAL_KINDS")
    parser.add_argument("--frames", type=float, default=0.0,
                        help="s of strategy steps to print before each goal")
    parser.add_argument("--randomise", action="store_true")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    totals = dict.fromkeys(GOAL_KINDS, 0)
    for seed in range(args.seed, args.seed + args.matches):
        audit = Audit(args.opponent, seed, args.duration, args.randomise)
        match, seen = audit.match, 0
        for _ in range(round(args.duration / match.params.frame_period)):
            match.step_frame()
            for goal in match.result.goals[seen:]:
                if goal.scorer == "human":
                    totals[goal.kind] += 1
                    if goal.kind in kinds:
                        audit.report(goal, args.frames)
            seen = len(match.result.goals)
    print("\ngoals against by kind:", totals)


if __name__ == "__main__":
    main()
