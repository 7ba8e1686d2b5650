"""Simulator speed: headless physics as a multiple of real time, and renderer frames/s.

Measured in one run, on one core (OpenCV limited to one thread), as CPU time of this process
(`time.process_time`), so a busy machine slows the wall clock but not the figure; wall-clock
figures are printed alongside.

    .venv/bin/python benchmarks/sim_speed.py [--seconds 60] [--json]

- physics (match load): the time spent in `World.step` during a club-vs-pro match, against
  the simulated time; again on a randomised table (latencies off the frame grid split steps);
- physics (stress): all 16 axes given new random targets every 0.1 s while a fast ball is
  served again and again: the worst case we know;
- match loop: the whole runner (physics, tracker model, both controllers) against the
  simulated time;
- renderer: 640x480 frames of that match per CPU second, with noise, blur and lighting.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import cv2
import numpy as np

from foosball.geometry import default_table
from foosball.recording.format import WorldState
from foosball.sim.match import Match
from foosball.sim.params import SimParams
from foosball.sim.physics import World
from foosball.sim.render import CameraConfig, Renderer


def clocks() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def physics_match_load(
    seconds: float, seed: int, randomise: bool = False
) -> tuple[dict, list[WorldState]]:
    match = Match("club", "pro", seed=seed, duration=seconds, randomise=randomise)
    world = match.world
    spent = [0.0, 0.0]
    step = world.step

    def timed(dt: float):  # type: ignore[no-untyped-def]
        cpu, wall = clocks()
        out = step(dt)
        spent[0] += time.process_time() - cpu
        spent[1] += time.perf_counter() - wall
        return out

    world.step = timed  # type: ignore[method-assign]
    states: list[WorldState] = []
    match.on_frame = states.append
    cpu, wall = clocks()
    result = match.run()
    loop_cpu, loop_wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "simulated_s": seconds,
        "physics_x_real_time_cpu": round(seconds / spent[0], 1),
        "physics_x_real_time_wall": round(seconds / spent[1], 1),
        "match_loop_x_real_time_cpu": round(seconds / loop_cpu, 1),
        "match_loop_x_real_time_wall": round(seconds / loop_wall, 1),
        "shots": len(result.shots),
        "goals": [result.goals_robot, result.goals_human],
    }, states


def physics_stress(seconds: float, seed: int) -> dict:
    world = World(default_table(), SimParams())
    rng = np.random.default_rng(seed)
    world.place_ball(0.0, 0.05, -8.0, 3.0)
    dt = 0.005
    contacts = 0
    cpu, wall = clocks()
    for k in range(round(seconds / dt)):
        if k % 20 == 0:
            for i, rod in enumerate(world.rods):
                world.command_rod(
                    i,
                    float(rng.uniform(rod.travel_min, rod.travel_max)),
                    float(rng.uniform(-1.5, 1.5)),
                )
        contacts += len(world.step(dt))
        b = world.ball
        if not b.in_play or math.hypot(b.vx, b.vy) < 0.3:
            world.place_ball(
                0.0,
                float(rng.uniform(-0.3, 0.3)),
                float(rng.uniform(-15, 15)),
                float(rng.uniform(-5, 5)),
            )
    spent_cpu, spent_wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "simulated_s": seconds,
        "x_real_time_cpu": round(seconds / spent_cpu, 1),
        "x_real_time_wall": round(seconds / spent_wall, 1),
        "contacts": contacts,
    }


def renderer_fps(states: list[WorldState], frames: int) -> dict:
    renderer = Renderer(default_table(), CameraConfig(), seed=0)
    chosen = states[:: max(1, len(states) // frames)][:frames]
    cpu, wall = clocks()
    for s in chosen:
        renderer.render(s)
    spent_cpu, spent_wall = time.process_time() - cpu, time.perf_counter() - wall
    return {
        "frames": len(chosen),
        "resolution": [renderer.camera.width, renderer.camera.height],
        "fps_cpu": round(len(chosen) / spent_cpu, 1),
        "fps_wall": round(len(chosen) / spent_wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="simulated seconds")
    parser.add_argument("--frames", type=int, default=2000, help="frames to render")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    match_figures, states = physics_match_load(args.seconds, args.seed)
    randomised, _ = physics_match_load(args.seconds, args.seed, randomise=True)
    report = {
        "physics_match_load": match_figures,
        "physics_match_load_randomised": randomised,
        "physics_stress": physics_stress(args.seconds, args.seed),
        "renderer": renderer_fps(states, args.frames),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    m, s, r = report["physics_match_load"], report["physics_stress"], report["renderer"]
    print(
        f"physics, match load : {m['physics_x_real_time_cpu']}x real time (CPU), "
        f"{m['physics_x_real_time_wall']}x (wall)"
    )
    print(
        f"physics, stress     : {s['x_real_time_cpu']}x real time (CPU), "
        f"{s['x_real_time_wall']}x (wall)"
    )
    print(
        f"match loop          : {m['match_loop_x_real_time_cpu']}x real time (CPU), "
        f"{m['match_loop_x_real_time_wall']}x (wall)"
    )
    print(f"renderer 640x480    : {r['fps_cpu']} frames/s (CPU), {r['fps_wall']} (wall)")


if __name__ == "__main__":
    main()
