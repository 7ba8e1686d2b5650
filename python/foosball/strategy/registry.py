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

    return ImprovedStrategy(table, params)


# (table, seed, parameters: a StrategyParams, None for the shipped file) -> a strategy
STRATEGIES: dict[str, Callable[..., Any]] = {
    "seed-rules": _seed_rules,
    "improved": _improved,
}


def strategy_factory(name: str) -> Callable[..., Any]:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise KeyError(f"no strategy {name!r}; known: {sorted(STRATEGIES)}") from None
