"""Strategies by name: one table, read by the simulator's controller registry, the tournament
runner and the strategy agent. A factory takes (table, seed) like every simulator controller,
and optionally the strategy's parameters (a parameter search)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from foosball.geometry import Table


def _seed_rules(table: Table, seed: int, params: Any = None) -> Any:
    from foosball.strategy.seed_rules import SeedRulesStrategy

    return SeedRulesStrategy(table, params)


def _improved(table: Table, seed: int, params: Any = None) -> Any:
    from foosball.strategy.improved import ImprovedStrategy
    from foosball.strategy.params import load_params

    params = params if params is not None else load_params()
    if params.learned.goalkeeper == "policy":  # the parameter file's choice
        return _learned_keeper(table, seed, params)
    return ImprovedStrategy(table, params)


def _learned_keeper(table: Table, seed: int, params: Any = None) -> Any:
    from foosball.strategy.learned import LearnedKeeperStrategy

    return LearnedKeeperStrategy(table, params)


# (table, seed, parameters: a StrategyParams, None for the shipped file) -> a strategy
STRATEGIES: dict[str, Callable[..., Any]] = {
    "seed-rules": _seed_rules,
    "improved": _improved,
    "learned-keeper": _learned_keeper,  # improved with the policy in goal, whatever the file says
}


def strategy_factory(name: str) -> Callable[..., Any]:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise KeyError(f"no strategy {name!r}; known: {sorted(STRATEGIES)}") from None
