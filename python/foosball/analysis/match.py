# Over 500 lines: one short pure function per kind of match event (goals, touches, shots,
# fouls, faults, latency) over the same arrays, read top to bottom from `analyse`.
"""What happened in a recorded match, from its messages alone (pure: no plotting, no files).

Everything here is what the strategy board hears, so a match recorded on the rig and one
recorded by the simulator are analysed alike; the simulator's true world states are not
used. Times are seconds from the recording's first record.

- Goals: the game panel's GameState score going up.
- Touches: the tracked ball's velocity changing by >= TOUCH_DV within TOUCH_WINDOW_S, away
  from the side walls (a bounce off a wall is no touch). A touch is the robot's or the
  human's by the nearest rod whose men can reach it (sim.rules' reach band), else nobody's.
- Shots and saves: a simulator's recording carries the simulator's own accounting (from the
  true contacts, sim.match), and those are the report's. Otherwise they are estimates, and
  labelled so (SHOTS_ESTIMATED): a touch after which the ball moves at >= SHOT_MIN_SPEED
  towards the other goal is a shot; on target when its straight path, folded at the side
  walls, ends in the goal mouth (as sim.match judges it). A save: an on-target shot that a
  touch of the defending team meets within 2 s and that does not end in a goal within 2 s
  (sim.match's SAVE_WINDOW_S). The camera misses touches hidden by the men and shots faster
  than its frames show, so a goal need not follow a shot seen.
- How each goal came about, an estimate (sim.match's GOAL_KINDS judged from the tracked ball
  alone): the last touch before the goal and its rod (the reach band holding the ball). The
  scorer's: clean. The conceding team's on a shot of the scorer that it did not speed up (the
  tracked speed after at most DEFLECT_MARGIN above the speed before; a shot touched more than
  once by the conceding team stays one while each touch follows the last within
  DEFLECTION_RUN_S and does not speed it up, as sim.match): deflected; else sending
  the ball towards its own goal: own play; else deflected. No touch since the last goal:
  untouched. The tracker cannot tell which of two nearby rods touched the ball, nor see a
  touch under lifted feet, so the simulator's figures (from the physics' contacts) are the
  reference; this one is for matches played on the rig.
- Fouls: the possession limits (strategy.possession: 10 s on the 5-man rod, 15 s elsewhere,
  goalkeeper and defence one zone, a moving ball counting too) from the ball's position;
  spinning: a robot rod that touched the ball in a run of more than a full turn one way
  (RodStatus; the human's rotation is measured only within half a turn).
- Faults: Alarms that latch (one per source and code within a second) and GameState FAULT.
- Per rod: the robot's commanded actions (RodCommand): kicks (the rotation target stepping
  forward by >= KICK_STEP_RAD), lifts (stepping back as much) and shifts (the translation
  target moving >= SHIFT_M); possession: the share of tracked time the ball spent in each
  rod's reach band.
- Latency: RodCommand's time of recording minus the capture time of the frame it answers:
  on the board, camera -> strategy -> recorder (the LAN twice and the recorder's wake-up
  included); in the simulator, its modelled perception delay. And where the motor driver
  measures it (EtherCatStatus, per window of 200 cycles), frame capture -> the setpoint
  answering it leaving in an EtherCAT frame: its p50 and p99 per window.
- Tracker: the share of ball states that are LOST while PLAYING, per second, and frame
  numbers missing (frames the tracker never reported).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from foosball.geometry import Table, default_table
from foosball.recording.format import Recording
from foosball.strategy.possession import limit_of, zone_of
from foosball.wire.catalogue import (
    Alarm,
    BallState,
    BallStatus,
    EtherCatStatus,
    GameState,
    RodCommand,
    RodStatus,
    SafetyState,
)

TOUCH_DV = 1.0  # m/s
TOUCH_WINDOW_S = 0.03
TOUCH_GAP_S = 0.1  # one touch per this much time
SHOT_MIN_SPEED = 2.0  # m/s, as sim.match
KICK_STEP_RAD = 0.5
SHIFT_M = 0.01
FAULT_REPEAT_S = 1.0
SHOTS_COUNTED = "the simulator's own accounting (its true contacts), recorded with the match"
SHOTS_ESTIMATED = (f"estimated from the tracked ball: a velocity change of at least "
                   f"{TOUCH_DV:g} m/s within {TOUCH_WINDOW_S * 1e3:.0f} ms within a rod's "
                   f"reach, then at least {SHOT_MIN_SPEED:g} m/s towards the other goal; "
                   f"touches hidden by the men are missed")
FULL_TURN = 2 * math.pi
REVERSAL_RAD = 0.05  # as sim.rules: a turn back smaller than this is jitter
STRIKE_SPAN_S = 0.03
SAVE_WINDOW_S = 2.0  # s, as sim.match
DEFLECT_MARGIN = 0.2  # m/s, as sim.match
DEFLECTION_RUN_S = 0.15  # s, as sim.match
GOAL_KINDS = ("clean", "deflected", "own_play", "untouched")  # as sim.match


@dataclass(frozen=True)
class Event:
    t: float
    kind: str  # goal | shot | save | foul | fault
    team: str  # robot | human | "" (faults)
    text: str = ""
    value: float = 0.0  # a shot's speed (m/s)
    on_target: bool = False


@dataclass
class MatchAnalysis:
    source: str
    duration_s: float
    counts: dict[str, int]
    ball: dict[str, np.ndarray]  # t, x, y, vx, vy, status, frame, capture_s
    events: list[Event]
    rod_actions: dict[str, dict[str, int]]  # robot rod name -> kicks, lifts, shifts
    possession_s: dict[str, float]  # rod name (both teams) -> seconds, "none" too
    latency_ms: np.ndarray
    setpoint_ms: np.ndarray  # per motor-driver window: t (s), p50, p99 (ms); may be empty
    lost_per_s: tuple[np.ndarray, np.ndarray]  # second, share LOST
    lost_share: float
    missing_frames: int
    score: tuple[int, int]
    warnings: list[str] = field(default_factory=list)
    shots_from: str = SHOTS_ESTIMATED  # how the shots and saves were had
    # per conceding team, the goals by kind (an estimate from the tracked ball: _goal_kinds)
    goals_against_by_kind: dict[str, dict[str, int]] = field(default_factory=dict)

    def of(self, kind: str, team: str | None = None) -> list[Event]:
        return [e for e in self.events if e.kind == kind and (team is None or e.team == team)]

    def summary(self) -> dict[str, Any]:
        lat = self.latency_ms
        shots = {team: {"shots": len(self.of("shot", team)),
                        "on_target": sum(e.on_target for e in self.of("shot", team)),
                        "saves": len(self.of("save", team)),
                        "goals": len(self.of("goal", team)),
                        "fouls": len(self.of("foul", team))} for team in ("robot", "human")}
        return {
            "source": self.source, "duration_s": round(self.duration_s, 1),
            "score": {"robot": self.score[0], "human": self.score[1]},
            "teams": shots, "shots_from": self.shots_from,
            "faults": len(self.of("fault")), "messages": self.counts,
            "latency_ms": ({"p50": _pct(lat, 50), "p95": _pct(lat, 95), "p99": _pct(lat, 99),
                            "max": round(float(lat.max()), 2), "n": int(lat.size)}
                           if lat.size else {}),
            "setpoint_ms": ({"windows": len(self.setpoint_ms),
                             "p50_median": round(float(np.median(self.setpoint_ms[:, 1])), 2),
                             "p99_median": round(float(np.median(self.setpoint_ms[:, 2])), 2),
                             "p99_worst": round(float(self.setpoint_ms[:, 2].max()), 2)}
                            if len(self.setpoint_ms) else {}),
            "goals_against_by_kind_estimate": self.goals_against_by_kind,
            "tracker": {"lost_share_playing": round(self.lost_share, 4),
                        "missing_frames": self.missing_frames},
            "warnings": len(self.warnings),
        }


def _pct(values: np.ndarray, q: float) -> float:
    return round(float(np.percentile(values, q)), 2)


def analyse(recording: Recording) -> MatchAnalysis:
    table = recording.table or default_table()
    t0 = recording.messages[0][0] if recording.messages else 0
    counts = Counter(type(m).__name__ for _, m in recording.messages)
    end = (recording.messages[-1][0] - t0) * 1e-9 if recording.messages else 0.0
    playing = _playing_intervals(recording, t0, end)
    ball = _ball_arrays(recording.of_type(BallState), t0)
    in_play = _inside(ball["t"], playing)
    events: list[Event] = []
    goals = _goals(recording, t0)
    touches = _touches(ball, table)
    if recording.result is not None:
        shots_and_saves = _counted_shots_and_saves(recording.result, t0, table)
    else:
        shots_and_saves = _shots_and_saves(touches, ball, table, goals)
    goals, by_kind = _goal_kinds(goals, touches, ball, table,
                                 [e for e in shots_and_saves if e.kind == "shot"])
    events += goals + shots_and_saves
    events += _possession_fouls(ball, in_play, table)
    # when a touch happened, on the recording's clock: its frame's capture, less the window
    # in which the velocity changed (the rod's angle then, not when the tracker had seen it)
    touch_t = ball["capture_s"] - t0 * 1e-9 - TOUCH_WINDOW_S
    events += _spinning_fouls(recording, t0, table, touches, touch_t)
    events += _faults(recording, t0)
    events.sort(key=lambda e: e.t)
    lost = ball["status"] == BallStatus.LOST
    seconds = np.floor(ball["t"][in_play]).astype(int)
    per_s = (np.array([]), np.array([]))
    if seconds.size:
        totals = np.bincount(seconds)
        lost_counts = np.bincount(seconds, weights=lost[in_play].astype(float),
                                  minlength=totals.size)
        shown = totals > 0
        per_s = (np.nonzero(shown)[0].astype(float), lost_counts[shown] / totals[shown])
    frames = np.unique(ball["frame"])
    gaps = np.diff(frames)
    score = (0, 0)
    for _, m in recording.of_type(GameState):
        score = (m.score_robot, m.score_human)
    return MatchAnalysis(
        source=recording.source, duration_s=end, counts=dict(sorted(counts.items())),
        ball=ball, events=events, rod_actions=_rod_actions(recording, table),
        possession_s=_possession(ball, in_play, table), latency_ms=_latency(recording),
        setpoint_ms=_setpoint(recording, t0),
        lost_per_s=per_s, lost_share=float(lost[in_play].mean()) if in_play.any() else 0.0,
        missing_frames=int(np.sum(gaps[gaps > 1] - 1)) if gaps.size else 0, score=score,
        warnings=list(recording.warnings), goals_against_by_kind=by_kind,
        shots_from=SHOTS_COUNTED if recording.result is not None else SHOTS_ESTIMATED)


# -- the ball -------------------------------------------------------------------------------
def _ball_arrays(states: list[tuple[int, BallState]], t0: int) -> dict[str, np.ndarray]:
    n = len(states)
    out = {name: np.empty(n) for name in ("t", "x", "y", "vx", "vy", "capture_s")}
    out["status"] = np.empty(n, dtype=int)
    out["frame"] = np.empty(n, dtype=np.int64)
    for i, (t, b) in enumerate(states):
        out["t"][i] = (t - t0) * 1e-9
        out["x"][i], out["y"][i], out["vx"][i], out["vy"][i] = b.x, b.y, b.vx, b.vy
        out["capture_s"][i] = b.capture_time * 1e-9
        out["status"][i] = int(b.status)
        out["frame"][i] = b.frame
    return out


def _playing_intervals(recording: Recording, t0: int, end: float) -> list[tuple[float, float]]:
    """When the game was PLAYING; the whole recording when no GameState says otherwise."""
    states = recording.of_type(GameState)
    if not states:
        return [(0.0, end)]
    out, since = [], None
    for t, m in states:
        s = (t - t0) * 1e-9
        if m.state == SafetyState.PLAYING and since is None:
            since = s
        elif m.state != SafetyState.PLAYING and since is not None:
            out.append((since, s))
            since = None
    if since is not None:
        out.append((since, end))
    return out


def _inside(t: np.ndarray, intervals: list[tuple[float, float]]) -> np.ndarray:
    mask = np.zeros(t.shape, dtype=bool)
    for a, b in intervals:
        mask |= (t >= a) & (t <= b)
    return mask


def _holder(table: Table, x: float) -> Any:
    for rod in table.rods:
        if abs(x - rod.x) < table.man.contact_reach:
            return rod
    return None


def _touches(ball: dict[str, np.ndarray], table: Table) -> list[tuple[int, Any]]:
    """(index of the ball state after the touch, the rod that can reach it or None)."""
    tracked = np.nonzero(ball["status"] != BallStatus.LOST)[0]
    wall = table.field.half_width - 2 * table.ball.radius
    end_wall = table.field.half_length - 2 * table.ball.radius
    out: list[tuple[int, Any]] = []
    last_t = -math.inf
    t, vx, vy = ball["t"], ball["vx"], ball["vy"]
    j = 0  # the earliest tracked state within the window before i
    for k, i in enumerate(tracked):
        while t[tracked[j]] < t[i] - TOUCH_WINDOW_S:
            j += 1
        if j == k or t[i] - last_t < TOUCH_GAP_S:
            continue
        before = tracked[j]
        if math.hypot(vx[i] - vx[before], vy[i] - vy[before]) < TOUCH_DV:
            continue
        if abs(ball["y"][i]) > wall or abs(ball["x"][i]) > end_wall:
            continue  # a bounce off a wall
        out.append((int(i), _holder(table, float(ball["x"][i]))))
        last_t = t[i]
    return out


def _on_target(table: Table, x: float, y: float, vx: float, vy: float, forward: float) -> bool:
    f, r = table.field, table.ball.radius
    if vx * forward <= 0:
        return False
    goal_x = forward * f.half_length
    y_end = y + vy * (goal_x - x) / vx
    wall = f.half_width - r
    period = 4 * wall
    folded = (y_end + wall) % period
    folded = (folded if folded <= 2 * wall else period - folded) - wall
    return abs(folded) < f.goal_width / 2 - r


def _shots_and_saves(touches: list[tuple[int, Any]], ball: dict[str, np.ndarray],
                     table: Table, goals: list[Event]) -> list[Event]:
    out: list[Event] = []
    goal_times = {team: [g.t for g in goals if g.team == team] for team in ("robot", "human")}
    shots: list[tuple[int, Event]] = []
    for n, (i, rod) in enumerate(touches):
        if rod is None:
            continue
        team = rod.team
        forward = 1.0 if team == "robot" else -1.0
        x, y, vx, vy = (float(ball[k][i]) for k in ("x", "y", "vx", "vy"))
        speed = math.hypot(vx, vy)
        if speed < SHOT_MIN_SPEED or vx * forward <= 0:
            continue
        shot = Event(float(ball["t"][i]), "shot", team, f"{team} {_role(table, x)}",
                     round(speed, 2), _on_target(table, x, y, vx, vy, forward))
        shots.append((n, shot))
        out.append(shot)
    for n, shot in shots:
        if not shot.on_target:
            continue
        defender = "human" if shot.team == "robot" else "robot"
        if n + 1 >= len(touches):
            continue
        i, rod = touches[n + 1]
        team = rod.team if rod is not None else ""
        t_touch = float(ball["t"][i])
        scored = any(shot.t < g <= shot.t + SAVE_WINDOW_S for g in goal_times[shot.team])
        if team == defender and not scored and t_touch - shot.t < SAVE_WINDOW_S:
            out.append(Event(t_touch, "save", defender,
                             f"{defender} {_role(table, float(ball['x'][i]))} saved a "
                             f"{shot.value:.1f} m/s shot"))
    return out


def _counted_shots_and_saves(result: dict[str, Any], t0: int, table: Table) -> list[Event]:
    """The simulator's shots, and a save by the defender for each it counted saved (its
    save counts are of exactly these)."""
    out: list[Event] = []
    for shot in result["shots"]:
        t = (int(shot["time_ns"]) - t0) * 1e-9
        team, speed = str(shot["team"]), float(shot["speed"])
        out.append(Event(t, "shot", team, f"{team} {shot['rod']}", round(speed, 2),
                         bool(shot["on_target"])))
        if shot["outcome"] == "saved":
            defender = "human" if team == "robot" else "robot"
            out.append(Event(t, "save", defender, f"{defender} saved a {speed:.1f} m/s shot"))
    return out


def _goal_kinds(goals: list[Event], touches: list[tuple[int, Any]], ball: dict[str, np.ndarray],
                table: Table, shots: list[Event]
                ) -> tuple[list[Event], dict[str, dict[str, int]]]:
    """Each goal's kind (module docstring), in its text, and the counts per conceding team."""
    counts = {team: dict.fromkeys(GOAL_KINDS, 0) for team in ("robot", "human")}
    t, vx, vy = ball["t"], ball["vx"], ball["vy"]
    out, since = [], -math.inf
    for g in goals:
        conceding = "human" if g.team == "robot" else "robot"
        # the last touch by a rod between the previous goal and this one
        last = [(i, rod) for i, rod in touches if rod is not None and since < t[i] < g.t]
        kind = "untouched"
        if last:
            i, rod = last[-1]
            speed_before, speed_after = _speeds(t, vx, vy, i)
            on_shot = any(s.team == g.team and s.t < t[i] <= s.t + SAVE_WINDOW_S
                          and _deflection_run([(j, r) for j, r in last if s.t < t[j] < t[i]],
                                              i, conceding, t, vx, vy)
                          for s in shots)
            own_goal_direction = -1.0 if conceding == "robot" else 1.0
            if rod.team == g.team:
                kind = "clean"
            elif on_shot and speed_after <= speed_before + DEFLECT_MARGIN:
                kind = "deflected"
            else:
                kind = "own_play" if vx[i] * own_goal_direction > 0 else "deflected"
        counts[conceding][kind] += 1
        out.append(replace(g, text=f"{g.text} ({kind.replace('_', ' ')}, estimated)"))
        since = g.t
    return out, counts


