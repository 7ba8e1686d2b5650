"""The goalkeeper's policy network in numpy (train, run) and its export to ONNX.

A small multilayer perceptron: observation -> `hidden` tanh units -> 2 tanh outputs (the
action, `strategy.learned.keeper_target`). Its weights are one flat vector (`flat`,
`from_flat`) so that evolution strategies can perturb them; `fit` trains it by regression
(Adam) on a teacher's actions. `export_onnx` writes the same function as an ONNX graph
(Gemm, Tanh, Gemm, Tanh) that `strategy.learned.OnnxPolicy` runs on the board.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from foosball.files import write_atomically


@dataclass
class Mlp:
    w1: np.ndarray  # (obs, hidden)
    b1: np.ndarray
    w2: np.ndarray  # (hidden, 2)
    b2: np.ndarray

    @classmethod
    def create(cls, inputs: int, hidden: int, outputs: int, rng: np.random.Generator) -> Mlp:
        return cls(rng.normal(0.0, 1.0 / np.sqrt(inputs), (inputs, hidden)).astype(np.float32),
                   np.zeros(hidden, np.float32),
                   rng.normal(0.0, 0.1 / np.sqrt(hidden), (hidden, outputs)).astype(np.float32),
                   np.zeros(outputs, np.float32))

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        return np.tanh(np.tanh(observation @ self.w1 + self.b1) @ self.w2 + self.b2)

    @property
    def parts(self) -> list[np.ndarray]:
        return [self.w1, self.b1, self.w2, self.b2]

    def flat(self) -> np.ndarray:
        return np.concatenate([p.ravel() for p in self.parts])

    def from_flat(self, vector: np.ndarray) -> Mlp:
        out, at = [], 0
        for p in self.parts:
            out.append(vector[at:at + p.size].reshape(p.shape).astype(np.float32))
            at += p.size
        return Mlp(*out)

    def fit(self, x: np.ndarray, y: np.ndarray, rng: np.random.Generator, *, epochs: int = 20,
            batch: int = 256, rate: float = 3e-3) -> float:
        """Least squares on (observation, action) pairs with Adam; the last epoch's mean
        loss."""
        params = self.parts
        moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
        beta1, beta2, step, loss = 0.9, 0.999, 0, 0.0
        for _ in range(epochs):
            order = rng.permutation(len(x))
            losses = []
            for start in range(0, len(x), batch):
                pick = order[start:start + batch]
                xb, yb = x[pick], y[pick]
                h = np.tanh(xb @ self.w1 + self.b1)
                out = np.tanh(h @ self.w2 + self.b2)
                error = out - yb
                losses.append(float(np.mean(error**2)))
                d_out = 2 * error / error.size * (1 - out**2)
                d_h = d_out @ self.w2.T * (1 - h**2)
                grads = [xb.T @ d_h, d_h.sum(0), h.T @ d_out, d_out.sum(0)]
                step += 1
                for p, g, (m, v) in zip(params, grads, moments, strict=True):
                    m *= beta1
                    m += (1 - beta1) * g
                    v *= beta2
                    v += (1 - beta2) * g * g
                    p -= (rate * (m / (1 - beta1**step))
                          / (np.sqrt(v / (1 - beta2**step)) + 1e-8)).astype(np.float32)
            loss = float(np.mean(losses))
        return loss

    def save(self, path: Path) -> None:
        data = io.BytesIO()
        np.savez(data, w1=self.w1, b1=self.b1, w2=self.w2, b2=self.b2)
        write_atomically(path, data.getvalue())

    @classmethod
    def load(cls, path: Path) -> Mlp:
        data = np.load(path)
        return cls(data["w1"], data["b1"], data["w2"], data["b2"])


def export_onnx(mlp: Mlp, path: Path, doc: str = "") -> None:
    """The network as an ONNX graph: input `obs` [1, inputs] float32, output `action`
    [1, 2] (opset 13, ir version 8: onnxruntime 1.15 and later run it)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inputs, outputs = mlp.w1.shape[0], mlp.w2.shape[1]
    weights = [numpy_helper.from_array(np.asarray(v, np.float32), name) for name, v in
               (("w1", mlp.w1), ("b1", mlp.b1), ("w2", mlp.w2), ("b2", mlp.b2))]
    nodes = [helper.make_node("Gemm", ["obs", "w1", "b1"], ["z1"]),
             helper.make_node("Tanh", ["z1"], ["h1"]),
             helper.make_node("Gemm", ["h1", "w2", "b2"], ["z2"]),
             helper.make_node("Tanh", ["z2"], ["action"])]
    graph = helper.make_graph(
        nodes, "goalkeeper",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, inputs])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, [1, outputs])],
        initializer=weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="foosball.learning", doc_string=doc)
    model.ir_version = 8
    onnx.checker.check_model(model)
    # --out may be foosball/data: a run stopped mid-write never leaves a broken model there
    write_atomically(path, model.SerializeToString())


def run_rollout(policy: Any, env: Any, seed: int, teacher_mix: float = 0.0,
                rng: np.random.Generator | None = None,
                record: list[tuple[np.ndarray, np.ndarray]] | None = None) -> dict[str, float]:
    """One episode of `env` (a GoalkeeperEnv) with `policy` in goal; with probability
    `teacher_mix` per step improved's own goalkeeper target acts instead. `record`, if
    given, gets (observation, improved's action) for every step (imitation, DAgger)."""
    from foosball.strategy.learned import target_action

    observation, _ = env.reset(seed=seed)
    keeper = env.table.robot_rods[0]
    total, done = 0.0, False
    info: dict[str, Any] = {}
    while not done:
        command = env.team.command
        teacher = target_action(command.rods[0], keeper) if command is not None else None
        if record is not None and teacher is not None:
            record.append((observation, teacher))
        if teacher is not None and rng is not None and rng.random() < teacher_mix:
            action = teacher
        else:
            action = policy(observation)
        observation, reward, terminated, truncated, info = env.step(action)
        total += reward
        done = terminated or truncated
    return {"reward": total, "goals_against": float(info.get("goals_against", 0)),
            "fouls": float(info.get("fouls", 0))}
