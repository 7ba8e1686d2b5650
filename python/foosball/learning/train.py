"""`foosball learn train`: the goalkeeper policy, from one command with a seed.

Two stages, both on `foosball/Goalkeeper-v0` (randomised tables, every battery kind, shots
of 3-15 m/s), within a wall-time bound (`--minutes`):
1. Imitation with DAgger: round 0 lets improved's goalkeeper play and records (observation,
   improved's goalkeeper target as an action); later rounds let the policy play (improved
   taking over each step with a probability that halves each round) and record improved's
   target for what the policy saw; the network is fitted on everything recorded so far.
2. Evolution strategies on the environment's own reward (goals against, fouls, and a small
   reward per save for a denser signal): antithetic pairs on common episodes, ranked
   fitness, Adam on the weights; the last centre is the result (the imitation stage's
   network is written beside it).
Writes to `--out`: `goalkeeper.onnx`, `goalkeeper.npz` (the numpy weights), `curve.json`
and `curve.png` (the training curve), and `goalkeeper.json` (what it was trained on: the
command, seeds, environment settings, episodes, stages, time, the figures).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from foosball.files import write_atomically

TRAIN_SEED_BASE = 1_000_000  # training episodes' env seeds start here (held-out: < 100,000)
_WORKER: dict[str, Any] = {}


def _init(save_reward: float) -> None:
    from foosball.learning.env import GoalkeeperEnv

    _WORKER["env"] = GoalkeeperEnv(save_reward=save_reward)


def _rollout(job: tuple[Any, int, float, bool]) -> tuple[dict[str, float], list[Any]]:
    from foosball.learning.policy import Mlp, run_rollout

    parts, seed, mix, record = job
    policy = Mlp(*parts)
    recorded: list[Any] | None = [] if record else None
    stats = run_rollout(policy, _WORKER["env"], seed, mix, np.random.default_rng(seed),
                        recorded)
    return stats, recorded or []


def train(args: argparse.Namespace) -> dict[str, Any]:
    from foosball.learning.policy import Mlp, export_onnx
    from foosball.strategy.learned import OBS_SIZE

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    started = time.monotonic()
    deadline = started + args.minutes * 60
    mlp = Mlp.create(OBS_SIZE, args.hidden, 2, rng)
    next_seed = TRAIN_SEED_BASE + 100_000 * args.seed
    curve: dict[str, list[dict[str, float]]] = {"dagger": [], "es": []}
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    episodes = 0
    with multiprocessing.get_context("fork").Pool(args.jobs, _init, (args.save_reward,)) as pool:
        for round_ in range(args.dagger_rounds):
            mix = 1.0 if round_ == 0 else 0.5 ** round_
            jobs = [(mlp.parts, next_seed + k, mix, True) for k in range(args.round_episodes)]
            next_seed += args.round_episodes
            results = pool.map(_rollout, jobs)
            episodes += len(jobs)
            for _, recorded in results:
                xs += [o for o, _ in recorded]
                ys += [a for _, a in recorded]
            loss = mlp.fit(np.array(xs), np.array(ys), rng, epochs=args.epochs)
            curve["dagger"].append({
                "round": round_, "teacher_share": mix, "samples": len(xs), "loss": loss,
                "goals_per_episode": float(np.mean([s["goals_against"] for s, _ in results])),
                "reward": float(np.mean([s["reward"] for s, _ in results])),
                "minutes": (time.monotonic() - started) / 60})
            print(f"dagger {round_}: {curve['dagger'][-1]}", flush=True)
        mlp.save(out / "goalkeeper-imitation.npz")
        export_onnx(mlp, out / "goalkeeper-imitation.onnx", "imitation stage only")
        centre = mlp.flat()
        moments = (np.zeros_like(centre), np.zeros_like(centre))
        for iteration in range(args.es_iterations):
            if time.monotonic() > deadline:
                print("es: the time bound is reached", flush=True)
                break
            seeds = [next_seed + k for k in range(args.es_episodes)]
            next_seed += args.es_episodes
            noise = rng.normal(0.0, 1.0, (args.es_pairs, centre.size)).astype(np.float32)
            candidates = [centre] + [centre + s * args.sigma * n for n in noise
                                     for s in (1.0, -1.0)]
            jobs = [(mlp.from_flat(c).parts, seed, 0.0, False) for c in candidates
                    for seed in seeds]
            results = pool.map(_rollout, jobs)
            episodes += len(jobs)
            fitness = np.array([np.mean([s["reward"] for s, _ in
                                         results[i * len(seeds):(i + 1) * len(seeds)]])
                                for i in range(len(candidates))])
            goals = float(np.mean([s["goals_against"] for s, _ in results[:len(seeds)]]))
            pairs = fitness[1:].reshape(-1, 2)
            ranks = _centred_ranks(pairs.ravel()).reshape(-1, 2)
            gradient = ((ranks[:, 0] - ranks[:, 1]) @ noise) / (len(noise) * args.sigma)
            centre = centre + _adam(moments, gradient, iteration + 1, args.es_rate)
            curve["es"].append({"iteration": iteration, "centre_reward": float(fitness[0]),
                                "centre_goals_per_episode": goals,
                                "population_reward": float(fitness[1:].mean()),
                                "minutes": (time.monotonic() - started) / 60})
            print(f"es {iteration}: {curve['es'][-1]}", flush=True)
    final = mlp.from_flat(centre)
    final.save(out / "goalkeeper.npz")
    minutes = (time.monotonic() - started) / 60
    record = {
        "command": "foosball " + " ".join(sys.argv[1:]),
        "settings": {k: v for k, v in vars(args).items() if k != "func"},
        "environment": {"id": "foosball/Goalkeeper-v0", "randomise": True,
                        "kinds": "rest, rolling, pull, push, pin", "speeds_m_s": [3.0, 15.0],
                        "episode_s": 3.0, "save_reward": args.save_reward,
                        "foul_penalty": 0.5, "opponent": "scripted pro (sim.opponents.PRO)",
                        "other_rods": "improved"},
        "training_env_seeds": [TRAIN_SEED_BASE + 100_000 * args.seed, next_seed - 1],
        "episodes": episodes,
        "es_iterations_run": len(curve["es"]),
        # The wall-time bound makes a run depend on the machine's speed; the same seed with
        # the iterations this run reached, unbounded, trains the same weights anywhere.
        "reproduce_command": reproduce_command(args, len(curve["es"])),
        "wall_minutes": round(minutes, 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()}",
        "network": {"inputs": OBS_SIZE, "hidden": args.hidden, "outputs": 2,
                    "parameters": int(final.flat().size)},
    }
    export_onnx(final, out / "goalkeeper.onnx", json.dumps(record["environment"]))
    write_atomically(out / "goalkeeper.json", (json.dumps(record, indent=1) + "\n").encode())
    write_atomically(out / "curve.json", (json.dumps(curve, indent=1) + "\n").encode())
    plot_curve(curve, out / "curve.png")
    return record


def reproduce_command(args: argparse.Namespace, es_iterations_run: int) -> str:
    """`foosball learn train` with this run's settings and no time bound: `--es-iterations`
    is the iterations this run reached (the rollouts' order, hence the result, does not
    depend on `--jobs`)."""
    settings = {k: v for k, v in vars(args).items()
                if k not in ("func", "group", "learn_command", "out", "jobs")}
    settings.update(es_iterations=es_iterations_run, minutes=float("inf"))
    return "foosball learn train " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in settings.items())


def _centred_ranks(values: np.ndarray) -> np.ndarray:
    ranks = np.empty(len(values))
    ranks[np.argsort(values, kind="stable")] = np.arange(len(values))
    return ranks / max(1, len(values) - 1) - 0.5


def _adam(moments: tuple[np.ndarray, np.ndarray], gradient: np.ndarray, step: int,
          rate: float) -> np.ndarray:
    """One Adam ascent step on `gradient` (moments updated in place)."""
    m, v = moments
    m *= 0.9
    m += 0.1 * gradient
    v *= 0.999
    v += 0.001 * gradient * gradient
    return (rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)).astype(
        np.float32)


def plot_curve(curve: dict[str, list[dict[str, float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    panels = (("dagger", "round", "DAgger round", (("loss", "imitation loss (MSE)"), (
                  "goals_per_episode", "goals per episode (its rollouts)"))),
              ("es", "iteration", "ES iteration", (("centre_reward", "centre's reward"), (
                  "population_reward", "population's mean reward"))))
    for axis, (stage, x, label, series) in zip(axes, panels, strict=True):
        rows = curve[stage]
        for key, name in series:
            axis.plot([r[x] for r in rows], [r[key] for r in rows], "o-", label=name)
        axis.set_xlabel(label)
        axis.legend()
    fig.suptitle("foosball/Goalkeeper-v0: training curve")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/goalkeeper")
    parser.add_argument("--minutes", type=float, default=30.0, help="wall-time bound")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--dagger-rounds", type=int, default=4)
    parser.add_argument("--round-episodes", type=int, default=60)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--es-iterations", type=int, default=40)
    parser.add_argument("--es-pairs", type=int, default=6)
    parser.add_argument("--es-episodes", type=int, default=8)
    parser.add_argument("--sigma", type=float, default=0.02)
    parser.add_argument("--es-rate", type=float, default=0.01)
    parser.add_argument("--save-reward", type=float, default=0.1)
    parser.set_defaults(func=lambda args: (print(json.dumps(train(args), indent=1)), 0)[1])