def _speeds(t: np.ndarray, vx: np.ndarray, vy: np.ndarray, i: int) -> tuple[float, float]:
    """The tracked ball's speed before and after the touch at sample `i`."""
    before = max(0, int(np.searchsorted(t, t[i] - TOUCH_WINDOW_S)) - 1)
    return math.hypot(vx[before], vy[before]), math.hypot(vx[i], vy[i])


def _deflection_run(between: list[tuple[int, Any]], i: int, team: str, t: np.ndarray,
                    vx: np.ndarray, vy: np.ndarray) -> bool:
    """Whether the touches (sample, rod) `between` a shot and the touch at `i` are none, or
    deflections of it by `team` (each slowing the ball, each within DEFLECTION_RUN_S of the
    next)."""
    if any(rod.team != team for _, rod in between):
        return False
    chain = [j for j, _ in between] + [i]
    for j, k in itertools.pairwise(chain):
        before, after = _speeds(t, vx, vy, j)
        if after > before + DEFLECT_MARGIN or t[k] - t[j] >= DEFLECTION_RUN_S:
            return False
    return True


def _role(table: Table, x: float) -> str:
    rod = _holder(table, x)
    return rod.role if rod is not None else "?"


# -- the game -------------------------------------------------------------------------------
def _goals(recording: Recording, t0: int) -> list[Event]:
    out = []
    last: tuple[int, int] | None = None
    for t, m in recording.of_type(GameState):
        score = (m.score_robot, m.score_human)
        if last is not None and score != last:
            for team, now, before in (("robot", score[0], last[0]), ("human", score[1], last[1])):
                if now > before:  # (a new match sets it back to 0:0: no goal)
                    out += [Event((t - t0) * 1e-9, "goal", team, f"{score[0]}:{score[1]}")] * (
                        now - before)
        last = score
    return out


