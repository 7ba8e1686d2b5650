"""`foosball report FILE... -o report.html`: a recorded match as one self-contained HTML page.

The plots are drawn with matplotlib (the `report` extra; a laptop tool, the board only
records) from `analysis.match`, embedded in the page as PNG data and also written one file
each into the plots directory, so each can be looked at or linked on its own.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from foosball.analysis.match import MatchAnalysis
from foosball.geometry import Table, default_table
from foosball.wire.catalogue import BallStatus

ROBOT, HUMAN, NEUTRAL = "#1e88e5", "#e53935", "#616161"
DPI = 100


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only, never a window
    import matplotlib.pyplot as plt

    return plt


def _field(ax: Any, table: Table) -> None:
    f = table.field
    ax.add_patch(_plt_rect((-f.half_length, -f.half_width), f.length, f.width))
    for sign in (-1, 1):
        ax.plot([sign * f.half_length] * 2, [-f.goal_width / 2, f.goal_width / 2],
                color="white", linewidth=4)
    for rod in table.rods:
        ax.axvline(rod.x, color=ROBOT if rod.team == "robot" else HUMAN, linewidth=0.8,
                   alpha=0.7)
    ax.set_xlim(-f.half_length - 0.02, f.half_length + 0.02)
    ax.set_ylim(-f.half_width - 0.02, f.half_width + 0.02)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m): robot's goal left, human's goal right")
    ax.set_ylabel("y (m)")


def _plt_rect(xy: tuple[float, float], w: float, h: float) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle(xy, w, h, fill=False, edgecolor="black", linewidth=1.5)


def heatmap(plt: Any, a: MatchAnalysis, table: Table) -> Any:
    fig, ax = plt.subplots(figsize=(8, 4.6))
    seen = a.ball["status"] != BallStatus.LOST
    f = table.field
    counts, xe, ye = np.histogram2d(a.ball["x"][seen], a.ball["y"][seen], bins=(60, 34),
                                    range=[[-f.half_length, f.half_length],
                                           [-f.half_width, f.half_width]])
    share = counts.T / max(1, seen.sum()) * 100
    image = ax.pcolormesh(xe, ye, np.ma.masked_equal(share, 0), cmap="inferno_r")
    fig.colorbar(image, ax=ax, label="% of tracked frames")
    _field(ax, table)
    ax.set_title(f"Where the ball was ({int(seen.sum())} tracked ball states)")
    return fig


def shot_speeds(plt: Any, a: MatchAnalysis, table: Table) -> Any:
    fig, ax = plt.subplots(figsize=(7, 4))
    bins = np.arange(2.0, max([8.0] + [e.value + 0.5 for e in a.of("shot")]), 0.5)
    for team, colour in (("robot", ROBOT), ("human", HUMAN)):
        speeds = [e.value for e in a.of("shot", team)]
        ax.hist(speeds, bins=bins, alpha=0.6, color=colour,
                label=f"{team}: {len(speeds)} shots"
                + (f", median {np.median(speeds):.1f} m/s" if speeds else ""))
    ax.set_xlabel("ball speed just after the shot (m/s)")
    ax.set_ylabel("shots")
    ax.set_title("Shot speeds")
    ax.legend()
    return fig


TIMELINE_ROWS = (("goal", "robot"), ("goal", "human"), ("save", "robot"), ("save", "human"),
                 ("foul", "robot"), ("foul", "human"), ("fault", ""))


def timeline(plt: Any, a: MatchAnalysis, table: Table) -> Any:
    fig, ax = plt.subplots(figsize=(10, 3.6))
    labels = []
    for row, (kind, team) in enumerate(TIMELINE_ROWS):
        events = a.of(kind, team if team else None)
        colour = {"robot": ROBOT, "human": HUMAN}.get(team, NEUTRAL)
        marker = {"goal": "*", "save": "s", "foul": "x", "fault": "v"}[kind]
        ax.scatter([e.t for e in events], [row] * len(events), marker=marker, s=90,
                   color=colour, zorder=3)
        labels.append(f"{kind} {team}".strip() + f" ({len(events)})")
    ax.set_yticks(range(len(TIMELINE_ROWS)), labels)
    ax.set_xlim(0, max(1.0, a.duration_s))
    ax.set_ylim(-0.6, len(TIMELINE_ROWS) - 0.4)
    ax.invert_yaxis()
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel("match time (s from the first record)")
    ax.set_title("Goals, saves, fouls and faults")
    fig.tight_layout()
    return fig


def rod_actions(plt: Any, a: MatchAnalysis, table: Table) -> Any:
    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(a.rod_actions)
    kinds = ("kicks", "lifts", "shifts")
    width = 0.27
    for k, kind in enumerate(kinds):
        values = [a.rod_actions[n][kind] for n in names]
        bars = ax.bar(np.arange(len(names)) + (k - 1) * width, values, width, label=kind)
        ax.bar_label(bars, fontsize=8)
    ax.set_xticks(range(len(names)), [n.replace("robot_", "") for n in names])
    ax.set_ylabel("commands")
    ax.set_title("The robot's commanded actions per rod (RodCommand)")
    ax.legend()
    return fig


def possession(plt: Any, a: MatchAnalysis, table: Table) -> Any:
    fig, ax = plt.subplots(figsize=(8, 4))
    total = sum(a.possession_s.values()) or 1.0
    rods = sorted(table.rods, key=lambda r: r.x)
    names = [r.name for r in rods] + ["none"]
    shares = [a.possession_s.get(n, 0.0) / total * 100 for n in names]
    colours = [ROBOT if r.team == "robot" else HUMAN for r in rods] + [NEUTRAL]
    bars = ax.bar(range(len(names)), shares, color=colours)
    ax.bar_label(bars, fmt="%.0f%%", fontsize=8)
    ax.set_xticks(range(len(names)), [n.replace("_", "\n") for n in names], fontsize=8)
    ax.set_ylabel("% of tracked playing time")
    ax.set_title("Possession: the rod whose men could reach the ball (robot's goal left)")
    return fig


def latency(plt: Any, a: MatchAnalysis, table: Table) -> Any:
    windows = a.setpoint_ms
    fig, axes = plt.subplots(1, 2 if len(windows) else 1, figsize=(11 if len(windows) else 7, 4),
                             squeeze=False)
    ax = axes[0][0]
    lat = a.latency_ms
    if lat.size:
        top = float(np.percentile(lat, 99.5))
        ax.hist(np.clip(lat, None, top), bins=60, color=ROBOT)
        for q, style in ((50, "-"), (99, "--")):
            value = float(np.percentile(lat, q))
            ax.axvline(value, color="black", linestyle=style, label=f"p{q} {value:.1f} ms")
        ax.legend()
    where = ("the simulator's modelled perception delay" if a.source == "simulator"
             else "capture -> RodCommand recorded on the strategy board")
    ax.set_title(f"Frame -> setpoint ({where})", fontsize=10)
    ax.set_xlabel("ms")
    ax.set_ylabel("RodCommands")
    if len(windows):
        right = axes[0][1]
        right.plot(windows[:, 0], windows[:, 1], color=ROBOT, label="p50")
        right.plot(windows[:, 0], windows[:, 2], color=HUMAN, label="p99")
        right.set_title("capture -> setpoint in the EtherCAT frame (the motor driver, per "
                        "200 cycles)", fontsize=10)
        right.set_xlabel("match time (s)")
        right.set_ylabel("ms")
        right.set_ylim(bottom=0)
        right.legend()
    fig.tight_layout()
    return fig


def lost_rate(plt: Any, a: MatchAnalysis, table: Table) -> Any:
    fig, ax = plt.subplots(figsize=(8, 3.4))
    seconds, share = a.lost_per_s
    ax.plot(seconds, share * 100, color=ROBOT, linewidth=1)
    for n, goal in enumerate(a.of("goal")):  # a ball in the goal is LOST until the serve
        ax.axvline(goal.t, color=NEUTRAL, linestyle=":", linewidth=1,
                   label="a goal" if n == 0 else None)
    if a.of("goal"):
        ax.legend(loc="upper right")
    ax.set_ylim(0, 100)
    ax.set_xlabel("match time (s)")
    ax.set_ylabel("% of ball states LOST")
    ax.set_title(f"Tracker: ball LOST while playing, per second (all: {a.lost_share:.1%}; "
                 f"frames never reported: {a.missing_frames})", fontsize=10)
    ax.grid(alpha=0.3)
    return fig


PLOTS: tuple[tuple[str, str, Callable[[Any, MatchAnalysis, Table], Any]], ...] = (
    ("heatmap", "Ball heatmap", heatmap),
    ("shot_speeds", "Shot speeds", shot_speeds),
    ("timeline", "Timeline", timeline),
    ("rod_actions", "Actions per rod", rod_actions),
    ("possession", "Possession per rod", possession),
    ("latency", "Frame -> setpoint latency", latency),
    ("lost_rate", "Tracker lost-frame rate", lost_rate),
)


def render_plots(a: MatchAnalysis, table: Table | None) -> dict[str, bytes]:
    """Every plot as PNG bytes, by name."""
    plt = _pyplot()
    table = table or default_table()
    out = {}
    for name, _, draw in PLOTS:
        fig = draw(plt, a, table)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
        plt.close(fig)
        out[name] = buffer.getvalue()
    return out


def write_report(a: MatchAnalysis, table: Table | None, files: list[str], output: Path,
                 plots_dir: Path | None) -> dict[str, bytes]:
    plots = render_plots(a, table)
    if plots_dir is not None:
        plots_dir.mkdir(parents=True, exist_ok=True)
        for name, png in plots.items():
            (plots_dir / f"{name}.png").write_bytes(png)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(page(a, files, plots, plots_dir, output))
    return plots


def page(a: MatchAnalysis, files: list[str], plots: dict[str, bytes],
         plots_dir: Path | None, output: Path) -> str:
    summary = a.summary()
    esc = html.escape
    rows = [("recorded by", a.source + (" (not the rig: a simulated match)"
                                        if a.source == "simulator" else "")),
            ("files", ", ".join(files)),
            ("duration", f"{a.duration_s:.1f} s"),
            ("score", f"robot {a.score[0]} : {a.score[1]} human")]
    for team in ("robot", "human"):
        t = summary["teams"][team]
        rows.append((team, f"{t['goals']} goals, {t['shots']} shots ({t['on_target']} on "
                           f"target), {t['saves']} saves, {t['fouls']} fouls"))
    for team, kinds in a.goals_against_by_kind.items():
        rows.append((f"{team} conceded (estimate)",
                     ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in kinds.items())
                     + " (the last touch from the tracked ball: foosball.analysis.match)"))
    rows.append(("faults", str(summary["faults"])))
    lat = summary["latency_ms"]
    if lat:
        rows.append(("frame -> RodCommand", f"p50 {lat['p50']} ms, p95 {lat['p95']} ms, "
                                            f"p99 {lat['p99']} ms, max {lat['max']} ms "
                                            f"({lat['n']} commands, as recorded)"))
    setpoint = summary["setpoint_ms"]
    if setpoint:
        rows.append(("frame -> setpoint on EtherCAT", f"p50 {setpoint['p50_median']} ms, p99 "
                     f"{setpoint['p99_median']} ms (medians of {setpoint['windows']} motor "
                     f"driver windows), worst window p99 {setpoint['p99_worst']} ms"))
    rows.append(("tracker", f"{a.lost_share:.2%} of ball states LOST while playing; "
                            f"{a.missing_frames} frame numbers never reported"))
    rows.append(("messages", ", ".join(f"{k} {v}" for k, v in a.counts.items())))
    table_html = "\n".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    warnings = "".join(f"<li>{esc(w)}</li>" for w in a.warnings) or "<li>none</li>"
    figures = []
    for name, title, _ in PLOTS:
        data = base64.b64encode(plots[name]).decode()
        link = ""
        if plots_dir is not None:
            rel = _relative(plots_dir / f"{name}.png", output.parent)
            link = f' <a href="{esc(rel)}">(PNG)</a>'
        figures.append(f'<figure id="{name}"><figcaption>{esc(title)}{link}</figcaption>'
                       f'<img alt="{esc(title)}" src="data:image/png;base64,{data}"></figure>')
    events = "\n".join(
        f"<tr><td>{e.t:.2f}</td><td>{esc(e.kind)}</td><td>{esc(e.team)}</td>"
        f"<td>{esc(e.text)}{f' {e.value:.1f} m/s' if e.kind == 'shot' else ''}"
        f"{' (on target)' if e.on_target else ''}</td></tr>"
        for e in a.events if e.kind != "shot" or e.on_target)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Match report</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; max-width: 1100px; margin: 1em auto;
  padding: 0 1em; color: #222; }}
th {{ text-align: left; padding-right: 1em; vertical-align: top; }}
figure {{ margin: 1.5em 0; }} figcaption {{ font-weight: bold; margin-bottom: 0.3em; }}
img {{ max-width: 100%; }} table.events td {{ padding: 0 0.8em 0 0; }}
.note {{ color: #555; }}
</style></head><body>
<h1>Match report</h1>
<table>{table_html}</table>
<p class="note">How each figure is made: <code>foosball.analysis.match</code> (what the
strategy board hears only: goals from the game panel's GameState, shots, saves and fouls
from the tracked ball and the rods' status, the latency from RodCommand).</p>
<h2>Warnings while reading</h2><ul>{warnings}</ul>
{"".join(figures)}
<h2>Events (goals, on-target shots, saves, fouls, faults)</h2>
<table class="events"><tr><th>t (s)</th><th>what</th><th>team</th><th></th></tr>
{events}</table>
<h2>Summary (JSON)</h2><pre>{esc(json.dumps(summary, indent=1))}</pre>
</body></html>
"""


def _relative(path: Path, start: Path) -> str:
    import os

    return os.path.relpath(path.resolve(), start.resolve())