def _possession_fouls(ball: dict[str, np.ndarray], in_play: np.ndarray,
                      table: Table) -> list[Event]:
    out = []
    holding: tuple[str, str] | None = None
    since = 0.0
    fouled = False
    tracked = (ball["status"] != BallStatus.LOST) & in_play
    for i in np.nonzero(tracked)[0]:
        t = float(ball["t"][i])
        rod = _holder(table, float(ball["x"][i]))
        if rod is None:
            continue  # between reach bands: the zone's count goes on (strategy.possession)
        key = (rod.team, zone_of(rod))
        if key != holding:
            holding, since, fouled = key, t, False
        elif not fouled and t - since > limit_of(key[1]):
            fouled = True
            out.append(Event(t, "foul", key[0], f"possession over {limit_of(key[1]):g} s "
                             f"({key[1]})"))
    return out


def _spinning_fouls(recording: Recording, t0: int, table: Table,
                    touches: list[tuple[int, Any]], touch_t: np.ndarray) -> list[Event]:
    """The simulator referee's rule on the robot's rods, from RodStatus and the touches: a
    run is a rotation one way (a turn back under REVERSAL_RAD is jitter); a foul is a strike
    more than a full turn after the run began, or the run going on more than a full turn
    past the strike. The strike's angle: a foot meets the ball hanging down, so of the rod's
    angles within STRIKE_SPAN_S of the touch, the one nearest feet-down (0 mod a turn)."""
    rods = table.robot_rods
    statuses = [((t - t0) * 1e-9, m) for t, m in recording.of_type(RodStatus)]
    times = np.array([s for s, _ in statuses])
    angles = {i: np.array([_rotation(m, i) for _, m in statuses]) for i in range(len(rods))}
    strikes: dict[int, list[tuple[float, float]]] = {i: [] for i in range(len(rods))}
    for k, rod in touches:
        if rod is None or rod not in rods or not times.size:
            continue
        i = rods.index(rod)
        lo, hi = np.searchsorted(times, [touch_t[k] - STRIKE_SPAN_S, touch_t[k] + STRIKE_SPAN_S])
        near = angles[i][lo:hi]
        near = near[~np.isnan(near)]
        if near.size:
            angle = float(near[np.argmin(np.abs(np.remainder(near + math.pi, FULL_TURN)
                                                - math.pi))])
            strikes[i].append((float(touch_t[k]) + STRIKE_SPAN_S, angle))
    out = []
    runs: dict[int, list[Any]] = {}  # rod -> [start, extreme, direction, struck_at]
    for s, m in statuses:
        for p in m.rods:
            i = int(p.rod)
            if i >= len(rods):
                continue
            run = runs.setdefault(i, [p.rotation, p.rotation, 0.0, None])
            moved = p.rotation - run[1]
            if run[2] == 0.0 and abs(moved) > REVERSAL_RAD:
                run[2] = math.copysign(1.0, moved)
            if run[2] and moved * run[2] > 0:
                run[1] = p.rotation
            elif run[2] and -moved * run[2] > REVERSAL_RAD:  # turned back: a new run
                run[:] = [run[1], p.rotation, -run[2], None]
            while strikes[i] and strikes[i][0][0] <= s:
                _, angle = strikes[i].pop(0)
                if run[3] is None:
                    run[3] = angle
                    if abs(angle - run[0]) > FULL_TURN:
                        out.append(_spin(s, rods[i], "struck more than a full turn into a "
                                                     "run"))
            if run[3] is not None and abs(run[1] - run[3]) > FULL_TURN:
                out.append(_spin(s, rods[i], "turned on more than a full turn past a strike"))
                run[3] = None  # one foul per strike
                run[0] = run[1]
    return out


def _rotation(status: RodStatus, rod: int) -> float:
    for p in status.rods:
        if int(p.rod) == rod:
            return p.rotation
    return math.nan


def _spin(t: float, rod: Any, what: str) -> Event:
    return Event(t, "foul", rod.team, f"spinning: {rod.role} {what}")


def _faults(recording: Recording, t0: int) -> list[Event]:
    out = []
    seen: dict[tuple[int, int], float] = {}
    was_fault = False
    for t, m in recording.messages:
        s = (t - t0) * 1e-9
        if isinstance(m, Alarm) and m.latched:
            key = (int(m.source), int(m.code))
            if s - seen.get(key, -math.inf) >= FAULT_REPEAT_S:
                out.append(Event(s, "fault", "", f"{m.source.name.lower()} {m.code.name}: "
                                 f"{m.text}"[:120]))
            seen[key] = s
        elif isinstance(m, GameState):
            is_fault = m.state == SafetyState.FAULT
            if is_fault and not was_fault:
                out.append(Event(s, "fault", "", f"game FAULT: {m.alarm_text}"[:120]))
            was_fault = is_fault
    return out


# -- the rods -------------------------------------------------------------------------------
def _rod_actions(recording: Recording, table: Table) -> dict[str, dict[str, int]]:
    rods = table.robot_rods
    counts = {rod.name: {"kicks": 0, "lifts": 0, "shifts": 0} for rod in rods}
    last: dict[int, tuple[float, float]] = {}
    for _, m in recording.of_type(RodCommand):
        for target in m.rods:
            i = int(target.rod)
            if i >= len(rods):
                continue
            before = last.get(i)
            last[i] = (target.translation, target.rotation)
            if before is None:
                continue
            step = target.rotation - before[1]
            name = rods[i].name
            if step >= KICK_STEP_RAD:
                counts[name]["kicks"] += 1
            elif step <= -KICK_STEP_RAD:
                counts[name]["lifts"] += 1
            if abs(target.translation - before[0]) >= SHIFT_M:
                counts[name]["shifts"] += 1
    return counts


def _possession(ball: dict[str, np.ndarray], in_play: np.ndarray,
                table: Table) -> dict[str, float]:
    out = {rod.name: 0.0 for rod in table.rods}
    out["none"] = 0.0
    tracked = np.nonzero((ball["status"] != BallStatus.LOST) & in_play)[0]
    t = ball["t"]
    for a, b in itertools.pairwise(tracked):
        dt = min(float(t[b] - t[a]), 0.1)  # a gap in the states counts no longer than this
        rod = _holder(table, float(ball["x"][a]))
        out[rod.name if rod is not None else "none"] += dt
    return out


def _latency(recording: Recording) -> np.ndarray:
    values = [(t - m.ball_capture_time) * 1e-6 for t, m in recording.of_type(RodCommand)
              if m.ball_capture_time > 0]
    return np.asarray(values, dtype=float)


def _setpoint(recording: Recording, t0: int) -> np.ndarray:
    """The motor driver's windows (each repeated in every status until the next)."""
    rows: list[tuple[float, float, float]] = []
    last = None
    for t, m in recording.of_type(EtherCatStatus):
        window = (m.capture_to_setpoint_p50_s, m.capture_to_setpoint_p99_s)
        if window[0] > 0 and window != last:
            rows.append(((t - t0) * 1e-9, window[0] * 1e3, window[1] * 1e3))
        last = window
    return np.asarray(rows, dtype=float).reshape(-1, 3)
